#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Retry, timeout, Retry-After, repair and attempt records, for both wire formats.

use std::net::TcpListener;
use std::time::Duration;

use serde_json::json;
use troupe_llm::{GatewayError, ProviderError, ProviderSpec, RetryPolicy, connect_with_env};
use wiremock::{MockServer, ResponseTemplate};

use crate::support::*;

#[tokio::test]
async fn a_rate_limit_is_retried_after_the_first_scheduled_delay() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.answer(&server, ResponseTemplate::new(429), 1).await;
        wire.always(&server, wire.ok(Say::Json(good_action())))
            .await;
        let (gateway, sleeper) = gateway(wire.model(&server));

        let reply = call(&gateway, &schema_request()).await.0.unwrap();
        assert_eq!(reply.attempts, 2, "{wire:?}");
        assert_eq!(reply.json, Some(good_action()));
        assert_eq!(sleeper.requested(), secs(&[2]), "{wire:?}");
    }
}

#[tokio::test]
async fn retry_after_is_honoured_when_longer_than_the_schedule() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.answer(
            &server,
            ResponseTemplate::new(429).insert_header("retry-after", "7"),
            1,
        )
        .await;
        wire.always(&server, wire.ok(Say::Json(good_action())))
            .await;
        let (gateway, sleeper) = gateway(wire.model(&server));

        let (result, records) = call(&gateway, &schema_request()).await;
        result.unwrap();
        assert_eq!(sleeper.requested(), secs(&[7]), "{wire:?}");
        assert_eq!(records[0].retry_in_ms, Some(7000));
        assert!(records[0].error.as_deref().unwrap().contains("429"));
    }
}

#[tokio::test]
async fn an_excessive_retry_after_is_capped() {
    let server = MockServer::start().await;
    Wire::OpenAi
        .answer(
            &server,
            ResponseTemplate::new(429).insert_header("retry-after", "3600"),
            1,
        )
        .await;
    Wire::OpenAi
        .always(&server, Wire::OpenAi.ok(Say::Json(good_action())))
        .await;
    let (gateway, sleeper) = gateway(Wire::OpenAi.model(&server));
    call(&gateway, &schema_request()).await.0.unwrap();
    assert_eq!(sleeper.requested(), secs(&[60]));
}

#[tokio::test]
async fn server_errors_back_off_2_5_10_20_seconds_then_succeed_on_the_fifth_attempt() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.answer(
            &server,
            ResponseTemplate::new(500).set_body_string("overloaded"),
            4,
        )
        .await;
        wire.always(&server, wire.ok(Say::Json(good_action())))
            .await;
        let (gateway, sleeper) = gateway(wire.model(&server));

        let (result, records) = call(&gateway, &schema_request()).await;
        assert_eq!(result.unwrap().attempts, 5, "{wire:?}");
        assert_eq!(sleeper.requested(), secs(&[2, 5, 10, 20]));
        let delays: Vec<_> = records.iter().map(|r| r.retry_in_ms).collect();
        assert_eq!(
            delays,
            [Some(2000), Some(5000), Some(10_000), Some(20_000), None]
        );
    }
}

#[tokio::test]
async fn a_server_that_keeps_failing_exhausts_five_attempts() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.always(
            &server,
            ResponseTemplate::new(503).set_body_string("down for maintenance"),
        )
        .await;
        let (gateway, sleeper) = gateway(wire.model(&server));

        let (result, records) = call(&gateway, &schema_request()).await;
        match result.unwrap_err() {
            GatewayError::Exhausted { attempts, last } => {
                assert_eq!(attempts, 5);
                assert_eq!(
                    last,
                    ProviderError::Server {
                        status: 503,
                        body: "down for maintenance".into()
                    }
                );
            }
            other => panic!("expected Exhausted, got {other:?}"),
        }
        assert_eq!(server.received_requests().await.unwrap().len(), 5);
        assert_eq!(records.len(), 5);
        assert_eq!(sleeper.requested(), secs(&[2, 5, 10, 20]));
        assert_eq!(
            records[4].retry_in_ms, None,
            "no wait after the last attempt"
        );
    }
}

#[tokio::test]
async fn a_rejected_key_fails_at_once_naming_the_key_variable() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.always(
            &server,
            ResponseTemplate::new(401)
                .set_body_json(json!({"error": {"message": "invalid x-api-key"}})),
        )
        .await;
        let (gateway, sleeper) = gateway(wire.model(&server));

        let (result, records) = call(&gateway, &schema_request()).await;
        let err = result.unwrap_err();
        assert!(
            matches!(
                err,
                GatewayError::Fatal(ProviderError::Rejected { status: 401, .. })
            ),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(&format!("${}", wire.key_var())),
            "{message}"
        );
        assert!(
            message.contains("HTTP 401") && message.contains("invalid x-api-key"),
            "{message}"
        );
        assert!(
            !message.contains(OPENAI_KEY) && !message.contains(ANTHROPIC_KEY),
            "never show the key"
        );
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
        assert_eq!(records.len(), 1);
        assert!(sleeper.requested().is_empty());
    }
}

