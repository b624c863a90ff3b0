//! What the end-to-end tests share: the `troupe` binary with no provider keys and short
//! retries, the examples directory, and reading a session's JSONL log.
//!
//! Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Copy these files of the examples directory into `dir`.
pub fn copy_examples(dir: &Path, files: &[&str]) {
    for f in files {
        std::fs::copy(examples().join(f), dir.join(f)).unwrap();
    }
}

/// The files of the example campaign: the campaign, the demo GM script, the recorded replies.
pub const DEMO: [&str; 3] = ["campaign.json", "demo.gm.yaml", "campaign.replay.jsonl"];

/// A fresh directory holding these example files.
pub fn campaign_with(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), files);
    dir
}

/// The binary, with no API keys from the environment (nothing may reach a hosted model), no
/// crash-test pause and retries 1,000 times shorter; the overreach check is the one
/// `scripts/setup` gives users (the rules and the learned classifier, issue 47).
pub fn troupe() -> Command {
    let mut cmd = Command::cargo_bin("troupe").unwrap();
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TROUPE_PAUSE_AFTER_EVENT")
        .env("TROUPE_RETRY_SCALE", "0.001");
    cmd
}

/// Run `troupe ARGS` in `dir`; it must succeed. Returns its standard output.
pub fn run(dir: &Path, args: &[&str]) -> String {
    run_with(dir, args, "")
}

/// Run `troupe ARGS` in `dir` with `input` on standard input; it must succeed. Returns its
/// standard output.
pub fn run_with(dir: &Path, args: &[&str], input: &str) -> String {
    let out = troupe()
        .current_dir(dir)
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "troupe {args:?}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every event of a JSONL log.
pub fn read_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn of_type<'a>(log: &'a [Value], t: &str) -> Vec<&'a Value> {
    log.iter().filter(|e| e["event_type"] == t).collect()
}
pub mod browser;
pub mod openai_server;

/// Start `troupe ARGS` in `dir` with a crash-test pause (`TROUPE_PAUSE_AFTER_EVENT` or
/// `TROUPE_PAUSE_BEFORE_COMMIT` set to `n`); returns once it says it has paused, ready to be
/// killed.
pub fn spawn_paused(dir: &Path, args: &[&str], pause: &str, n: u64) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("troupe"))
        .current_dir(dir)
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TROUPE_PAUSE_AFTER_EVENT")
        .env_remove("TROUPE_PAUSE_BEFORE_COMMIT")
        .env(pause, n.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let Some(stderr) = child.stderr.take() else {
        panic!("no stderr to read");
    };
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if line.contains("troupe: paused after") {
            return child;
        }
        seen.push_str(&line);
        seen.push('\n');
    }
    let status = child.wait().unwrap();
    panic!("troupe never paused ({pause}={n}, {status}):\n{seen}");
}
