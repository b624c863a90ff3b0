//! The encounter at troupe's table, on the engine: its table loop ([`EncounterTable`]), a person's
//! decisions as seat-protocol asks ([`asks`]), the lines the players see of its events ([`shown`]),
//! its replay ([`replay`]), how a run starts ([`start`]), a Lasers & Feelings spec played as a
//! session ([`lasers`]), what a run leaves outside its log ([`outcome`]) and the run played online
//! on a surface ([`online`]: the web table, Discord). The game itself (spec,
//! log and fold, prompts, tools, secret checks) is this crate's pure core.

mod ai_player;
pub mod asks;
mod call;
mod error;
pub mod lasers;
pub mod online;
pub mod outcome;
mod replay;
mod run;
pub mod start;

pub use error::EncounterError;
pub use replay::replay;
pub use run::{EncounterTable, EncounterWatch, PERSON_ANSWERS, Stop};

use crate::log::{EncounterEvent, Phase, SeatKind, State, held_line, joined_line};
use crate::tools::CheckCall;

/// Now, ISO 8601 in UTC to the second.
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub(crate) fn edge_words(check: &CheckCall) -> &'static str {
    match check.edge {
        troupe_rules::Edge::Advantage => " with advantage",
        troupe_rules::Edge::Disadvantage => " with disadvantage",
        troupe_rules::Edge::Normal => "",
    }
}

/// What the whole table sees of an event, as one line; None for what is not theirs to see (the
/// GM's calls, rejections and caught leaks, whispers: they are in the log). A person's own
/// action is not repeated at the terminal they typed it at; `people_too` repeats it (a table
/// where each person reads the others').
pub fn shown(state: &State, event: &EncounterEvent, people_too: bool) -> Option<String> {
    let name = |id: &str| {
        state
            .seat(id)
            .map_or(id.to_string(), |s| s.character.clone())
    };
    match event {
        EncounterEvent::Narrated { text, .. } => Some(format!("\nGM: {text}\n")),
        EncounterEvent::PlayerActed { seat, text } => {
            let ai = state.seat(seat).is_some_and(|s| s.kind == SeatKind::Ai);
            (ai || people_too).then(|| format!("{}: {text}", name(seat)))
        }
        EncounterEvent::CheckEmitted { check } => Some(format!(
            "[the GM asks {} for a d20 roll: {}{}]",
            name(&check.player),
            check.what,
            edge_words(check)
        )),
        EncounterEvent::CheckRolled { seat, roll } => {
            let dice: Vec<String> = roll.dice.iter().map(u32::to_string).collect();
            Some(format!(
                "{} rolls d20 [{}] → {}: {}",
                name(seat),
                dice.join(", "),
                roll.total,
                if roll.success { "success" } else { "failure" }
            ))
        }
        EncounterEvent::SceneActed {
            outcome, applied, ..
        } => applied.then(|| outcome.clone()),
        EncounterEvent::HeldDelivered { seat, texts } => {
            let who = state.seat(seat).map_or(seat.clone(), |s| s.player.clone());
            let said: Vec<String> = texts.iter().map(|t| held_line(&who, t)).collect();
            Some(said.join("\n"))
        }
        // A person who plays themself is named once ("Jo joins the table.").
        EncounterEvent::SeatJoined { seat } if seat.player == seat.character => {
            Some(format!("{} joins the table.", seat.player))
        }
        EncounterEvent::SeatJoined { seat } => Some(joined_line(seat)),
        EncounterEvent::SeatHanded { seat, person } => {
            let who = asks::who(state.seat(seat)?);
            Some(if *person {
                format!("({who} is back and plays again.)")
            } else {
                format!("(An AI player plays for {who} for now.)")
            })
        }
        EncounterEvent::Resolved { summary, .. } if state.phase == Phase::Resolved => {
            Some(format!("\n== The encounter is over. {summary}"))
        }
        _ => None,
    }
}

/// The encounter runs in the campaign's store.
pub type EncounterStore = troupe_engine::GameStore<crate::log::Envelope>;

impl troupe_engine::RunLog for crate::log::Envelope {
    const RUNS: &'static str = "encounter_runs";
    const EVENTS: &'static str = "encounter_events";
    fn seq(&self) -> u64 {
        self.seq
    }
    fn undoes(&self) -> Option<u64> {
        match self.event {
            EncounterEvent::Undone { from } => Some(from),
            _ => None,
        }
    }
    fn ends_run(&self) -> bool {
        matches!(self.event, EncounterEvent::Resolved { .. })
    }
    fn mirror_path(dir: &troupe_campaign::CampaignDir, run: u32) -> std::path::PathBuf {
        dir.encounter_log(run)
    }
}
