//! Recall on real long conversations (LoCoMo), signal by signal, against plain BM25, in one run.
//!
//!     cargo run --release -p troupe-memory --example locomo [-- DIR]
//!     cargo run --release -p troupe-memory --features embeddings --example locomo  # + MiniLM
//!
//! DIR (or `LOCOMO_DIR`; default `../shared/data/locomo-dev` beside the repository) holds
//! conversations of the LoCoMo benchmark (snap-research/locomo, `locomo10`), one JSON file each.
//! That data is research data: it is read from where it lies and never copied into the project.
//!
//! Each turn becomes one episode (id = its `dia_id`, session = its session's number, no turn
//! numbers or in-game days, a shared photo's caption appended as
//! `[shares a photo: …]`), imported as `troupe memory import` does; every question of
//! categories 1–4 is asked as `troupe memory query` asks it (every reader, "now" the session
//! after the last, top 10). Evidence recall@10 = the share of a question's evidence turns among
//! the episodes of its top 10 facts. The baseline is the plain BM25 of the data set's own
//! scorer (`score.py`: lowercase `[a-z0-9]+` words less a short stop list, speaker name
//! prepended, k1 1.2, b 0.75), computed here in the same run.
//!
//! The conversations are split: `TUNED` are the ones the ranker was tuned on; the others were
//! only measured. `LOCOMO_TRY="neighbours=0.5,speaker=2;recency=0"` adds a row for each
//! `;`-separated change of the shipped weights; `LOCOMO_ABLATION=0` leaves out the rows of each
//! signal alone and without; `LOCOMO_SPLIT=tuned` prints that split only;
//! `LOCOMO_MISSES=tuned` lists the questions the shipped ranker misses there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use troupe_memory::{Episode, GameTime, MemoryStore, Query, Reader, Scope, Signals, extract};

/// The conversations the ranker's weights were chosen on (file stems). The rest are held out.
const TUNED: &[&str] = &["26", "41"];
const K: usize = 10;

struct Question {
    text: String,
    evidence: Vec<String>,
    category: u64,
}

struct Conversation {
    name: String,
    turns: Vec<Episode>,
    questions: Vec<Question>,
}

fn data_dir() -> PathBuf {
    if let Some(arg) = std::env::args().nth(1) {
        return PathBuf::from(arg);
    }
    if let Some(dir) = std::env::var_os("LOCOMO_DIR") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/locomo-dev")
}

fn read_conversation(path: &Path) -> Result<Conversation, Box<dyn std::error::Error>> {
    let d: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let conv = d.get("conversation").unwrap_or(&d);
    let mut turns = Vec::new();
    for n in 1.. {
        let Some(session) = conv.get(format!("session_{n}")).and_then(Value::as_array) else {
            break;
        };
        let date = conv[format!("session_{n}_date_time")]
            .as_str()
            .unwrap_or_default();
        for t in session {
            let mut text = t["text"].as_str().unwrap_or_default().to_string();
            if let Some(c) = t.get("blip_caption").and_then(Value::as_str) {
                text.push_str(&format!(" [shares a photo: {c}]"));
            }
            turns.push(Episode {
                id: t["dia_id"].as_str().unwrap_or_default().to_string(),
                session: n,
                turn: 0,
                day: None,
                timestamp: date.to_string(),
                speaker: t["speaker"].as_str().unwrap_or_default().to_string(),
                text,
                scope: Scope::Party,
            });
        }
    }
    let questions = d["qa"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|q| matches!(q["category"].as_u64(), Some(1..=4)))
        .filter_map(|q| {
            let evidence: Vec<String> = q["evidence"]
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .flat_map(|e| e.split([';', ',']))
                .map(|e| e.trim().to_string())
                .filter(|e| !e.is_empty())
                .collect();
            (!evidence.is_empty()).then(|| Question {
                text: q["question"]
                    .as_str()
                    .unwrap_or_default()
                    .replace('\n', " "),
                evidence,
                category: q["category"].as_u64().unwrap_or(0),
            })
        })
        .collect();
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Conversation {
        name,
        turns,
        questions,
    })
}

/// The data set scorer's BM25 (score.py), over the same turns.
struct Bm25 {
    docs: Vec<HashMap<String, f64>>,
    lens: Vec<f64>,
    df: HashMap<String, f64>,
    avg: f64,
}

const STOP: &str = "a an the of to in on at for and or but is are was were be been it this that with as by from i you he she they we my your his her their our me him them what when where who why how did do does";

fn toks(s: &str) -> Vec<String> {
    let stop: HashSet<&str> = STOP.split(' ').collect();
    s.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|w| !w.is_empty() && !stop.contains(w))
        .map(str::to_string)
        .collect()
}

