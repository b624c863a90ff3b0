//! The scorecard per model: how each model behaved at the table, over every session it played.
//! A session's model is the `model` of its `session_started` event; every event of the session
//! counts for that model. Built for batches of all-AI sessions (`troupe simulate`), where the
//! same campaigns and seeds are played by several models side by side.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use troupe_lasers::{Envelope, Event, VerdictResult};

use crate::cost::{Spend, costs_of};
use crate::ev::{num, s, session};
use crate::flags::flags_of;
use crate::lasers;

/// What a session with no `session_started` (or one without a `model`) counts under.
pub const UNKNOWN_MODEL: &str = "unknown";

/// One model's row.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelScore {
    /// `provider:model`, as `session_started` recorded it.
    pub model: String,
    pub sessions: u32,
    /// Turns completed (the tokens and latency of a turn cut short still count).
    pub turns: u32,
    /// Declared actions the overreach check saw (verdicts on a first attempt).
    pub actions: u32,
    /// Verdicts other than `passed`: the character narrated a result.
    pub overreach: u32,
    pub overreach_per_100_actions: Option<f64>,
    /// The AI GM's output checks (`gm_flagged`).
    pub gm_flags: u32,
    /// Flags the report raises for review (see `flags`) in this model's sessions.
    pub review_flags: u32,
    /// Model attempts (`model_call` events).
    pub calls: u32,
    /// Attempts that got no reply.
    pub failed_calls: u32,
    /// Steps that failed for good (`phase_failed`).
    pub phases_failed: u32,
    /// Input plus output tokens.
    pub tokens: u64,
    pub tokens_per_turn: Option<f64>,
    /// Summed latency of every attempt.
    pub latency_ms: u64,
    pub latency_ms_per_turn: Option<f64>,
    /// What this model's sessions spent, as a person reads it (`$0.42`, `$0 (local …)`).
    pub cost: String,
    pub cost_usd: f64,
    pub cost_usd_per_turn: Option<f64>,
    /// Share of the input tokens read from the provider's prompt cache.
    pub cached_input_share: Option<f64>,
}

/// One row per model, sorted by model, from the events this build knows: a newer troupe's
/// kind counts in no row, nor does a known kind that does not read (`Metrics::unreadable` and
/// the audit name it).
pub fn scorecard(events: &[Value]) -> Vec<ModelScore> {
    scorecard_of(&lasers::read(events))
}

/// The scorecard of rows already read.
pub(crate) fn scorecard_of(read: &[lasers::Row]) -> Vec<ModelScore> {
    let known: Vec<&Envelope> = lasers::known(read).collect();
    let models = session_models(&known);
    let model_of = |sn: u32| models.get(&sn).map_or(UNKNOWN_MODEL, String::as_str);
    let mut rows: BTreeMap<&str, ModelScore> = BTreeMap::new();
    for env in &known {
        let row = rows.entry(model_of(env.session_number)).or_default();
        count(row, &env.event);
    }
    for flag in flags_of(read) {
        rows.entry(model_of(flag.session)).or_default().review_flags += 1;
    }
    let mut spend: BTreeMap<&str, Spend> = BTreeMap::new();
    for (sn, s) in costs_of(read).per_session {
        spend.entry(model_of(sn)).or_default().merge(&s);
    }
    rows.into_iter()
        .map(|(model, mut row)| {
            row.model = model.to_string();
            let s = spend.remove(model).unwrap_or_default();
            row.cost = s.money();
            row.cost_usd = s.usd;
            row.cached_input_share = s.cached_share();
            finish(&mut row);
            row
        })
        .collect()
}

