//! The gateway: timeout, retry with backoff, schema validation with one repair, accounting,
//! and a record of every attempt.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::json::check;
use crate::{
    ChatModel, ChatReply, ChatRequest, GatewayError, Message, Progress, ProgressSink,
    ProviderError, StructuredOutput, Usage,
};

/// Waiting between retries, injected so tests need not wait for real.
#[async_trait]
pub trait Sleeper: Send + Sync {
    async fn sleep(&self, d: Duration);
}

/// Sleeps for real on the tokio timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioSleeper;

#[async_trait]
impl Sleeper for TokioSleeper {
    async fn sleep(&self, d: Duration) {
        tokio::time::sleep(d).await;
    }
}

/// Sleeps `d * factor`: `0.0` skips waits entirely, `0.001` turns a 20 s backoff into 20 ms.
#[derive(Clone, Copy, Debug)]
pub struct ScaledSleeper {
    pub factor: f64,
}

#[async_trait]
impl Sleeper for ScaledSleeper {
    async fn sleep(&self, d: Duration) {
        let scaled = Duration::try_from_secs_f64(d.as_secs_f64() * self.factor).unwrap_or_default();
        if scaled.is_zero() {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(scaled).await;
        }
    }
}

/// Does not sleep; remembers every delay it was asked for, so tests can assert the backoff.
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    requested: Mutex<Vec<Duration>>,
}

impl RecordingSleeper {
    pub fn new() -> Self {
        Self::default()
    }

    /// The delays requested so far, in order.
    pub fn requested(&self) -> Vec<Duration> {
        self.requested
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[async_trait]
impl Sleeper for RecordingSleeper {
    async fn sleep(&self, d: Duration) {
        self.requested
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(d);
        tokio::task::yield_now().await;
    }
}

/// How hard to try. The defaults follow the design: 2 s, 5 s, 10 s, 20 s between 5 attempts.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Wait after failed attempt n is `delays[min(n-1, len-1)]`.
    pub delays: Vec<Duration>,
    /// Attempts per request (the repair re-ask gets its own budget).
    pub max_attempts: u32,
    /// Bound on one attempt, whatever the provider's HTTP timeout.
    pub call_timeout: Duration,
    /// A provider's Retry-After is honoured up to this much.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            delays: [2, 5, 10, 20]
                .into_iter()
                .map(Duration::from_secs)
                .collect(),
            max_attempts: 5,
            call_timeout: Duration::from_secs(120),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `attempt` (1-based): the scheduled delay, or the provider's
    /// capped Retry-After if that is longer.
    pub fn delay_after(&self, attempt: u32, err: &ProviderError) -> Duration {
        let index = usize::try_from(attempt.saturating_sub(1)).unwrap_or(usize::MAX);
        let scheduled = self
            .delays
            .get(index)
            .or_else(|| self.delays.last())
            .copied()
            .unwrap_or_default();
        match err {
            ProviderError::RateLimited {
                retry_after: Some(asked),
            } => scheduled.max((*asked).min(self.max_retry_after)),
            _ => scheduled,
        }
    }
}

/// One attempt at a provider, for the session log: enough to audit cost and latency and to
/// replay the call.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// 1-based, counted across the whole gateway call (repair attempts continue the count).
    pub attempt: u32,
    pub provider: String,
    /// sha256 (hex) of the messages and schema, to spot identical requests across sessions.
    pub request_hash: String,
    /// The sampling seed the request carried (absent in logs written before every request
    /// carried one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub messages: Vec<Message>,
    /// The provider's text, when it answered.
    pub reply: Option<String>,
    pub usage: Usage,
    pub latency_ms: u64,
    /// Why this attempt did not produce the final answer: a provider error, or the schema
    /// problems of a reply that was then repaired or given up on.
    pub error: Option<String>,
    /// The wait before the next attempt, when one follows after a provider error.
    pub retry_in_ms: Option<u64>,
    /// This attempt is the JSON repair re-ask.
    pub repair: bool,
    /// For a schema call: how this attempt asked for JSON (`json_schema`, `json_object` or
    /// `text`; below `json_schema` the schema is also in the prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<StructuredOutput>,
    /// Set on the attempt whose refusal taught the gateway that this provider does not accept
    /// `structured_output`: the rung every later call of the session starts on. Learned once;
    /// an attempt refused on a rung already given up (a concurrent call) leaves it unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fell_back_to: Option<StructuredOutput>,
    /// Milliseconds from the start of the attempt to its first text: what a person waited
    /// before something showed. Absent when no text came, and for replayed replies (which
    /// take no model time, see `latency_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u64>,
}

