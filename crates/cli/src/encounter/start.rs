//! Starting and resuming a run at this terminal: the flags, the model, what is printed and the
//! loop. Who sits where, the names drawn and the first event are the engine's
//! ([`troupe_encounter::table::start`]).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use troupe_campaign::{Campaign, CampaignDir};
use troupe_encounter::Spec;
use troupe_encounter::table::EncounterStore;
use troupe_encounter::table::Stop;
use troupe_encounter::table::start::{self as engine, Begun, Opening, SeatSpec, campaign_in};
use troupe_llm::ChatModel;

use super::run as table;
use crate::models::ModelArgs;

#[derive(Clone, Debug, clap::Args)]
pub struct TableArgs {
    /// Who sits at the table, in turn order: `human` (or `human:NAME`) for a person at this
    /// terminal, `ai` for the campaign file's next AI player (or `ai:AGENT` for that one)
    #[arg(long, value_delimiter = ',', default_value = "human")]
    pub players: Vec<String>,
    /// Dice seed (recorded in the log)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stop (saved) once this many rounds of player actions are played; `resume` continues
    #[arg(long = "turns", alias = "max-turns", value_name = "N")]
    pub max_turns: Option<u32>,
}

/// The model: the flags, then the campaign file's `model` block, then the defaults.
pub(super) fn choose_model(
    args: &ModelArgs,
    campaign: Option<&Campaign>,
    dir: &Path,
) -> anyhow::Result<Arc<dyn ChatModel>> {
    crate::models::choose(args, campaign.and_then(|c| c.model.as_ref()), dir)
        .map(crate::models::fail_fast)
}

/// Run a d20 encounter of `spec` (its scene file's text read) at this terminal.
pub async fn start(
    dir: &Path,
    spec: &Spec,
    scene: Option<String>,
    players: &[SeatSpec],
    table: &TableArgs,
    model_args: &ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    // Read once: the model, the memory and the seats all come from it.
    let campaign = campaign_in(&CampaignDir::new(dir));
    let seed = crate::play::seed_or_now(table.seed);
    let model = choose_model(model_args, campaign.as_ref(), dir)?;
    // A model server that is down stops here too, before the run is counted.
    crate::preflight::check_server(model_args, campaign.as_ref())?;
    // A broken override stops here, before the run begins.
    let prompts = crate::play::prompts(dir)?;
    let opening = Opening {
        spec,
        scene,
        players,
        seed,
        window: engine::window_of(model.as_ref()),
        campaign: campaign.as_ref(),
    };
    let (store, run) = begin(dir, opening, memory_url)?;
    println!("== {} (run {run}, seed {seed})", spec.title);
    let mut runner = table::open(dir, store, run, (model, prompts), table.max_turns)?;
    finish(table::play(dir, &mut runner, memory_url).await?, run, dir)
}

/// Begin a run (the caller holds the campaign's lock) with the campaign's memory, saying so
/// when the campaign's last run did not finish. The store and the run's number.
pub fn begin(
    dir: &Path,
    opening: Opening<'_>,
    memory_url: Option<&str>,
) -> anyhow::Result<(EncounterStore, u32)> {
    let dir = CampaignDir::new(dir);
    // The memory's place is in the campaign file too: given the file already read, it is not
    // read again.
    let memory = crate::graph::open_memory(&dir, opening.campaign, memory_url)?;
    let Begun {
        store,
        run,
        unfinished,
    } = engine::begin(&dir, &memory, opening)?;
    if let Some(last) = unfinished {
        eprintln!(
            "note: encounter run {} ({}) did not finish; {} continues it. Starting a new run.",
            last.number,
            last.spec_id,
            crate::sessions::command(
                dir.path(),
                &format!("troupe encounter resume --run {}", last.number)
            )
        );
    }
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
    let join = super::seat_specs("--join", join)?;
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    let mut store = super::open_store(dir)?;
    let run = super::run_number(&store, dir, run)?;
    // A resolved run is opened too: resuming it writes what a crash left unwritten of its
    // outcome (the summary, the NPCs' memory) and says it was resolved.
    crate::sessions::reopen_mirror_of(&mut store, run)?;
    let campaign = campaign_in(&CampaignDir::new(dir));
    let model = choose_model(model_args, campaign.as_ref(), dir)?;
    crate::preflight::check_server(model_args, campaign.as_ref())?;
    let prompts = crate::play::prompts(dir)?;
    if model.replays_served() {
        // Recorded replies: move past those the log already has.
        let events = store.events(run)?;
        model.skip_served(&engine::served(&events));
    }
    let mut runner = table::open(dir, store, run, (model, prompts), max_turns)?;
    let state = runner.state().clone();
    println!("== {} (run {run}, resumed)", state.spec.title);
    for line in state.public.iter().rev().take(3).rev() {
        println!("{line}");
    }
    // Each join is shown as it is recorded: at the newcomer's turn in the round under way.
    let joining = engine::joining(&join, &state.seats, campaign.as_ref()).context("--join")?;
    for seat in joining {
        runner.join(seat);
    }
    let stop = table::play(dir, &mut runner, memory_url).await?;
    for seat in runner.unseated() {
        println!(
            "({} did not sit down: the run stopped before the next round began; `--join` again \
             when you resume)",
            seat.player
        );
    }
    finish(stop, run, dir)
}

fn finish(stop: Stop, run: u32, dir: &Path) -> anyhow::Result<ExitCode> {
    let resume =
        |flags: &str| crate::sessions::command(dir, &format!("troupe encounter resume{flags}"));
    match stop {
        Stop::Resolved => println!("(run {run} resolved; the summary is in summaries/)"),
        Stop::Rounds(n) => println!(
            "(stopped after round {n} as asked; {} goes on)",
            resume(" --turns N")
        ),
        Stop::Quit => println!("(saved; {} goes on)", resume("")),
    }
    Ok(ExitCode::SUCCESS)
}
