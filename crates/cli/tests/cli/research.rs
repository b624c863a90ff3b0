#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The research instruments end to end: sessions played through the real binary (the example
//! party with recorded replies, the single-seat demo killed and resumed, a session over HTTP
//! against a mock server), then `troupe log`, `troupe stats` and `troupe report` checked against
//! what the session actually did, and the log audited for completeness (SC-012).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{Value, json};

use crate::support;
use support::{copy_examples, examples, of_type, troupe};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let out = troupe().current_dir(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked:\n{stderr}");
    out
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "{args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn run_err(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(!out.status.success(), "{args:?} should have failed");
    String::from_utf8(out.stderr).unwrap()
}

fn read_log(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("logs/session-1.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The example party session (examples/party.*): three AI players, three turns.
fn played_party() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(
        dir.path(),
        &["party.json", "research.gm.yaml", "research.replay.jsonl"],
    );
    run_ok(
        dir.path(),
        &[
            "play",
            "party.json",
            "--gm-script",
            "research.gm.yaml",
            "--replay",
            "research.replay.jsonl",
            "--seed",
            "11",
        ],
    );
    dir
}

/// The `event_type` of every variant of Lasers & Feelings' `Event` enum, read from its source.
fn engine_event_types() -> Vec<String> {
    let src = std::fs::read_to_string(root().join("crates/lasers/src/events.rs")).unwrap();
    let body = src
        .split("pub enum Event {")
        .nth(1)
        .expect("events.rs has `pub enum Event`");
    let (body, _) = body.split_once("\n}\n").expect("the enum's closing brace");
    let mut types = Vec::new();
    for line in body.lines() {
        // A variant: four spaces of indent, then a capitalised name.
        let Some(rest) = line.strip_prefix("    ") else {
            continue;
        };
        if !rest.starts_with(|c: char| c.is_ascii_uppercase()) {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let mut snake = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            } else {
                snake.push(c);
            }
        }
        types.push(snake);
    }
    types
}

#[test]
fn every_event_type_the_engine_writes_is_documented() {
    let engine = engine_event_types();
    assert!(engine.len() >= 35, "the parse found too few: {engine:?}");
    for t in [
        "session_started",
        "model_call",
        "ooc_message",
        "gm_roll_override",
    ] {
        assert!(
            engine.contains(&t.to_string()),
            "{t} not parsed: {engine:?}"
        );
    }
    let doc = std::fs::read_to_string(root().join("docs/log-schema.md")).unwrap();
    let documented: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.strip_suffix('`'))
        .map(String::from)
        .collect();
    let known: Vec<&str> = troupe_report::EVENT_TYPES.iter().map(|(t, _)| *t).collect();
    for t in &engine {
        assert!(
            documented.contains(t),
            "docs/log-schema.md has no `### \\`{t}\\`` section"
        );
        assert!(
            known.contains(&t.as_str()),
            "troupe-report's EVENT_TYPES lacks {t}"
        );
    }
    // Nothing documented or listed that the engine no longer writes.
    for t in &documented {
        assert!(
            engine.contains(t),
            "docs/log-schema.md documents {t}, which the engine does not write"
        );
    }
    for t in &known {
        assert!(
            engine.contains(&t.to_string()),
            "EVENT_TYPES lists {t}, which the engine does not write"
        );
    }
}

