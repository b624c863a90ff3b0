//! The Anthropic Messages wire format.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::http::{join, sanitize_name, send_for_text, truncate};
use crate::openai::report_whole;
use crate::stream::{Flow, Streamed, cut_off, send_for_events};
use crate::{
    ChatModel, ChatReply, ChatRequest, Progress, ProgressSink, ProviderError, ResponseSchema, Role,
    Usage,
};

const API_VERSION: &str = "2023-06-01";

/// One Anthropic model. Deliberately not `Debug`: it holds the key.
pub(crate) struct AnthropicModel {
    client: reqwest::Client,
    name: String,
    base_url: String,
    model: String,
    key: Option<String>,
    key_env: Option<String>,
    /// Ask for the reply as a stream of server-sent events (`stream: true`).
    stream: bool,
}

impl AnthropicModel {
    pub(crate) fn new(
        client: reqwest::Client,
        name: String,
        base_url: String,
        model: String,
        key: Option<String>,
        key_env: Option<String>,
        stream: bool,
    ) -> Self {
        Self {
            client,
            name,
            base_url,
            model,
            key,
            key_env,
            stream,
        }
    }

    fn body(&self, req: &ChatRequest) -> Value {
        // Anthropic takes system text at the top level, not as a message.
        let system: Vec<&str> = req
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        // With a named stable prefix every call answers through the same tool (see
        // `answer_tool`), so the schema is written at the end of the last message instead.
        let one_tool = req.cache_prefix.is_some();
        let messages = alternating_messages(&conversation_blocks(req, one_tool));
        let temperature = (f64::from(req.temperature.clamp(0.0, 1.0)) * 1000.0).round() / 1000.0;
        let mut body = json!({
            "model": self.model,
            "max_tokens": req.max_tokens,
            "messages": messages,
            "temperature": temperature,
        });
        if !system.is_empty() {
            body["system"] = json!([cached_text(&system.join("\n\n"))]);
        }
        if !req.stop.is_empty() {
            body["stop_sequences"] = json!(req.stop);
        }
        if let Some(schema) = &req.schema {
            let (name, description, input_schema) = answer_tool(schema, one_tool);
            body["tools"] = json!([{
                "name": name,
                "description": description,
                "input_schema": input_schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": name});
        }
        body
    }

    fn request(&self, body: &Value) -> reqwest::RequestBuilder {
        let request = self
            .client
            .post(join(&self.base_url, "v1/messages"))
            .header("anthropic-version", API_VERSION)
            .json(body);
        match &self.key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    /// One streamed attempt: text and tool-input deltas go to `progress` as they arrive; the
    /// reply is then read exactly as a whole body would be.
    async fn send_streaming(
        &self,
        req: &ChatRequest,
        progress: ProgressSink<'_>,
    ) -> Result<ChatReply, ProviderError> {
        let mut body = self.body(req);
        body["stream"] = json!(true);
        let mut acc = Accumulated::default();
        let streamed = send_for_events(self.request(&body), self.key_env.as_deref(), &mut |d| {
            acc.event(d, progress)
        })
        .await?;
        match streamed {
            Streamed::Whole(text) => {
                let reply = self.parse(req, &text)?;
                report_whole(&reply, progress);
                Ok(reply)
            }
            Streamed::Events { done: false } => Err(cut_off(acc.chars)),
            Streamed::Events { done: true } => {
                let reply = acc.reply()?;
                self.parse_value(req, &reply, &reply.to_string())
            }
        }
    }

    fn parse(&self, req: &ChatRequest, text: &str) -> Result<ChatReply, ProviderError> {
        let reply: Value = serde_json::from_str(text)
            .map_err(|e| ProviderError::BadReply(format!("not JSON ({e}): {}", truncate(text))))?;
        self.parse_value(req, &reply, text)
    }

    /// Reads a reply object; `text` is what the server sent, quoted in errors.
    fn parse_value(
        &self,
        req: &ChatRequest,
        reply: &Value,
        text: &str,
    ) -> Result<ChatReply, ProviderError> {
        let Some(blocks) = reply["content"].as_array() else {
            return Err(ProviderError::BadReply(format!(
                "no content array in the reply: {}",
                truncate(text)
            )));
        };
        let tool_input = blocks
            .iter()
            .find(|b| b["type"] == "tool_use")
            .map(|b| &b["input"]);
        let content = match (req.schema.is_some(), tool_input) {
            (true, Some(input)) => input.to_string(),
            // No tool call: hand back the text, the gateway will validate (and repair) it.
            _ => blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
        };
        let estimate = Usage::estimate(&req.messages, &content);
        let count = |field: &str| {
            reply["usage"][field]
                .as_u64()
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        };
        // Anthropic's `input_tokens` leaves out what was read from or written to the cache;
        // troupe's input count is the whole prompt, so they are added back.
        let cached = count("cache_read_input_tokens").unwrap_or(0);
        let written = count("cache_creation_input_tokens").unwrap_or(0);
        let uncached = count("input_tokens");
        let usage = Usage {
            input_tokens: match uncached {
                Some(n) => n.saturating_add(cached).saturating_add(written),
                None => estimate.input_tokens,
            },
            cached_input_tokens: cached,
            cache_write_tokens: written,
            output_tokens: count("output_tokens").unwrap_or(estimate.output_tokens),
        };
        let model = reply["model"].as_str().unwrap_or(&self.model).to_string();
        Ok(ChatReply {
            content,
            usage,
            model,
        })
    }
}

/// One content block of a Messages stream, as far as it has arrived.
enum Block {
    Text(String),
    /// A tool call's input, as the JSON text it streams in.
    Tool(String),
    /// A block troupe does not read (thinking, …).
    Other,
}

/// A Messages stream read so far.
#[derive(Default)]
struct Accumulated {
    blocks: Vec<Block>,
    /// `message_start`'s usage, updated by `message_delta`.
    usage: serde_json::Map<String, Value>,
    model: Option<String>,
    /// Characters streamed, for the token estimate and the cut-off message.
    chars: usize,
}

impl Accumulated {
    fn event(&mut self, data: &str, progress: ProgressSink<'_>) -> Result<Flow, ProviderError> {
        let event: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::BadReply(format!(
                "a streamed event is not JSON ({e}): {}",
                truncate(data)
            ))
        })?;
        match event["type"].as_str().unwrap_or_default() {
            "message_start" => {
                let message = &event["message"];
                self.model = message["model"].as_str().map(str::to_string);
                if let Some(usage) = message["usage"].as_object() {
                    self.usage = usage.clone();
                }
            }
            "content_block_start" => {
                self.blocks
                    .push(match event["content_block"]["type"].as_str() {
                        Some("text") => Block::Text(String::new()),
                        Some("tool_use") => Block::Tool(String::new()),
                        _ => Block::Other,
                    })
            }
            "content_block_delta" => self.delta(&event["delta"], progress),
            "message_delta" => {
                if let Some(usage) = event["usage"].as_object() {
                    self.usage.extend(usage.clone());
                }
            }
            "message_stop" => return Ok(Flow::Done),
            "error" => return Err(stream_error(&event["error"])),
            _ => {} // ping, content_block_stop
        }
        Ok(Flow::More)
    }

    fn delta(&mut self, delta: &Value, progress: ProgressSink<'_>) {
        let (text, into_tool) = match delta["type"].as_str() {
            Some("text_delta") => (delta["text"].as_str(), false),
            Some("input_json_delta") => (delta["partial_json"].as_str(), true),
            _ => (None, false),
        };
        let Some(text) = text.filter(|t| !t.is_empty()) else {
            return;
        };
        match (self.blocks.last_mut(), into_tool) {
            (Some(Block::Text(t)), false) | (Some(Block::Tool(t)), true) => t.push_str(text),
            _ => return,
        }
        self.chars += text.chars().count();
        progress(Progress {
            attempt: 0,
            // Anthropic's deltas carry several tokens each: the count is estimated.
            tokens: estimate_tokens_of(self.chars),
            text_delta: text.to_string(),
        });
    }

    /// The stream as the non-streamed reply it stands for.
    fn reply(&self) -> Result<Value, ProviderError> {
        let mut content = Vec::new();
        for block in &self.blocks {
            match block {
                Block::Text(text) => content.push(json!({"type": "text", "text": text})),
                Block::Tool(input) => {
                    let input = if input.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(input).map_err(|e| {
                            ProviderError::BadReply(format!(
                                "the streamed tool input is not JSON ({e}): {}",
                                truncate(input)
                            ))
                        })?
                    };
                    content.push(json!({"type": "tool_use", "input": input}));
                }
                Block::Other => {}
            }
        }
        let mut reply = json!({"content": content, "usage": self.usage});
        if let Some(model) = &self.model {
            reply["model"] = json!(model);
        }
        Ok(reply)
    }
}

fn estimate_tokens_of(chars: usize) -> u32 {
    u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
}

/// An `error` event: Anthropic's overload and server errors are worth another try, as their
/// HTTP statuses would be.
fn stream_error(error: &Value) -> ProviderError {
    let body = truncate(&error.to_string());
    match error["type"].as_str().unwrap_or_default() {
        "overloaded_error" => ProviderError::Server { status: 529, body },
        "api_error" => ProviderError::Server { status: 500, body },
        "rate_limit_error" => ProviderError::RateLimited { retry_after: None },
        _ => {
            ProviderError::Interrupted(format!("the provider reported an error mid-stream: {body}"))
        }
    }
}

/// The conversation's text blocks in order, each as (role, text, whether it ends a cache
/// breakpoint): the non-system messages, then the schema when every call answers through one
/// tool (`one_tool`).
fn conversation_blocks(req: &ChatRequest, one_tool: bool) -> Vec<(Role, String, bool)> {
    let marked = stable_prefix_marks(req);
    let mut blocks: Vec<(Role, String, bool)> = req
        .messages
        .iter()
        .filter(|m| m.role != Role::System)
        .enumerate()
        .map(|(i, m)| (m.role, m.content.clone(), marked.contains(&i)))
        .collect();
    if let (Some(schema), true) = (&req.schema, one_tool) {
        // A block of its own after the ask: a later call that repeats this ask earlier in
        // its conversation (a reaction after its action) still shares the prefix up to it.
        blocks.push((
            Role::User,
            format!("The JSON schema: {}", schema.schema),
            false,
        ));
    }
    blocks
}

/// The messages the API is sent: consecutive blocks of one role go as one message of several
/// text blocks (the API wants the roles to alternate).
fn alternating_messages(blocks: &[(Role, String, bool)]) -> Vec<Value> {
    blocks
        .chunk_by(|a, b| a.0 == b.0)
        .filter_map(message)
        .collect()
}

/// One message of a run of blocks of one role (`None` for no blocks): a lone plain block as a
/// string, anything else as a list of text blocks, as a breakpoint needs a block of its own.
fn message(run: &[(Role, String, bool)]) -> Option<Value> {
    let (role, _, _) = run.first()?;
    let content = match run {
        [(_, text, false)] => json!(text),
        blocks => json!(
            blocks
                .iter()
                .map(|(_, text, mark)| if *mark {
                    cached_text(text)
                } else {
                    json!({"type": "text", "text": text})
                })
                .collect::<Vec<_>>()
        ),
    };
    Some(json!({"role": role.as_str(), "content": content}))
}

/// The tool a schema call is made to answer through, as (name, description, input schema):
/// forcing a tool is Anthropic's way to get JSON that follows a schema. Anthropic caches the
/// tools first: with `one_tool` (a request that names a stable prefix) the tool is the same
/// whatever the schema, so calls for different purposes share the cached prefix (the gateway
/// still checks the reply against the schema).
fn answer_tool(schema: &ResponseSchema, one_tool: bool) -> (String, &'static str, Value) {
    if one_tool {
        (
            "answer".to_string(),
            "Your answer.",
            json!({"type": "object"}),
        )
    } else {
        (
            sanitize_name(&schema.name),
            "Give your answer by calling this tool with the requested fields.",
            schema.schema.clone(),
        )
    }
}

/// A text block that ends a cache breakpoint: Anthropic caches the prompt up to and including
/// it (for five minutes, refreshed on every hit) and bills later calls with the same prefix at
/// the cache-read price.
fn cached_text(text: &str) -> Value {
    json!({"type": "text", "text": text, "cache_control": {"type": "ephemeral"}})
}

/// Which conversation messages (counting only non-system ones, as Anthropic does) end a cache
/// breakpoint: each of the stable prefix the caller named, as its parts are shared by more
/// calls the shorter they are (a party's story by every seat, a seat's own part by its own
/// calls). With the system prompt's breakpoint that makes at most the four Anthropic allows.
/// Nothing else is marked: a breakpoint on a prefix no later call repeats (a repair re-ask's
/// bad reply) would only pay the cache-write premium.
fn stable_prefix_marks(req: &ChatRequest) -> Vec<usize> {
    let Some(n) = req.cache_prefix else {
        return Vec::new();
    };
    let turns = req
        .messages
        .iter()
        .take(n.min(req.messages.len()))
        .filter(|m| m.role != Role::System)
        .count();
    (turns.saturating_sub(3)..turns).collect()
}

#[async_trait]
impl ChatModel for AnthropicModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        let text = send_for_text(self.request(&self.body(req)), self.key_env.as_deref()).await?;
        self.parse(req, &text)
    }

    async fn stream(
        &self,
        req: &ChatRequest,
        progress: ProgressSink<'_>,
    ) -> Result<ChatReply, ProviderError> {
        if self.stream {
            return self.send_streaming(req, progress).await;
        }
        let reply = self.complete(req).await?;
        report_whole(&reply, progress);
        Ok(reply)
    }
}
