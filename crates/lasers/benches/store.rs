#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The session store (`campaign.db`): how fast events are appended, and how long resuming a
//! long session takes.
//!
//! `cargo bench -p troupe-engine --bench store`
//!
//! * `store_append/*`: events appended to a `campaign.db` in a temporary directory on disk
//!   (WAL, `synchronous = FULL`, as `troupe play` opens it) and, after each commit, to the
//!   session's JSONL mirror (the store writes both), 10 events an iteration,
//!   either one transaction per event or one for all ten (a driver step commits a handful of
//!   events at once). Two event sizes: a `model_call` envelope with a ~2 KB prompt, and a small
//!   `phase_started`. Criterion reports events/s.
//! * `store_resume/*`: a 1,000-turn session, played once through the real driver (a GM that
//!   answers at once, replayed model replies), then opened, loaded and folded into a fresh
//!   `Session` per iteration.

mod support;

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use support::{InstantGm, campaign, turn_replies};
use troupe_agents::Layer;
use troupe_engine::watch::Unwatched;
use troupe_lasers::*;
use troupe_llm::{
    AttemptRecord, Gateway, Message, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper, Usage,
};

const TURNS: u64 = 1000;

/// A directory for the one-off build of the long session: tmpfs when there is one (fsync is
/// free there, so 1,000 turns play in a second or two), else the system's temporary directory.
fn scratch_dir() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::tempdir_in(shm)
    {
        return d;
    }
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// Play `TURNS` full turns through the real driver into `campaign.db` in a scratch directory
/// and return every event of the session.
fn play_long_session() -> Vec<Envelope> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let scratch = scratch_dir();
    let replies: Vec<ReplayEntry> = (0..TURNS).flat_map(|_| turn_replies()).collect();
    let table = Table::new(
        Gateway::new(
            Arc::new(ReplayModel::from_entries(replies)),
            RetryPolicy::default(),
            Arc::new(ScaledSleeper { factor: 0.0 }),
        ),
        troupe_agents::PromptSet::embedded(),
        troupe_lasers::StoreMemory::in_memory().unwrap_or_else(|e| panic!("{e}")),
    );
    let store = Store::open(scratch.path()).unwrap_or_else(|e| panic!("{e}"));

    let mut gm = InstantGm(TURNS);
    let mut quiet = Unwatched;
    let clock = SystemClock;
    let setup = SessionSetup {
        campaign: campaign(),
        session_number: 1,
        seed: 1,
        day: 1,
    };
    rt.block_on(async {
        let mut driver = Driver::start(setup, store, &mut gm, &table, &mut quiet, &clock)
            .unwrap_or_else(|e| panic!("{e}"));
        driver.run().await.unwrap_or_else(|e| panic!("{e}"));
    });
    let store = Store::open(scratch.path()).unwrap_or_else(|e| panic!("{e}"));
    store.live_events(1).unwrap_or_else(|e| panic!("{e}"))
}

/// Resume: open `campaign.db`, load the session's standing events (`state`: without the raw
/// model calls; otherwise every standing event) and fold them.
fn resume(dir: &std::path::Path, state: bool) -> Session {
    let store = Store::open(dir).unwrap_or_else(|e| panic!("{e}"));
    let events = if state {
        store.state_events(1)
    } else {
        store.live_events(1)
    }
    .unwrap_or_else(|e| panic!("{e}"));
    let mut s = Session::new(events[0].session_id.clone(), 1);
    for e in &events {
        s.apply(e);
    }
    s
}

fn resume_bench(c: &mut Criterion) {
    let events = play_long_session();
    // The session, on disk: one transaction, so building it costs one fsync.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    {
        let mut store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        store
            .begin_session(1, &events[0].session_id, "2026-01-01T00:00:00Z", &[])
            .unwrap_or_else(|e| panic!("{e}"));
        store.append(1, &events).unwrap_or_else(|e| panic!("{e}"));
    }
    let (state, live, bytes) = {
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let bytes: usize = events
            .iter()
            .map(|e| serde_json::to_string(e).map_or(0, |s| s.len()))
            .sum();
        (
            store
                .state_events(1)
                .unwrap_or_else(|e| panic!("{e}"))
                .len(),
            store.live_events(1).unwrap_or_else(|e| panic!("{e}")).len(),
            bytes,
        )
    };
    let turns = resume(dir.path(), true).turn_number as usize;
    assert_eq!(
        turns, TURNS as usize,
        "the session should have {TURNS} turns"
    );
    let db = std::fs::metadata(dir.path().join("campaign.db")).map_or(0, |m| m.len());
    eprintln!(
        "store_resume: {TURNS} turns, {live} standing events ({state} without model calls), \
         {:.1} MB of JSON, campaign.db {:.1} MB",
        bytes as f64 / 1e6,
        db as f64 / 1e6
    );

    let mut g = c.benchmark_group("store_resume");
    g.sample_size(20);
    g.bench_function("resume_1000_turns_state_events", |b| {
        // Exactly what `Driver::resume` does before it goes on.
        b.iter(|| resume(dir.path(), true).turn_number as usize)
    });
    g.bench_function("resume_1000_turns_live_events", |b| {
        // Every standing event, model calls included, folded.
        b.iter(|| resume(dir.path(), false).turn_number as usize)
    });
    g.finish();
}

