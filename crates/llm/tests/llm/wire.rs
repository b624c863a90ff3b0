#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! What goes over the wire for each format, and how replies are read.

use serde_json::json;
use troupe_llm::{
    CallTag, ChatRequest, GatewayError, Message, ProviderError, ProviderSpec, StructuredOutput,
    connect_with_env,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::support::*;

#[tokio::test]
async fn openai_schema_call_sends_response_format_and_returns_the_validated_object() {
    let server = MockServer::start().await;
    Wire::OpenAi
        .always(&server, Wire::OpenAi.ok(Say::Json(good_action())))
        .await;
    let (gateway, _) = gateway(Wire::OpenAi.model(&server));

    let (result, records) = call(&gateway, &schema_request()).await;
    let reply = result.unwrap();
    assert_eq!(reply.json, Some(good_action()));
    assert_eq!(reply.attempts, 1);
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (12, 5)
    );
    assert_eq!(records.len(), 1);

    let requests = server.received_requests().await.unwrap();
    let auth = requests[0]
        .headers
        .get("authorization")
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(auth, format!("Bearer {OPENAI_KEY}"));
    let body: serde_json::Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(
        body["response_format"]["json_schema"]["name"],
        "player_action"
    );
    assert_eq!(body["response_format"]["json_schema"]["strict"], false);
    assert_eq!(
        body["response_format"]["json_schema"]["schema"],
        action_schema().schema
    );
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are Zed, a pilot on the Raptor."})
    );
    assert_eq!(body["seed"], 42);
    assert_eq!(body["temperature"], 0.7);
    assert_eq!(body["max_tokens"], 300);
    // The tag is ours, never the provider's business.
    assert!(!body.to_string().contains("zed\""), "{body}");
}

#[tokio::test]
async fn anthropic_schema_call_forces_the_tool_and_returns_its_input() {
    let server = MockServer::start().await;
    Wire::Anthropic
        .always(&server, Wire::Anthropic.ok(Say::Json(good_action())))
        .await;
    let (gateway, _) = gateway(Wire::Anthropic.model(&server));

    let reply = call(&gateway, &schema_request()).await.0.unwrap();
    assert_eq!(reply.json, Some(good_action()));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&reply.content).unwrap(),
        good_action()
    );
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (12, 5)
    );

    let requests = server.received_requests().await.unwrap();
    let header = |name: &str| {
        requests[0]
            .headers
            .get(name)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(header("x-api-key"), ANTHROPIC_KEY);
    assert_eq!(header("anthropic-version"), "2023-06-01");
    let body: serde_json::Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(
        body["system"][0]["text"],
        "You are Zed, a pilot on the Raptor."
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "The alien ship opens fire. What do you do?"}])
    );
    assert_eq!(body["tools"][0]["name"], "player_action");
    assert_eq!(body["tools"][0]["input_schema"], action_schema().schema);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "player_action"})
    );
    assert_eq!(body["max_tokens"], 300);
}

#[tokio::test]
async fn plain_text_calls_carry_no_format_and_return_the_text() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.always(
            &server,
            wire.ok(Say::Text("Zed grins and grabs the controls.")),
        )
        .await;
        let (gateway, _) = gateway(wire.model(&server));
        let req = ChatRequest {
            stop: vec!["\n\n".into()],
            ..ChatRequest::new(
                CallTag::new("zed", "reaction"),
                vec![Message::user("React.")],
            )
        };

        let reply = call(&gateway, &req).await.0.unwrap();
        assert_eq!(
            reply.content, "Zed grins and grabs the controls.",
            "{wire:?}"
        );
        assert_eq!(reply.json, None);
        let body = &bodies(&server).await[0];
        assert!(
            body.get("response_format").is_none() && body.get("tools").is_none(),
            "{body}"
        );
        let stop = if wire == Wire::OpenAi {
            &body["stop"]
        } else {
            &body["stop_sequences"]
        };
        assert_eq!(stop, &json!(["\n\n"]), "{wire:?}");
    }
}

