//! The five tables, built from the events troupe-report reads: every event, the model calls,
//! the turns, the checks' verdicts and a scorecard per session. Every row starts with the same
//! keys (run, session, run_session, campaign, model), so the tables join on them and on `turn`.
//! The numbers come from the report crate where it has them (the turns' tokens and latency, the
//! scorecard), so the export says what `troupe stats` says.
//!
//! A session's rows are read once, as the game's own events ([`troupe_lasers::Envelope`]
//! through [`Known`]): `events` lists every row as logged, a kind a newer troupe wrote included;
//! the other tables are built from the events this build knows, a newer kind left out of them;
//! a row of a known kind that does not read stops the export with its kind and why, rather
//! than tables that count without it unseen.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use troupe_lasers::{Envelope, Event};
use troupe_llm::AttemptRecord;
use troupe_report::{Known, ReadLog, TurnStats};
use troupe_validator::Verdict;

use crate::Error;
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

/// The keys: where each session came from (the marks a batch's rows carry, on every row) and
/// its campaign and model (its `session_started`).
fn keys_of(logged: &[Logged<'_>]) -> Keys {
    let mut keys = Keys::new();
    for l in logged {
        let k = keys.entry(l.session).or_insert_with(|| SessionKeys {
            run: text(l.row, "run").map(String::from),
            run_session: l
                .row
                .get("run_session")
                .and_then(Value::as_u64)
                .unwrap_or(l.session),
            ..SessionKeys::default()
        });
        if let Some(Event::SessionStarted {
            campaign, model, ..
        }) = l.event.map(|e| &e.event)
        {
            k.campaign = Some(campaign.name.clone());
            k.model = Some(model.clone());
        }
    }
    keys
}

/// One row of a session's log, read once: as logged, and as the game's own event when this
/// build knows its kind (None: a kind a newer troupe wrote).
struct Logged<'a> {
    row: &'a Value,
    /// The session's number as the export numbers it (in a batch, across the batch).
    session: u64,
    event: Option<&'a Envelope>,
}

/// Every row of these sessions with its reading as a Lasers & Feelings event (`read`, one per
/// row); `Err` names the first row of a known kind that does not read.
fn read<'a>(rows: &'a [Value], read: &'a [Known<Envelope>]) -> Result<Vec<Logged<'a>>, Error> {
    rows.iter()
        .zip(read)
        .map(|(row, known)| {
            let event = match known {
                Known::Event(env) => Some(env),
                Known::Unknown { .. } => None,
                Known::Malformed {
                    event_type, error, ..
                } => return Err(unreadable(row, event_type, error.clone())),
            };
            Ok(Logged {
                row,
                session: num(row, "session_number"),
                event,
            })
        })
        .collect()
}

/// The error for a row of a known kind that does not read: where it is (a batch's run and
/// the session's own number in it), its kind and why.
fn unreadable(row: &Value, event_type: &str, why: String) -> Error {
    let session = row
        .get("run_session")
        .or_else(|| row.get("session_number"))
        .map_or_else(|| "?".to_string(), Value::to_string);
    let seq = row
        .get("seq")
        .map_or_else(|| "?".to_string(), Value::to_string);
    let at = match text(row, "run") {
        Some(run) => format!("{run}, session {session}, event {seq}"),
        None => format!("session {session}, event {seq}"),
    };
    Error::Unreadable {
        at,
        event_type: if event_type.is_empty() {
            "(no event_type)".into()
        } else {
            event_type.into()
        },
        why,
    }
}

