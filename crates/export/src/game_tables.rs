//! The rows of an encounter run (seed 003) or a scene (seed 004): its events in `events`, each
//! attempt of its model calls in `model_calls`, an encounter's checks of its models' words in
//! `verdicts`, and a row of its own in `game_runs`. They share
//! the sessions' tables (told apart by `game`) so that one query covers every game's events or
//! every model call's tokens; what only a game has (the encounter GM's scorecard, a scene's
//! tools) is in `game_runs`, beside the numbers every run has.

use serde_json::{Value, json};
use troupe_encounter::log::{EncounterEvent, Envelope as EncounterEnvelope};
use troupe_report::{Game, GameRun, Known};
use troupe_scene::log::{Envelope as SceneEnvelope, SceneEvent};

use crate::table::Table;
use crate::tables::{attempt, empty, num, text, with_fields};

/// The name of a game in the `game` column.
pub fn game_name(game: Game) -> &'static str {
    match game {
        Game::Encounter => "encounter",
        Game::Scene => "scene",
    }
}

/// Every table, with the rows of one encounter run or scene (`run`: its batch run directory).
pub fn of_game_run(run: Option<&str>, g: &GameRun) -> Vec<Table> {
    let keys = json!({
        "run": run,
        "session": null,
        "run_session": null,
        "campaign": null,
        "model": run_model(g),
        "game": game_name(g.game),
        "game_run": g.number,
    });
    let turns = crate::game_turns::of(g);
    let mut tables = empty();
    for t in &mut tables {
        match t.name {
            "events" => events(t, &keys, g, &turns),
            "model_calls" => model_calls(t, &keys, g, &turns),
            "verdicts" => verdicts(t, &keys, g, &turns),
            "game_runs" => t.push(with_fields(keys.clone(), summary(g))),
            _ => {}
        }
    }
    tables
}

/// The run's model: an encounter's GM's (else its first player's), a scene's first call's.
fn run_model(g: &GameRun) -> Option<String> {
    let mut calls: Vec<Call<'_>> = g.events.iter().flat_map(calls_of).collect();
    // An encounter's GM call first, wherever it is.
    calls.sort_by_key(|c| c.layer != "gm");
    calls.into_iter().find_map(|c| c.model.map(String::from))
}

fn events(t: &mut Table, keys: &Value, g: &GameRun, turns: &[Option<u64>]) {
    for (e, turn) in g.events.iter().zip(turns) {
        t.push(with_fields(
            keys.clone(),
            json!({
                "seq": e.get("seq"),
                "turn": turn,
                "phase": null,
                "event_type": e.get("event_type"),
                "timestamp": when(e),
                "agent": agent(e),
                "session_id": null,
                "payload": e.to_string(),
            }),
        ));
    }
}

/// When an event happened, where the log says: an encounter's `started` and `resolved`, and
/// a model call's event (when its last attempt was logged).
fn when(e: &Value) -> Option<&Value> {
    e.get("at").or_else(|| {
        calls_of(e)?
            .attempts
            .last()?
            .get("at")
            .filter(|at| at.is_string())
    })
}

/// Who an event concerns: a call's agent, a seat, a scene's actor.
fn agent(e: &Value) -> Option<&str> {
    e.get("call")
        .and_then(|c| text(c, "agent"))
        .or_else(|| text(e, "agent"))
        .or_else(|| text(e, "seat"))
        .or_else(|| text(e, "actor"))
}

/// A model call as a game logs it: in an encounter, the `call` of `gm_called` or
/// `player_called`; in a scene, a `model_called` event.
struct Call<'a> {
    seq: u64,
    agent: Option<&'a str>,
    layer: &'static str,
    purpose: Option<&'a str>,
    model: Option<&'a str>,
    attempts: &'a [Value],
    /// The call itself (an encounter's, with its totals), for a call logged without attempts.
    whole: &'a Value,
}

fn calls_of(e: &Value) -> Option<Call<'_>> {
    let (holder, layer) = match text(e, "event_type")? {
        "gm_called" => (e.get("call")?, "gm"),
        "player_called" => (e.get("call")?, "player"),
        "model_called" if text(e, "purpose") == Some("scene_player") => (e, "player"),
        "model_called" => (e, "scene"),
        _ => return None,
    };
    let attempts = holder
        .get("attempts")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let first_provider = attempts.first().and_then(|a| text(a, "provider"));
    Some(Call {
        seq: num(e, "seq"),
        agent: text(holder, "agent"),
        layer,
        purpose: text(holder, "purpose"),
        model: text(holder, "model").or(first_provider),
        attempts,
        whole: holder,
    })
}

