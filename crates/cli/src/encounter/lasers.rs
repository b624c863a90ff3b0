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
use troupe_encounter::log::NpcMemory;
use troupe_encounter::names::Drawn;

use super::files;
use super::run::now;
use super::start::TableArgs;
use crate::models::ModelArgs;
use crate::play::SeatArgs;

pub async fn run(
    dir: &Path,
    spec: &Spec,
    names: &[Drawn],
    memories: &[NpcMemory],
    table: &TableArgs,
    model: &ModelArgs,
) -> anyhow::Result<ExitCode> {
    let (file, _) = crate::sessions::campaign_file(None, Some(dir)).with_context(|| {
        format!(
            "a Lasers & Feelings encounter is played by a campaign's characters: {} needs a campaign.json",
            dir.display()
        )
    })?;
    let mut campaign = troupe_campaign::load(&file).map_err(|e| anyhow::anyhow!("{e}"))?;
    if table.players.len() > campaign.seats.len() {
        bail!(
            "--players names {} seats; the campaign has {} characters",
            table.players.len(),
            campaign.seats.len()
        );
    }
    // `--players` seats the campaign's characters in file order: a person or an AI each.
    for (seat, entry) in campaign.seats.iter_mut().zip(&table.players) {
        seat.taken_by = if entry.starts_with("human") || entry.starts_with("person") {
            SeatTaker::Human
        } else {
            SeatTaker::Ai
        };
    }
    let (text, notes) = scenario(spec, names, memories);
    campaign.gm.seat = GmSeatKind::Ai;
    campaign.gm.scenario = Some(Scenario { text, notes });
    let at = now();
    files::bump_tally(dir, &spec.id, &at)?;
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
    let code = crate::play::play_campaign(campaign, dir, None, table.seed, &seats, model).await?;
    record_outcome(dir, spec, names, &at)?;
    Ok(code)
}

/// After the session: when it ended (not merely stopped), its summary file and the NPCs'
/// memory of it.
fn record_outcome(dir: &Path, spec: &Spec, names: &[Drawn], at: &str) -> anyhow::Result<()> {
    let store = crate::sessions::create_store(dir)?;
    let Some(session) = store.latest_session()? else {
        return Ok(());
    };
    let Some(reason) = session.ended_reason else {
        return Ok(());
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
    let outcome = files::Outcome {
        goal: "session_ended".to_string(),
        label: reason.clone(),
        summary: format!("Session {} ended: {reason}", session.number),
        players,
        round: session.turns,
    };
    let file = troupe_encounter::turn::summary_file(&spec.id, at);
    files::write_summary_of(dir, &file, spec, &outcome, at)?;
    files::remember_of(dir, spec, names, &outcome, session.number, at)
}
