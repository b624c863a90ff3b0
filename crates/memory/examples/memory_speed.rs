//! How fast the campaign memory is, by size: ingest rate, query latency (P50/P95 from
//! per-query timings), resident memory and file size.
//!
//!     cargo run --release -p troupe-memory --example memory_speed            # 1k, 10k, 100k
//!     MEMORY_SPEED_1M=1 cargo run --release -p troupe-memory --example memory_speed  # + 1M
//!     cargo run --release -p troupe-memory --example memory_speed -- 1000000 # any sizes
//!
//! Each size runs in a process of its own. A `campaign.db` in a temporary directory (WAL, as
//! the engine opens it) is filled through `MemoryStore::store` in batches of 1,000 episodes with
//! their facts (entities linked, no model extraction); then a second one through
//! `extract::import` (which also learns aliases; up to 200k facts unless
//! `MEMORY_SPEED_IMPORT` is set). Then a fixed mix of 400 questions (names, paraphrases, "last
//! session" and other times, who said what) is asked as the player `alex` after the last
//! session, top 10; each is timed on its own after a warm-up pass, in three passes, keeping
//! each question's best time (the machine is shared; "one pass" columns give the first pass
//! as measured), with the shipped fusion and with BM25 alone. Resident memory is read from /proc/self/status before opening the store and
//! after filling it: anonymous memory (what the process holds: SQLite's page cache, the
//! store) apart from file-backed pages (campaign.db read through mmap, and the binary), which
//! the OS shares with its page cache. The DB size counts the WAL.
#![allow(
    clippy::too_many_lines,
    reason = "a measuring program reads top to bottom, as its report is printed"
)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../benches/support/corpus.rs"]
mod corpus;

use std::time::{Duration, Instant};

use corpus::Campaign;
use troupe_memory::extract::{self, Moment};
use troupe_memory::{GameTime, MemoryStore, Query, Reader, Signals, Source};

const BATCH: usize = 1000;
const QUESTIONS: usize = 400;
/// Timed passes over the questions; each question's best time counts.
const BEST_OF: usize = 3;

/// Resident memory from /proc/self/status, KiB: (anonymous, file-backed). File-backed pages
/// are campaign.db's, mapped (SQLite reads through mmap): shared with the OS page cache and
/// dropped under memory pressure. Anonymous memory is what the store holds.
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("RssAnon:"), field("RssFile:"))
}

fn file_size(p: &std::path::Path) -> u64 {
    let mut n = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let wal = p.with_extension("db-wal");
    n += std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0);
    n
}

