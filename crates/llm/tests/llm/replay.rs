#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The replay provider: recorded replies by tag, in order, with clear errors.

use std::io::Write;
use std::sync::Arc;

use serde_json::json;
use troupe_llm::{
    CallTag, ChatModel, ChatRequest, Gateway, GatewayError, Message, ProviderError, ReplayEntry,
    ReplayModel, RetryPolicy, ScaledSleeper,
};

fn entry(agent: &str, purpose: &str, content: &str) -> ReplayEntry {
    ReplayEntry {
        agent: agent.into(),
        purpose: purpose.into(),
        content: content.into(),
    }
}

fn ask(agent: &str, purpose: &str) -> ChatRequest {
    ChatRequest::new(CallTag::new(agent, purpose), vec![Message::user("go")])
}

async fn reply(model: &ReplayModel, agent: &str, purpose: &str) -> Result<String, ProviderError> {
    model
        .complete(&ask(agent, purpose))
        .await
        .map(|r| r.content)
}

fn file(lines: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(lines.as_bytes()).unwrap();
    f
}

#[tokio::test]
async fn replies_come_in_file_order_per_agent_and_purpose() {
    let model = ReplayModel::from_entries(vec![
        entry("zed", "action", "zed 1"),
        entry("ava", "action", "ava 1"),
        entry("zed", "reaction", "zed reacts"),
        entry("zed", "action", "zed 2"),
    ]);
    // A different interleaving than recorded still gives each tag its own replies in order.
    assert_eq!(
        reply(&model, "zed", "reaction").await.unwrap(),
        "zed reacts"
    );
    assert_eq!(reply(&model, "zed", "action").await.unwrap(), "zed 1");
    assert_eq!(reply(&model, "zed", "action").await.unwrap(), "zed 2");
    assert_eq!(reply(&model, "ava", "action").await.unwrap(), "ava 1");
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn a_star_agent_answers_any_agent() {
    let model = ReplayModel::from_entries(vec![
        entry("*", "intent", "anyone 1"),
        entry("ava", "intent", "ava only"),
        entry("*", "intent", "anyone 2"),
    ]);
    assert_eq!(reply(&model, "zed", "intent").await.unwrap(), "anyone 1");
    assert_eq!(reply(&model, "zed", "intent").await.unwrap(), "anyone 2");
    assert_eq!(reply(&model, "ava", "intent").await.unwrap(), "ava only");
}

#[tokio::test]
async fn running_out_says_which_file_agent_and_purpose() {
    let f = file("{\"agent\": \"zed\", \"purpose\": \"action\", \"content\": \"one\"}\n");
    let model = ReplayModel::from_file(f.path()).unwrap();
    let shown = f.path().display().to_string();
    assert_eq!(model.name(), format!("replay:{shown}"));
    reply(&model, "zed", "action").await.unwrap();

    let err = reply(&model, "zed", "action").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("replay file {shown} has no more replies for agent zed, purpose action (used 1)")
    );
    let never = reply(&model, "ava", "questions").await.unwrap_err();
    assert!(
        never
            .to_string()
            .ends_with("agent ava, purpose questions (used 0)"),
        "{never}"
    );
}

#[tokio::test]
async fn running_out_through_the_gateway_is_fatal_not_retried() {
    let model = Arc::new(ReplayModel::from_entries(vec![]));
    let gateway = Gateway::new(
        model,
        RetryPolicy::default(),
        Arc::new(ScaledSleeper { factor: 0.0 }),
    );
    let err = gateway
        .call(&ask("zed", "action"), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, GatewayError::Fatal(ProviderError::Replay(_))),
        "{err:?}"
    );
}

#[tokio::test]
async fn comments_and_blank_lines_are_skipped_and_objects_stand_for_their_text() {
    let f = file(concat!(
        "// recorded 2025-01-01, session 1\n",
        "\n",
        "{\"agent\": \"zed\", \"purpose\": \"action\", \"content\": {\"action\": \"I dive\"}}\n",
        "   \n",
        "{\"agent\": \"zed\", \"purpose\": \"action\", \"content\": \"plain\"}\n",
    ));
    let model = ReplayModel::from_file(f.path()).unwrap();
    let first = reply(&model, "zed", "action").await.unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&first).unwrap(),
        json!({"action": "I dive"})
    );
    assert_eq!(reply(&model, "zed", "action").await.unwrap(), "plain");
}

#[tokio::test]
async fn a_bad_line_is_reported_as_file_and_line() {
    let f = file(concat!(
        "// header\n",
        "{\"agent\": \"zed\", \"purpose\": \"action\", \"content\": \"ok\"}\n",
        "\n",
        "{\"agent\": \"zed\", \"content\": \"no purpose\"}\n",
    ));
    let err = ReplayModel::from_file(f.path()).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{}:4:", f.path().display())),
        "{message}"
    );
    assert!(message.contains("purpose"), "{message}");

    let missing = ReplayModel::from_file("/no/such/replay.jsonl").unwrap_err();
    assert!(
        missing.to_string().contains("/no/such/replay.jsonl"),
        "{missing}"
    );
}

#[tokio::test]
async fn schema_calls_replay_through_the_gateway_with_validation() {
    let model = Arc::new(ReplayModel::from_entries(vec![
        entry("*", "action", "{\"nope\": 1}"),
        entry("*", "action", "{\"action\": \"I fire the lasers\"}"),
    ]));
    let gateway = Gateway::new(
        model,
        RetryPolicy::default(),
        Arc::new(ScaledSleeper { factor: 0.0 }),
    );
    let mut req = crate::support::schema_request();
    req.tag = CallTag::new("zed", "action");
    let reply = gateway.call(&req, &mut |_| {}).await.unwrap();
    assert_eq!(reply.json, Some(json!({"action": "I fire the lasers"})));
    assert_eq!(reply.attempts, 2, "the recorded repair reply was used");
    assert!(reply.usage.input_tokens > 0, "usage is estimated");
}

#[tokio::test]
async fn concurrent_callers_each_get_a_distinct_reply() {
    let entries = (0..32)
        .map(|i| entry("*", "action", &format!("reply {i}")))
        .collect();
    let model = Arc::new(ReplayModel::from_entries(entries));
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let model = model.clone();
            tokio::spawn(
                async move { reply(&model, &format!("agent{i}"), "action").await.unwrap() },
            )
        })
        .collect();
    let mut got = Vec::new();
    for t in tasks {
        got.push(t.await.unwrap());
    }
    got.sort();
    got.dedup();
    assert_eq!(got.len(), 32);
    assert_eq!(model.remaining(), 0);
}
