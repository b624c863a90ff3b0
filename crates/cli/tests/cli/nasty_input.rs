#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! No panic on any input: the real `troupe` binary fed text that broke it once (a character
//! cut in the middle by byte arithmetic) and other nasty Unicode, on standard input and in a
//! GM's narration during play. The fuzz targets behind these are in crates/fuzz.

use std::path::Path;

use serde_json::Value;

use crate::support;
use support::{copy_examples, read_log, troupe};

/// Lines a person or a model might write: the two found by a new user first.
const NASTY: &[&str] = &[
    "I 倀ed.",
    "Hello Galvin. İ the éé Galvin.",
    "I kill the gu\u{0}ard\u{7}, then İİİ the 👩\u{200D}👩\u{200D}👧 falls.",
    "אני תוקף את השומר \u{202E}and he falls\u{202C}.",
    "Z\u{334}\u{321}a\u{336}l\u{337}g\u{338}o stopped the ﬃ ΣΑΣ guard ꀀed",
];

fn assert_no_panic(out: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "troupe panicked:\n{stderr}");
}

#[test]
fn validate_gives_a_verdict_for_every_nasty_line() {
    let input = NASTY.join("\n") + "\n";
    let out = troupe()
        .arg("validate")
        .write_stdin(input)
        .output()
        .unwrap();
    assert_no_panic(&out);
    assert!(out.status.success());
    let verdicts: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), NASTY.len());
    assert_eq!(verdicts[0]["flagged"], false, "{}", verdicts[0]);
    assert_eq!(verdicts[2]["flagged"], true, "{}", verdicts[2]);
}

#[test]
fn validate_says_what_is_wrong_with_input_that_is_not_utf8() {
    let out = troupe()
        .arg("validate")
        .write_stdin(b"I draw my pistol.\nI \xE5\x80ed \xFF.\n".to_vec())
        .output()
        .unwrap();
    assert_no_panic(&out);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().count(),
        1,
        "the valid line's verdict: {stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("standard input"), "{stderr}");
}

/// The demo, with the GM narrating in nasty Unicode: every line is stored in memory (names,
/// aliases) and checked as the turn goes.
#[test]
fn play_stores_nasty_narration_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["campaign.json", "campaign.replay.jsonl"]);
    // JSON strings are YAML double-quoted strings, escapes included.
    let script = format!(
        "turns:\n  - narration: {}\n    outcome: {}\n",
        Value::from(NASTY[1]),
        Value::from(NASTY[3])
    );
    std::fs::write(dir.path().join("gm.yaml"), script).unwrap();
    let out = play(dir.path());
    assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));
    assert!(
        log.iter()
            .any(|e| e["event_type"] == "gm_narration" && e["text"] == NASTY[1]),
        "the narration is in the log"
    );
}

fn play(dir: &Path) -> std::process::Output {
    troupe()
        .current_dir(dir)
        .args([
            "play",
            "campaign.json",
            "--gm-script",
            "gm.yaml",
            "--seed",
            "7",
        ])
        .output()
        .unwrap()
}

/// The terminal GM typing nasty commands and narration, then quitting.
#[test]
fn the_terminal_takes_nasty_commands_and_narration() {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["campaign.json", "campaign.replay.jsonl"]);
    let input = "/roll 2d6+İ\n/roll ٣d6\n/ß\n/\u{0}\n/roll d\u{301}6\nHello Galvin. İ the éé Galvin.\n/quit\n";
    let out = troupe()
        .current_dir(dir.path())
        .args(["play", "campaign.json", "--seed", "3"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
