//! The turn of every event of an encounter run or a scene. Their logs write it on some events
//! only (a scene's tool calls) or on none (an encounter), but imply it: an encounter's round of
//! player actions, a scene's turn marker, each folded here as the game folds its log.

use serde_json::Value;
use troupe_encounter::log::{EncounterEvent, Envelope, State, fold_with};
use troupe_report::{Game, GameRun};
use troupe_scene::tools::ToolCall;

use crate::tables::{num, text};

/// One turn per event of `g`, in order; none where the log cannot say (events this build
/// cannot read).
pub fn of(g: &GameRun) -> Vec<Option<u64>> {
    match g.game {
        Game::Encounter => encounter_rounds(&g.events),
        Game::Scene => scene_turns(&g.events),
    }
}

/// An encounter's round of player actions: 0 before the first; a round begins with its first
/// seat's action, the AI player's call for it (and an action sent back) included.
fn encounter_rounds(events: &[Value]) -> Vec<Option<u64>> {
    let typed: Result<Vec<Envelope>, _> = events
        .iter()
        .map(|e| serde_json::from_value(e.clone()))
        .collect();
    let mut rounds = vec![Some(0)];
    let folded = typed.ok().and_then(|typed| {
        fold_with(&typed, |state, env| {
            rounds.push(Some(u64::from(round_of(state, &env.event))));
        })
    });
    if folded.is_none() || rounds.len() != events.len() {
        return vec![None; events.len()];
    }
    rounds
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
fn scene_turns(events: &[Value]) -> Vec<Option<u64>> {
    let (mut marker, mut last_call) = (0, 0);
    events
        .iter()
        .map(|e| {
            Some(match text(e, "event_type") {
                Some(kind @ ("tool_applied" | "rejected")) => {
                    last_call = num(e, "turn");
                    if kind == "tool_applied" && ends_turn(e) {
                        marker = last_call + 1;
                    }
                    last_call
                }
                Some("narration_polished") => last_call,
                Some("model_called") if text(e, "purpose") == Some("scene_polish") => last_call,
                _ => marker,
            })
        })
        .collect()
}

fn ends_turn(e: &Value) -> bool {
    e.get("call")
        .and_then(|c| serde_json::from_value::<ToolCall>(c.clone()).ok())
        .is_some_and(|c| c.ends_turn())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A move ends the turn, a look-up does not; the speaker's and the planner's calls are in
    /// the turn they lead to, the polish in the turn of the call it polished.
    #[test]
    fn a_scenes_events_take_the_turn_marker_and_a_polish_its_calls_turn() {
        let tool = |kind: &str, turn: u64, call: Value| json!({"event_type": kind, "turn": turn, "call": call});
        let called = |purpose: &str| json!({"event_type": "model_called", "purpose": purpose});
        let moved = json!({"tool": "move", "args": {"actor": "wren", "zone": "yard"}});
        let looked = json!({"tool": "get_info", "args": {"actor": "wren"}});
        let events = [
            json!({"event_type": "scene_started"}),
            called("scene_player"),
            called("scene_plan"),
            tool("tool_applied", 0, moved.clone()),
            called("scene_polish"),
            json!({"event_type": "narration_polished"}),
            called("scene_player"),
            tool("tool_applied", 1, looked),
            tool("rejected", 1, moved.clone()),
            tool("tool_applied", 1, moved),
            json!({"event_type": "scene_ended"}),
        ];
        let turns: Vec<u64> = scene_turns(&events)
            .into_iter()
            .map(Option::unwrap)
            .collect();
        assert_eq!(turns, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2]);
    }

    /// A real run's opening and first round of two AI seats, the round played again: each
    /// AI player's call is in the round its action opens or joins.
    #[test]
    fn an_encounters_round_begins_with_its_first_seats_call() {
        let events: Vec<Value> = include_str!("../tests/data/encounter-two-ai-rounds.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let rounds: Vec<u64> = encounter_rounds(&events)
            .into_iter()
            .map(Option::unwrap)
            .collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    }

    #[test]
    fn an_encounter_that_cannot_be_read_has_no_turns() {
        let events = [
            json!({"seq": 0, "event_type": "started"}),
            json!({"seq": 1}),
        ];
        assert_eq!(encounter_rounds(&events), [None, None]);
    }
}
