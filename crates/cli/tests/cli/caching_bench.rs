#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Benchmark (run on demand, figures in BENCHMARKS.md, "Prompt caching"): what prompt caching
//! saves at a troupe table. Local mock servers implement each provider's caching rules, the real
//! `troupe` binary plays a 1-player and a 4-player session of 50 scripted turns against them (with
//! one-line narrations and with narrations of a hosted GM's length), and
//! the log's `model_call` token counts give the billed input per turn at turns 1, 10 and 50.
//!
//! - OpenAI (automatic prefix caching): a prompt of 1,024 tokens or more is cached in 128-token
//!   steps; a later prompt that starts with a cached prefix reads it at the cached price. The
//!   mock caches every prefix it sees and never evicts (the best case: OpenAI keeps a prefix for
//!   5–10 minutes of inactivity and routes by prefix, so real hit rates are at most this).
//! - Anthropic (explicit breakpoints): the prompt (tools, then system, then messages) is cached
//!   up to each `cache_control` block of 1,024 tokens or more, for 5 minutes refreshed on each
//!   hit; a hit reads the longest cached breakpoint prefix, the rest up to the last breakpoint
//!   is written.
//!
//! Tokens are counted as characters / 4 (both mocks). Run:
//! `cargo test -p troupe-cli --test cli caching_bench -- --ignored --nocapture`

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::support;
use support::openai_server::{Fill, instance, valid_content};
use support::{examples, read_log, troupe};

const TURNS: usize = 50;
const MIN_CACHED: usize = 1024;
const STEP: usize = 128;
const ANTHROPIC_TTL: Duration = Duration::from_secs(300);

/// With `CACHING_BENCH_DUMP` set to a file, every request body is appended to it (one JSON a
/// line), to study what the calls of a turn share.
fn dump(body: &Value) {
    if let Ok(path) = std::env::var("CACHING_BENCH_DUMP") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{body}");
        }
    }
}

fn tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

fn hash(text: &str) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// OpenAI's automatic prefix caching over the prompt's messages.
#[derive(Default)]
struct OpenAiCache {
    prefixes: Mutex<std::collections::HashSet<u64>>,
}

impl Respond for OpenAiCache {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        dump(&body);
        let prompt: String = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "<{}>{}",
                    m["role"],
                    m["content"].as_str().unwrap_or_default()
                )
            })
            .collect();
        let chars: Vec<char> = prompt.chars().collect();
        let total = tokens(chars.len());
        let prefix = |t: usize| -> String { chars[..(t * 4).min(chars.len())].iter().collect() };
        let mut seen = self.prefixes.lock().unwrap();
        let mut cached = 0;
        let mut t = MIN_CACHED;
        while t <= total {
            let key = hash(&prefix(t));
            if seen.contains(&key) {
                cached = t;
            }
            seen.insert(key);
            t += STEP;
        }
        ResponseTemplate::new(200).set_body_json(json!({
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": valid_content(&body)}}],
            "usage": {"prompt_tokens": total, "completion_tokens": 40,
                      "prompt_tokens_details": {"cached_tokens": cached}}
        }))
    }
}

/// Anthropic's explicit breakpoints with a time to live.
#[derive(Default)]
struct AnthropicCache {
    /// Prefix hash → when it expires.
    entries: Mutex<HashMap<u64, Instant>>,
}

