#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The engine's own overhead per full turn: replayed model replies, a GM that answers at once,
//! the JSONL log on a real file. Baseline in the same run: the same four model calls through the
//! gateway (prompt rendering included), without the engine around them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use troupe_agents::{ActionDecl, CharacterView, PlayerView, PromptSet, TurnRecap};
use troupe_engine::*;
use troupe_llm::{Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};
use troupe_rules::RollResult;
use troupe_validator::Verdict;

struct InstantGm(u64);

#[async_trait]
impl GmSeat for InstantGm {
    async fn narrate(&mut self, _s: &Session) -> GmReply<String> {
        if self.0 == 0 {
            return GmReply::Quit;
        }
        self.0 -= 1;
        GmReply::Answer("A guard blocks the corridor, rifle raised.".into())
    }
    async fn answer_questions(
        &mut self,
        _s: &Session,
        _r: u32,
        _q: &[(String, String)],
    ) -> GmReply<Answers> {
        GmReply::Answer(Answers::Finish)
    }
    async fn review_action(
        &mut self,
        _s: &Session,
        _a: &str,
        _o: &str,
        c: &str,
        _v: &Verdict,
    ) -> GmReply<String> {
        GmReply::Answer(c.into())
    }
    async fn adjudicate(&mut self, _s: &Session, _a: &str, x: &ActionDecl) -> GmReply<Ruling> {
        GmReply::Answer(Ruling::Roll {
            task: x.task_type,
            prepared: x.prepared,
            expert: x.expert,
        })
    }
    async fn override_roll(
        &mut self,
        _s: &Session,
        _a: &str,
        _r: &RollResult,
    ) -> GmReply<RollOverride> {
        GmReply::Answer(RollOverride::Keep)
    }
    async fn answer_insight(&mut self, _s: &Session, _a: &str, _q: &str) -> GmReply<String> {
        GmReply::Answer("They are bluffing.".into())
    }
    async fn narrate_outcome(&mut self, _s: &Session) -> GmReply<String> {
        GmReply::Answer("The guard hesitates.".into())
    }
    async fn resolve_failure(
        &mut self,
        _s: &Session,
        _p: Phase,
        _a: &str,
        _e: &str,
    ) -> GmReply<FailureChoice> {
        GmReply::Answer(FailureChoice::Skip)
    }
}

fn entry(purpose: &str, content: serde_json::Value) -> ReplayEntry {
    ReplayEntry {
        agent: "*".into(),
        purpose: purpose.into(),
        content: content.to_string(),
    }
}

fn turn_replies() -> Vec<ReplayEntry> {
    vec![
        entry("clarifying_questions", serde_json::json!({"questions": []})),
        entry(
            "strategic_intent",
            serde_json::json!({"strategy": "Talk first.", "directive": "Talk the guard down."}),
        ),
        entry(
            "character_action",
            serde_json::json!({"action": "I raise my empty hands and step toward the guard.",
            "dialogue": "Easy now.", "task_type": "feelings", "prepared": false, "expert": false, "justification": "Talk."}),
        ),
        entry(
            "insight_question",
            serde_json::json!({"question": "What are they really feeling?"}),
        ),
        entry(
            "insight_decision",
            serde_json::json!({"change_action": false, "reason": "Fine."}),
        ),
        entry(
            "character_reaction",
            serde_json::json!({"reaction": "Phew."}),
        ),
    ]
}

fn campaign() -> troupe_campaign::Campaign {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/campaign.json");
    match troupe_campaign::load(&path) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

fn gateway(turns: u64) -> Gateway {
    let replies: Vec<ReplayEntry> = (0..turns).flat_map(|_| turn_replies()).collect();
    Gateway::new(
        Arc::new(ReplayModel::from_entries(replies)),
        RetryPolicy::default(),
        Arc::new(ScaledSleeper { factor: 0.0 }),
    )
}

/// Run `turns` full turns; returns the time spent. `durable`: the campaign's `campaign.db` on
/// disk (every step committed with fsync) and the JSONL mirror; otherwise an in-memory store,
/// which measures the engine's own work without the disk's.
async fn session(turns: u64, dir: &std::path::Path, durable: bool) -> Duration {
    let table = Table {
        gateway: gateway(turns),
        prompts: PromptSet::embedded(),
    };
    let record = if durable {
        let store = Store::open(dir).unwrap_or_else(|e| panic!("{e}"));
        let n = store
            .next_session_number(dir)
            .unwrap_or_else(|e| panic!("{e}"));
        let mirror = EventLog::create(&session_log_path(dir, n)).unwrap_or_else(|e| panic!("{e}"));
        (
            n,
            Record {
                store,
                mirror: Some(mirror),
            },
        )
    } else {
        let store = Store::in_memory().unwrap_or_else(|e| panic!("{e}"));
        (
            1,
            Record {
                store,
                mirror: None,
            },
        )
    };
    let (n, record) = record;
    let mut gm = InstantGm(turns);
    let mut quiet = Quiet;
    let clock = SystemClock;
    let setup = SessionSetup {
        campaign: campaign(),
        session_number: n,
        seed: 1,
    };
    let start = Instant::now();
    let mut driver = Driver::start(setup, record, &mut gm, &table, &mut quiet, &clock)
        .unwrap_or_else(|e| panic!("{e}"));
    driver.run().await.unwrap_or_else(|e| panic!("{e}"));
    start.elapsed()
}

/// The baseline: render the four prompts of a turn and run them through the gateway.
async fn calls_only(turns: u64) -> Duration {
    let c = campaign();
    let seat = &c.seats[0];
    let prompts = PromptSet::embedded();
    let gw = gateway(turns);
    let pv = PlayerView {
        agent_id: seat.player.agent_id.clone(),
        gm_name: c.gm_name.clone(),
        ship: c.ship.clone(),
        player: seat.player.clone(),
        character: seat.character.clone(),
        recent: vec![TurnRecap {
            turn: 1,
            narration: "n".into(),
            action: None,
            outcome: None,
        }],
        narration: "A guard blocks the corridor.".into(),
        clarifications: vec![],
        memories: vec![],
        insight: None,
    };
    let cv = CharacterView {
        agent_id: pv.agent_id.clone(),
        ship: c.ship.clone(),
        character: seat.character.clone(),
        recent: pv.recent.clone(),
        narration: pv.narration.clone(),
        clarifications: vec![],
        memories: vec![],
        directive: "Talk.".into(),
        others: vec![],
        gm_note: None,
        insight: None,
        action: None,
        roll: None,
        outcome: None,
    };
    let start = Instant::now();
    for _ in 0..turns {
        for call in [
            prompts.questions(&pv, 2),
            prompts.intent(&pv),
            prompts.action(&cv, 1, ""),
            prompts.reaction(&cv),
        ] {
            let call = call.unwrap_or_else(|e| panic!("{e}"));
            let _ = gw.call(&call.request, &mut |_| {}).await;
        }
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("turn");
    g.bench_function("full_turn_one_player", |b| {
        b.iter_custom(|iters| rt.block_on(session(iters, dir.path(), false)))
    });
    g.bench_function("full_turn_one_player_durable", |b| {
        b.iter_custom(|iters| rt.block_on(session(iters, dir.path(), true)))
    });
    g.bench_function("baseline_model_calls_only", |b| {
        b.iter_custom(|iters| rt.block_on(calls_only(iters)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
