//! What can go wrong in a model call, worded so the person at the table can fix it.

use std::time::Duration;

/// A single attempt at a provider failed.
///
/// Whether the gateway tries again is decided by [`ProviderError::is_retryable`]: network
/// trouble, timeouts, rate limits and server errors pass; a rejected request or key will not
/// get better by asking again.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProviderError {
    #[error(
        "the model call timed out: the provider did not answer in time (check that the server is up, or raise the timeout for slow local models)"
    )]
    Timeout,
    #[error("the provider is rate limiting requests (HTTP 429){}", retry_hint(.retry_after))]
    RateLimited { retry_after: Option<Duration> },
    #[error("the provider had a server error (HTTP {status}): {body}")]
    Server { status: u16, body: String },
    /// 4xx other than 408 and 429. For 401/403 the body starts with which key variable to check.
    #[error("{}", rejected_message(*.status, .body))]
    Rejected { status: u16, body: String },
    /// The server refused one of the request's own fields (such as `response_format`), whatever
    /// HTTP status it chose to say so with: llama-cpp-python's server answers 500. Sending the
    /// same request again cannot help, so it is not retried; the gateway may ask another way.
    #[error("the provider refused the request's {field} (HTTP {status}): {body}")]
    Unsupported {
        field: String,
        status: u16,
        body: String,
    },
    #[error("could not reach the provider: {0} (is the server running and the base URL right?)")]
    Connect(String),
    /// The connection broke while the reply's body was arriving (reset, closed early): a
    /// network fault, so worth another try, unlike a complete reply that makes no sense.
    #[error("the provider's reply was cut off before it was complete: {0}")]
    Interrupted(String),
    #[error("the provider's reply could not be read: {0}")]
    BadReply(String),
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Replay(String),
}

impl ProviderError {
    /// True when the same request may succeed if sent again later.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::Timeout
                | ProviderError::RateLimited { .. }
                | ProviderError::Server { .. }
                | ProviderError::Connect(_)
                | ProviderError::Interrupted(_)
        )
    }
}

fn retry_hint(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!("; it asked to wait {:.1} s", d.as_secs_f64()),
        None => String::new(),
    }
}

fn rejected_message(status: u16, body: &str) -> String {
    match status {
        401 => format!("the provider rejected the API key (HTTP 401): {body}"),
        403 => format!("the provider refused access (HTTP 403): {body}"),
        404 => format!(
            "the provider does not know this endpoint or model (HTTP 404; check the base URL and model name): {body}"
        ),
        _ => format!("the provider rejected the request (HTTP {status}): {body}"),
    }
}

/// A gateway call failed for good.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GatewayError {
    /// Every allowed attempt failed with a retryable error.
    #[error("the model call failed after {attempts} attempts; last error: {last}")]
    Exhausted { attempts: u32, last: ProviderError },
    /// An error that retrying cannot fix (bad key, bad request, bad configuration, replay ran out).
    #[error("{0}")]
    Fatal(ProviderError),
    /// The reply did not match the schema, even after one repair re-ask.
    #[error(
        "the model's reply did not match the requested JSON schema, even after asking it to repair the reply: {}",
        .problems.join("; ")
    )]
    InvalidReply {
        reply: String,
        problems: Vec<String>,
    },
}
