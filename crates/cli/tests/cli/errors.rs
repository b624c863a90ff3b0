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
