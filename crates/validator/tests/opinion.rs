#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The learned second opinion's seam, with a stand-in classifier: the rules' flag and its
//! probability are weighed into one (`hybrid_probability`); a rules flag stands unless the
//! classifier makes a result unlikely, the classifier alone sends an action back only when sure
//! (an unsure verdict passes, its confidence saying so), each violation says which judge found
//! it and how sure, the excerpt is the clause that reads as a result, auto-correct removes or
//! rewrites what it flags, and a failing classifier leaves the rules' verdict. (The real
//! classifier: `tests/validator/learned.rs`.)
//!
//! Its own test binary, not a module of `tests/validator/`: it registers the stand-in as this
//! process's second opinion (loaded once per process), and `learned.rs` there registers the real one.

use troupe_validator::opinion::{self, SecondOpinion, Status};
use troupe_validator::{
    JUDGED_THRESHOLD, Method, ViolationKind, auto_correct, check, feedback, hybrid_probability,
};

/// Reads "ventilate"/"vents" as a result unless the text says "try to", "win" as certainly
/// intent, "kill" as likely a result, "checks" as an unsure result; fails on "ERR".
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
                    0.999
                } else if t.contains("win") {
                    0.001
                } else if t.contains("kill") {
                    0.6
                } else if t.contains("checks") {
                    0.8
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
        "a classifier that leans the same way backs the rules"
    );
    assert_eq!(ruled.method, Method::Hybrid);
    assert_eq!(ruled.confidence, hybrid_probability(0.6, true));
    assert!(
        ruled.confidence > 0.6,
        "two judges agreeing are surer than one"
    );
    assert_ne!(ruled.violations[0].kind, ViolationKind::JudgedOutcome);
    assert!(
        ruled.violations[0].reason.contains("Found by the rules"),
        "{}",
        ruled.violations[0].reason
    );
    assert!(troupe_validator::check_rules("I win, the ship is mine.").flagged);
    let overruled = check("I win, the ship is mine.");
    assert!(!overruled.flagged, "a near-certain classifier overrules");
    assert_eq!(overruled.method, Method::Hybrid);
    assert!((overruled.confidence - (1.0 - hybrid_probability(0.001, true))).abs() < 1e-12);

    let judged = check("I ventilate the droid with my repeater.");
    assert!(judged.flagged);
    assert_eq!(judged.method, Method::Hybrid);
    assert_eq!(judged.confidence, hybrid_probability(0.999, false));
    assert_eq!(judged.violations[0].kind, ViolationKind::JudgedOutcome);
    assert_eq!(
        judged.violations[0].excerpt,
        "I ventilate the droid with my repeater."
    );
    let reason = &judged.violations[0].reason;
    assert!(
        reason.contains("Found by the classifier alone") && reason.contains("% sure"),
        "{reason}"
    );

    let passed = check("I aim at the droid's optics.");
    assert!(!passed.flagged);
    assert_eq!(passed.method, Method::Hybrid);
    assert!((passed.confidence - (1.0 - hybrid_probability(0.2, false))).abs() < 1e-12);
    assert_eq!(opinion::status(), Status::Ready);
}

#[test]
fn an_unsure_classifier_alone_does_not_send_an_action_back() {
    registered();
    let q = hybrid_probability(0.8, false);
    assert!(q < JUDGED_THRESHOLD, "the stand-in's 0.8 is unsure here");
    let v = check("I run the checks on the reactor, skipping nothing.");
    assert!(!v.flagged, "{v:?}");
    assert!(v.violations.is_empty());
    assert!(
        (v.confidence - (1.0 - q)).abs() < 1e-12,
        "its doubt is on record"
    );
}

#[test]
fn the_excerpt_is_the_clause_that_reads_as_a_result_and_the_retry_says_why() {
    registered();
    let text = "I duck behind the crates, and I ventilate the droid.";
    assert!(!troupe_validator::check_rules(text).flagged);
    let v = check(text);
    assert!(v.flagged);
    assert_eq!(v.violations[0].excerpt, "I ventilate the droid");
    let f = feedback(&v);
    assert!(
        f.contains("\"I ventilate the droid\" reads as a result (it tells the action as done, with its result)"),
        "{f}"
    );
    let fix = auto_correct(text);
    assert_eq!(fix.text, "I duck behind the crates.");
    assert!(fix.reads_as_action);
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
