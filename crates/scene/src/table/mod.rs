//! The scene at troupe's table, on the engine: its table loop ([`SceneTable`]), the speaker's
//! decision as a seat-protocol ask ([`line_ask`]), the lines the table sees of its events
//! ([`shown`]), and the scene played online on a surface ([`online`]: the web table, Discord). The
//! game itself (the scene file, state, tools, planner, narrator, log and replay) is this crate's
//! pure core.

mod ai_speaker;
mod error;
pub mod online;
mod run;
mod world;

pub use error::SceneTableError;
pub use run::{AiSpeaker, HandOvers, PlannerKind, SceneModels, SceneStop, SceneTable, SceneWatch};
pub use world::{Kept, keep_world};

use crate::view::character_view;
use crate::{Scene, SceneEvent, State};
use serde_json::json;
use troupe_seat::{Ask, Command, form};

/// The seat that speaks for whichever character's turn it is.
pub const SPEAKER: &str = "player";
/// The speaker's one decision: what the character does.
pub const LINE: &str = "line";

/// The table commands: the speaker's, and the GM's (allowed when the speaker is also the GM, as
/// at the terminal). Each takes its arguments as one line of text.
const COMMANDS: &[(&str, &str, bool)] = &[
    ("help", "What can I say?", false),
    ("state", "What my character sees", false),
    ("undo", "Take back the last turn", true),
    ("gm", "Everything (the GM's view)", true),
    ("effects", "Apply effect atoms (JSON)", true),
    ("note", "Note on a card: CARD TEXT", true),
    ("promote", "Make a card's fact canon: CARD N", true),
    ("end", "End the scene", true),
    ("quit", "Stop here (saved; resume later)", false),
];

const SAY: &str = "Say what your character does (\"go to the yard\", \"attack the hound\", \
\"talk to Tam about the ledger\", \"use the tonic\", \"sneak into the storehouse\", \"look\", \
\"status\").";

/// What `/help` says to the speaker: what to say, and the commands this speaker has (the GM's
/// only when the speaker is also the GM, as at the terminal).
pub fn help(gm: bool) -> String {
    let commands: Vec<String> = COMMANDS
        .iter()
        .filter(|(name, _, gm_only)| *name != "help" && (gm || !gm_only))
        .map(|(name, label, _)| format!("/{name} ({label})"))
        .collect();
    format!("{SAY} Commands: {}.", commands.join(", "))
}

/// A table command; those that act on something take it as one line of text.
fn command(name: &str, label: &str) -> Command {
    Command {
        name: name.to_string(),
        label: label.to_string(),
        fields: if matches!(name, "effects" | "note" | "promote") {
            vec![form::line("args", label)]
        } else {
            Vec::new()
        },
    }
}

/// What does the character whose turn it is do? `shown` carries what the last command
/// answered; `gm` allows the GM's commands. The view is what the speaker knows, whoever holds
/// the seat (an AI at it makes its prompt of it alone): the character's name and what they see,
/// the scene's goal, and the last narration.
pub fn line_ask(scene: &Scene, shown: Vec<String>, gm: bool) -> Ask {
    let state = &scene.state;
    let actor = state.current_actor();
    let commands = COMMANDS
        .iter()
        .filter(|(_, _, gm_only)| gm || !gm_only)
        .map(|(name, label, _)| command(name, label))
        .collect();
    Ask {
        seat: SPEAKER.into(),
        decision: LINE.into(),
        prompt: format!("{}> ", state.name_of(actor)),
        shown,
        view: json!({
            "character": character_view(state, actor),
            "actor": actor,
            "name": state.name_of(actor),
            "goal": state.goal,
            "last": last_narration(scene),
        }),
        fields: vec![form::optional("line", "What your character does")],
        commands,
        error: None,
        prefill: Default::default(),
    }
}

