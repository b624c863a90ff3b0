//! The five tables, built from the events troupe-report reads: every event, the model calls,
//! the turns, the checks' verdicts and a scorecard per session. Every row starts with the same
//! keys (run, session, run_session, campaign, model), so the tables join on them and on `turn`.
//! The numbers come from the report crate where it has them (the turns' tokens and latency, the
//! scorecard), so the export says what `troupe stats` says.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use troupe_report::{TurnStats, metrics, scorecard};

use crate::table::{Column, Kind, Table, col};

/// What identifies a session in every table.
pub const KEYS: &[Column] = &[
    col(
        "run",
        Kind::Text,
        "the batch's run directory (e.g. `party-seed3-replay-research`); null outside a batch",
    ),
    col(
        "session",
        Kind::Int,
        "the session's number as `troupe stats` numbers it (in a batch: 1, 2, … across the runs)",
    ),
    col(
        "run_session",
        Kind::Int,
        "the session's number in its own campaign directory",
    ),
    col(
        "campaign",
        Kind::Text,
        "the campaign's name, from `session_started`",
    ),
    col(
        "model",
        Kind::Text,
        "the session's model (`provider:model`), from `session_started`; an encounter run's: its GM's, a scene's: its first model call's",
    ),
    col(
        "game",
        Kind::Text,
        "`lasers_and_feelings` (a session), `encounter` (an encounter run, seed 003) or `scene` (a scene, seed 004)",
    ),
    col(
        "game_run",
        Kind::Int,
        "the encounter run's or scene's number in its campaign (`troupe encounter log --run N`); null for a session",
    ),
];

/// The `game` of a Lasers & Feelings session's rows.
pub const LASERS_AND_FEELINGS: &str = "lasers_and_feelings";

/// The keys of each session, from its events.
#[derive(Clone, Debug, Default)]
struct SessionKeys {
    run: Option<String>,
    run_session: u64,
    campaign: Option<String>,
    model: Option<String>,
}

type Keys = BTreeMap<u64, SessionKeys>;

fn keys_of(events: &[Value]) -> Keys {
    let mut keys = Keys::new();
    for e in events {
        let session = num(e, "session_number");
        let k = keys.entry(session).or_insert_with(|| SessionKeys {
            run: text(e, "run").map(String::from),
            run_session: e
                .get("run_session")
                .and_then(Value::as_u64)
                .unwrap_or(session),
            ..SessionKeys::default()
        });
        if text(e, "event_type") == Some("session_started") {
            let campaign = e.get("campaign").unwrap_or(&Value::Null);
            k.campaign = text(campaign, "name").map(String::from);
            k.model = text(e, "model").map(String::from);
        }
    }
    keys
}

/// A row of `table` for an event of `session`: the keys, then `fields`.
fn row(keys: &Keys, session: u64, fields: Value) -> Value {
    let k = keys.get(&session).cloned().unwrap_or_default();
    with_fields(
        json!({
            "run": k.run,
            "session": session,
            "run_session": k.run_session,
            "campaign": k.campaign,
            "model": k.model,
            "game": LASERS_AND_FEELINGS,
            "game_run": null,
        }),
        fields,
    )
}

/// `keys` with `fields` after them.
pub fn with_fields(mut keys: Value, fields: Value) -> Value {
    if let (Some(row), Value::Object(fields)) = (keys.as_object_mut(), fields) {
        row.extend(fields);
    }
    keys
}

pub fn table(name: &'static str, own: &[Column]) -> Table {
    Table::new(name, KEYS.iter().chain(own).copied().collect())
}

pub fn num(e: &Value, field: &str) -> u64 {
    e.get(field).and_then(Value::as_u64).unwrap_or(0)
}

pub fn text<'a>(e: &'a Value, field: &str) -> Option<&'a str> {
    e.get(field).and_then(Value::as_str)
}

/// Every table without rows, in the order they are written.
pub fn empty() -> Vec<Table> {
    vec![
        table("events", EVENT_COLUMNS),
        table("model_calls", MODEL_CALL_COLUMNS),
        table("turns", TURN_COLUMNS),
        table("verdicts", VERDICT_COLUMNS),
        table("scorecards", SCORECARD_COLUMNS),
        table("game_runs", GAME_RUN_COLUMNS),
    ]
}

