//! The rows of an encounter run (seed 003) or a scene (seed 004): its events in `events`, each
//! attempt of its model calls in `model_calls`, an encounter's checks of its models' words in
//! `verdicts`, and a row of its own in `game_runs`. They share
//! the sessions' tables (told apart by `game`) so that one query covers every game's events or
//! every model call's tokens; what only a game has (the encounter GM's scorecard, a scene's
//! tools) is in `game_runs`, beside the numbers every run has.
//!
//! A run's rows are read once as its game's own events (troupe-encounter's or troupe-scene's
//! `Envelope`, through [`Known`]), as a session's are as Lasers & Feelings': `events` lists
//! every row as logged; the calls, verdicts and figures are the known events', a newer troupe's
//! kind left out; a known kind that does not read stops the export with where, its kind and why.
//! A call's attempts are the model gateway's records as the games keep them (JSON, the same
//! fields in every game), read by [`attempt`].

use serde_json::{Value, json};
use troupe_encounter::leaks::Leak;
use troupe_encounter::log::{EncounterEvent, Envelope as EncounterEnvelope, ModelCall};
use troupe_report::{Game, GameRun, Known};
use troupe_scene::log::{Envelope as SceneEnvelope, SceneEvent};

use crate::Error;
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
/// Its rows are read once as the game's own events: `events` lists every row as logged, a kind
/// a newer troupe wrote included; the calls, verdicts and figures leave such a kind out; a row
/// of a known kind that does not read is `Err` (where, its kind and why), rather than tables
/// that count without it unseen.
pub fn of_game_run(run: Option<&str>, g: &GameRun) -> Result<Vec<Table>, Error> {
    let read = Read::of(g);
    if let Some((event_type, why, row)) = read.first_unreadable() {
        return Err(unreadable(run, g, row, event_type, why));
    }
    let calls = read.calls();
    let keys = json!({
        "run": run,
        "session": null,
        "run_session": null,
        "campaign": null,
        "model": run_model(&calls),
        "game": game_name(g.game),
        "game_run": g.number,
    });
    let turns = crate::game_turns::of(g);
    let mut tables = empty();
    for t in &mut tables {
        match t.name {
            "events" => events(t, &keys, g, &turns, &calls),
            "model_calls" => model_calls(t, &keys, &calls, &turns),
            "verdicts" => verdicts(t, &keys, &read, g, &turns),
            "game_runs" => t.push(with_fields(keys.clone(), summary(g, &read, &calls))),
            _ => {}
        }
    }
    Ok(tables)
}

/// A run's rows, each read once as its game's event (one per row, in order).
enum Read {
    Encounter(Vec<Known<EncounterEnvelope>>),
    Scene(Vec<Known<SceneEnvelope>>),
}

impl Read {
    fn of(g: &GameRun) -> Read {
        match g.game {
            Game::Encounter => Read::Encounter(Known::read_all(&g.events)),
            Game::Scene => Read::Scene(Known::read_all(&g.events)),
        }
    }

    /// The first row of a kind this build knows that does not read: its kind, why, the row.
    fn first_unreadable(&self) -> Option<(&str, &str, &Value)> {
        fn first<E>(read: &[Known<E>]) -> Option<(&str, &str, &Value)> {
            read.iter().find_map(|k| match k {
                Known::Malformed {
                    event_type,
                    body,
                    error,
                } => Some((event_type.as_str(), error.as_str(), body)),
                _ => None,
            })
        }
        match self {
            Read::Encounter(read) => first(read),
            Read::Scene(read) => first(read),
        }
    }

    /// The model call each row is (None: another kind, or one a newer troupe wrote).
    fn calls(&self) -> Vec<Option<Call<'_>>> {
        match self {
            Read::Encounter(read) => read.iter().map(|k| encounter_call(k.event()?)).collect(),
            Read::Scene(read) => read.iter().map(|k| scene_call(k.event()?)).collect(),
        }
    }
}

