//! Streamed replies from both wire formats, against a loopback server written with `std` so a
//! stream can be paced, cut off mid-reply, or broken: the deltas reach the caller's progress
//! sink as they arrive, and the whole reply is still validated (retried, repaired) before it is
//! returned, exactly as a whole body would be.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use troupe_llm::{
    AttemptRecord, ChatModel, GatewayError, Progress, ProviderError, ProviderSpec, ReplayEntry,
    ReplayModel, connect_with_env,
};
use wiremock::MockServer;

use crate::support::{BOTH, Say, Wire, gateway, good_action, schema_request, secs};

/// How one connection is answered.
#[derive(Clone)]
pub enum Answer {
    /// A `text/event-stream` of these events' data, each after `pace`; `cut` stops after that
    /// many events and closes the connection without the end mark.
    Events {
        events: Vec<String>,
        pace: Duration,
        cut: Option<usize>,
    },
    /// An ordinary JSON body.
    Whole(Value),
}

/// A loopback server answering its connections in order from a script (the last answer
/// repeats), recording each request's JSON body.
pub struct SseServer {
    pub port: u16,
    pub bodies: Arc<Mutex<Vec<Value>>>,
}

impl SseServer {
    pub fn start(script: Vec<Answer>) -> SseServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let seen = bodies.clone();
        std::thread::spawn(move || {
            for (index, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { continue };
                let answer = script[index.min(script.len() - 1)].clone();
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &answer, &seen));
            }
        });
        SseServer { port, bodies }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, answer: &Answer, seen: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line.trim_end().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    seen.lock()
        .unwrap()
        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    match answer {
        Answer::Whole(value) => {
            let body = value.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Answer::Events { events, pace, cut } => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
            );
            for (i, data) in events.iter().enumerate() {
                if Some(i) == *cut {
                    break;
                }
                std::thread::sleep(*pace);
                let _ = stream.write_all(format!("data: {data}\n\n").as_bytes());
                let _ = stream.flush();
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}

/// The reply text in pieces of about one token each.
pub fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// An OpenAI chat-completions stream of `text`, with the usage chunk and `[DONE]`.
pub fn openai_events(text: &str) -> Vec<String> {
    let mut events: Vec<String> = pieces(text, 3)
        .into_iter()
        .map(|p| {
            json!({"model": "gpt-test-0001", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]})
                .to_string()
        })
        .collect();
    events.push(
        json!({"model": "gpt-test-0001", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            .to_string(),
    );
    events.push(
        json!({"model": "gpt-test-0001", "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}})
            .to_string(),
    );
    events.push("[DONE]".to_string());
    events
}

/// An Anthropic Messages stream answering through a forced tool whose input is `text`.
pub fn anthropic_events(text: &str) -> Vec<String> {
    let mut events = vec![
        json!({"type": "message_start", "message": {"model": "claude-test-0001",
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 30, "output_tokens": 1}}})
        .to_string(),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "player_action", "input": {}}})
        .to_string(),
        json!({"type": "ping"}).to_string(),
    ];
    events.extend(pieces(text, 3).into_iter().map(|p| {
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": p}})
        .to_string()
    }));
    events.extend([
        json!({"type": "content_block_stop", "index": 0}).to_string(),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}})
            .to_string(),
        json!({"type": "message_stop"}).to_string(),
    ]);
    events
}

pub fn events(wire: Wire, text: &str) -> Vec<String> {
    match wire {
        Wire::OpenAi => openai_events(text),
        Wire::Anthropic => anthropic_events(text),
    }
}

pub fn streamed(wire: Wire, text: &str) -> Answer {
    Answer::Events {
        events: events(wire, text),
        pace: Duration::ZERO,
        cut: None,
    }
}

/// The provider of `wire` pointed at `server`, streaming or not.
pub fn model(wire: Wire, base: &str, stream: bool) -> Arc<dyn ChatModel> {
    let spec = match wire {
        Wire::OpenAi => ProviderSpec::openai_compatible(format!("{base}/v1"), "gpt-test", None),
        Wire::Anthropic => ProviderSpec {
            api_key_env: None,
            base_url: base.to_string(),
            ..ProviderSpec::anthropic("claude-test")
        },
    };
    connect_with_env(
        &ProviderSpec { stream, ..spec },
        Duration::from_secs(10),
        &|_| None,
    )
    .unwrap()
}