impl Bm25 {
    fn new(turns: &[Episode]) -> Bm25 {
        let mut docs = Vec::new();
        let mut lens = Vec::new();
        let mut df: HashMap<String, f64> = HashMap::new();
        for t in turns {
            let ws = toks(&format!("{} {}", t.speaker, t.text));
            let mut tf: HashMap<String, f64> = HashMap::new();
            for w in &ws {
                *tf.entry(w.clone()).or_default() += 1.0;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1.0;
            }
            lens.push(ws.len() as f64);
            docs.push(tf);
        }
        let avg = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        Bm25 {
            docs,
            lens,
            df,
            avg,
        }
    }

    fn rank(&self, q: &str, k: usize) -> Vec<usize> {
        let n = self.docs.len() as f64;
        let qs = toks(q);
        let mut scores: Vec<(f64, usize)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, tf)| {
                let s = qs
                    .iter()
                    .filter_map(|w| {
                        let f = *tf.get(w)?;
                        let df = self.df[w];
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        Some(idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lens[i] / self.avg)))
                    })
                    .sum::<f64>();
                (s, i)
            })
            .collect();
        // Python's sort is stable: ties keep turn order.
        scores.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scores.into_iter().take(k).map(|s| s.1).collect()
    }
}

fn recall(found: &[&str], evidence: &[String]) -> f64 {
    let ev: HashSet<&str> = evidence.iter().map(String::as_str).collect();
    let hit = ev.iter().filter(|e| found.contains(e)).count();
    hit as f64 / ev.len().max(1) as f64
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

fn configs(try_spec: &str) -> Result<Vec<(String, Signals)>, Box<dyn std::error::Error>> {
    let mut out = vec![("BM25 alone".to_string(), Signals::BM25_ONLY)];
    // The signals whose rows (alone, and the fusion without each) are printed.
    let ablated = match std::env::var("LOCOMO_ABLATION").as_deref() {
        Ok("0") => Vec::new(),
        _ => signal_names(),
    };
    for &name in ablated.iter().skip(1) {
        if let Some(s) = Signals::only(name) {
            out.push((format!("{name} alone"), s));
        }
    }
    out.push(("**fusion (DEFAULT)**".into(), Signals::DEFAULT));
    for &name in &ablated {
        let mut s = Signals::DEFAULT;
        let Some(w) = weight(&mut s, name) else {
            continue;
        };
        if *w > 0.0 {
            *w = 0.0;
            out.push((format!("fusion without {name}"), s));
        } else {
            *w = 0.5;
            out.push((format!("fusion with {name} (0.5)"), s));
        }
    }
    for spec in try_spec.split(';').filter(|p| !p.is_empty()) {
        let mut tried = Signals::DEFAULT;
        for part in spec.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or("LOCOMO_TRY: name=weight,…;…")?;
            *weight(&mut tried, k).ok_or(format!("LOCOMO_TRY: unknown signal {k}"))? = v.parse()?;
        }
        out.push((format!("try {spec}"), tried));
    }
    Ok(out)
}

/// One conversation, imported and ready to be asked.
struct Loaded {
    conv: Conversation,
    store: MemoryStore,
    bm25: Bm25,
    now: GameTime,
}

/// Recall sums for one ranker over one split: overall and per category.
#[derive(Default)]
struct Tally {
    sum: f64,
    n: usize,
    by_cat: BTreeMap<u64, (f64, usize)>,
    seconds: f64,
}

impl Tally {
    fn add(&mut self, cat: u64, r: f64) {
        self.sum += r;
        self.n += 1;
        let c = self.by_cat.entry(cat).or_default();
        c.0 += r;
        c.1 += 1;
    }
    fn mean(&self) -> f64 {
        self.sum / self.n.max(1) as f64
    }
}

fn ask(l: &Loaded, q: &Question, signals: Signals) -> Result<f64, troupe_memory::Error> {
    let mut query = Query::new(q.text.clone(), Reader::All, l.now);
    query.top_k = K;
    query.signals = signals;
    let hits = l.store.search(&query)?;
    let found: Vec<&str> = hits
        .iter()
        .flat_map(|h| h.fact.episode_ids.iter().map(String::as_str))
        .collect();
    Ok(recall(&found, &q.evidence))
}

fn baseline(l: &Loaded, q: &Question) -> f64 {
    let found: Vec<&str> = l
        .bm25
        .rank(&q.text, K)
        .into_iter()
        .map(|i| l.conv.turns[i].id.as_str())
        .collect();
    recall(&found, &q.evidence)
}

