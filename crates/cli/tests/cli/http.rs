#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! End to end over real HTTP: the real `troupe` binary, run as its own process, plays a scripted
//! session against a local mock OpenAI-compatible server (wiremock). The mock answers each
//! request by what it asks for (the JSON schema name in `response_format`), and can be told to
//! fail, rate-limit or send malformed JSON, so the retry, repair and failure paths are exercised
//! through the same code a real server would reach.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::support;
use support::examples;

/// The dummy key: set in the child's environment only, and must never reach the log.
const KEY_VAR: &str = "TROUPE_HTTP_TEST_KEY";
const KEY: &str = "sk-mock-secret-4f9a1c77e2";
/// The mock's token counts, distinct from anything troupe would estimate.
const PROMPT_TOKENS: u64 = 321;
const COMPLETION_TOKENS: u64 = 54;
/// Unscaled, the retry waits in these tests add up to several seconds; scaled, milliseconds.
const FAST: Duration = Duration::from_secs(5);

const REPAIR_MARK: &str = "Your previous reply cannot be used";

const TWO_TURNS: &str = r#"
turns:
  - narration: "The Raptor drifts into the debris field of an abandoned relay station."
    outcome: "The Raptor settles onto the pad with a shudder."
  - narration: "A sealed blast hatch blocks the corridor to the fuel depot."
    outcome: "The lock chirps and the hatch grinds halfway open before jamming."
"#;

// ---------------------------------------------------------------------------------------------
// The mock server

/// What one request asked for.
struct Asked {
    /// 0-based index of this request among all the mock received.
    n: usize,
    /// The JSON schema name in `response_format` (e.g. `strategic_intent`).
    schema: String,
    /// The request is the gateway's JSON repair re-ask.
    repair: bool,
}

type Handler = dyn Fn(&Asked) -> ResponseTemplate + Send + Sync;

/// Routes every chat-completions request through one handler that sees the request's schema,
/// whether it is a repair, and how many requests came before it.
struct Router {
    count: AtomicUsize,
    handler: Box<Handler>,
}

impl Respond for Router {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        let body: Value = match serde_json::from_slice(&request.body) {
            Ok(v) => v,
            Err(e) => return ResponseTemplate::new(400).set_body_string(format!("bad JSON: {e}")),
        };
        let schema = body["response_format"]["json_schema"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let repair = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .is_some_and(|c| c.contains(REPAIR_MARK));
        (self.handler)(&Asked { n, schema, repair })
    }
}

/// The reply content that fits a schema: valid, and stating intent rather than results.
fn content_for(schema: &str) -> String {
    let v = match schema {
        "clarifying_questions" => json!({"questions": []}),
        "strategic_intent" => json!({
            "strategy": "Mock strategy: fuel first, caution always.",
            "directive": "Mock directive: work the problem carefully and keep the crew safe."
        }),
        "character_action" => json!({
            "action": "I ease the Raptor toward the docking bay at minimum thrust, watching the scanner.",
            "dialogue": "Approach vector computed. I recommend we remain alert.",
            "task_type": "lasers",
            "prepared": false,
            "expert": false,
            "justification": "Careful piloting is calm, precise work: Lasers."
        }),
        "laser_feelings_question" => {
            json!({"question": "Mock question: what is really going on here?"})
        }
        "insight_decision" => {
            json!({"change_action": false, "reason": "Mock reason: we carry on."})
        }
        "character_reaction" => {
            json!({"reaction": "Mock reaction: Zara-7 tilts her head, intrigued."})
        }
        // The memory's fact extraction: nothing found, so the raw episodes are kept.
        "extract_facts" => json!({"facts": []}),
        other => panic!("the mock got a request with an unknown schema {other:?}"),
    };
    v.to_string()
}

/// An OpenAI chat-completions answer carrying `content`, with the mock's token counts.
fn completion(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "mock-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": COMPLETION_TOKENS,
            "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS
        }
    }))
}