/// A successful gateway call.
#[derive(Clone, Debug)]
pub struct GatewayReply {
    /// The model's text as it answered (for a schema call it may include fences or prose).
    pub content: String,
    /// For a schema call: the validated JSON object found in the reply.
    pub json: Option<serde_json::Value>,
    /// Summed over every attempt that got an answer, including a repair.
    pub usage: Usage,
    pub attempts: u32,
}

/// Every model call in troupe goes through here. See the crate docs for what it adds.
pub struct Gateway {
    model: Arc<dyn ChatModel>,
    policy: RetryPolicy,
    sleeper: Arc<dyn Sleeper>,
    /// The highest structured-output rung this provider has not refused, learned once for the
    /// gateway's life (a session) so later calls skip the doomed tries.
    structured: Mutex<StructuredOutput>,
}

/// Shows the model and policy, so structs holding a gateway can derive `Debug`.
impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("model", &self.model.name())
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// Counters that span the first ask and the repair re-ask.
struct Tally {
    attempts: u32,
    usage: Usage,
}

impl Gateway {
    pub fn new(model: Arc<dyn ChatModel>, policy: RetryPolicy, sleeper: Arc<dyn Sleeper>) -> Self {
        Self {
            model,
            policy,
            sleeper,
            structured: Mutex::new(StructuredOutput::default()),
        }
    }

