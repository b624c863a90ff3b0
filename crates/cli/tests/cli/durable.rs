#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Sessions that survive anything: the real binary killed with SIGKILL inside every phase and
//! resumed, Ctrl-C, a torn log tail, undo, replay and the database's version guard.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

use crate::support;
use support::{DEMO, campaign_with, read_log, troupe};

fn campaign_dir() -> tempfile::TempDir {
    campaign_with(&DEMO)
}

const PLAY: [&str; 6] = [
    "play",
    "campaign.json",
    "--gm-script",
    "demo.gm.yaml",
    "--seed",
    "7",
];
const RESUME: [&str; 3] = ["resume", "--gm-script", "demo.gm.yaml"];

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = troupe().current_dir(dir).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?} failed:\n{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout + &stderr
}

fn log_of(dir: &Path) -> Vec<Value> {
    read_log(&dir.join("logs/session-1.jsonl"))
}

/// An event with what legitimately differs between two runs taken out: when it happened, how
/// long the (replayed) model took, the session id (it carries the start time) and the position
/// in the log (a resume adds its own marker).
fn normalised(e: &Value) -> Value {
    let mut e = e.clone();
    let o = e.as_object_mut().unwrap();
    for k in ["timestamp", "seq", "session_id", "latency_ms"] {
        o.remove(k);
    }
    e
}

/// The story a log tells, without resume markers and the end of the killed run.
fn story(log: &[Value]) -> Vec<Value> {
    log.iter()
        .filter(|e| e["event_type"] != "session_resumed")
        .map(normalised)
        .collect()
}

/// Start `troupe play` paused after `n` events; returns once it says it has paused.
fn play_paused(dir: &Path, n: u64) -> Child {
    support::spawn_paused(dir, &PLAY, "TROUPE_PAUSE_AFTER_EVENT", n)
}

fn sigkill(mut child: Child) {
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
}

fn baseline() -> Vec<Value> {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    log_of(dir.path())
}

/// The kill points: for every phase of turn 2 (which has every phase, a validation retry and
/// LASER FEELINGS), just after the phase starts and just before it completes.
fn kill_points(log: &[Value]) -> Vec<(String, u64)> {
    let mut points = Vec::new();
    for (i, e) in log.iter().enumerate() {
        if e["turn_number"] != 2 {
            continue;
        }
        let phase = e["phase"].as_str().unwrap_or("").to_string();
        if e["event_type"] == "phase_started" {
            points.push((format!("start of {phase}"), i as u64 + 1));
        }
        if e["event_type"] == "phase_completed" {
            points.push((format!("end of {phase}"), i as u64));
        }
    }
    points.dedup_by_key(|p| p.1);
    points
}

#[test]
fn a_session_killed_in_any_phase_resumes_to_the_same_story() {
    let expected = baseline();
    let points = kill_points(&expected);
    let phases: std::collections::BTreeSet<&str> = expected
        .iter()
        .filter(|e| e["turn_number"] == 2 && e["event_type"] == "phase_started")
        .filter_map(|e| e["phase"].as_str())
        .collect();
    assert_eq!(phases.len(), 14, "turn 2 visits every phase: {phases:?}");

    for (label, n) in points {
        let dir = campaign_dir();
        sigkill(play_paused(dir.path(), n));
        let before = log_of(dir.path());
        assert!(
            before.len() as u64 >= n,
            "{label}: every committed event is on disk"
        );
        let out = run_ok(dir.path(), &RESUME);
        assert!(out.contains("Resuming"), "{label}: {out}");
        let after = log_of(dir.path());
        assert_eq!(
            after
                .iter()
                .filter(|e| e["event_type"] == "session_resumed")
                .count(),
            1,
            "{label}"
        );
        let (got, want) = (story(&after), story(&expected));
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b);
            panic!(
                "{label} (killed after {n} events): the resumed story differs at {at:?}:\n got {}\nwant {}",
                at.map(|i| got[i].to_string()).unwrap_or_default(),
                at.map(|i| want[i].to_string()).unwrap_or_default(),
            );
        }
    }
}

