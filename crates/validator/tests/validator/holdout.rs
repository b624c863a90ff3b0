#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The frozen holdout of issue 18: the set stays as written (before any tuning), and the
//! detector's figures on it never drop below the frozen floor.

use crate::support::holdout;

use std::collections::HashSet;

use holdout::{INTENT_CATEGORIES, Item, OUTCOME_CATEGORIES};

/// FNV-1a 64 of `data/holdout.jsonl` as committed in "validator: frozen holdout set (written
/// before any tuning)". Editing the set would silently change every figure in BENCHMARKS.md;
/// write a new set instead.
const FROZEN_HASH: u64 = 0xe7c5_649e_e545_8c8a;

// Frozen floor: the "rules v2" design's figures (design 2), measured once on this set on
// 2026-11-24 after it was developed without this set (design 1, "rules", was 120/166 and
// 3/159; BENCHMARKS.md, "Overreach detection on the frozen holdout"). A better design raises
// these constants; nothing may lower them.
/// Outcomes caught, overall: 134 of 166 (recall 0.807).
const FLOOR_OUTCOMES_CAUGHT: usize = 134;
/// Intents wrongly flagged, overall: 3 of 159 (0.019).
const CEILING_INTENTS_FLAGGED: usize = 3;
/// Outcomes caught per category (at least).
const FLOOR_CAUGHT_BY_CATEGORY: [(&str, usize); 7] = [
    ("result_as_action", 14),
    ("world_state", 19),
    ("knowledge_gained", 16),
    ("perception_result", 20),
    ("npc_reaction", 23),
    ("failure_as_fact", 21),
    ("plain_result", 21),
];
/// Intents wrongly flagged per category (at most).
const CEILING_FLAGGED_BY_CATEGORY: [(&str, usize); 7] = [
    ("plain_attempt", 0),
    ("quoted_dialogue", 0),
    ("conditional", 1),
    ("plan", 1),
    ("question", 0),
    ("hedged_attempt", 0),
    ("intent_with_outcome_words", 1),
];

fn items() -> Vec<Item> {
    holdout::load().unwrap_or_else(|e| panic!("{e}"))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn the_set_is_unchanged_since_it_was_frozen() {
    assert_eq!(
        fnv1a(holdout::HOLDOUT.as_bytes()),
        FROZEN_HASH,
        "data/holdout.jsonl changed after it was frozen; measure a new set instead"
    );
}

#[test]
fn the_set_is_large_balanced_and_covers_every_shape() {
    let items = items();
    assert!(items.len() >= 300, "only {} sentences", items.len());
    let outcomes = items.iter().filter(|i| i.label == "outcome").count();
    let intents = items.iter().filter(|i| i.label == "intent").count();
    assert_eq!(
        outcomes + intents,
        items.len(),
        "a label is neither outcome nor intent"
    );
    assert!(
        outcomes * 5 >= items.len() * 2 && intents * 5 >= items.len() * 2,
        "labels unbalanced: {outcomes} outcomes, {intents} intents"
    );
    for (label, cats) in [
        ("outcome", OUTCOME_CATEGORIES),
        ("intent", INTENT_CATEGORIES),
    ] {
        for (cat, min) in cats {
            let n = items.iter().filter(|i| i.category == cat).count();
            assert!(n >= min, "{cat}: {n} < {min}");
            assert!(
                items
                    .iter()
                    .filter(|i| i.category == cat)
                    .all(|i| i.label == label),
                "{cat} holds a sentence not labelled {label}"
            );
        }
    }
    let known: HashSet<&str> = OUTCOME_CATEGORIES
        .iter()
        .chain(INTENT_CATEGORIES.iter())
        .map(|(c, _)| *c)
        .collect();
    for i in &items {
        assert!(
            known.contains(i.category.as_str()),
            "unknown category {:?}",
            i.category
        );
        assert!(
            ["space", "fantasy", "modern"].contains(&i.genre.as_str()),
            "{:?}",
            i.genre
        );
        assert!(
            ["first", "third"].contains(&i.voice.as_str()),
            "{:?}",
            i.voice
        );
        assert!(
            ["short", "long"].contains(&i.length.as_str()),
            "{:?}",
            i.length
        );
    }
}

#[test]
fn no_sentence_appears_twice() {
    let items = items();
    let mut seen = HashSet::new();
    for i in &items {
        let key = i.text.trim().to_lowercase();
        assert!(seen.insert(key), "duplicate: {}", i.text);
    }
}

#[test]
fn every_genre_voice_and_length_is_represented_for_both_labels() {
    let items = items();
    for label in ["outcome", "intent"] {
        for (field, value) in [
            ("genre", "space"),
            ("genre", "fantasy"),
            ("genre", "modern"),
            ("voice", "first"),
            ("voice", "third"),
            ("length", "short"),
            ("length", "long"),
        ] {
            let n = items
                .iter()
                .filter(|i| i.label == label)
                .filter(|i| match field {
                    "genre" => i.genre == value,
                    "voice" => i.voice == value,
                    _ => i.length == value,
                })
                .count();
            assert!(n >= 15, "{label} {field}={value}: only {n}");
        }
    }
}

#[test]
fn the_detector_does_not_drop_below_the_frozen_floor() {
    let report = holdout::evaluate(&items(), holdout::rules);
    let table = holdout::table("current", &report, true);
    println!("{table}");
    assert!(
        report.outcomes.flagged >= FLOOR_OUTCOMES_CAUGHT,
        "recall dropped: {} < {FLOOR_OUTCOMES_CAUGHT} outcomes caught\n{table}",
        report.outcomes.flagged
    );
    assert!(
        report.intents.flagged <= CEILING_INTENTS_FLAGGED,
        "false positives rose: {} > {CEILING_INTENTS_FLAGGED} intents flagged\n{table}",
        report.intents.flagged
    );
    for (cat, floor) in FLOOR_CAUGHT_BY_CATEGORY {
        let caught = report.by_category.get(cat).map_or(0, |t| t.flagged);
        assert!(caught >= floor, "{cat}: {caught} caught < {floor}\n{table}");
    }
    for (cat, ceiling) in CEILING_FLAGGED_BY_CATEGORY {
        let flagged = report.by_category.get(cat).map_or(0, |t| t.flagged);
        assert!(
            flagged <= ceiling,
            "{cat}: {flagged} flagged > {ceiling}\n{table}"
        );
    }
}