    /// How schema calls currently ask this provider for JSON.
    pub fn structured_output(&self) -> StructuredOutput {
        *self.structured.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The provider refused `refused`: from now on ask at least one rung lower. True when this
    /// call is the one that taught it (a concurrent call may have learned it first).
    fn learn_refused(&self, refused: StructuredOutput, lower: StructuredOutput) -> bool {
        let mut learned = self.structured.lock().unwrap_or_else(|p| p.into_inner());
        let moved = *learned <= refused;
        *learned = (*learned).max(lower);
        moved
    }

    pub fn model_name(&self) -> String {
        self.model.name()
    }

    pub fn context_tokens(&self) -> Option<u32> {
        self.model.context_tokens()
    }

    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// Performs one logical model call. `on_attempt` hears about every attempt — failed,
    /// retried, repaired or successful — before the call returns.
    pub async fn call(
        &self,
        req: &ChatRequest,
        on_attempt: &mut (dyn FnMut(AttemptRecord) + Send),
    ) -> Result<GatewayReply, GatewayError> {
        self.call_with_progress(req, on_attempt, &|_| {}).await
    }

    /// [`Gateway::call`], with `progress` hearing each attempt's reply as it streams in (a
    /// new attempt number: the draft starts over). The reply is still validated whole before
    /// the call returns it; nothing `progress` hears is checked.
    pub async fn call_with_progress(
        &self,
        req: &ChatRequest,
        on_attempt: &mut (dyn FnMut(AttemptRecord) + Send),
        progress: ProgressSink<'_>,
    ) -> Result<GatewayReply, GatewayError> {
        let validator = match &req.schema {
            None => None,
            Some(schema) => Some(jsonschema::validator_for(&schema.schema).map_err(|e| {
                GatewayError::Fatal(ProviderError::Config(format!(
                    "the response schema \"{}\" is not a valid JSON schema: {e}",
                    schema.name
                )))
            })?),
        };
        let mut tally = Tally {
            attempts: 0,
            usage: Usage::default(),
        };
        let (reply, record) = self
            .until_answered(req, false, &mut tally, on_attempt, progress)
            .await?;
        let Some(validator) = validator else {
            on_attempt(record);
            return Ok(GatewayReply {
                content: reply.content,
                json: None,
                usage: tally.usage,
                attempts: tally.attempts,
            });
        };
        let problems = match check(&validator, &reply.content) {
            Ok(json) => {
                on_attempt(record);
                return Ok(GatewayReply {
                    content: reply.content,
                    json: Some(json),
                    usage: tally.usage,
                    attempts: tally.attempts,
                });
            }
            Err(problems) => problems,
        };
        on_attempt(invalid(record, &problems));

        let repair = repair_request(req, &reply.content, &problems);
        let (reply, record) = self
            .until_answered(&repair, true, &mut tally, on_attempt, progress)
            .await?;
        match check(&validator, &reply.content) {
            Ok(json) => {
                on_attempt(record);
                Ok(GatewayReply {
                    content: reply.content,
                    json: Some(json),
                    usage: tally.usage,
                    attempts: tally.attempts,
                })
            }
            Err(problems) => {
                on_attempt(invalid(record, &problems));
                Err(GatewayError::InvalidReply {
                    reply: reply.content,
                    problems,
                })
            }
        }
    }

    /// Attempts `base` until the provider answers, retrying what can be retried and moving
    /// down the structured-output ladder when the provider refuses the format fields. Failed
    /// attempts are reported here; the answered attempt's record is returned for the caller to
    /// complete.
    async fn until_answered(
        &self,
        base: &ChatRequest,
        repair: bool,
        tally: &mut Tally,
        on_attempt: &mut (dyn FnMut(AttemptRecord) + Send),
        progress: ProgressSink<'_>,
    ) -> Result<(ChatReply, AttemptRecord), GatewayError> {
        let provider = self.model.name();
        let max_attempts = self.policy.max_attempts.max(1);
        let mut failures = 0;
        loop {
            let req = at_rung(base, self.structured_output());
            tally.attempts += 1;
            let started = Instant::now();
            let first_text: Mutex<Option<Duration>> = Mutex::new(None);
            let attempt = tally.attempts;
            let sink = |p: Progress| {
                if !p.text_delta.is_empty() {
                    let mut first = first_text.lock().unwrap_or_else(|e| e.into_inner());
                    first.get_or_insert_with(|| started.elapsed());
                }
                progress(Progress { attempt, ..p });
            };
            let result =
                tokio::time::timeout(self.policy.call_timeout, self.model.stream(&req, &sink))
                    .await
                    .unwrap_or(Err(ProviderError::Timeout));
            let first_text = *first_text.lock().unwrap_or_else(|e| e.into_inner());
            let mut record = AttemptRecord {
                attempt: tally.attempts,
                provider: provider.clone(),
                request_hash: request_hash(&req),
                seed: req.seed,
                messages: self.model.sent_messages(&req.messages),
                reply: None,
                usage: Usage::default(),
                latency_ms: if self.model.timed() {
                    millis(started.elapsed())
                } else {
                    0
                },
                error: None,
                retry_in_ms: None,
                repair,
                structured_output: req.schema.as_ref().map(|_| req.structured),
                fell_back_to: None,
                first_token_ms: first_text.filter(|_| self.model.timed()).map(millis),
            };
            let err = match result {
                Ok(reply) => {
                    record.reply = Some(reply.content.clone());
                    record.usage = reply.usage;
                    tally.usage += reply.usage;
                    return Ok((reply, record));
                }
                Err(err) => err,
            };
            record.error = Some(err.to_string());
            if let Some(lower) = self.fallback(&req, &err) {
                // Not a transient fault: ask again at once, one rung lower, outside the budget.
                if self.learn_refused(req.structured, lower) {
                    record.fell_back_to = Some(lower);
                }
                record.error = Some(fallback_note(&err, req.structured, &record));
                on_attempt(record);
                continue;
            }
            if !err.is_retryable() {
                on_attempt(record);
                return Err(GatewayError::Fatal(err));
            }
            failures += 1;
            if failures >= max_attempts {
                on_attempt(record);
                return Err(GatewayError::Exhausted {
                    attempts: tally.attempts,
                    last: err,
                });
            }
            let delay = self.policy.delay_after(failures, &err);
            record.retry_in_ms = Some(millis(delay));
            on_attempt(record);
            self.sleeper.sleep(delay).await;
        }
    }

    /// The rung to ask on next when `err` refused the structured output of `req`.
    fn fallback(&self, req: &ChatRequest, err: &ProviderError) -> Option<StructuredOutput> {
        match err {
            ProviderError::Unsupported { .. } if req.schema.is_some() => req.structured.lower(),
            _ => None,
        }
    }
}

/// The error text of an attempt whose structured output was refused: what the provider said
/// and what happens next.
fn fallback_note(err: &ProviderError, refused: StructuredOutput, record: &AttemptRecord) -> String {
    match record.fell_back_to {
        Some(lower) => format!(
            "{err}; this provider does not accept {} output, so structured output falls back to \
             {} (the schema goes in the prompt) for the rest of the session",
            refused.as_str(),
            lower.as_str()
        ),
        None => format!(
            "{err}; structured output had already fallen back from {} for this session, asking \
             again on the learned rung",
            refused.as_str()
        ),
    }
}

/// `req` asking for JSON on `rung` (never higher than the caller asked). Below `json_schema` the
/// server no longer enforces the schema, so the system message carries it.
fn at_rung(req: &ChatRequest, rung: StructuredOutput) -> ChatRequest {
    let mut asked = req.clone();
    let Some(schema) = &req.schema else {
        return asked;
    };
    asked.structured = req.structured.max(rung);
    if asked.structured == StructuredOutput::JsonSchema {
        return asked;
    }
    let instruction = format!(
        "Answer with only one JSON object that matches this JSON schema (\"{}\"): no prose, no \
         code fences.\n{}",
        schema.name, schema.schema
    );
    match asked.messages.first_mut() {
        Some(first) if first.role == crate::Role::System => {
            first.content = format!("{}\n\n{instruction}", first.content);
        }
        _ => asked.messages.insert(0, Message::system(instruction)),
    }
    asked
}

fn invalid(record: AttemptRecord, problems: &[String]) -> AttemptRecord {
    AttemptRecord {
        error: Some(format!(
            "the reply did not match the schema: {}",
            problems.join("; ")
        )),
        ..record
    }
}

/// The original conversation, the bad reply, and what was wrong with it.
fn repair_request(req: &ChatRequest, bad_reply: &str, problems: &[String]) -> ChatRequest {
    let (name, schema) = match &req.schema {
        Some(s) => (s.name.as_str(), s.schema.to_string()),
        None => ("response", String::from("{}")),
    };
    let list: String = problems.iter().map(|p| format!("- {p}\n")).collect();
    let ask = format!(
        "Your previous reply cannot be used: it does not match the JSON schema \"{name}\".\n\
         Problems:\n{list}\n\
         The schema:\n{schema}\n\n\
         Reply with only the corrected JSON object: no prose, no code fences."
    );
    let mut repair = req.clone();
    repair.messages.push(Message::assistant(bad_reply));
    repair.messages.push(Message::user(ask));
    repair
}

/// sha256 (hex) of the messages and schema.
fn request_hash(req: &ChatRequest) -> String {
    let bytes = serde_json::to_vec(&(&req.messages, &req.schema)).unwrap_or_default();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_follow_the_schedule_and_repeat_the_last() {
        let policy = RetryPolicy::default();
        let secs: Vec<u64> = (1..=6)
            .map(|n| policy.delay_after(n, &ProviderError::Timeout).as_secs())
            .collect();
        assert_eq!(secs, [2, 5, 10, 20, 20, 20]);
    }

    #[test]
    fn retry_after_wins_when_longer_but_is_capped() {
        let policy = RetryPolicy::default();
        let asked = |s| ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(s)),
        };
        assert_eq!(policy.delay_after(1, &asked(7)), Duration::from_secs(7));
        assert_eq!(policy.delay_after(3, &asked(7)), Duration::from_secs(10));
        assert_eq!(policy.delay_after(1, &asked(3600)), Duration::from_secs(60));
    }

    #[test]
    fn request_hash_is_stable_hex_and_depends_on_messages() {
        let tag = crate::CallTag::new("a", "p");
        let one = ChatRequest::new(tag.clone(), vec![Message::user("hi")]);
        let two = ChatRequest::new(tag, vec![Message::user("hello")]);
        assert_eq!(request_hash(&one), request_hash(&one.clone()));
        assert_eq!(request_hash(&one).len(), 64);
        assert_ne!(request_hash(&one), request_hash(&two));
    }
}
