//! The audit of model calls across the three games: for each, how many calls and attempts the
//! log holds, how many were answered, and whether each attempt keeps the request the model was
//! shown (its messages). Lasers & Feelings logs one `model_call` event per attempt; an
//! encounter keeps a call's attempts in its `gm_called`/`player_called` event (`call.attempts`);
//! a scene in its `model_called` event (`attempts`). An attempt without its request is a gap:
//! a researcher cannot tell what that model saw.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use troupe_lasers::Event;

use crate::ev::{num, s, session, ty};
use crate::games::{Game, GameRun, Games};
use crate::lasers;

/// The model calls of one game.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GameCalls {
    /// `lasers_and_feelings`, `encounter` or `scene`.
    pub game: String,
    /// Sessions or runs.
    pub runs: usize,
    /// Model calls (each may take several attempts: retries, a JSON repair).
    pub calls: u32,
    pub attempts: u32,
    /// Attempts that got a reply.
    pub answered: u32,
    /// Attempts whose request (the messages the model was shown) is in the log.
    pub with_request: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

/// Something missing from an encounter's or scene's log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunGap {
    pub game: Game,
    pub run: u32,
    pub seq: u64,
    pub what: String,
}

/// The Lasers & Feelings sessions' calls (when there are sessions), then each game's that has
/// runs, and the attempts that lack their request.
pub fn audit_calls(
    events: &[Value],
    read: &[lasers::Row],
    games: &Games,
) -> (Vec<GameCalls>, Vec<RunGap>) {
    let mut out = Vec::new();
    if !events.is_empty() {
        out.push(sessions(events, read));
    }
    let mut gaps = Vec::new();
    for (game, runs) in [
        (Game::Encounter, &games.encounters),
        (Game::Scene, &games.scenes),
    ] {
        if !runs.is_empty() {
            out.push(of_runs(game, runs, &mut gaps));
        }
    }
    (out, gaps)
}

/// The sessions' calls, read as Lasers & Feelings' events: one `model_call` per attempt. A
/// newer troupe's kind is no call; a known kind that does not read is none either (the audit
/// names it as a gap).
fn sessions(events: &[Value], read: &[lasers::Row]) -> GameCalls {
    let mut c = GameCalls {
        game: "lasers_and_feelings".into(),
        runs: events.iter().map(session).collect::<BTreeSet<_>>().len(),
        ..GameCalls::default()
    };
    for env in lasers::known(read) {
        if let Event::ModelCall { record, .. } = &env.event {
            c.calls += u32::from(record.attempt <= 1);
            c.attempts += 1;
            c.answered += u32::from(record.reply.is_some());
            let u = &record.usage;
            c.tokens_in = c.tokens_in.saturating_add(u64::from(u.input_tokens));
            c.tokens_out = c.tokens_out.saturating_add(u64::from(u.output_tokens));
            c.with_request += u32::from(!record.messages.is_empty());
        }
    }
    c
}

/// Count one attempt record of an encounter or a scene, as logged (the gateway's fields).
fn attempt(c: &mut GameCalls, a: &Value) -> bool {
    let u = a.get("usage").unwrap_or(&Value::Null);
    c.attempts += 1;
    c.answered += u32::from(a.get("reply").is_some_and(|r| !r.is_null()));
    // A damaged log may count anything: the sums saturate.
    c.tokens_in = c.tokens_in.saturating_add(num(u, "input_tokens"));
    c.tokens_out = c.tokens_out.saturating_add(num(u, "output_tokens"));
    let shown = a
        .get("messages")
        .and_then(Value::as_array)
        .is_some_and(|m| !m.is_empty());
    c.with_request += u32::from(shown);
    shown
}

