#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Prompt caching on the wire: the Anthropic provider marks cache breakpoints on the stable
//! prefix, and both providers read the cached-token counts into the attempt record.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use troupe_llm::{
    AttemptRecord, CallTag, ChatModel, ChatRequest, Gateway, Message, ProviderSpec,
    RecordingSleeper, RetryPolicy, Usage, connect_with_env,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn anthropic(server: &MockServer) -> Arc<dyn ChatModel> {
    let base = server.uri();
    let env = move |name: &str| match name {
        "ANTHROPIC_API_KEY" => Some("test-key".to_string()),
        "ANTHROPIC_BASE_URL" => Some(base.clone()),
        _ => None,
    };
    connect_with_env(
        &ProviderSpec::anthropic("claude-test"),
        Duration::from_secs(10),
        &env,
    )
    .unwrap()
}

fn openai(server: &MockServer) -> Arc<dyn ChatModel> {
    let spec = ProviderSpec::openai_compatible(format!("{}/v1", server.uri()), "gpt-test", None);
    connect_with_env(&spec, Duration::from_secs(10), &|_| None).unwrap()
}

async fn call(model: Arc<dyn ChatModel>, req: &ChatRequest) -> Vec<AttemptRecord> {
    let gateway = Gateway::new(
        model,
        RetryPolicy::default(),
        Arc::new(RecordingSleeper::new()),
    );
    let mut records = Vec::new();
    gateway
        .call(req, &mut |r| records.push(r))
        .await
        .expect("the call succeeds");
    records
}

/// A conversation whose first three messages are the stable prefix.
fn conversation() -> ChatRequest {
    let mut req = ChatRequest::new(
        CallTag::new("zed", "action"),
        vec![
            Message::system("You are Zed, a pilot on the Raptor. The rules: ..."),
            Message::user("The story so far: the alien ship hailed us."),
            Message::assistant("Noted."),
            Message::user("The alien ship opens fire. What do you do?"),
        ],
    );
    req.cache_prefix = Some(3);
    req
}

async fn body_sent(server: &MockServer) -> Value {
    let requests = server.received_requests().await.unwrap();
    serde_json::from_slice(&requests[0].body).unwrap()
}

#[tokio::test]
async fn anthropic_marks_the_system_prompt_and_the_end_of_the_stable_prefix() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "claude-test", "content": [{"type": "text", "text": "I fire back."}],
            "usage": {"input_tokens": 30, "cache_read_input_tokens": 1800,
                      "cache_creation_input_tokens": 200, "output_tokens": 9}
        })))
        .mount(&server)
        .await;

    let records = call(anthropic(&server), &conversation()).await;

    let body = body_sent(&server).await;
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(body["system"][0]["cache_control"], ephemeral, "{body}");
    assert_eq!(
        body["system"][0]["text"],
        "You are Zed, a pilot on the Raptor. The rules: ..."
    );
    // Each message of the stable prefix ends a breakpoint (the shorter ones are shared by
    // more calls); the per-call ask gets none.
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0]["content"][0]["cache_control"], ephemeral);
    assert_eq!(
        messages[0]["content"][0]["text"],
        "The story so far: the alien ship hailed us."
    );
    assert_eq!(messages[1]["content"][0]["cache_control"], ephemeral);
    assert_eq!(messages[1]["content"][0]["text"], "Noted.");
    assert_eq!(
        messages[2]["content"],
        "The alien ship opens fire. What do you do?"
    );
    let breakpoints = body.to_string().matches("cache_control").count();
    assert!(
        breakpoints <= 4,
        "Anthropic allows at most 4: {breakpoints}"
    );

    // Input counts the whole prompt: uncached + read + written.
    assert_eq!(
        records[0].usage,
        Usage {
            input_tokens: 2030,
            cached_input_tokens: 1800,
            cache_write_tokens: 200,
            output_tokens: 9,
        }
    );
    assert_eq!(records[0].usage.uncached_input_tokens(), 30);
}

