//! Time to first visible text vs time to the whole reply, through the gateway.
//!
//! `cargo run --release -p troupe-llm --example stream_bench` serves a 200-token reply from a
//! loopback OpenAI-compatible server that writes one token every 30 ms (a hosted model's pace),
//! asked as a stream and as a whole body. With `--features local -- --local FILE.gguf` it also
//! times the embedded model. Prints the medians of `RUNS` calls each.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use troupe_llm::{
    CallTag, ChatModel, ChatRequest, Gateway, Message, ProviderSpec, RetryPolicy, TokioSleeper,
    connect,
};

const RUNS: usize = 7;
const TOKENS: usize = 200;
const PACE: Duration = Duration::from_millis(30);

/// A server that answers every request with `TOKENS` tokens, `PACE` apart: as a stream when
/// asked, else as one body after the same total time.
fn serve() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    Ok(url)
}

fn answer(mut stream: std::net::TcpStream) {
    let Ok(read) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line.trim_end().is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let streamed = serde_json::from_slice::<serde_json::Value>(&body)
        .map(|b| b["stream"] == true)
        .unwrap_or(false);
    let tokens: Vec<String> = (0..TOKENS).map(|i| format!(" word{i}")).collect();
    if !streamed {
        std::thread::sleep(PACE * TOKENS as u32);
        let reply = json!({"choices": [{"message": {"content": tokens.concat()}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": TOKENS}})
        .to_string();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
            reply.len()
        );
        return;
    }
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
    );
    // Each token on its own deadline, so the sleeps' overshoot does not add up over 200.
    let start = Instant::now();
    for (i, token) in tokens.iter().enumerate() {
        let due = start + PACE * (i as u32 + 1);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": token}}]});
        let _ = stream.write_all(format!("data: {chunk}\n\n").as_bytes());
        let _ = stream.flush();
    }
    let done = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    let usage = json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": TOKENS}});
    let _ =
        stream.write_all(format!("data: {done}\n\ndata: {usage}\n\ndata: [DONE]\n\n").as_bytes());
}

/// (first visible text, whole reply, output tokens) of one gateway call.
async fn time_call(
    gateway: &Gateway,
    req: &ChatRequest,
) -> Result<(Duration, Duration, u32), Error> {
    let started = Instant::now();
    let first: Mutex<Option<Duration>> = Mutex::new(None);
    let reply = gateway
        .call_with_progress(req, &mut |_| {}, &|p| {
            if !p.text_delta.is_empty() {
                let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert_with(|| started.elapsed());
            }
        })
        .await?;
    let whole = started.elapsed();
    let first = first
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or(whole);
    Ok((first, whole, reply.usage.output_tokens))
}

async fn bench(label: &str, model: Arc<dyn ChatModel>, req: &ChatRequest) -> Result<(), Error> {
    let gateway = Gateway::new(model, RetryPolicy::default(), Arc::new(TokioSleeper));
    let mut firsts = Vec::new();
    let mut wholes = Vec::new();
    let mut tokens = 0;
    for _ in 0..RUNS {
        let (first, whole, n) = time_call(&gateway, req).await?;
        firsts.push(first);
        wholes.push(whole);
        tokens = n;
    }
    println!(
        "{label:<40} {tokens:>4} tokens  first text {:>7.0} ms  whole reply {:>7.0} ms",
        median_ms(&mut firsts),
        median_ms(&mut wholes)
    );
    Ok(())
}

fn median_ms(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

fn request() -> ChatRequest {
    let mut req = ChatRequest::new(
        CallTag::new("bench", "narration"),
        vec![
            Message::system("You are the game master of a Lasers & Feelings game."),
            Message::user("Describe the derelict station the crew has just docked at."),
        ],
    );
    req.max_tokens = TOKENS as u32;
    req.temperature = 0.0;
    req
}

type Error = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let url = serve()?;
    let req = request();
    println!("median of {RUNS} calls each; mock server: {TOKENS} tokens, one every {PACE:?}");
    for stream in [true, false] {
        let spec = ProviderSpec {
            stream,
            ..ProviderSpec::openai_compatible(url.clone(), "mock", None)
        };
        let model = connect(&spec, Duration::from_secs(60))?;
        let label = if stream {
            "mock, streamed"
        } else {
            "mock, whole body (--no-stream)"
        };
        bench(label, model, &req).await?;
    }
    local(&req).await
}

#[cfg(feature = "local")]
async fn local(req: &ChatRequest) -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args
        .iter()
        .position(|a| a == "--local")
        .and_then(|i| args.get(i + 1))
    else {
        return Ok(());
    };
    let model = troupe_llm::local::LocalModel::load(&troupe_llm::local::LocalOptions::new(path))?;
    bench("embedded model (--provider local)", Arc::new(model), req).await
}

#[cfg(not(feature = "local"))]
async fn local(_req: &ChatRequest) -> Result<(), Error> {
    Ok(())
}
