//! The OpenAI chat-completions wire format, spoken by OpenAI, Ollama (`/v1`), vLLM,
//! llama-server and LM Studio.

use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::http::{join, sanitize_name, send_for_text, truncate};
use crate::stream::{Flow, Streamed, cut_off, send_for_events};
use crate::{
    ChatModel, ChatReply, ChatRequest, Progress, ProgressSink, ProviderError, StructuredOutput,
    Usage,
};

/// One model on an OpenAI-compatible server. Deliberately not `Debug`: it holds the key.
pub(crate) struct OpenAiModel {
    client: reqwest::Client,
    name: String,
    base_url: String,
    model: String,
    key: Option<String>,
    key_env: Option<String>,
    /// Ask for the reply as a stream of server-sent events (`stream: true`).
    stream: bool,
    quirks: Quirks,
}

/// Request parameters this server turned out to refuse, learned from its error replies so later
/// calls skip the doomed first try: OpenAI's reasoning models want `max_completion_tokens` and
/// no `temperature`. (Refused `response_format` rungs are the gateway's business: it logs them
/// and writes the schema into the prompt; see [`crate::StructuredOutput`].)
#[derive(Default)]
struct Quirks {
    max_completion_tokens: AtomicBool,
    no_temperature: AtomicBool,
}

impl Quirks {
    /// Learns from a rejection; true when there is something new to try.
    fn learn(&self, err: &ProviderError) -> bool {
        let Some(body) = refusal_body(err) else {
            return false;
        };
        let mentions = |word: &str| body.contains(word);
        let flip = |flag: &AtomicBool| !flag.swap(true, Ordering::Relaxed);
        if mentions("max_completion_tokens") {
            return flip(&self.max_completion_tokens);
        }
        if mentions("temperature") && (mentions("unsupported") || mentions("not support")) {
            return flip(&self.no_temperature);
        }
        false
    }

    fn on(flag: &AtomicBool) -> bool {
        flag.load(Ordering::Relaxed)
    }
}

/// The lower-cased body of an error reply that may be about the request itself. Servers say so
/// with 400 or 422, but some with 500 (llama-cpp-python wraps every validation error in a 500),
/// so any 4xx or 5xx reply qualifies; its body decides.
fn refusal_body(err: &ProviderError) -> Option<String> {
    match err {
        ProviderError::Rejected { status, body } | ProviderError::Server { status, body }
            if (400..600).contains(status) =>
        {
            Some(body.to_ascii_lowercase())
        }
        _ => None,
    }
}

/// A refusal that names the structured-output fields of a request that carried them becomes
/// [`ProviderError::Unsupported`]: not a transient fault, and the gateway's cue to ask lower.
fn classify_format_refusal(err: ProviderError, req: &ChatRequest) -> ProviderError {
    let sent_format = req.schema.is_some() && req.structured != StructuredOutput::Text;
    let Some(body) = refusal_body(&err).filter(|_| sent_format) else {
        return err;
    };
    if !["response_format", "json_schema", "json_object"]
        .iter()
        .any(|field| body.contains(field))
    {
        return err;
    }
    match err {
        ProviderError::Rejected { status, body } | ProviderError::Server { status, body } => {
            ProviderError::Unsupported {
                field: format!("response_format {}", req.structured.as_str()),
                status,
                body,
            }
        }
        other => other,
    }
}

