//! The provider-neutral shapes of a model call.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::ProviderError;

/// Who speaks a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    /// The role's name on the wire (both supported formats use the same words).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// `messages` with each run of consecutive messages of one role joined into one (a blank line
/// between them), for servers and chat templates that want the roles to alternate. A prompt's
/// text, and so the prefix a server caches, stays the same.
pub fn merge_consecutive(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for m in messages {
        match out.last_mut() {
            Some(last) if last.role == m.role => {
                last.content.push_str("\n\n");
                last.content.push_str(&m.content);
            }
            _ => out.push(m.clone()),
        }
    }
    out
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A JSON schema the reply must satisfy. `name` is what providers see (sanitised to
/// `[A-Za-z0-9_-]`, at most 64 characters, because both wire formats insist on that).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResponseSchema {
    pub name: String,
    pub schema: serde_json::Value,
}

/// How a schema call asks the provider for JSON. OpenAI-compatible servers differ: most accept
/// a JSON schema (`json_schema`), some only JSON mode (`json_object`, e.g. llama-cpp-python's
/// server), some neither. The gateway starts at the top and moves down a rung when a server
/// refuses the request's own format fields; below the top rung the schema is also written into
/// the prompt, and every reply is validated (and repaired once) whatever the rung.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// `response_format: {"type": "json_schema", ...}`: the server enforces the schema.
    #[default]
    JsonSchema,
    /// `response_format: {"type": "json_object"}` with the schema in the prompt.
    JsonObject,
    /// No format field; the schema in the prompt, the reply validated and repaired.
    Text,
}

impl StructuredOutput {
    /// The name used in logs: `json_schema`, `json_object` or `text`.
    pub fn as_str(self) -> &'static str {
        match self {
            StructuredOutput::JsonSchema => "json_schema",
            StructuredOutput::JsonObject => "json_object",
            StructuredOutput::Text => "text",
        }
    }

    /// The next rung down, if there is one.
    pub fn lower(self) -> Option<Self> {
        match self {
            StructuredOutput::JsonSchema => Some(StructuredOutput::JsonObject),
            StructuredOutput::JsonObject => Some(StructuredOutput::Text),
            StructuredOutput::Text => None,
        }
    }
}

/// Who is calling and why. Never sent to the provider: it labels log records and selects
/// replies in a replay file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CallTag {
    pub agent: String,
    pub purpose: String,
}

impl CallTag {
    pub fn new(agent: impl Into<String>, purpose: impl Into<String>) -> Self {
        Self {
            agent: agent.into(),
            purpose: purpose.into(),
        }
    }
}

/// Everything one model call needs, independent of the provider.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChatRequest {
    pub tag: CallTag,
    pub messages: Vec<Message>,
    /// When set, the provider is asked for JSON matching it and the gateway validates the reply.
    pub schema: Option<ResponseSchema>,
    pub max_tokens: u32,
    /// Sent as given to OpenAI-compatible servers; clamped to 0..=1 for Anthropic.
    pub temperature: f32,
    /// Sent where the provider supports it (OpenAI-compatible); ignored by Anthropic.
    pub seed: Option<u64>,
    pub stop: Vec<String>,
    /// How a schema call asks for JSON. Callers leave the default; the gateway lowers it to the
    /// rung the provider turned out to accept.
    #[serde(default)]
    pub structured: StructuredOutput,
    /// How many leading messages stay the same across calls (the stable prefix: rules,
    /// campaign, story so far), when the caller knows. The Anthropic provider puts a cache
    /// breakpoint on the last of them (the system prompt always gets one); OpenAI caches
    /// prefixes on its own. `None`: only the system prompt is marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_prefix: Option<usize>,
}

impl ChatRequest {
    /// A request with common defaults (1024 tokens, temperature 0.7, no schema, seed or stops).
    pub fn new(tag: CallTag, messages: Vec<Message>) -> Self {
        Self {
            tag,
            messages,
            schema: None,
            max_tokens: 1024,
            temperature: 0.7,
            seed: None,
            stop: Vec::new(),
            structured: StructuredOutput::default(),
            cache_prefix: None,
        }
    }
}