fn print_misses(l: &Loaded, q: &Question) -> Result<(), troupe_memory::Error> {
    let mut query = Query::new(q.text.clone(), Reader::All, l.now);
    query.top_k = K;
    let hits = l.store.search(&query)?;
    let found: Vec<&str> = hits
        .iter()
        .flat_map(|h| h.fact.episode_ids.iter().map(String::as_str))
        .collect();
    let r = recall(&found, &q.evidence);
    if r >= 1.0 {
        return Ok(());
    }
    eprintln!(
        "MISS {} [cat {}] {} (R@10 {r:.2})",
        l.conv.name, q.category, q.text
    );
    for e in &q.evidence {
        let mark = if found.contains(&e.as_str()) {
            "+"
        } else {
            "-"
        };
        let text = l.conv.turns.iter().find(|t| &t.id == e);
        eprintln!(
            "  {mark} {e} {}",
            text.map_or(String::new(), |t| format!("{}: {}", t.speaker, t.text))
        );
    }
    for h in hits.iter().take(3) {
        eprintln!(
            "    {:.3} {:?} {}",
            h.score, h.fact.episode_ids, h.fact.text
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = data_dir();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(e) => {
            eprintln!(
                "no LoCoMo conversations at {} ({e}): pass the folder as the first argument or in LOCOMO_DIR",
                dir.display()
            );
            std::process::exit(2);
        }
    };
    files.sort();
    if files.is_empty() {
        eprintln!("no LoCoMo conversations (*.json) in {}", dir.display());
        std::process::exit(2);
    }
    #[cfg(feature = "embeddings")]
    let embedder = std::sync::Arc::new(troupe_embed::Embedder::load(None)?);
    let mut loaded = Vec::new();
    let t = Instant::now();
    for f in &files {
        let conv = read_conversation(f)?;
        let mut store = MemoryStore::in_memory()?;
        extract::import(&mut store, &conv.turns)?;
        #[cfg(feature = "embeddings")]
        store.attach_embedder(embedder.clone())?;
        let last = conv.turns.iter().map(|t| t.session).max().unwrap_or(0);
        let bm25 = Bm25::new(&conv.turns);
        loaded.push(Loaded {
            conv,
            store,
            bm25,
            now: GameTime {
                session: last + 1,
                turn: 0,
                day: None,
            },
        });
    }
    println!(
        "{} conversations, {} turns, {} questions (categories 1–4); import{} {:.1} s",
        loaded.len(),
        loaded.iter().map(|l| l.conv.turns.len()).sum::<usize>(),
        loaded.iter().map(|l| l.conv.questions.len()).sum::<usize>(),
        if troupe_memory::EMBEDDINGS_BUILT {
            " and MiniLM vectors"
        } else {
            ""
        },
        t.elapsed().as_secs_f64()
    );
    let try_spec = std::env::var("LOCOMO_TRY").unwrap_or_default();
    let configs = configs(&try_spec)?;
    let only = std::env::var("LOCOMO_SPLIT").unwrap_or_default();
    let misses = std::env::var("LOCOMO_MISSES").unwrap_or_default();
    for split in ["tuned", "held-out"] {
        if !only.is_empty() && only != split {
            continue;
        }
        let part: Vec<&Loaded> = loaded
            .iter()
            .filter(|l| TUNED.contains(&l.conv.name.as_str()) == (split == "tuned"))
            .collect();
        if part.is_empty() {
            continue;
        }
        report_split(split, &part, &configs, misses == split)?;
    }
    let d = Signals::DEFAULT;
    println!(
        "DEFAULT weights: bm25 {}, entities {}, time {}, speaker {}, neighbours {}, recency {}, proximity {}, session {}, embeddings {}",
        d.bm25,
        d.entities,
        d.time,
        d.speaker,
        d.neighbours,
        d.recency,
        d.proximity,
        d.session,
        d.embeddings
    );
    Ok(())
}

fn report_split(
    split: &str,
    part: &[&Loaded],
    configs: &[(String, Signals)],
    misses: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let names: Vec<&str> = part.iter().map(|l| l.conv.name.as_str()).collect();
    let mut base = Tally::default();
    for l in part {
        for q in &l.conv.questions {
            base.add(q.category, baseline(l, q));
        }
    }
    println!(
        "\n### {split}: conversations {} ({} questions)\n",
        names.join(", "),
        base.n
    );
    println!(
        "| ranker | R@10 | × BM25 | cat 1 multi-hop | cat 2 temporal | cat 3 open | cat 4 single-hop | ms/question |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    print_row("BM25 of score.py (baseline)", &base, base.mean());
    for (name, signals) in configs {
        let mut tally = Tally::default();
        let t = Instant::now();
        for l in part {
            for q in &l.conv.questions {
                tally.add(q.category, ask(l, q, *signals)?);
            }
        }
        tally.seconds = t.elapsed().as_secs_f64();
        print_row(name, &tally, base.mean());
    }
    if misses {
        for l in part {
            for q in &l.conv.questions {
                print_misses(l, q)?;
            }
        }
    }
    Ok(())
}

fn print_row(name: &str, t: &Tally, base: f64) {
    print!(
        "| {name} | {:.3} | {:.2} |",
        t.mean(),
        t.mean() / base.max(1e-9)
    );
    for cat in 1..=4 {
        match t.by_cat.get(&cat) {
            Some((s, n)) => print!(" {:.3} ({n}) |", s / (*n).max(1) as f64),
            None => print!(" – |"),
        }
    }
    if t.seconds > 0.0 {
        println!(" {:.2} |", t.seconds * 1e3 / t.n.max(1) as f64);
    } else {
        println!(" – |");
    }
}
