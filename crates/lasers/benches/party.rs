#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Concurrency: one full turn against a model server that takes 500 ms per call (a local
//! OpenAI-compatible mock, real HTTP), with one AI player and with four. The four players'
//! calls in each round go out at once, so the party's turn should cost about one extra round
//! (their OOC discussion) over the lone player's, not four times as much.
//!
//!     cargo bench -p troupe-engine --bench party
//!
//! Besides criterion's report, it prints the tokens each turn used per player (from the
//! `model_call` events), for BENCHMARKS.md.

// Shared with the other benches; this one needs only the instant GM.
#[allow(dead_code)]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use support::InstantGm;
use troupe_agents::PromptSet;
use troupe_engine::watch::Unwatched;
use troupe_engine::*;
use troupe_lasers::*;
use troupe_llm::{Gateway, ProviderSpec, RetryPolicy, ScaledSleeper, connect_with_env};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const DELAY: Duration = Duration::from_millis(500);

/// Answers every call after [`DELAY`], with a reply that fits the schema it was asked for.
struct SlowModel;

impl Respond for SlowModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let schema = &body["response_format"]["json_schema"];
        let first_plan = schema["schema"]["properties"]["on"]["enum"][0].clone();
        let content = match schema["name"].as_str().unwrap_or_default() {
            "clarifying_questions" => json!({"questions": []}),
            "strategic_intent" => json!({"strategy": "Keep the crew together.",
                "proposal": "Talk our way past the guard.",
                "directive": "Talk to the guard calmly."}),
            "ooc_discussion" => json!({"message": "Agreed, let's do that.", "stance": "agree",
                "on": first_plan, "proposal": "", "directive": "Talk to the guard calmly."}),
            "character_action" => {
                json!({"action": "I raise my empty hands and step toward the guard.",
                "dialogue": "Easy, friend.", "task_type": "feelings", "prepared": false,
                "expert": false, "justification": "Calming someone is feelings.", "helping": ""})
            }
            "laser_feelings_question" => json!({"question": "What does the guard really want?"}),
            "insight_decision" => json!({"change_action": false, "reason": "Carry on."}),
            "character_reaction" => json!({"reaction": "I let out a breath."}),
            "party_directive" => json!({"directive": "Back the plan."}),
            "forced_vote" => json!({"vote": first_plan, "remark": ""}),
            "extract_facts" => json!({"facts": []}),
            other => panic!("unexpected schema {other}"),
        };
        let prompt: usize = body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .map(|x| x["content"].as_str().unwrap_or_default().len() / 4)
                    .sum()
            })
            .unwrap_or(0);
        ResponseTemplate::new(200)
            .set_delay(DELAY)
            .set_body_json(json!({
                "id": "x", "object": "chat.completion", "created": 0, "model": "slow-mock",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content.to_string()}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 40,
                    "total_tokens": prompt + 40}
            }))
    }
}

fn campaign(players: usize) -> troupe_campaign::Campaign {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/party4.json");
    let mut c = troupe_campaign::load(&path).unwrap();
    c.seats.truncate(players);
    c
}

/// One full turn; returns its time and the tokens per player it used.
async fn turn(server: &str, players: usize, seed: u64) -> (Duration, f64, bool) {
    let spec = ProviderSpec::openai_compatible(server, "slow-mock", None);
    let model = connect_with_env(&spec, Duration::from_secs(30), &|_| None).unwrap();
    let gateway = Gateway::new(
        model,
        RetryPolicy::default(),
        Arc::new(ScaledSleeper { factor: 0.0 }),
    );
    let table = Table::new(
        gateway,
        PromptSet::embedded(),
        StoreMemory::in_memory().unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let mut store = Store::in_memory().unwrap();
    store.mirror_into(1, EventLog::create(&log).unwrap());
    let setup = SessionSetup {
        campaign: campaign(players),
        session_number: 1,
        seed,
        day: 1,
    };
    let mut gm = InstantGm(1);
    let (mut quiet, clock) = (Unwatched, SystemClock);
    let start = Instant::now();
    let mut driver = Driver::start(setup, store, &mut gm, &table, &mut quiet, &clock).unwrap();
    driver.run().await.unwrap();
    let took = start.elapsed();
    drop(driver);
    let events = read_log(&log).unwrap();
    let insight = events
        .iter()
        .any(|e| matches!(e.event, Event::LaserFeelingsQuestion { .. }));
    let tokens: u64 = events
        .iter()
        .map(|e| match &e.event {
            Event::ModelCall { record, .. } => {
                u64::from(record.usage.input_tokens + record.usage.output_tokens)
            }
            _ => 0,
        })
        .sum();
    (took, tokens as f64 / players as f64, insight)
}

/// Turns are played with these dice seeds in turn: some bring LASER FEELINGS (two more rounds
/// of calls: the insight question and the decision), as play does — more often with four dice.
const SEEDS: [u64; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(async {
        let s = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(SlowModel)
            .mount(&s)
            .await;
        s
    });
    let url = format!("{}/v1", server.uri());
    println!("seed | 1 player: s (LASER FEELINGS?) tokens | 4 players: s (LF?) tokens per player");
    for seed in SEEDS {
        let (t1, k1, lf1) = rt.block_on(turn(&url, 1, seed));
        let (t4, k4, lf4) = rt.block_on(turn(&url, 4, seed));
        println!(
            "{seed} | {:.2} ({}) {k1:.0} | {:.2} ({}) {k4:.0}   ratio {:.2}",
            t1.as_secs_f64(),
            if lf1 { "LF" } else { "-" },
            t4.as_secs_f64(),
            if lf4 { "LF" } else { "-" },
            t4.as_secs_f64() / t1.as_secs_f64()
        );
    }
    let mut g = c.benchmark_group("party_turn_500ms_model");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(60))
        .warm_up_time(Duration::from_secs(3));
    for players in [1usize, 4] {
        // The seeds cycle across samples (not restarting in each), so both table sizes see
        // every seed about equally often.
        let next = std::sync::atomic::AtomicUsize::new(0);
        g.bench_function(format!("{players}_player"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let seed = SEEDS[i % SEEDS.len()];
                        total += turn(&url, players, seed).await.0;
                    }
                    total
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