/// Every table with the rows of these Lasers & Feelings events (one session's, or several
/// whole sessions'), in the order they are written.
pub fn of_sessions(events: &[Value]) -> Vec<Table> {
    let keys = keys_of(events);
    vec![
        events_table(events, &keys),
        model_calls(events, &keys),
        turns(events, &keys),
        verdicts(events, &keys),
        scorecards(events, &keys),
        table("game_runs", GAME_RUN_COLUMNS),
    ]
}

pub const EVENT_COLUMNS: &[Column] = &[
    col(
        "seq",
        Kind::Int,
        "the event's position in its session's log, from 0",
    ),
    col(
        "turn",
        Kind::Int,
        "the turn it belongs to; 0 before the first turn (an encounter's round of player actions, a scene's turn from 0)",
    ),
    col(
        "phase",
        Kind::Text,
        "the turn phase open when it happened; null between turns",
    ),
    col("event_type", Kind::Text, "which event (docs/log-schema.md)"),
    col(
        "timestamp",
        Kind::Timestamp,
        "when it was appended (an encounter's or scene's: only where its log says, see above)",
    ),
    col(
        "agent",
        Kind::Text,
        "the agent it concerns, when it has one",
    ),
    col("session_id", Kind::Text, "the session's unique id"),
    col(
        "payload",
        Kind::Text,
        "the whole event as the log keeps it, as JSON (in a batch, `session_number` is the run's own)",
    ),
];

fn events_table(events: &[Value], keys: &Keys) -> Table {
    let mut t = table("events", EVENT_COLUMNS);
    for e in events {
        let session = num(e, "session_number");
        t.push(row(
            keys,
            session,
            json!({
                "seq": e.get("seq"),
                "turn": e.get("turn_number"),
                "phase": e.get("phase"),
                "event_type": e.get("event_type"),
                "timestamp": e.get("timestamp"),
                "agent": e.get("agent"),
                "session_id": e.get("session_id"),
                "payload": as_logged(e).to_string(),
            }),
        ));
    }
    t
}

/// The event as its own campaign's log has it: without the marks `load_batch` adds, with its
/// own session number back.
fn as_logged(e: &Value) -> Value {
    let mut e = e.clone();
    if let Some(o) = e.as_object_mut()
        && let Some(own) = o.remove("run_session")
    {
        o.remove("run");
        o.insert("session_number".into(), own);
    }
    e
}

pub const MODEL_CALL_COLUMNS: &[Column] = &[
    col("turn", Kind::Int, "the turn of the call"),
    col(
        "seq",
        Kind::Int,
        "the `model_call` event's `seq`: joins `events`",
    ),
    col("phase", Kind::Text, "the phase the call was made in"),
    col(
        "timestamp",
        Kind::Timestamp,
        "when the attempt was logged (null for an encounter's or scene's from before troupe kept it)",
    ),
    col(
        "agent",
        Kind::Text,
        "who the call was for (`memory`, `gm` outside the seats)",
    ),
    col(
        "layer",
        Kind::Text,
        "`player`, `character`, `memory` or `gm`; in a scene, `scene` for its planner and narration polish",
    ),
    col(
        "purpose",
        Kind::Text,
        "what the call was for (`character_action`, …; `encounter_gm`, `encounter_action`; `scene_player`, `scene_plan`, `scene_polish`)",
    ),
    col(
        "attempt",
        Kind::Int,
        "1-based; a row is one attempt, a call retried twice is three rows",
    ),
    col(
        "repair",
        Kind::Bool,
        "this attempt is the JSON repair re-ask",
    ),
    col(
        "provider",
        Kind::Text,
        "the provider that answered (`openai:…`, `local:…`, `replay:FILE`)",
    ),
    col(
        "request_hash",
        Kind::Text,
        "sha256 of the messages and schema",
    ),
    col(
        "input_tokens",
        Kind::Int,
        "the whole prompt, cached part included",
    ),
    col(
        "cached_input_tokens",
        Kind::Int,
        "read from the provider's prompt cache",
    ),
    col(
        "cache_write_tokens",
        Kind::Int,
        "written to the provider's prompt cache",
    ),
    col("output_tokens", Kind::Int, "the reply"),
    col("latency_ms", Kind::Int, "how long the attempt took"),
    col("ok", Kind::Bool, "the attempt got a reply"),
    col(
        "error",
        Kind::Text,
        "why the attempt did not give the final answer, or null",
    ),
    col(
        "retry_in_ms",
        Kind::Int,
        "the wait before the next attempt, or null",
    ),
    col(
        "seed",
        Kind::Int,
        "the sampling seed the request carried (the same for a call's every attempt; null in logs written before every request carried one)",
    ),
];

