//! A model call as the encounter's and the scene's tables make it and their logs keep it: seeded
//! by the name the log gives it, its seat shown thinking and its reply's progress streamed to
//! whoever watches, and every attempt kept as the gateway recorded it with when it was logged,
//! which those logs' events do not otherwise say (a session's `model_call` has its envelope's
//! `timestamp`).

use std::sync::Mutex;

use chrono::{SecondsFormat, Utc};
use serde_json::Value;
use troupe_llm::{AttemptRecord, ChatRequest, Gateway, GatewayError, GatewayReply, Progress};

/// The attempt as JSON, with `at`: now, UTC, to the millisecond.
pub fn logged(a: &AttemptRecord) -> Value {
    let mut v = serde_json::to_value(a).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        let at = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        o.insert("at".into(), Value::String(at));
    }
    v
}

/// Who watches a table's model calls: whose model works now (None: nobody's), and how far the
/// reply has come. The text of a draft is the model's, unchecked: show it only to whom may see it.
pub trait CallWatch {
    fn thinking(&mut self, seat: Option<&str>);
    fn progress(&mut self, seat: &str, progress: &Progress);
}

/// A call made: the gateway's reply or why it failed, every attempt as the log keeps it
/// ([`logged`], each when it ended), and the replies refused for their shape with why, in order.
pub struct Made {
    pub reply: Result<GatewayReply, GatewayError>,
    pub attempts: Vec<Value>,
    pub refused: Vec<(String, String)>,
}

/// One model call for `seat`, seeded as the call named `identity` of a run seeded with `seed`.
pub async fn call<W: CallWatch + Send + ?Sized>(
    gateway: &Gateway,
    req: &mut ChatRequest,
    (seed, identity): (u64, &str),
    seat: &str,
    watch: &mut W,
) -> Made {
    crate::call_seed::seed_request(req, seed, identity);
    let (mut attempts, mut refused) = (Vec::new(), Vec::new());
    watch.thinking(Some(seat));
    let reply = {
        // The gateway reports progress through a shared sink; the watch is borrowed mutably.
        let watch = Mutex::new(&mut *watch);
        let progress = |p: Progress| {
            let mut watch = watch.lock().unwrap_or_else(|e| e.into_inner());
            watch.progress(seat, &p);
        };
        let mut on_attempt = |a: AttemptRecord| {
            if let (Some(reply), Some(error)) = (&a.reply, &a.error) {
                refused.push((reply.clone(), error.clone()));
            }
            attempts.push(logged(&a));
        };
        gateway
            .call_with_progress(req, &mut on_attempt, &progress)
            .await
    };
    watch.thinking(None);
    Made {
        reply,
        attempts,
        refused,
    }
}