#[test]
fn a_party_session_through_log_stats_and_report() {
    let dir = played_party();
    let d = dir.path();
    let log = read_log(d);

    // What was written is what the engine's enum can write (checks the source parse above).
    let engine = engine_event_types();
    for e in &log {
        let t = e["event_type"].as_str().unwrap();
        assert!(
            engine.iter().any(|x| x == t),
            "{t} is not an engine event type"
        );
    }

    // --- troupe log -------------------------------------------------------------------------
    let all = run_ok(d, &["log"]);
    assert_eq!(all.lines().count(), log.len(), "every event, one per line");
    let lines: Vec<Value> = run_ok(
        d,
        &["log", "1", "--type", "consensus", "--type", "vote_cast"],
    )
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let want: Vec<&Value> = log
        .iter()
        .filter(|e| e["event_type"] == "consensus" || e["event_type"] == "vote_cast")
        .collect();
    assert_eq!(lines.len(), want.len());
    for (got, want) in lines.iter().zip(&want) {
        assert_eq!(got, *want, "the event as logged");
    }
    let calls = run_ok(d, &["log", "--type", "model_call"]);
    assert_eq!(calls.lines().count(), of_type(&log, "model_call").len());
    let err = run_err(d, &["log", "--type", "consensus", "--type", "conesnsus"]);
    assert!(err.contains("unknown event type conesnsus"), "{err}");
    assert!(
        err.contains("consensus (4)"),
        "lists the types present: {err}"
    );
    assert!(err.contains("model_call ("), "{err}");
    // A documented type that did not happen is not an error.
    let out = run(d, &["log", "--type", "gm_roll"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no gm_roll events in session 1"));

    // --- troupe stats, against the log ------------------------------------------------------
    let text = run_ok(d, &["stats"]);
    let line = |label: &str| -> String {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} in:\n{text}"))
            .to_string()
    };
    assert!(line("turns completed").ends_with(" 3"), "{text}");
    assert!(
        line("failure rate, first pass").contains("11.1% (1 of 9)"),
        "{text}"
    );
    assert!(
        line("failure rate, after retries").contains("0.0% (0 of 9)"),
        "{text}"
    );
    assert!(
        line("consensus, session 1").ends_with("majority 2, unanimous 1"),
        "{text}"
    );
    assert!(line("plans adopted from Alex").ends_with(" 2"), "{text}");
    assert!(line("plans adopted from Sam").ends_with(" 1"), "{text}");
    assert!(
        line("Sam → Alex").contains("help 1"),
        "Rex helped Zara-7: {text}"
    );
    assert!(line("gaps").ends_with("none"), "{text}");
    assert!(line("layer player").contains(" 0 "), "{text}");
    for kind in [
        "Player-only secret revealed",
        "Character acts against its directive",
        "GM override",
    ] {
        assert!(text.contains(kind), "{kind} flag missing:\n{text}");
    }

    let stats: Value = serde_json::from_str(&run_ok(d, &["stats", "--json"])).unwrap();
    let m = &stats["metrics"];
    let calls = of_type(&log, "model_call");
    assert_eq!(m["model"]["attempts"], calls.len());
    let tokens_in: u64 = calls
        .iter()
        .map(|c| c["usage"]["input_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(m["model"]["tokens"]["input"], tokens_in);
    assert_eq!(m["turns"], of_type(&log, "turn_completed").len());
    assert_eq!(
        m["validation"]["verdicts"],
        of_type(&log, "validation").len()
    );
    assert_eq!(m["validation"]["actions"], 9);
    assert_eq!(m["dice"]["rolls"], of_type(&log, "dice_rolled").len());
    let faces: u64 = of_type(&log, "dice_rolled")
        .iter()
        .map(|e| e["result"]["dice"].as_array().unwrap().len() as u64)
        .sum();
    let counted: u64 = m["dice"]["faces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(counted, faces);
    // Who proposed what was adopted, discussion by discussion, as the consensus events say.
    let adopted: Vec<(u64, String, String)> = m["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["turn"].as_u64().unwrap(),
                x["outcome"].as_str().unwrap().to_string(),
                x["proposer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        adopted,
        [
            (1, "unanimous".into(), "alex".into()),
            (2, "majority".into(), "sam".into()),
            (3, "majority".into(), "alex".into())
        ]
    );
    assert_eq!(m["discussions"][2]["rounds"], 2);
    assert_eq!(stats["audit"]["gaps"], json!([]));

    // --- troupe report ----------------------------------------------------------------------
    let out = run_ok(d, &["report", "-o", "report.html"]);
    assert!(out.contains("Report on session 1"), "{out}");
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    // Self-contained: nothing fetched, nothing run.
    for bad in ["<script", "<link", "src=", "url(", "@import"] {
        assert!(!html.contains(bad), "the report holds {bad}");
    }
    let without_svg_ns = html.replace("http://www.w3.org/2000/svg", "");
    assert!(!without_svg_ns.contains("http://") && !without_svg_ns.contains("https://"));
    for id in [
        "summary",
        "tokens",
        "validation",
        "consensus",
        "leadership",
        "relationships",
        "dice",
        "flags",
        "transcript",
    ] {
        assert!(html.contains(&format!("<h2 id=\"{id}\"")), "section {id}");
    }
    assert!(
        html.matches("<svg class=\"chart\"").count() >= 7,
        "the charts"
    );
    assert!(
        html.matches("<svg class=\"graph\"").count() >= 4,
        "graphs over time"
    );
    // Every flag links to its event, which is in the transcript.
    let flags = stats["flags"].as_array().unwrap();
    assert_eq!(flags.len(), 3, "{flags:?}");
    for f in flags {
        let anchor = format!("s1-ev-{}", f["seq"]);
        assert!(html.contains(&format!("href=\"#{anchor}\"")), "{anchor}");
        assert!(html.contains(&format!("id=\"{anchor}\"")), "{anchor}");
    }
    // What the AIs said, and beside it their reasoning.
    assert!(html.contains("Trust me on this one: that beacon was faked by the Consortium."));
    assert!(html.contains("The GM told me the beacon is a Consortium lure."));
    assert!(
        html.contains("Careful technical work: Lasers."),
        "a justification"
    );
    assert!(html.contains("model call: ooc_discussion (player layer)"));

    // --- SC-012: the log is complete ---------------------------------------------------------
    let events = troupe_report::load_session(d, 1, false).unwrap();
    let audit = troupe_report::audit(&events);
    assert!(audit.complete(), "{:?}", audit.gaps);
    assert_eq!(
        audit.phases_started as usize,
        of_type(&log, "phase_started").len()
    );
    assert_eq!(
        audit.phases_closed + audit.phases_interrupted,
        audit.phases_started
    );
    assert_eq!(
        audit.transitions as usize,
        of_type(&log, "phase_started").len() - 4
    );
    assert_eq!(audit.model_calls as usize, calls.len());
    assert_eq!(audit.decisions, audit.decisions_from_models);
    assert_eq!(
        audit.actions_with_verdict as usize,
        of_type(&log, "validation").len()
    );
    // Each turn went through every phase the party's turn has.
    for turn in 1..=3 {
        let phases: Vec<&str> = log
            .iter()
            .filter(|e| e["turn_number"] == turn && e["event_type"] == "phase_started")
            .map(|e| e["phase"].as_str().unwrap())
            .collect();
        for p in ["gm_narration", "discussion", "validation", "memory_storage"] {
            assert!(phases.contains(&p), "turn {turn}: {phases:?}");
        }
    }

    // The audit can fail: take one event out and it names the gap.
    let without = |pred: &dyn Fn(&Value) -> bool| -> Vec<String> {
        let left: Vec<Value> = events.iter().filter(|e| !pred(e)).cloned().collect();
        troupe_report::audit(&left)
            .gaps
            .into_iter()
            .map(|g| g.what)
            .collect()
    };
    let priya_call = calls
        .iter()
        .find(|c| c["agent"] == "priya" && c["purpose"] == "character_action")
        .unwrap()["seq"]
        .clone();
    assert_eq!(
        without(&|e| e["seq"] == priya_call),
        ["character_action by priya has no answered model_call (character_action) before it"]
    );
    let vote_or_ooc = calls
        .iter()
        .find(|c| c["purpose"] == "ooc_discussion")
        .unwrap()["seq"]
        .clone();
    assert_eq!(without(&|e| e["seq"] == vote_or_ooc).len(), 1);
    let verdict = of_type(&log, "validation")[0]["seq"].clone();
    let gaps = without(&|e| e["seq"] == verdict);
    assert!(gaps[0].contains("has no validation verdict"), "{gaps:?}");
    let gaps = without(&|e| {
        e["turn_number"] == 2 && e["phase"] == "helper_rolls" && e["event_type"] != "dice_rolled"
    });
    assert!(
        gaps.iter()
            .any(|g| g.contains("phase dice_resolution follows gm_adjudication")),
        "{gaps:?}"
    );
    let gaps = without(&|e| {
        e["turn_number"] == 1 && e["event_type"] == "phase_completed" && e["phase"] == "directive"
    });
    assert!(
        gaps.contains(&"phase directive was never completed".to_string()),
        "{gaps:?}"
    );

    // And through the binary: the same log with one model call cut out of its JSONL.
    let cut = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cut.path().join("logs")).unwrap();
    let jsonl: String = log
        .iter()
        .filter(|e| e["seq"] != priya_call)
        .map(|e| format!("{e}\n"))
        .collect();
    std::fs::write(cut.path().join("logs/session-1.jsonl"), jsonl).unwrap();
    let text = run_ok(cut.path(), &["stats"]);
    assert!(
        text.contains("gaps                                   1"),
        "{text}"
    );
    assert!(
        text.contains("character_action by priya has no answered model_call"),
        "{text}"
    );

    // A second session: the campaign-wide numbers span both, the report charts each.
    run_ok(
        d,
        &[
            "play",
            "party.json",
            "--gm-script",
            "research.gm.yaml",
            "--replay",
            "research.replay.jsonl",
            "--seed",
            "12",
        ],
    );
    let second = run_ok(d, &["stats", "--json"]);
    let second: Value = serde_json::from_str(&second).unwrap();
    assert_eq!(second["scope"], "session 2");
    let campaign: Value = serde_json::from_str(&run_ok(d, &["stats", "--all", "--json"])).unwrap();
    assert_eq!(campaign["scope"], "campaign, 2 sessions");
    let m = &campaign["metrics"];
    assert_eq!(m["sessions"], json!([1, 2]));
    assert_eq!(m["turns"], 6);
    assert_eq!(
        m["model"]["attempts"],
        stats["metrics"]["model"]["attempts"].as_u64().unwrap()
            + second["metrics"]["model"]["attempts"].as_u64().unwrap()
    );
    assert_eq!(m["consensus"].as_array().unwrap().len(), 2);
    assert_eq!(m["adopted_by_session"]["2"]["alex"], 2);
    assert_eq!(campaign["audit"]["gaps"], json!([]));
    let all_lines = run_ok(d, &["log", "--all"]).lines().count();
    assert_eq!(
        all_lines,
        run_ok(d, &["log", "1"]).lines().count() + run_ok(d, &["log", "2"]).lines().count()
    );
    run_ok(d, &["report", "--all", "-o", "campaign.html"]);
    let html = std::fs::read_to_string(d.join("campaign.html")).unwrap();
    assert!(html.contains("campaign, 2 sessions"));
    assert!(html.contains("<h3 id=\"s2\">Session 2</h3>"));
    for title in ["session 1", "session 2", "all sessions"] {
        assert!(
            html.contains(&format!("font-weight=\"bold\">{title}</text>")),
            "relationship graph for {title}"
        );
    }
}

#[test]
fn the_party_demo_plays_with_a_complete_log_and_nothing_to_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_examples(d, &["party.json", "party.gm.yaml", "party.replay.jsonl"]);
    run_ok(
        d,
        &[
            "play",
            "party.json",
            "--gm-script",
            "party.gm.yaml",
            "--seed",
            "7",
        ],
    );
    let log = read_log(d);
    let stats: Value = serde_json::from_str(&run_ok(d, &["stats", "--json"])).unwrap();
    let audit = &stats["audit"];
    assert_eq!(audit["gaps"], json!([]), "{audit}");
    assert_eq!(audit["model_calls"], of_type(&log, "model_call").len());
    assert_eq!(
        audit["phases_started"],
        of_type(&log, "phase_started").len()
    );
    assert_eq!(
        audit["actions_with_verdict"],
        of_type(&log, "validation").len()
    );
    assert_eq!(stats["flags"], json!([]), "a clean session raises no flag");
    let settled: Vec<&str> = stats["metrics"]["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["outcome"].as_str().unwrap())
        .collect();
    let logged: Vec<&str> = of_type(&log, "consensus")
        .iter()
        .filter(|e| e["outcome"] != "conflicted")
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(settled, logged);
}

// ---------------------------------------------------------------------------------------------
// The demo killed mid-turn, resumed, then undone and resumed again: the log stays complete.

fn demo_dir() -> tempfile::TempDir {
    support::campaign_with(&support::DEMO)
}

const DEMO: [&str; 6] = [
    "play",
    "campaign.json",
    "--gm-script",
    "demo.gm.yaml",
    "--seed",
    "7",
];

#[test]
fn a_session_killed_resumed_and_undone_keeps_a_complete_log() {
    let dir = demo_dir();
    let d = dir.path();
    // Stop inside turn 2's second action attempt, after it is declared, before its verdict.
    let mut child = std::process::Command::cargo_bin("troupe")
        .unwrap()
        .current_dir(d)
        .args(DEMO)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("TROUPE_PAUSE_AFTER_EVENT", "80")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let paused = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("troupe: paused after"));
    assert!(paused, "troupe never paused");
    child.kill().unwrap();
    child.wait().unwrap();
    let before = read_log(d);
    assert_eq!(before.last().unwrap()["event_type"], "character_action");
    let stats: Value = serde_json::from_str(&run_ok(d, &["stats", "--json"])).unwrap();
    assert_eq!(
        stats["audit"]["gaps"],
        json!([]),
        "a cut-off log has no gaps"
    );
    assert_eq!(
        stats["audit"]["actions_exempt"], 1,
        "the action waits for its verdict"
    );

    run_ok(d, &["resume", "--gm-script", "demo.gm.yaml"]);
    run_ok(d, &["undo"]);
    run_ok(d, &["resume", "--gm-script", "demo.gm.yaml"]);
    let stats: Value = serde_json::from_str(&run_ok(d, &["stats", "--json"])).unwrap();
    let audit = &stats["audit"];
    assert_eq!(audit["gaps"], json!([]), "{audit}");
    assert_eq!(audit["actions"], audit["actions_with_verdict"]);
    assert_eq!(stats["metrics"]["turns"], 3);
    assert_eq!(stats["metrics"]["validation"]["first_pass_failures"], 1);
    // The undone events are left out, unless asked for.
    let undone = run_ok(d, &["log", "--include-undone"]);
    let marked = undone
        .lines()
        .filter(|l| l.contains("\"undone\":true"))
        .count();
    assert!(marked > 0);
    assert_eq!(
        run_ok(d, &["log"]).lines().count() + marked,
        undone.lines().count()
    );
    let resumed = run_ok(d, &["log", "--type", "session_resumed"]);
    assert_eq!(resumed.lines().count(), 2);
}

// ---------------------------------------------------------------------------------------------
// Over HTTP: every request the server saw is a model_call in the log.

struct Mock {
    rt: tokio::runtime::Runtime,
    server: wiremock::MockServer,
}

struct Answer {
    count: AtomicUsize,
}

const DELAY_MS: u64 = 40;

impl wiremock::Respond for Answer {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        // The third request is rate-limited once: the gateway retries it.
        if n == 2 {
            return wiremock::ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_string("slow down");
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let schema = body["response_format"]["json_schema"]["name"]
            .as_str()
            .unwrap_or_default();
        let content = match schema {
            "clarifying_questions" => json!({"questions": []}),
            "strategic_intent" => {
                json!({"strategy": "Careful.", "directive": "Work the lock panel slowly and safely."})
            }
            "character_action" => json!({"action": "I try to coax the lock panel back to life.",
                "dialogue": "", "task_type": "lasers", "prepared": false, "expert": false,
                "justification": "Careful work: Lasers."}),
            "laser_feelings_question" => json!({"question": "What is behind the door?"}),
            "insight_decision" => json!({"change_action": false, "reason": "Carry on."}),
            "character_reaction" => json!({"reaction": "Zara-7 nods."}),
            "extract_facts" => json!({"facts": []}),
            other => panic!("unexpected schema {other:?}"),
        };
        wiremock::ResponseTemplate::new(200)
            .set_delay(Duration::from_millis(DELAY_MS))
            .set_body_json(json!({
                "id": "x", "object": "chat.completion", "created": 1, "model": "mock",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content.to_string()}}],
                "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220}
            }))
    }
}