/// A gateway call that also collects every progress report.
async fn call_streaming(
    model: Arc<dyn ChatModel>,
) -> (
    Result<troupe_llm::GatewayReply, GatewayError>,
    Vec<AttemptRecord>,
    Vec<Progress>,
    Vec<std::time::Duration>,
) {
    let (gateway, sleeper) = gateway(model);
    let heard = Mutex::new(Vec::new());
    let mut records = Vec::new();
    let result = gateway
        .call_with_progress(&schema_request(), &mut |r| records.push(r), &|p| {
            heard.lock().unwrap().push(p)
        })
        .await;
    (
        result,
        records,
        heard.into_inner().unwrap(),
        sleeper.requested(),
    )
}

fn drafts(heard: &[Progress], attempt: u32) -> String {
    heard
        .iter()
        .filter(|p| p.attempt == attempt)
        .map(|p| p.text_delta.as_str())
        .collect()
}

#[tokio::test]
async fn both_wires_stream_the_reply_in_pieces_and_return_what_a_whole_body_would() {
    let text = good_action().to_string();
    for wire in BOTH {
        let server = SseServer::start(vec![streamed(wire, &text)]);
        let (result, records, heard, _) = call_streaming(model(wire, &server.url(), true)).await;
        let reply = result.unwrap();
        assert_eq!(reply.json, Some(good_action()), "{wire:?}");
        assert_eq!(reply.content, text, "{wire:?}");
        assert!(heard.len() > 5, "{wire:?}: {heard:?}");
        assert_eq!(drafts(&heard, 1), text, "{wire:?}");
        let counts: Vec<u32> = heard.iter().map(|p| p.tokens).collect();
        assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
        assert!(*counts.last().unwrap() > 1, "{counts:?}");
        assert_eq!(server.bodies()[0]["stream"], true, "{wire:?}");
        assert_eq!(records.len(), 1);
        assert!(records[0].first_token_ms.is_some(), "{wire:?}");
        assert!(records[0].first_token_ms <= Some(records[0].latency_ms));
        // The usage of the stream's own events, as a whole body reports it.
        assert_eq!(records[0].usage.output_tokens, 5, "{wire:?}");
        let input = if wire == Wire::Anthropic { 42 } else { 12 };
        assert_eq!(records[0].usage.input_tokens, input, "{wire:?}");

        // The same answer as a whole body gives the same reply and record.
        let whole = MockServer::start().await;
        wire.answer(&whole, wire.ok(Say::Json(good_action())), 1)
            .await;
        let (result, plain, heard, _) = call_streaming(model(wire, &whole.uri(), false)).await;
        assert_eq!(result.unwrap().content, reply.content, "{wire:?}");
        assert_eq!(plain[0].reply, records[0].reply, "{wire:?}");
        assert_eq!(heard.len(), 1, "a whole body is reported at once");
        let sent = crate::support::bodies(&whole).await;
        assert!(sent[0].get("stream").is_none(), "{wire:?}: {}", sent[0]);
    }
}

#[tokio::test]
async fn progress_arrives_while_the_reply_is_still_streaming() {
    let text = good_action().to_string();
    for wire in BOTH {
        let server = SseServer::start(vec![Answer::Events {
            events: events(wire, &text),
            pace: Duration::from_millis(15),
            cut: None,
        }]);
        let started = Instant::now();
        let first = Mutex::new(None);
        let (gateway, _) = gateway(model(wire, &server.url(), true));
        gateway
            .call_with_progress(&schema_request(), &mut |_| {}, &|_| {
                first
                    .lock()
                    .unwrap()
                    .get_or_insert_with(|| started.elapsed());
            })
            .await
            .unwrap();
        let whole = started.elapsed();
        let first = first.into_inner().unwrap().unwrap();
        // Over 20 events 15 ms apart: the first text shows long before the end.
        assert!(
            first * 4 < whole,
            "{wire:?}: first {first:?}, whole {whole:?}"
        );
    }
}

#[tokio::test]
async fn a_stream_cut_off_mid_reply_is_retried_like_a_cut_off_body() {
    let text = good_action().to_string();
    for wire in BOTH {
        let cut = Answer::Events {
            events: events(wire, &text),
            pace: Duration::ZERO,
            cut: Some(6),
        };
        let server = SseServer::start(vec![cut, streamed(wire, &text)]);
        let (result, records, heard, slept) =
            call_streaming(model(wire, &server.url(), true)).await;
        assert_eq!(result.unwrap().json, Some(good_action()), "{wire:?}");
        assert_eq!(records.len(), 2, "{wire:?}");
        let error = records[0].error.clone().unwrap();
        assert!(error.contains("cut off"), "{wire:?}: {error}");
        assert_eq!(records[0].retry_in_ms, Some(2000), "{wire:?}");
        assert_eq!(slept, secs(&[2]));
        // The first draft stopped short; the second attempt starts over and completes.
        assert!(!drafts(&heard, 1).is_empty() && drafts(&heard, 1) != text);
        assert_eq!(drafts(&heard, 2), text, "{wire:?}");
    }
}