fn model_calls(events: &[Value], keys: &Keys) -> Table {
    let mut t = table("model_calls", MODEL_CALL_COLUMNS);
    for e in events
        .iter()
        .filter(|e| text(e, "event_type") == Some("model_call"))
    {
        let call = json!({
            "turn": e.get("turn_number"),
            "seq": e.get("seq"),
            "phase": e.get("phase"),
            "timestamp": e.get("timestamp"),
            "agent": e.get("agent"),
            "layer": e.get("layer"),
            "purpose": e.get("purpose"),
        });
        t.push(row(
            keys,
            num(e, "session_number"),
            with_fields(call, attempt(e)),
        ));
    }
    t
}

/// The columns of one attempt, from the model gateway's record of it: the same fields in a
/// session's `model_call` event and in an encounter's or scene's `attempts`.
pub fn attempt(a: &Value) -> Value {
    let tokens = troupe_report::token_counts(a);
    json!({
        "attempt": a.get("attempt"),
        "repair": a.get("repair").and_then(Value::as_bool).unwrap_or(false),
        "provider": a.get("provider"),
        "request_hash": a.get("request_hash"),
        "input_tokens": tokens.input,
        "cached_input_tokens": tokens.cached_input,
        "cache_write_tokens": tokens.cache_write,
        "output_tokens": tokens.output,
        "latency_ms": a.get("latency_ms"),
        // What `troupe stats` counts as answered: a reply in the log.
        "ok": a.get("reply").is_some_and(Value::is_string),
        "error": a.get("error"),
        "retry_in_ms": a.get("retry_in_ms"),
        "seed": a.get("seed"),
    })
}

pub const TURN_COLUMNS: &[Column] = &[
    col("turn", Kind::Int, "the turn, from 1"),
    col(
        "completed",
        Kind::Bool,
        "the turn has its `turn_completed` (false: the session stopped mid-turn)",
    ),
    col("model_calls", Kind::Int, "model attempts in the turn"),
    col("input_tokens", Kind::Int, "summed over the turn's attempts"),
    col(
        "output_tokens",
        Kind::Int,
        "summed over the turn's attempts",
    ),
    col("latency_ms", Kind::Int, "summed over the turn's attempts"),
    col("validations", Kind::Int, "overreach verdicts in the turn"),
    col(
        "validation_failures",
        Kind::Int,
        "verdicts other than `passed`",
    ),
];

/// One row per turn started; the counts are `troupe stats`'s per-turn numbers.
fn turns(events: &[Value], keys: &Keys) -> Table {
    let stats: BTreeMap<(u32, u32), TurnStats> = metrics(events)
        .per_turn
        .into_iter()
        .map(|t| ((t.session, t.turn), t))
        .collect();
    let mut started: BTreeMap<(u64, u64), bool> = BTreeMap::new();
    for e in events {
        let at = (num(e, "session_number"), num(e, "turn_number"));
        match text(e, "event_type") {
            Some("turn_started") => {
                started.entry(at).or_insert(false);
            }
            Some("turn_completed") => {
                started.insert(at, true);
            }
            _ => {}
        }
    }
    let mut t = table("turns", TURN_COLUMNS);
    for ((session, turn), completed) in started {
        let key = (
            u32::try_from(session).unwrap_or(u32::MAX),
            u32::try_from(turn).unwrap_or(u32::MAX),
        );
        let s = stats.get(&key).cloned().unwrap_or_default();
        t.push(row(
            keys,
            session,
            json!({
                "turn": turn,
                "completed": completed,
                "model_calls": s.calls,
                "input_tokens": s.tokens.input,
                "output_tokens": s.tokens.output,
                "latency_ms": s.latency_ms,
                "validations": s.validations,
                "validation_failures": s.validation_failures,
            }),
        ));
    }
    t
}