/// The error for a row of a known kind that does not read: where it is (a batch's run, the
/// game run's number, the row's seq), its kind and why.
fn unreadable(run: Option<&str>, g: &GameRun, row: &Value, event_type: &str, why: &str) -> Error {
    let seq = row
        .get("seq")
        .map_or_else(|| "?".to_string(), Value::to_string);
    let here = format!("{} run {}, event {seq}", game_name(g.game), g.number);
    Error::Unreadable {
        at: match run {
            Some(run) => format!("{run}, {here}"),
            None => here,
        },
        event_type: if event_type.is_empty() {
            "(no event_type)".into()
        } else {
            event_type.into()
        },
        why: why.into(),
    }
}

/// The run's model: an encounter's GM's (else its first player's), a scene's first call's.
fn run_model(calls: &[Option<Call<'_>>]) -> Option<String> {
    let mut calls: Vec<&Call<'_>> = calls.iter().flatten().collect();
    // An encounter's GM call first, wherever it is.
    calls.sort_by_key(|c| c.layer != "gm");
    calls.into_iter().find_map(|c| c.model.map(String::from))
}

/// Every row as logged, of every kind (a newer troupe's included), as the sessions' `events`.
fn events(
    t: &mut Table,
    keys: &Value,
    g: &GameRun,
    turns: &[Option<u64>],
    calls: &[Option<Call<'_>>],
) {
    for ((e, turn), call) in g.events.iter().zip(turns).zip(calls) {
        t.push(with_fields(
            keys.clone(),
            json!({
                "seq": e.get("seq"),
                "turn": turn,
                "phase": null,
                "event_type": e.get("event_type"),
                "timestamp": when(e, call.as_ref()),
                "agent": agent(e),
                "session_id": null,
                "payload": e.to_string(),
            }),
        ));
    }
}

/// When an event happened, where the log says: an encounter's `started` and `resolved`, and
/// a model call's event (when its last attempt was logged).
fn when<'a>(e: &'a Value, call: Option<&Call<'a>>) -> Option<&'a Value> {
    e.get("at")
        .or_else(|| call?.attempts.last()?.get("at").filter(|at| at.is_string()))
}

/// Who an event concerns, from the row as logged (a newer troupe's kind included): a call's
/// agent, a seat, a scene's actor.
fn agent(e: &Value) -> Option<&str> {
    e.get("call")
        .and_then(|c| text(c, "agent"))
        .or_else(|| text(e, "agent"))
        .or_else(|| text(e, "seat"))
        .or_else(|| text(e, "actor"))
}

/// A model call as a game logs it: in an encounter, the `call` of `gm_called` or
/// `player_called`; in a scene, a `model_called` event. Its attempts are the gateway's records
/// as the game keeps them (JSON: the same fields in every game, read by `attempt`).
struct Call<'a> {
    seq: u64,
    agent: &'a str,
    layer: &'static str,
    purpose: &'a str,
    model: Option<&'a str>,
    attempts: &'a [Value],
    /// An encounter's call itself (with its totals), for a call logged without attempts; a
    /// scene's call has none.
    whole: Option<&'a ModelCall>,
}

fn encounter_call(env: &EncounterEnvelope) -> Option<Call<'_>> {
    let (call, layer) = match &env.event {
        EncounterEvent::GmCalled { call, .. } => (call, "gm"),
        EncounterEvent::PlayerCalled { call } => (call, "player"),
        _ => return None,
    };
    Some(Call {
        seq: env.seq,
        agent: &call.agent,
        layer,
        purpose: &call.purpose,
        model: Some(&call.model),
        attempts: &call.attempts,
        whole: Some(call),
    })
}

fn scene_call(env: &SceneEnvelope) -> Option<Call<'_>> {
    let SceneEvent::ModelCalled {
        agent,
        purpose,
        attempts,
    } = &env.event
    else {
        return None;
    };
    Some(Call {
        seq: env.seq,
        agent,
        layer: if purpose == "scene_player" {
            "player"
        } else {
            "scene"
        },
        purpose,
        // A scene's call names no model: its first attempt's provider does.
        model: attempts.first().and_then(|a| text(a, "provider")),
        attempts,
        whole: None,
    })
}