fn model_calls(t: &mut Table, keys: &Value, g: &GameRun, turns: &[Option<u64>]) {
    let calls = g.events.iter().zip(turns);
    for (call, turn) in calls.filter_map(|(e, turn)| Some((calls_of(e)?, turn))) {
        let fields = json!({
            "turn": turn,
            "seq": call.seq,
            "phase": null,
            "agent": call.agent,
            "layer": call.layer,
            "purpose": call.purpose,
        });
        // Each attempt's time is its own (logged with it since troupe kept it).
        let attempts: Vec<Value> = if call.attempts.is_empty() {
            vec![whole_call(call.whole)]
        } else {
            let timed = |a: &Value| with_fields(attempt(a), json!({"timestamp": a.get("at")}));
            call.attempts.iter().map(timed).collect()
        };
        for a in attempts {
            t.push(with_fields(with_fields(keys.clone(), fields.clone()), a));
        }
    }
}

/// An encounter's checks of its models' words, as `verdicts` rows: an AI player's action sent
/// back for saying what happens, a GM narration caught leaking, a GM reply refused.
fn verdicts(t: &mut Table, keys: &Value, g: &GameRun, turns: &[Option<u64>]) {
    for (e, turn) in g.events.iter().zip(turns) {
        let fields = match text(e, "event_type") {
            Some("action_sent_back") => json!({
                "check": "overreach",
                "agent": e.get("seat"),
                "result": "sent_back",
                "detail": e.get("feedback"),
                "text": e.get("text"),
            }),
            Some("leak_caught") => leak(e),
            Some("gm_rejected") => rejected(e),
            _ => continue,
        };
        let at = json!({"turn": turn, "seq": e.get("seq"), "source": e.get("event_type"),
                        "flagged": true});
        t.push(with_fields(with_fields(keys.clone(), at), fields));
    }
}

fn leak(e: &Value) -> Value {
    let leaks = e
        .get("leaks")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let kinds: Vec<&str> = leaks.iter().filter_map(|l| text(l, "kind")).collect();
    let withheld = e.get("withheld").and_then(Value::as_bool) == Some(true);
    json!({
        "check": "leak",
        "agent": "gm",
        "result": if withheld { "withheld" } else { "sent_back" },
        "violations": leaks.len(),
        "violation_kinds": kinds.join(","),
        "detail": e.get("leaks").map(Value::to_string),
    })
}

