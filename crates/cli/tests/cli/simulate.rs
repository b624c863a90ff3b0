#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `troupe simulate` end to end: a batch of party sessions with recorded replies, two at a time,
//! then `troupe stats` and `troupe report` on its --out directory, checked against each run's
//! own log and stats; and a batch in which some runs fail while the others finish.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support;
use support::{campaign_with, of_type, read_log, run, troupe};

fn simulate(dir: &Path, args: &[&str]) -> Output {
    let out = troupe()
        .current_dir(dir)
        .arg("simulate")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked:\n{stderr}");
    out
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn stats_json(dir: &Path, campaign: &Path) -> Value {
    let text = run(
        dir,
        &["stats", "--json", "--campaign", campaign.to_str().unwrap()],
    );
    serde_json::from_str(&text).unwrap()
}

/// The research party (three players, three turns) with its recorded replies under two names,
/// so the batch has two "models" to compare.
fn party_table() -> tempfile::TempDir {
    let dir = campaign_with(&["party.json", "research.gm.yaml", "research.replay.jsonl"]);
    std::fs::copy(
        dir.path().join("research.replay.jsonl"),
        dir.path().join("again.replay.jsonl"),
    )
    .unwrap();
    dir
}

const MODELS: [&str; 2] = ["replay:research.replay.jsonl", "replay:again.replay.jsonl"];

#[test]
fn a_batch_plays_every_seed_and_model_and_stats_score_each_model() {
    let dir = party_table();
    let out = simulate(
        dir.path(),
        &[
            "party.json",
            "--seeds",
            "1..=3",
            "--model",
            MODELS[0],
            "--model",
            MODELS[1],
            "--jobs",
            "2",
            "--out",
            "runs",
            "--",
            "--gm-script",
            "research.gm.yaml",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Simulated 6 sessions"), "{stdout}");
    assert!(stdout.contains("6 ok, 0 failed"), "{stdout}");
    assert!(stdout.contains("2 at a time"), "{stdout}");

    let runs = dir.path().join("runs");
    let summary = json_file(&runs.join("simulate.json"));
    assert_eq!(
        (summary["sessions"].as_u64(), summary["ok"].as_u64()),
        (Some(6), Some(6))
    );
    assert_eq!(summary["failed"], 0);
    assert_eq!(summary["jobs"], 2);
    assert!(summary["sessions_per_second"].as_f64().unwrap() > 0.0);
    let listed = summary["runs"].as_array().unwrap();
    assert_eq!(listed.len(), 6);
    for (i, r) in listed.iter().enumerate() {
        check_run(dir.path(), r, i);
    }
    check_batch_stats(dir.path(), &runs, listed);

    let html = run(
        dir.path(),
        &["report", "--campaign", "runs", "-o", "batch.html"],
    );
    assert!(html.contains("6 sessions"), "{html}");
    let page = std::fs::read_to_string(dir.path().join("batch.html")).unwrap();
    assert!(page.contains("Scorecard per model"));
    for m in MODELS {
        assert!(
            page.contains(&format!("<td>{m}</td>")),
            "{m} has no scorecard row"
        );
    }
    for r in listed {
        assert!(page.contains(r["run"].as_str().unwrap()));
    }
}

/// A run of the summary: named after its campaign, seed and model, its session played with
/// that seed and model in its own directory.
fn check_run(dir: &Path, r: &Value, i: usize) {
    let (seed, model) = ((i % 3 + 1) as u64, MODELS[i / 3]);
    let label = if i < 3 {
        "replay-research"
    } else {
        "replay-again"
    };
    assert_eq!(r["run"], format!("party-seed{seed}-{label}"));
    assert_eq!(
        (r["seed"].as_u64(), r["model"].as_str()),
        (Some(seed), Some(model))
    );
    assert_eq!(
        (r["status"].as_str(), r["exit_code"].as_i64()),
        (Some("ok"), Some(0))
    );
    let run_dir = dir.join(r["dir"].as_str().unwrap());
    assert!(run_dir.join("campaign.db").is_file());
    assert!(run_dir.join("stderr.log").is_file());
    let log = read_log(&run_dir.join("logs/session-1.jsonl"));
    let started = of_type(&log, "session_started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["seed"], seed);
    assert_eq!(started[0]["model"], model);
    assert_eq!(of_type(&log, "turn_completed").len(), 3);
    assert_eq!(of_type(&log, "session_ended").len(), 1);
}

/// The batch's scorecard sums what each run's own stats say.
fn check_batch_stats(dir: &Path, runs: &Path, listed: &[Value]) {
    let batch = stats_json(dir, runs);
    assert_eq!(batch["runs"].as_array().unwrap().len(), 6);
    assert!(batch["audit"]["gaps"].as_array().unwrap().is_empty());
    let card = batch["scorecard"].as_array().unwrap();
    assert_eq!(card.len(), 2, "{card:?}");
    for row in card {
        let model = row["model"].as_str().unwrap();
        let mine: Vec<Value> = listed
            .iter()
            .filter(|r| r["model"] == model)
            .map(|r| stats_json(dir, &dir.join(r["dir"].as_str().unwrap())))
            .collect();
        assert_eq!(mine.len(), 3);
        let sum = |f: &dyn Fn(&Value) -> u64| mine.iter().map(f).sum::<u64>();
        let m = |v: &Value, path: &[&str]| path.iter().fold(v, |v, k| &v[*k]).as_u64().unwrap();
        assert_eq!(row["sessions"], 3);
        assert_eq!(
            row["turns"].as_u64(),
            Some(sum(&|s| m(s, &["metrics", "turns"])))
        );
        assert_eq!(
            row["actions"].as_u64(),
            Some(sum(&|s| m(s, &["metrics", "validation", "actions"])))
        );
        let tokens = sum(&|s| {
            m(s, &["metrics", "model", "tokens", "input"])
                + m(s, &["metrics", "model", "tokens", "output"])
        });
        assert_eq!(row["tokens"].as_u64(), Some(tokens));
        assert_eq!(row["tokens_per_turn"].as_f64(), Some(tokens as f64 / 9.0));
        assert_eq!(
            row["calls"].as_u64(),
            Some(sum(&|s| m(s, &["metrics", "model", "attempts"])))
        );
        // The research script sends one overreaching action back in every session.
        assert!(row["overreach"].as_u64().unwrap() >= 3, "{row}");
        let per_100 = row["overreach"].as_f64().unwrap() * 100.0 / row["actions"].as_f64().unwrap();
        assert_eq!(row["overreach_per_100_actions"].as_f64(), Some(per_100));
        assert_eq!(row["failed_calls"], 0);
        assert_eq!(
            row["review_flags"].as_u64(),
            Some(sum(&|s| s["flags"].as_array().unwrap().len() as u64))
        );
    }
    let text = run(dir, &["stats", "--campaign", "runs"]);
    assert!(text.contains("Scorecard per model"), "{text}");
    assert!(text.contains("party-seed2-replay-again"), "{text}");
}

#[test]
fn failing_runs_are_named_while_the_others_finish() {
    let dir = party_table();
    // A campaign whose prompt override does not parse: its runs fail as they start (a campaign
    // file that cannot load is refused before any run starts: tests/cli/preflight.rs).
    std::fs::create_dir_all(dir.path().join("bad/prompts")).unwrap();
    std::fs::copy(
        dir.path().join("party.json"),
        dir.path().join("bad/broken.json"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad/prompts/player_system.md"),
        "{% if unclosed %}",
    )
    .unwrap();
    let out = simulate(
        dir.path(),
        &[
            "party.json",
            "bad/broken.json",
            "--seeds",
            "4,5",
            "--model",
            MODELS[0],
            "--jobs",
            "2",
            "--out",
            "runs",
            "--",
            "--gm-script",
            "research.gm.yaml",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "a batch with failures must fail:\n{stdout}"
    );
    assert!(stdout.contains("Simulated 4 sessions"), "{stdout}");
    assert!(stdout.contains("2 ok, 2 failed"), "{stdout}");
    for failed in [
        "broken-seed4-replay-research",
        "broken-seed5-replay-research",
    ] {
        let line = stdout.lines().find(|l| l.contains(failed)).unwrap();
        assert!(line.trim_start().starts_with("FAILED"), "{line}");
        assert!(line.contains("stderr.log"), "{line}");
    }
    let summary = json_file(&dir.path().join("runs/simulate.json"));
    let status: Vec<(&str, &str)> = summary["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["run"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        status,
        [
            ("party-seed4-replay-research", "ok"),
            ("party-seed5-replay-research", "ok"),
            ("broken-seed4-replay-research", "failed"),
            ("broken-seed5-replay-research", "failed"),
        ]
    );
    // Each failed run keeps the child's own error beside it.
    let broken = std::fs::read_to_string(
        dir.path()
            .join("runs/broken-seed4-replay-research/stderr.log"),
    )
    .unwrap();
    assert!(broken.contains("player_system.md"), "{broken}");
    assert_eq!(summary["runs"][2]["exit_code"], 1);

    // The batch still reads: the two sessions that were played, one model.
    let stats = stats_json(dir.path(), &dir.path().join("runs"));
    assert_eq!(stats["runs"].as_array().unwrap().len(), 2);
    assert_eq!(stats["scorecard"][0]["sessions"], 2);
    let err = troupe()
        .current_dir(dir.path())
        .args(["stats", "1", "--campaign", "runs"])
        .output()
        .unwrap();
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("read whole"));
    // A second batch into the same directory is refused, not mixed into the first.
    let again = simulate(
        dir.path(),
        &[
            "party.json",
            "--seeds",
            "4",
            "--model",
            MODELS[0],
            "--out",
            "runs",
        ],
    );
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds a batch"));
    // Without its simulate.json (a batch killed outright), the runs' directories still guard it.
    std::fs::remove_file(dir.path().join("runs/simulate.json")).unwrap();
    let again = simulate(
        dir.path(),
        &[
            "party.json",
            "--seeds",
            "4",
            "--model",
            MODELS[0],
            "--out",
            "runs",
        ],
    );
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds 1 of these runs"));
}

#[test]
fn ctrl_c_starts_no_new_run_and_still_writes_the_summary() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = party_table();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("troupe"))
        .current_dir(dir.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .args(["simulate", "party.json", "--seeds", "1..=40", "--jobs", "1"])
        .args(["--model", MODELS[0], "--out", "runs", "--"])
        .args(["--gm-script", "research.gm.yaml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Progress lines go to stderr (not a terminal here): wait for the first finished run.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("[1/40] party-seed1"), "{first}");
    // Only simulate gets the signal here (a terminal would send it to the runs too): the run
    // under way finishes, no new one starts.
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{rest:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Interrupted:"), "{stdout}");
    let summary = json_file(&dir.path().join("runs/simulate.json"));
    let played = summary["runs"].as_array().unwrap();
    let not_started = summary["not_started"].as_array().unwrap();
    assert!(!played.is_empty() && played.len() < 40, "{}", played.len());
    assert_eq!(played.len() + not_started.len(), 40);
    assert!(played.iter().all(|r| r["status"] == "ok"), "{played:?}");
    assert_eq!(
        not_started[0],
        format!("party-seed{}-replay-research", played.len() + 1)
    );
    assert!(
        !dir.path()
            .join(format!(
                "runs/party-seed{}-replay-research",
                played.len() + 1
            ))
            .exists()
    );
}

#[test]
fn without_model_a_run_plays_the_campaigns_own_model_and_keeps_a_copy() {
    // examples/party.json names its recorded replies in its model block.
    let dir = campaign_with(&["party.json", "party.gm.yaml", "party.replay.jsonl"]);
    let out = simulate(
        dir.path(),
        &[
            "party.json",
            "--seeds",
            "1,2",
            "--out",
            "runs",
            "--",
            "--gm-script",
            "party.gm.yaml",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("party-seed2 "), "{stdout}");
    for run in ["party-seed1", "party-seed2"] {
        let run_dir = dir.path().join("runs").join(run);
        // A copy of the campaign and its replies, so the run stands on its own.
        assert!(run_dir.join("party.json").is_file());
        assert!(run_dir.join("party.replay.jsonl").is_file());
        let log = read_log(&run_dir.join("logs/session-1.jsonl"));
        assert_eq!(
            of_type(&log, "session_started")[0]["model"],
            "replay:party.replay.jsonl"
        );
    }
    // Both runs played the same model: one row.
    let stats = stats_json(dir.path(), &dir.path().join("runs"));
    let card = stats["scorecard"].as_array().unwrap();
    assert_eq!(card.len(), 1, "{card:?}");
    assert_eq!(card[0]["sessions"], 2);
}

/// Issue 46: a run whose session logged `phase_failed` (a model call that gave up, here
/// recorded replies that run dry halfway) ran to its end and exited 0, and the batch said `ok`.
/// It is not: its status, simulate.json, the summary line and the exit status say what it is,
/// and a resumed batch still counts it as finished (it is not played again).
#[test]
fn a_run_whose_phases_failed_is_not_ok() {
    let dir = party_table();
    let full = std::fs::read_to_string(dir.path().join("research.replay.jsonl")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    // The first half of the replies: the later calls find none and fail for good.
    let dry = lines[..lines.len() / 2].join("\n") + "\n";
    std::fs::write(dir.path().join("dry.replay.jsonl"), dry).unwrap();
    let args = [
        "party.json",
        "--seeds",
        "1",
        "--model",
        MODELS[0],
        "--model",
        "replay:dry.replay.jsonl",
        "--jobs",
        "2",
        "--out",
        "runs",
        "--",
        "--gm-script",
        "research.gm.yaml",
    ];
    let out = simulate(dir.path(), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = json_file(&dir.path().join("runs/simulate.json"));
    let dry_run = &summary["runs"][1];
    assert_eq!(dry_run["run"], "party-seed1-replay-dry");
    let log = read_log(
        &dir.path()
            .join("runs/party-seed1-replay-dry/logs/session-1.jsonl"),
    );
    let failed = of_type(&log, "phase_failed").len() as u64;
    assert!(failed > 0, "the dry replies must make phases fail");
    // The child played to its end and exited 0: only its log says what went wrong.
    assert_eq!(dry_run["exit_code"], 0);
    assert_eq!(of_type(&log, "session_ended").len(), 1);
    assert_eq!(
        (
            dry_run["status"].as_str(),
            dry_run["phases_failed"].as_u64()
        ),
        (Some("phases_failed"), Some(failed)),
        "{dry_run}"
    );
    assert_eq!(summary["runs"][0]["status"], "ok");
    assert_eq!(summary["runs"][0]["phases_failed"], 0);
    assert_eq!(
        (
            summary["ok"].as_u64(),
            summary["phases_failed"].as_u64(),
            summary["failed"].as_u64()
        ),
        (Some(1), Some(1), Some(0))
    );
    let s = if failed == 1 { "" } else { "s" };
    assert!(
        stdout.contains(&format!(
            "1 ok, 1 with failed phases ({failed} phase{s} failed for good), 0 failed"
        )),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("party-seed1-replay-dry"))
        .unwrap();
    assert!(line.trim_start().starts_with("PARTIAL"), "{line}");
    assert!(
        line.contains(&format!("{failed} phase{s} failed for good")),
        "{line}"
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // troupe stats counts the same phases.
    let stats = stats_json(dir.path(), &dir.path().join("runs/party-seed1-replay-dry"));
    assert_eq!(
        stats["scorecard"][0]["phases_failed"].as_u64(),
        Some(failed)
    );

    // Resumed, the batch plays neither run again: both ran to their end.
    std::fs::remove_file(dir.path().join("runs/simulate.json")).unwrap();
    let mut again = args.to_vec();
    again.insert(again.len() - 3, "--resume");
    let out = simulate(dir.path(), &again);
    let summary = json_file(&dir.path().join("runs/simulate.json"));
    assert_eq!(
        summary["resumed"],
        2,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(summary["runs"][1]["status"], "phases_failed");
    assert_eq!(out.status.code(), Some(1));
}
