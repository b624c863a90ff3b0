#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Errors keep their cause (issue 29): a library error says its own level (the file) and keeps
//! the operating system's reason as its source; the binary prints the whole chain, each cause
//! once. Each test here fails a different way: the reason lost, or said twice.

use std::path::Path;

use crate::support;
use support::{campaign_with, troupe};

/// Run `troupe ARGS` in `dir`; it must fail with exit code 1. Returns its standard error.
fn fails(dir: &Path, args: &[&str]) -> String {
    let out = troupe()
        .current_dir(dir)
        .args(args)
        .write_stdin("")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "troupe {args:?}:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// What the operating system says when `path` is read, as the binary should pass it on.
fn reason(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_err().to_string()
}

/// `said` names the file with the reason after it, and the reason once.
fn says_once(said: &str, file: &str, reason: &str) {
    assert!(said.contains(&format!("{file}: {reason}")), "{said}");
    assert_eq!(said.matches(reason).count(), 1, "{said}");
}

#[test]
fn a_campaign_file_that_cannot_be_read_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("campaign.json");
    let why = reason(&missing);
    let file = format!("could not read campaign file {}", missing.display());
    let path = missing.to_str().unwrap();
    // `check` prints the campaign's error itself; `play` through the binary's error path.
    says_once(&fails(dir.path(), &["check", path]), &file, &why);
    says_once(&fails(dir.path(), &["play", path]), &file, &why);
}

#[test]
fn a_gm_script_that_cannot_be_read_says_why_once() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let why = reason(&dir.path().join("nope.yaml"));
    let said = fails(
        dir.path(),
        &["play", "campaign.json", "--gm-script", "nope.yaml"],
    );
    says_once(&said, "could not read the GM script nope.yaml", &why);
}

#[test]
fn a_table_file_that_cannot_be_read_says_why_once() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let table = dir.path().join("table.json");
    std::fs::create_dir(&table).unwrap();
    let why = reason(&table);
    let said = fails(
        dir.path(),
        &["serve", "campaign.json", "--listen", "127.0.0.1:0"],
    );
    says_once(&said, "table.json", &why);
}

/// A model server URL nobody listens on: a port just freed.
fn dead_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    format!("http://127.0.0.1:{port}/v1")
}

/// Issue 46: `troupe play` checks the model server before the GM types a word (it used to
/// wait for the first narration, then about 80 s of retries), and starts no session.
#[test]
fn play_names_a_model_server_that_is_down_before_anything_starts() {
    let dir = campaign_with(&["campaign.json"]);
    let url = dead_server();
    let started = std::time::Instant::now();
    let err = fails(
        dir.path(),
        &[
            "play",
            "campaign.json",
            "--provider",
            "openai-compatible",
            "--model",
            "m",
            "--base-url",
            &url,
        ],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(
        err.contains(&url) && err.contains("cannot be reached"),
        "{err}"
    );
    assert!(err.contains("Nothing was started"), "{err}");
    assert!(!dir.path().join("logs").exists(), "no session was started");
}

/// Issue 46: `troupe encounter run` checks the model server first too, and a run that never
/// starts is not counted in tally.json.
#[test]
fn an_encounter_against_a_model_server_that_is_down_is_not_counted() {
    let dir = crate::encounter::campaign();
    let url = dead_server();
    for spec in ["encounters/smithy.yaml", "encounters/docking.yaml"] {
        let err = fails(
            dir.path(),
            &[
                "encounter",
                "run",
                spec,
                "--players",
                "human:Mara,ai,ai",
                "--provider",
                "openai-compatible",
                "--model",
                "m",
                "--base-url",
                &url,
            ],
        );
        assert!(err.contains("cannot be reached"), "{spec}: {err}");
        assert!(
            !dir.path().join("tally.json").exists(),
            "{spec}: a run that never started was counted"
        );
    }
}

/// Issue 46: `troupe encounter list` in a campaign without an `encounters/` folder says what
/// is missing and how to add it, not the operating system's "No such file or directory".
#[test]
fn encounter_list_without_an_encounters_folder_says_how_to_add_one() {
    let dir = tempfile::tempdir().unwrap();
    let err = fails(dir.path(), &["encounter", "list"]);
    assert!(err.contains("no encounters/ folder"), "{err}");
    assert!(err.contains("add one"), "{err}");
    assert!(!err.contains("os error"), "{err}");
}
