#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Spend limits and what a session cost, end to end through the `troupe` binary: a session
//! stops saved at its token or dollar limit, says what it spent and how to go on, and
//! `troupe resume` with a higher limit finishes the same story; `troupe stats` shows tokens and
//! money per session, per model and per turn.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support;
use support::openai_server::{OpenAiServer, Personality};
use support::{DEMO, campaign_with, read_log, troupe};

const PLAY: [&str; 6] = [
    "play",
    "campaign.json",
    "--gm-script",
    "demo.gm.yaml",
    "--seed",
    "7",
];

fn troupe_in(dir: &Path, args: &[&str]) -> Output {
    troupe().current_dir(dir).args(args).output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn log_of(dir: &Path) -> Vec<Value> {
    read_log(&dir.join("logs/session-1.jsonl"))
}

fn count(log: &[Value], event_type: &str) -> usize {
    log.iter().filter(|e| e["event_type"] == event_type).count()
}

fn tokens_spent(log: &[Value]) -> u64 {
    log.iter()
        .filter(|e| e["event_type"] == "model_call")
        .map(|e| {
            e["usage"]["input_tokens"].as_u64().unwrap()
                + e["usage"]["output_tokens"].as_u64().unwrap()
        })
        .sum()
}

/// The story without what differs between runs (times, positions, latencies, resume markers).
fn story(log: &[Value]) -> Vec<Value> {
    log.iter()
        .filter(|e| e["event_type"] != "session_resumed")
        .map(|e| {
            let mut e = e.clone();
            for k in ["timestamp", "seq", "session_id", "latency_ms"] {
                e.as_object_mut().unwrap().remove(k);
            }
            e
        })
        .collect()
}

#[test]
fn a_token_limit_stops_the_session_saved_and_resume_finishes_the_same_story() {
    let whole = campaign_with(&DEMO);
    let out = troupe_in(whole.path(), &PLAY);
    assert!(out.status.success(), "{:?}", text(&out));
    let uninterrupted = log_of(whole.path());
    let total = tokens_spent(&uninterrupted);
    assert!(total > 0);

    let dir = campaign_with(&DEMO);
    let limit = total / 3;
    let mut args = PLAY.to_vec();
    let limit_arg = limit.to_string();
    args.extend(["--max-tokens", &limit_arg]);
    let out = troupe_in(dir.path(), &args);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stderr.contains("spend limit reached"), "{stderr}");
    assert!(
        stderr.contains(&format!("limit {limit} tokens")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("troupe resume --max-tokens {}", limit * 2)),
        "says how to go on: {stderr}"
    );
    let stopped = log_of(dir.path());
    let spent = tokens_spent(&stopped);
    assert!(
        spent >= limit && spent < total,
        "spent {spent}, limit {limit}, whole {total}"
    );
    assert!(
        stderr.contains(&format!("{spent} tokens")),
        "says how much: {stderr}"
    );
    assert_eq!(count(&stopped, "session_ended"), 0, "stopped, not ended");
    assert!(count(&stopped, "turn_completed") < 3);

    // Resuming under the same limit stops at once, spending nothing more.
    let resume = [
        "resume",
        "--gm-script",
        "demo.gm.yaml",
        "--max-tokens",
        &limit_arg,
    ];
    let out = troupe_in(dir.path(), &resume);
    assert_eq!(out.status.code(), Some(3), "{:?}", text(&out));
    assert_eq!(tokens_spent(&log_of(dir.path())), spent);

    // With a higher limit it finishes, and the story is the one an unlimited run told.
    let out = troupe_in(
        dir.path(),
        &[
            "resume",
            "--gm-script",
            "demo.gm.yaml",
            "--max-tokens",
            "100000000",
        ],
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let resumed = log_of(dir.path());
    assert_eq!(count(&resumed, "turn_completed"), 3);
    assert_eq!(story(&resumed), story(&uninterrupted));
}

/// A campaign file played against the local mock server, priced at `price` dollars per million
/// input and output tokens for the mock's model, with an optional `spend_limit` block.
fn priced_campaign(price: f64, spend_limit: Option<Value>) -> tempfile::TempDir {
    let dir = campaign_with(&DEMO);
    let path = dir.path().join("campaign.json");
    let mut campaign: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    campaign["prices"] = serde_json::json!({"mock-model": {"input": price, "output": price}});
    if let Some(limit) = spend_limit {
        campaign["spend_limit"] = limit;
    }
    std::fs::write(&path, campaign.to_string()).unwrap();
    dir
}

fn play_http(dir: &Path, server: &OpenAiServer, extra: &[&str]) -> Output {
    troupe()
        .current_dir(dir)
        .args(PLAY)
        .args(["--provider", "openai-compatible", "--base-url"])
        .arg(server.base_url())
        .args(["--model", "mock-model"])
        .args(extra)
        .output()
        .unwrap()
}

fn mock() -> OpenAiServer {
    OpenAiServer::start(Personality::Faults {
        seed: 1,
        percent: 0,
        hold: std::time::Duration::from_millis(1),
    })
}

#[test]
fn a_dollar_limit_from_the_campaign_file_stops_at_the_price_it_sets() {
    // The mock bills 100 input and 20 output tokens a call: at $1,000 per million, $0.12.
    let server = mock();
    let dir = priced_campaign(1000.0, Some(serde_json::json!({"session": {"usd": 0.5}})));
    let out = play_http(dir.path(), &server, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    let log = log_of(dir.path());
    let calls = count(&log, "model_call");
    assert_eq!(calls, server.served().len());
    // Stopped between steps, once $0.50 was reached: at least 5 calls ($0.60).
    assert!(calls >= 5, "{calls} calls");
    assert!(stderr.contains("(limit $0.50)"), "{stderr}");
    assert!(
        stderr.contains("troupe resume --max-spend 1.00"),
        "{stderr}"
    );
    let spent = calls as f64 * 0.12;
    assert!(stderr.contains(&format!("spent ${spent:.4}")), "{stderr}");

    // `troupe stats` shows the money per session and per model, at the campaign's prices.
    let out = troupe_in(dir.path(), &["stats"]);
    let (stats, _) = text(&out);
    assert!(out.status.success(), "{stats}");
    let session_line = stats
        .lines()
        .find(|l| l.trim_start().starts_with("session 1 ") && l.contains('$'))
        .unwrap_or_else(|| panic!("no cost line for session 1:\n{stats}"));
    assert!(
        session_line.contains(&format!("${spent:.2}")),
        "{session_line}"
    );
    assert!(
        stats
            .lines()
            .any(|l| l.contains("openai-compatible:mock-model") && l.contains('$')),
        "{stats}"
    );
    let json = troupe_in(dir.path(), &["stats", "--json"]);
    let value: Value = serde_json::from_slice(&json.stdout).unwrap();
    let usd = value["cost"]["total"]["usd"].as_f64().unwrap();
    assert!((usd - spent).abs() < 1e-9, "{usd} vs {spent}");
    assert_eq!(
        value["cost"]["total"]["input_tokens"].as_u64(),
        Some(100 * calls as u64)
    );
}

#[test]
fn a_dollar_limit_on_a_model_without_a_price_is_refused_with_the_way_out() {
    let server = mock();
    let dir = campaign_with(&DEMO);
    let out = play_http(dir.path(), &server, &["--max-spend", "2.50"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("mock-model"), "{stderr}");
    assert!(stderr.contains("\"prices\""), "{stderr}");
    assert!(stderr.contains("--max-tokens"), "{stderr}");
    assert!(server.served().is_empty(), "nothing was spent");
}

#[test]
fn recorded_replies_cost_nothing_and_say_so() {
    let dir = campaign_with(&DEMO);
    let out = troupe_in(dir.path(), &PLAY);
    assert!(out.status.success());
    let (stats, _) = text(&troupe_in(dir.path(), &["stats"]));
    assert!(stats.contains("$0 (local model or recording)"), "{stats}");
}

#[test]
fn bad_prices_and_limits_in_the_campaign_file_name_the_field_and_what_is_allowed() {
    let dir = priced_campaign(
        -1.0,
        Some(serde_json::json!({"session": {"usd": "lots", "minutes": 5}})),
    );
    let out = troupe_in(dir.path(), &["check", "campaign.json"]);
    let (stdout, stderr) = text(&out);
    let all = stdout + &stderr;
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("prices[\"mock-model\"].input = -1.0"), "{all}");
    assert!(
        all.contains("dollars per million tokens, 0 or more"),
        "{all}"
    );
    assert!(all.contains("spend_limit.session.usd = \"lots\""), "{all}");
    assert!(all.contains("spend_limit.session.minutes"), "{all}");
    assert!(all.contains("allowed fields: usd, tokens"), "{all}");
}

#[test]
fn a_batch_limit_starts_no_further_run_once_reached() {
    let dir = campaign_with(&DEMO);
    let out = troupe()
        .current_dir(dir.path())
        .args([
            "simulate",
            "campaign.json",
            "--seeds",
            "1..=12",
            "--jobs",
            "1",
        ])
        .args(["--out", "runs", "--max-tokens", "1", "--"])
        .args(["--gm-script", "demo.gm.yaml"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stdout.contains("Batch spend limit reached"), "{stdout}");
    assert!(stdout.contains("(limit 1 tokens)"), "{stdout}");
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("runs/simulate.json")).unwrap(),
    )
    .unwrap();
    let started = summary["runs"].as_array().unwrap().len();
    assert!(
        (1..12).contains(&started),
        "the limit (reached by the first run's first call) stopped the batch: {started} runs"
    );
}
