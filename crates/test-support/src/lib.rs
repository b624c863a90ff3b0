#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers: a helper that cannot do its part fails the test that called it, saying where"
)]
//! What troupe's tests share across crates (a dev-dependency only, never published):
//!
//! - [`openai_server`]: an OpenAI-compatible chat-completions server on a real socket that can
//!   misbehave as real servers do (faults, pacing, llama-cpp-python's refusals, a parrot).
//! - [`browser`] (feature `browser`): headless Chromium and WebDriver sessions.
//! - [`discord`] (feature `discord`): a fake Discord, REST and websocket gateway.
//! - [`mirror`] (feature `mirror`): a game's JSONL mirror checked against its table's rows.
//! - Here: whether the tests run in CI, the example campaign's files, and reading JSONL logs.
//!
//! Each heavier helper is a feature, so a crate's tests build only what they use.

use std::path::{Path, PathBuf};

use serde_json::Value;

#[cfg(feature = "browser")]
pub mod browser;
#[cfg(feature = "discord")]
pub mod discord;
#[cfg(feature = "mirror")]
pub mod mirror;
pub mod openai_server;

/// Whether the tests run in CI (`CI` set and not `false` or `0`): there a missing browser, model
/// or server fails the test that needs it instead of skipping it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The workspace's `examples/` directory (the example campaign, scripts and recorded replies).
pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Copy these files of the examples directory into `dir`.
pub fn copy_examples(dir: &Path, files: &[&str]) {
    for f in files {
        std::fs::copy(examples().join(f), dir.join(f))
            .unwrap_or_else(|e| panic!("copying examples/{f}: {e}"));
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

/// Every line of a JSONL log, parsed (a line that is not JSON fails the test, naming the file).
pub fn read_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!(
                    "{} holds a line that is not JSON ({e}): {l}",
                    path.display()
                )
            })
        })
        .collect()
}

/// The events of this `event_type`, in log order.
pub fn of_type<'a>(log: &'a [Value], t: &str) -> Vec<&'a Value> {
    log.iter().filter(|e| e["event_type"] == t).collect()
}
