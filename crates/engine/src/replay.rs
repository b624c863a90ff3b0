//! The verdict of a replay, for every game: where the events a replay produced first part from
//! the events in the log, named by the log's event and the fields that differ.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::Error;

/// Where a replay's events first part from the log's.
#[derive(Debug, PartialEq)]
pub struct Difference {
    /// The log's event (its `seq` unless that is not compared, else its position) where they
    /// part.
    pub at: u64,
    /// Its `event_type`, when the log has an event there.
    pub event_type: Option<String>,
    /// The fields that differ, as the log has them; None when the log ends first.
    pub log: Option<Value>,
    /// The same fields as the replay has them; None when the replay ends first.
    pub replay: Option<Value>,
}

/// The first difference between a log's events and a replay's, each compared as JSON with
/// the top-level fields in `not_compared` left out (when something happened and how long a
/// model took legitimately differ); None when every event is the same.
pub fn first_difference<T: Serialize>(
    log: &[T],
    replay: &[T],
    not_compared: &[&str],
) -> Result<Option<Difference>, Error> {
    let count = log.len().max(replay.len());
    for i in 0..count {
        let logged = log.get(i).map(|e| compared(e, not_compared)).transpose()?;
        let again = replay
            .get(i)
            .map(|e| compared(e, not_compared))
            .transpose()?;
        if logged == again {
            continue;
        }
        let at = logged
            .as_ref()
            .and_then(|v| v.get("seq"))
            .and_then(Value::as_u64)
            .unwrap_or(i as u64 + 1);
        let event_type = logged
            .as_ref()
            .and_then(|v| v.get("event_type"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let (log, replay) = differing(logged, again);
        return Ok(Some(Difference {
            at,
            event_type,
            log,
            replay,
        }));
    }
    Ok(None)
}

/// An event as JSON without the fields that are not compared.
fn compared<T: Serialize>(event: &T, not_compared: &[&str]) -> Result<Value, Error> {
    let mut v = serde_json::to_value(event).map_err(|e| Error::Encode(e.to_string()))?;
    if let Some(o) = v.as_object_mut() {
        for k in not_compared {
            o.remove(*k);
        }
    }
    Ok(v)
}

/// Of two events that differ, the top-level fields where they do (whole events when either is
/// not an object or is missing).
fn differing(log: Option<Value>, replay: Option<Value>) -> (Option<Value>, Option<Value>) {
    let (Some(Value::Object(a)), Some(Value::Object(b))) = (&log, &replay) else {
        return (log, replay);
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let pick = |o: &Map<String, Value>| -> Value {
        let fields = keys
            .iter()
            .filter(|k| a.get(k.as_str()) != b.get(k.as_str()))
            .map(|k| {
                (
                    (*k).clone(),
                    o.get(k.as_str()).cloned().unwrap_or(Value::Null),
                )
            });
        Value::Object(fields.collect())
    };
    (Some(pick(a)), Some(pick(b)))
}

/// The longest a side of a difference is shown (a model call's messages run to pages).
const SHOWN_CHARS: usize = 600;

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self
            .event_type
            .as_deref()
            .map_or_else(String::new, |t| format!(" ({t})"));
        match (&self.log, &self.replay) {
            (Some(log), Some(replay)) => write!(
                f,
                "event {}{kind} differs:\n  log:    {}\n  replay: {}",
                self.at,
                shown(log),
                shown(replay)
            ),
            (Some(log), None) => write!(
                f,
                "the replay ends where the log has event {}{kind}: {}",
                self.at,
                shown(log)
            ),
            (None, Some(replay)) => write!(
                f,
                "the log ends where the replay has one more event: {}",
                shown(replay)
            ),
            (None, None) => write!(f, "event {} differs", self.at),
        }
    }
}

/// Compact JSON, cut at [`SHOWN_CHARS`] characters (never inside one).
fn shown(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().nth(SHOWN_CHARS).is_none() {
        return text;
    }
    let cut: String = text.chars().take(SHOWN_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn the_same_events_but_for_the_fields_left_out_do_not_differ() {
        let log = [json!({"seq": 1, "event_type": "a", "timestamp": "t1", "x": 1})];
        let again = [json!({"seq": 1, "event_type": "a", "timestamp": "t2", "x": 1})];
        assert_eq!(
            first_difference(&log, &again, &["timestamp"]).unwrap(),
            None
        );
        assert!(first_difference(&log, &again, &[]).unwrap().is_some());
    }

    #[test]
    fn a_difference_names_the_logs_event_and_only_the_fields_that_differ() {
        let log = [
            json!({"seq": 4, "event_type": "a", "x": 1}),
            json!({"seq": 7, "event_type": "call", "messages": "ü".repeat(900), "same": 2}),
        ];
        let mut again = log.clone();
        again[1]["messages"] = json!("other");
        let d = first_difference(&log, &again, &[]).unwrap().unwrap();
        assert_eq!((d.at, d.event_type.as_deref()), (7, Some("call")));
        assert_eq!(d.replay, Some(json!({"messages": "other"})));
        let text = d.to_string();
        assert!(text.starts_with("event 7 (call) differs:\n  log:    {\"messages\":\"üü"));
        assert!(
            text.contains("…\n  replay: {\"messages\":\"other\"}"),
            "{text}"
        );
        assert!(!text.contains("same"), "{text}");
    }

    #[test]
    fn a_replay_that_stops_early_or_runs_on_says_which() {
        let log = [
            json!({"seq": 1, "event_type": "a"}),
            json!({"seq": 2, "event_type": "b"}),
        ];
        let short = first_difference(&log, &log[..1], &[]).unwrap().unwrap();
        assert_eq!(
            short.to_string(),
            "the replay ends where the log has event 2 (b): {\"event_type\":\"b\",\"seq\":2}"
        );
        let long = first_difference(&log[..1], &log, &[]).unwrap().unwrap();
        assert!(
            long.to_string()
                .starts_with("the log ends where the replay has one more")
        );
    }
}
