//! The turn of every event of an encounter run or a scene. Their logs write it on some events
//! only (a scene's tool calls) or on none (an encounter), but imply it: an encounter's round of
//! player actions, a scene's turn marker, each folded here as the game folds its log.

use serde_json::Value;
use troupe_encounter::log::{EncounterEvent, Envelope, State, fold_with};
use troupe_report::{Game, GameRun, Known};
use troupe_scene::log::{Envelope as SceneEnvelope, SceneEvent};

/// One turn per event of `g`, in order; none where the log cannot say.
pub fn of(g: &GameRun) -> Vec<Option<u64>> {
    match g.game {
        Game::Encounter => encounter_rounds(&g.events),
        Game::Scene => scene_turns(&g.events),
    }
}

/// An encounter's round of player actions: 0 before the first; a round begins with its first
/// seat's action, the AI player's call for it (and an action sent back) included. An event of a
/// kind this build does not know changes nothing the fold knows, so it is in the round of the
/// event before it; a known kind that does not read leaves every round unknown, since the fold
/// would go on without it and count wrong.
fn encounter_rounds(events: &[Value]) -> Vec<Option<u64>> {
    let read: Vec<Known<Envelope>> = Known::read_all(events);
    let Ok(typed) = Known::all_known(&read) else {
        return vec![None; events.len()];
    };
    let mut rounds = vec![0];
    let folded = fold_with(&typed, |state, env| {
        rounds.push(u64::from(round_of(state, &env.event)));
    });
    if folded.is_none() || rounds.len() != typed.len() {
        return vec![None; events.len()];
    }
    let (mut rounds, mut last) = (rounds.into_iter(), 0);
    read.iter()
        .map(|k| {
            if k.event().is_some() {
                last = rounds.next()?;
            }
            Some(last)
        })
        .collect()
}

/// The round of an event, given the state after it.
fn round_of(state: &State, event: &EncounterEvent) -> u32 {
    let next_action_opens_a_round = state.acted == 0 || state.acted >= state.seats.len();
    match event {
        EncounterEvent::PlayerCalled { .. } | EncounterEvent::ActionSentBack { .. }
            if next_action_opens_a_round =>
        {
            state.round + 1
        }
        _ => state.round,
    }
}

