#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Campaign memory: how long a question takes, by the size of the memory, and how fast facts
//! go in.
//!
//!     cargo bench -p troupe-memory --bench memory
//!     MEMORY_BENCH_1M=1 cargo bench -p troupe-memory --bench memory   # adds 1M facts
//!
//! * `search/<facts>/fusion` and `search/<facts>/bm25_only`: one question per iteration, taken
//!   in turn from a fixed mix of 400 (names, paraphrases, "last session" and other times, who
//!   said what) asked as the player `alex` after the last session, top 10. The store is a
//!   `campaign.db` in a temporary directory (WAL), filled once per size with a generated
//!   campaign (`support/corpus.rs`). BM25 alone is the named baseline. Criterion reports the
//!   mean and median over the mix; P50/P95 over single questions come from
//!   `examples/memory_speed.rs`.
//! * `ingest/store_1000` and `ingest/import_1000`: 1,000 episodes with their facts into a store
//!   that already holds 10,000, through `store()` (one transaction, entities linked) and through
//!   `extract::import` (which also learns aliases). Criterion reports facts/s.

#[path = "support/corpus.rs"]
mod corpus;

use std::cell::Cell;

use corpus::Campaign;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use troupe_memory::extract::{self, Moment};
use troupe_memory::{GameTime, MemoryStore, NewFact, Query, Reader, Signals, Source};

fn facts_of(eps: &[troupe_memory::Episode]) -> Vec<NewFact> {
    eps.iter()
        .map(|e| {
            let (s, m) = match e.speaker.as_str() {
                "gm" => (Source::Gm, Moment::Narration),
                "alex" | "bea" | "cy" => (Source::Player, Moment::Strategy),
                _ => (Source::Character, Moment::Action),
            };
            extract::episode_fact(e, s, m)
        })
        .collect()
}

fn build(dir: &std::path::Path, size: usize) -> (MemoryStore, Campaign) {
    let mut store = MemoryStore::open(&dir.join("campaign.db")).unwrap();
    let mut campaign = Campaign::new(size, 7);
    loop {
        let eps = campaign.next_batch(1000);
        if eps.is_empty() {
            break;
        }
        store.store(&eps, &facts_of(&eps)).unwrap();
    }
    (store, campaign)
}

fn search(c: &mut Criterion) {
    let mut sizes = vec![1_000usize, 10_000, 100_000];
    if std::env::var_os("MEMORY_BENCH_1M").is_some() {
        sizes.push(1_000_000);
    }
    let mut group = c.benchmark_group("search");
    group.sample_size(50);
    for size in sizes {
        let dir = tempfile::tempdir().unwrap();
        let (store, campaign) = build(dir.path(), size);
        let questions = campaign.questions(400, 11);
        let now = GameTime {
            session: Campaign::sessions(size) + 1,
            turn: 0,
            day: None,
        };
        for (name, signals) in [
            ("bm25_only", Signals::BM25_ONLY),
            ("fusion", Signals::DEFAULT),
        ] {
            let next = Cell::new(0usize);
            group.bench_function(BenchmarkId::new(size.to_string(), name), |b| {
                b.iter(|| {
                    let i = next.get();
                    next.set((i + 1) % questions.len());
                    let mut q =
                        Query::new(questions[i].0.as_str(), Reader::Player("alex".into()), now);
                    q.top_k = 10;
                    q.signals = signals;
                    std::hint::black_box(store.search(&q).unwrap())
                })
            });
        }
    }
    group.finish();
}

fn ingest(c: &mut Criterion) {
    let mut group = c.benchmark_group("ingest");
    group.sample_size(20);
    group.throughput(Throughput::Elements(1000));
    let base = 10_000;
    // Fresh batches for every iteration: a stored fact is not stored again.
    let mut source = Campaign::new(base + 1000 * 1000, 7);
    let _ = source.next_batch(base);
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = build(dir.path(), base);
    group.bench_function("store_1000", |b| {
        b.iter_batched(
            || {
                let eps = source.next_batch(1000);
                let facts = facts_of(&eps);
                (eps, facts)
            },
            |(eps, facts)| store.store(&eps, &facts).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let dir2 = tempfile::tempdir().unwrap();
    let (mut store2, _) = build(dir2.path(), base);
    group.bench_function("import_1000", |b| {
        b.iter_batched(
            || source.next_batch(1000),
            |eps| extract::import(&mut store2, &eps).unwrap(),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, search, ingest);
criterion_main!(benches);