fn envelope(seq: u64, turn: u32, phase: Phase, event: Event) -> Envelope {
    Envelope {
        seq,
        timestamp: chrono::Utc::now(),
        session_id: "bench-s1-20260101T000000".into(),
        session_number: 1,
        turn_number: turn,
        phase: Some(phase),
        event,
    }
}

/// A `model_call` as the gateway records it: a ~2 KB prompt (system + user) and a short reply.
fn model_call() -> Event {
    let sheet = "You are Zix, the pilot of the Raptor: a Warrior Android who wants to meet \
                 cool aliens. Your number is 4. You act, you never narrate what happens. ";
    let scene = "The GM said: a guard blocks the corridor, rifle raised; behind him the \
                 hangar doors are half open and the alarm is still ringing. ";
    let system = sheet.repeat(1000 / sheet.len() + 1);
    let user = scene.repeat(1000 / scene.len() + 1);
    Event::ModelCall {
        agent: "player-1".into(),
        layer: Layer::Character,
        purpose: "character_action".into(),
        record: AttemptRecord {
            attempt: 1,
            provider: "replay".into(),
            request_hash: "9f".repeat(32),
            seed: None,
            messages: vec![Message::system(system), Message::user(user)],
            reply: Some(
                serde_json::json!({"action": "I raise my empty hands and step toward the guard.",
                    "dialogue": "Easy now.", "task_type": "feelings", "prepared": false,
                    "expert": false, "justification": "Talk."})
                .to_string(),
            ),
            usage: Usage {
                input_tokens: 520,
                output_tokens: 48,
                ..Usage::default()
            },
            latency_ms: 912,
            error: None,
            retry_in_ms: None,
            repair: false,
            structured_output: None,
            fell_back_to: None,
            first_token_ms: None,
        },
    }
}

fn append_bench(c: &mut Criterion) {
    const PER_ITER: usize = 10;
    let kinds: [(&str, Event); 2] = [
        ("model_call_2kb", model_call()),
        ("phase_started", Event::PhaseStarted),
    ];
    for (name, event) in &kinds {
        let size = serde_json::to_string(&envelope(0, 1, Phase::CharacterAction, event.clone()))
            .map_or(0, |s| s.len());
        eprintln!("store_append: {name} envelope is {size} bytes of JSON");
    }
    let mut g = c.benchmark_group("store_append");
    g.sample_size(20);
    g.measurement_time(std::time::Duration::from_secs(8));
    g.throughput(Throughput::Elements(PER_ITER as u64));
    for (name, event) in kinds {
        for per_tx in [1, PER_ITER] {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let mut store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
            store
                .begin_session(1, "bench-s1-20260101T000000", "2026-01-01T00:00:00Z", &[])
                .unwrap_or_else(|e| panic!("{e}"));
            let mut seq = 0u64;
            let id = format!("{name}/{per_tx}_per_transaction");
            g.bench_function(id, |b| {
                b.iter_batched(
                    || {
                        // Fresh sequence numbers (the primary key), built outside the timing.
                        let batch: Vec<Envelope> = (0..PER_ITER as u64)
                            .map(|i| {
                                envelope(
                                    seq + i,
                                    (seq / 50) as u32 + 1,
                                    Phase::CharacterAction,
                                    event.clone(),
                                )
                            })
                            .collect();
                        seq += PER_ITER as u64;
                        batch
                    },
                    |batch| {
                        for chunk in batch.chunks(per_tx) {
                            store.append(1, chunk).unwrap_or_else(|e| panic!("{e}"));
                        }
                    },
                    criterion::BatchSize::SmallInput,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, append_bench, resume_bench);
criterion_main!(benches);