#[tokio::test]
async fn a_malformed_event_is_a_bad_reply_not_retried() {
    for wire in BOTH {
        let mut broken = events(wire, &good_action().to_string());
        broken.insert(3, "{\"choices\": [oops".to_string());
        let server = SseServer::start(vec![Answer::Events {
            events: broken,
            pace: Duration::ZERO,
            cut: None,
        }]);
        let (result, records, _, _) = call_streaming(model(wire, &server.url(), true)).await;
        let err = result.unwrap_err();
        assert!(
            matches!(&err, GatewayError::Fatal(ProviderError::BadReply(m)) if m.contains("streamed event is not JSON")),
            "{wire:?}: {err:?}"
        );
        assert_eq!(records.len(), 1);
        assert_eq!(server.bodies().len(), 1);
    }
}

#[tokio::test]
async fn an_anthropic_overload_mid_stream_is_retried() {
    let text = good_action().to_string();
    let mut overloaded = anthropic_events(&text);
    overloaded.truncate(4);
    overloaded.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            .to_string(),
    );
    let server = SseServer::start(vec![
        Answer::Events {
            events: overloaded,
            pace: Duration::ZERO,
            cut: None,
        },
        streamed(Wire::Anthropic, &text),
    ]);
    let (result, records, _, _) = call_streaming(model(Wire::Anthropic, &server.url(), true)).await;
    assert!(result.is_ok());
    assert!(
        records[0].error.as_deref().unwrap().contains("HTTP 529"),
        "{records:?}"
    );
}

#[tokio::test]
async fn a_streamed_reply_that_fails_the_schema_is_repaired_as_a_whole_one_is() {
    let bad = json!({"action": "no"}).to_string();
    let good = good_action().to_string();
    for wire in BOTH {
        let server = SseServer::start(vec![streamed(wire, &bad), streamed(wire, &good)]);
        let (result, records, heard, _) = call_streaming(model(wire, &server.url(), true)).await;

        let whole = MockServer::start().await;
        wire.answer(&whole, wire.ok(Say::Json(json!({"action": "no"}))), 1)
            .await;
        wire.answer(&whole, wire.ok(Say::Json(good_action())), 1)
            .await;
        let (plain_result, plain, _, _) = call_streaming(model(wire, &whole.uri(), false)).await;

        assert_eq!(result.unwrap().json, plain_result.unwrap().json, "{wire:?}");
        let shape = |r: &[AttemptRecord]| -> Vec<(u32, bool, Option<String>, Option<String>)> {
            r.iter()
                .map(|a| (a.attempt, a.repair, a.error.clone(), a.reply.clone()))
                .collect()
        };
        assert_eq!(shape(&records), shape(&plain), "{wire:?}");
        assert_eq!(records.len(), 2);
        assert!(records[1].repair);
        // The bad draft streamed as attempt 1; the repair as attempt 2.
        assert_eq!(drafts(&heard, 1), bad);
        assert_eq!(drafts(&heard, 2), good);
        // The repair re-ask carries the bad reply, as it does for a whole body.
        let asked = &server.bodies()[1];
        assert!(asked.to_string().contains("does not match the JSON schema"));
    }
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_is_read_as_a_whole_body() {
    for wire in BOTH {
        let server = SseServer::start(vec![Answer::Whole(wire.body(Say::Json(good_action())))]);
        let (result, records, heard, _) = call_streaming(model(wire, &server.url(), true)).await;
        assert_eq!(result.unwrap().json, Some(good_action()), "{wire:?}");
        assert_eq!(server.bodies()[0]["stream"], true);
        assert_eq!(heard.len(), 1);
        assert_eq!(heard[0].text_delta, records[0].reply.clone().unwrap());
    }
}

#[tokio::test]
async fn replayed_replies_are_reported_at_once_with_no_first_token_time() {
    let model = ReplayModel::from_entries(vec![ReplayEntry {
        agent: "zed".into(),
        purpose: "action".into(),
        content: good_action().to_string(),
    }]);
    let (result, records, heard, _) = call_streaming(Arc::new(model)).await;
    assert!(result.is_ok());
    assert_eq!(heard.len(), 1);
    assert_eq!(heard[0].attempt, 1);
    assert_eq!(heard[0].text_delta, good_action().to_string());
    assert_eq!(records[0].first_token_ms, None);
    assert_eq!(records[0].latency_ms, 0);
}
