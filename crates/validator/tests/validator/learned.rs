#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "model")]
//! The learned detector with the real model (feature `model`): troupe's forward pass gives the
//! trainer's probabilities (computed by the trainer's own PyTorch model, from the shipped
//! adapter), and the hybrid design stays above its frozen floor on the holdout of issue 18. The base model is found as troupe-embed finds it;
//! missing, these tests fail in CI (CI=true) and skip loudly elsewhere.

use crate::support::holdout;

use std::sync::OnceLock;

use troupe_test_support::in_ci;
use troupe_validator::learned::Detector;
use troupe_validator::opinion::{self, SecondOpinion, Status};

/// The trainer's probabilities for a few actions (scripts/train-detector --reference).
const REFERENCE: &str = include_str!("../fixtures/detector_reference.json");

// Frozen floor of the issue 47 design (rules v2 with issue 47's changes, the classifier retrained
// with `train_shapes.jsonl` and calibrated, the rules' flag weighed with its probability, and the
// classifier alone flagging at a hybrid probability of 0.7), measured once on the holdout on
// 2026-11-28 (BENCHMARKS.md, issue 47). The first issue 47 design caught 147 with 3 flagged;
// design 3 caught 161 with 6 flagged, sending plain intents of real play back with near-certainty.
// A better design raises these.
/// Outcomes caught, overall: 155 of 166 (recall 0.934).
const FLOOR_OUTCOMES_CAUGHT: usize = 155;
/// Intents wrongly flagged, overall: 2 of 159 (0.013).
const CEILING_INTENTS_FLAGGED: usize = 2;
/// Outcomes caught per category (at least).
const FLOOR_CAUGHT_BY_CATEGORY: [(&str, usize); 7] = [
    ("result_as_action", 19),
    ("world_state", 22),
    ("knowledge_gained", 23),
    ("perception_result", 23),
    ("npc_reaction", 23),
    ("failure_as_fact", 22),
    ("plain_result", 23),
];
/// Intents wrongly flagged per category (at most).
const CEILING_FLAGGED_BY_CATEGORY: [(&str, usize); 7] = [
    ("plain_attempt", 0),
    ("quoted_dialogue", 0),
    ("conditional", 0),
    ("plan", 1),
    ("question", 0),
    ("hedged_attempt", 0),
    ("intent_with_outcome_words", 1),
];

fn detector() -> Option<&'static Detector> {
    static D: OnceLock<Result<Detector, String>> = OnceLock::new();
    match D.get_or_init(Detector::load) {
        Ok(d) => Some(d),
        Err(e) if in_ci() => panic!("the learned detector could not load: {e}"),
        Err(e) => {
            eprintln!(
                "\n{0}\nSKIPPED (not in CI): the learned detector could not load: {e}\n{0}\n",
                "!".repeat(78)
            );
            None
        }
    }
}

#[test]
fn troupe_computes_what_the_trainer_computed() {
    let Some(d) = detector() else { return };
    let reference: Vec<serde_json::Value> = serde_json::from_str(REFERENCE).unwrap();
    let texts: Vec<&str> = reference
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    let got = d.outcome_probabilities(&texts).unwrap();
    for (r, p) in reference.iter().zip(got) {
        let want = r["outcome_probability"].as_f64().unwrap();
        assert!(
            (p - want).abs() < 0.01,
            "{}: troupe {p:.4}, trainer {want:.4}",
            r["text"]
        );
    }
}

#[test]
fn the_hybrid_design_stays_above_its_frozen_floor() {
    if detector().is_none() {
        return;
    }
    fn load() -> Result<Box<dyn SecondOpinion>, String> {
        Detector::boxed()
    }
    opinion::use_second_opinion(load);
    assert_eq!(opinion::load_now(), Status::Ready);
    let report = holdout::evaluate(&holdout::load().unwrap(), holdout::hybrid);
    let table = holdout::table("issue 47: hybrid", &report, true);
    println!("{table}");
    assert!(
        report.outcomes.flagged >= FLOOR_OUTCOMES_CAUGHT,
        "recall dropped\n{table}"
    );
    assert!(
        report.intents.flagged <= CEILING_INTENTS_FLAGGED,
        "false positives rose\n{table}"
    );
    let count = |cat: &str| report.by_category.get(cat).map_or(0, |t| t.flagged);
    for (cat, floor) in FLOOR_CAUGHT_BY_CATEGORY {
        assert!(count(cat) >= floor, "{cat}: recall dropped\n{table}");
    }
    for (cat, ceiling) in CEILING_FLAGGED_BY_CATEGORY {
        assert!(
            count(cat) <= ceiling,
            "{cat}: false positives rose\n{table}"
        );
    }
}