/// The latest narration.
fn last_narration(scene: &Scene) -> String {
    scene
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.event {
            SceneEvent::ToolApplied { narration, .. } => Some(narration.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The seat of the person who runs the scene, when it is not the speaker's (at the web table).
pub const GM: &str = "gm";
/// The GM's one standing ask: run the scene (its answers are the GM's commands).
pub const RUN: &str = troupe_seat::STANDING;

/// The GM's standing ask while the speaker plays: the GM's commands, the GM's view of the scene,
/// and what the last command answered (`shown`).
pub fn gm_ask(state: &State, shown: Vec<String>) -> Ask {
    let commands = COMMANDS
        .iter()
        .filter(|(_, _, gm_only)| *gm_only)
        .map(|(name, label, _)| command(name, label))
        .collect();
    Ask {
        seat: GM.into(),
        decision: RUN.into(),
        prompt: format!(
            "You run the scene; it is {}'s turn. Your commands act at once.",
            state.name_of(state.current_actor())
        ),
        shown,
        view: json!({ "gm": crate::view::gm_view(state) }),
        fields: Vec::new(),
        commands,
        error: None,
        prefill: Default::default(),
    }
}

/// The narrations a polish replaced among these events: what the table sees instead is the
/// polished text, so they are not shown twice.
pub fn polished(events: &[crate::Envelope]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            SceneEvent::NarrationPolished {
                of, refused: None, ..
            } => Some(*of),
            _ => None,
        })
        .collect()
}

/// What the table sees of an event.
pub fn shown(event: &SceneEvent) -> Option<String> {
    match event {
        SceneEvent::ToolApplied {
            call, narration, ..
        } => Some(format!("[{}] {narration}", call.name())),
        SceneEvent::Rejected { call, reason, .. } => {
            Some(format!("[{}] refused: {reason}", call.name()))
        }
        SceneEvent::Undone { from_seq } => Some(format!("(undone: events from {from_seq} on)")),
        SceneEvent::Noted { card, text } => Some(format!("(noted on {card}: {text})")),
        SceneEvent::TruthChanged {
            card,
            index,
            from,
            to,
        } => Some(format!(
            "({card} fact {index}: {} → {})",
            from.as_str(),
            to.as_str()
        )),
        SceneEvent::SceneEnded { deltas } => Some(match deltas.len() {
            0 => "The scene ends. Nothing changes in the world.".to_string(),
            1 => "The scene ends. 1 change goes to the world.".to_string(),
            n => format!("The scene ends. {n} changes go to the world."),
        }),
        SceneEvent::NarrationPolished {
            text,
            refused: None,
            ..
        } => Some(format!("[polished] {text}")),
        SceneEvent::NarrationPolished {
            refused: Some(why), ..
        } => Some(format!("(the model's rewrite was not used: {why})")),
        SceneEvent::SeatHanded {
            person: true,
            reason: Some(_),
            ..
        } => {
            Some("(The AI could not go on: a person speaks for the characters again.)".to_string())
        }
        SceneEvent::SeatHanded { person: true, .. } => {
            Some("(A person speaks for the characters again.)".to_string())
        }
        SceneEvent::SeatHanded { person: false, .. } => {
            Some("(An AI speaks for the characters for now.)".to_string())
        }
        SceneEvent::SceneStarted { .. }
        | SceneEvent::PlannerReplied { .. }
        | SceneEvent::ModelCalled { .. } => None,
    }
}

/// The scene runs in the campaign's store.
pub type SceneStore = troupe_engine::GameStore<crate::Envelope>;

impl troupe_engine::RunLog for crate::Envelope {
    const RUNS: &'static str = "scene_runs";
    const EVENTS: &'static str = "scene_events";
    fn seq(&self) -> u64 {
        self.seq
    }
    fn undoes(&self) -> Option<u64> {
        match self.event {
            SceneEvent::Undone { from_seq } => Some(from_seq),
            _ => None,
        }
    }
    fn ends_run(&self) -> bool {
        matches!(self.event, SceneEvent::SceneEnded { .. })
    }
    fn mirror_path(dir: &troupe_campaign::CampaignDir, run: u32) -> std::path::PathBuf {
        dir.scene_log(run)
    }
}

/// A scene's own error, where the table's are: the scene file, the tools.
impl From<crate::Error> for troupe_engine::Error {
    fn from(e: crate::Error) -> Self {
        troupe_engine::Error::game(e)
    }
}

#[cfg(test)]
mod store_tests {
    use super::*;

    #[test]
    fn events_and_the_input_count_round_trip_and_the_engine_store_still_opens() {
        let dir = tempfile::tempdir().unwrap();
        let text = "scene: {id: s, goal: g}\nzones: [{id: a}]\n\
                    entities: [{id: p, kind: pc, zone: a}]\nturn_order: [p]\n";
        let def = crate::check(text).unwrap();
        let mut scene = crate::Scene::start(def, 5);
        let call = crate::ToolCall::GetInfo { actor: "p".into() };
        scene.act("status", call, crate::Caller::Player);
        let mut store = SceneStore::open(dir.path()).unwrap();
        let run = store.begin("s", "now", &[]).unwrap();
        store.append(run, &scene.events, 1).unwrap();
        assert_eq!(store.events(run).unwrap(), scene.events);
        assert_eq!(store.latest().unwrap().unwrap().inputs, 1);
        // The sessions' store opens the same file afterwards and sees no sessions.
        let sessions = troupe_lasers::Store::open(dir.path()).unwrap();
        assert!(sessions.sessions().unwrap().is_empty());
    }

    #[test]
    fn reading_runs_where_there_are_none_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(SceneStore::open_existing(dir.path()).unwrap().is_none());
        assert!(!dir.path().join("campaign.db").exists());
        troupe_lasers::Store::open(dir.path()).unwrap();
        SceneStore::open(dir.path()).unwrap();
        assert!(SceneStore::open_existing(dir.path()).unwrap().is_some());
    }
}

#[cfg(test)]
mod offer_tests {
    /// What a chat surface registers up front is the game's offer: every table command a
    /// scene's asks offer is in it (`/help` is every surface's own).
    #[test]
    fn every_command_an_ask_offers_is_in_the_games_offer() {
        for (name, _, _) in super::COMMANDS {
            assert!(
                *name == "help"
                    || crate::offer::OFFER
                        .table_commands
                        .iter()
                        .any(|(n, _)| n == name),
                "/{name} is offered and not in the scene's offer"
            );
        }
    }
}