/// The events this build knows, each with its row.
fn known<'b>(logged: &'b [Logged<'_>]) -> impl Iterator<Item = (&'b Logged<'b>, &'b Envelope)> {
    logged.iter().filter_map(|l| Some((l, l.event?)))
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
/// whole sessions'), in the order they are written; `Err` when a row of a kind this build
/// knows does not read (its kind and why).
pub fn of_sessions(events: &[Value]) -> Result<Vec<Table>, Error> {
    // Every row read as its event once, for every table and figure.
    let log = ReadLog::new(events);
    let logged = read(events, log.rows())?;
    let keys = keys_of(&logged);
    Ok(vec![
        events_table(&logged, &keys),
        model_calls(&logged, &keys),
        turns(&log, &logged, &keys),
        verdicts(&logged, &keys),
        scorecards(events, &log, &keys),
        table("game_runs", GAME_RUN_COLUMNS),
    ])
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

/// Every row as logged, of every kind (a newer troupe's included).
fn events_table(logged: &[Logged<'_>], keys: &Keys) -> Table {
    let mut t = table("events", EVENT_COLUMNS);
    for &Logged {
        row: e, session, ..
    } in logged
    {
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

fn model_calls(logged: &[Logged<'_>], keys: &Keys) -> Table {
    let mut t = table("model_calls", MODEL_CALL_COLUMNS);
    for (l, env) in known(logged) {
        let Event::ModelCall {
            agent,
            layer,
            purpose,
            record,
        } = &env.event
        else {
            continue;
        };
        let call = json!({
            "turn": env.turn_number,
            "seq": env.seq,
            "phase": env.phase,
            "timestamp": env.timestamp,
            "agent": agent,
            "layer": layer,
            "purpose": purpose,
        });
        t.push(row(
            keys,
            l.session,
            with_fields(call, logged_attempt(record)),
        ));
    }
    t
}

/// The columns of one attempt of a session's `model_call`, as [`attempt`] gives an encounter's
/// or a scene's from the same record.
fn logged_attempt(a: &AttemptRecord) -> Value {
    json!({
        "attempt": a.attempt,
        "repair": a.repair,
        "provider": a.provider,
        "request_hash": a.request_hash,
        "input_tokens": a.usage.input_tokens,
        "cached_input_tokens": a.usage.cached_input_tokens,
        "cache_write_tokens": a.usage.cache_write_tokens,
        "output_tokens": a.usage.output_tokens,
        "latency_ms": a.latency_ms,
        // What `troupe stats` counts as answered: a reply in the log.
        "ok": a.reply.is_some(),
        "error": a.error,
        "retry_in_ms": a.retry_in_ms,
        "seed": a.seed,
    })
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

/// One row per turn started; the counts are `troupe stats`'s per-turn numbers (troupe-report's
/// metrics, of the rows as logged).
fn turns(log: &ReadLog<'_>, logged: &[Logged<'_>], keys: &Keys) -> Table {
    let stats: BTreeMap<(u32, u32), TurnStats> = log
        .metrics()
        .per_turn
        .into_iter()
        .map(|t| ((t.session, t.turn), t))
        .collect();
    let mut started: BTreeMap<(u64, u64), bool> = BTreeMap::new();
    for (l, env) in known(logged) {
        let at = (l.session, u64::from(env.turn_number));
        match env.event {
            Event::TurnStarted => {
                started.entry(at).or_insert(false);
            }
            Event::TurnCompleted => {
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

/// The overreach check's verdicts and the AI GM's output checks that fired.
fn verdicts(logged: &[Logged<'_>], keys: &Keys) -> Table {
    let mut t = table("verdicts", VERDICT_COLUMNS);
    for (l, env) in known(logged) {
        let fields = match &env.event {
            Event::Validation {
                agent,
                attempt,
                verdict,
                result,
                corrected,
            } => with_fields(
                json!({"agent": agent, "attempt": attempt, "result": result, "text": corrected}),
                validation(verdict, l.row.get("verdict")),
            ),
            Event::GmFlagged {
                check,
                detail,
                text,
                sent_back,
                kept,
            } => json!({
                "source": "gm_flagged",
                "check": check,
                "result": if *kept { Some("kept") } else { sent_back.then_some("sent_back") },
                "flagged": true,
                "violations": 1,
                "violation_kinds": check,
                "detail": detail,
                "text": text,
            }),
            _ => continue,
        };
        let at = json!({"turn": env.turn_number, "seq": env.seq});
        t.push(row(keys, l.session, with_fields(at, fields)));
    }
    t
}

/// A validation's verdict columns. `as_logged` is the verdict as its log wrote it: the detail
/// column is that JSON, and its confidence is null where an older log has none (the typed
/// verdict reads it as 0, which it never was).
fn validation(verdict: &Verdict, as_logged: Option<&Value>) -> Value {
    let kinds: Vec<String> = verdict
        .violations
        .iter()
        .filter_map(|v| {
            serde_json::to_value(v.kind)
                .ok()?
                .as_str()
                .map(String::from)
        })
        .collect();
    let as_logged = as_logged.unwrap_or(&Value::Null);
    json!({
        "source": "validation",
        "check": "overreach",
        "flagged": verdict.flagged,
        // Older logs have no method: they were decided by the rules alone (the typed verdict's
        // default).
        "method": verdict.method,
        "confidence": as_logged.get("confidence"),
        "violations": verdict.violations.len(),
        "violation_kinds": kinds.join(","),
        "detail": as_logged.to_string(),
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
fn scorecards(events: &[Value], log: &ReadLog<'_>, keys: &Keys) -> Table {
    let mut t = table("scorecards", SCORECARD_COLUMNS);
    let mut start = 0;
    for session in events.chunk_by(|a, b| num(a, "session_number") == num(b, "session_number")) {
        let number = session.first().map_or(0, |e| num(e, "session_number"));
        let rows = start..start + session.len();
        start = rows.end;
        for score in log.scorecard_of(rows) {
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

    /// A Lasers & Feelings session as the table logged it (the fuzzer's demo seed: three turns,
    /// verdicts logged before they kept their method and confidence).
    fn recorded() -> Vec<Value> {
        include_str!("../../fuzz/data/demo.session-1.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// An event logged where row `at` of `log` was: its envelope, with `event`'s fields.
    fn logged_at(log: &[Value], at: usize, event: Value) -> Value {
        let mut e = json!({});
        for k in [
            "seq",
            "timestamp",
            "session_id",
            "session_number",
            "turn_number",
            "phase",
        ] {
            e[k] = log[at][k].clone();
        }
        with_fields(e, event)
    }

    /// Marked as a batch marks it: session 2 across the batch, its run's session 1.
    fn in_batch(mut log: Vec<Value>) -> Vec<Value> {
        for e in &mut log {
            e["session_number"] = json!(2);
            e["run"] = json!("party-seed3");
            e["run_session"] = json!(1);
        }
        log
    }

    fn find<'a>(tables: &'a [Table], name: &str) -> &'a Table {
        tables.iter().find(|t| t.name == name).unwrap()
    }

    /// The recorded session up to its second turn's start, with a GM check that fired in its
    /// first turn, in a batch.
    fn batch_events() -> Vec<Value> {
        let mut log = recorded();
        log.truncate(52);
        let flagged = json!({"event_type": "gm_flagged", "check": "decides_for_character",
            "detail": "decides what Alex feels", "text": "You flee.", "sent_back": true,
            "kept": true});
        log.insert(40, logged_at(&log, 40, flagged));
        in_batch(log)
    }

    #[test]
    fn every_row_carries_the_keys_and_an_event_keeps_its_own_session_number() {
        let log = recorded();
        let tables = of_sessions(&batch_events()).unwrap();
        let events = find(&tables, "events");
        let first = &events.rows[0];
        assert_eq!(first["run"], "party-seed3");
        assert_eq!(
            (first["session"].as_u64(), first["run_session"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(
            (&first["campaign"], &first["model"]),
            (&log[0]["campaign"]["name"], &log[0]["model"])
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

        let verdicts = &find(&tables, "verdicts").rows;
        let flagged: Vec<_> = verdicts
            .iter()
            .filter(|v| v["source"] == "gm_flagged")
            .collect();
        assert_eq!(
            (flagged[0]["result"].as_str(), flagged[0]["seq"].as_u64()),
            (Some("kept"), log[40]["seq"].as_u64())
        );
        assert_eq!(flagged[0]["check"], "decides_for_character");
        assert_eq!(flagged.len(), 1);
        assert_eq!(find(&tables, "scorecards").rows[0]["gm_flags"], 1);
    }

    /// A verdict logged before verdicts kept their method and confidence: decided by the rules
    /// (`pattern`), its confidence unknown (null, not the 0 the typed verdict reads), its detail
    /// the verdict as logged.
    #[test]
    fn an_older_verdict_is_exported_as_logged() {
        let log = recorded();
        let tables = of_sessions(&log).unwrap();
        let logged = log
            .iter()
            .find(|e| e["event_type"] == "validation")
            .unwrap();
        let row = &find(&tables, "verdicts").rows[0];
        assert_eq!(row["seq"], logged["seq"]);
        assert_eq!(
            (&row["method"], &row["confidence"], &row["result"]),
            (&json!("pattern"), &Value::Null, &logged["result"])
        );
        assert_eq!(row["detail"], logged["verdict"].to_string());
        let flagged = find(&tables, "verdicts")
            .rows
            .iter()
            .find(|r| r["flagged"] == true)
            .unwrap();
        assert_eq!(flagged["violation_kinds"], "world_reaction");
    }

    /// A real session with an event a newer troupe wrote in its middle: `events` has its row
    /// as logged, and every other table is the session's without it.
    #[test]
    fn a_newer_kind_is_a_row_of_events_and_changes_no_other_table() {
        let plain = of_sessions(&in_batch(recorded())).unwrap();
        let mut log = recorded();
        let middle = log.len() / 2;
        let newer = logged_at(
            &log,
            middle,
            json!({"event_type": "weather_changed", "sky": "red"}),
        );
        log.insert(middle, newer.clone());
        let with_newer = of_sessions(&in_batch(log)).unwrap();
        for (t, n) in plain.iter().zip(&with_newer) {
            if t.name == "events" {
                let mut rows = n.rows.clone();
                let row = rows.remove(middle);
                assert_eq!(row["event_type"], "weather_changed");
                assert_eq!(row["payload"], newer.to_string());
                assert_eq!(rows, t.rows);
            } else {
                assert_eq!(n.rows, t.rows, "{}", t.name);
            }
        }
        assert!(!find(&plain, "model_calls").rows.is_empty());
        assert!(!find(&plain, "verdicts").rows.is_empty());
    }

    /// A row of a kind this build knows that does not read is not left out: the export stops,
    /// naming where it is, its kind and why.
    #[test]
    fn a_known_kind_that_does_not_read_stops_the_export_and_is_named() {
        let mut log = in_batch(recorded());
        let at = log
            .iter()
            .position(|e| e["event_type"] == "model_call")
            .unwrap();
        log[at]["usage"] = json!("lots");
        let seq = &log[at]["seq"];
        let err = of_sessions(&log).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "party-seed3, session 1, event {seq}: a model_call event cannot be read ("
            )),
            "{err}"
        );
        assert!(err.contains("lots"), "{err}");
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
        let built = of_sessions(&[]).unwrap();
        let built_names: Vec<&str> = built.iter().map(|t| t.name).collect();
        assert_eq!(built_names, names);
        assert!(
            built
                .iter()
                .all(|t| t.rows.is_empty() && t.columns.len() > KEYS.len())
        );
    }
}