/// Tokens a call consumed, as reported by the provider or estimated when it does not say.
///
/// `input_tokens` counts the whole prompt, whatever the provider's own convention (OpenAI's
/// `prompt_tokens` already includes cached tokens; Anthropic's `input_tokens` excludes cache
/// reads and writes, so they are added back). `cached_input_tokens` and `cache_write_tokens` say
/// how much of it was read from and written to the provider's prompt cache, which bill at other
/// prices. Logs written before these counts existed read as 0 (nothing cached).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u32,
    /// Of `input_tokens`, read from the provider's prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u32,
    /// Of `input_tokens`, written to the prompt cache (Anthropic bills these above the input
    /// price; OpenAI caches for free and never reports any).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u32,
    pub output_tokens: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Usage {
    /// Estimated usage for providers that report none: about four characters per token.
    pub fn estimate(messages: &[Message], reply: &str) -> Self {
        let input: usize = messages.iter().map(|m| m.content.chars().count()).sum();
        Self {
            input_tokens: estimate_tokens_of_chars(input),
            output_tokens: estimate_tokens(reply),
            ..Self::default()
        }
    }

    pub fn total(&self) -> u32 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Input tokens billed at the full input price: neither read from nor written to a cache.
    pub fn uncached_input_tokens(&self) -> u32 {
        self.input_tokens
            .saturating_sub(self.cached_input_tokens)
            .saturating_sub(self.cache_write_tokens)
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(other.cached_input_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// A rough token count (characters / 4, rounded up), for budgets when the provider is silent.
pub fn estimate_tokens(text: &str) -> u32 {
    estimate_tokens_of_chars(text.chars().count())
}

fn estimate_tokens_of_chars(chars: usize) -> u32 {
    u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
}

/// What a provider answered.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChatReply {
    /// The text, or for a schema call the JSON object as text.
    pub content: String,
    pub usage: Usage,
    /// The model that answered, as the provider named it.
    pub model: String,
}

/// How far one attempt at a model call has got, reported while the reply streams in, so a
/// person need not stare at a silent screen. Nothing here has been validated yet: the gateway
/// checks the whole reply before anyone acts on it, so a caller shows `text_delta` only to whom
/// may see the unchecked draft.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The gateway attempt this belongs to (1-based, as in [`crate::AttemptRecord`]); a new
    /// number means the draft starts over (a retry, or the repair re-ask).
    pub attempt: u32,
    /// Tokens generated so far in this attempt (the provider's count where it streams one
    /// token per event, else estimated from the text).
    pub tokens: u32,
    /// Text generated since the last report; empty when only the count moved. For a schema
    /// call this is raw JSON as the model writes it.
    pub text_delta: String,
}

/// Where a caller hears a call's [`Progress`]. Called from the task that awaits the call (or the
/// local model's reply path), so it should only record or forward, never block.
pub type ProgressSink<'a> = &'a (dyn Fn(Progress) + Send + Sync);

/// One model behind one wire format. Implementations do a single attempt; retry, timeout and
/// validation live in the [`crate::Gateway`] so every provider gets them the same way.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// A human-readable identity for logs, e.g.
    /// `openai-compatible:gpt-4o-mini@http://localhost:11434/v1`. Never contains a key.
    fn name(&self) -> String;
    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError>;
    /// [`ChatModel::complete`], reporting the reply as it is generated. Providers that cannot
    /// stream (replay, a provider configured with `stream: false`) report the whole reply at
    /// once when it arrives; that is this default.
    async fn stream(
        &self,
        req: &ChatRequest,
        progress: ProgressSink<'_>,
    ) -> Result<ChatReply, ProviderError> {
        let reply = self.complete(req).await?;
        progress(Progress {
            attempt: 0,
            tokens: reply.usage.output_tokens,
            text_delta: reply.content.clone(),
        });
        Ok(reply)
    }
    /// The messages as this provider puts them on the wire (a chat API that wants the roles
    /// to alternate gets consecutive messages of one role joined): what the log records the
    /// model was shown.
    fn sent_messages(&self, messages: &[Message]) -> Vec<Message> {
        messages.to_vec()
    }
    /// A resumed session already received replies to these calls, in this order. A provider
    /// that answers from a fixed sequence (replay) moves past them; a live model ignores it.
    fn skip_served(&self, _served: &[CallTag]) {}
    /// Whether [`ChatModel::skip_served`] does anything: only then does a resume read the log's
    /// past model calls (most of its bytes).
    fn replays_served(&self) -> bool {
        false
    }
    /// Whether a call's wall time is the model's latency. Replayed replies take no model time:
    /// what a clock would read is the machine's scheduling noise, so the gateway logs 0 ms for
    /// them and a replayed batch reads the same on any machine, split or whole.
    fn timed(&self) -> bool {
        true
    }
    /// The model's context window in tokens, when the provider knows it (the embedded model
    /// does; hosted APIs do not say).
    fn context_tokens(&self) -> Option<u32> {
        None
    }
}
