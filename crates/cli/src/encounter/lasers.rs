//! `troupe encounter run` for a spec whose rules are Lasers & Feelings: the campaign's
//! characters play it through the L&F turn cycle with an AI GM whose adventure is the spec. The
//! session is the record (resume, undo, replay, stats and report work on it as on any session);
//! the encounter adds the tally, the summary file and the NPCs' memory.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use troupe_campaign::{GmSeatKind, Scenario, SeatTaker};
use troupe_encounter::Spec;
use troupe_encounter::lasers::scenario;
use troupe_encounter::names::Drawn;
use troupe_engine::encounter::outcome;

use super::run::now;
use super::start::TableArgs;
use crate::models::ModelArgs;
use crate::play::SeatArgs;

pub async fn run(
    dir: &Path,
    spec: &Spec,
    seed: u64,
    table: &TableArgs,
    model: &ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    // A broken prompt override stops here, before the tally counts a run that never starts.
    crate::play::prompts(dir)?;
    let (campaign, number) = {
        let _lock = crate::sessions::CampaignLock::take(dir)?;
        prepare(dir, spec, seed, &table.players, memory_url)?
    };
    println!(
        "== {} (Lasers & Feelings: the campaign's characters play it)",
        spec.title
    );
    let seats = SeatArgs {
        gm: None,
        humans: Vec::new(),
        turns: table.max_turns,
        spend: crate::play::SpendArgs::default(),
    };
    let code =
        crate::play::play_campaign(campaign, dir, None, table.seed, &seats, model, memory_url)
            .await?;
    finish_pending(dir, number, memory_url)?;
    Ok(code)
}

/// The campaign set up to play `spec`: its characters seated in file order as `players` says
/// (a person or an AI each), an AI GM whose adventure is the spec (its NPCs' names drawn with
/// `seed`, with what they remember of earlier runs). The tally is bumped and what the session
/// needs to write its outcome is kept until it ends. The campaign, and the number of the session
/// about to play it. The caller holds the campaign's lock.
pub fn prepare(
    dir: &Path,
    spec: &Spec,
    seed: u64,
    players: &[String],
    memory_url: Option<&str>,
) -> anyhow::Result<(troupe_campaign::Campaign, u32)> {
    let (names, memories) = outcome::cast(&super::memory(dir, memory_url)?, spec, seed)?;
    let (file, _) = crate::sessions::campaign_file(None, Some(dir)).with_context(|| {
        format!(
            "a Lasers & Feelings encounter is played by a campaign's characters: {} needs a campaign.json",
            dir.display()
        )
    })?;
    let mut campaign = troupe_campaign::load(&file)?;
    if players.len() > campaign.seats.len() {
        bail!(
            "--players names {} seats; the campaign has {} characters",
            players.len(),
            campaign.seats.len()
        );
    }
    for (seat, entry) in campaign.seats.iter_mut().zip(players) {
        seat.taken_by = if entry.starts_with("human") || entry.starts_with("person") {
            SeatTaker::Human
        } else {
            SeatTaker::Ai
        };
    }
    let (text, notes) = scenario(spec, &names, &memories);
    campaign.gm.seat = GmSeatKind::Ai;
    campaign.gm.scenario = Some(Scenario { text, notes });
    let at = now();
    outcome::bump_tally(dir, &spec.id, &at)?;
    // Kept until the session ends, so a `troupe resume` that finishes it writes the outcome.
    let number = crate::sessions::create_store(dir)?.next_session_number(dir)?;
    let pending = Pending {
        spec: spec.clone(),
        names,
        at,
    };
    pending.save(dir, number)?;
    Ok((campaign, number))
}

/// What a Lasers & Feelings encounter's session needs to write its outcome when it ends, in
/// `encounter-sessions/session-N.json` until it does.
#[derive(serde::Serialize, serde::Deserialize)]
struct Pending {
    spec: Spec,
    names: Vec<Drawn>,
    at: String,
}

impl Pending {
    fn path(dir: &Path, session: u32) -> std::path::PathBuf {
        dir.join("encounter-sessions")
            .join(format!("session-{session}.json"))
    }

    fn save(&self, dir: &Path, session: u32) -> anyhow::Result<()> {
        let path = Pending::path(dir, session);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("could not create {}", parent.display()))?;
        }
        let text = serde_json::to_string(self).context("could not encode the encounter")?;
        std::fs::write(&path, text).with_context(|| format!("could not write {}", path.display()))
    }
}

/// After session `session` was played or resumed: when it belongs to a Lasers & Feelings
/// encounter and has ended (not merely stopped), write the encounter's summary file and the
/// NPCs' memory of it, once.
pub fn finish_pending(dir: &Path, session: u32, memory_url: Option<&str>) -> anyhow::Result<()> {
    let path = Pending::path(dir, session);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let pending: Pending = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an encounter's record", path.display()))?;
    if record_outcome(
        dir,
        session,
        &pending.spec,
        &pending.names,
        &pending.at,
        memory_url,
    )? {
        std::fs::remove_file(&path)
            .with_context(|| format!("could not remove {}", path.display()))?;
    }
    Ok(())
}

/// When session `number` has ended (not merely stopped): its summary file and the NPCs'
/// memory of it. Whether it had.
fn record_outcome(
    dir: &Path,
    number: u32,
    spec: &Spec,
    names: &[Drawn],
    at: &str,
    memory_url: Option<&str>,
) -> anyhow::Result<bool> {
    let store = crate::sessions::create_store(dir)?;
    let Some(session) = store.session(number)? else {
        return Ok(false);
    };
    let Some(reason) = session.ended_reason else {
        return Ok(false);
    };
    let players = crate::sessions::campaign_file(None, Some(dir))
        .ok()
        .and_then(|(f, _)| troupe_campaign::load(&f).ok())
        .map(|c| {
            c.seats
                .iter()
                .map(|s| format!("{} ({})", s.player.name, s.character.name))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let outcome = outcome::Outcome {
        goal: "session_ended".to_string(),
        label: reason.clone(),
        summary: format!("Session {} ended: {reason}", session.number),
        players,
        round: session.turns,
    };
    let file = troupe_encounter::turn::summary_file(&spec.id, at);
    outcome::write_summary_of(dir, &file, spec, &outcome, at)?;
    outcome::remember_of(
        &mut super::memory(dir, memory_url)?,
        spec,
        names,
        &outcome,
        session.number,
        at,
    )?;
    Ok(true)
}
