//! A small OpenAI-compatible chat-completions server on a real socket, written with `std` only
//! so it can misbehave the way real servers and networks do: hold a connection past the
//! client's timeout, close it halfway through a body, send garbage. Two personalities:
//!
//! - [`Personality::LlamaCppPython`] answers as llama-cpp-python's server (`python -m
//!   llama_cpp.server`) does: a `json_schema` response format is refused with HTTP 500 and the
//!   pydantic validation error naming `response_format`; `json_object` (with an optional
//!   `schema`) and plain text are answered.
//! - [`Personality::Faults`] injects a fault into a share of the requests, chosen per request
//!   from a seed, and answers the rest correctly.
//!
//! - [`Personality::Paced`] answers every request correctly, `delay` apart per token when it
//!   streams (a realistic hosted model: 30 ms a token).
//!
//! - [`Personality::Down`] answers every request 503: a model server that is down.
//!
//! A request that asks for `stream: true` is answered as a server-sent-event stream of about a
//! token (four characters) per event, as OpenAI's is; the faults that cut off or truncate a
//! body cut off or truncate the stream instead. Without `stream`, answers are whole bodies.
//!
//! Valid answers are built from the request's own JSON schema (the `response_format` schema, or
//! the schema the gateway wrote into the system message), so every purpose gets a reply that
//! validates without the server knowing troupe's purposes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// The body llama-cpp-python 0.3.36's server sends for `response_format: {"type": "json_schema"}`
/// (its route handler wraps the pydantic validation error in a 500).
pub const LLAMA_CPP_PYTHON_REFUSAL: &str = r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions","type":"internal_server_error","param":null,"code":null}}"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// 429 with `Retry-After: 1`.
    RateLimitedRetryAfter,
    /// 429 without a Retry-After header.
    RateLimited,
    ServerError,
    Unavailable,
    /// No answer until `hold` has passed (longer than the client's per-call timeout).
    Timeout,
    /// Headers announce the full length; half the body is sent, then the connection is closed.
    ResetMidBody,
    /// A 200 whose message content is a JSON object cut off halfway.
    TruncatedJson,
    /// A 200 whose body is not JSON at all.
    Garbage,
    /// A 200 whose content satisfies the schema but says nothing: blank strings, no items.
    EmptyReply,
    /// A 200 whose content is a valid object behind one megabyte of prose.
    Huge,
}

impl Fault {
    pub const ALL: [Fault; 10] = [
        Fault::RateLimitedRetryAfter,
        Fault::RateLimited,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::Timeout,
        Fault::ResetMidBody,
        Fault::TruncatedJson,
        Fault::Garbage,
        Fault::EmptyReply,
        Fault::Huge,
    ];

    /// The faults that make the gateway log an attempt with an error (the other two are
    /// answers that pass the schema and are judged by the game).
    pub fn is_error(self) -> bool {
        !matches!(self, Fault::EmptyReply | Fault::Huge)
    }
}

#[derive(Clone, Debug)]
pub enum Personality {
    LlamaCppPython,
    /// Every answer correct, streamed `delay` apart per token when asked to stream.
    Paced {
        delay: Duration,
    },
    /// Every request refused with 503 (its model is not loaded): every call fails past its
    /// retries.
    Down,
    /// The adversary of the secrets tests: every string of every reply is the whole prompt it
    /// was given, streamed `delay` apart per token (a model that repeats every secret it holds).
    Parrot {
        delay: Duration,
    },
    /// Roughly `percent` of requests get a fault, chosen from `seed` and the request's index.
    Faults {
        seed: u64,
        percent: u64,
        hold: Duration,
    },
}