/// The prompt as Anthropic orders it (tools, system, messages), block by block, each with
/// whether it carries a breakpoint.
fn anthropic_blocks(body: &Value) -> Vec<(String, bool)> {
    let mut out = vec![(body["tools"].to_string(), false)];
    let text_blocks = |v: &Value, role: &str| -> Vec<(String, bool)> {
        match v {
            Value::String(s) => vec![(format!("<{role}>{s}"), false)],
            Value::Array(blocks) => blocks
                .iter()
                .map(|b| {
                    (
                        format!("<{role}>{}", b["text"].as_str().unwrap_or_default()),
                        b.get("cache_control").is_some(),
                    )
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    out.extend(text_blocks(&body["system"], "system"));
    for m in body["messages"].as_array().unwrap() {
        out.extend(text_blocks(&m["content"], m["role"].as_str().unwrap()));
    }
    out
}

impl Respond for AnthropicCache {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        dump(&body);
        let blocks = anthropic_blocks(&body);
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap();
        entries.retain(|_, expires| *expires > now);
        let (mut text, mut read, mut last_breakpoint) = (String::new(), 0, 0);
        let mut breakpoints = Vec::new();
        for (block, marked) in &blocks {
            text.push_str(block);
            if *marked {
                let t = tokens(text.chars().count());
                last_breakpoint = t;
                breakpoints.push((hash(&text), t));
            }
        }
        let total = tokens(text.chars().count());
        for (key, t) in &breakpoints {
            if entries.contains_key(key) {
                read = *t;
            }
        }
        let mut written = 0;
        for (key, t) in &breakpoints {
            if *t >= MIN_CACHED {
                entries.insert(*key, now + ANTHROPIC_TTL);
            }
        }
        if last_breakpoint > read && last_breakpoint >= MIN_CACHED {
            written = last_breakpoint - read;
        }
        let reply = instance(&reply_schema(&body), &Fill::Words);
        let name = body["tools"][0]["name"].clone();
        ResponseTemplate::new(200).set_body_json(json!({
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": reply}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": total - read - written, "cache_read_input_tokens": read,
                      "cache_creation_input_tokens": written, "output_tokens": 40}
        }))
    }
}

/// The schema the reply must follow: the forced tool's, or, when the tool takes any object
/// (a request that names a stable prefix), the one written at the end of the last message.
fn reply_schema(body: &Value) -> Value {
    let tool = &body["tools"][0]["input_schema"];
    if tool.get("properties").is_some() {
        return tool.clone();
    }
    let last = &body["messages"].as_array().unwrap().last().unwrap()["content"];
    let text = match last {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.last().unwrap()["text"].as_str().unwrap().to_string(),
        _ => String::new(),
    };
    const MARK: &str = "The JSON schema: ";
    let (_, schema) = text
        .rsplit_once(MARK)
        .expect("the schema at the end of the last message");
    serde_json::from_str(schema).unwrap()
}

/// The GM's words of each turn. `Length::Scripted` is a one-line narration (~35 tokens);
/// `Length::Hosted` is what a hosted GM model writes (a narration of ~170 tokens and an outcome
/// of ~70), since what crosses a provider's 1,024-token minimum is the story the calls share.
#[derive(Clone, Copy, Debug)]
enum Length {
    Scripted,
    Hosted,
}

fn script(length: Length) -> String {
    let mut s = String::from("turns:\n");
    for t in 1..=TURNS {
        let (narration, outcome) = match length {
            Length::Scripted => (
                format!(
                    "Turn {t}: the Raptor drifts past wreck number {t} of the relay field. Its hull is scored and a faint beacon pulses from the bridge."
                ),
                format!(
                    "Wreck {t} falls behind; the crew logs what they saw and the beacon fades."
                ),
            ),
            Length::Hosted => (
                format!(
                    "Turn {t}: the Raptor drifts past wreck number {t} of the relay field, close enough that the running lights wash over its scored hull. Frost has grown along the seams where the plating buckled, and a faint beacon pulses from the bridge in a rhythm that does not match any Consortium code you know. Somewhere aft, a cargo door hangs open on its last hinge, and loose crates tumble slowly out of it into the dark. The sensors pick up a thin trail of warm air leaking from a maintenance hatch near the engines, which means something in there still has power, or had it very recently. Your comms crackle with a burst of static that almost sounds like a voice, then nothing. The relay field stretches on ahead, hundreds more wrecks turning in the starlight."
                ),
                format!(
                    "Wreck {t} falls behind. The crew logs the beacon's pattern, the open cargo door and the warm air from the hatch; the static does not come back. For now the Raptor is alone again, and the next wreck is already turning into view on the forward screen."
                ),
            ),
        };
        s.push_str(&format!(
            "  - narration: \"{narration}\"\n    outcome: \"{outcome}\"\n"
        ));
    }
    s
}

struct Figures {
    /// Per turn: (input, cached, written).
    turns: BTreeMap<u64, (u64, u64, u64)>,
    calls: usize,
    elapsed: Duration,
}

fn play(campaign: &str, provider: &str, length: Length, server: &MockServer) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(examples().join(campaign), dir.path().join(campaign)).unwrap();
    std::fs::write(dir.path().join("gm.yaml"), script(length)).unwrap();
    let started = Instant::now();
    let mut cmd = troupe();
    cmd.current_dir(dir.path())
        .args(["play", campaign, "--gm-script", "gm.yaml", "--seed", "5"]);
    match provider {
        "openai" => cmd
            .args(["--provider", "openai-compatible", "--model", "gpt-4o-mini"])
            .arg("--base-url")
            .arg(format!("{}/v1", server.uri())),
        _ => cmd
            .env("ANTHROPIC_API_KEY", "mock-key")
            .env("ANTHROPIC_BASE_URL", server.uri())
            .args(["--provider", "anthropic", "--model", "claude-sonnet-4-5"]),
    };
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));
    let mut turns = BTreeMap::new();
    let mut calls = 0;
    for e in log.iter().filter(|e| e["event_type"] == "model_call") {
        calls += 1;
        let u = &e["usage"];
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        let t: &mut (u64, u64, u64) = turns.entry(e["turn_number"].as_u64().unwrap()).or_default();
        t.0 += n("input_tokens");
        t.1 += n("cached_input_tokens");
        t.2 += n("cache_write_tokens");
    }
    Figures {
        turns,
        calls,
        elapsed: started.elapsed(),
    }
}

