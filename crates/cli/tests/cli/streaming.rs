#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Streamed model replies through the real `troupe` binary over a real socket: a session
//! against a server that streams plays to the end with a log of the same shape (and the same
//! replies) as one against the same server answering whole bodies (`--no-stream`), and its
//! replay is byte-identical.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::support;
use support::openai_server::{OpenAiServer, Personality};
use support::{examples, read_log, troupe};

fn play(dir: &Path, server: &OpenAiServer, extra: &[&str]) -> Output {
    troupe()
        .current_dir(dir)
        .env_remove("OPENAI_BASE_URL")
        .args([
            "play",
            "campaign.json",
            "--gm-script",
            "gm.yaml",
            "--seed",
            "11",
        ])
        .args(["--provider", "openai-compatible", "--base-url"])
        .arg(server.base_url())
        .args(["--model", "smollm2"])
        .args(extra)
        .output()
        .unwrap()
}

fn session(server: &OpenAiServer, extra: &[&str]) -> (tempfile::TempDir, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("campaign.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    std::fs::copy(examples().join("demo.gm.yaml"), dir.path().join("gm.yaml")).unwrap();
    let out = play(dir.path(), server, extra);
    assert!(
        out.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));
    assert_eq!(log.last().unwrap()["event_type"], "session_ended");
    (dir, log)
}

/// What a log says, without what differs between any two runs (times, the session id, latencies, the mock
/// server's port in the provider's name) or between a stream and a whole body (the time to the
/// first token).
fn shape(log: &[Value]) -> Vec<Value> {
    log.iter()
        .map(|e| {
            let mut e = e.clone();
            let Some(map) = e.as_object_mut() else {
                return e;
            };
            for volatile in [
                "timestamp",
                "session_id",
                "latency_ms",
                "first_token_ms",
                "provider",
                "model",
            ] {
                map.remove(volatile);
            }
            e
        })
        .collect()
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = troupe().current_dir(dir).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn a_streamed_session_logs_what_a_whole_body_session_does_and_replays_byte_for_byte() {
    let streaming = OpenAiServer::start(Personality::Paced {
        delay: Duration::from_millis(1),
    });
    let (dir, streamed) = session(&streaming, &[]);
    let served = streaming.served();
    assert!(!served.is_empty() && served.iter().all(|s| s.streamed));

    let whole = OpenAiServer::start(Personality::Paced {
        delay: Duration::ZERO,
    });
    let (_whole_dir, plain) = session(&whole, &["--no-stream"]);
    assert!(whole.served().iter().all(|s| !s.streamed));

    assert_eq!(streamed.len(), plain.len());
    for (a, b) in shape(&streamed).iter().zip(shape(&plain)) {
        let differ: Vec<&String> = a
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, v)| b.get(k.as_str()) != Some(v))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            *a, b,
            "streamed (left) vs whole bodies (right) differ in {differ:?}"
        );
    }
    let calls: Vec<&Value> = streamed
        .iter()
        .filter(|e| e["event_type"] == "model_call")
        .collect();
    assert!(calls.len() > 5, "{}", calls.len());
    for call in calls {
        let first = call["first_token_ms"]
            .as_u64()
            .expect("streamed calls time their first token");
        assert!(first <= call["latency_ms"].as_u64().unwrap(), "{call}");
    }

    let out = troupe()
        .current_dir(dir.path())
        .args(["replay", "1"])
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && said.contains("identical"), "{said}");
    let original = run_ok(dir.path(), &["transcript", "1"]);
    let replayed =
        std::fs::read_to_string(dir.path().join("replays/session-1-replay-1.md")).unwrap();
    assert_eq!(original, replayed);
}

/// `args` run by `troupe` in `dir` at a real pseudo-terminal (`script`), against `server`:
/// what the screen showed, and whether the command succeeded.
fn at_a_terminal(dir: &Path, args: &str, server: &OpenAiServer) -> (String, bool) {
    let troupe = assert_cmd::cargo::cargo_bin("troupe");
    let command = format!(
        "{} {args} --provider openai-compatible --base-url {} --model smollm2 </dev/null",
        troupe.display(),
        server.base_url()
    );
    let out = std::process::Command::new("script")
        .current_dir(dir)
        .env_remove("OPENAI_BASE_URL")
        .env("TROUPE_RETRY_SCALE", "0.001")
        // The mock answers with schema-shaped filler, not play: the rules alone keep its retries fixed.
        .env("TROUPE_DETECTOR", "pattern")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        out.status.success(),
    )
}

/// Whether the screen shows `doing` followed by a count of more than zero tokens.
fn counts_tokens(screen: &str, doing: &str) -> bool {
    screen.split(doing).skip(1).any(|rest| {
        let rest = rest.trim_start_matches(' ');
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().is_ok_and(|n| n > 0)
            && rest
                .strip_prefix(digits.as_str())
                .is_some_and(|r| r.starts_with(" token"))
    })
}

fn paced() -> OpenAiServer {
    OpenAiServer::start(Personality::Paced {
        delay: Duration::from_millis(40),
    })
}

/// At a terminal, the AI GM's calls show a spinner that says what the GM is deciding and
/// counts its reply's tokens as they stream; so do the players' calls.
#[test]
fn the_terminal_counts_the_ai_gms_tokens_while_it_writes() {
    let server = paced();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(examples().join("aigm.json"), dir.path().join("aigm.json")).unwrap();
    let (screen, ok) = at_a_terminal(dir.path(), "play aigm.json --turns 1 --seed 11", &server);
    assert!(ok, "{screen}");
    assert!(
        counts_tokens(&screen, "The GM is narrating…"),
        "no GM token count in:\n{screen}"
    );
    assert!(
        counts_tokens(&screen, "are considering questions for the GM…"),
        "no player token count in:\n{screen}"
    );
}

/// At a terminal, an encounter's GM call shows who is thinking and its reply's tokens so far.
/// (The mock's replies are shaped by the schema alone, so the GM's checks may refuse them and
/// the run stop: what is checked is the screen while the model wrote.)
#[test]
fn the_terminal_counts_an_encounter_gms_tokens_while_it_writes() {
    let server = paced();
    let dir = crate::encounter::campaign();
    let (screen, _) = at_a_terminal(
        dir.path(),
        "encounter run encounters/smithy.yaml --players ai,ai --seed 12 --max-turns 1",
        &server,
    );
    assert!(
        counts_tokens(&screen, "The GM is thinking…"),
        "no GM token count in:\n{screen}"
    );
}

/// At a terminal, a scene's AI speaker shows that it is thinking and its reply's tokens so far.
#[test]
fn the_terminal_counts_a_scene_ai_speakers_tokens_while_it_writes() {
    let server = paced();
    let dir = crate::scene::scene_dir();
    let (screen, _) = at_a_terminal(
        dir.path(),
        "scene play mill.scene.yaml --seed 2 --player ai --ai-lines 1",
        &server,
    );
    assert!(
        counts_tokens(&screen, "The AI speaker is thinking…"),
        "no token count in:\n{screen}"
    );
}