pub const VERDICT_COLUMNS: &[Column] = &[
    col("turn", Kind::Int, "the turn of the verdict"),
    col("seq", Kind::Int, "the event's `seq`: joins `events`"),
    col(
        "source",
        Kind::Text,
        "`validation` (the overreach check of an AI character's action) or `gm_flagged` (a check of the AI GM's words); in an encounter, `action_sent_back` (an AI player's action that said what happens), `leak_caught` (a GM narration that told a secret), `gm_rejected` (a GM reply refused)",
    ),
    col(
        "check",
        Kind::Text,
        "`overreach` for a validation or an action sent back; the GM check that fired (`outcome_contradicts_dice`, …); `leak`; `schema` or `engine` (what refused a GM reply)",
    ),
    col("agent", Kind::Text, "whose character (validation)"),
    col("attempt", Kind::Int, "the attempt checked (validation)"),
    col(
        "result",
        Kind::Text,
        "validation: `passed`, `retry`, `auto_corrected`, `flagged_for_gm`; gm_flagged: `sent_back` (asked to rewrite), `kept` (the rewrite was flagged too and reached the table), or null; action_sent_back: `sent_back`; leak_caught: `sent_back` or `withheld` (shown without the leaking sentences); gm_rejected: `refused`",
    ),
    col(
        "flagged",
        Kind::Bool,
        "the text narrated a result (validation) / the GM check fired (always true)",
    ),
    col(
        "method",
        Kind::Text,
        "what decided a validation: `pattern` or `hybrid`",
    ),
    col(
        "confidence",
        Kind::Float,
        "the verdict's confidence, 0–1 (validation)",
    ),
    col(
        "violations",
        Kind::Int,
        "how many violations the verdict lists",
    ),
    col(
        "violation_kinds",
        Kind::Text,
        "their kinds, comma-separated (`outcome_verb,success_claim`)",
    ),
    col(
        "detail",
        Kind::Text,
        "verdict JSON (validation) or what is wrong (gm_flagged)",
    ),
    col(
        "text",
        Kind::Text,
        "the corrected text (validation) or the flagged text (gm_flagged)",
    ),
];

fn verdicts(events: &[Value], keys: &Keys) -> Table {
    let mut t = table("verdicts", VERDICT_COLUMNS);
    for e in events {
        let fields = match text(e, "event_type") {
            Some("validation") => validation(e),
            Some(ty) if ty.starts_with("gm_flag") => gm_flag(e, ty),
            _ => continue,
        };
        t.push(row(keys, num(e, "session_number"), fields));
    }
    t
}

