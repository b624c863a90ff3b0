#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The shared helpers do what the tests that lean on them assume: the model server answers over
//! a real socket as its personality says, the logs read back as written, the examples are there.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};
use troupe_test_support::openai_server::{
    LLAMA_CPP_PYTHON_REFUSAL, OpenAiServer, Personality, fault_for,
};
use troupe_test_support::{DEMO, campaign_with, examples, of_type, read_log};

/// POST this body to the server's chat completions; the status and the body of its answer.
fn post(server: &OpenAiServer, body: &Value) -> (u16, String) {
    let url = server.base_url();
    let host = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/v1"))
        .unwrap();
    let mut stream = TcpStream::connect(host).unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

fn asking_for(format: Value) -> Value {
    json!({
        "model": "m",
        "messages": [{"role": "user", "content": "hello"}],
        "response_format": format,
    })
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"line": {"type": "string"}, "dice": {"type": "integer"}},
        "required": ["line", "dice"],
    })
}

#[test]
fn a_paced_server_answers_with_content_that_fits_the_requests_schema() {
    let server = OpenAiServer::start(Personality::Paced {
        delay: Duration::ZERO,
    });
    let format = json!({"type": "json_schema", "json_schema": {"name": "x", "schema": schema()}});
    let (status, body) = post(&server, &asking_for(format));
    assert_eq!(status, 200, "{body}");
    let reply: Value = serde_json::from_str(&body).unwrap();
    let content = reply["choices"][0]["message"]["content"].as_str().unwrap();
    let content: Value = serde_json::from_str(content).unwrap();
    assert!(content["line"].is_string(), "{content}");
    assert!(content["dice"].is_i64(), "{content}");
    let served = server.served();
    assert_eq!(served.len(), 1);
    assert_eq!(served[0].format, "json_schema");
    assert!(!served[0].streamed);
}

#[test]
fn llama_cpp_python_refuses_a_json_schema_format_and_answers_json_object() {
    let server = OpenAiServer::start(Personality::LlamaCppPython);
    let format = json!({"type": "json_schema", "json_schema": {"name": "x", "schema": schema()}});
    let (status, body) = post(&server, &asking_for(format));
    assert_eq!((status, body.as_str()), (500, LLAMA_CPP_PYTHON_REFUSAL));
    let (status, body) = post(&server, &asking_for(json!({"type": "json_object"})));
    assert_eq!(status, 200, "{body}");
    let refused: Vec<bool> = server.served().iter().map(|s| s.refused).collect();
    assert_eq!(refused, [true, false]);
}

#[test]
fn a_server_that_is_down_answers_503() {
    let server = OpenAiServer::start(Personality::Down);
    let (status, _) = post(&server, &asking_for(json!({"type": "text"})));
    assert_eq!(status, 503);
}

#[test]
fn faults_are_a_fixed_function_of_the_seed_and_near_the_share_asked_for() {
    let faults = |seed| {
        (0..1000)
            .map(|i| fault_for(seed, 30, i))
            .collect::<Vec<_>>()
    };
    assert_eq!(faults(7), faults(7));
    assert_ne!(faults(7), faults(8));
    let share = faults(7).iter().filter(|f| f.is_some()).count();
    assert!((250..350).contains(&share), "{share} of 1000 at 30%");
    assert!((0..1000).all(|i| fault_for(7, 0, i).is_none()));
}

#[test]
fn a_log_reads_back_line_by_line_and_filters_by_event_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    std::fs::write(
        &path,
        "{\"event_type\":\"a\",\"n\":1}\n{\"event_type\":\"b\",\"n\":2}\n{\"event_type\":\"a\",\"n\":3}\n",
    )
    .unwrap();
    let log = read_log(&path);
    assert_eq!(log.len(), 3);
    let ns: Vec<&Value> = of_type(&log, "a").iter().map(|e| &e["n"]).collect();
    assert_eq!(ns, [&json!(1), &json!(3)]);
}

#[test]
#[should_panic(expected = "a line that is not JSON")]
fn a_log_with_a_line_that_is_not_json_fails_the_test_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    std::fs::write(&path, "{\"event_type\":\"a\"}\n{\"event_ty").unwrap();
    read_log(&path);
}

#[test]
fn the_demo_campaign_is_copied_from_the_examples() {
    let dir = campaign_with(&DEMO);
    for f in DEMO {
        assert_eq!(
            std::fs::read(dir.path().join(f)).unwrap(),
            std::fs::read(examples().join(f)).unwrap(),
            "{f}"
        );
    }
}