fn source_of(speaker: &str) -> (Source, Moment) {
    match speaker {
        "gm" => (Source::Gm, Moment::Narration),
        "alex" | "bea" | "cy" => (Source::Player, Moment::Strategy),
        _ => (Source::Character, Moment::Action),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

struct Row {
    size: usize,
    store_rate: f64,
    import_rate: f64,
    p50: Duration,
    p95: Duration,
    max: Duration,
    single_p50: Duration,
    single_p95: Duration,
    bm25_p50: Duration,
    bm25_p95: Duration,
    rss_before: (u64, u64),
    rss_after: (u64, u64),
    db_bytes: u64,
    kinds: Vec<(&'static str, Duration, Duration)>,
}

fn run(size: usize) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let seed = 7;

    // 1. Through store(): episodes and their facts, 1,000 at a time.
    let path = dir.path().join("campaign.db");
    let rss_before = rss_kib();
    let mut store = MemoryStore::open(&path).unwrap();
    let mut campaign = Campaign::new(size, seed);
    let mut spent = Duration::ZERO;
    loop {
        let eps = campaign.next_batch(BATCH);
        if eps.is_empty() {
            break;
        }
        let facts: Vec<_> = eps
            .iter()
            .map(|e| {
                let (s, m) = source_of(&e.speaker);
                extract::episode_fact(e, s, m)
            })
            .collect();
        let t = Instant::now();
        store.store(&eps, &facts).unwrap();
        spent += t.elapsed();
    }
    let store_rate = size as f64 / spent.as_secs_f64();
    let rss_after = rss_kib();
    let db_bytes = file_size(&path);

    // 2. Through extract::import (episode → fact, aliases learnt), into a second file.
    let import_rate = if size <= 200_000 || std::env::var_os("MEMORY_SPEED_IMPORT").is_some() {
        let path2 = dir.path().join("imported.db");
        let mut other = MemoryStore::open(&path2).unwrap();
        let mut c2 = Campaign::new(size, seed);
        let mut spent = Duration::ZERO;
        loop {
            let eps = c2.next_batch(5_000);
            if eps.is_empty() {
                break;
            }
            let t = Instant::now();
            extract::import(&mut other, &eps).unwrap();
            spent += t.elapsed();
        }
        drop(other);
        size as f64 / spent.as_secs_f64()
    } else {
        f64::NAN
    };

    // 3. Questions, each timed alone, after a warm-up pass over all of them.
    let now = GameTime {
        session: Campaign::sessions(size) + 1,
        turn: 0,
        day: None,
    };
    let questions = campaign.questions(QUESTIONS, 11);
    let time_all = |signals: Signals| {
        let ask = |text: &str| {
            let mut q = Query::new(text, Reader::Player("alex".into()), now);
            q.top_k = 10;
            q.signals = signals;
            let t = Instant::now();
            let hits = store.search(&q).unwrap();
            let d = t.elapsed();
            std::hint::black_box(hits);
            d
        };
        for (text, _) in &questions {
            ask(text);
        }
        // Three timed passes; each question keeps its best time. The machine is shared (two
        // cores, other builds running): a question's own cost is its fastest run, and a
        // single pass's P95 mostly measures the scheduler. The single pass is kept too.
        let mut first: Vec<(&'static str, Duration)> = Vec::new();
        let mut best: Vec<(&'static str, Duration)> = Vec::new();
        for pass in 0..BEST_OF {
            for (i, (text, kind)) in questions.iter().enumerate() {
                let d = ask(text);
                if pass == 0 {
                    first.push((*kind, d));
                    best.push((*kind, d));
                } else {
                    best[i].1 = best[i].1.min(d);
                }
            }
        }
        (first, best)
    };
    // MEMORY_SPEED_PASSES=N asks the questions N more times first (for profiling).
    let passes: usize = std::env::var("MEMORY_SPEED_PASSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    for _ in 0..passes {
        time_all(Signals::DEFAULT);
    }
    let (single, timed) = time_all(Signals::DEFAULT);
    let mut all: Vec<Duration> = timed.iter().map(|t| t.1).collect();
    all.sort();
    let mut one_pass: Vec<Duration> = single.iter().map(|t| t.1).collect();
    one_pass.sort();
    let mut kinds = Vec::new();
    for kind in ["name", "paraphrase", "temporal", "who_said"] {
        let mut k: Vec<Duration> = timed.iter().filter(|t| t.0 == kind).map(|t| t.1).collect();
        k.sort();
        kinds.push((kind, percentile(&k, 0.5), percentile(&k, 0.95)));
    }
    let mut bm25: Vec<Duration> = time_all(Signals::BM25_ONLY).1.iter().map(|t| t.1).collect();
    bm25.sort();
    let row = Row {
        size,
        store_rate,
        import_rate,
        p50: percentile(&all, 0.5),
        p95: percentile(&all, 0.95),
        max: all.last().copied().unwrap_or_default(),
        single_p50: percentile(&one_pass, 0.5),
        single_p95: percentile(&one_pass, 0.95),
        bm25_p50: percentile(&bm25, 0.5),
        bm25_p95: percentile(&bm25, 0.95),
        rss_before,
        rss_after,
        db_bytes,
        kinds,
    };
    if std::env::var_os("MEMORY_SPEED_KEEP").is_some() {
        drop(store);
        eprintln!("kept {}", dir.keep().display());
    }
    row
}

fn row_line(r: &Row) -> String {
    format!(
        "| {} | {} | {} | {} | {} / {} | {} / {} | {:.0} | {} | {:.1} → {:.1} | {:.1} | {:.1} |",
        r.size,
        ms(r.p50),
        ms(r.p95),
        ms(r.max),
        ms(r.single_p50),
        ms(r.single_p95),
        ms(r.bm25_p50),
        ms(r.bm25_p95),
        r.store_rate,
        if r.import_rate.is_nan() {
            "—".to_string()
        } else {
            format!("{:.0}", r.import_rate)
        },
        r.rss_before.0 as f64 / 1024.0,
        r.rss_after.0 as f64 / 1024.0,
        r.rss_after.1 as f64 / 1024.0,
        r.db_bytes as f64 / (1024.0 * 1024.0),
    )
}

fn kind_line(r: &Row) -> String {
    let cells: Vec<String> = r
        .kinds
        .iter()
        .map(|(_, a, b)| format!("{} / {}", ms(*a), ms(*b)))
        .collect();
    format!("| {} | {} |", r.size, cells.join(" | "))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Each size runs in a process of its own, so its resident memory is its own.
    if let [flag, size] = args.as_slice()
        && flag == "--one"
    {
        let r = run(size.parse().unwrap());
        println!("ROW {}", row_line(&r));
        println!("KIND {}", kind_line(&r));
        return;
    }
    let mut sizes: Vec<usize> = args
        .iter()
        .filter_map(|a| a.replace(['_', ','], "").parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
        if std::env::var_os("MEMORY_SPEED_1M").is_some() {
            sizes.push(1_000_000);
        }
    }
    println!(
        "| facts | query P50 (ms) | query P95 (ms) | max (ms) | one pass P50 / P95 (ms) | BM25-only P50 / P95 (ms) | ingest store() (facts/s) | ingest import (facts/s) | anonymous RSS before → after (MiB) | mapped campaign.db RSS (MiB) | campaign.db + WAL (MiB) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let exe = std::env::current_exe().unwrap();
    let mut kinds = Vec::new();
    for size in sizes {
        let out = std::process::Command::new(&exe)
            .args(["--one", &size.to_string()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            if let Some(r) = line.strip_prefix("ROW ") {
                println!("{r}");
            } else if let Some(k) = line.strip_prefix("KIND ") {
                kinds.push(k.to_string());
            }
        }
        if !out.status.success() {
            eprintln!("{size}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    println!("\nP50 / P95 by kind of question (ms):\n");
    println!("| facts | name | paraphrase | temporal | who_said |");
    println!("|---:|---:|---:|---:|---:|");
    for k in kinds {
        println!("{k}");
    }
}