fn model_calls(t: &mut Table, keys: &Value, calls: &[Option<Call<'_>>], turns: &[Option<u64>]) {
    let calls = calls.iter().zip(turns);
    for (call, turn) in calls.filter_map(|(call, turn)| Some((call.as_ref()?, turn))) {
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
/// back for saying what happens, a GM narration caught leaking, a GM reply refused. A scene
/// checks none.
fn verdicts(t: &mut Table, keys: &Value, read: &Read, g: &GameRun, turns: &[Option<u64>]) {
    let Read::Encounter(read) = read else {
        return;
    };
    for ((known, row), turn) in read.iter().zip(&g.events).zip(turns) {
        let Some(env) = known.event() else {
            continue;
        };
        let (source, fields) = match &env.event {
            EncounterEvent::ActionSentBack {
                seat,
                text,
                feedback,
            } => (
                "action_sent_back",
                json!({
                    "check": "overreach",
                    "agent": seat,
                    "result": "sent_back",
                    "detail": feedback,
                    "text": text,
                }),
            ),
            EncounterEvent::LeakCaught { leaks, withheld } => {
                ("leak_caught", leak(leaks, *withheld, row.get("leaks")))
            }
            EncounterEvent::GmRejected { problems, reply } => {
                ("gm_rejected", rejected(problems, reply.as_deref()))
            }
            _ => continue,
        };
        let at = json!({"turn": turn, "seq": env.seq, "source": source, "flagged": true});
        t.push(with_fields(with_fields(keys.clone(), at), fields));
    }
}

/// A leak's verdict columns. `as_logged` is the leaks as the log wrote them: the detail column
/// is that JSON (an older log's leaks lack fields the typed leak fills in).
fn leak(leaks: &[Leak], withheld: bool, as_logged: Option<&Value>) -> Value {
    let kinds: Vec<String> = leaks
        .iter()
        .filter_map(|l| Some(serde_json::to_value(l.kind).ok()?.as_str()?.to_string()))
        .collect();
    json!({
        "check": "leak",
        "agent": "gm",
        "result": if withheld { "withheld" } else { "sent_back" },
        "violations": leaks.len(),
        "violation_kinds": kinds.join(","),
        "detail": as_logged.map(Value::to_string),
    })
}

fn rejected(problems: &[String], reply: Option<&str>) -> Value {
    // A reply is kept only when the gateway refused its shape before the engine saw it.
    let by = if reply.is_some() { "schema" } else { "engine" };
    json!({
        "check": by,
        "agent": "gm",
        "result": "refused",
        "violations": problems.len(),
        "detail": problems.join("; "),
        "text": reply,
    })
}

/// An encounter call logged before troupe kept its attempts: one row with the call's totals
/// (`attempt` null: how many attempts it took is not in the log). A scene's call without
/// attempts has no totals either: a row of nulls, not answered.
fn whole_call(call: Option<&ModelCall>) -> Value {
    json!({
        "attempt": null,
        "repair": false,
        "provider": call.map(|c| &c.model),
        "input_tokens": call.map(|c| c.tokens_in),
        "output_tokens": call.map(|c| c.tokens_out),
        "latency_ms": call.map(|c| c.latency_ms),
        "ok": call.is_some(),
    })
}

/// The `game_runs` row's own columns.
fn summary(g: &GameRun, read: &Read, calls: &[Option<Call<'_>>]) -> Value {
    let calls: Vec<&Call<'_>> = calls.iter().flatten().collect();
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
    let own = match read {
        Read::Encounter(read) => encounter_summary(read),
        Read::Scene(read) => scene_summary(read),
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
/// does not read, since the card would count without it (`of_game_run` refuses such a run
/// before it gets here).
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

    fn tables(game: Game, events: Vec<Value>) -> Vec<Table> {
        of_game_run(None, &run(game, events)).unwrap()
    }

    /// The recorded run's first row of `kind` (every field the kind has), with `fields` laid
    /// over it, and over its `call` those of `fields["call"]`.
    fn recorded(kind: &str, fields: Value) -> Value {
        let mut row = crate::recorded_encounter()
            .into_iter()
            .find(|r| r["event_type"] == kind)
            .unwrap();
        for (k, v) in fields.as_object().unwrap() {
            match v.as_object() {
                Some(call) if k == "call" => {
                    for (ck, cv) in call {
                        row["call"][ck] = cv.clone();
                    }
                }
                _ => row[k] = v.clone(),
            }
        }
        row
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
                recorded(
                    "player_called",
                    json!({"seq": 0, "call": {"agent": "ai1", "purpose": "encounter_action",
                    "model": "p:player", "reply": "I run", "tokens_in": 40, "tokens_out": 4,
                    "latency_ms": 3}}),
                ),
                recorded(
                    "gm_called",
                    json!({"seq": 1, "call": {"agent": "gm", "purpose": "encounter_gm",
                    "model": "p:gm", "attempts": [attempt(1, None), attempt(2, Some("{}"))]}}),
                ),
                recorded(
                    "player_acted",
                    json!({"seq": 2, "seat": "ai1", "text": "I run"}),
                ),
            ],
        );
        let tables = of_game_run(Some("batch-run"), &g).unwrap();
        let calls = rows(&tables, "model_calls");
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0]["attempt"], Value::Null);
        assert_eq!(
            (&calls[0]["input_tokens"], &calls[0]["layer"]),
            (&json!(40), &json!("player"))
        );
        assert_eq!(
            (&calls[0]["provider"], &calls[0]["ok"]),
            (&json!("p:player"), &json!(true))
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

    /// A kind a newer troupe wrote, shaped like a call and a check (a `call` with attempts,
    /// `leaks`, `problems`), put in the middle of the recorded run beside a leak caught.
    fn with_newer_kind() -> Vec<Value> {
        let mut events = crate::recorded_encounter();
        events.insert(
            5,
            json!({"seq": 99, "event_type": "npc_called", "sky": "red",
                "call": {"agent": "gm", "purpose": "npc", "model": "newer",
                    "attempts": [{"attempt": 1, "provider": "newer", "reply": "x"}]},
                "leaks": [{"kind": "dc", "detail": "DC 14"}], "withheld": true,
                "problems": ["newer"]}),
        );
        events.push(
            json!({"seq": 11, "event_type": "leak_caught", "withheld": false,
            "leaks": [{"kind": "goal", "detail": "the goal"}]}),
        );
        events
    }

    /// A real run with an event a newer troupe wrote in its middle: the event is a row of
    /// `events` as any other, and no call, verdict or figure of the run's: those are the run's
    /// without it.
    #[test]
    fn an_encounters_unknown_kind_is_a_row_and_changes_none_of_its_figures() {
        let mut plain = crate::recorded_encounter();
        plain.push(with_newer_kind().pop().unwrap());
        let plain = tables(Game::Encounter, plain);
        let newer = tables(Game::Encounter, with_newer_kind());
        let rows_of = |t: &[Table]| rows(t, "events").len();
        assert_eq!(rows_of(&newer), rows_of(&plain) + 1);
        assert_eq!(rows(&newer, "events")[5]["event_type"], "npc_called");
        for table in ["model_calls", "verdicts"] {
            assert_eq!(rows(&newer, table), rows(&plain, table), "{table}");
        }
        assert_eq!(rows(&plain, "verdicts").len(), 1);
        assert_eq!(rows(&plain, "model_calls").len(), 5);
        let (card, newer_card) = (&rows(&plain, "game_runs")[0], &rows(&newer, "game_runs")[0]);
        assert!(card["rounds"].is_u64(), "{card:?}");
        for column in [
            "model",
            "rounds",
            "turns",
            "tools_applied",
            "model_calls",
            "attempts",
        ] {
            assert_eq!(newer_card[column], card[column], "{column}");
        }
    }

    /// A known kind with a field that does not read (a call's, a check's, an action's) stops
    /// the run's tables with where it is, its kind and why, rather than tables without it.
    #[test]
    fn an_encounters_known_kind_that_does_not_read_is_named_as_unreadable() {
        for (at, field, bad, kind) in [
            (3, "call", json!({"agent": "ai1"}), "player_called"),
            (4, "text", json!(42), "player_acted"),
            (12, "withheld", json!("yes"), "leak_caught"),
        ] {
            let mut events = with_newer_kind();
            events[at][field] = bad;
            let seq = &events[at]["seq"];
            let err = of_game_run(Some("party-seed3"), &run(Game::Encounter, events.clone()));
            match err {
                Err(Error::Unreadable {
                    at,
                    event_type,
                    why,
                }) => {
                    assert_eq!(at, format!("party-seed3, encounter run 3, event {seq}"));
                    assert_eq!(event_type, kind);
                    assert!(!why.is_empty());
                }
                other => panic!("{kind}: {:?}", other.map(|_| ())),
            }
        }
    }

    #[test]
    fn an_encounters_checks_are_verdicts() {
        let leaks = json!([{"kind": "dc", "detail": "DC 14"}, {"kind": "goal", "detail": "x"}]);
        let g = vec![
            json!({"seq": 4, "event_type": "gm_rejected", "problems": ["no such tool"],
                "reply": "{}"}),
            json!({"seq": 5, "event_type": "gm_rejected", "problems": ["a", "b"]}),
            json!({"seq": 6, "event_type": "leak_caught", "withheld": true, "leaks": leaks}),
            json!({"seq": 7, "event_type": "action_sent_back", "seat": "ai2",
                "text": "I win", "feedback": "say what you try"}),
        ];
        let tables = tables(Game::Encounter, g);
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
        assert_eq!((&v[0]["text"], &v[1]["text"]), (&json!("{}"), &Value::Null));
        assert_eq!(v[1]["violations"], 2);
        assert_eq!(v[2]["violation_kinds"], "dc,goal");
        // The leaks as logged (without the `sentences` a later troupe logs), not as re-written.
        assert_eq!(v[2]["detail"], leaks.to_string());
        assert_eq!((&v[3]["agent"], &v[3]["seq"]), (&json!("ai2"), &json!(7)));
        assert!(
            v.iter()
                .all(|r| r["game"] == "encounter" && r["flagged"] == true)
        );
    }

    /// A scene's events, each with every field its kind has.
    fn scene() -> Vec<Value> {
        let looked = json!({"tool": "get_info", "args": {"actor": "wren"}});
        vec![
            json!({"seq": 1, "event_type": "model_called", "agent": "wren",
                "purpose": "scene_plan", "attempts": [{"attempt": 1, "provider": "p:plan"}]}),
            json!({"seq": 2, "event_type": "tool_applied", "turn": 0, "actor": "wren",
                "caller": "player", "input": "look", "call": looked, "seed": 7,
                "effects": [], "facts": [], "narration": "Wren looks."}),
            json!({"seq": 3, "event_type": "rejected", "turn": 1, "actor": "wren",
                "caller": "player", "input": "look", "call": looked, "reason": "not now"}),
            json!({"seq": 4, "event_type": "model_called", "agent": "wren",
                "purpose": "scene_player", "attempts": []}),
        ]
    }

    #[test]
    fn a_scenes_planner_is_its_own_layer_and_its_turns_count_from_zero() {
        let tables = tables(Game::Scene, scene());
        let calls = rows(&tables, "model_calls");
        assert_eq!(
            (&calls[0]["layer"], &calls[0]["model"]),
            (&json!("scene"), &json!("p:plan"))
        );
        // A call without attempts: a row of nulls, not answered (a scene's call has no totals).
        assert_eq!(
            (&calls[1]["layer"], &calls[1]["ok"], &calls[1]["provider"]),
            (&json!("player"), &json!(false), &Value::Null)
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
        assert_eq!(rows(&tables, "events")[1]["turn"], 0);
        assert!(rows(&tables, "verdicts").is_empty());
    }

    /// A scene's kind a newer troupe wrote, shaped like a call, is no call; a known kind that
    /// does not read is named as unreadable.
    #[test]
    fn a_scenes_unknown_kind_is_no_call_and_a_damaged_call_is_unreadable() {
        let mut events = scene();
        events.insert(
            2,
            json!({"seq": 9, "event_type": "model_streamed", "agent": "wren",
                "purpose": "scene_plan", "attempts": [{"attempt": 1, "provider": "newer"}]}),
        );
        let newer = tables(Game::Scene, events.clone());
        let plain = tables(Game::Scene, scene());
        assert_eq!(rows(&newer, "model_calls"), rows(&plain, "model_calls"));
        assert_eq!(rows(&newer, "events").len(), 5);
        events[4]["attempts"] = json!("none");
        match of_game_run(None, &run(Game::Scene, events)) {
            Err(Error::Unreadable { at, event_type, .. }) => {
                assert_eq!(
                    (at.as_str(), event_type.as_str()),
                    ("scene run 3, event 4", "model_called")
                );
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}
