//! Starting and resuming a run: who sits at the table (`--players`), the names drawn, what the
//! NPCs remember, the first event; then the loop.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use troupe_campaign::Campaign;
use troupe_encounter::log::{EncounterEvent, Envelope, Seat, SeatKind, live};
use troupe_llm::{CallTag, ChatModel};

use super::run::{self as table, now};
use crate::models::ModelArgs;
use troupe_engine::encounter::{Stop, outcome};

/// The GM model's window when the provider does not say (seed 003's 128,000 tokens).
pub const DEFAULT_WINDOW: usize = 128_000;

#[derive(Clone, Debug, clap::Args)]
pub struct TableArgs {
    /// Who sits at the table, in turn order: `human` (or `human:NAME`) for a person at this
    /// terminal, `ai` for the campaign file's next AI player (or `ai:AGENT` for that one)
    #[arg(long, value_delimiter = ',', default_value = "human")]
    pub players: Vec<String>,
    /// Dice seed (recorded in the log)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stop (saved) before this round of player actions; `resume` continues
    #[arg(long)]
    pub max_turns: Option<u32>,
}

/// Characters for AI seats when the campaign has no file (or too few AI players in it).
const STAND_INS: &[(&str, &str)] = &[
    ("Ash", "a wary scout"),
    ("Brin", "a cheerful tinkerer"),
    ("Cato", "a blunt bodyguard"),
    ("Dell", "a curious scholar"),
];

