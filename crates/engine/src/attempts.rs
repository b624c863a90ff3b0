//! A model call's attempt as the encounter and scene logs keep it: the gateway's record (the
//! same in every game) and when it was logged, which those logs' events do not otherwise say (a
//! session's `model_call` has its envelope's `timestamp`).

use chrono::{SecondsFormat, Utc};
use serde_json::Value;
use troupe_llm::AttemptRecord;

/// The attempt as JSON, with `at`: now, UTC, to the millisecond.
pub fn logged(a: &AttemptRecord) -> Value {
    let mut v = serde_json::to_value(a).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        let at = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        o.insert("at".into(), Value::String(at));
    }
    v
}