fn rejected(e: &Value) -> Value {
    let problems: Vec<&str> = e
        .get("problems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // A reply is kept only when the gateway refused its shape before the engine saw it.
    let by = if e.get("reply").is_some() {
        "schema"
    } else {
        "engine"
    };
    json!({
        "check": by,
        "agent": "gm",
        "result": "refused",
        "violations": problems.len(),
        "detail": problems.join("; "),
        "text": e.get("reply"),
    })
}

/// An encounter call logged before troupe kept its attempts: one row with the call's totals
/// (`attempt` null: how many attempts it took is not in the log).
fn whole_call(call: &Value) -> Value {
    json!({
        "attempt": null,
        "repair": false,
        "provider": call.get("model"),
        "input_tokens": call.get("tokens_in"),
        "output_tokens": call.get("tokens_out"),
        "latency_ms": call.get("latency_ms"),
        "ok": call.get("reply").is_some_and(Value::is_string),
    })
}

/// The `game_runs` row's own columns.
fn summary(g: &GameRun) -> Value {
    let calls: Vec<Call<'_>> = g.events.iter().filter_map(calls_of).collect();
    let attempts: Vec<Value> = calls.iter().flat_map(|c| c.attempts).map(attempt).collect();
    let sum = |field: &str| -> u64 {
        attempts
            .iter()
            .map(|a| num(a, field))
            .fold(0, u64::saturating_add)
    };
    let row = json!({
        "id": g.id,
        "started_at": g.started_at,
        "ended": g.ended,
        "events": g.events.len(),
        "undone": g.undone,
        "model_calls": calls.len(),
        "attempts": attempts.len(),
        "answered": attempts.iter().filter(|a| a["ok"] == true).count(),
        "input_tokens": sum("input_tokens"),
        "output_tokens": sum("output_tokens"),
        "latency_ms": sum("latency_ms"),
    });
    let own = match g.game {
        Game::Encounter => encounter_summary(&Known::read_all(&g.events)),
        Game::Scene => scene_summary(&Known::read_all(&g.events)),
    };
    with_fields(row, own)
}

/// An encounter's own columns: the GM's scorecard (its rounds are its turns) and the scene
/// engine's calls it applied and refused.
fn encounter_summary(events: &[Known<EncounterEnvelope>]) -> Value {
    let mut card = encounter_scorecard(events);
    if let Some(o) = card.as_object_mut() {
        o.insert(
            "turns".into(),
            o.get("rounds").cloned().unwrap_or(Value::Null),
        );
    }
    let applied = |was: bool| {
        events
            .iter()
            .filter_map(Known::event)
            .filter(
                |e| matches!(e.event, EncounterEvent::SceneActed { applied, .. } if applied == was),
            )
            .count()
    };
    with_fields(
        card,
        json!({
            "tools_applied": applied(true),
            "tools_rejected": applied(false),
        }),
    )
}

/// A scene's own columns: its turns (its tool calls' highest `turn` plus one, turns counting
/// from 0; none before a call) and its calls applied and refused.
fn scene_summary(events: &[Known<SceneEnvelope>]) -> Value {
    let scene = || events.iter().filter_map(Known::event).map(|e| &e.event);
    let turns = scene()
        .filter_map(|e| match e {
            SceneEvent::ToolApplied { turn, .. } | SceneEvent::Rejected { turn, .. } => {
                Some(u64::from(*turn))
            }
            _ => None,
        })
        .max()
        .map(|t| t + 1);
    json!({
        "turns": turns,
        "tools_applied": scene().filter(|e| matches!(e, SceneEvent::ToolApplied { .. })).count(),
        "tools_rejected": scene().filter(|e| matches!(e, SceneEvent::Rejected { .. })).count(),
    })
}

/// The GM's scorecard, troupe-encounter's (what `troupe stats` shows), as JSON, over the events
/// this build knows (a newer troupe's kinds change nothing it counts); null when a known kind
/// does not read, since the card would count without it.
fn encounter_scorecard(events: &[Known<EncounterEnvelope>]) -> Value {
    let Ok(typed) = Known::all_known(events) else {
        return Value::Null;
    };
    serde_json::to_value(troupe_encounter::score::scorecard(&typed)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn run(game: Game, events: Vec<Value>) -> GameRun {
        GameRun {
            game,
            number: 3,
            id: "forge".into(),
            started_at: "2026-01-02T03:04:05Z".into(),
            ended: true,
            events,
            undone: 1,
            scorecard: None,
        }
    }

    fn rows<'a>(tables: &'a [Table], name: &str) -> &'a [crate::table::Row] {
        &tables.iter().find(|t| t.name == name).unwrap().rows
    }

    /// A call with attempt records is a row per attempt; one logged before troupe kept them
    /// is one row of the call's totals, its attempt unknown. The run's model is its GM's.
    #[test]
    fn an_encounters_calls_are_rows_per_attempt_or_one_row_for_an_old_call() {
        let attempt = |n: u64, reply: Option<&str>| {
            json!({"attempt": n, "provider": "p:gm", "reply": reply, "latency_ms": 7,
                   "usage": {"input_tokens": 100, "output_tokens": 5}})
        };
        let g = run(
            Game::Encounter,
            vec![
                json!({"seq": 0, "event_type": "player_called", "call": {"agent": "ai1",
                    "purpose": "encounter_action", "model": "p:player", "reply": "I run",
                    "tokens_in": 40, "tokens_out": 4, "latency_ms": 3}}),
                json!({"seq": 1, "event_type": "gm_called", "call": {"agent": "gm",
                    "purpose": "encounter_gm", "model": "p:gm",
                    "attempts": [attempt(1, None), attempt(2, Some("{}"))]}}),
                json!({"seq": 2, "event_type": "player_acted", "seat": "ai1", "text": "I run"}),
            ],
        );
        let tables = of_game_run(Some("batch-run"), &g);
        let calls = rows(&tables, "model_calls");
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0]["attempt"], Value::Null);
        assert_eq!(
            (&calls[0]["input_tokens"], &calls[0]["layer"]),
            (&json!(40), &json!("player"))
        );
        assert_eq!(
            (&calls[2]["attempt"], &calls[2]["ok"]),
            (&json!(2), &json!(true))
        );
        assert_eq!(calls[1]["ok"], false);
        assert!(
            calls
                .iter()
                .all(|c| c["model"] == "p:gm" && c["game_run"] == 3)
        );
        let events = rows(&tables, "events");
        assert_eq!(events.len(), 3);
        assert_eq!(events[2]["agent"], "ai1");
        assert_eq!(events[0]["run"], "batch-run");
        let summary = &rows(&tables, "game_runs")[0];
        // The audit counts attempt records: the old call has none.
        assert_eq!(
            (&summary["attempts"], &summary["answered"]),
            (&json!(2), &json!(1))
        );
        assert_eq!(summary["input_tokens"], 200);
        assert_eq!(summary["model_calls"], 2);
        assert_eq!(summary["game"], "encounter");
        assert!(rows(&tables, "turns").is_empty() && rows(&tables, "scorecards").is_empty());
        assert!(rows(&tables, "verdicts").is_empty());
    }

    /// A real run with an event a newer troupe wrote in its middle: the event is a row of
    /// `events` as any other, and the run's own figures (the GM's scorecard, its rounds) are
    /// those of the run without it; a known kind that does not read leaves the scorecard null
    /// instead of counting without it.
    #[test]
    fn an_encounters_unknown_kind_is_a_row_and_changes_none_of_its_figures() {
        let plain = of_game_run(None, &run(Game::Encounter, crate::recorded_encounter()));
        let mut events = crate::recorded_encounter();
        events.insert(
            5,
            json!({"seq": 99, "event_type": "weather_changed", "sky": "red"}),
        );
        let newer = of_game_run(None, &run(Game::Encounter, events.clone()));
        let rows_of = |t: &[Table]| rows(t, "events").len();
        assert_eq!(rows_of(&newer), rows_of(&plain) + 1);
        assert_eq!(rows(&newer, "events")[5]["event_type"], "weather_changed");
        let (card, newer_card) = (&rows(&plain, "game_runs")[0], &rows(&newer, "game_runs")[0]);
        assert!(card["rounds"].is_u64(), "{card:?}");
        for column in ["rounds", "turns", "tools_applied", "model_calls"] {
            assert_eq!(newer_card[column], card[column], "{column}");
        }
        events[4]["text"] = json!(42);
        let damaged = of_game_run(None, &run(Game::Encounter, events));
        let damaged_card = &rows(&damaged, "game_runs")[0];
        assert_eq!(
            damaged_card.get("rounds").unwrap_or(&Value::Null),
            &Value::Null
        );
        assert_eq!(damaged_card["events"], rows_of(&newer));
    }

    #[test]
    fn an_encounters_checks_are_verdicts() {
        let g = run(
            Game::Encounter,
            vec![
                json!({"seq": 4, "event_type": "gm_rejected", "problems": ["no such tool"],
                    "reply": "{}"}),
                json!({"seq": 5, "event_type": "gm_rejected", "problems": ["a", "b"]}),
                json!({"seq": 6, "event_type": "leak_caught", "withheld": true,
                    "leaks": [{"kind": "dc"}, {"kind": "goal"}]}),
                json!({"seq": 7, "event_type": "action_sent_back", "seat": "ai2",
                    "text": "I win", "feedback": "say what you try"}),
            ],
        );
        let tables = of_game_run(None, &g);
        let v = rows(&tables, "verdicts");
        let got: Vec<(&Value, &Value, &Value)> = v
            .iter()
            .map(|r| (&r["source"], &r["check"], &r["result"]))
            .collect();
        assert_eq!(
            got,
            [
                (&json!("gm_rejected"), &json!("schema"), &json!("refused")),
                (&json!("gm_rejected"), &json!("engine"), &json!("refused")),
                (&json!("leak_caught"), &json!("leak"), &json!("withheld")),
                (
                    &json!("action_sent_back"),
                    &json!("overreach"),
                    &json!("sent_back")
                ),
            ]
        );
        assert_eq!(v[1]["violations"], 2);
        assert_eq!(v[2]["violation_kinds"], "dc,goal");
        assert_eq!((&v[3]["agent"], &v[3]["seq"]), (&json!("ai2"), &json!(7)));
        assert!(
            v.iter()
                .all(|r| r["game"] == "encounter" && r["flagged"] == true)
        );
    }

    #[test]
    fn a_scenes_planner_is_its_own_layer_and_its_turns_count_from_zero() {
        let looked = json!({"tool": "get_info", "args": {"actor": "wren"}});
        let g = run(
            Game::Scene,
            vec![
                json!({"seq": 0, "event_type": "scene_started"}),
                json!({"seq": 1, "event_type": "model_called", "agent": "wren",
                    "purpose": "scene_plan", "attempts": [{"attempt": 1, "provider": "p:plan"}]}),
                json!({"seq": 2, "event_type": "tool_applied", "turn": 0, "actor": "wren",
                    "caller": "player", "input": "look", "call": looked, "seed": 7,
                    "effects": [], "facts": [], "narration": "Wren looks."}),
                json!({"seq": 3, "event_type": "rejected", "turn": 1, "actor": "wren",
                    "caller": "player", "input": "look", "call": looked, "reason": "not now"}),
            ],
        );
        let tables = of_game_run(None, &g);
        let call = &rows(&tables, "model_calls")[0];
        assert_eq!(
            (&call["layer"], &call["model"]),
            (&json!("scene"), &json!("p:plan"))
        );
        let summary = &rows(&tables, "game_runs")[0];
        assert_eq!(summary["turns"], 2);
        assert_eq!(
            (&summary["tools_applied"], &summary["tools_rejected"]),
            (&json!(1), &json!(1))
        );
        assert!(
            summary.get("resolved").is_none(),
            "no encounter scorecard: null"
        );
        assert_eq!(rows(&tables, "events")[2]["turn"], 0);
    }
}