impl Mock {
    fn start() -> Mock {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(async {
            let server = wiremock::MockServer::start().await;
            wiremock::Mock::given(wiremock::matchers::method("POST"))
                .and(wiremock::matchers::path("/v1/chat/completions"))
                .respond_with(Answer {
                    count: AtomicUsize::new(0),
                })
                .mount(&server)
                .await;
            server
        });
        Mock { rt, server }
    }
    fn requests(&self) -> usize {
        self.rt
            .block_on(self.server.received_requests())
            .unwrap_or_default()
            .len()
    }
}

#[test]
fn over_http_every_request_is_a_logged_model_call_with_its_latency() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(examples().join("campaign.json"), d.join("campaign.json")).unwrap();
    std::fs::write(
        d.join("gm.yaml"),
        "turns:\n  - narration: \"A sealed hatch.\"\n    outcome: \"It opens a crack.\"\n  - narration: \"A dark corridor.\"\n    outcome: \"Nothing stirs.\"\n",
    )
    .unwrap();
    let url = format!("{}/v1", mock.server.uri());
    run_ok(
        d,
        &[
            "play",
            "campaign.json",
            "--gm-script",
            "gm.yaml",
            "--seed",
            "3",
            "--provider",
            "openai-compatible",
            "--base-url",
            &url,
            "--model",
            "mock",
        ],
    );
    let log = read_log(d);
    let calls = of_type(&log, "model_call");
    assert_eq!(
        calls.len(),
        mock.requests(),
        "one model_call per request the server saw"
    );
    let stats: Value = serde_json::from_str(&run_ok(d, &["stats", "--json"])).unwrap();
    let m = &stats["metrics"];
    assert_eq!(m["model"]["attempts"], mock.requests());
    assert_eq!(
        (m["model"]["retries"].clone(), m["model"]["errors"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(
        m["model"]["tokens"]["output"],
        20 * (mock.requests() as u64 - 1)
    );
    for l in m["latency"].as_array().unwrap() {
        assert!(
            l["p50_ms"].as_u64().unwrap() >= DELAY_MS,
            "the server took {DELAY_MS} ms: {l}"
        );
    }
    assert_eq!(stats["audit"]["gaps"], json!([]), "{}", stats["audit"]);
    let text = run_ok(d, &["stats"]);
    assert!(
        text.contains("retries (of which JSON repairs)        1 (0)"),
        "{text}"
    );
    assert!(
        text.contains("attempts that errored                  1"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input: clear errors, never a panic.

#[test]
fn bad_input_gives_errors_people_can_act_on() {
    let empty = tempfile::tempdir().unwrap();
    for cmd in [&["stats"][..], &["log"], &["report", "-o", "r.html"]] {
        let err = run_err(empty.path(), cmd);
        assert!(
            err.contains("no sessions have been played"),
            "{cmd:?}: {err}"
        );
    }
    assert!(!empty.path().join("r.html").exists());
    assert!(
        !empty.path().join("campaign.db").exists(),
        "reading creates nothing"
    );

    let dir = demo_dir();
    let d = dir.path();
    run_ok(d, &DEMO);
    let err = run_err(d, &["report", "9", "-o", "r.html"]);
    assert!(
        err.contains("there is no session 9") && err.contains("sessions: 1"),
        "{err}"
    );
    let err = run_err(d, &["stats", "1", "--all"]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = run_err(d, &["report", "-o", "no/such/dir/r.html"]);
    assert!(
        err.contains("could not write the report to no/such/dir/r.html"),
        "{err}"
    );

    // A damaged database row is named.
    let conn = rusqlite::Connection::open(d.join("campaign.db")).unwrap();
    conn.execute(
        "UPDATE events SET body = '{oops' WHERE session = 1 AND seq = 5",
        [],
    )
    .unwrap();
    drop(conn);
    let err = run_err(d, &["stats"]);
    assert!(
        err.contains("session 1, event 5 is not valid JSON"),
        "{err}"
    );

    // A damaged mirror line is named, when the mirror is all there is.
    std::fs::remove_file(d.join("campaign.db")).unwrap();
    let mirror = d.join("logs/session-1.jsonl");
    let mut lines: Vec<String> = std::fs::read_to_string(&mirror)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[3] = "{\"seq\": 3, torn".into();
    std::fs::write(&mirror, lines.join("\n") + "\n").unwrap();
    let err = run_err(d, &["log"]);
    assert!(err.contains("session-1.jsonl, line 4"), "{err}");
    // A torn last line (a crash mid-write) is not damage: the rest is read.
    lines[3] = lines[4].clone();
    let n = lines.len();
    lines[n - 1].truncate(10);
    std::fs::write(&mirror, lines.join("\n")).unwrap();
    let out = run_ok(d, &["log"]);
    assert_eq!(out.lines().count(), n - 1);
}

/// Issue 46: `troupe replay` of any `--gm ai` session said "event 3 (model_call) differs" with
/// a wall of JSON: the replay's GM answered from the log without its model calls, so every one
/// of the AI GM's `model_call` events was missing. An untouched session replays identical,
/// event for event, its AI GM's calls included.
#[test]
fn an_ai_gm_session_replays_identical_event_for_event() {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["aigm.json", "aigm.replay.jsonl"]);
    run_ok(
        dir.path(),
        &["play", "aigm.json", "--seed", "7", "--turns", "3"],
    );
    let log = read_log(dir.path());
    assert!(
        of_type(&log, "model_call")
            .iter()
            .any(|e| e["agent"] == "gm"),
        "the AI GM made no call"
    );
    let out = run_ok(dir.path(), &["replay", "1"]);
    assert!(out.contains("transcript is identical"), "{out}");
    assert!(
        out.contains("Its events are session 1's too, one for one"),
        "{out}"
    );
    assert!(!out.contains("differs"), "{out}");
    // The replay's log holds the AI GM's calls, as the session's does.
    let replayed = support::read_log(&dir.path().join("replays/session-1-replay-1.jsonl"));
    let gm = |l: &[Value]| {
        of_type(l, "model_call")
            .iter()
            .filter(|e| e["agent"] == "gm")
            .map(|e| (e["purpose"].clone(), e["request_hash"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(gm(&replayed), gm(&log));
}
