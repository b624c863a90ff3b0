#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The overreach check as a user meets it through `troupe validate` (issue 18): by default the
//! rules and the learned classifier decide together and every verdict says so (`hybrid`, with
//! the classifier's confidence); `TROUPE_DETECTOR=pattern` leaves the rules alone; a detector
//! that cannot load says so loudly and the rules still answer every line.
//!
//! The classifier needs the sentence-embedding model (`scripts/setup` installs it): without it
//! these tests fail in CI (CI=true) and skip loudly elsewhere.
#![cfg(feature = "detector")]

use crate::support::in_ci;
use assert_cmd::Command;
use serde_json::Value;

/// A result the rules miss, an attempt, and a plan the rules misread (issue 47's play_dev).
const ACTIONS: &str = "The whole tower is on fire now.\n\
                       I aim at the droid's optics.\n\
                       Okay, I'm going to do the Lasers thing and fix the engine.\n";

fn validate(env: &[(&str, &str)]) -> (Vec<Value>, String) {
    let mut cmd = Command::cargo_bin("troupe").unwrap();
    cmd.arg("validate")
        .env_remove("TROUPE_DETECTOR")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.write_stdin(ACTIONS).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let verdicts = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (verdicts, stderr)
}

#[test]
fn by_default_the_rules_and_the_classifier_decide_together() {
    let (v, stderr) = validate(&[]);
    if stderr.contains("detector is unavailable") {
        assert!(
            !in_ci(),
            "the learned detector did not load in CI:\n{stderr}"
        );
        eprintln!("{0}\nSKIPPED (not in CI): {stderr}\n{0}", "!".repeat(78));
        return;
    }
    assert_eq!(v.len(), 3);
    for verdict in &v {
        assert_eq!(verdict["method"], "hybrid", "{verdict}");
        let c = verdict["confidence"].as_f64().unwrap();
        assert!((0.5..=1.0).contains(&c), "{verdict}");
    }
    assert_eq!(v[0]["flagged"], true, "{}", v[0]);
    assert_eq!(v[0]["violations"][0]["kind"], "judged_outcome");
    assert_eq!(v[1]["flagged"], false, "{}", v[1]);
    assert_eq!(v[2]["flagged"], false, "the classifier overrules: {}", v[2]);
}

#[test]
fn pattern_leaves_the_rules_alone() {
    let (v, stderr) = validate(&[("TROUPE_DETECTOR", "pattern")]);
    assert!(!stderr.contains("detector"), "{stderr}");
    let methods: Vec<&str> = v.iter().map(|x| x["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["pattern"; 3]);
    let flagged: Vec<bool> = v.iter().map(|x| x["flagged"].as_bool().unwrap()).collect();
    assert_eq!(flagged, [false, false, true], "what the classifier changes");
}

#[test]
fn a_detector_that_cannot_load_says_so_and_the_rules_answer() {
    let (v, stderr) = validate(&[("TROUPE_EMBED_MODEL", "/nowhere/minilm")]);
    assert!(
        stderr.contains("The learned overreach detector is unavailable")
            && stderr.contains("/nowhere/minilm"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("unavailable").count(),
        1,
        "said once: {stderr}"
    );
    assert_eq!(v.len(), 3);
    assert!(v.iter().all(|x| x["method"] == "pattern"));
}