/// What the server did with one request.
#[derive(Clone, Debug)]
pub struct Served {
    pub index: usize,
    /// `json_schema`, `json_object` or `text`.
    pub format: String,
    pub fault: Option<Fault>,
    /// Refused for its response format (llama-cpp-python personality).
    pub refused: bool,
    /// The request asked for a stream (`stream: true`).
    pub streamed: bool,
    /// An [`Fault::EmptyReply`] that carried at least one blank string (a schema without
    /// required strings makes the blank reply the same as a real one).
    pub blank_strings: bool,
    /// The request's `seed`, when it sent one.
    pub seed: Option<u64>,
}

pub struct OpenAiServer {
    port: u16,
    served: Arc<Mutex<Vec<Served>>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl OpenAiServer {
    pub fn start(personality: Personality) -> OpenAiServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let (s, st) = (served.clone(), stop.clone());
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (p, s, c, st) = (personality.clone(), s.clone(), count.clone(), st.clone());
                std::thread::spawn(move || serve(stream, &p, &s, &c, &st));
            }
        });
        OpenAiServer {
            port,
            served,
            stop,
            accept: Some(accept),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn served(&self) -> Vec<Served> {
        self.served.lock().unwrap().clone()
    }
}

impl Drop for OpenAiServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// One connection, one request (every answer says `Connection: close`).
fn serve(
    mut stream: TcpStream,
    personality: &Personality,
    served: &Mutex<Vec<Served>>,
    count: &AtomicUsize,
    stop: &AtomicBool,
) {
    let Some(body) = read_request(&stream) else {
        return;
    };
    let index = count.fetch_add(1, Ordering::SeqCst);
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let format = request["response_format"]["type"]
        .as_str()
        .unwrap_or("text")
        .to_string();
    let mut record = Served {
        index,
        format: format.clone(),
        fault: None,
        refused: false,
        streamed: request["stream"] == true,
        blank_strings: false,
        seed: request["seed"].as_u64(),
    };
    match personality {
        Personality::LlamaCppPython => {
            if format == "json_schema" {
                record.refused = true;
                served.lock().unwrap().push(record);
                respond(&mut stream, 500, &[], LLAMA_CPP_PYTHON_REFUSAL.as_bytes());
                return;
            }
            served.lock().unwrap().push(record);
            answer(&mut stream, &request, &valid_content(&request));
        }
        Personality::Down => {
            record.fault = Some(Fault::Unavailable);
            served.lock().unwrap().push(record);
            respond(&mut stream, 503, &[], b"fault: model is loading");
        }
        Personality::Paced { delay } => {
            served.lock().unwrap().push(record);
            let content = valid_content(&request);
            if request["stream"] == true {
                respond_sse(&mut stream, &content, None, *delay);
            } else {
                std::thread::sleep(*delay * (content.len() / 4) as u32);
                respond_json(&mut stream, &completion(&content));
            }
        }
        Personality::Parrot { delay } => {
            served.lock().unwrap().push(record);
            let content = parroted_content(&request);
            if request["stream"] == true {
                respond_sse(&mut stream, &content, None, *delay);
            } else {
                respond_json(&mut stream, &completion(&content));
            }
        }
        Personality::Faults {
            seed,
            percent,
            hold,
        } => {
            let fault = fault_for(*seed, *percent, index);
            record.fault = fault;
            record.blank_strings = fault == Some(Fault::EmptyReply)
                && has_blank_string(&instance(&schema_of(&request), &Fill::Blank));
            served.lock().unwrap().push(record);
            match fault {
                None => answer(&mut stream, &request, &valid_content(&request)),
                Some(f) => inject(&mut stream, f, &request, *hold, stop),
            }
        }
    }
}