/// Seat the table from `--players` and the campaign file.
pub fn seats(players: &[String], campaign: Option<&Campaign>) -> anyhow::Result<Vec<Seat>> {
    let mut ai_pool: Vec<Seat> = campaign
        .map(|c| {
            c.seats
                .iter()
                .map(|s| Seat {
                    id: s.player.agent_id.clone(),
                    character: s.character.name.clone(),
                    player: s.player.name.clone(),
                    kind: SeatKind::Ai,
                    about: format!("{} {}", s.character.style, s.character.role),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out: Vec<Seat> = Vec::new();
    for (i, entry) in players.iter().enumerate() {
        let (kind, arg) = entry.trim().split_once(':').unwrap_or((entry.trim(), ""));
        let seat = match kind {
            "human" | "person" => person(i, arg),
            "ai" => ai_seat(&mut ai_pool, arg, i, &out)?,
            other => bail!(
                "--players: `{other}` is neither `human` nor `ai` (e.g. --players human,ai,ai)"
            ),
        };
        out.push(seat);
    }
    if out.is_empty() {
        bail!("--players names nobody: the table needs at least one player");
    }
    if let Some(c) = campaign {
        for seat in &mut out {
            with_profile(seat, &c.profiles);
        }
    }
    Ok(out)
}

/// The seat's character's profile from the campaign (`profiles`, by character name, any
/// case), first in what the GM and the table read about them: pronouns above all.
fn with_profile(
    seat: &mut Seat,
    profiles: &std::collections::BTreeMap<String, troupe_campaign::CharacterProfile>,
) {
    let Some(profile) = profiles
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(&seat.character))
        .map(|(_, p)| p.describe())
        .filter(|p| !p.is_empty())
    else {
        return;
    };
    seat.about = if seat.about.is_empty() {
        profile
    } else {
        format!("{profile}; {}", seat.about)
    };
}

fn person(i: usize, name: &str) -> Seat {
    let name = if name.is_empty() {
        format!("Player {}", i + 1)
    } else {
        name.to_string()
    };
    Seat {
        id: format!("p{}", i + 1),
        character: name.clone(),
        player: name,
        kind: SeatKind::Person,
        about: String::new(),
    }
}

fn ai_seat(pool: &mut Vec<Seat>, agent: &str, i: usize, taken: &[Seat]) -> anyhow::Result<Seat> {
    if !agent.is_empty() {
        let at = pool.iter().position(|s| s.id == agent).with_context(|| {
            format!("--players ai:{agent}: the campaign file has no AI player `{agent}`")
        })?;
        return Ok(pool.remove(at));
    }
    if !pool.is_empty() {
        return Ok(pool.remove(0));
    }
    let free = STAND_INS
        .iter()
        .find(|(n, _)| !taken.iter().any(|s| s.character == *n))
        .copied()
        .unwrap_or(("Echo", "a quiet wanderer"));
    Ok(Seat {
        id: format!("ai{}", i + 1),
        character: free.0.to_string(),
        player: format!("AI player {}", i + 1),
        kind: SeatKind::Ai,
        about: free.1.to_string(),
    })
}

fn campaign(dir: &Path) -> Option<Campaign> {
    let (file, _) = crate::sessions::campaign_file(None, Some(dir)).ok()?;
    troupe_campaign::load(&file).ok()
}

/// The model: the flags, then the campaign file's `model` block, then the defaults.
fn choose_model(
    args: &ModelArgs,
    campaign: Option<&Campaign>,
    dir: &Path,
) -> anyhow::Result<Arc<dyn ChatModel>> {
    crate::models::choose(args, campaign.and_then(|c| c.model.as_ref()), dir)
}

pub async fn start(
    dir: &Path,
    spec_path: &Path,
    table: &TableArgs,
    model_args: &ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let spec = super::load_spec(spec_path)?;
    let scene = super::load_scene(spec_path, &spec)?;
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    let campaign = campaign(dir);
    let seed = table.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    if spec.rules == troupe_encounter::spec::RulesKind::LasersFeelings {
        drop(_lock);
        return super::lasers::run(dir, &spec, seed, table, model_args, memory_url).await;
    }
    let model = choose_model(model_args, campaign.as_ref(), dir)?;
    // A broken override stops here, before the run begins.
    let prompts = crate::play::prompts(dir)?;
    let (store, run) = begin(dir, &spec, scene, &table.players, seed, &model, memory_url)?;
    println!("== {} (run {run}, seed {seed})", spec.title);
    let mut runner = table::open(store, run, (model, prompts), table.max_turns)?;
    finish(table::play(dir, &mut runner, memory_url).await?, run)
}

/// Begin a run (the caller holds the campaign's lock): the seats from `players`, the names
/// drawn, what the NPCs remember, the `started` event in the log. The store and the run's
/// number.
pub fn begin(
    dir: &Path,
    spec: &troupe_encounter::Spec,
    scene: Option<String>,
    players: &[String],
    seed: u64,
    model: &Arc<dyn ChatModel>,
    memory_url: Option<&str>,
) -> anyhow::Result<(troupe_engine::EncounterStore, u32)> {
    let campaign = campaign(dir);
    let seats = seats(players, campaign.as_ref())?;
    let (names, memories) = outcome::cast(&super::memory(dir, memory_url)?, spec, seed)?;
    let at = now();
    let mut store = super::open_store(dir)?;
    if let Some(last) = store.latest()?
        && !last.ended
    {
        eprintln!(
            "note: encounter run {} ({}) did not finish; `troupe encounter resume --run {}` \
             continues it. Starting a new run.",
            last.number, last.scene_id, last.number
        );
    }
    let run = store.begin(&spec.id, &at)?;
    let window = model
        .context_tokens()
        .map_or(DEFAULT_WINDOW, |t| t as usize);
    let started = EncounterEvent::Started {
        spec: Box::new(spec.clone()),
        scene,
        seed,
        seats,
        names,
        memories,
        window,
        at: at.clone(),
    };
    store.append(
        run,
        &[Envelope {
            seq: 0,
            event: started,
        }],
        0,
    )?;
    outcome::bump_tally(dir, &spec.id, &at)?;
    Ok((store, run))
}

pub async fn resume(
    dir: &Path,
    run: Option<u32>,
    max_turns: Option<u32>,
    join: &[String],
    model_args: &ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    let store = super::open_store(dir)?;
    let run = super::run_number(&store, dir, run)?;
    let model = choose_model(model_args, campaign(dir).as_ref(), dir)?;
    let prompts = crate::play::prompts(dir)?;
    if model.replays_served() {
        // Recorded replies: move past those the log already has.
        let events = store.events(run)?;
        model.skip_served(&served(&events));
    }
    let mut runner = table::open(store, run, (model, prompts), max_turns)?;
    let state = runner.state().clone();
    println!("== {} (run {run}, resumed)", state.spec.title);
    for line in state.public.iter().rev().take(3).rev() {
        println!("{line}");
    }
    // Each join is shown as it is recorded.
    for seat in joining(join, &state.seats, campaign(dir).as_ref())? {
        runner.join(seat)?;
    }
    finish(table::play(dir, &mut runner, memory_url).await?, run)
}

/// The seats of `--join`, numbered after those at the table: the seated are seated again first
/// (the campaign's AI players by id), so `ai` takes the next AI player nobody plays yet.
fn joining(
    join: &[String],
    seated: &[Seat],
    campaign: Option<&Campaign>,
) -> anyhow::Result<Vec<Seat>> {
    let in_campaign =
        |id: &str| campaign.is_some_and(|c| c.seats.iter().any(|s| s.player.agent_id == id));
    let again = seated.iter().map(|s| match s.kind {
        SeatKind::Ai if in_campaign(&s.id) => format!("ai:{}", s.id),
        _ => "human".to_string(),
    });
    for entry in join {
        let agent = entry.trim().strip_prefix("ai:").unwrap_or_default();
        if let Some(s) = seated.iter().find(|s| !agent.is_empty() && s.id == agent) {
            bail!(
                "--join {entry}: {} ({}) is already at this table",
                s.player,
                s.character
            );
        }
    }
    let all: Vec<String> = again.chain(join.iter().cloned()).collect();
    let mut seats = seats(&all, campaign).context("--join")?;
    let new = seats.split_off(seated.len());
    let mut out: Vec<Seat> = Vec::new();
    for seat in new {
        let taken = seated.iter().chain(&out).any(|s| s.id == seat.id);
        if taken {
            bail!(
                "--join: {} ({}) is already at this table",
                seat.player,
                seat.character
            );
        }
        out.push(seat);
    }
    Ok(out)
}

/// The model calls a run's live events already answered, in order.
pub fn served(events: &[Envelope]) -> Vec<CallTag> {
    live(events)
        .iter()
        .filter_map(|e| match &e.event {
            EncounterEvent::GmCalled { call, .. } | EncounterEvent::PlayerCalled { call } => {
                Some(CallTag::new(call.agent.clone(), call.purpose.clone()))
            }
            EncounterEvent::GmRejected { reply: Some(_), .. } => {
                Some(CallTag::new("gm", "encounter_gm"))
            }
            _ => None,
        })
        .collect()
}

fn finish(stop: Stop, run: u32) -> anyhow::Result<ExitCode> {
    match stop {
        Stop::Resolved => println!("(run {run} resolved; the summary is in summaries/)"),
        Stop::Rounds(n) => println!(
            "(stopped after round {n} as asked; `troupe encounter resume --max-turns N` goes on)"
        ),
        Stop::Quit => println!("(saved; `troupe encounter resume` goes on)"),
    }
    Ok(ExitCode::SUCCESS)
}
