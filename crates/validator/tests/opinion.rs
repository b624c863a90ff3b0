#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The learned second opinion's seam, with a stand-in classifier: it flags what the rules pass
//! when it is sure enough, overrules the rules only when it is all but certain, decides with
//! `hybrid` and its probability, points at the sentence that reads as a result, auto-correct
//! removes or rewrites what it flags, and a failing classifier leaves the rules' verdict. (The
//! real classifier: `tests/validator/learned.rs`.)
//!
//! Its own test binary, not a module of `tests/validator/`: it registers the stand-in as this
//! process's second opinion (loaded once per process), and `learned.rs` there registers the real one.

use troupe_validator::opinion::{self, SecondOpinion, Status};
use troupe_validator::{Method, ViolationKind, auto_correct, check};

/// Reads "ventilate"/"vents" as a result unless the text says "try to", anything with "win" as
/// certainly intent, "kill" as doubtful; fails on "ERR".
struct StandIn;

impl SecondOpinion for StandIn {
    fn outcome_probabilities(&self, texts: &[&str]) -> Result<Vec<f64>, String> {
        if texts.iter().any(|t| t.contains("ERR")) {
            return Err("stand-in failure".into());
        }
        Ok(texts
            .iter()
            .map(|t| {
                let result =
                    (t.contains("ventilate") || t.contains("vents")) && !t.contains("try to");
                if result {
                    0.9
                } else if t.contains("win") {
                    0.001
                } else if t.contains("kill") {
                    0.05
                } else {
                    0.2
                }
            })
            .collect())
    }
}

fn stand_in() -> Result<Box<dyn SecondOpinion>, String> {
    Ok(Box::new(StandIn))
}

fn registered() {
    opinion::use_second_opinion(stand_in);
}

#[test]
fn the_rules_flag_unless_overruled_and_the_classifier_judges_the_rest() {
    registered();
    let ruled = check("I kill the goblin.");
    assert!(
        ruled.flagged,
        "a doubtful classifier does not overrule the rules"
    );
    assert_eq!(ruled.method, Method::Hybrid);
    assert_eq!(ruled.confidence, 0.05);
    assert_ne!(ruled.violations[0].kind, ViolationKind::JudgedOutcome);
    assert!(troupe_validator::check_rules("If I win, the ship is mine.").flagged);
    let overruled = check("If I win, the ship is mine.");
    assert!(!overruled.flagged, "a near-certain classifier overrules");
    assert_eq!(overruled.method, Method::Hybrid);
    assert!((overruled.confidence - 0.999).abs() < 1e-9);

    let judged = check("I ventilate the droid with my repeater.");
    assert!(judged.flagged);
    assert_eq!(judged.method, Method::Hybrid);
    assert_eq!(judged.confidence, 0.9);
    assert_eq!(judged.violations[0].kind, ViolationKind::JudgedOutcome);
    assert_eq!(
        judged.violations[0].excerpt,
        "I ventilate the droid with my repeater."
    );

    let passed = check("I aim at the droid's optics.");
    assert!(!passed.flagged);
    assert_eq!(passed.method, Method::Hybrid);
    assert!((passed.confidence - 0.8).abs() < 1e-9);
    assert_eq!(opinion::status(), Status::Ready);
}

#[test]
fn the_excerpt_is_the_sentence_that_reads_as_a_result_and_auto_correct_drops_it() {
    registered();
    let text = "I duck behind the crates. Then I ventilate the droid — twice!";
    let v = check(text);
    assert!(v.flagged);
    assert_eq!(
        v.violations[0].excerpt,
        "Then I ventilate the droid — twice!"
    );
    let fix = auto_correct(text);
    assert_eq!(fix.text, "I duck behind the crates.");
    assert_eq!(
        fix.removed,
        vec!["Then I ventilate the droid — twice!".to_string()]
    );
    assert!(fix.reads_as_action);
    assert!(!check(&fix.text).flagged);
}

#[test]
fn a_lone_result_becomes_an_attempt() {
    registered();
    let fix = auto_correct("I ventilate the droid.");
    assert_eq!(fix.text, "I try to ventilate the droid.");
    assert!(fix.reads_as_action);
    assert!(!check(&fix.text).flagged);
}

#[test]
fn a_failing_classifier_leaves_the_rules_verdict() {
    registered();
    let v = check("I ventilate the droid. ERR");
    assert!(!v.flagged);
    assert_eq!(v.method, Method::Pattern);
}
