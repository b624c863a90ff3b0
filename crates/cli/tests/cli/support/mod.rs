//! What the end-to-end tests share: the `troupe` binary with no provider keys and short
//! retries, and a run of it paused for a crash test. What every crate's tests share (the
//! examples, reading a JSONL log, the mock model server, the browser) is troupe-test-support's,
//! re-exported here so each test names it as `support::…`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;

pub use troupe_test_support::{
    DEMO, browser, campaign_with, copy_examples, examples, in_ci, of_type, openai_server, read_log,
};

/// The binary, with no API keys from the environment (nothing may reach a hosted model), no
/// crash-test pause and retries 1,000 times shorter; the overreach check is the one
/// `scripts/setup` gives users (the rules and the learned classifier, issue 47).
pub fn troupe() -> Command {
    let mut cmd = Command::cargo_bin("troupe").unwrap();
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TROUPE_PAUSE_AFTER_EVENT")
        .env("TROUPE_RETRY_SCALE", "0.001");
    if let Some(dir) = embed_model() {
        cmd.env("TROUPE_EMBED_MODEL", dir);
    }
    cmd
}

/// The overreach check's sentence model, found once for the whole test binary exactly as troupe
/// finds it (`troupe_embed::find_model_dir`: `TROUPE_EMBED_MODEL`, the data directory, then the
/// pip package by asking `python3`), and named to every `troupe` the tests start, so each of
/// those hundreds of processes loads the same model without starting Python (through pyenv's
/// shims, 0.6-1.9 s of wall time a process on this machine under load; BENCHMARKS.md, issue 48).
/// The search itself is tested where it is the subject: troupe-embed's tests and `detector.rs`,
/// whose `troupe` is started without this.
pub fn embed_model() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| troupe_embed::find_model_dir(None).ok())
        .as_deref()
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
        .envs(embed_model().map(|dir| ("TROUPE_EMBED_MODEL", dir)))
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

/// What runs alone, one at a time: the embedded model's sessions, which load both cores for
/// minutes (two llama.cpp sessions on a 2-core machine oversubscribe it so badly that calls pass
/// their timeout).
pub static ALONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