const SCHEMAS: [&str; 7] = [
    "clarifying_questions",
    "strategic_intent",
    "character_action",
    "laser_feelings_question",
    "insight_decision",
    "character_reaction",
    "extract_facts",
];

/// The answer that fits the request (a 400, which troupe will not retry, for anything else).
fn fitting(a: &Asked) -> ResponseTemplate {
    if SCHEMAS.contains(&a.schema.as_str()) {
        completion(&content_for(&a.schema))
    } else {
        ResponseTemplate::new(400).set_body_string(format!("mock: unknown schema {:?}", a.schema))
    }
}

/// A running mock server and the runtime it was started on (kept alive for the test).
struct MockApi {
    rt: tokio::runtime::Runtime,
    server: MockServer,
}

impl MockApi {
    fn start(handler: impl Fn(&Asked) -> ResponseTemplate + Send + Sync + 'static) -> MockApi {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(async {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .respond_with(Router {
                    count: AtomicUsize::new(0),
                    handler: Box::new(handler),
                })
                .mount(&server)
                .await;
            server
        });
        MockApi { rt, server }
    }

    fn base_url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    fn requests(&self) -> Vec<Request> {
        self.rt
            .block_on(self.server.received_requests())
            .unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// Running troupe

/// A fresh campaign directory holding the example campaign and the given GM script.
fn campaign_dir(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("campaign.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("gm.yaml"), script).unwrap();
    dir
}

struct Run {
    out: Output,
    elapsed: Duration,
    /// The log's raw text, and its lines parsed.
    raw: String,
    log: Vec<Value>,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn events(&self, event_type: &str) -> Vec<&Value> {
        self.log
            .iter()
            .filter(|e| e["event_type"] == event_type)
            .collect()
    }
    fn assert_clean_success(&self) {
        assert!(
            self.out.status.success(),
            "exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.out.status.code(),
            self.stdout(),
            self.stderr()
        );
        assert_eq!(self.out.status.code(), Some(0));
        assert!(!self.stderr().contains("panicked"), "{}", self.stderr());
        assert_eq!(
            self.log.last().unwrap()["event_type"],
            "session_ended",
            "the log ends with the session"
        );
    }
}

/// `troupe play` as a real child process against the mock, with the key in its env only.
fn play(dir: &Path, mock: &MockApi) -> Run {
    let started = Instant::now();
    let out = Command::new(assert_cmd::cargo::cargo_bin("troupe"))
        // The mock answers with schema-shaped filler, not play: the rules alone keep its retries fixed.
        .env("TROUPE_DETECTOR", "pattern")
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("TROUPE_RETRY_SCALE", "0.001")
        .env(KEY_VAR, KEY)
        .args([
            "play",
            "campaign.json",
            "--gm-script",
            "gm.yaml",
            "--seed",
            "7",
        ])
        .args(["--provider", "openai-compatible", "--base-url"])
        .arg(mock.base_url())
        .args(["--model", "mock-model", "--api-key-env", KEY_VAR])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let log_path = dir.join("logs/session-1.jsonl");
    let raw = std::fs::read_to_string(&log_path).unwrap_or_else(|e| {
        panic!(
            "no log at {} ({e})\nstdout:\n{}\nstderr:\n{}",
            log_path.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let log = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Run {
        out,
        elapsed,
        raw,
        log,
    }
}

/// The key never leaves the child's environment: not in the log, not on screen.
fn assert_no_key(run: &Run) {
    assert!(!run.raw.contains(KEY), "the API key is in the log");
    assert!(!run.stdout().contains(KEY), "the API key is on stdout");
    assert!(!run.stderr().contains(KEY), "the API key is on stderr");
}

fn schema_of(request: &Request) -> String {
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The schema name troupe sends for each logged purpose.
fn schema_for_purpose(purpose: &str) -> &str {
    match purpose {
        "insight_question" => "laser_feelings_question",
        other => other,
    }
}

// ---------------------------------------------------------------------------------------------
// The tests

#[test]
fn a_two_turn_session_over_http_logs_every_call_without_the_key() {
    let mock = MockApi::start(fitting);
    let dir = campaign_dir(TWO_TURNS);
    let run = play(dir.path(), &mock);
    run.assert_clean_success();
    assert!(run.elapsed < FAST, "took {:?}", run.elapsed);
    assert_eq!(run.events("turn_completed").len(), 2);
    assert!(run.events("phase_failed").is_empty(), "{}", run.raw);
    assert_no_key(&run);

    // What went over the wire: the right endpoint, model, key and structured-output request.
    let requests = mock.requests();
    assert!(!requests.is_empty());
    for r in &requests {
        assert_eq!(r.url.path(), "/v1/chat/completions");
        let auth = r.headers.get("authorization").map(|v| v.to_str().unwrap());
        assert_eq!(auth, Some(format!("Bearer {KEY}").as_str()));
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["model"], "mock-model");
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert!(body["messages"].as_array().unwrap().len() >= 2);
    }

    // Every request is one logged model_call, in order, carrying the mock's reply and usage.
    let calls = run.events("model_call");
    assert_eq!(
        calls.len(),
        requests.len(),
        "one model_call per HTTP request"
    );
    for (call, request) in calls.iter().zip(&requests) {
        let purpose = call["purpose"].as_str().unwrap();
        assert_eq!(schema_for_purpose(purpose), schema_of(request), "{call}");
        assert_eq!(call["reply"], content_for(&schema_of(request)), "{call}");
        assert_eq!(call["usage"]["input_tokens"], PROMPT_TOKENS, "{call}");
        assert_eq!(call["usage"]["output_tokens"], COMPLETION_TOKENS, "{call}");
        assert!(call["latency_ms"].is_u64(), "{call}");
        assert!(
            call["error"].is_null() && call["retry_in_ms"].is_null(),
            "{call}"
        );
        assert_eq!(call["attempt"], 1);
        assert_eq!(call["repair"], false);
        let agent = if purpose == "extract_facts" {
            "memory"
        } else {
            "alex"
        };
        assert_eq!(call["agent"], agent);
        let provider = call["provider"].as_str().unwrap();
        assert_eq!(
            provider,
            format!("openai-compatible:mock-model@{}", mock.base_url())
        );
        assert_eq!(call["request_hash"].as_str().unwrap().len(), 64);
        // The rendered messages are logged exactly as they were sent.
        let sent: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(call["messages"], sent["messages"], "{call}");
        assert_eq!(call["messages"][0]["role"], "system");
    }
    // Each turn asked for questions, a strategy, an action and a reaction.
    let purposes: Vec<&str> = calls
        .iter()
        .map(|c| c["purpose"].as_str().unwrap())
        .collect();
    for p in [
        "clarifying_questions",
        "strategic_intent",
        "character_action",
        "character_reaction",
    ] {
        assert_eq!(
            purposes.iter().filter(|x| **x == p).count(),
            2,
            "{p}: {purposes:?}"
        );
    }
    // The narration reached the player's prompt, and the mock's decisions reached the story.
    let first_intent = calls
        .iter()
        .find(|c| c["purpose"] == "strategic_intent")
        .unwrap();
    assert!(
        first_intent["messages"]
            .to_string()
            .contains("debris field")
    );
    let intent = run.events("strategic_intent")[0];
    assert_eq!(
        intent["intent"]["directive"],
        "Mock directive: work the problem carefully and keep the crew safe."
    );
    let reaction = run.events("character_reaction")[0];
    assert!(
        reaction["text"]
            .as_str()
            .unwrap()
            .starts_with("Mock reaction")
    );
    assert!(run.stdout().contains("Mock reaction"), "{}", run.stdout());
}

#[test]
fn rate_limits_and_server_errors_are_retried_and_logged() {
    let mock = MockApi::start(|a: &Asked| match a.n {
        0 => ResponseTemplate::new(429)
            .insert_header("Retry-After", "1")
            .set_body_json(json!({"error": {"message": "slow down"}})),
        1 => ResponseTemplate::new(500).set_body_string("upstream exploded"),
        _ => fitting(a),
    });
    let dir = campaign_dir(TWO_TURNS);
    let run = play(dir.path(), &mock);
    run.assert_clean_success();
    // Unscaled, the two waits alone would take 2 s + 5 s.
    assert!(run.elapsed < FAST, "took {:?}", run.elapsed);
    assert_eq!(run.events("turn_completed").len(), 2);
    assert!(run.events("phase_failed").is_empty(), "{}", run.raw);
    assert_no_key(&run);

    let calls = run.events("model_call");
    assert_eq!(calls.len(), mock.requests().len());
    let first: Vec<&&Value> = calls
        .iter()
        .filter(|c| c["purpose"] == "clarifying_questions")
        .take(3)
        .collect();
    let [rate_limited, server_error, answered] = first[..] else {
        panic!("expected three attempts at the first call: {first:?}");
    };
    // Attempt 1: 429. Retry-After (1 s) was read; the scheduled 2 s was longer, so it won.
    assert_eq!(rate_limited["attempt"], 1);
    let err = rate_limited["error"].as_str().unwrap();
    assert!(
        err.contains("429") && err.contains("asked to wait 1.0 s"),
        "{err}"
    );
    assert_eq!(rate_limited["retry_in_ms"], 2000);
    assert!(rate_limited["reply"].is_null());
    assert_eq!(rate_limited["usage"]["input_tokens"], 0);
    // Attempt 2: 500, the body kept for diagnosis; the second scheduled wait is 5 s.
    assert_eq!(server_error["attempt"], 2);
    let err = server_error["error"].as_str().unwrap();
    assert!(
        err.contains("500") && err.contains("upstream exploded"),
        "{err}"
    );
    assert_eq!(server_error["retry_in_ms"], 5000);
    assert!(server_error["reply"].is_null());
    // Attempt 3: answered.
    assert_eq!(answered["attempt"], 3);
    assert!(answered["error"].is_null() && answered["retry_in_ms"].is_null());
    assert_eq!(answered["reply"], content_for("clarifying_questions"));
    assert_eq!(answered["usage"]["input_tokens"], PROMPT_TOKENS);
    // The same request, three times.
    assert_eq!(rate_limited["request_hash"], answered["request_hash"]);
    assert_eq!(server_error["request_hash"], answered["request_hash"]);
    assert_eq!(rate_limited["messages"], answered["messages"]);
    // Every later call succeeded at once.
    assert!(
        calls[3..]
            .iter()
            .all(|c| c["attempt"] == 1 && c["error"].is_null())
    );
}

#[test]
fn a_model_that_stays_down_fails_the_phase_and_the_scripts_choice_is_used() {
    let mock = MockApi::start(|_: &Asked| {
        ResponseTemplate::new(503).set_body_string("model is loading, try later")
    });
    // Turn 1: the GM types the AI's part; turn 2: the default, skip it.
    let script = r#"
turns:
  - narration: "The Raptor drifts into the debris field of an abandoned relay station."
    outcome: "The Raptor settles onto the pad with a shudder."
    failure:
      take_over: "Zara-7 holds position and watches the scanners."
  - narration: "A sealed blast hatch blocks the corridor to the fuel depot."
    outcome: "Nobody touches the hatch; it stays shut."
"#;
    let dir = campaign_dir(script);
    let run = play(dir.path(), &mock);
    run.assert_clean_success();
    assert!(run.elapsed < FAST, "took {:?}", run.elapsed);
    assert_eq!(run.events("turn_completed").len(), 2);
    assert_no_key(&run);
    assert_eq!(run.events("session_ended").len(), 1);

    // Each failed phase: one automatic retry (two failures), then the GM decides.
    let failed = run.events("phase_failed");
    assert!(!failed.is_empty());
    for f in &failed {
        let err = f["error"].as_str().unwrap();
        assert!(
            err.contains("after 5 attempts") && err.contains("503"),
            "{err}"
        );
        assert!(err.contains("model is loading"), "{err}");
    }
    let decisions = run.events("gm_failure_decision");
    assert_eq!(failed.len(), 2 * decisions.len(), "{}", run.raw);
    for d in &decisions {
        let phase = &d["phase"];
        let fails: Vec<u64> = failed
            .iter()
            .filter(|f| f["turn_number"] == d["turn_number"] && &f["phase"] == phase)
            .map(|f| f["failures"].as_u64().unwrap())
            .collect();
        assert_eq!(fails, [1, 2], "{d}");
    }
    let choices = |turn: u64| -> Vec<(String, String)> {
        decisions
            .iter()
            .filter(|d| d["turn_number"] == turn)
            .map(|d| {
                (
                    d["phase"].as_str().unwrap().to_string(),
                    d["choice"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // Turn 1: the script's take_over, for every model phase; the GM's words stand in.
    let turn1 = choices(1);
    assert!(
        turn1.len() >= 4 && turn1.iter().all(|(_, c)| c == "take_over"),
        "{turn1:?}"
    );
    for phase in [
        "clarification",
        "strategic_intent",
        "character_action",
        "character_reaction",
    ] {
        assert!(turn1.iter().any(|(p, _)| p == phase), "{phase}: {turn1:?}");
    }
    let typed = "Zara-7 holds position and watches the scanners.";
    let directive = run
        .events("directive")
        .into_iter()
        .find(|e| e["turn_number"] == 1)
        .unwrap();
    assert_eq!(directive["text"], typed);
    let action = run
        .events("character_action")
        .into_iter()
        .find(|e| e["turn_number"] == 1)
        .unwrap();
    assert_eq!(action["action"]["action"], typed);
    let reaction = run
        .events("character_reaction")
        .into_iter()
        .find(|e| e["turn_number"] == 1)
        .unwrap();
    assert_eq!(reaction["text"], typed);
    // Turn 2: skipped; the character neither acts nor reacts.
    let turn2 = choices(2);
    assert!(
        !turn2.is_empty() && turn2.iter().all(|(_, c)| c == "skip"),
        "{turn2:?}"
    );
    assert!(
        run.events("character_action")
            .iter()
            .all(|e| e["turn_number"] != 2)
    );
    assert!(
        run.events("character_reaction")
            .iter()
            .all(|e| e["turn_number"] != 2)
    );

    // Every attempt is logged: five per gateway call, with the waits between them.
    let calls = run.events("model_call");
    assert_eq!(calls.len(), mock.requests().len());
    // The memory's fact extraction failed the same way at each storage step, and fell back.
    let extractions = run
        .events("memory_storage")
        .iter()
        .filter(|s| {
            s["extraction"]
                .as_str()
                .is_some_and(|x| x.starts_with("fallback: "))
        })
        .count();
    assert!(extractions > 0);
    assert_eq!(calls.len(), 5 * (failed.len() + extractions));
    for chunk in calls.chunks(5) {
        let attempts: Vec<u64> = chunk
            .iter()
            .map(|c| c["attempt"].as_u64().unwrap())
            .collect();
        assert_eq!(attempts, [1, 2, 3, 4, 5]);
        let waits: Vec<Option<u64>> = chunk.iter().map(|c| c["retry_in_ms"].as_u64()).collect();
        assert_eq!(
            waits,
            [Some(2000), Some(5000), Some(10000), Some(20000), None]
        );
        assert!(chunk.iter().all(|c| c["reply"].is_null()));
    }
}

#[test]
fn a_malformed_reply_gets_one_repair_re_ask() {
    let bad = r#"Sure! Here is my plan: {"strategy": "We land", "directive": "#;
    let first_intent = Arc::new(AtomicUsize::new(0));
    let seen = first_intent.clone();
    let mock = MockApi::start(move |a: &Asked| {
        if a.schema == "strategic_intent" && !a.repair && seen.fetch_add(1, Ordering::SeqCst) == 0 {
            completion(bad)
        } else {
            fitting(a)
        }
    });
    let dir = campaign_dir(TWO_TURNS);
    let run = play(dir.path(), &mock);
    run.assert_clean_success();
    assert!(run.elapsed < FAST, "took {:?}", run.elapsed);
    assert!(run.events("phase_failed").is_empty(), "{}", run.raw);
    assert_eq!(run.events("turn_completed").len(), 2);

    // Exactly one repair went over the wire, and it was for the malformed strategy.
    let requests = mock.requests();
    let repairs: Vec<&Request> = requests
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains(REPAIR_MARK))
        .collect();
    assert_eq!(repairs.len(), 1);
    assert_eq!(schema_of(repairs[0]), "strategic_intent");

    // The log shows the bad reply, why it was refused, and the repair that fixed it.
    let calls = run.events("model_call");
    assert_eq!(calls.len(), requests.len());
    assert_eq!(calls.iter().filter(|c| c["repair"] == true).count(), 1);
    let intent_calls: Vec<&&Value> = calls
        .iter()
        .filter(|c| c["purpose"] == "strategic_intent" && c["turn_number"] == 1)
        .collect();
    let [refused, repaired] = intent_calls[..] else {
        panic!("expected the first ask and its repair: {intent_calls:?}");
    };
    assert_eq!(refused["attempt"], 1);
    assert_eq!(refused["repair"], false);
    assert_eq!(refused["reply"], bad);
    let err = refused["error"].as_str().unwrap();
    assert!(err.contains("did not match the schema"), "{err}");
    assert!(refused["retry_in_ms"].is_null());
    assert_eq!(repaired["attempt"], 2);
    assert_eq!(repaired["repair"], true);
    assert!(repaired["error"].is_null());
    assert_eq!(repaired["reply"], content_for("strategic_intent"));
    assert_ne!(refused["request_hash"], repaired["request_hash"]);
    // The repair re-ask is the original conversation, the bad reply, and what was wrong.
    let asked = refused["messages"].as_array().unwrap();
    let repair_msgs = repaired["messages"].as_array().unwrap();
    assert_eq!(repair_msgs.len(), asked.len() + 2);
    assert_eq!(repair_msgs[..asked.len()], asked[..]);
    assert_eq!(repair_msgs[asked.len()]["role"], "assistant");
    assert_eq!(repair_msgs[asked.len()]["content"], bad);
    let ask = repair_msgs[asked.len() + 1]["content"].as_str().unwrap();
    assert!(
        ask.contains(REPAIR_MARK) && ask.contains("strategic_intent"),
        "{ask}"
    );
    // The repaired reply is the decision that was recorded.
    let intent = run
        .events("strategic_intent")
        .into_iter()
        .find(|e| e["turn_number"] == 1)
        .unwrap();
    assert_eq!(
        intent["intent"]["strategy"],
        "Mock strategy: fuel first, caution always."
    );
}

#[test]
fn a_script_that_says_retry_retries_once_then_skips_instead_of_looping() {
    let mock = MockApi::start(|_: &Asked| {
        ResponseTemplate::new(503).set_body_string("model is loading, try later")
    });
    let script = r#"
turns:
  - narration: "The Raptor drifts into the debris field of an abandoned relay station."
    outcome: "The Raptor settles onto the pad with a shudder."
    failure: retry
"#;
    let dir = campaign_dir(script);
    let run = play(dir.path(), &mock);
    run.assert_clean_success();
    assert_eq!(run.events("turn_completed").len(), 1);
    let decisions = run.events("gm_failure_decision");
    // Per failing phase: the script's retry, then (still down) a skip.
    let choices: Vec<&str> = decisions
        .iter()
        .map(|d| d["choice"].as_str().unwrap())
        .collect();
    assert!(!choices.is_empty());
    for pair in choices.chunks(2) {
        assert_eq!(pair, ["retry", "skip"], "{choices:?}");
    }
}
