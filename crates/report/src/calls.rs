//! The audit of model calls across the three games: for each, how many calls and attempts the
//! log holds, how many were answered, and whether each attempt keeps the request the model was
//! shown (its messages). Lasers & Feelings logs one `model_call` event per attempt; an
//! encounter keeps a call's attempts in its `gm_called`/`player_called` event (`call.attempts`);
//! a scene in its `model_called` event (`attempts`). An attempt without its request is a gap:
//! a researcher cannot tell what that model saw.
//!
//! Every game's rows are read as the game's own events (through [`Known`]): a kind a newer
//! troupe wrote is no call; a known kind that does not read is no call either, and a gap that
//! names it with why (its calls cannot be told from a row that does not read). The attempts are
//! the model gateway's records as the encounter and the scene keep them: JSON, with the same
//! fields in every game, read by [`attempt`].

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use troupe_encounter::log::{EncounterEvent, Envelope as EncounterEnvelope};
use troupe_lasers::Event;
use troupe_scene::{Envelope as SceneEnvelope, SceneEvent};

use crate::ev::{num, session};
use crate::games::{Game, GameRun, Games};
use crate::known::Known;
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
        let mut gap = |seq: u64, what: String| {
            gaps.push(RunGap {
                game,
                run: run.number,
                seq,
                what,
            });
        };
        match game {
            Game::Encounter => count_run(
                &mut c,
                &Known::read_all(&run.events),
                encounter_call,
                &mut gap,
            ),
            Game::Scene => count_run(&mut c, &Known::read_all(&run.events), scene_call, &mut gap),
        }
    }
    c
}

/// A model call of an encounter or a scene: its seq, who made it for what, and its attempt
/// records.
type Call<'a> = (u64, String, &'a [Value]);

fn encounter_call(env: &EncounterEnvelope) -> Option<Call<'_>> {
    match &env.event {
        EncounterEvent::GmCalled { call, .. } | EncounterEvent::PlayerCalled { call } => {
            Some((env.seq, who(&call.agent, &call.purpose), &call.attempts))
        }
        _ => None,
    }
}

fn scene_call(env: &SceneEnvelope) -> Option<Call<'_>> {
    match &env.event {
        SceneEvent::ModelCalled {
            agent,
            purpose,
            attempts,
        } => Some((env.seq, who(agent, purpose), attempts)),
        _ => None,
    }
}

fn who(agent: &str, purpose: &str) -> String {
    format!("{agent}'s {purpose} call")
}

/// Count the calls of one run (its rows read as its game's events, `call_of` telling which are
/// calls) into `c`, and `gap` what the log lacks: a known kind that does not read, a call
/// without attempt records, an attempt without its request.
fn count_run<E>(
    c: &mut GameCalls,
    read: &[Known<E>],
    call_of: fn(&E) -> Option<Call<'_>>,
    gap: &mut impl FnMut(u64, String),
) {
    for row in read {
        let (seq, who, attempts) = match row {
            Known::Event(e) => match call_of(e) {
                Some(call) => call,
                None => continue,
            },
            Known::Unknown { .. } => continue,
            Known::Malformed {
                event_type,
                body,
                error,
            } => {
                gap(
                    num(body, "seq"),
                    format!("{event_type} (unreadable: {error})"),
                );
                continue;
            }
        };
        c.calls += 1;
        if attempts.is_empty() {
            gap(
                seq,
                format!(
                    "{who}: the call keeps no attempt records, so what the model was shown is not in the log (written before troupe kept requests)"
                ),
            );
        }
        for a in attempts {
            if !attempt(c, a) {
                gap(
                    seq,
                    format!(
                        "{who}: attempt {} has no request messages",
                        num(a, "attempt")
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::game_score::recorded;
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

    /// An encounter's call as its log writes it (`gm_called` or `player_called`): the recorded
    /// run's first of that kind, with `call`'s fields laid over its call's.
    fn called(kind: &str, seq: u64, call: Value) -> Value {
        let mut row = recorded::encounter()
            .into_iter()
            .find(|r| r["event_type"] == kind)
            .unwrap();
        row["seq"] = json!(seq);
        for (k, v) in call.as_object().unwrap() {
            row["call"][k] = v.clone();
        }
        row
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
                    called(
                        "gm_called",
                        1,
                        json!({"agent": "gm", "purpose": "encounter_gm",
                            "attempts": [shown(1, Some("{}"))]}),
                    ),
                    called(
                        "player_called",
                        2,
                        json!({"agent": "ai1", "purpose": "encounter_action", "attempts": []}),
                    ),
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

    fn audit_of(encounter: Vec<Value>, scene: Vec<Value>) -> (Vec<GameCalls>, Vec<RunGap>) {
        let games = Games {
            encounters: vec![run(Game::Encounter, encounter)],
            scenes: vec![run(Game::Scene, scene)],
        };
        audit_calls(&[], &[], &games)
    }

    /// A real encounter run and a real scene with a kind a newer troupe wrote in the middle of
    /// each, shaped like a call (a `call` and `attempts` without their request): it is no call
    /// and no gap.
    #[test]
    fn a_newer_kind_in_a_recorded_run_is_no_call() {
        let (mut encounter, mut scene) = (recorded::encounter(), recorded::scene());
        let before = audit_of(encounter.clone(), scene.clone());
        assert_eq!(
            before
                .0
                .iter()
                .map(|c| (c.game.as_str(), c.calls, c.attempts, c.with_request))
                .collect::<Vec<_>>(),
            [("encounter", 11, 12, 12), ("scene", 2, 2, 2)]
        );
        assert!(before.1.is_empty(), "{:?}", before.1);
        for (log, seq) in [(&mut encounter, 900), (&mut scene, 901)] {
            let newer = json!({"seq": seq, "event_type": "model_streamed", "agent": "gm",
                "purpose": "stream", "call": {"agent": "gm", "purpose": "stream",
                "attempts": [{"attempt": 1}]}, "attempts": [{"attempt": 1}]});
            log.insert(log.len() / 2, newer);
        }
        assert_eq!(audit_of(encounter, scene), before);
    }

    /// A known kind with a field that does not read is a gap naming its seq, its kind and why,
    /// and is counted in no figure (a damaged call is not half-read).
    #[test]
    fn a_known_kind_that_does_not_read_is_named_as_unreadable() {
        let (mut encounter, mut scene) = (recorded::encounter(), recorded::scene());
        assert_eq!(encounter[9]["event_type"], "gm_called");
        encounter[9]["call"]["tokens_in"] = json!("many");
        encounter[19]["text"] = json!(7);
        assert_eq!(scene[3]["event_type"], "model_called");
        scene[3]["purpose"] = json!(null);
        let (calls, gaps) = audit_of(encounter, scene);
        assert_eq!(
            calls
                .iter()
                .map(|c| (c.game.as_str(), c.calls, c.attempts))
                .collect::<Vec<_>>(),
            [("encounter", 10, 10), ("scene", 1, 1)]
        );
        let named: Vec<(Game, u64, &str)> = gaps
            .iter()
            .map(|g| (g.game, g.seq, g.what.split(" (").next().unwrap()))
            .collect();
        assert_eq!(
            named,
            [
                (Game::Encounter, 9, "gm_called"),
                (Game::Encounter, 19, "player_acted"),
                (Game::Scene, 3, "model_called"),
            ]
        );
        assert!(
            gaps.iter().all(|g| g.what.contains(" (unreadable: ")),
            "{gaps:?}"
        );
        // Why: serde's words for the damaged field's value.
        assert!(gaps[0].what.contains("\"many\""), "{gaps:?}");
    }
}
