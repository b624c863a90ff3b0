#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The engine's overhead per full turn with the AI game master in the GM's seat: every model
//! reply recorded (the players' and the GM's), no waits, an in-memory store. Baseline in the
//! same run: the same turns with a GM seat that answers at once (as `benches/turn.rs`).
//!
//!     cargo bench -p troupe-engine --bench ai_gm
//!
//! Before criterion's report it prints medians over whole sessions (10 and 100 turns): wall and
//! on-CPU time a turn with each seat, and how much of an AI-GM turn is spent inside the GM seat
//! itself (its prompts, gateway calls and checks), timed around each of its methods.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use support::{InstantGm, campaign, entry, turn_replies};
use troupe_agents::PromptSet;
use troupe_engine::watch::Unwatched;
use troupe_lasers::*;
use troupe_llm::{Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};

fn gateway(replies: Vec<ReplayEntry>) -> Gateway {
    Gateway::new(
        Arc::new(ReplayModel::from_entries(replies)),
        RetryPolicy::default(),
        Arc::new(ScaledSleeper { factor: 0.0 }),
    )
}

/// The AI GM's replies for one turn: every one passes the checks, so each decision is one call.
fn gm_turn_replies() -> Vec<ReplayEntry> {
    vec![
        entry(
            "gm_narration",
            json!({"narration": "A guard blocks the corridor, rifle raised. What do you do?"}),
        ),
        entry(
            "gm_ruling",
            json!({"roll": true, "task_type": "feelings", "prepared": false, "expert": false,
                "reason": "The guard is jumpy."}),
        ),
        entry(
            "gm_insight_answer",
            json!({"answer": "The guard is more afraid than angry."}),
        ),
        entry(
            "gm_outcome",
            json!({"outcome": "The guard lowers the rifle a little; somewhere a door hums.",
                "end_session": false}),
        ),
    ]
}

/// A GM seat that adds up the time spent inside another one.
struct Timed<G> {
    inner: G,
    spent: Duration,
}

impl<G> Timed<G> {
    async fn time<T>(&mut self, f: impl AsyncFnOnce(&mut G) -> T) -> T {
        let start = Instant::now();
        let out = f(&mut self.inner).await;
        self.spent += start.elapsed();
        out
    }
}

#[async_trait]
impl<G: GmSeat> GmSeat for Timed<G> {
    fn take_notes(&mut self) -> Vec<SeatNote> {
        self.inner.take_notes()
    }
    async fn decide(
        &mut self,
        q: &GmQuestion<'_>,
        watch: &mut dyn troupe_engine::CallWatch,
    ) -> troupe_seat::Answer {
        self.time(async |g| g.decide(q, watch).await).await
    }
}

/// Nanoseconds this thread has run on a CPU (Linux: `/proc/thread-self/schedstat`): on a
/// shared machine the wall clock also counts the time other processes held the cores.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// What one session took: wall clock and on-CPU time.
struct Took {
    wall: Duration,
    cpu: Duration,
}

/// Play `turns` full turns with this GM seat (the campaign store in memory, no JSONL mirror).
async fn session(turns: u64, gm: &mut dyn GmSeat) -> Took {
    let replies: Vec<ReplayEntry> = (0..turns).flat_map(|_| turn_replies()).collect();
    let table = Table::new(
        gateway(replies),
        PromptSet::embedded(),
        StoreMemory::in_memory().unwrap(),
    );
    let store = Store::in_memory().unwrap();
    let setup = SessionSetup {
        campaign: campaign(),
        session_number: 1,
        seed: 1,
        day: 1,
    };
    let (mut quiet, clock) = (Unwatched, SystemClock);
    let (start, cpu) = (Instant::now(), cpu_ns());
    let mut driver = Driver::start(setup, store, gm, &table, &mut quiet, &clock).unwrap();
    driver.stop_after(u32::try_from(turns).unwrap());
    let end = driver.run().await.unwrap();
    let took = Took {
        wall: start.elapsed(),
        cpu: Duration::from_nanos(cpu_ns() - cpu),
    };
    assert!(end.contains("asked for"), "{end}");
    assert_eq!(u64::from(driver.session().turn_number), turns);
    took
}

fn ai_gm(turns: u64) -> Timed<AiGm> {
    let replies = (0..turns).flat_map(|_| gm_turn_replies()).collect();
    Timed {
        inner: AiGm::new(gateway(replies), PromptSet::embedded()),
        spent: Duration::ZERO,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Medians over `runs` sessions of `turns` turns, in µs a turn: wall and on-CPU time with the
/// AI GM and with the instant GM, and the time spent inside the AI GM seat (its prompts,
/// gateway calls and checks; the engine's recording of its calls is outside it).
fn print_medians(rt: &tokio::runtime::Runtime, runs: usize, turns: u64) {
    let per = |d: Duration| d.as_secs_f64() * 1e6 / turns as f64;
    let (mut ai_wall, mut ai_cpu, mut seat) = (Vec::new(), Vec::new(), Vec::new());
    let (mut base_wall, mut base_cpu) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut gm = ai_gm(turns);
        let t = rt.block_on(session(turns, &mut gm));
        ai_wall.push(per(t.wall));
        ai_cpu.push(per(t.cpu));
        seat.push(per(gm.spent));
        let t = rt.block_on(session(turns, &mut InstantGm(u64::MAX)));
        base_wall.push(per(t.wall));
        base_cpu.push(per(t.cpu));
    }
    let (aw, ac, s) = (median(ai_wall), median(ai_cpu), median(seat));
    let (bw, bc) = (median(base_wall), median(base_cpu));
    println!(
        "{turns}-turn sessions, medians of {runs}, µs a turn: AI GM wall {aw:.0} cpu {ac:.0} \
         (inside the GM seat {s:.0}, {:.0} % of wall) | instant GM wall {bw:.0} cpu {bc:.0} | \
         AI GM extra: wall {:.0}, cpu {:.0}",
        100.0 * s / aw,
        aw - bw,
        ac - bc
    );
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // `AI_GM_MEDIANS=0` skips them (e.g. under `perf record ... --profile-time`).
    if std::env::var("AI_GM_MEDIANS").as_deref() != Ok("0") {
        print_medians(&rt, 101, 10);
        print_medians(&rt, 11, 100);
    }
    let mut g = c.benchmark_group("ai_gm_turn");
    g.bench_function("ai_gm_one_player", |b| {
        b.iter_custom(|iters| rt.block_on(session(iters, &mut ai_gm(iters))).wall)
    });
    g.bench_function("instant_gm_one_player", |b| {
        b.iter_custom(|iters| rt.block_on(session(iters, &mut InstantGm(u64::MAX))).wall)
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