#[tokio::test]
async fn anthropic_answers_every_call_that_names_a_prefix_through_one_tool() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "claude-test",
            "content": [{"type": "tool_use", "id": "t", "name": "answer",
                         "input": {"action": "I fire back."}}],
            "usage": {"input_tokens": 30, "output_tokens": 9}
        })))
        .mount(&server)
        .await;
    let schema = json!({"type": "object", "properties": {"action": {"type": "string"}},
                        "required": ["action"]});
    let mut req = conversation();
    req.schema = Some(troupe_llm::ResponseSchema {
        name: "character_action".into(),
        schema: schema.clone(),
    });
    let records = call(anthropic(&server), &req).await;
    assert!(records[0].error.is_none(), "{:?}", records[0].error);
    let body = body_sent(&server).await;
    // The same tool whatever the schema, so calls for different purposes share the prefix
    // Anthropic caches (tools first); the schema is at the end of the last message.
    assert_eq!(body["tools"][0]["name"], "answer");
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    assert_eq!(body["tool_choice"]["name"], "answer");
    // (a block of its own, so a later call that repeats this ask still shares the prefix).
    let last = &body["messages"][2]["content"];
    assert_eq!(
        last[0]["text"], "The alien ship opens fire. What do you do?",
        "{last}"
    );
    assert_eq!(
        last[1]["text"],
        format!("The JSON schema: {schema}"),
        "{last}"
    );
    // The prefix before it is unchanged.
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "The story so far: the alien ship hailed us."
    );
}

#[tokio::test]
async fn without_a_stable_prefix_only_the_system_prompt_is_marked() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "claude-test", "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 12, "output_tokens": 1}
        })))
        .mount(&server)
        .await;
    // A repair-like conversation: the caller named no stable prefix, so the bad reply (never
    // repeated by a later call) gets no breakpoint and no cache-write premium.
    let req = ChatRequest::new(
        CallTag::new("zed", "action"),
        vec![
            Message::system("rules"),
            Message::user("what now?"),
            Message::assistant("not JSON"),
            Message::user("fix it"),
        ],
    );
    let records = call(anthropic(&server), &req).await;
    let body = body_sent(&server).await;
    assert_eq!(body.to_string().matches("cache_control").count(), 1);
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["messages"][1]["content"], "not JSON");
    // No cache fields in the reply: nothing cached, nothing written.
    assert_eq!(records[0].usage.cached_input_tokens, 0);
    assert_eq!(records[0].usage.cache_write_tokens, 0);
    assert_eq!(records[0].usage.input_tokens, 12);
}

#[tokio::test]
async fn openai_reads_cached_tokens_from_the_prompt_details() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "I fire back."}}],
            "usage": {"prompt_tokens": 2048, "completion_tokens": 9, "total_tokens": 2057,
                      "prompt_tokens_details": {"cached_tokens": 1920}}
        })))
        .mount(&server)
        .await;

    let records = call(openai(&server), &conversation()).await;

    let usage = records[0].usage;
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens
        ),
        (2048, 1920, 9)
    );
    assert_eq!(usage.uncached_input_tokens(), 128);
    // OpenAI caches on its own: the request carries no cache hints.
    assert!(
        !body_sent(&server)
            .await
            .to_string()
            .contains("cache_control")
    );
}

#[test]
fn old_records_without_cache_counts_still_read() {
    let old = json!({"input_tokens": 520, "output_tokens": 48});
    let usage: Usage = serde_json::from_value(old).unwrap();
    assert_eq!(usage.cached_input_tokens, 0);
    assert_eq!(usage.cache_write_tokens, 0);
    assert_eq!(usage.input_tokens, 520);
    // New records always say how much was cached (0 included).
    let written = serde_json::to_value(usage).unwrap();
    assert_eq!(written["cached_input_tokens"], 0);
}