/// The fault for request `index`, if it gets one: a fixed function of the seed and the index.
pub fn fault_for(seed: u64, percent: u64, index: usize) -> Option<Fault> {
    let r = splitmix(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    if r % 100 >= percent {
        return None;
    }
    Some(Fault::ALL[((r >> 32) % Fault::ALL.len() as u64) as usize])
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn inject(
    stream: &mut TcpStream,
    fault: Fault,
    request: &Value,
    hold: Duration,
    stop: &AtomicBool,
) {
    let error = |m: &str| json!({"error": {"message": m, "type": "server_error"}}).to_string();
    match fault {
        Fault::RateLimitedRetryAfter => respond(
            stream,
            429,
            &[("Retry-After", "1")],
            error("fault: rate limited, retry after 1 s").as_bytes(),
        ),
        Fault::RateLimited => respond(stream, 429, &[], error("fault: rate limited").as_bytes()),
        Fault::ServerError => respond(stream, 500, &[], error("fault: internal error").as_bytes()),
        Fault::Unavailable => respond(stream, 503, &[], b"fault: model is loading"),
        Fault::Timeout => {
            // Hold the connection (the client gives up first), then close it unanswered.
            let until = std::time::Instant::now() + hold;
            while std::time::Instant::now() < until && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Fault::ResetMidBody if request["stream"] == true => {
            let content = valid_content(request);
            respond_sse(stream, &content, Some(content.len() / 8), Duration::ZERO);
        }
        Fault::ResetMidBody => {
            let body = completion(&valid_content(request)).to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let half = body.len() / 2;
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body.as_bytes()[..half]);
            let _ = stream.flush();
            std::thread::sleep(Duration::from_millis(5));
            let _ = stream.shutdown(Shutdown::Both);
        }
        Fault::TruncatedJson => {
            let content = valid_content(request);
            let cut: String = content.chars().take(content.chars().count() / 2).collect();
            answer(stream, request, &cut);
        }
        Fault::Garbage => respond(
            stream,
            200,
            &[],
            b"\x00\x9f<html>502 Bad Gateway</html>\xff",
        ),
        Fault::EmptyReply => answer(
            stream,
            request,
            &instance(&schema_of(request), &Fill::Blank).to_string(),
        ),
        Fault::Huge => {
            let prose = "The Raptor hums. ".repeat(1 << 16);
            let content = format!("{prose}\n{}", valid_content(request));
            answer(stream, request, &content);
        }
    }
}

/// Reads one request's headers and body; `None` when the client went away.
fn read_request(stream: &TcpStream) -> Option<Vec<u8>> {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn respond(stream: &mut TcpStream, status: u16, headers: &[(&str, &str)], body: &[u8]) {
    let reason = match status {
        200 => "OK",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

fn respond_json(stream: &mut TcpStream, body: &Value) {
    respond(stream, 200, &[], body.to_string().as_bytes());
}

/// `content` as the request asked for it: streamed, or as a whole body.
fn answer(stream: &mut TcpStream, request: &Value, content: &str) {
    if request["stream"] == true {
        respond_sse(stream, content, None, Duration::ZERO);
    } else {
        respond_json(stream, &completion(content));
    }
}

/// `content` as an OpenAI chat-completions stream: a chunk per token (four characters; longer
/// for a huge reply, which would otherwise be a quarter of a million events), then the finish
/// reason, the usage and `[DONE]`, each `delay` apart. With `cut`, the connection closes after
/// that many chunks of text, mid-reply.
fn respond_sse(stream: &mut TcpStream, content: &str, cut: Option<usize>, delay: Duration) {
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    );
    let chars: Vec<char> = content.chars().collect();
    let size = (chars.len() / 4096).max(4);
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let send = |stream: &mut TcpStream, data: &str| {
        std::thread::sleep(delay);
        let ok = stream
            .write_all(format!("data: {data}\n\n").as_bytes())
            .is_ok();
        let _ = stream.flush();
        ok
    };
    for (i, piece) in chars.chunks(size).enumerate() {
        if cut == Some(i) {
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
        let text: String = piece.iter().collect();
        if !send(
            stream,
            &chunk(json!({"content": text}), Value::Null).to_string(),
        ) {
            return;
        }
    }
    // The usage a whole body reports (see `completion`), so the two read the same in a log.
    let usage = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake-model",
        "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}});
    send(stream, &chunk(json!({}), json!("stop")).to_string());
    send(stream, &usage.to_string());
    send(stream, "[DONE]");
}

/// An OpenAI chat-completions answer carrying `content`.
pub fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "fake-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
}

/// The schema a request asks for: in `response_format` (either rung), else the one the gateway
/// wrote into the system message after "JSON schema (...):", else none.
pub fn schema_of(request: &Value) -> Value {
    let format = &request["response_format"];
    for candidate in [&format["json_schema"]["schema"], &format["schema"]] {
        if candidate.is_object() {
            return candidate.clone();
        }
    }
    let system = request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    system
        .split_once("JSON schema (")
        .and_then(|(_, after)| after.split_once('\n'))
        .map(|(_, rest)| rest)
        .and_then(|rest| serde_json::Deserializer::from_str(rest).into_iter().next())
        .and_then(Result::ok)
        .unwrap_or(Value::Null)
}

/// A reply that satisfies the request's schema with plausible words (or plain prose for a
/// call without one).
/// A reply of the request's shape whose every string is the request's whole prompt.
pub fn parroted_content(request: &Value) -> String {
    let prompt: Vec<&str> = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_str())
        .collect();
    let prompt = prompt.join("\n");
    let schema = schema_of(request);
    if schema.is_null() {
        return prompt;
    }
    instance(&schema, &Fill::Echo(prompt)).to_string()
}

pub fn valid_content(request: &Value) -> String {
    let schema = schema_of(request);
    if schema.is_null() {
        return "Mock reply: the crew nods and gets to work.".to_string();
    }
    instance(&schema, &Fill::Words).to_string()
}

pub enum Fill {
    /// Sentences that name the field they fill.
    Words,
    /// This text in every string.
    Echo(String),
    /// Blank strings just long enough for the schema.
    Blank,
}

/// The smallest instance of `schema` (required properties only, enums take their first value).
pub fn instance(schema: &Value, fill: &Fill) -> Value {
    instance_named(schema, "reply", fill)
}

fn instance_named(schema: &Value, name: &str, fill: &Fill) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(first) = schema["const"].as_str() {
        return Value::String(first.to_string());
    }
    // A choice of shapes (a scene planner's tool calls): the first.
    for key in ["oneOf", "anyOf"] {
        if let Some(first) = schema[key].as_array().and_then(|e| e.first()) {
            return instance_named(first, name, fill);
        }
    }
    match schema["type"].as_str().unwrap_or("object") {
        "object" => {
            let mut out = serde_json::Map::new();
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            for key in required.iter().filter_map(Value::as_str) {
                let prop = &schema["properties"][key];
                out.insert(key.to_string(), instance_named(prop, key, fill));
            }
            Value::Object(out)
        }
        "array" => Value::Array(Vec::new()),
        "boolean" => Value::Bool(false),
        "integer" | "number" => json!(schema["minimum"].as_i64().unwrap_or(0)),
        _ => {
            let min = schema["minLength"].as_u64().unwrap_or(0) as usize;
            match fill {
                Fill::Blank => Value::String(" ".repeat(min)),
                Fill::Words => Value::String(words_for(name)),
                Fill::Echo(text) => Value::String(text.clone()),
            }
        }
    }
}

fn words_for(field: &str) -> String {
    match field {
        "action" => {
            "I ease the Raptor toward the docking bay at minimum thrust, watching the scanner."
                .to_string()
        }
        other => format!("Mock {other}: the crew works the problem carefully."),
    }
}

/// True when some string in `value` is non-empty and all whitespace.
pub fn has_blank_string(value: &Value) -> bool {
    match value {
        Value::String(s) => !s.is_empty() && s.trim().is_empty(),
        Value::Array(items) => items.iter().any(has_blank_string),
        Value::Object(map) => map.values().any(has_blank_string),
        _ => false,
    }
}