#[test]
fn a_torn_log_tail_is_detected_and_rewritten_from_the_database() {
    let expected = baseline();
    let dir = campaign_dir();
    sigkill(play_paused(dir.path(), 40));
    // Half of the last line survives, as after a crash mid-write.
    let path = dir.path().join("logs/session-1.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = text.trim_end().rfind('\n').unwrap() + 30;
    std::fs::write(&path, text.as_bytes().get(..cut).unwrap()).unwrap();

    let out = run_ok(dir.path(), &RESUME);
    assert!(out.contains("half an event"), "{out}");
    assert!(out.contains("rewriting it from campaign.db"), "{out}");
    assert_eq!(story(&log_of(dir.path())), story(&expected));
}

#[test]
fn ctrl_c_saves_and_resume_continues() {
    let dir = campaign_dir();
    // The terminal GM, waiting at its first prompt, gets SIGINT.
    let mut child = std::process::Command::cargo_bin("troupe")
        .unwrap()
        .current_dir(dir.path())
        .args(["play", "campaign.json", "--seed", "7"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("Enter narration:") {
        let mut buf = String::new();
        // The prompt has no newline after it: read what arrives.
        let n = {
            let chunk = stdout.fill_buf().unwrap();
            buf.push_str(&String::from_utf8_lossy(chunk));
            chunk.len()
        };
        assert!(n > 0, "troupe exited before prompting:\n{seen}");
        stdout.consume(n);
        seen.push_str(&buf);
    }
    // Keep standard input open, as a GM's terminal would: `wait` would otherwise close it, and
    // the end of input (which also ends a session) could race the signal.
    let stdin = child.stdin.take();
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    drop(stdin);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(exit.code(), Some(130), "{exit:?}\n{seen}\n{stderr}");
    let log = log_of(dir.path());
    let last = log.last().unwrap();
    assert_eq!(last["event_type"], "session_ended");
    assert_eq!(last["reason"], "interrupted by Ctrl-C");

    let out = run_ok(dir.path(), &RESUME);
    let log = log_of(dir.path());
    assert!(out.contains("Resuming"), "{out}");
    assert_eq!(
        log.iter()
            .filter(|e| e["event_type"] == "turn_completed")
            .count(),
        3,
        "the script played its three turns after the resume"
    );
    let sessions = run_ok(dir.path(), &["sessions"]);
    assert!(sessions.contains("    1  "), "{sessions}");
    assert!(
        sessions.contains("ended (the GM ended the session)"),
        "{sessions}"
    );
}

#[test]
fn a_replay_reproduces_the_transcript_byte_for_byte() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let out = run_ok(dir.path(), &["replay", "1"]);
    assert!(out.contains("identical"), "{out}");
    assert!(out.contains("Its events are session 1's too"), "{out}");
    let original = run_ok(dir.path(), &["transcript", "1"]);
    let replayed =
        std::fs::read_to_string(dir.path().join("replays/session-1-replay-1.md")).unwrap();
    // `run_ok` appends stderr, which is empty for `transcript`.
    assert_eq!(original, replayed);
    assert!(original.contains("## Turn 3"), "{original}");
    // The campaign's own sessions are untouched by a replay.
    let sessions = run_ok(dir.path(), &["sessions"]);
    assert!(!sessions.contains("    2  "), "{sessions}");
}

#[test]
fn undo_takes_back_the_last_gm_decision_and_keeps_it_in_the_log() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let out = run_ok(dir.path(), &["undo"]);
    assert!(out.contains("the outcome narration (turn 3)"), "{out}");
    run_ok(dir.path(), &RESUME);

    let log = log_of(dir.path());
    let undone = log
        .iter()
        .find(|e| e["event_type"] == "events_undone")
        .unwrap();
    let from = undone["from_seq"].as_u64().unwrap();
    // The taken-back outcome is still in the log, and was asked for again.
    let outcomes: Vec<u64> = log
        .iter()
        .filter(|e| e["event_type"] == "gm_outcome" && e["turn_number"] == 3)
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[0], from);
    // What stands tells each turn once.
    let transcript = run_ok(dir.path(), &["transcript", "1"]);
    assert_eq!(transcript.matches("## Turn 3").count(), 1, "{transcript}");
    assert_eq!(transcript.matches("Outcome").count(), 3, "{transcript}");

    // A whole turn can go too.
    let out = run_ok(dir.path(), &["undo", "--turn"]);
    assert!(out.contains("turn 4"), "{out}");
    let out = run_ok(dir.path(), &["undo", "--turn"]);
    assert!(out.contains("turn 3"), "{out}");
    let sessions = run_ok(dir.path(), &["sessions"]);
    assert!(sessions.contains("unfinished"), "{sessions}");
}

#[test]
fn a_database_from_a_newer_troupe_is_refused_untouched() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let db = dir.path().join("campaign.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA user_version = 99;").unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    for args in [&["sessions"][..], &RESUME[..], &PLAY[..]] {
        let out = troupe()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains("written by a newer troupe"), "{stderr}");
        assert!(stderr.contains("schema 99"), "{stderr}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn two_troupes_cannot_play_one_campaign_at_once() {
    let dir = campaign_dir();
    let first = play_paused(dir.path(), 5);
    let out = troupe()
        .current_dir(dir.path())
        .args(PLAY)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("another troupe is using this campaign"),
        "{stderr}"
    );
    sigkill(first);
    // The lock dies with its process: the campaign can be resumed at once.
    run_ok(dir.path(), &RESUME);
}

#[test]
fn sessions_carry_on_numbering_and_list_their_state() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    sigkill(play_paused(dir.path(), 10));
    let out = run_ok(dir.path(), &["sessions"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].trim_start().starts_with("1 "), "{out}");
    assert!(
        lines[1].contains("  3  ") && lines[1].contains("ended"),
        "{out}"
    );
    assert!(lines[2].trim_start().starts_with("2 "), "{out}");
    assert!(lines[2].contains("unfinished"), "{out}");
    // A new `play` says the unfinished one can be resumed, and becomes session 3.
    let out = run_ok(dir.path(), &PLAY);
    assert!(out.contains("session 2 did not finish"), "{out}");
    assert!(dir.path().join("logs/session-3.jsonl").exists());
}

#[test]
fn session_commands_in_a_directory_never_played_say_so_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["sessions"][..],
        &["resume"],
        &["undo"],
        &["transcript", "1"],
        &["replay", "1"],
    ] {
        let out = troupe()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr.contains("no sessions have been played"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