/// A scene's turn marker (from 0; a tool call that ends the actor's turn passes it on), the
/// tool calls' own `turn`; a narration's polish (logged after its call) is in its call's turn.
/// An event of a kind this build does not know is in the marker's turn; a known kind that does
/// not read has none (the marker goes on: a scene's calls carry their own turn).
fn scene_turns(events: &[Value]) -> Vec<Option<u64>> {
    let (mut marker, mut last_call) = (0, 0);
    events
        .iter()
        .map(|e| match Known::<SceneEnvelope>::read(e) {
            Known::Event(env) => Some(match &env.event {
                SceneEvent::ToolApplied { turn, call, .. } => {
                    last_call = u64::from(*turn);
                    if call.ends_turn() {
                        marker = last_call + 1;
                    }
                    last_call
                }
                SceneEvent::Rejected { turn, .. } => {
                    last_call = u64::from(*turn);
                    last_call
                }
                SceneEvent::NarrationPolished { .. } => last_call,
                SceneEvent::ModelCalled { purpose, .. } if purpose == "scene_polish" => last_call,
                _ => marker,
            }),
            Known::Unknown { .. } => Some(marker),
            Known::Malformed { .. } => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A scene's events as its log writes them (every field of each kind), from seq 1 on: a
    /// scene's start holds its whole scene file, which these turns never read.
    fn scene_log(kinds: &[Value]) -> Vec<Value> {
        kinds
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut row = json!({"seq": i + 1});
                let fields = match e["event_type"].as_str().unwrap() {
                    "model_called" => json!({"agent": "wren", "attempts": []}),
                    "tool_applied" => json!({"actor": "wren", "caller": "player", "input": "go",
                        "seed": 7, "effects": [], "facts": [], "narration": "Wren goes."}),
                    "rejected" => json!({"actor": "wren", "caller": "player", "input": "go",
                        "reason": "not now"}),
                    "narration_polished" => json!({"of": 3, "model": "m", "text": "Wren goes.",
                        "refused": null}),
                    "scene_ended" => json!({"deltas": []}),
                    _ => json!({}),
                };
                for (k, v) in fields
                    .as_object()
                    .unwrap()
                    .iter()
                    .chain(e.as_object().unwrap())
                {
                    row[k] = v.clone();
                }
                row
            })
            .collect()
    }

    fn tool(kind: &str, turn: u64, call: &Value) -> Value {
        json!({"event_type": kind, "turn": turn, "call": call})
    }

    fn called(purpose: &str) -> Value {
        json!({"event_type": "model_called", "purpose": purpose})
    }

    /// A move ends the turn, a look-up does not; the speaker's and the planner's calls are in
    /// the turn they lead to, the polish in the turn of the call it polished.
    #[test]
    fn a_scenes_events_take_the_turn_marker_and_a_polish_its_calls_turn() {
        let moved = json!({"tool": "move", "args": {"actor": "wren", "zone": "yard"}});
        let looked = json!({"tool": "get_info", "args": {"actor": "wren"}});
        let events = scene_log(&[
            called("scene_player"),
            called("scene_plan"),
            tool("tool_applied", 0, &moved),
            called("scene_polish"),
            json!({"event_type": "narration_polished"}),
            called("scene_player"),
            tool("tool_applied", 1, &looked),
            tool("rejected", 1, &moved),
            tool("tool_applied", 1, &moved),
            json!({"event_type": "scene_ended"}),
        ]);
        let turns: Vec<u64> = scene_turns(&events)
            .into_iter()
            .map(Option::unwrap)
            .collect();
        assert_eq!(turns, [0, 0, 0, 0, 0, 1, 1, 1, 1, 2]);
    }

    /// A kind a newer troupe wrote is in the marker's turn and the turns after it count on; a
    /// known kind that does not read has no turn, and only it.
    #[test]
    fn a_scenes_unknown_kind_takes_the_marker_and_a_malformed_one_has_no_turn() {
        let moved = json!({"tool": "move", "args": {"actor": "wren", "zone": "yard"}});
        let mut events = scene_log(&[
            tool("tool_applied", 0, &moved),
            json!({"event_type": "weather_changed", "sky": "red"}),
            tool("tool_applied", 1, &moved),
        ]);
        events.push(json!({"seq": 4, "event_type": "tool_applied", "turn": "two"}));
        assert_eq!(scene_turns(&events), [Some(0), Some(1), Some(1), None]);
    }

    /// A real run's opening and first round of two AI seats, the round played again: each
    /// AI player's call is in the round its action opens or joins.
    #[test]
    fn an_encounters_round_begins_with_its_first_seats_call() {
        let rounds: Vec<u64> = encounter_rounds(&crate::recorded_encounter())
            .into_iter()
            .map(Option::unwrap)
            .collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    }

    /// The recorded run with an event a newer troupe wrote in the middle of its first round:
    /// it is in that round, and every other event keeps its round.
    #[test]
    fn an_encounters_unknown_kind_is_in_the_round_of_the_event_before_it() {
        let mut events = crate::recorded_encounter();
        events.insert(
            5,
            json!({"seq": 99, "event_type": "weather_changed", "sky": "red"}),
        );
        let rounds: Vec<u64> = encounter_rounds(&events)
            .into_iter()
            .map(Option::unwrap)
            .collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
    }

    #[test]
    fn an_encounter_that_cannot_be_read_has_no_turns() {
        let mut events = crate::recorded_encounter();
        events[4]["text"] = json!(42);
        assert_eq!(encounter_rounds(&events), vec![None; events.len()]);
        let events = [
            json!({"seq": 0, "event_type": "started"}),
            json!({"seq": 1}),
        ];
        assert_eq!(encounter_rounds(&events), [None, None]);
    }
}