fn of_runs(game: Game, runs: &[GameRun], gaps: &mut Vec<RunGap>) -> GameCalls {
    let mut c = GameCalls {
        game: match game {
            Game::Encounter => "encounter",
            Game::Scene => "scene",
        }
        .into(),
        runs: runs.len(),
        ..GameCalls::default()
    };
    for run in runs {
        for e in &run.events {
            let Some((who, attempts)) = call_of(e) else {
                continue;
            };
            c.calls += 1;
            let mut gap = |what: String| {
                gaps.push(RunGap {
                    game,
                    run: run.number,
                    seq: num(e, "seq"),
                    what,
                });
            };
            if attempts.is_empty() {
                gap(format!(
                    "{who}: the call keeps no attempt records, so what the model was shown is not in the log (written before troupe kept requests)"
                ));
            }
            for a in attempts {
                if !attempt(&mut c, a) {
                    gap(format!(
                        "{who}: attempt {} has no request messages",
                        num(a, "attempt")
                    ));
                }
            }
        }
    }
    c
}

/// A model call of an encounter or a scene: who made it for what, and its attempt records.
fn call_of(e: &Value) -> Option<(String, &[Value])> {
    let (holder, agent) = match ty(e) {
        "gm_called" | "player_called" => (e.get("call")?, s(e.get("call")?, "agent")),
        "model_called" => (e, s(e, "agent")),
        _ => return None,
    };
    let attempts = holder
        .get("attempts")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    Some((
        format!("{}'s {} call", agent, s(holder, "purpose")),
        attempts,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn run(game: Game, events: Vec<Value>) -> GameRun {
        GameRun {
            game,
            number: 1,
            id: "x".into(),
            started_at: String::new(),
            ended: false,
            events,
            undone: 0,
            scorecard: None,
        }
    }

    fn shown(attempt: u64, reply: Option<&str>) -> Value {
        json!({"attempt": attempt, "messages": [{"role": "user", "content": "hi"}],
               "reply": reply, "usage": {"input_tokens": 10, "output_tokens": 2}})
    }

    #[test]
    fn every_game_counts_its_calls_and_attempts_and_names_a_missing_request() {
        let sessions = vec![
            crate::lasers::rows::row(
                json!({"event_type": "model_call", "session_number": 1, "attempt": 1,
                   "reply": null, "messages": [{"role": "user", "content": "a"}]}),
            ),
            crate::lasers::rows::row(
                json!({"event_type": "model_call", "session_number": 1, "attempt": 2,
                   "reply": "ok", "messages": [{"role": "user", "content": "a"}]}),
            ),
        ];
        let games = Games {
            encounters: vec![run(
                Game::Encounter,
                vec![
                    json!({"seq": 1, "event_type": "gm_called", "call": {"agent": "gm",
                      "purpose": "encounter_gm", "attempts": [shown(1, Some("{}"))]}}),
                    json!({"seq": 2, "event_type": "player_called", "call": {"agent": "ai1",
                      "purpose": "encounter_action"}}),
                ],
            )],
            scenes: vec![run(
                Game::Scene,
                vec![
                    json!({"seq": 3, "event_type": "model_called", "agent": "wren",
                  "purpose": "scene_player", "attempts": [shown(1, None), shown(2, Some("x"))]}),
                ],
            )],
        };
        let read = crate::lasers::read(&sessions);
        let (calls, gaps) = audit_calls(&sessions, &read, &games);
        let games: Vec<&str> = calls.iter().map(|c| c.game.as_str()).collect();
        assert_eq!(games, ["lasers_and_feelings", "encounter", "scene"]);
        assert_eq!(
            (calls[0].calls, calls[0].attempts, calls[0].answered),
            (1, 2, 1)
        );
        assert_eq!(
            (calls[1].calls, calls[1].attempts, calls[1].with_request),
            (2, 1, 1)
        );
        assert_eq!(calls[1].tokens_in, 10);
        assert_eq!(
            (calls[2].calls, calls[2].attempts, calls[2].answered),
            (1, 2, 1)
        );
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert_eq!(gaps[0].seq, 2);
        assert!(
            gaps[0].what.contains("ai1's encounter_action call"),
            "{gaps:?}"
        );
    }
}
