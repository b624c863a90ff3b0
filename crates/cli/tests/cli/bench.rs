#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Issue 32: `troupe bench MODEL…` plays the suite with each model and scores it from the logs
//! (these first tests play the fixed suite 1.0, `--suite-version 1.0`; suite 2.0's are below).
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
    let (ok, stdout, stderr) = bench(
        dir,
        &[
            &good,
            &bad,
            "--out",
            out,
            "--seed",
            "7",
            "--json",
            "--suite-version",
            "1.0",
        ],
    );
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
    let (ok, stdout, stderr) = bench(
        d,
        &[&good, "--out", "b", "--jobs", "1", "--suite-version", "1.0"],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("# troupe bench: suite"), "{stdout}");
    assert!(stdout.contains("| **all** | 9 |"), "{stdout}");

    // The same --out again is refused: results are never mixed.
    let (ok, _, stderr) = bench(d, &[&good, "--out", "b", "--suite-version", "1.0"]);
    assert!(!ok && stderr.contains("already holds a bench"), "{stderr}");

    // Recorded replies missing for a session: named, and nothing is played.
    let partial = d.join("partial");
    std::fs::create_dir(&partial).unwrap();
    let src = PathBuf::from(good.strip_prefix("replay:").unwrap());
    std::fs::copy(src.join("secrets-1.jsonl"), partial.join("secrets-1.jsonl")).unwrap();
    let model = format!("replay:{}", partial.display());
    let (ok, _, stderr) = bench(d, &[&model, "--out", "c", "--suite-version", "1.0"]);
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

// Suite 2.0 (issue 50): scenarios generated from templates with a seed, the scripted good and
// bad players in every result, skills with bootstrap intervals, pairwise comparisons.

/// `troupe bench` with the baselines only on a small generated suite; the results as JSON.
fn generated(dir: &Path, out: &str, per_family: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "--out",
        out,
        "--seed",
        "3",
        "--per-family",
        per_family,
        "--json",
    ];
    args.extend(extra);
    let (ok, stdout, stderr) = bench(dir, &args);
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

fn skill<'a>(model: &'a Value, key: &str) -> &'a Value {
    model["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skill"] == key)
        .unwrap_or_else(|| panic!("no {key} in {model}"))
}

