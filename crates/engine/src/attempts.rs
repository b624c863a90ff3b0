//! A model call as every game's table makes it: its seat shown thinking, its reply's progress
//! streamed to whoever watches, every attempt kept as the gateway recorded it with when it
//! ended, and the replies refused for their shape. Each game seeds the call its own way (the
//! encounter and the scene by the name their log gives it, [`call`]; Lasers & Feelings by its
//! agent's count of calls) and keeps the attempts in its own events.

use std::sync::Mutex;

use chrono::{SecondsFormat, Utc};
use serde_json::Value;
use troupe_llm::{AttemptRecord, ChatRequest, Gateway, GatewayError, GatewayReply, Progress};

/// One attempt as the gateway recorded it, and when it ended (UTC, to the millisecond), which
/// the encounter's and the scene's events do not otherwise say (a session's `model_call` has its
/// envelope's `timestamp`).
pub struct Attempt {
    pub record: AttemptRecord,
    pub at: String,
}

impl Attempt {
    fn now(record: AttemptRecord) -> Self {
        let at = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        Attempt { record, at }
    }

    /// The attempt as the encounter's and the scene's logs keep it: the record's JSON, with `at`.
    pub fn logged(&self) -> Value {
        let mut v = serde_json::to_value(&self.record).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("at".into(), Value::String(self.at.clone()));
        }
        v
    }
}

/// Who watches a table's model calls: whose model works now (None: nobody's), and how far the
/// reply has come. The text of a draft is the model's, unchecked: show it only to whom may see it.
pub trait CallWatch {
    fn thinking(&mut self, seat: Option<&str>);
    fn progress(&mut self, seat: &str, progress: &Progress);
}

/// Nobody watches (a call made between turns, as memory's extraction is).
pub struct Unwatched;

impl CallWatch for Unwatched {
    fn thinking(&mut self, _: Option<&str>) {}
    fn progress(&mut self, _: &str, _: &Progress) {}
}

/// A call made: the gateway's reply or why it failed, every attempt in order, and the replies
/// refused for their shape with why, in order.
pub struct Made {
    pub reply: Result<GatewayReply, GatewayError>,
    pub attempts: Vec<Attempt>,
    pub refused: Vec<(String, String)>,
}

impl Made {
    /// Every attempt as the encounter's and the scene's logs keep it.
    pub fn logged(&self) -> Vec<Value> {
        self.attempts.iter().map(Attempt::logged).collect()
    }
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
    make(gateway, req, seat, watch).await
}

/// One model call for `seat` as its request stands (seeded already, when its game seeds it).
pub async fn make<W: CallWatch + Send + ?Sized>(
    gateway: &Gateway,
    req: &ChatRequest,
    seat: &str,
    watch: &mut W,
) -> Made {
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
            attempts.push(Attempt::now(a));
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
