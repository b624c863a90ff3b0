#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Measures the validator against the labelled corpus in `data/corpus.jsonl`.
//! Shared by `tests/validator/corpus.rs` and `examples/measure.rs`.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Entry {
    pub text: String,
    pub label: String,
    #[allow(dead_code)]
    pub note: String,
    #[serde(default = "dev")]
    pub split: String,
}

fn dev() -> String {
    "dev".to_string()
}

pub const CORPUS: &str = include_str!("../../../data/corpus.jsonl");

/// 40 sentences written after tuning and never tuned on: a generalisation probe, reported but
/// not asserted (see `all_splits`).
pub const FRESH: &str = include_str!("../../../data/fresh_probe.jsonl");

pub fn load() -> Result<Vec<Entry>, String> {
    parse(CORPUS)
}

pub fn load_fresh() -> Result<Vec<Entry>, String> {
    parse(FRESH)
}

fn parse(text: &str) -> Result<Vec<Entry>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("corpus line {}: {e}", i + 1)))
        .collect()
}

#[derive(Debug, Default)]
pub struct Split {
    pub name: String,
    pub outcomes: usize,
    pub caught: usize,
    pub intents: usize,
    pub false_positives: usize,
    pub misses: Vec<String>,
    pub wrongly_flagged: Vec<String>,
}

impl Split {
    pub fn recall(&self) -> f64 {
        if self.outcomes == 0 {
            1.0
        } else {
            self.caught as f64 / self.outcomes as f64
        }
    }
    pub fn fp_rate(&self) -> f64 {
        if self.intents == 0 {
            0.0
        } else {
            self.false_positives as f64 / self.intents as f64
        }
    }
}

pub fn measure(entries: &[Entry], name: &str, keep: impl Fn(&Entry) -> bool) -> Split {
    let mut s = Split {
        name: name.to_string(),
        ..Split::default()
    };
    for e in entries.iter().filter(|e| keep(e)) {
        // The rules alone, whatever second opinion another test of this process registered.
        let v = troupe_validator::check_rules(&e.text);
        if e.label == "outcome" {
            s.outcomes += 1;
            if v.flagged {
                s.caught += 1;
            } else {
                s.misses.push(e.text.clone());
            }
        } else {
            s.intents += 1;
            if v.flagged {
                s.false_positives += 1;
                let ex: Vec<String> = v
                    .violations
                    .iter()
                    .map(|x| format!("{:?}", x.excerpt))
                    .collect();
                s.wrongly_flagged
                    .push(format!("{}  <- {}", e.text, ex.join(", ")));
            }
        }
    }
    s
}

pub fn all_splits(entries: &[Entry]) -> Vec<Split> {
    vec![
        measure(entries, "dev", |e| e.split == "dev"),
        measure(entries, "holdout", |e| e.split == "holdout"),
        measure(entries, "all", |_| true),
    ]
}

pub fn table(splits: &[Split], show_misses: bool) -> String {
    let mut out = String::from(
        "| split | n | outcomes | recall | intents | FP rate |\n|---|---|---|---|---|---|\n",
    );
    for s in splits {
        out.push_str(&format!(
            "| {} | {} | {} | {:.3} ({}/{}) | {} | {:.3} ({}/{}) |\n",
            s.name,
            s.outcomes + s.intents,
            s.outcomes,
            s.recall(),
            s.caught,
            s.outcomes,
            s.intents,
            s.fp_rate(),
            s.false_positives,
            s.intents
        ));
    }
    if show_misses {
        for s in splits.iter().filter(|s| s.name != "all") {
            out.push_str(&format!(
                "\n{}: missed outcomes ({})\n",
                s.name,
                s.misses.len()
            ));
            for m in &s.misses {
                out.push_str(&format!("  - {m}\n"));
            }
            out.push_str(&format!(
                "{}: flagged intents ({})\n",
                s.name,
                s.wrongly_flagged.len()
            ));
            for m in &s.wrongly_flagged {
                out.push_str(&format!("  - {m}\n"));
            }
        }
    }
    out
}
