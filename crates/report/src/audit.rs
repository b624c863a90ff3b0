//! Is the log complete (SC-012)? Every phase started is closed, every AI decision is backed by
//! a logged model call, every declared action has a verdict, and every event carries the
//! envelope researchers filter on.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::ev::{agent, num, opt, s, seq, session, ty};

/// The AI decisions and the model-call purpose each one comes from.
const DECISIONS: &[(&str, &str)] = &[
    ("clarifying_questions", "clarifying_questions"),
    ("strategic_intent", "strategic_intent"),
    ("character_action", "character_action"),
    ("laser_feelings_question", "insight_question"),
    ("insight_decision", "insight_decision"),
    ("character_reaction", "character_reaction"),
];

/// The envelope every event must carry.
const ENVELOPE: &[&str] = &[
    "event_type",
    "timestamp",
    "session_id",
    "session_number",
    "turn_number",
    "seq",
];

/// What a model call event must say.
const MODEL_CALL: &[&str] = &[
    "agent",
    "layer",
    "purpose",
    "attempt",
    "provider",
    "messages",
    "usage",
    "latency_ms",
];

#[derive(Clone, Debug, Serialize)]
pub struct Gap {
    pub session: u32,
    pub seq: u64,
    pub what: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Audit {
    pub events: usize,
    pub phases_started: u32,
    pub phases_closed: u32,
    /// Phases cut off by the end of the log or a resume (the script ran out, a crash, Ctrl-C):
    /// a resume re-runs them, so they are not gaps.
    pub phases_interrupted: u32,
    pub decisions: u32,
    /// Decisions backed by a model call (the rest were typed by the GM after a failure).
    pub decisions_from_models: u32,
    pub decisions_typed_by_gm: u32,
    pub model_calls: u32,
    pub actions: u32,
    pub actions_with_verdict: u32,
    /// Actions that needed no verdict: the GM wrote them, or the log ended first.
    pub actions_exempt: u32,
    pub gaps: Vec<Gap>,
}

impl Audit {
    pub fn complete(&self) -> bool {
        self.gaps.is_empty()
    }
}

/// Audit one or more sessions' events (in log order).
pub fn audit(events: &[Value]) -> Audit {
    let mut a = Audit {
        events: events.len(),
        ..Audit::default()
    };
    let mut by_session: BTreeMap<u32, Vec<&Value>> = BTreeMap::new();
    for e in events {
        by_session.entry(session(e)).or_default().push(e);
    }
    for (sn, evs) in by_session {
        audit_session(sn, &evs, &mut a);
    }
    a
}

fn gap(a: &mut Audit, session: u32, seq: u64, what: String) {
    a.gaps.push(Gap { session, seq, what });
}

fn audit_session(sn: u32, evs: &[&Value], a: &mut Audit) {
    for e in evs {
        let missing: Vec<&str> = ENVELOPE
            .iter()
            .copied()
            .filter(|f| e.get(*f).is_none_or(Value::is_null))
            .collect();
        if !missing.is_empty() {
            gap(
                a,
                sn,
                seq(e),
                format!("{} lacks {}", ty(e), missing.join(", ")),
            );
        }
    }

    // Phases: each start is followed by its completion or failure before the next start.
    let mut open: Option<(&str, u64)> = None;
    for e in evs {
        let phase = s(e, "phase");
        match ty(e) {
            "phase_started" => {
                a.phases_started += 1;
                if let Some((p, at)) = open.take() {
                    gap(
                        a,
                        sn,
                        at,
                        format!("phase {p} started and never completed or failed"),
                    );
                }
                open = Some((phase, seq(e)));
            }
            "phase_completed" | "phase_failed" => match open {
                Some((p, _)) if p == phase => {
                    a.phases_closed += 1;
                    open = None;
                }
                _ => gap(
                    a,
                    sn,
                    seq(e),
                    format!("{} for phase {phase}, which had not started", ty(e)),
                ),
            },
            "session_resumed" | "events_undone" => {
                if open.take().is_some() {
                    a.phases_interrupted += 1;
                }
            }
            _ => {}
        }
    }
    if open.is_some() {
        a.phases_interrupted += 1;
    }

    // Model calls: each decision takes the earliest unused answered call of its agent and
    // purpose logged before it.
    let mut calls: Vec<(u64, String, String, bool)> = Vec::new();
    let mut typed: BTreeMap<String, bool> = BTreeMap::new();
    for e in evs {
        match ty(e) {
            "model_call" => {
                a.model_calls += 1;
                let missing: Vec<&str> = MODEL_CALL
                    .iter()
                    .copied()
                    .filter(|f| e.get(*f).is_none_or(Value::is_null))
                    .collect();
                if !missing.is_empty() {
                    gap(
                        a,
                        sn,
                        seq(e),
                        format!("model_call lacks {}", missing.join(", ")),
                    );
                }
                let answered = e.get("reply").is_some_and(Value::is_string) && opt(e, "error").is_none();
                calls.push((seq(e), agent(e).into(), s(e, "purpose").into(), answered));
            }
            "gm_failure_decision" if s(e, "choice") == "take_over" => {
                typed.insert(agent(e).into(), true);
            }
            t => {
                let Some((_, purpose)) = DECISIONS.iter().find(|(d, _)| *d == t) else {
                    continue;
                };
                a.decisions += 1;
                if typed.remove(agent(e)).is_some() {
                    a.decisions_typed_by_gm += 1;
                    continue;
                }
                let found = calls.iter().position(|(_, ag, p, ok)| {
                    *ok && ag == agent(e) && p == purpose
                });
                match found {
                    Some(i) => {
                        calls.remove(i);
                        a.decisions_from_models += 1;
                    }
                    None => gap(
                        a,
                        sn,
                        seq(e),
                        format!(
                            "{t} by {} has no answered model_call ({purpose}) before it",
                            agent(e)
                        ),
                    ),
                }
            }
        }
    }

    // Verdicts: every declared action gets one, unless the GM wrote it or the log stops first.
    let mut waiting: BTreeMap<(String, u64), u64> = BTreeMap::new();
    for e in evs {
        match ty(e) {
            "character_action" => {
                a.actions += 1;
                waiting.insert((agent(e).into(), num(e, "attempt")), seq(e));
            }
            "validation" => {
                if waiting
                    .remove(&(agent(e).into(), num(e, "attempt")))
                    .is_some()
                {
                    a.actions_with_verdict += 1;
                } else {
                    gap(
                        a,
                        sn,
                        seq(e),
                        format!(
                            "validation of {}'s attempt {} with no such action",
                            agent(e),
                            num(e, "attempt")
                        ),
                    );
                }
            }
            "gm_reviewed_action" | "gm_failure_decision" => {
                let mine: Vec<(String, u64)> = waiting
                    .keys()
                    .filter(|(ag, _)| ag == agent(e))
                    .cloned()
                    .collect();
                for k in mine {
                    waiting.remove(&k);
                    a.actions_exempt += 1;
                }
            }
            "turn_completed" => {
                for ((ag, attempt), at) in std::mem::take(&mut waiting) {
                    gap(
                        a,
                        sn,
                        at,
                        format!("{ag}'s action (attempt {attempt}) has no validation verdict"),
                    );
                }
            }
            "session_resumed" | "events_undone" | "session_ended" => {
                a.actions_exempt += waiting.len() as u32;
                waiting.clear();
            }
            _ => {}
        }
    }
    a.actions_exempt += waiting.len() as u32;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn ev(seq: u64, v: Value) -> Value {
        let mut v = v;
        let o = v.as_object_mut().unwrap();
        for (k, val) in [
            ("seq", json!(seq)),
            ("session_number", json!(1)),
            ("turn_number", json!(1)),
            ("timestamp", json!("2026-01-01T00:00:00Z")),
            ("session_id", json!("s1")),
        ] {
            o.entry(k).or_insert(val);
        }
        v
    }

    fn call(seq: u64, purpose: &str) -> Value {
        ev(seq, json!({"event_type": "model_call", "agent": "alex", "layer": "character",
            "purpose": purpose, "attempt": 1, "provider": "replay", "messages": [],
            "usage": {"input_tokens": 1, "output_tokens": 1}, "latency_ms": 3, "reply": "{}", "error": null}))
    }

    fn phase(seq: u64, t: &str, p: &str) -> Value {
        ev(seq, json!({"event_type": t, "phase": p}))
    }

    #[test]
    fn a_complete_turn_has_no_gaps() {
        let events = vec![
            phase(0, "phase_started", "character_action"),
            call(1, "character_action"),
            ev(2, json!({"event_type": "character_action", "agent": "alex", "attempt": 1})),
            phase(3, "phase_completed", "character_action"),
            phase(4, "phase_started", "validation"),
            ev(5, json!({"event_type": "validation", "agent": "alex", "attempt": 1, "result": "passed"})),
            phase(6, "phase_completed", "validation"),
            ev(7, json!({"event_type": "turn_completed"})),
            phase(8, "phase_started", "gm_narration"),
        ];
        let a = audit(&events);
        assert!(a.complete(), "{:?}", a.gaps);
        assert_eq!((a.phases_started, a.phases_closed, a.phases_interrupted), (3, 2, 1));
        assert_eq!((a.decisions, a.decisions_from_models), (1, 1));
        assert_eq!(a.actions_with_verdict, 1);
    }

    #[test]
    fn missing_events_are_gaps() {
        let events = vec![
            phase(0, "phase_started", "character_action"),
            // No model call for this action, and no verdict before the turn ends.
            ev(1, json!({"event_type": "character_action", "agent": "alex", "attempt": 1})),
            phase(2, "phase_started", "validation"),
            ev(3, json!({"event_type": "turn_completed"})),
            json!({"event_type": "gm_outcome", "seq": 4}),
        ];
        let a = audit(&events);
        let what: Vec<&str> = a.gaps.iter().map(|g| g.what.as_str()).collect();
        assert_eq!(a.gaps.len(), 4, "{what:?}");
        assert!(what.iter().any(|w| w.contains("no answered model_call")));
        assert!(what.iter().any(|w| w.contains("never completed")));
        assert!(what.iter().any(|w| w.contains("no validation verdict")));
        assert!(what.iter().any(|w| w.contains("lacks timestamp")));
    }

    #[test]
    fn a_decision_the_gm_typed_needs_no_model_call() {
        let events = vec![
            ev(0, json!({"event_type": "gm_failure_decision", "agent": "alex", "choice": "take_over", "text": "x"})),
            ev(1, json!({"event_type": "character_reaction", "agent": "alex", "text": "x"})),
        ];
        let a = audit(&events);
        assert!(a.complete(), "{:?}", a.gaps);
        assert_eq!(a.decisions_typed_by_gm, 1);
    }
}