impl OpenAiModel {
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
            quirks: Quirks::default(),
        }
    }

    fn body(&self, req: &ChatRequest) -> Value {
        let messages: Vec<Value> = crate::types::merge_consecutive(&req.messages)
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let mut body = json!({"model": self.model, "messages": messages});
        if Quirks::on(&self.quirks.max_completion_tokens) {
            body["max_completion_tokens"] = json!(req.max_tokens);
        } else {
            body["max_tokens"] = json!(req.max_tokens);
        }
        if !Quirks::on(&self.quirks.no_temperature) {
            body["temperature"] = json!(rounded(req.temperature));
        }
        if let Some(seed) = req.seed {
            body["seed"] = json!(seed);
        }
        if !req.stop.is_empty() {
            body["stop"] = json!(req.stop);
        }
        if let Some(format) = response_format(req) {
            body["response_format"] = format;
        }
        body
    }

    fn request(&self, body: &Value) -> reqwest::RequestBuilder {
        let request = self
            .client
            .post(join(&self.base_url, "chat/completions"))
            .json(body);
        match &self.key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    async fn send(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        let text = send_for_text(self.request(&self.body(req)), self.key_env.as_deref())
            .await
            .map_err(|e| classify_format_refusal(e, req))?;
        self.parse(req, &text)
    }

    /// One streamed attempt: the deltas go to `progress` as they arrive; the reply is then
    /// read exactly as a whole body would be.
    async fn send_streaming(
        &self,
        req: &ChatRequest,
        progress: ProgressSink<'_>,
    ) -> Result<ChatReply, ProviderError> {
        let mut body = self.body(req);
        body["stream"] = json!(true);
        // The usage arrives in a last chunk only when asked for; servers that do not know the
        // option ignore it, and the count is estimated as for a body without usage.
        body["stream_options"] = json!({"include_usage": true});
        let mut acc = Accumulated::default();
        let streamed = send_for_events(self.request(&body), self.key_env.as_deref(), &mut |d| {
            acc.event(d, progress)
        })
        .await
        .map_err(|e| classify_format_refusal(e, req))?;
        match streamed {
            Streamed::Whole(text) => {
                let reply = self.parse(req, &text)?;
                report_whole(&reply, progress);
                Ok(reply)
            }
            Streamed::Events { done } if !done && !acc.finished => {
                Err(cut_off(acc.content.chars().count()))
            }
            Streamed::Events { .. } => {
                let reply = acc.reply();
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
        let message = &reply["choices"][0]["message"];
        if message.is_null() {
            return Err(ProviderError::BadReply(format!(
                "no choices[0].message in the reply: {}",
                truncate(text)
            )));
        }
        let content = match &message["content"] {
            Value::String(s) => s.clone(),
            // Some servers send content as a list of parts.
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => match message["refusal"].as_str() {
                Some(refusal) => {
                    return Err(ProviderError::BadReply(format!(
                        "the model refused: {refusal}"
                    )));
                }
                None => {
                    return Err(ProviderError::BadReply(format!(
                        "choices[0].message has no text content: {}",
                        truncate(text)
                    )));
                }
            },
        };
        let estimate = Usage::estimate(&req.messages, &content);
        let count = |field: &str| {
            reply["usage"][field]
                .as_u64()
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        };
        // OpenAI's `prompt_tokens` includes the cached ones; servers that cache nothing (or do
        // not say) send no `prompt_tokens_details`.
        let cached = reply["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
        let input_tokens = count("prompt_tokens").unwrap_or(estimate.input_tokens);
        let usage = Usage {
            input_tokens,
            cached_input_tokens: cached.min(input_tokens),
            cache_write_tokens: 0,
            output_tokens: count("completion_tokens").unwrap_or(estimate.output_tokens),
        };
        let model = reply["model"].as_str().unwrap_or(&self.model).to_string();
        Ok(ChatReply {
            content,
            usage,
            model,
        })
    }
}

/// A whole reply reported at once, for a server that did not stream.
pub(crate) fn report_whole(reply: &ChatReply, progress: ProgressSink<'_>) {
    progress(Progress {
        attempt: 0,
        tokens: reply.usage.output_tokens,
        text_delta: reply.content.clone(),
    });
}

/// A chat-completions stream read so far.
#[derive(Default)]
struct Accumulated {
    content: String,
    refusal: String,
    /// Chunks that carried text: servers send one token per chunk.
    chunks: u32,
    /// A choice said why it finished (some servers end without `[DONE]`).
    finished: bool,
    usage: Value,
    model: Option<String>,
}

impl Accumulated {
    fn event(&mut self, data: &str, progress: ProgressSink<'_>) -> Result<Flow, ProviderError> {
        if data.trim() == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::BadReply(format!(
                "a streamed event is not JSON ({e}): {}",
                truncate(data)
            ))
        })?;
        if let Some(error) = chunk.get("error") {
            // The server failed after it had started answering: a fault worth another try.
            return Err(ProviderError::Interrupted(format!(
                "the provider reported an error mid-stream: {}",
                truncate(&error.to_string())
            )));
        }
        if let Some(model) = chunk["model"].as_str() {
            self.model = Some(model.to_string());
        }
        if chunk["usage"].is_object() {
            self.usage = chunk["usage"].clone();
        }
        let choice = &chunk["choices"][0];
        if let Some(text) = choice["delta"]["content"]
            .as_str()
            .filter(|t| !t.is_empty())
        {
            self.content.push_str(text);
            self.chunks += 1;
            progress(Progress {
                attempt: 0,
                tokens: self.chunks,
                text_delta: text.to_string(),
            });
        }
        if let Some(refusal) = choice["delta"]["refusal"].as_str() {
            self.refusal.push_str(refusal);
        }
        if choice["finish_reason"].is_string() {
            self.finished = true;
        }
        Ok(Flow::More)
    }

    /// The stream as the non-streamed reply it stands for.
    fn reply(&self) -> Value {
        let message = if self.content.is_empty() && !self.refusal.is_empty() {
            json!({"role": "assistant", "content": null, "refusal": self.refusal})
        } else {
            json!({"role": "assistant", "content": self.content})
        };
        let mut reply = json!({"choices": [{"index": 0, "message": message}], "usage": self.usage});
        if let Some(model) = &self.model {
            reply["model"] = json!(model);
        }
        reply
    }
}

/// The `response_format` of a schema call at the request's rung. JSON mode also carries the
/// schema under `schema`: llama-cpp-python's server turns it into a grammar (the JSON then
/// follows the schema), and servers that do not know the key ignore it.
fn response_format(req: &ChatRequest) -> Option<Value> {
    let schema = req.schema.as_ref()?;
    match req.structured {
        StructuredOutput::JsonSchema => Some(json!({
            "type": "json_schema",
            "json_schema": {
                "name": sanitize_name(&schema.name),
                "schema": schema.schema,
                "strict": false,
            },
        })),
        StructuredOutput::JsonObject => {
            Some(json!({"type": "json_object", "schema": schema.schema}))
        }
        StructuredOutput::Text => None,
    }
}

/// `0.7f32` serialises as `0.699999988079071`; send what the caller meant.
fn rounded(t: f32) -> f64 {
    (f64::from(t) * 1000.0).round() / 1000.0
}

#[async_trait]
impl ChatModel for OpenAiModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn sent_messages(&self, messages: &[crate::types::Message]) -> Vec<crate::types::Message> {
        crate::types::merge_consecutive(messages)
    }

    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        // Each lesson sets a flag that was unset, so this asks at most three times.
        loop {
            match self.send(req).await {
                Err(err) if self.quirks.learn(&err) => continue,
                other => return other,
            }
        }
    }

    async fn stream(
        &self,
        req: &ChatRequest,
        progress: ProgressSink<'_>,
    ) -> Result<ChatReply, ProviderError> {
        if !self.stream {
            let reply = self.complete(req).await?;
            report_whole(&reply, progress);
            return Ok(reply);
        }
        loop {
            match self.send_streaming(req, progress).await {
                Err(err) if self.quirks.learn(&err) => continue,
                other => return other,
            }
        }
    }
}