#[tokio::test]
async fn a_server_that_rejects_any_response_format_is_asked_in_plain_text_and_remembered() {
    let server = MockServer::start().await;
    let has_format = |r: &Request| {
        serde_json::from_slice::<serde_json::Value>(&r.body)
            .is_ok_and(|b| b.get("response_format").is_some())
    };
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(has_format)
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": {"message": "Unrecognized request argument: response_format"}}),
        ))
        .mount(&server)
        .await;
    Wire::OpenAi
        .always(
            &server,
            Wire::OpenAi.ok(Say::Text(
                "```json\n{\"action\": \"I dive for cover\"}\n```",
            )),
        )
        .await;
    let (gateway, sleeper) = gateway(Wire::OpenAi.model(&server));

    let (result, records) = call(&gateway, &schema_request()).await;
    assert_eq!(
        result.unwrap().json,
        Some(json!({"action": "I dive for cover"}))
    );
    // json_schema refused, json_object refused, plain text answered: three logged attempts,
    // no backoff, and each refusal says where it fell back to.
    let rungs: Vec<_> = records.iter().map(|r| r.structured_output).collect();
    assert_eq!(
        rungs,
        [
            Some(StructuredOutput::JsonSchema),
            Some(StructuredOutput::JsonObject),
            Some(StructuredOutput::Text)
        ]
    );
    let fell: Vec<_> = records.iter().map(|r| r.fell_back_to).collect();
    assert_eq!(
        fell,
        [
            Some(StructuredOutput::JsonObject),
            Some(StructuredOutput::Text),
            None
        ]
    );
    assert!(sleeper.requested().is_empty());
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[1]["response_format"]["type"], "json_object");
    assert!(sent[2].get("response_format").is_none());
    assert!(
        sent[2]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("\"minLength\":3"),
        "the schema is in the prompt: {}",
        sent[2]
    );

    // Later calls start on the learned rung; replies are still validated.
    let (_, records) = call(&gateway, &schema_request()).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].structured_output, Some(StructuredOutput::Text));
    let all = bodies(&server).await;
    assert_eq!(all.len(), 4);
    assert!(all[3].get("response_format").is_none());
}

#[tokio::test]
async fn missing_usage_is_estimated_from_the_text() {
    let server = MockServer::start().await;
    let body = json!({"model": "m", "choices": [{"message": {"role": "assistant", "content": "12345678"}}]});
    Wire::OpenAi
        .always(&server, ResponseTemplate::new(200).set_body_json(body))
        .await;
    let (gateway, _) = gateway(Wire::OpenAi.model(&server));
    let req = ChatRequest::new(CallTag::new("a", "p"), vec![Message::user("abcdefghij")]);

    let reply = call(&gateway, &req).await.0.unwrap();
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (3, 2)
    );
}

#[tokio::test]
async fn an_unreadable_reply_is_a_bad_reply_not_retried() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.always(
            &server,
            ResponseTemplate::new(200).set_body_string("<html>gateway page</html>"),
        )
        .await;
        let (gateway, sleeper) = gateway(wire.model(&server));
        let err = call(&gateway, &schema_request()).await.0.unwrap_err();
        assert!(
            matches!(err, GatewayError::Fatal(ProviderError::BadReply(ref m)) if m.contains("gateway page")),
            "{err:?}"
        );
        assert!(sleeper.requested().is_empty());
    }
}

#[tokio::test]
async fn the_model_name_shows_provider_model_and_url_without_the_key() {
    let server = MockServer::start().await;
    let spec = ProviderSpec::openai_compatible(
        format!("{}/v1/", server.uri()),
        "llama3.2",
        Some("LOCAL_KEY".into()),
    );
    let model = connect_with_env(&spec, std::time::Duration::from_secs(1), &|_| {
        Some("secret-key".into())
    })
    .unwrap();
    assert_eq!(
        model.name(),
        format!("openai-compatible:llama3.2@{}/v1", server.uri())
    );
    assert!(!model.name().contains("secret"));
}

#[tokio::test]
async fn a_reasoning_model_gets_max_completion_tokens_and_no_temperature() {
    let server = MockServer::start().await;
    let field = |name: &'static str| {
        move |r: &Request| {
            serde_json::from_slice::<serde_json::Value>(&r.body)
                .is_ok_and(|b| b.get(name).is_some())
        }
    };
    let refuse = |message: &str| {
        ResponseTemplate::new(400).set_body_json(json!({"error": {"message": message}}))
    };
    Mock::given(method("POST"))
        .and(field("max_tokens"))
        .respond_with(refuse(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(field("temperature"))
        .respond_with(refuse(
            "Unsupported value: 'temperature' does not support 0.7 with this model. Only the default (1) value is supported.",
        ))
        .mount(&server)
        .await;
    Wire::OpenAi
        .always(&server, Wire::OpenAi.ok(Say::Json(good_action())))
        .await;
    let (gateway, _) = gateway(Wire::OpenAi.model(&server));

    let (result, records) = call(&gateway, &schema_request()).await;
    assert_eq!(result.unwrap().json, Some(good_action()));
    assert_eq!(records.len(), 1);
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 3);
    let last = &sent[2];
    assert_eq!(last["max_completion_tokens"], 300);
    assert!(
        last.get("max_tokens").is_none() && last.get("temperature").is_none(),
        "{last}"
    );
    assert!(
        last.get("response_format").is_some(),
        "structured output is kept"
    );

    call(&gateway, &schema_request()).await.0.unwrap();
    assert_eq!(bodies(&server).await.len(), 4, "lessons are remembered");
}