/// Billed input of a turn in full-price input tokens: cached at `read` × the input price,
/// written at `write` ×.
fn billed(t: (u64, u64, u64), read: f64, write: f64) -> f64 {
    let (input, cached, written) = t;
    (input - cached - written) as f64 + cached as f64 * read + written as f64 * write
}

fn report(label: &str, f: &Figures, read: f64, write: f64) -> Vec<f64> {
    println!(
        "{label}: {} calls, {:.0} s",
        f.calls,
        f.elapsed.as_secs_f64()
    );
    let mut at = Vec::new();
    for turn in [1, 10, 50] {
        let t = f.turns.get(&turn).copied().unwrap_or_default();
        let b = billed(t, read, write);
        println!(
            "  turn {turn:>2}: input {:>6}, cached {:>6}, written {:>6}, billed input {:>8.0} ({:.0}% of uncached)",
            t.0,
            t.1,
            t.2,
            b,
            100.0 * b / (t.0.max(1) as f64)
        );
        at.push(b);
    }
    at
}

fn server(provider: &str, rt: &tokio::runtime::Runtime) -> MockServer {
    rt.block_on(async {
        let server = MockServer::start().await;
        match provider {
            "openai" => {
                Mock::given(method("POST"))
                    .respond_with(OpenAiCache::default())
                    .mount(&server)
                    .await
            }
            _ => {
                Mock::given(method("POST"))
                    .respond_with(AnthropicCache::default())
                    .mount(&server)
                    .await
            }
        }
        server
    })
}

#[test]
#[ignore = "benchmark: minutes; run with --ignored --nocapture, figures in BENCHMARKS.md"]
fn prompt_caching_per_turn_for_one_and_four_players() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    // gpt-4o-mini: cached input at half price, writes free; Claude: reads 0.1×, writes 1.25×.
    for length in [Length::Scripted, Length::Hosted] {
        for (provider, read, write) in [("openai", 0.5, 1.0), ("anthropic", 0.1, 1.25)] {
            let label = format!("{provider} ({length:?} narration)");
            let one = play("campaign.json", provider, length, &server(provider, &rt));
            let lone = report(&format!("{label}, 1 player"), &one, read, write);
            let four = play("party4.json", provider, length, &server(provider, &rt));
            let party = report(&format!("{label}, 4 players"), &four, read, write);
            println!(
                "  {label}: a 4-player turn 50 costs {:.1}× a lone player's",
                party[2] / lone[2].max(1.0)
            );
        }
    }
}