#[tokio::test]
async fn a_bad_request_is_not_retried() {
    let server = MockServer::start().await;
    Wire::Anthropic
        .always(
            &server,
            ResponseTemplate::new(400).set_body_string("max_tokens: too large"),
        )
        .await;
    let (gateway, _) = gateway(Wire::Anthropic.model(&server));
    let err = call(&gateway, &schema_request()).await.0.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the provider rejected the request (HTTP 400): max_tokens: too large"
    );
}

#[tokio::test]
async fn a_slow_reply_times_out_and_is_retried() {
    for wire in BOTH {
        let server = MockServer::start().await;
        let slow = wire
            .ok(Say::Json(json!({"action": "too late"})))
            .set_delay(Duration::from_secs(2));
        wire.answer(&server, slow, 1).await;
        wire.always(&server, wire.ok(Say::Json(good_action())))
            .await;
        let policy = RetryPolicy {
            call_timeout: Duration::from_millis(100),
            ..RetryPolicy::default()
        };
        let (gateway, sleeper) = gateway_with(wire.model(&server), policy);

        let started = std::time::Instant::now();
        let (result, records) = call(&gateway, &schema_request()).await;
        assert_eq!(result.unwrap().json, Some(good_action()), "{wire:?}");
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "did not wait for the slow reply"
        );
        assert!(records[0].error.as_deref().unwrap().contains("timed out"));
        assert_eq!(sleeper.requested(), secs(&[2]));
    }
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spec = ProviderSpec::ollama("llama3.2");
    let spec = ProviderSpec {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        ..spec
    };
    let model = connect_with_env(&spec, Duration::from_secs(2), &|_| None).unwrap();
    let (gateway, sleeper) = gateway(model);

    let err = call(&gateway, &schema_request()).await.0.unwrap_err();
    assert!(
        matches!(
            err,
            GatewayError::Exhausted {
                attempts: 5,
                last: ProviderError::Connect(_)
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("could not reach the provider"),
        "{err}"
    );
    assert_eq!(sleeper.requested().len(), 4);
}

#[tokio::test]
async fn a_malformed_reply_gets_one_repair_re_ask() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.answer(
            &server,
            wire.ok(Say::Text("I fire the lasers at their engines!")),
            1,
        )
        .await;
        wire.always(&server, wire.ok(Say::Json(good_action())))
            .await;
        let (gateway, sleeper) = gateway(wire.model(&server));

        let (result, records) = call(&gateway, &schema_request()).await;
        let reply = result.unwrap();
        assert_eq!(reply.json, Some(good_action()), "{wire:?}");
        assert_eq!(reply.attempts, 2);
        assert_eq!(
            (reply.usage.input_tokens, reply.usage.output_tokens),
            (24, 10),
            "usage sums both asks"
        );
        assert!(sleeper.requested().is_empty(), "a repair is not a backoff");

        assert_eq!(records.len(), 2);
        assert!(!records[0].repair && records[1].repair);
        assert!(
            records[0]
                .error
                .as_deref()
                .unwrap()
                .contains("no JSON object")
        );
        assert_eq!(records[1].error, None);
        assert_ne!(records[0].request_hash, records[1].request_hash);

        // The re-ask shows the model its bad reply and what was wrong with it.
        let repair = &bodies(&server).await[1];
        let messages = repair["messages"].as_array().unwrap();
        let n = messages.len();
        assert_eq!(
            messages[n - 2],
            json!({"role": "assistant", "content": "I fire the lasers at their engines!"})
        );
        assert_eq!(messages[n - 1]["role"], "user");
        let ask = messages[n - 1]["content"].as_str().unwrap();
        assert!(
            ask.contains("no JSON object") && ask.contains("only the corrected JSON object"),
            "{ask}"
        );
    }
}

#[tokio::test]
async fn a_reply_that_stays_malformed_is_an_invalid_reply_listing_the_problems() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.always(&server, wire.ok(Say::Json(json!({"act": "I fire"}))))
            .await;
        let (gateway, _) = gateway(wire.model(&server));

        let (result, records) = call(&gateway, &schema_request()).await;
        match result.unwrap_err() {
            GatewayError::InvalidReply { reply, problems } => {
                assert!(reply.contains("I fire"));
                assert!(
                    problems
                        .iter()
                        .any(|p| p.contains("\"action\" is a required property")),
                    "{problems:?}"
                );
            }
            other => panic!("expected InvalidReply, got {other:?}"),
        }
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            2,
            "exactly one repair"
        );
        assert_eq!(records.len(), 2);
        assert!(records.iter().all(|r| {
            r.error
                .as_deref()
                .unwrap()
                .contains("did not match the schema")
        }));
    }
}

