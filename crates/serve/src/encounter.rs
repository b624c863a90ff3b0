//! An encounter run as a table: the engine's encounter loop with the people's seats in their
//! browsers, and the run's events rendered per seat. The rule is the feed's: a whitelist. The
//! GM's calls, its rejected replies, caught leaks and the encounter's secrets reach no one; a
//! whisper and an action sent back reach only their seat.

use std::sync::Arc;

use serde_json::json;
use troupe_encounter::log::{EncounterEvent, Envelope, SeatKind, State, fold_with};
use troupe_engine::encounter::{EncounterTable, EncounterWatch, Stop, shown};
use troupe_engine::{EncounterStore, Prompts};
use troupe_llm::Gateway;

use crate::feed::{Audience, Rendered, numbered};
use crate::game::BrowserSeat;
use crate::hub::{Hub, Update};

/// Done once a run resolves: the summary file and the NPCs' memories (the binary's: it knows
/// the campaign's memory). Given the run's state and events; an error is why it failed.
pub type Finish = Box<dyn FnOnce(&State, &[Envelope]) -> Result<(), String> + Send>;

/// Everything an encounter table needs, built by the binary. The run's log has begun (its
/// `started` event is in the store).
pub struct EncounterGame {
    pub store: EncounterStore,
    pub run: u32,
    pub gateway: Gateway,
    /// The campaign's prompt registry (its overrides on top of the encounter's templates).
    pub prompts: Prompts,
    /// Stop (saved) before this round of player actions.
    pub rounds: Option<u32>,
    pub finish: Finish,
}

/// Play the run until it resolves or stops: why it stopped, or the error that stopped it.
pub async fn play(game: EncounterGame, hub: Arc<Hub>) -> Result<String, String> {
    let EncounterGame {
        store,
        run,
        gateway,
        prompts,
        rounds,
        finish,
    } = game;
    // The streams as they were: the same lines with the same ids, so a page that reconnects
    // after a restart gets only what it has not seen.
    let events = store.events(run).map_err(|e| e.to_string())?;
    replay_into(&hub, &events);
    hub.mark_ready();
    let watch = Box::new(HubWatch(hub.clone()));
    let seat = BrowserSeat(hub.clone());
    let mut table = EncounterTable::open(store, run, gateway, prompts, seat, watch)
        .map_err(|e| e.to_string())?;
    table.hand_overs(hub.hand_overs.clone());
    table.joins(hub.lobby.queue.clone());
    table.stop_before_round(rounds);
    let stop = table.play().await.map_err(|e| e.to_string())?;
    Ok(match stop {
        Stop::Resolved => {
            finish(table.state(), table.events())?;
            "the encounter is over".to_string()
        }
        Stop::Rounds(n) => format!("stopped after round {n} as asked"),
        Stop::Quit => "everyone left".to_string(),
    })
}

/// Publish a run's events so far, folding them as the loop does.
fn replay_into(hub: &Hub, events: &[Envelope]) {
    fold_with(events, |state, env| hub.publish(update(state, env)));
}

/// Pushes each committed event, and whose model is working, to the hub.
struct HubWatch(Arc<Hub>);

impl EncounterWatch for HubWatch {
    fn on_event(&mut self, state: &State, env: &Envelope) {
        self.0.publish(update(state, env));
    }

    fn thinking(&mut self, seat: Option<&str>) {
        let who = seat.map(|s| if s == "gm" { "The GM" } else { s });
        self.0.thinking(who.map(str::to_string));
    }

    /// The encounter's AI GM is seat "gm", the GM's own chair: its draft shows there only.
    fn progress(&mut self, seat: &str, progress: &troupe_llm::Progress) {
        self.0.progress(seat, progress);
    }
}

/// What a committed event changes at the table, from the state after it.
pub fn update(state: &State, env: &Envelope) -> Update {
    let ended = match &env.event {
        EncounterEvent::Resolved { summary, .. } => Some(Some(summary.clone())),
        _ => None,
    };
    Update {
        lines: numbered(env.seq, rendered(state, &env.event)),
        ended,
        holders: state
            .seats
            .iter()
            .map(|s| (s.id.clone(), s.kind == SeatKind::Person))
            .collect(),
        sheets: state
            .seats
            .iter()
            .filter_map(|s| {
                let info = troupe_encounter::view::seat_info(state, &s.id)?;
                Some((s.id.clone(), json!({ "info": info })))
            })
            .collect(),
    }
}

fn rendered(state: &State, event: &EncounterEvent) -> Vec<Rendered> {
    let kind = match event {
        EncounterEvent::Narrated { .. } | EncounterEvent::Resolved { .. } => "gm",
        EncounterEvent::PlayerActed { .. } => "action",
        EncounterEvent::CheckEmitted { .. } | EncounterEvent::CheckRolled { .. } => "dice",
        EncounterEvent::SeatHanded { .. }
        | EncounterEvent::SeatJoined { .. }
        | EncounterEvent::HeldDelivered { .. } => "seat",
        EncounterEvent::Whispered { .. } | EncounterEvent::ActionSentBack { .. } => "whisper",
        _ => "session",
    };
    match event {
        // Only the seat that wrote it (the GM is the model, not a page).
        EncounterEvent::Whispered { seat, text } => vec![(
            Audience::Seat(seat.clone()),
            kind,
            format!("You whispered to the GM: {text}"),
        )],
        EncounterEvent::ActionSentBack { seat, feedback, .. } => vec![(
            Audience::Seat(seat.clone()),
            kind,
            format!("Your action was sent back: {feedback}"),
        )],
        // The rest is what a person at the terminal sees, and each person's action too.
        other => shown(state, other, true)
            .map(|text| (Audience::Table, kind, text.trim().to_string()))
            .into_iter()
            .collect(),
    }
}
