#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Shared by `tests/validator/{holdout,learned}.rs` and `examples/measure.rs`; each uses a
// different part.
#![allow(dead_code)]
//! The frozen holdout of issue 18 (`data/holdout.jsonl`): 325 sentences written before any
//! tuning on them, labelled by shape (category), genre, voice and length. Measured once per
//! design; never tune on it.

use std::collections::BTreeMap;

use serde::Deserialize;

pub const HOLDOUT: &str = include_str!("../../../data/holdout.jsonl");

/// Outcome shapes and the minimum number of sentences each must have.
pub const OUTCOME_CATEGORIES: [(&str, usize); 7] = [
    ("result_as_action", 20),
    ("world_state", 20),
    ("knowledge_gained", 20),
    ("perception_result", 20),
    ("npc_reaction", 20),
    ("failure_as_fact", 20),
    ("plain_result", 20),
];

/// Intent shapes and the minimum number of sentences each must have.
pub const INTENT_CATEGORIES: [(&str, usize); 7] = [
    ("plain_attempt", 15),
    ("quoted_dialogue", 15),
    ("conditional", 15),
    ("plan", 15),
    ("question", 15),
    ("hedged_attempt", 15),
    ("intent_with_outcome_words", 15),
];

#[derive(Debug, Deserialize)]
pub struct Item {
    pub text: String,
    pub label: String,
    pub category: String,
    pub genre: String,
    pub voice: String,
    pub length: String,
}

pub fn load() -> Result<Vec<Item>, String> {
    HOLDOUT
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("holdout line {}: {e}", i + 1)))
        .collect()
}

/// How many sentences of one group the detector flagged. For outcomes that is recall (higher
/// is better); for intents it is the false-positive rate (lower is better).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub total: usize,
    pub flagged: usize,
}

impl Tally {
    pub fn rate(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.flagged as f64 / self.total as f64
        }
    }

    fn add(&mut self, flagged: bool) {
        self.total += 1;
        self.flagged += usize::from(flagged);
    }
}

/// Every figure of one design on the holdout.
#[derive(Debug, Default)]
pub struct Report {
    pub outcomes: Tally,
    pub intents: Tally,
    /// Keyed by category; the label is implied by the category.
    pub by_category: BTreeMap<String, Tally>,
    /// Keyed by (label, "genre=space" / "voice=third" / "length=long").
    pub by_facet: BTreeMap<(String, String), Tally>,
    pub misses: Vec<(String, String)>,
    pub false_flags: Vec<(String, String)>,
}

/// Runs `detect` (true = flagged as overreach) over every item.
pub fn evaluate(items: &[Item], detect: impl Fn(&str) -> bool) -> Report {
    let mut r = Report::default();
    for it in items {
        let flagged = detect(&it.text);
        let outcome = it.label == "outcome";
        if outcome {
            &mut r.outcomes
        } else {
            &mut r.intents
        }
        .add(flagged);
        r.by_category
            .entry(it.category.clone())
            .or_default()
            .add(flagged);
        for facet in [
            format!("genre={}", it.genre),
            format!("voice={}", it.voice),
            format!("length={}", it.length),
        ] {
            r.by_facet
                .entry((it.label.clone(), facet))
                .or_default()
                .add(flagged);
        }
        match (outcome, flagged) {
            (true, false) => r.misses.push((it.category.clone(), it.text.clone())),
            (false, true) => r.false_flags.push((it.category.clone(), it.text.clone())),
            _ => {}
        }
    }
    r
}

/// The rules alone (design 2). `check_rules`, not `check`: the tests share one process, where
/// `learned.rs` registers the real classifier as the process's second opinion.
pub fn rules(text: &str) -> bool {
    troupe_validator::check_rules(text).flagged
}

/// What `check` decides: the rules and, when one is registered, the second opinion (design 3).
pub fn hybrid(text: &str) -> bool {
    troupe_validator::check(text).flagged
}

fn cell(t: Tally) -> String {
    format!("{:.3} ({}/{})", t.rate(), t.flagged, t.total)
}

/// Markdown tables (overall, per category, per facet) and, when asked, every error.
pub fn table(design: &str, r: &Report, show_errors: bool) -> String {
    let mut out = format!(
        "| design | n | recall (outcomes) | false positives (intents) |\n|---|---|---|---|\n\
         | {design} | {} | {} | {} |\n",
        r.outcomes.total + r.intents.total,
        cell(r.outcomes),
        cell(r.intents)
    );
    out.push_str("\n| category | label | flagged | meaning |\n|---|---|---|---|\n");
    let groups = [
        ("outcome", &OUTCOME_CATEGORIES, "recall"),
        ("intent", &INTENT_CATEGORIES, "false positives"),
    ];
    for (label, cats, meaning) in groups {
        for (cat, _) in cats.iter() {
            let t = r.by_category.get(*cat).copied().unwrap_or_default();
            out.push_str(&format!("| {cat} | {label} | {} | {meaning} |\n", cell(t)));
        }
    }
    out.push_str("\n| facet | recall (outcomes) | false positives (intents) |\n|---|---|---|\n");
    let facets: std::collections::BTreeSet<&String> = r.by_facet.keys().map(|(_, f)| f).collect();
    for f in facets {
        let get = |label: &str| {
            r.by_facet
                .get(&(label.to_string(), f.clone()))
                .copied()
                .unwrap_or_default()
        };
        out.push_str(&format!(
            "| {f} | {} | {} |\n",
            cell(get("outcome")),
            cell(get("intent"))
        ));
    }
    if show_errors {
        out.push_str(&format!("\nmissed outcomes ({})\n", r.misses.len()));
        for (c, t) in &r.misses {
            out.push_str(&format!("  - [{c}] {t}\n"));
        }
        out.push_str(&format!("flagged intents ({})\n", r.false_flags.len()));
        for (c, t) in &r.false_flags {
            out.push_str(&format!("  - [{c}] {t}\n"));
        }
    }
    out
}
