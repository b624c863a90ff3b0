//! The scorecard per model of the encounter runs and scenes: what each model did in each of
//! those games, from the attempt records their calls keep (an encounter's `gm_called` and
//! `player_called` in `call.attempts`, a scene's `model_called` in `attempts`). The Lasers &
//! Feelings sessions have their own scorecard (`scorecard`): a session's turns, actions checked
//! and phases do not exist in the other games, so the rows are per game and count only what
//! every game has: runs, calls, attempts, replies, tokens and time.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::ev::{num, s};
use crate::games::{Game, GameRun, Games};
use crate::known::Known;
use crate::scorecard::UNKNOWN_MODEL;
use troupe_encounter::log::{EncounterEvent, Envelope as EncounterEnvelope};
use troupe_scene::{Envelope as SceneEnvelope, SceneEvent};

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
    let mut rows = Rows::new();
    for run in runs {
        count_calls(&mut rows, game, run);
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

/// A model call of an encounter or a scene: the model it names (an encounter's; a scene's call
/// names none), its own figures (an encounter's; a log from before attempts were kept has only
/// these), and its attempt records.
struct Call<'a> {
    model: &'a str,
    reply: &'a str,
    tokens_in: u64,
    tokens_out: u64,
    latency_ms: u64,
    attempts: &'a [Value],
}

impl Call<'_> {
    /// The call's model, else its first attempt's provider that names one.
    fn model(&self) -> String {
        [self.model]
            .into_iter()
            .chain(self.attempts.iter().map(|a| s(a, "provider")))
            .find(|m| !m.is_empty())
            .unwrap_or(UNKNOWN_MODEL)
            .to_string()
    }
}

/// Every model call of a run, read as its game's events, counted into `rows` (by model, with
/// the runs that called it). A kind a newer troupe wrote is no call this build knows. A known
/// kind that does not read counts no call either: its figures cannot be told from a row that
/// does not read (the audit of the calls, `audit_calls`, names it as a gap of its run).
fn count_calls(rows: &mut Rows, game: Game, run: &GameRun) {
    match game {
        Game::Encounter => {
            let read: Vec<Known<EncounterEnvelope>> = Known::read_all(&run.events);
            let calls = read.iter().filter_map(|k| match &k.event()?.event {
                EncounterEvent::GmCalled { call, .. } | EncounterEvent::PlayerCalled { call } => {
                    Some(Call {
                        model: &call.model,
                        reply: &call.reply,
                        tokens_in: call.tokens_in,
                        tokens_out: call.tokens_out,
                        latency_ms: call.latency_ms,
                        attempts: &call.attempts,
                    })
                }
                _ => None,
            });
            count(rows, run.number, calls);
        }
        Game::Scene => {
            let read: Vec<Known<SceneEnvelope>> = Known::read_all(&run.events);
            let calls = read.iter().filter_map(|k| match &k.event()?.event {
                SceneEvent::ModelCalled { attempts, .. } => Some(Call {
                    model: "",
                    reply: "",
                    tokens_in: 0,
                    tokens_out: 0,
                    latency_ms: 0,
                    attempts,
                }),
                _ => None,
            });
            count(rows, run.number, calls);
        }
    }
}

type Rows = BTreeMap<String, (GameModelScore, BTreeSet<u32>)>;

fn count<'a>(rows: &mut Rows, run: u32, calls: impl Iterator<Item = Call<'a>>) {
    for call in calls {
        let (row, seen) = rows.entry(call.model()).or_default();
        seen.insert(run);
        row.calls += 1;
        if call.attempts.is_empty() {
            // A log written before calls kept their attempts: the call's own figures.
            row.attempts += 1;
            row.failed_attempts += u32::from(call.reply.is_empty());
            row.tokens_in = row.tokens_in.saturating_add(call.tokens_in);
            row.tokens_out = row.tokens_out.saturating_add(call.tokens_out);
            row.latency_ms = row.latency_ms.saturating_add(call.latency_ms);
        }
        for a in call.attempts {
            let usage = a.get("usage").unwrap_or(&Value::Null);
            row.attempts += 1;
            row.failed_attempts += u32::from(a.get("reply").is_none_or(Value::is_null));
            row.tokens_in = row.tokens_in.saturating_add(num(usage, "input_tokens"));
            row.tokens_out = row.tokens_out.saturating_add(num(usage, "output_tokens"));
            row.latency_ms = row.latency_ms.saturating_add(num(a, "latency_ms"));
        }
    }
}

