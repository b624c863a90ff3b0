#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A batch that cannot work is refused before it starts: `troupe simulate` with a campaign file
//! that is missing or does not pass `troupe check`, a GM script that is not there, a model that
//! is not configured or cannot be reached, or a shard spec out of range exits with one error
//! naming what is wrong, and no run is started.

use std::path::Path;

use crate::support;
use support::{campaign_with, troupe};

const TABLE: [&str; 3] = ["party.json", "research.gm.yaml", "research.replay.jsonl"];

/// `troupe simulate ARGS --out runs` in `dir`, which must fail before any run starts. Returns
/// its standard error.
fn refused(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> String {
    let mut cmd = troupe();
    cmd.current_dir(dir)
        .args(["simulate", "--out", "runs"])
        .args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "JOB_COMPLETION_INDEX",
        "TROUPE_SHARD_COUNT",
    ] {
        if !envs.iter().any(|(k, _)| k == &var) {
            cmd.env_remove(var);
        }
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success(),
        "{args:?} should be refused:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let runs = dir.join("runs");
    let started = std::fs::read_dir(&runs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        started,
        0,
        "{args:?}: no run may start, found {}",
        runs.display()
    );
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "one error, not one per run:\n{stderr}"
    );
    stderr
}

const REPLAY: &str = "replay:research.replay.jsonl";

#[test]
fn a_missing_or_broken_campaign_file_is_named_and_nothing_runs() {
    let dir = campaign_with(&TABLE);
    let err = refused(
        dir.path(),
        &[
            "party.json",
            "missing.json",
            "--seeds",
            "1..=5",
            "--model",
            REPLAY,
        ],
        &[],
    );
    assert!(err.contains("missing.json"), "{err}");
    std::fs::write(
        dir.path().join("broken.json"),
        r#"{"campaign_name": "Broken", "characters": []}"#,
    )
    .unwrap();
    let err = refused(
        dir.path(),
        &[
            "broken.json",
            "party.json",
            "--seeds",
            "1..=5",
            "--model",
            REPLAY,
        ],
        &[],
    );
    assert!(err.contains("broken.json"), "{err}");
    // What `troupe check` says of the file is in the error.
    let check = troupe()
        .current_dir(dir.path())
        .args(["check", "broken.json"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stderr);
    let first = said.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        err.contains(first.trim()),
        "{err}\nvs troupe check:\n{said}"
    );
}

#[test]
fn a_gm_script_that_is_not_there_is_named() {
    let dir = campaign_with(&TABLE);
    let err = refused(
        dir.path(),
        &[
            "party.json",
            "--model",
            REPLAY,
            "--",
            "--gm-script",
            "nope.gm.yaml",
        ],
        &[],
    );
    assert!(err.contains("nope.gm.yaml"), "{err}");
}

#[test]
fn a_model_that_cannot_be_used_is_named() {
    let dir = campaign_with(&TABLE);
    let err = refused(
        dir.path(),
        &["party.json", "--model", "replay:nothing.jsonl"],
        &[],
    );
    assert!(err.contains("nothing.jsonl"), "{err}");
    // A hosted model without its key.
    let err = refused(
        dir.path(),
        &["party.json", "--model", "openai:gpt-4o-mini"],
        &[],
    );
    assert!(err.contains("--model openai:gpt-4o-mini"), "{err}");
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
    // A model server nobody listens on: a port just freed.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let err = refused(
        dir.path(),
        &[
            "party.json",
            "--model",
            "openai-compatible:qwen",
            "--",
            "--base-url",
            &url,
        ],
        &[],
    );
    assert!(err.contains(&url), "{err}");
    assert!(err.contains("cannot be reached"), "{err}");
}

#[test]
fn a_shard_out_of_range_is_refused() {
    let dir = campaign_with(&TABLE);
    let err = refused(
        dir.path(),
        &["party.json", "--model", REPLAY, "--shard", "5/4"],
        &[],
    );
    assert!(err.contains("5/4") && err.contains("out of range"), "{err}");
    let err = refused(
        dir.path(),
        &["party.json", "--model", REPLAY],
        &[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ],
    );
    assert!(
        err.contains("SLURM_ARRAY_TASK_ID") && err.contains("out of range"),
        "{err}"
    );
    let err = refused(
        dir.path(),
        &["party.json", "--model", REPLAY],
        &[("JOB_COMPLETION_INDEX", "0")],
    );
    assert!(err.contains("--shard-count"), "{err}");
    // One run cannot be split in two.
    let err = refused(
        dir.path(),
        &["party.json", "--model", REPLAY, "--shard", "2/2"],
        &[],
    );
    assert!(err.contains("has no run"), "{err}");
}
