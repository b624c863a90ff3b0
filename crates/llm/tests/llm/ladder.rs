//! The structured-output ladder against a mock that answers as llama-cpp-python's server does:
//! `json_schema` refused with HTTP 500 and a validation error naming `response_format`,
//! `json_object` answered. Refusals of the request's own fields are not transient faults.

use serde_json::Value;
use troupe_llm::{ChatRequest, GatewayError, StructuredOutput};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::support::*;

/// What llama-cpp-python 0.3.36's server answers to `response_format: {"type": "json_schema"}`:
/// its route handler turns the pydantic validation error into a 500.
const LLAMA_CPP_PYTHON_REFUSAL: &str = r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions","type":"internal_server_error","param":null,"code":null}}"#;

struct LlamaCppPython;

impl Respond for LlamaCppPython {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        match body["response_format"]["type"].as_str() {
            Some("json_schema") => ResponseTemplate::new(500)
                .set_body_raw(LLAMA_CPP_PYTHON_REFUSAL, "application/json"),
            Some("json_object" | "text") | None => ResponseTemplate::new(200)
                .set_body_json(Wire::OpenAi.body(Say::Json(good_action()))),
            Some(other) => ResponseTemplate::new(500).set_body_string(format!("unknown {other}")),
        }
    }
}

async fn llama_cpp_python() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(LlamaCppPython)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn llama_cpp_python_refusing_json_schema_moves_to_json_object_at_once_and_remembers() {
    let server = llama_cpp_python().await;
    let (gateway, sleeper) = gateway(Wire::OpenAi.model(&server));

    let (result, records) = call(&gateway, &schema_request()).await;
    assert_eq!(result.unwrap().json, Some(good_action()));
    let [refused, answered] = &records[..] else {
        panic!("expected the refusal and the answer: {records:?}");
    };
    // The refusal is logged with the server's words, the rung it was on and where it went.
    assert_eq!(
        refused.structured_output,
        Some(StructuredOutput::JsonSchema)
    );
    assert_eq!(refused.fell_back_to, Some(StructuredOutput::JsonObject));
    let err = refused.error.as_deref().unwrap();
    assert!(
        err.contains("HTTP 500") && err.contains("response_format"),
        "{err}"
    );
    assert!(err.contains("falls back to json_object"), "{err}");
    assert_eq!(
        refused.retry_in_ms, None,
        "not a transient fault: no backoff"
    );
    assert_eq!(
        answered.structured_output,
        Some(StructuredOutput::JsonObject)
    );
    assert_eq!(answered.fell_back_to, None);
    assert!(answered.error.is_none());
    assert!(sleeper.requested().is_empty());

    // JSON mode, with the schema in the request (llama-cpp-python makes it a grammar) and in
    // the system message; the conversation is otherwise unchanged.
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 2);
    let format = &sent[1]["response_format"];
    assert_eq!(format["type"], "json_object");
    assert_eq!(format["schema"], action_schema().schema);
    let system = sent[1]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("You are Zed, a pilot on the Raptor."),
        "{system}"
    );
    assert!(
        system.contains("\"player_action\"") && system.contains("\"minLength\":3"),
        "{system}"
    );
    assert_eq!(sent[1]["messages"][1], sent[0]["messages"][1]);
    assert_eq!(
        answered.messages[0].content, system,
        "the log shows what was sent"
    );

    // Learned once: every later call asks in JSON mode first.
    for _ in 0..3 {
        let (result, records) = call(&gateway, &schema_request()).await;
        assert!(result.is_ok());
        assert_eq!(records.len(), 1);
        assert_eq!(
            records[0].structured_output,
            Some(StructuredOutput::JsonObject)
        );
    }
    assert_eq!(bodies(&server).await.len(), 5);
    assert_eq!(gateway.structured_output(), StructuredOutput::JsonObject);
}

#[tokio::test]
async fn concurrent_calls_learn_the_fallback_once() {
    let server = llama_cpp_python().await;
    let (gateway, _) = gateway(Wire::OpenAi.model(&server));
    let req = schema_request();
    let (a, b, c, d) = tokio::join!(
        call(&gateway, &req),
        call(&gateway, &req),
        call(&gateway, &req),
        call(&gateway, &req)
    );
    let results = [a, b, c, d];
    let records: Vec<_> = results.iter().flat_map(|(_, r)| r.clone()).collect();
    assert!(results.iter().all(|(r, _)| r.is_ok()));
    let learned = records.iter().filter(|r| r.fell_back_to.is_some()).count();
    assert_eq!(learned, 1, "{records:?}");
    // Calls refused on the abandoned rung say so, and none waited.
    for r in records.iter().filter(|r| r.error.is_some()) {
        assert_eq!(r.structured_output, Some(StructuredOutput::JsonSchema));
        assert!(r.retry_in_ms.is_none());
    }
}

#[tokio::test]
async fn a_500_that_does_not_name_the_request_is_still_a_transient_fault() {
    let server = MockServer::start().await;
    Wire::OpenAi
        .answer(
            &server,
            ResponseTemplate::new(500).set_body_string("CUDA out of memory"),
            1,
        )
        .await;
    Wire::OpenAi
        .always(&server, Wire::OpenAi.ok(Say::Json(good_action())))
        .await;
    let (gateway, sleeper) = gateway(Wire::OpenAi.model(&server));
    let (result, records) = call(&gateway, &schema_request()).await;
    assert!(result.is_ok());
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].retry_in_ms, Some(2000));
    assert_eq!(
        records[1].structured_output,
        Some(StructuredOutput::JsonSchema)
    );
    assert_eq!(sleeper.requested(), secs(&[2]));
    assert_eq!(gateway.structured_output(), StructuredOutput::JsonSchema);
}

#[tokio::test]
async fn a_refusal_naming_response_format_on_a_plain_call_is_not_a_fallback() {
    // No format was sent, so the server's words cannot be about it: an ordinary server error.
    let server = MockServer::start().await;
    Wire::OpenAi
        .always(
            &server,
            ResponseTemplate::new(500).set_body_raw(LLAMA_CPP_PYTHON_REFUSAL, "application/json"),
        )
        .await;
    let (gateway, _) = gateway(Wire::OpenAi.model(&server));
    let plain = ChatRequest {
        schema: None,
        ..schema_request()
    };
    let (result, records) = call(&gateway, &plain).await;
    assert!(
        matches!(result, Err(GatewayError::Exhausted { attempts: 5, .. })),
        "{result:?}"
    );
    assert!(
        records
            .iter()
            .all(|r| r.structured_output.is_none() && r.fell_back_to.is_none())
    );
}
