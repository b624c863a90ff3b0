#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The engine's own overhead per full turn: replayed model replies, a GM that answers at once,
//! the JSONL log on a real file. Baseline in the same run: the same four model calls through the
//! gateway (prompt rendering included), without the engine around them.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use support::{InstantGm, campaign, turn_replies};
use troupe_agents::{CharacterView, PlayerView, PromptSet, TurnRecap};
use troupe_engine::watch::Unwatched;
use troupe_lasers::*;
use troupe_llm::{Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};

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
    let table = Table::new(
        gateway(turns),
        PromptSet::embedded(),
        troupe_lasers::StoreMemory::in_memory().unwrap_or_else(|e| panic!("{e}")),
    );
    // A durable store mirrors the session into its log as `troupe play` does.
    let (n, store) = if durable {
        let store = Store::open(dir).unwrap_or_else(|e| panic!("{e}"));
        let n = store
            .next_session_number()
            .unwrap_or_else(|e| panic!("{e}"));
        (n, store)
    } else {
        (1, Store::in_memory().unwrap_or_else(|e| panic!("{e}")))
    };
    let mut gm = InstantGm(turns);
    let mut quiet = Unwatched;
    let clock = SystemClock;
    let setup = SessionSetup {
        campaign: campaign(),
        session_number: n,
        seed: 1,
        day: 1,
    };
    let start = Instant::now();
    let mut driver = Driver::start(setup, store, &mut gm, &table, &mut quiet, &clock)
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
        day: 1,
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
        party: vec![],
        proposals: vec![],
        discussion: vec![],
        plan: None,
        secrets: vec![],
    };
    let cv = CharacterView {
        agent_id: pv.agent_id.clone(),
        ship: c.ship.clone(),
        character: seat.character.clone(),
        day: 1,
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
        secrets: vec![],
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

    // The benches above play `iters` turns in one session, so their per-turn figure is an
    // average over a story of whatever length criterion picks (recall searches a memory that
    // grows every turn). These play sessions of a fixed length: one iteration is a whole
    // session of SESSION_TURNS turns, in a fresh in-memory store.
    let mut g = c.benchmark_group("turn_fixed");
    g.bench_function("ten_turn_session", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    spent += session(SESSION_TURNS, dir.path(), false).await;
                }
                spent
            })
        })
    });
    g.bench_function("ten_turns_model_calls_only", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    spent += calls_only(SESSION_TURNS).await;
                }
                spent
            })
        })
    });
    g.finish();
}

/// The length of a `turn_fixed` session.
const SESSION_TURNS: u64 = 10;

criterion_group!(benches, bench);
criterion_main!(benches);
