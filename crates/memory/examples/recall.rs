//! Recall quality of the memory's retrieval, signal by signal, in one run.
//!
//!     cargo run --release -p troupe-memory --example recall
//!     cargo run --release -p troupe-memory --features embeddings --example recall  # + MiniLM
//!
//! Imports `benches/recall/episodes.jsonl` (one fact per episode, as `troupe memory import`
//! does; `RECALL_DIR` reads another folder), asks every question of `questions.jsonl` as the
//! party would, just before its `asked_at_session` (the day is the latest one logged by then),
//! and prints recall@5 and recall@10 — the share of a question's expected episodes found among
//! the episodes of its top-k facts, averaged over questions — overall and per kind, for BM25
//! alone, each other signal alone, the shipped fusion, and the fusion without each signal it
//! uses (or with each one it leaves at 0).
//!
//! The questions are split in two by a hash of their id: the dev half is the one the weights
//! and the ranker were tuned on; the test half was not looked at while tuning.
//!
//! `RECALL_TRY="entities=0.5,neighbours=0.6"` adds a row with the fusion's weights changed, for
//! tuning on the dev half; `RECALL_HALF=dev` prints that half only. `RECALL_MISSES=dev` lists
//! the dev questions the fusion misses. `RECALL_DB=FILE` keeps the store, and its vectors, in
//! a file between runs.
#![allow(
    clippy::too_many_lines,
    reason = "a measuring program reads top to bottom, as its report is printed"
)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde::Deserialize;
use troupe_memory::{GameTime, MemoryStore, Query, Reader, Signals, extract};

#[derive(Deserialize)]
struct Question {
    id: String,
    question: String,
    expected: Vec<String>,
    kind: String,
    asked_at_session: u32,
}

/// The signals by name, with a setter (the fusion's weights as data, for the ablation rows).
fn signal_names() -> Vec<&'static str> {
    let mut v = vec![
        "bm25",
        "entities",
        "time",
        "speaker",
        "neighbours",
        "recency",
        "proximity",
        "session",
    ];
    if troupe_memory::EMBEDDINGS_BUILT {
        v.push("embeddings");
    }
    v
}

fn weight<'a>(s: &'a mut Signals, name: &str) -> Option<&'a mut f64> {
    Some(match name {
        "bm25" => &mut s.bm25,
        "entities" => &mut s.entities,
        "time" => &mut s.time,
        "speaker" => &mut s.speaker,
        "neighbours" => &mut s.neighbours,
        "recency" => &mut s.recency,
        "proximity" => &mut s.proximity,
        "session" => &mut s.session,
        "embeddings" => &mut s.embeddings,
        _ => return None,
    })
}

/// FNV-1a: a stable split of the questions that does not follow their order or kind.
fn is_dev(id: &str) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.is_multiple_of(2)
}

