#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The long run: one player plays N turns (default 1,000) through the real driver, as
//! `troupe play` stores them: `campaign.db` on disk (events and campaign memory, fsync per step)
//! and the JSONL mirror; replayed model replies and a GM that answers at once, so what is timed
//! is the engine's own work. Prints the time per turn over windows of 50 turns and the resident
//! memory along the way: both must stay flat as the session grows.
//!
//! ```sh
//! cargo run --release -p troupe-engine --example long_session -- 1000
//! cargo run --release -p troupe-engine --example long_session -- 1000 --keep /tmp/long
//! ```
//! `--keep DIR` leaves the campaign directory there (to time `troupe resume` on it).

#[path = "../benches/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Instant;

use support::{InstantGm, campaign, turn_replies};
use troupe_agents::PromptSet;
use troupe_lasers::*;
use troupe_llm::{Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};

/// Times every completed turn and samples the resident memory every 100 turns.
struct Stopwatch {
    last: Instant,
    turn_ms: Vec<f64>,
    /// This process's CPU time (user + system, ms) when each turn completed: unlike wall time,
    /// it leaves out waiting for the disk and for other processes on a shared machine.
    cpu_ms: Vec<f64>,
    rss: Vec<(usize, (u64, u64))>,
}

impl troupe_engine::CallWatch for Stopwatch {}
impl troupe_engine::Watch<Session, Envelope> for Stopwatch {
    fn on_event(&mut self, _session: &Session, env: &Envelope) {
        if matches!(env.event, Event::TurnCompleted) {
            let now = Instant::now();
            self.turn_ms
                .push(now.duration_since(self.last).as_secs_f64() * 1e3);
            self.last = now;
            self.cpu_ms.push(cpu_ms());
            let n = self.turn_ms.len();
            if n.is_multiple_of(100) {
                self.rss.push((n, rss_kib()));
            }
        }
    }
}

/// This process's resident set, KiB: (all of it, its anonymous part), from /proc (zeros where
/// there is none). The rest is pages of files mapped in, here `campaign.db` read through the
/// memory store's memory map: the kernel's page cache, shared, dropped under pressure.
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
    (field("VmRSS:"), field("RssAnon:"))
}

/// This process's CPU time so far (user + system), ms, from /proc (0 where there is none).
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at state: utime and stime
    // are the 12th and 13th of them, in clock ticks (100 a second on Linux).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) * 10.0
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let turns: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let keep = args
        .iter()
        .position(|a| a == "--keep")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let dir = keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();

    let replies: Vec<ReplayEntry> = (0..turns).flat_map(|_| turn_replies()).collect();
    let gateway = Gateway::new(
        Arc::new(ReplayModel::from_entries(replies)),
        RetryPolicy::default(),
        Arc::new(ScaledSleeper { factor: 0.0 }),
    );
    let memory = troupe_memory::MemoryStore::open(&dir.join("campaign.db")).unwrap();
    let table = Table::new(
        gateway,
        PromptSet::embedded(),
        Box::new(StoreMemory::new(memory, 0.0)),
    );
    let store = Store::open(&dir).unwrap();
    let n = store.next_session_number().unwrap();

    let c = campaign();
    if keep.is_some() {
        std::fs::write(
            dir.join("campaign.json"),
            serde_json::to_string_pretty(&c).unwrap(),
        )
        .unwrap();
    }
    let setup = SessionSetup {
        campaign: c,
        session_number: n,
        seed: 1,
        day: 1,
    };
    let mut gm = InstantGm(turns);
    let mut watch = Stopwatch {
        last: Instant::now(),
        turn_ms: Vec::new(),
        cpu_ms: Vec::new(),
        rss: Vec::new(),
    };
    let clock = SystemClock;
    let start = Instant::now();
    let mut driver = Driver::start(setup, store, &mut gm, &table, &mut watch, &clock).unwrap();
    driver.run().await.unwrap();
    drop(driver);
    let total = start.elapsed();
    report(&watch, total);
}

fn report(watch: &Stopwatch, total: std::time::Duration) {
    let t = &watch.turn_ms;
    println!(
        "{} turns in {:.1} s ({:.2} ms a turn on average)",
        t.len(),
        total.as_secs_f64(),
        mean(t)
    );
    println!("turns        mean ms  median ms  cpu ms");
    let mut from = 0;
    while from < t.len() {
        let to = (from + 50).min(t.len());
        let w = &t[from..to];
        // Print the first windows, every 10th, and the last.
        if from < 150 || from.is_multiple_of(500) || to == t.len() {
            let c = &watch.cpu_ms;
            let before = from.checked_sub(1).and_then(|i| c.get(i)).unwrap_or(&0.0);
            let cpu = (c.get(to - 1).unwrap_or(&0.0) - before) / (to - from) as f64;
            println!(
                "{:>5}-{:<5} {:>8.2} {:>9.2} {:>7.2}",
                from + 1,
                to,
                mean(w),
                median(w),
                cpu
            );
        }
        from = to;
    }
    for (n, (all, anon)) in &watch.rss {
        if *n == 100 || n.is_multiple_of(1000) || *n == t.len() {
            println!(
                "RSS at turn {n}: {:.1} MiB ({:.1} MiB anonymous)",
                *all as f64 / 1024.0,
                *anon as f64 / 1024.0
            );
        }
    }
}
