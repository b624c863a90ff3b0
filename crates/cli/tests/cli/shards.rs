#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! One batch split into shards (`troupe simulate --shard K/N`, or from a Slurm job array's
//! environment), a shard started again after it finished part of its work, and
//! `troupe simulate merge`: the merged directory gives byte for byte the stats, the JSON stats
//! and the HTML report that one process playing the whole batch gives.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support;
use support::{campaign_with, troupe};

/// Three seeds × two "models" (the same recorded replies under two names): six runs.
fn table() -> tempfile::TempDir {
    let dir = campaign_with(&["party.json", "research.gm.yaml", "research.replay.jsonl"]);
    std::fs::copy(
        dir.path().join("research.replay.jsonl"),
        dir.path().join("again.replay.jsonl"),
    )
    .unwrap();
    dir
}

const BATCH: [&str; 7] = [
    "party.json",
    "--seeds",
    "1..=3",
    "--model",
    "replay:research.replay.jsonl",
    "--model",
    "replay:again.replay.jsonl",
];
const PLAY: [&str; 3] = ["--", "--gm-script", "research.gm.yaml"];

/// `troupe simulate BATCH EXTRA --out OUT -- PLAY` in `dir`, with `envs` set and no scheduler
/// variables inherited.
fn simulate(dir: &Path, extra: &[&str], out: &str, envs: &[(&str, &str)]) -> Output {
    let mut cmd = troupe();
    cmd.current_dir(dir)
        .arg("simulate")
        .args(BATCH)
        .args(extra)
        .args(["--jobs", "2", "--out", out])
        .args(PLAY);
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_STEP",
        "JOB_COMPLETION_INDEX",
        "TROUPE_SHARD_COUNT",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn troupe_in(dir: &Path, args: &[&str]) -> Output {
    troupe().current_dir(dir).args(args).output().unwrap()
}

/// What a researcher reads of a batch named `batch` in `dir`: stats as text and JSON, and the
/// HTML report.
fn readings(dir: &Path) -> (String, String, Vec<u8>) {
    let text = ok(&troupe_in(dir, &["stats", "--campaign", "batch"]));
    let json = ok(&troupe_in(dir, &["stats", "--json", "--campaign", "batch"]));
    ok(&troupe_in(
        dir,
        &["report", "--campaign", "batch", "-o", "report.html"],
    ));
    (text, json, std::fs::read(dir.join("report.html")).unwrap())
}

fn runs_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

fn sessions_of(run: &Path) -> usize {
    std::fs::read_dir(run.join("logs")).unwrap().count()
}

#[test]
fn shards_merged_read_exactly_as_one_machine_s_batch() {
    let dir = table();
    let root = dir.path();
    ok(&simulate(root, &[], "whole/batch", &[]));

    // Shard 1 by flag, shard 2 as task 2 of a Slurm array numbered from 1, shard 3 by flag.
    let first = ok(&simulate(root, &["--shard", "1/3"], "shards/1", &[]));
    assert!(first.contains("Simulated 2 sessions"), "{first}");
    let slurm = [
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
    ];
    ok(&simulate(root, &[], "shards/2", &slurm));
    ok(&simulate(root, &["--shard", "3/3"], "shards/3", &[]));
    // Every run is in exactly one shard, round robin over the plan.
    let mut all: Vec<String> = Vec::new();
    for k in 1..=3 {
        let names = runs_in(&root.join(format!("shards/{k}")));
        assert_eq!(names.len(), 2, "shard {k}: {names:?}");
        all.extend(names);
    }
    all.sort();
    assert_eq!(all, runs_in(&root.join("whole/batch")));
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("shards/2/simulate-shard-2-of-3.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["shard"]["from"], "SLURM_ARRAY_TASK_ID");
    assert_eq!(
        summary["planned"],
        serde_json::json!(["party-seed2-replay-research", "party-seed2-replay-again"])
    );

    // Started again, a shard skips what it finished and plays nothing twice.
    let again = ok(&simulate(root, &["--shard", "1/3"], "shards/1", &[]));
    assert!(
        again.contains("Resumed: 2 runs finished earlier"),
        "{again}"
    );
    for name in runs_in(&root.join("shards/1")) {
        assert_eq!(sessions_of(&root.join("shards/1").join(&name)), 1, "{name}");
    }
    // A run whose mark of completion never got written (killed after its session ended) is
    // played again from the start: one session, not two.
    let shard3 = root.join("shards/3");
    let half = shard3.join(&runs_in(&shard3)[0]);
    std::fs::remove_file(half.join("run.json")).unwrap();
    let again = ok(&simulate(root, &["--shard", "3/3"], "shards/3", &[]));
    assert!(again.contains("Resumed: 1 run finished earlier"), "{again}");
    assert_eq!(sessions_of(&half), 1);
    assert!(half.join("run.json").is_file());

    // Merging two of three shards says what is missing and fails.
    let part = troupe_in(
        root,
        &[
            "simulate",
            "merge",
            "shards/1",
            "shards/2",
            "--out",
            "part/batch",
        ],
    );
    let said = String::from_utf8_lossy(&part.stdout);
    assert!(!part.status.success(), "{said}");
    assert!(said.contains("shard 3/3: no summary"), "{said}");
    assert!(said.contains("incomplete"), "{said}");

    let merged = ok(&troupe_in(
        root,
        &[
            "simulate",
            "merge",
            "shards/1",
            "shards/2",
            "shards/3",
            "--out",
            "merged/batch",
        ],
    ));
    assert!(merged.contains("Merged 6 finished runs"), "{merged}");
    let whole = readings(&root.join("whole"));
    let joined = readings(&root.join("merged"));
    assert!(whole.0.contains("Scorecard per model"), "{}", whole.0);
    assert_eq!(whole.0, joined.0, "stats differ");
    assert_eq!(whole.1, joined.1, "stats --json differ");
    assert!(whole.2 == joined.2, "the HTML reports differ");
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("merged/batch/simulate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["complete"], true);
    let order: Vec<u64> = summary["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(order, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn shards_may_share_one_output_directory() {
    let dir = table();
    let root = dir.path();
    for k in 1..=2 {
        let spec = format!("{k}/2");
        ok(&simulate(root, &["--shard", &spec], "batch", &[]));
    }
    let names = runs_in(&root.join("batch"));
    assert_eq!(names.len(), 6, "{names:?}");
    let summaries: Vec<PathBuf> = ["simulate-shard-1-of-2.json", "simulate-shard-2-of-2.json"]
        .iter()
        .map(|f| root.join("batch").join(f))
        .collect();
    assert!(summaries.iter().all(|p| p.is_file()));
    // Merging the shared directory into itself completes it in place.
    let merged = ok(&troupe_in(
        root,
        &["simulate", "merge", "batch", "--out", "batch"],
    ));
    assert!(merged.contains("Merged 6 finished runs"), "{merged}");
    let stats = ok(&troupe_in(
        root,
        &["stats", "--json", "--campaign", "batch"],
    ));
    let stats: Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["runs"].as_array().unwrap().len(), 6);
}