/// Real logs for the readers' tests: a recorded encounter run (the smithy, two AI players and a
/// person) and a recorded scene (the mill), row by row.
#[cfg(test)]
pub(crate) mod recorded {
    #![allow(clippy::unwrap_used)]

    use serde_json::Value;

    fn rows(text: &str) -> Vec<Value> {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn encounter() -> Vec<Value> {
        rows(include_str!("../tests/data/encounter-smithy.jsonl"))
    }

    pub fn scene() -> Vec<Value> {
        rows(include_str!("../tests/data/scene-mill.jsonl"))
    }
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

    /// An encounter's call as its log writes it (`gm_called` or `player_called`).
    fn called(kind: &str, seq: u64, call: Value) -> Value {
        let mut whole = json!({"agent": "gm", "purpose": "encounter_gm", "model": "", "reply": "",
            "json": null, "tokens_in": 0, "tokens_out": 0, "latency_ms": 0});
        for (k, v) in call.as_object().unwrap() {
            whole[k] = v.clone();
        }
        let mut row = json!({"seq": seq, "event_type": kind, "call": whole});
        if kind == "gm_called" {
            row["zones"] = json!({"system": 1, "pinned": 1, "history": 0});
            row["trimmed"] = json!(0);
        }
        row
    }

    #[test]
    fn each_game_scores_each_model_from_its_calls_attempts() {
        let games = Games {
            encounters: vec![
                run(
                    Game::Encounter,
                    1,
                    vec![
                        called(
                            "gm_called",
                            1,
                            json!({"model": "replay:a",
                          "attempts": [attempt("replay:a", None, (5, 0), 10),
                                       attempt("replay:a", Some("{}"), (5, 3), 20)]}),
                        ),
                        called(
                            "player_called",
                            2,
                            json!({"model": "replay:a",
                          "attempts": [attempt("replay:a", Some("x"), (2, 1), 5)]}),
                        ),
                        json!({"seq": 3, "event_type": "narrated", "text": "not a call",
                          "facts": []}),
                    ],
                ),
                run(
                    Game::Encounter,
                    2,
                    vec![called(
                        "gm_called",
                        1,
                        json!({"model": "", "tokens_in": 7, "tokens_out": 1, "latency_ms": 4,
                          "reply": "ok"}),
                    )],
                ),
            ],
            scenes: vec![run(
                Game::Scene,
                1,
                vec![json!({"seq": 1, "event_type": "model_called", "agent": "w",
                  "purpose": "scene_player",
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

    /// A kind a newer troupe writes, in the middle of a real encounter run and a real scene,
    /// changes no model's figures.
    #[test]
    fn a_newer_event_kind_in_a_recorded_run_changes_no_figure() {
        let games = |newer: bool| {
            let (mut encounter, mut scene) = (recorded::encounter(), recorded::scene());
            if newer {
                for (log, seq) in [(&mut encounter, 900), (&mut scene, 901)] {
                    let at = log.len() / 2;
                    log.insert(
                        at,
                        json!({"seq": seq, "event_type": "weather_changed",
                            "call": {"model": "newer", "tokens_in": 99}, "attempts": [{}]}),
                    );
                }
            }
            Games {
                encounters: vec![run(Game::Encounter, 1, encounter)],
                scenes: vec![run(Game::Scene, 1, scene)],
            }
        };
        let before = game_scorecard(&games(false));
        assert_eq!(
            before
                .iter()
                .map(|r| (r.game.as_str(), r.calls, r.attempts))
                .collect::<Vec<_>>(),
            [("encounter", 11, 12), ("scene", 2, 2)]
        );
        assert_eq!(game_scorecard(&games(true)), before);
    }

    /// A call of a known kind that does not read counts no call: none of its figures can be
    /// told (the audit of the calls names it).
    #[test]
    fn a_damaged_call_in_a_recorded_run_counts_nothing() {
        let mut encounter = recorded::encounter();
        assert_eq!(encounter[9]["event_type"], "gm_called");
        encounter[9]["call"]["tokens_in"] = json!("many");
        let games = Games {
            encounters: vec![run(Game::Encounter, 1, encounter)],
            scenes: Vec::new(),
        };
        let rows = game_scorecard(&games);
        assert_eq!((rows[0].calls, rows[0].attempts), (10, 10), "{rows:?}");
    }
}
