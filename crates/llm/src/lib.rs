//! troupe-llm: the one gateway every model call goes through.
//!
//! Providers are *data* ([`ProviderSpec`]: wire format, base URL, model, key variable) turned into
//! a [`ChatModel`] by [`connect`]. The [`Gateway`] wraps any `ChatModel` with what every call needs
//! and no caller should re-implement: a per-call timeout, retry with backoff that honours
//! `Retry-After`, JSON-schema validation of structured replies with one repair re-ask, token
//! accounting, and an [`AttemptRecord`] for every attempt so the session log can replay it.
//! Structured output degrades on its own when a server refuses the request's format fields
//! ([`StructuredOutput`]: JSON schema, then JSON mode, then plain text, each with validation),
//! learned once per gateway and recorded on the attempt that taught it.
//!
//! With the `local` feature, [`local::LocalModel`] runs a GGUF model in-process with llama.cpp.
//!
//! [`ReplayModel`] answers from recorded replies, so demos and tests run without a network.
//!
//! This crate knows nothing about games: a call is tagged with an opaque agent and purpose
//! ([`CallTag`]) only so that logs and replay files can tell calls apart.

mod anthropic;
mod error;
mod gateway;
mod http;
mod json;
#[cfg(feature = "local")]
pub mod local;
mod openai;
mod provider;
mod replay;
mod sse;
mod stream;
mod types;

pub use error::{GatewayError, ProviderError};
pub use gateway::{
    AttemptRecord, Gateway, GatewayReply, RecordingSleeper, RetryPolicy, ScaledSleeper, Sleeper,
    TokioSleeper,
};
pub use json::extract_json;
pub use provider::{
    ANTHROPIC_DEFAULT_BASE_URL, OLLAMA_DEFAULT_BASE_URL, OPENAI_DEFAULT_BASE_URL, ProviderSpec,
    WireFormat, connect, connect_with_env,
};
pub use replay::{ReplayEntry, ReplayModel};
pub use stream::readable_draft;
pub use types::{
    CallTag, ChatModel, ChatReply, ChatRequest, Message, Progress, ProgressSink, ResponseSchema,
    Role, StructuredOutput, Usage, estimate_tokens,
};