fn validation(e: &Value) -> Value {
    let verdict = e.get("verdict").unwrap_or(&Value::Null);
    let violations: Vec<&Value> = verdict
        .get("violations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let kinds: Vec<&str> = violations.iter().filter_map(|v| text(v, "kind")).collect();
    json!({
        "turn": e.get("turn_number"),
        "seq": e.get("seq"),
        "source": "validation",
        "check": "overreach",
        "agent": e.get("agent"),
        "attempt": e.get("attempt"),
        "result": e.get("result"),
        "flagged": verdict.get("flagged"),
        // Older logs have no method: they were decided by the rules alone.
        "method": text(verdict, "method").unwrap_or("pattern"),
        "confidence": verdict.get("confidence"),
        "violations": violations.len(),
        "violation_kinds": kinds.join(","),
        "detail": verdict.to_string(),
        "text": e.get("corrected"),
    })
}

fn gm_flag(e: &Value, ty: &str) -> Value {
    let is = |field: &str| e.get(field).and_then(Value::as_bool) == Some(true);
    let result = if is("kept") {
        Some("kept")
    } else if is("sent_back") {
        Some("sent_back")
    } else {
        None
    };
    json!({
        "turn": e.get("turn_number"),
        "seq": e.get("seq"),
        "source": ty,
        "check": e.get("check"),
        "agent": e.get("agent"),
        "result": result,
        "flagged": true,
        "violations": 1,
        "violation_kinds": e.get("check"),
        "detail": e.get("detail"),
        "text": e.get("text"),
    })
}

pub const SCORECARD_COLUMNS: &[Column] = &[
    col("turns", Kind::Int, "turns completed"),
    col(
        "actions",
        Kind::Int,
        "declared actions the overreach check saw (first attempts)",
    ),
    col("overreach", Kind::Int, "verdicts other than `passed`"),
    col(
        "overreach_per_100_actions",
        Kind::Float,
        "overreach × 100 ÷ actions; null without actions",
    ),
    col(
        "gm_flags",
        Kind::Int,
        "the AI GM's output checks that fired (`gm_flag…` events)",
    ),
    col(
        "review_flags",
        Kind::Int,
        "what `troupe report` flags for review",
    ),
    col("calls", Kind::Int, "model attempts"),
    col("failed_calls", Kind::Int, "attempts without a reply"),
    col(
        "phases_failed",
        Kind::Int,
        "steps that failed for good (`phase_failed`)",
    ),
    col("tokens", Kind::Int, "input plus output tokens"),
    col(
        "tokens_per_turn",
        Kind::Float,
        "tokens ÷ turns; null without turns",
    ),
    col("latency_ms", Kind::Int, "summed latency of every attempt"),
    col(
        "latency_ms_per_turn",
        Kind::Float,
        "latency ÷ turns; null without turns",
    ),
    col(
        "cost",
        Kind::Text,
        "what the session spent, as a person reads it (`$0.42`, `$0 (local …)`)",
    ),
    col("cost_usd", Kind::Float, "the same in dollars"),
    col(
        "cost_usd_per_turn",
        Kind::Float,
        "cost ÷ turns; null without turns",
    ),
    col(
        "cached_input_share",
        Kind::Float,
        "share of input tokens read from the prompt cache",
    ),
];

/// One row per session: the scorecard `troupe stats` gives per model, of that session alone
/// (per model is a group-by away; the ratios are then recomputed from the sums).
fn scorecards(events: &[Value], keys: &Keys) -> Table {
    let mut t = table("scorecards", SCORECARD_COLUMNS);
    for session in events.chunk_by(|a, b| num(a, "session_number") == num(b, "session_number")) {
        let number = session.first().map_or(0, |e| num(e, "session_number"));
        for score in scorecard(session) {
            let fields = serde_json::to_value(score).unwrap_or(Value::Null);
            t.push(row(keys, number, without(fields, "model")));
        }
    }
    t
}

/// The scorecard's own `model` is the key's, spelt `unknown` when the log has none: the key
/// column (null then) stands for both.
fn without(mut fields: Value, field: &str) -> Value {
    if let Some(o) = fields.as_object_mut() {
        o.remove(field);
    }
    fields
}

/// One row per encounter run or scene (`game_runs.parquet`).
pub const GAME_RUN_COLUMNS: &[Column] = &[
    col(
        "id",
        Kind::Text,
        "the encounter spec's or the scene's id (`the-cold-forge`, `mill-night`)",
    ),
    col("started_at", Kind::Timestamp, "when the run began"),
    col(
        "ended",
        Kind::Bool,
        "the run was played to its end (false: stopped, to be resumed)",
    ),
    col(
        "events",
        Kind::Int,
        "its standing events (rows in `events`)",
    ),
    col(
        "undone",
        Kind::Int,
        "events an undo took back (not exported)",
    ),
    col(
        "model_calls",
        Kind::Int,
        "model calls (each may take several attempts)",
    ),
    col(
        "attempts",
        Kind::Int,
        "model attempts (rows in `model_calls`)",
    ),
    col("answered", Kind::Int, "attempts that got a reply"),
    col("input_tokens", Kind::Int, "summed over the attempts"),
    col("output_tokens", Kind::Int, "summed over the attempts"),
    col("latency_ms", Kind::Int, "summed over the attempts"),
    col(
        "turns",
        Kind::Int,
        "a scene's turns (the highest `turn` of its tool calls, plus one); an encounter's rounds of player actions",
    ),
    col(
        "tools_applied",
        Kind::Int,
        "scene: tool calls the engine applied; encounter: scene-engine tools the GM called that were applied",
    ),
    col(
        "tools_rejected",
        Kind::Int,
        "scene: tool calls refused; encounter: scene-engine tools refused",
    ),
    // The encounter GM's scorecard, as `troupe stats` and `troupe encounter stats` give it
    // (troupe-encounter's own computation); null for a scene, and for an encounter run whose
    // log this build cannot read as its events (a newer troupe's).
    col("resolved", Kind::Bool, "encounter: its goal was resolved"),
    col(
        "gm_turns",
        Kind::Int,
        "encounter: GM replies shown to the players",
    ),
    col(
        "gm_calls",
        Kind::Int,
        "encounter: GM model calls the engine received",
    ),
    col(
        "refused_by_schema",
        Kind::Int,
        "encounter: GM replies refused for their shape",
    ),
    col(
        "refused_by_engine",
        Kind::Int,
        "encounter: GM replies that failed the engine's checks",
    ),
    col(
        "leaks_caught",
        Kind::Int,
        "encounter: narrations that told a secret or decided for a character",
    ),
    col(
        "rewrites",
        Kind::Int,
        "encounter: leaking narrations rewritten cleanly",
    ),
    col(
        "withheld",
        Kind::Int,
        "encounter: rewrites shown with the leaking sentences withheld",
    ),
    col("checks", Kind::Int, "encounter: checks rolled"),
    col("successes", Kind::Int, "encounter: checks that succeeded"),
    col(
        "actions_sent_back",
        Kind::Int,
        "encounter: AI players' actions sent back for saying what happens",
    ),
    col(
        "tokens_in_per_gm_turn",
        Kind::Float,
        "encounter: the GM calls' input tokens ÷ GM turns",
    ),
    col(
        "tokens_out_per_gm_turn",
        Kind::Float,
        "encounter: the GM calls' output tokens ÷ GM turns",
    ),
    col(
        "median_gm_latency_ms",
        Kind::Int,
        "encounter: the median GM call's latency",
    ),
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn batch_events() -> Vec<Value> {
        let ev = |seq: u64, turn: u64, ty: &str, extra: Value| {
            let mut e = json!({"event_type": ty, "seq": seq, "turn_number": turn,
                "session_number": 2, "run": "party-seed3", "run_session": 1});
            if let (Some(o), Value::Object(x)) = (e.as_object_mut(), extra) {
                o.extend(x);
            }
            e
        };
        vec![
            ev(
                0,
                0,
                "session_started",
                json!({"model": "m:x", "campaign": {"name": "Raptor"}}),
            ),
            ev(1, 1, "turn_started", json!({})),
            ev(
                2,
                1,
                "gm_flagged",
                json!({"check": "decides_for_character", "kept": true,
                "text": "You flee."}),
            ),
            ev(3, 1, "turn_completed", json!({})),
            ev(4, 2, "turn_started", json!({})),
        ]
    }

    fn find<'a>(tables: &'a [Table], name: &str) -> &'a Table {
        tables.iter().find(|t| t.name == name).unwrap()
    }

    #[test]
    fn every_row_carries_the_keys_and_an_event_keeps_its_own_session_number() {
        let tables = of_sessions(&batch_events());
        let events = find(&tables, "events");
        let first = &events.rows[0];
        assert_eq!(first["run"], "party-seed3");
        assert_eq!(
            (first["session"].as_u64(), first["run_session"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(
            (first["campaign"].as_str(), first["model"].as_str()),
            (Some("Raptor"), Some("m:x"))
        );
        let payload: Value = serde_json::from_str(first["payload"].as_str().unwrap()).unwrap();
        assert_eq!(payload["session_number"], 1);
        assert!(payload.get("run").is_none() && payload.get("run_session").is_none());

        let turns = find(&tables, "turns");
        let completed: Vec<(u64, bool)> = turns
            .rows
            .iter()
            .map(|r| {
                (
                    r["turn"].as_u64().unwrap(),
                    r["completed"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(completed, [(1, true), (2, false)]);

        let verdict = &find(&tables, "verdicts").rows[0];
        assert_eq!(
            (verdict["source"].as_str(), verdict["result"].as_str()),
            (Some("gm_flagged"), Some("kept"))
        );
        assert_eq!(verdict["check"], "decides_for_character");
        assert_eq!(find(&tables, "scorecards").rows[0]["gm_flags"], 1);
    }

    #[test]
    fn every_table_has_its_columns_without_events() {
        let names: Vec<&str> = empty().iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "events",
                "model_calls",
                "turns",
                "verdicts",
                "scorecards",
                "game_runs"
            ]
        );
        let built: Vec<&str> = of_sessions(&[]).iter().map(|t| t.name).collect();
        assert_eq!(built, names);
        assert!(
            of_sessions(&[])
                .iter()
                .all(|t| t.rows.is_empty() && t.columns.len() > KEYS.len())
        );
    }
}
