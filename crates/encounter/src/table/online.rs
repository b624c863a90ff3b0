//! An encounter run played online (on a [`Surface`]: the web table, Discord): the encounter's
//! table loop with the people's seats asking the surface, and the run's events rendered per seat.
//! The rule is a whitelist. The GM's calls, its rejected replies, caught leaks and the
//! encounter's secrets reach no one; a whisper and an action sent back reach only their seat. A
//! table opened with a GM seat gives its person (whoever runs the table beside the AI GM) the
//! table's commands: taking back the last round, and handing seats over; their page reads what
//! a player's does, no more.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use troupe_engine::Prompts;
use troupe_engine::surface::{
    Audience, Draft, GmShown, Playable, Published, Rendered, Surface, SurfaceSeat, Update, numbered,
};
use troupe_llm::Gateway;

use super::asks::gm_ask;
use super::{EncounterStore, EncounterTable, Stop, shown};
use crate::log::{EncounterEvent, Envelope, SeatKind, State, fold};

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
    /// Whether the table has a GM seat (tables opened before it had one do not).
    pub gm: bool,
}

#[async_trait(?Send)]
impl Playable for EncounterGame {
    /// Play the run until it resolves or stops: why it stopped, or the error that stopped it.
    async fn play(self: Box<Self>, surface: Arc<dyn Surface>) -> Result<String, String> {
        let EncounterGame {
            store,
            run,
            gateway,
            prompts,
            rounds,
            finish,
            gm,
        } = *self;
        // The streams as they were: the same lines with the same ids, so a page that reconnects
        // after a restart gets only what it has not seen.
        let events = store.events(run).map_err(troupe_engine::error_chain)?;
        replay_into(surface.as_ref(), &events);
        surface.mark_ready();
        let watch = Box::new(Published::new(surface.clone(), GM_SHOWN, update));
        let seat = SurfaceSeat(surface.clone());
        // What a person's answer decided and its leaving the inbox are one commit.
        let mut store = store;
        store.consume_answers(surface.received());
        let mut table = EncounterTable::open(store, run, gateway, prompts, seat, watch)
            .map_err(troupe_engine::error_chain)?;
        table.hand_overs(surface.hand_overs());
        table.joins(surface.joins());
        table.stop_before_round(rounds);
        if gm {
            surface.undo_by_table();
        }
        let stop = play_until_stopped(&mut table, surface.as_ref(), gm).await?;
        Ok(match stop {
            Stop::Resolved => {
                finish(table.state(), table.events())?;
                "the encounter is over".to_string()
            }
            Stop::Rounds(n) => format!("stopped after round {n} as asked"),
            Stop::Quit => "everyone left".to_string(),
        })
    }
}

type Table = EncounterTable<SurfaceSeat>;

/// Play until the run resolves or stops. When the GM asks to take back the last round, the game
/// is stopped where it waits (as a kill would stop it: every committed step stays), the round
/// is taken back as `troupe encounter undo` does, and the game goes on from it.
async fn play_until_stopped(
    table: &mut Table,
    surface: &dyn Surface,
    gm: bool,
) -> Result<Stop, String> {
    let mut answered = Vec::new();
    loop {
        let undo = surface.undo_asked();
        let stopped = tokio::select! {
            r = table.play() => Some(r),
            () = undo => None,
            () = gm_commands(surface, gm, answered.clone()) => None,
        };
        if let Some(r) = stopped {
            return r.map_err(troupe_engine::error_chain);
        }
        surface.withdraw_asks();
        surface.thinking(None);
        answered = match table
            .take_back_round()
            .map_err(troupe_engine::error_chain)?
        {
            Some(_) => Vec::new(),
            None => vec!["(There is no round of player actions to take back yet.)".into()],
        };
    }
}

/// The GM's table commands, asked while the game plays; never done: an undo reaches the table
/// through the surface (which stops the game for it), and any other answer is asked again.
async fn gm_commands(surface: &dyn Surface, gm: bool, shown: Vec<String>) {
    while gm && surface.ask_and_wait(gm_ask(shown.clone())).await.is_some() {}
    std::future::pending::<()>().await;
}

/// Publish a run's events so far as the table showed them: each with the state after it, a
/// taken-back round's lines too (they were shown before the undo that follows them).
fn replay_into(surface: &dyn Surface, events: &[Envelope]) {
    let Some(mut state) = fold(events.get(..1).unwrap_or_default()) else {
        return;
    };
    for (i, env) in events.iter().enumerate().skip(1) {
        match &env.event {
            // The table refolds after an undo, as the loop does.
            EncounterEvent::Undone { .. } => match fold(events.get(..=i).unwrap_or_default()) {
                Some(s) => state = s,
                None => return,
            },
            _ => state.apply(env),
        }
        surface.publish(update(&state, env));
    }
}

/// The AI GM's prompt holds the encounter's secrets (DCs, hidden goals, checks' notes) and the
/// person at the GM link is a player's peer: its draft reaches no page, only its tokens.
const GM_SHOWN: GmShown = GmShown {
    name: "The GM",
    draft: Draft::Unshown,
};

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
                let info = crate::view::seat_info(state, &s.id)?;
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
        EncounterEvent::Undone { .. } => "problem",
        EncounterEvent::Whispered { .. } | EncounterEvent::ActionSentBack { .. } => "whisper",
        _ => "session",
    };
    match event {
        // Only the seat that wrote it: the GM is the model, not the GM seat's person.
        EncounterEvent::Whispered { seat, text } => vec![(
            Audience::Own(seat.clone()),
            kind,
            format!("You whispered to the GM: {text}"),
        )],
        EncounterEvent::ActionSentBack { seat, feedback, .. } => vec![(
            Audience::Own(seat.clone()),
            kind,
            format!("Your action was sent back: {feedback}"),
        )],
        EncounterEvent::Undone { .. } => vec![(
            Audience::Table,
            kind,
            "(The GM took back the last round: it is played again from its first action.)".into(),
        )],
        // The rest is what a person at the terminal sees, and each person's action too.
        other => shown(state, other, true)
            .map(|text| (Audience::Table, kind, text.trim().to_string()))
            .into_iter()
            .collect(),
    }
}