struct Score {
    at5: f64,
    at10: f64,
    n: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::var_os("RECALL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/recall"));
    let text = std::fs::read_to_string(dir.join("episodes.jsonl"))?;
    let episodes = extract::read_import(&text, "episodes.jsonl").map_err(|e| format!("{e:?}"))?;
    // RECALL_DB=FILE keeps the store (and its vectors) in a file between runs, for tuning.
    let mut store = match std::env::var_os("RECALL_DB") {
        Some(p) => MemoryStore::open(std::path::Path::new(&p))?,
        None => MemoryStore::in_memory()?,
    };
    let t = Instant::now();
    extract::import(&mut store, &episodes)?;
    let import_time = t.elapsed();
    #[cfg(feature = "embeddings")]
    let embed_time = {
        let t = Instant::now();
        let embedder = troupe_embed::Embedder::load(None)?;
        store.attach_embedder(std::sync::Arc::new(embedder))?;
        t.elapsed()
    };
    let questions: Vec<Question> = std::fs::read_to_string(dir.join("questions.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    // The latest in-game day logged up to each session.
    let day_by = |session: u32| {
        episodes
            .iter()
            .filter(|e| e.session <= session)
            .filter_map(|e| e.day)
            .max()
    };

    let mut tried = Signals::DEFAULT;
    let try_spec = std::env::var("RECALL_TRY").unwrap_or_default();
    for part in try_spec.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or("RECALL_TRY: name=weight,…")?;
        *weight(&mut tried, k).ok_or(format!("RECALL_TRY: unknown signal {k}"))? = v.parse()?;
    }

    let mut configs: Vec<(String, Signals)> =
        vec![("BM25 alone (baseline)".into(), Signals::BM25_ONLY)];
    for name in signal_names().into_iter().skip(1) {
        if let Some(s) = Signals::only(name) {
            configs.push((format!("{name} alone"), s));
        }
    }
    // Neighbours only lend scores to what other signals found: alone they find nothing, so
    // they are also shown on top of BM25.
    configs.push((
        "BM25 + neighbours".into(),
        Signals {
            neighbours: if Signals::DEFAULT.neighbours > 0.0 {
                Signals::DEFAULT.neighbours
            } else {
                0.5
            },
            ..Signals::BM25_ONLY
        },
    ));
    configs.push(("**fusion (DEFAULT)**".into(), Signals::DEFAULT));
    if !try_spec.is_empty() {
        configs.push((format!("try {try_spec}"), tried));
    }
    for name in signal_names() {
        let mut s = Signals::DEFAULT;
        let Some(w) = weight(&mut s, name) else {
            continue;
        };
        if *w > 0.0 {
            *w = 0.0;
            configs.push((format!("fusion without {name}"), s));
        } else {
            // A signal the fusion leaves off: show what switching it on would do.
            *w = match name {
                "recency" => 0.1,
                "speaker" => 0.5,
                _ => 0.5,
            };
            configs.push((format!("fusion with {name} ({})", *w), s));
        }
    }

    let kinds: Vec<String> = {
        let mut k: Vec<String> = questions.iter().map(|q| q.kind.clone()).collect();
        k.sort();
        k.dedup();
        k
    };
    let misses = std::env::var("RECALL_MISSES").unwrap_or_default();
    println!(
        "{} episodes, {} questions; import {:.2} s{}\n",
        episodes.len(),
        questions.len(),
        import_time.as_secs_f64(),
        {
            #[cfg(feature = "embeddings")]
            {
                format!(
                    "; MiniLM vectors for every fact {:.1} s",
                    embed_time.as_secs_f64()
                )
            }
            #[cfg(not(feature = "embeddings"))]
            {
                String::new()
            }
        }
    );
    // RECALL_HALF=dev prints the dev half only (while tuning).
    let only = std::env::var("RECALL_HALF").unwrap_or_default();
    for half in ["dev", "test"] {
        if !only.is_empty() && only != half {
            continue;
        }
        let qs: Vec<&Question> = questions
            .iter()
            .filter(|q| is_dev(&q.id) == (half == "dev"))
            .collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for q in &qs {
            *counts.entry(q.kind.as_str()).or_default() += 1;
        }
        println!(
            "### {half} half ({} questions: {})\n",
            qs.len(),
            counts
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        print!("| ranker | R@5 | R@10 |");
        for k in &kinds {
            print!(" {k} R@5 / R@10 |");
        }
        println!(" ms/query |");
        print!("|---|---:|---:|");
        for _ in &kinds {
            print!("---:|");
        }
        println!("---:|");
        for (name, signals) in &configs {
            let mut total = Score {
                at5: 0.0,
                at10: 0.0,
                n: 0,
            };
            let mut per_kind: BTreeMap<&str, Score> = BTreeMap::new();
            let t = Instant::now();
            for q in &qs {
                let mut query = Query::new(
                    q.question.clone(),
                    Reader::Party,
                    GameTime {
                        session: q.asked_at_session,
                        turn: 0,
                        day: day_by(q.asked_at_session),
                    },
                );
                query.top_k = 10;
                query.signals = *signals;
                let hits = store.search(&query)?;
                let found = |k: usize| {
                    let got: Vec<&String> = hits
                        .iter()
                        .take(k)
                        .flat_map(|h| h.fact.episode_ids.iter())
                        .collect();
                    q.expected.iter().filter(|e| got.contains(e)).count() as f64
                        / q.expected.len().max(1) as f64
                };
                let (r5, r10) = (found(5), found(10));
                if name.starts_with("**") && misses == half && r10 < 1.0 {
                    eprintln!("MISS {} [{}] {} (R@10 {r10:.2})", q.id, q.kind, q.question);
                    eprintln!("    expected {:?}", q.expected);
                    for h in hits.iter().take(5) {
                        eprintln!(
                            "    {:.3} {:?} {}",
                            h.score, h.fact.episode_ids, h.fact.text
                        );
                    }
                }
                for s in [
                    &mut total,
                    per_kind.entry(q.kind.as_str()).or_insert(Score {
                        at5: 0.0,
                        at10: 0.0,
                        n: 0,
                    }),
                ] {
                    s.at5 += r5;
                    s.at10 += r10;
                    s.n += 1;
                }
            }
            let per_query = t.elapsed().as_secs_f64() * 1e3 / qs.len().max(1) as f64;
            let n = total.n.max(1) as f64;
            print!("| {name} | {:.3} | {:.3} |", total.at5 / n, total.at10 / n);
            for k in &kinds {
                match per_kind.get(k.as_str()) {
                    Some(s) => {
                        let n = s.n.max(1) as f64;
                        print!(" {:.2} / {:.2} |", s.at5 / n, s.at10 / n);
                    }
                    None => print!(" – |"),
                }
            }
            println!(" {per_query:.2} |");
        }
        println!();
    }
    let d = Signals::DEFAULT;
    println!(
        "DEFAULT weights: bm25 {}, entities {}, time {}, speaker {}, neighbours {}, recency {}, proximity {}, session {}{}",
        d.bm25,
        d.entities,
        d.time,
        d.speaker,
        d.neighbours,
        d.recency,
        d.proximity,
        d.session,
        {
            #[cfg(feature = "embeddings")]
            {
                format!(", embeddings {}", d.embeddings)
            }
            #[cfg(not(feature = "embeddings"))]
            {
                String::new()
            }
        }
    );
    Ok(())
}