#[tokio::test]
async fn fenced_json_with_prose_is_accepted() {
    for wire in BOTH {
        let server = MockServer::start().await;
        let text = "Sure! Here is Zed's move:\n```json\n{\"action\": \"I swing the Raptor around and return fire\"}\n```\nHope that works.";
        wire.always(&server, wire.ok(Say::Text(text))).await;
        let (gateway, _) = gateway(wire.model(&server));

        let reply = call(&gateway, &schema_request()).await.0.unwrap();
        assert_eq!(reply.json, Some(good_action()), "{wire:?}");
        assert_eq!(reply.attempts, 1, "no repair needed");
        assert_eq!(reply.content, text, "content keeps what the model said");
    }
}

#[tokio::test]
async fn every_attempt_is_reported_with_its_outcome() {
    for wire in BOTH {
        let server = MockServer::start().await;
        wire.answer(&server, ResponseTemplate::new(500), 1).await;
        wire.answer(&server, ResponseTemplate::new(429), 1).await;
        wire.answer(&server, wire.ok(Say::Text("not json")), 1)
            .await;
        wire.always(&server, wire.ok(Say::Json(good_action())))
            .await;
        let model = wire.model(&server);
        let provider = model.name();
        let (gateway, _) = gateway(model);
        let req = schema_request();

        let (result, records) = call(&gateway, &req).await;
        assert_eq!(result.unwrap().attempts, 4);
        let numbers: Vec<u32> = records.iter().map(|r| r.attempt).collect();
        assert_eq!(numbers, [1, 2, 3, 4], "{wire:?}");
        let retry: Vec<_> = records.iter().map(|r| r.retry_in_ms).collect();
        assert_eq!(retry, [Some(2000), Some(5000), None, None]);
        let failed: Vec<bool> = records.iter().map(|r| r.error.is_some()).collect();
        assert_eq!(failed, [true, true, true, false]);
        let answered: Vec<bool> = records.iter().map(|r| r.reply.is_some()).collect();
        assert_eq!(answered, [false, false, true, true]);
        let repair: Vec<bool> = records.iter().map(|r| r.repair).collect();
        assert_eq!(repair, [false, false, false, true]);
        assert!(records.iter().all(|r| r.provider == provider));
        assert_eq!(
            records[0].request_hash, records[2].request_hash,
            "same request, same hash"
        );
        assert_eq!(records[0].request_hash.len(), 64);
        assert_eq!(records[0].messages, req.messages);
        assert_eq!(
            (
                records[3].usage.input_tokens,
                records[3].usage.output_tokens
            ),
            (12, 5)
        );
        assert_eq!(
            records[0].usage.input_tokens, 0,
            "a failed attempt used nothing"
        );
    }
}

#[tokio::test]
async fn an_invalid_schema_is_a_fatal_error_before_any_call() {
    let server = MockServer::start().await;
    let (gateway, _) = gateway(Wire::OpenAi.model(&server));
    let mut req = schema_request();
    req.schema.as_mut().unwrap().schema = json!({"type": "no-such-type"});
    let err = call(&gateway, &req).await.0.unwrap_err();
    assert!(
        matches!(err, GatewayError::Fatal(ProviderError::Config(_))),
        "{err:?}"
    );
    assert!(err.to_string().contains("player_action"));
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// A server that sends half of a reply and closes the connection, then answers in full.
fn cut_off_once_then_answer() -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let reply = Wire::OpenAi.body(Say::Json(good_action())).to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                reply.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            let sent = if n == 0 { reply.len() / 2 } else { reply.len() };
            stream.write_all(&reply.as_bytes()[..sent]).unwrap();
        }
    });
    format!("http://127.0.0.1:{port}/v1")
}

#[tokio::test]
async fn a_reply_cut_off_mid_body_is_retried_like_a_network_fault() {
    let spec = ProviderSpec::openai_compatible(cut_off_once_then_answer(), "m", None);
    let model = connect_with_env(&spec, Duration::from_secs(5), &|_| None).unwrap();
    let (gateway, sleeper) = gateway(model);
    let (result, records) = call(&gateway, &schema_request()).await;
    assert_eq!(result.unwrap().json, Some(good_action()));
    assert_eq!(records.len(), 2);
    let err = records[0].error.as_deref().unwrap();
    assert!(err.contains("cut off"), "{err}");
    assert_eq!(records[0].retry_in_ms, Some(2000));
    assert_eq!(sleeper.requested(), secs(&[2]));
}
