#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Shared helpers: a mock provider of either wire format, a gateway with a recording sleeper,
//! and canned requests and replies.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use troupe_llm::{
    AttemptRecord, CallTag, ChatModel, ChatRequest, Gateway, GatewayError, GatewayReply, Message,
    ProviderSpec, RecordingSleeper, ResponseSchema, RetryPolicy, connect_with_env,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub const OPENAI_KEY: &str = "sk-test-openai";
pub const ANTHROPIC_KEY: &str = "sk-ant-test";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

pub const BOTH: [Wire; 2] = [Wire::OpenAi, Wire::Anthropic];

/// What the mock model says.
pub enum Say {
    /// A structured answer: OpenAI content text, or an Anthropic forced tool call.
    Json(Value),
    /// Free text (for schema calls: a model that ignored the format).
    Text(&'static str),
}

impl Wire {
    pub fn endpoint(self) -> &'static str {
        match self {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
        }
    }

    pub fn key_var(self) -> &'static str {
        match self {
            Wire::OpenAi => "OPENAI_API_KEY",
            Wire::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The real provider spec, pointed at the mock through the documented base-URL variable.
    pub fn model(self, server: &MockServer) -> Arc<dyn ChatModel> {
        let (spec, base_var, base, key) = match self {
            Wire::OpenAi => (
                ProviderSpec::openai("gpt-test"),
                "OPENAI_BASE_URL",
                format!("{}/v1", server.uri()),
                OPENAI_KEY,
            ),
            Wire::Anthropic => (
                ProviderSpec::anthropic("claude-test"),
                "ANTHROPIC_BASE_URL",
                server.uri(),
                ANTHROPIC_KEY,
            ),
        };
        let key_var = self.key_var();
        let env = move |name: &str| match name {
            n if n == key_var => Some(key.to_string()),
            n if n == base_var => Some(base.clone()),
            _ => None,
        };
        match connect_with_env(&spec, Duration::from_secs(10), &env) {
            Ok(model) => model,
            Err(e) => panic!("connect failed: {e}"),
        }
    }

    pub fn ok(self, say: Say) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_json(self.body(say))
    }

    pub fn body(self, say: Say) -> Value {
        match (self, say) {
            (Wire::OpenAi, say) => {
                let content = match say {
                    Say::Json(v) => v.to_string(),
                    Say::Text(t) => t.to_string(),
                };
                json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test-0001",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
                })
            }
            (Wire::Anthropic, say) => {
                let block = match say {
                    Say::Json(v) => {
                        json!({"type": "tool_use", "id": "toolu_1", "name": "player_action", "input": v})
                    }
                    Say::Text(t) => json!({"type": "text", "text": t}),
                };
                json!({
                    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test-0001",
                    "content": [block], "stop_reason": "tool_use",
                    "usage": {"input_tokens": 12, "output_tokens": 5}
                })
            }
        }
    }

    /// Mounts `response` for the next `times` calls (mounted mocks are matched in order).
    pub async fn answer(self, server: &MockServer, response: ResponseTemplate, times: u64) {
        Mock::given(method("POST"))
            .and(path(self.endpoint()))
            .respond_with(response)
            .up_to_n_times(times)
            .mount(server)
            .await;
    }

    /// Mounts `response` for every remaining call.
    pub async fn always(self, server: &MockServer, response: ResponseTemplate) {
        Mock::given(method("POST"))
            .and(path(self.endpoint()))
            .respond_with(response)
            .mount(server)
            .await;
    }
}

pub fn action_schema() -> ResponseSchema {
    ResponseSchema {
        name: "player_action".into(),
        schema: json!({
            "type": "object",
            "properties": {"action": {"type": "string", "minLength": 3}},
            "required": ["action"]
        }),
    }
}

pub fn schema_request() -> ChatRequest {
    ChatRequest {
        tag: CallTag::new("zed", "action"),
        messages: vec![
            Message::system("You are Zed, a pilot on the Raptor."),
            Message::user("The alien ship opens fire. What do you do?"),
        ],
        schema: Some(action_schema()),
        max_tokens: 300,
        temperature: 0.7,
        seed: Some(42),
        stop: vec![],
        structured: troupe_llm::StructuredOutput::default(),
        cache_prefix: None,
    }
}

pub fn good_action() -> Value {
    json!({"action": "I swing the Raptor around and return fire"})
}

/// A gateway with the default 2/5/10/20 s schedule whose sleeper only records.
pub fn gateway(model: Arc<dyn ChatModel>) -> (Gateway, Arc<RecordingSleeper>) {
    gateway_with(
        model,
        RetryPolicy {
            call_timeout: Duration::from_secs(5),
            ..RetryPolicy::default()
        },
    )
}

pub fn gateway_with(
    model: Arc<dyn ChatModel>,
    policy: RetryPolicy,
) -> (Gateway, Arc<RecordingSleeper>) {
    let sleeper = Arc::new(RecordingSleeper::new());
    (Gateway::new(model, policy, sleeper.clone()), sleeper)
}

/// Runs one gateway call and collects every attempt record.
pub async fn call(
    gateway: &Gateway,
    req: &ChatRequest,
) -> (Result<GatewayReply, GatewayError>, Vec<AttemptRecord>) {
    let mut records = Vec::new();
    let result = gateway.call(req, &mut |r| records.push(r)).await;
    (result, records)
}

pub fn secs(list: &[u64]) -> Vec<Duration> {
    list.iter().copied().map(Duration::from_secs).collect()
}

/// The JSON bodies the mock received, in order.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
        .collect()
}
