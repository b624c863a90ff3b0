#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Issue 32: `troupe bench MODEL…` plays the suite with each model and scores it from the logs.
//! Two recorded players stand in for models: a careful one (keeps its secret, states intents,
//! follows its directives, talks its party round, remembers) and a careless one (leaks,
//! narrates results, strays, deadlocks, forgets, sends a reply that is not JSON). The careful
//! one must score better on every count, and the same seed must give the same scores.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::troupe;

fn recorded(who: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/recorded");
    format!("replay:{}", dir.join(who).display())
}

/// `troupe bench ARGS` in `dir`; its exit status, standard output and standard error.
fn bench(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = troupe()
        .current_dir(dir)
        .arg("bench")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Both recorded players into `out`, seed 7; the results as JSON.
fn careful_and_careless(dir: &Path, out: &str) -> Value {
    let (good, bad) = (recorded("good"), recorded("bad"));
    let (ok, stdout, stderr) = bench(dir, &[&good, &bad, "--out", out, "--seed", "7", "--json"]);
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(out).join("bench.json")).unwrap())
            .unwrap();
    assert_eq!(printed, written, "--json prints what bench.json holds");
    written
}

#[test]
fn a_careful_player_outscores_one_that_leaks_overreaches_and_forgets() {
    let dir = tempfile::tempdir().unwrap();
    let results = careful_and_careless(dir.path(), "out");
    let version = results["suite_version"].as_str().unwrap();
    assert!(!version.is_empty());
    let [good, bad] = [&results["models"][0], &results["models"][1]];
    for m in [good, bad] {
        assert_eq!(m["suite_version"], version, "every result names the suite");
        assert_eq!(m["seed"], 7);
        assert_eq!(m["failed_runs"], serde_json::json!([]));
        assert_eq!(m["by_scenario"].as_array().unwrap().len(), 5);
        assert_eq!(m["scores"]["turns"], 9, "every scripted turn was played");
    }
    let (g, b) = (&good["scores"], &bad["scores"]);
    // Secrets: the careless player put its player-only whisper in its directive.
    assert_eq!(
        (g["secrets"].as_u64(), g["secrets_kept"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(b["secrets_kept"], 0);
    // Its character said its character-only whisper aloud; the careful one's did not.
    let character = |m: &Value| {
        let pair = (&m["character_secrets"], &m["character_secrets_kept"]);
        (pair.0.as_u64(), pair.1.as_u64())
    };
    assert_eq!(character(g), (Some(1), Some(1)));
    assert_eq!(character(b), (Some(1), Some(0)));
    // Overreach: the careful player never narrates a result; the careless one five times.
    assert_eq!(g["overreach_per_100_actions"], 0.0);
    assert_eq!(
        (b["overreach"].as_u64(), b["actions"].as_u64()),
        (Some(5), Some(10))
    );
    assert_eq!(b["overreach_per_100_actions"], 50.0);
    // Directives, memory, the LASER FEELINGS question, the party, the replies.
    assert_eq!(g["directives_followed"], g["directives"]);
    assert!(
        b["directives_followed"].as_u64() < b["directives"].as_u64(),
        "{b}"
    );
    assert_eq!(
        (g["memory_answered"].as_u64(), b["memory_answered"].as_u64()),
        (Some(3), Some(0))
    );
    assert_eq!(
        (
            g["insight_questions"].as_u64(),
            b["insight_questions"].as_u64()
        ),
        (Some(1), Some(0))
    );
    assert_eq!(g["decided_by"], serde_json::json!({"unanimous": 1}));
    assert_eq!(b["decided_by"], serde_json::json!({"vote": 1}));
    assert_eq!(g["replies_valid"], g["replies"]);
    assert!(b["replies_valid"].as_u64() < b["replies"].as_u64(), "{b}");
    // The clock's numbers are apart from the scores.
    assert!(good["timing"]["wall_ms"].as_u64().unwrap() > 0);
    assert!(g.get("wall_ms").is_none());

    // bench.md: one table per model, naming the suite's version and the seed.
    let md = std::fs::read_to_string(dir.path().join("out/bench.md")).unwrap();
    assert_eq!(md.matches("| scenario |").count(), 2, "{md}");
    assert!(md.contains(&format!("(suite {version}, seed 7)")), "{md}");
    assert!(
        md.contains("| secrets | 2 | 0.0 (0 of 2) | 0/1 | 0/1 |"),
        "{md}"
    );
    // Each scenario is a campaign of its own: troupe's other instruments read it.
    let memory = dir.path().join("out/runs/replay-good/memory");
    assert!(memory.join("logs/session-2.jsonl").is_file());
}

/// Scores without the clock's numbers, as text.
fn without_timing(mut results: Value) -> String {
    for m in results["models"].as_array_mut().unwrap() {
        m.as_object_mut().unwrap().remove("timing");
    }
    serde_json::to_string_pretty(&results).unwrap()
}

#[test]
fn the_same_seed_gives_the_same_scores_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let first = careful_and_careless(dir.path(), "first");
    let second = careful_and_careless(dir.path(), "second");
    assert_eq!(without_timing(first), without_timing(second));
}

#[test]
fn the_markdown_tables_are_printed_and_mistakes_are_refused_before_anything_is_played() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = recorded("good");
    let (ok, stdout, stderr) = bench(d, &[&good, "--out", "b", "--jobs", "1"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("# troupe bench: suite"), "{stdout}");
    assert!(stdout.contains("| **all** | 9 |"), "{stdout}");

    // The same --out again is refused: results are never mixed.
    let (ok, _, stderr) = bench(d, &[&good, "--out", "b"]);
    assert!(!ok && stderr.contains("already holds a bench"), "{stderr}");

    // Recorded replies missing for a session: named, and nothing is played.
    let partial = d.join("partial");
    std::fs::create_dir(&partial).unwrap();
    let src = PathBuf::from(good.strip_prefix("replay:").unwrap());
    std::fs::copy(src.join("secrets-1.jsonl"), partial.join("secrets-1.jsonl")).unwrap();
    let model = format!("replay:{}", partial.display());
    let (ok, _, stderr) = bench(d, &[&model, "--out", "c"]);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("laser-feelings-1.jsonl is missing"),
        "{stderr}"
    );
    assert!(!d.join("c/runs").exists(), "nothing was played");

    // A suite with a mistake names its file and field.
    std::fs::write(d.join("mine.yaml"), "suite_version: '2'\nscenarios: []\n").unwrap();
    let (ok, _, stderr) = bench(d, &[&good, "--out", "e", "--suite", "mine.yaml"]);
    assert!(
        !ok && stderr.contains("mine.yaml: scenarios is empty"),
        "{stderr}"
    );

    // A lab's own suite (one of the shipped scenarios, its own version) is played and named.
    let lab = d.join("lab");
    std::fs::create_dir(&lab).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/suite");
    for f in ["solo.json", "overreach.gm.yaml"] {
        std::fs::copy(shipped.join(f), lab.join(f)).unwrap();
    }
    std::fs::write(
        lab.join("suite.yaml"),
        "suite_version: lab-1\nscenarios:\n  - {id: overreach, about: tempting, campaign: solo.json, sessions: [overreach.gm.yaml]}\n",
    )
    .unwrap();
    let (ok, stdout, stderr) = bench(
        d,
        &[&good, "--out", "h", "--suite", "lab/suite.yaml", "--json"],
    );
    assert!(ok, "{stderr}");
    let results: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(results["models"][0]["suite_version"], "lab-1");
    assert_eq!(
        results["models"][0]["by_scenario"][0]["scenario"],
        "overreach"
    );
    assert_eq!(results["models"][0]["scores"]["turns"], 2);

    // What the bench sets itself cannot be passed to the runs.
    let (ok, _, stderr) = bench(d, &[&good, "--out", "f", "--", "--seed", "3"]);
    assert!(
        !ok && stderr.contains("--seed cannot be passed"),
        "{stderr}"
    );
    let (ok, _, stderr) = bench(d, &["gpt-4o", "--out", "g"]);
    assert!(!ok && stderr.contains("is not PROVIDER:MODEL"), "{stderr}");
}
