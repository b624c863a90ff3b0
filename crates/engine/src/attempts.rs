//! A model call as every game's table makes it: its seat shown thinking, its reply's progress
//! streamed to whoever watches, every attempt kept as the gateway recorded it with when it
//! ended, and the replies refused for their shape. Each game seeds the call its own way (the
//! encounter and the scene by the name their log gives it, [`call`]; Lasers & Feelings by its
//! agent's count of calls) and keeps the attempts in its own events.

use std::sync::Mutex;

use chrono::{SecondsFormat, Utc};
use serde_json::Value;
use troupe_llm::{AttemptRecord, ChatRequest, Gateway, GatewayError, GatewayReply, Progress};

pub use crate::watch::{CallWatch, Unwatched};

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

/// Whose call a model call is, as its watch shows it: the seat's id, and what the model does
/// for it, in words a page shows after the seat's name ("narrating", "thinking").
#[derive(Clone, Copy, Debug)]
pub struct For<'a> {
    pub seat: &'a str,
    pub doing: &'a str,
}

/// One model call, seeded as the call named `identity` of a run seeded with `seed`.
pub async fn call<W: CallWatch + ?Sized>(
    gateway: &Gateway,
    req: &mut ChatRequest,
    (seed, identity): (u64, &str),
    whose: For<'_>,
    watch: &mut W,
) -> Made {
    crate::call_seed::seed_request(req, seed, identity);
    make(gateway, req, whose, watch).await
}

/// One model call as its request stands (seeded already, when its game seeds it): the watch
/// hears that `whose.seat` thinks, its progress, and that no model works once it is back.
pub async fn make<W: CallWatch + ?Sized>(
    gateway: &Gateway,
    req: &ChatRequest,
    whose: For<'_>,
    watch: &mut W,
) -> Made {
    let (mut attempts, mut refused) = (Vec::new(), Vec::new());
    let seat = whose.seat;
    watch.thinking(seat, whose.doing);
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
    watch.idle();
    Made {
        reply,
        attempts,
        refused,
    }
}