#[test]
fn the_scripted_players_are_the_ceiling_and_the_floor_of_every_skill() {
    let dir = tempfile::tempdir().unwrap();
    let r = generated(dir.path(), "out", "2", &[]);
    assert_eq!(r["suite_version"], "2.0");
    assert_eq!(r["judge"], Value::Null, "judge-free");
    assert_eq!(r["scenarios"].as_array().unwrap().len(), 10);
    assert_eq!(
        r["baselines"],
        serde_json::json!(["scripted:good", "scripted:bad"])
    );
    let [good, bad] = [&r["models"][0], &r["models"][1]];
    assert_eq!(good["model"], "scripted:good");
    for m in [good, bad] {
        assert_eq!(m["failed_runs"], serde_json::json!([]), "{m}");
        // Every reply the scripted players wrote matched a call, and none was missing.
        assert_eq!(m["scores"]["failed_calls"], 0, "{}", m["model"]);
        assert_eq!(m["scores"]["phases_failed"], 0, "{}", m["model"]);
    }
    let value = |m: &Value, k: &str| skill(m, k)["value"].as_f64();
    for k in [
        "secrets_kept",
        "insight_questions",
        "insight_heeded",
        "party_agreed",
        "plan_directives",
        "memory_answered",
        "directives_followed",
    ] {
        assert_eq!(value(good, k), Some(1.0), "good {k}: {}", skill(good, k));
        assert_eq!(value(bad, k), Some(0.0), "bad {k}: {}", skill(bad, k));
        assert!(skill(good, k)["items"].as_u64().unwrap() >= 4, "{k}");
    }
    assert_eq!(value(good, "overreach_per_100_actions"), Some(0.0));
    assert!(value(bad, "overreach_per_100_actions").unwrap() > 10.0);
    // The pairwise comparison says the good player is clearly better, skill by skill.
    let pairs = r["pairwise"].as_array().unwrap();
    let clear: Vec<&Value> = pairs.iter().filter(|p| p["clear"] == true).collect();
    assert!(clear.len() >= 8, "{pairs:?}");
    assert!(
        clear.iter().all(|p| p["better"] == "scripted:good"),
        "{clear:?}"
    );
    // Families: one entry each, with the skills they test.
    let families = good["by_family"].as_array().unwrap();
    assert_eq!(families.len(), 5);
    let md = std::fs::read_to_string(dir.path().join("out/bench.md")).unwrap();
    assert!(md.contains("| secrets kept | 1.00 [1.00, 1.00] n="), "{md}");
    assert!(md.contains("## Pairwise"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("out/bench.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("By scenario family"));
}

#[test]
fn the_same_seed_gives_the_same_suite_and_scores_and_another_seed_another_suite() {
    let dir = tempfile::tempdir().unwrap();
    let first = generated(dir.path(), "a", "1", &[]);
    let second = generated(dir.path(), "b", "1", &[]);
    assert_eq!(without_timing(first.clone()), without_timing(second));
    let suite =
        |out: &str| std::fs::read_to_string(dir.path().join(out).join("suite/suite.yaml")).unwrap();
    assert_eq!(suite("a"), suite("b"));
    let (ok, _, stderr) = bench(
        dir.path(),
        &["--out", "c", "--seed", "4", "--per-family", "1", "--json"],
    );
    assert!(ok, "{stderr}");
    assert_ne!(suite("a"), suite("c"));
    assert_eq!(first["seed"], 3);
    assert!(first["scenarios"][0]["seed"].as_u64().is_some());
}

#[test]
fn a_model_server_is_benched_beside_the_baselines_with_requests_in_flight() {
    use crate::support::openai_server::{OpenAiServer, Personality};
    let server = OpenAiServer::start(Personality::Paced {
        delay: std::time::Duration::ZERO,
    });
    let dir = tempfile::tempdir().unwrap();
    let url = server.base_url();
    let r = generated(
        dir.path(),
        "out",
        "1",
        &[
            "openai-compatible:mock",
            "--jobs",
            "4",
            "--",
            "--base-url",
            &url,
        ],
    );
    let models: Vec<&str> = r["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        ["scripted:good", "scripted:bad", "openai-compatible:mock"]
    );
    let mock = &r["models"][2];
    assert!(mock["scores"]["turns"].as_u64().unwrap() >= 15, "{mock}");
    assert!(mock["scores"]["tokens"].as_u64().unwrap() > 0);
    assert!(!server.served().is_empty());
    // Three models: three pairs of every skill.
    assert_eq!(r["pairwise"].as_array().unwrap().len(), 3 * 9);
}

#[test]
fn a_suite_version_troupe_does_not_have_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = bench(dir.path(), &["--suite-version", "3.1", "--out", "x"]);
    assert!(
        !ok && stderr.contains("--suite-version 3.1 is not one troupe has"),
        "{stderr}"
    );
    let (ok, _, stderr) = bench(dir.path(), &["--per-family", "0", "--out", "y"]);
    assert!(
        !ok && stderr.contains("--per-family must be 1 or more"),
        "{stderr}"
    );
}

/// The whole default suite (12 per family) with the baselines and a mock model server: at
/// least 300 items, every skill on 40 or more; prints the wall time, the tokens and the skills
/// (BENCHMARKS.md, issue 50). `TROUPE_BENCH_JOBS` sets `--jobs` (default 8).
#[test]
#[ignore = "a measurement: cargo test -p troupe-cli --test cli bench::the_full -- --ignored --nocapture"]
fn the_full_default_suite_has_three_hundred_items_and_forty_per_skill() {
    use crate::support::openai_server::{OpenAiServer, Personality};
    let server = OpenAiServer::start(Personality::Paced {
        delay: std::time::Duration::ZERO,
    });
    let url = server.base_url();
    let jobs = std::env::var("TROUPE_BENCH_JOBS").unwrap_or_else(|_| "8".into());
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let args = [
        "openai-compatible:mock",
        "--out",
        "full",
        "--json",
        "--jobs",
        &jobs,
        "--",
        "--base-url",
        &url,
    ];
    let (ok, stdout, stderr) = bench(dir.path(), &args);
    assert!(ok, "{stderr}");
    let wall = started.elapsed().as_secs_f64();
    let r: Value = serde_json::from_str(&stdout).unwrap();
    for m in r["models"].as_array().unwrap() {
        let skills = m["skills"].as_array().unwrap();
        let total: u64 = skills.iter().map(|s| s["items"].as_u64().unwrap()).sum();
        if m["model"] != "scripted:bad" {
            assert!(total >= 300, "{total}");
        }
        let s = &m["scores"];
        eprintln!(
            "{}: {total} items, {} sessions, {} turns, {} tokens, {} requests' latency {} ms, sessions' wall {} ms",
            m["model"],
            s["sessions"],
            s["turns"],
            s["tokens"],
            s["replies"],
            m["timing"]["model_ms"],
            m["timing"]["wall_ms"]
        );
        for k in skills {
            eprintln!(
                "  {} = {} [{}, {}] n={}",
                k["skill"], k["value"], k["low"], k["high"], k["items"]
            );
        }
    }
    for s in r["models"][0]["skills"].as_array().unwrap() {
        assert!(s["items"].as_u64().unwrap() >= 40, "{s}");
    }
    eprintln!(
        "full suite: {} scenarios, 3 models, --jobs {jobs}: {wall:.1} s wall; the mock served {} requests",
        r["scenarios"].as_array().unwrap().len(),
        server.served().len()
    );
}
