//! The scorecard per model of the encounter runs and scenes: what each model did in each of
//! those games, from the attempt records their calls keep (an encounter's `gm_called` and
//! `player_called` in `call.attempts`, a scene's `model_called` in `attempts`). The Lasers &
//! Feelings sessions have their own scorecard (`scorecard`): a session's turns, actions checked
//! and phases do not exist in the other games, so the rows are per game and count only what
//! every game has: runs, calls, attempts, replies, tokens and time.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::ev::{num, s, ty};
use crate::games::{Game, GameRun, Games};
use crate::scorecard::UNKNOWN_MODEL;

/// One model's row in one game.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GameModelScore {
    /// `encounter` or `scene`.
    pub game: String,
    /// The model the calls went to (an encounter call's `model`, else its first attempt's
    /// `provider`).
    pub model: String,
    /// Runs (encounter runs, scenes) in which this model was called.
    pub runs: u32,
    pub calls: u32,
    pub attempts: u32,
    /// Attempts that got no reply.
    pub failed_attempts: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Input plus output tokens per call.
    pub tokens_per_call: Option<f64>,
    /// Summed latency of every attempt.
    pub latency_ms: u64,
    pub latency_ms_per_call: Option<f64>,
}

/// One row per game and model, the encounter runs' first, each game's rows sorted by model.
pub fn game_scorecard(games: &Games) -> Vec<GameModelScore> {
    let mut out = Vec::new();
    for (game, runs) in [
        (Game::Encounter, &games.encounters),
        (Game::Scene, &games.scenes),
    ] {
        out.extend(of_game(game, runs));
    }
    out
}

fn of_game(game: Game, runs: &[GameRun]) -> Vec<GameModelScore> {
    let mut rows: BTreeMap<String, (GameModelScore, BTreeSet<u32>)> = BTreeMap::new();
    for run in runs {
        for e in &run.events {
            let Some((model, holder, attempts)) = call_of(e) else {
                continue;
            };
            let (row, seen) = rows.entry(model).or_default();
            seen.insert(run.number);
            row.calls += 1;
            if attempts.is_empty() {
                // A log written before calls kept their attempts: the call's own figures.
                row.attempts += 1;
                row.failed_attempts += u32::from(s(holder, "reply").is_empty());
                row.tokens_in = row.tokens_in.saturating_add(num(holder, "tokens_in"));
                row.tokens_out = row.tokens_out.saturating_add(num(holder, "tokens_out"));
                row.latency_ms = row.latency_ms.saturating_add(num(holder, "latency_ms"));
            }
            for a in attempts {
                let usage = a.get("usage").unwrap_or(&Value::Null);
                row.attempts += 1;
                row.failed_attempts += u32::from(a.get("reply").is_none_or(Value::is_null));
                row.tokens_in = row.tokens_in.saturating_add(num(usage, "input_tokens"));
                row.tokens_out = row.tokens_out.saturating_add(num(usage, "output_tokens"));
                row.latency_ms = row.latency_ms.saturating_add(num(a, "latency_ms"));
            }
        }
    }
    rows.into_iter()
        .map(|(model, (mut row, seen))| {
            row.game = game_name(game).into();
            row.model = model;
            row.runs = u32::try_from(seen.len()).unwrap_or(u32::MAX);
            let calls = f64::from(row.calls);
            row.tokens_per_call = (row.calls > 0)
                .then(|| row.tokens_in.saturating_add(row.tokens_out) as f64 / calls);
            row.latency_ms_per_call = (row.calls > 0).then(|| row.latency_ms as f64 / calls);
            row
        })
        .collect()
}

pub(crate) fn game_name(game: Game) -> &'static str {
    match game {
        Game::Encounter => "encounter",
        Game::Scene => "scene",
    }
}

/// A model call of an encounter or a scene: its model, the object holding its figures, and
/// its attempt records.
fn call_of(e: &Value) -> Option<(String, &Value, &[Value])> {
    let holder = match ty(e) {
        "gm_called" | "player_called" => e.get("call")?,
        "model_called" => e,
        _ => return None,
    };
    let attempts = holder
        .get("attempts")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let model = [s(holder, "model")]
        .into_iter()
        .chain(attempts.iter().map(|a| s(a, "provider")))
        .find(|m| !m.is_empty())
        .unwrap_or(UNKNOWN_MODEL)
        .to_string();
    Some((model, holder, attempts))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn run(game: Game, number: u32, events: Vec<Value>) -> GameRun {
        GameRun {
            game,
            number,
            id: "x".into(),
            started_at: String::new(),
            ended: true,
            events,
            undone: 0,
            scorecard: None,
        }
    }

    fn attempt(provider: &str, reply: Option<&str>, tokens: (u64, u64), ms: u64) -> Value {
        json!({"attempt": 1, "provider": provider, "reply": reply, "latency_ms": ms,
               "usage": {"input_tokens": tokens.0, "output_tokens": tokens.1}})
    }

    #[test]
    fn each_game_scores_each_model_from_its_calls_attempts() {
        let games = Games {
            encounters: vec![
                run(
                    Game::Encounter,
                    1,
                    vec![
                        json!({"event_type": "gm_called", "call": {"model": "replay:a",
                          "attempts": [attempt("replay:a", None, (5, 0), 10),
                                       attempt("replay:a", Some("{}"), (5, 3), 20)]}}),
                        json!({"event_type": "player_called", "call": {"model": "replay:a",
                          "attempts": [attempt("replay:a", Some("x"), (2, 1), 5)]}}),
                        json!({"event_type": "narrated", "text": "not a call"}),
                    ],
                ),
                run(
                    Game::Encounter,
                    2,
                    vec![json!({"event_type": "gm_called", "call": {"model": "",
                      "tokens_in": 7, "tokens_out": 1, "latency_ms": 4, "reply": "ok"}})],
                ),
            ],
            scenes: vec![run(
                Game::Scene,
                1,
                vec![json!({"event_type": "model_called", "agent": "w",
                  "attempts": [attempt("replay:s", Some("line"), (3, 3), 8)]})],
            )],
        };
        let rows = game_scorecard(&games);
        let keys: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.game.as_str(), r.model.as_str()))
            .collect();
        assert_eq!(
            keys,
            [
                ("encounter", "replay:a"),
                ("encounter", "unknown"),
                ("scene", "replay:s")
            ]
        );
        let a = &rows[0];
        assert_eq!(
            (a.runs, a.calls, a.attempts, a.failed_attempts),
            (1, 2, 3, 1)
        );
        assert_eq!((a.tokens_in, a.tokens_out, a.latency_ms), (12, 4, 35));
        assert_eq!(a.tokens_per_call, Some(8.0));
        assert_eq!(a.latency_ms_per_call, Some(17.5));
        let old = &rows[1];
        assert_eq!((old.calls, old.attempts, old.tokens_in), (1, 1, 7));
        assert_eq!(rows[2].calls, 1);
        assert!(game_scorecard(&Games::default()).is_empty());
    }
}
