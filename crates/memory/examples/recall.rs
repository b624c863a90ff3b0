//! Recall quality of the memory's retrieval, signal by signal, in one run.
//!
//!     cargo run --release -p troupe-memory --example recall
//!
//! Imports `benches/recall/episodes.jsonl` (one fact per episode, as `troupe memory import`
//! does), asks every question of `benches/recall/questions.jsonl`, and prints recall@5 and
//! recall@10 (the share of a question's expected episodes found among the episodes of its top-k
//! facts) for BM25 alone, each signal alone, the shipped fusion, and the fusion without each
//! signal; split into a dev half (used to choose the weights) and a test half (not).

use std::collections::BTreeMap;
use std::path::Path;

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/recall");
    let text = std::fs::read_to_string(dir.join("episodes.jsonl"))?;
    let episodes = extract::read_import(&text, "episodes.jsonl").map_err(|e| format!("{e:?}"))?;
    let mut store = MemoryStore::in_memory()?;
    extract::import(&mut store, &episodes)?;
    let last_day = episodes.iter().filter_map(|e| e.day).max();
    let questions: Vec<Question> = std::fs::read_to_string(dir.join("questions.jsonl"))?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    println!(
        "{} episodes, {} questions\n",
        episodes.len(),
        questions.len()
    );

    // RECALL_TRY="entities=0.5,neighbours=0.6" adds a row with the fusion's weights changed,
    // for tuning on the dev half.
    let mut tried = Signals::DEFAULT;
    let try_spec = std::env::var("RECALL_TRY").unwrap_or_default();
    for part in try_spec.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or("RECALL_TRY: name=weight,…")?;
        let v: f64 = v.parse()?;
        match k {
            "bm25" => tried.bm25 = v,
            "entities" => tried.entities = v,
            "time" => tried.time = v,
            "speaker" => tried.speaker = v,
            "neighbours" => tried.neighbours = v,
            "recency" => tried.recency = v,
            other => return Err(format!("RECALL_TRY: unknown signal {other}").into()),
        }
    }
    let mut configs: Vec<(String, Signals)> = vec![("BM25 alone".into(), Signals::BM25_ONLY)];
    if !try_spec.is_empty() {
        configs.push((format!("try {try_spec}"), tried));
    }
    for name in ["entities", "time", "speaker", "recency"] {
        if let Some(s) = Signals::only(name) {
            configs.push((format!("{name} alone"), s));
        }
    }
    // Neighbours only lend scores: alone they find nothing, so they are shown on top of BM25.
    configs.push((
        "BM25 + neighbours".into(),
        Signals {
            neighbours: Signals::DEFAULT.neighbours,
            ..Signals::BM25_ONLY
        },
    ));
    configs.push(("**fusion (shipped)**".into(), Signals::DEFAULT));
    for name in ["entities", "time", "speaker", "neighbours", "recency"] {
        let mut s = Signals::DEFAULT;
        let on = |w: f64| if w == 0.0 { 0.4 } else { 0.0 };
        // Leave out a signal the fusion uses; add one it leaves out (at weight 0.4).
        let verb = match name {
            "entities" => (s.entities == 0.0, s.entities = on(s.entities)).0,
            "time" => (s.time == 0.0, s.time = on(s.time)).0,
            "speaker" => (s.speaker == 0.0, s.speaker = on(s.speaker)).0,
            "neighbours" => (s.neighbours == 0.0, s.neighbours = on(s.neighbours)).0,
            _ => (s.recency == 0.0, s.recency = on(s.recency)).0,
        };
        let verb = if verb { "with" } else { "without" };
        configs.push((format!("fusion {verb} {name}"), s));
    }

    let kinds: Vec<String> = {
        let mut k: Vec<String> = questions.iter().map(|q| q.kind.clone()).collect();
        k.sort();
        k.dedup();
        k
    };
    for half in ["dev", "test"] {
        let qs: Vec<&Question> = questions
            .iter()
            .filter(|q| (is_dev(&q.id)) == (half == "dev"))
            .collect();
        println!("### {half} half ({} questions)\n", qs.len());
        print!("| ranker | R@5 | R@10 |");
        for k in &kinds {
            print!(" {k} R@10 |");
        }
        println!();
        print!("|---|---|---|");
        for _ in &kinds {
            print!("---|");
        }
        println!();
        for (name, signals) in &configs {
            let mut at5 = 0.0;
            let mut at10 = 0.0;
            let mut per_kind: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
            for q in &qs {
                let mut query = Query::new(
                    q.question.clone(),
                    Reader::All,
                    GameTime {
                        session: q.asked_at_session,
                        turn: 0,
                        day: last_day,
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
                at5 += found(5);
                let r10 = found(10);
                at10 += r10;
                let e = per_kind.entry(q.kind.as_str()).or_default();
                e.0 += r10;
                e.1 += 1;
            }
            let n = qs.len().max(1) as f64;
            print!("| {name} | {:.3} | {:.3} |", at5 / n, at10 / n);
            for k in &kinds {
                let (sum, count) = per_kind.get(k.as_str()).copied().unwrap_or_default();
                print!(" {:.2} |", sum / count.max(1) as f64);
            }
            println!();
        }
        println!();
    }
    Ok(())
}

/// Questions split by id: odd numbers tune, even numbers test.
fn is_dev(id: &str) -> bool {
    id.trim_start_matches('q')
        .parse::<u32>()
        .map(|n| n % 2 == 1)
        .unwrap_or(true)
}