/// The model of each session, from its `session_started`.
fn session_models(events: &[&Envelope]) -> BTreeMap<u32, String> {
    events
        .iter()
        .filter_map(|env| match &env.event {
            Event::SessionStarted { model, .. } if !model.is_empty() => {
                Some((env.session_number, model.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Where one session of a batch came from (`troupe stats` on a `troupe simulate` directory).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRow {
    /// The session's number in the batch.
    pub session: u32,
    /// The campaign directory it was played in.
    pub run: String,
    /// Its number in that directory.
    pub run_session: u64,
    pub model: String,
}

/// The runs of a batch, one per session, from the `run` marks `load_batch` puts on the rows
/// (where they were loaded from, not what happened: read from every row as loaded); empty for
/// a single campaign.
pub fn runs(events: &[Value]) -> Vec<RunRow> {
    runs_of(events, &lasers::read(events))
}

/// How many runs a batch's rows come from: the sessions `load_batch` marked with their run's
/// directory (no row read as its event: a count needs only the loader's marks).
pub fn run_count(events: &[Value]) -> usize {
    let runs: std::collections::BTreeSet<u32> = events
        .iter()
        .filter(|e| !s(e, "run").is_empty())
        .map(session)
        .collect();
    runs.len()
}

/// The runs of rows as loaded (`events`) and as read.
pub(crate) fn runs_of(events: &[Value], read: &[lasers::Row]) -> Vec<RunRow> {
    let models = session_models(&lasers::known(read).collect::<Vec<_>>());
    let mut rows: BTreeMap<u32, RunRow> = BTreeMap::new();
    for e in events.iter().filter(|e| !s(e, "run").is_empty()) {
        let sn = session(e);
        rows.entry(sn).or_insert_with(|| RunRow {
            session: sn,
            run: s(e, "run").to_string(),
            run_session: num(e, "run_session"),
            model: models
                .get(&sn)
                .cloned()
                .unwrap_or_else(|| UNKNOWN_MODEL.into()),
        });
    }
    rows.into_values().collect()
}

fn count(row: &mut ModelScore, event: &Event) {
    match event {
        Event::SessionStarted { .. } => row.sessions += 1,
        Event::TurnCompleted => row.turns += 1,
        Event::Validation {
            attempt, result, ..
        } => {
            if *attempt <= 1 {
                row.actions += 1;
            }
            if *result != VerdictResult::Passed {
                row.overreach += 1;
            }
        }
        Event::ModelCall { record, .. } => {
            row.calls += 1;
            if record.reply.is_none() {
                row.failed_calls += 1;
            }
            let usage = &record.usage;
            let tokens = u64::from(usage.input_tokens) + u64::from(usage.output_tokens);
            row.tokens = row.tokens.saturating_add(tokens);
            row.latency_ms = row.latency_ms.saturating_add(record.latency_ms);
        }
        Event::PhaseFailed { .. } => row.phases_failed += 1,
        Event::GmFlagged { .. } => row.gm_flags += 1,
        _ => {}
    }
}

fn finish(row: &mut ModelScore) {
    row.overreach_per_100_actions = per(row.overreach as f64 * 100.0, row.actions);
    row.tokens_per_turn = per(row.tokens as f64, row.turns);
    row.latency_ms_per_turn = per(row.latency_ms as f64, row.turns);
    row.cost_usd_per_turn = per(row.cost_usd, row.turns);
}

fn per(total: f64, n: u32) -> Option<f64> {
    (n > 0).then(|| total / f64::from(n))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    /// A row read as the game's event (`crate::lasers::rows::row`).
    fn ev(session: u32, turn: u32, event_type: &str, extra: Value) -> Value {
        let mut e = json!({"event_type": event_type, "session_number": session,
            "turn_number": turn, "seq": 0});
        if let (Some(o), Some(x)) = (e.as_object_mut(), extra.as_object()) {
            o.extend(x.clone());
        }
        crate::lasers::rows::row(e)
    }

    fn call(session: u32, reply: Value, tokens: (u64, u64), latency: u64) -> Value {
        ev(
            session,
            1,
            "model_call",
            json!({"agent": "alex", "layer": "character", "purpose": "character_action",
                "attempt": 1, "reply": reply, "latency_ms": latency,
                "usage": {"input_tokens": tokens.0, "output_tokens": tokens.1}}),
        )
    }

    fn verdict(session: u32, attempt: u32, result: &str) -> Value {
        ev(
            session,
            1,
            "validation",
            json!({"agent": "alex", "attempt": attempt, "result": result}),
        )
    }

    /// Two sessions of model A (one of two turns), one of model B.
    fn two_models() -> Vec<Value> {
        let mut events = vec![
            ev(1, 0, "session_started", json!({"model": "a:one"})),
            ev(1, 1, "turn_completed", json!({})),
            call(1, json!("ok"), (100, 20), 300),
            verdict(1, 1, "retry"),
            verdict(1, 2, "passed"),
            verdict(1, 1, "passed"),
            ev(1, 2, "turn_completed", json!({})),
            call(1, Value::Null, (0, 0), 900),
            ev(
                1,
                2,
                "phase_failed",
                json!({"agent": "alex", "error": "HTTP 503", "failures": 1}),
            ),
            ev(2, 0, "session_started", json!({"model": "b:two"})),
            ev(2, 1, "turn_completed", json!({})),
            call(2, json!("ok"), (50, 10), 200),
            verdict(2, 1, "passed"),
            ev(
                2,
                1,
                "gm_flagged",
                json!({"check": "decided_for_player", "detail": "d", "text": "t",
                    "sent_back": true, "kept": false}),
            ),
            // A kind a newer troupe writes: no check this build knows, counted in no figure.
            ev(2, 1, "gm_flag_dc_leak", json!({})),
        ];
        events.push(ev(3, 0, "session_started", json!({"model": "a:one"})));
        events.push(ev(3, 1, "turn_completed", json!({})));
        events.push(verdict(3, 1, "auto_corrected"));
        events.push(verdict(3, 1, "passed"));
        events
    }

    #[test]
    fn rows_are_per_model_and_sum_their_sessions() {
        let card = scorecard(&two_models());
        assert_eq!(card.len(), 2);
        let a = &card[0];
        assert_eq!(a.model, "a:one");
        assert_eq!((a.sessions, a.turns, a.actions), (2, 3, 4));
        assert_eq!(a.overreach, 2);
        assert_eq!(a.overreach_per_100_actions, Some(50.0));
        assert_eq!((a.calls, a.failed_calls, a.phases_failed), (2, 1, 1));
        assert_eq!(a.tokens, 120);
        assert_eq!(a.tokens_per_turn, Some(40.0));
        assert_eq!(a.latency_ms, 1200);
        assert_eq!(a.latency_ms_per_turn, Some(400.0));
        assert_eq!(a.gm_flags, 0);
        let b = &card[1];
        assert_eq!(b.model, "b:two");
        assert_eq!((b.sessions, b.turns, b.actions, b.overreach), (1, 1, 1, 0));
        assert_eq!(b.overreach_per_100_actions, Some(0.0));
        assert_eq!(b.gm_flags, 1);
        assert_eq!((b.tokens, b.latency_ms_per_turn), (60, Some(200.0)));
    }

    #[test]
    fn a_session_without_a_start_counts_as_unknown_and_empty_rates_are_absent() {
        let events = vec![ev(
            4,
            1,
            "phase_failed",
            json!({"agent": "sam", "error": "HTTP 503", "failures": 1}),
        )];
        let card = scorecard(&events);
        assert_eq!(card.len(), 1);
        assert_eq!(card[0].model, UNKNOWN_MODEL);
        assert_eq!(card[0].phases_failed, 1);
        assert_eq!(card[0].overreach_per_100_actions, None);
        assert_eq!(card[0].tokens_per_turn, None);
        assert!(scorecard(&[]).is_empty());
    }

    #[test]
    fn review_flags_go_to_the_model_of_their_session() {
        // A phase_failed raises the report's "model call gave up" flag.
        let card = scorecard(&two_models());
        let flagged: u32 = card.iter().map(|r| r.review_flags).sum();
        let expected = crate::flags(&two_models()).len() as u32;
        assert_eq!(flagged, expected);
        assert!(card[0].review_flags >= 1, "{card:?}");
    }

    #[test]
    fn runs_name_each_batch_session_with_its_model() {
        let mut events = two_models();
        assert!(runs(&events).is_empty(), "a single campaign has no runs");
        assert_eq!(run_count(&events), 0);
        for e in &mut events {
            let sn = session(e);
            e["run"] = json!(format!("party-seed{sn}"));
            e["run_session"] = json!(1);
        }
        let rows = runs(&events);
        assert_eq!(rows.len(), 3);
        assert_eq!(run_count(&events), 3);
        assert_eq!(rows[1].run, "party-seed2");
        assert_eq!(rows[1].model, "b:two");
        assert_eq!(rows[2].session, 3);
    }
}
