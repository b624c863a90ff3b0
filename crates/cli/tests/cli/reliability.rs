#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A campaign is never bricked: the real binary killed between a step's memory writes and its
//! commit remembers exactly what an uninterrupted run does; a damaged stored event is named with
//! what to do, `troupe undo` takes it back, and the session goes on.

use std::path::Path;

use serde_json::Value;

use crate::support;
use support::{DEMO, copy_examples, of_type, read_log, run, spawn_paused, troupe};

const RETURN_SCRIPT: &str = "turns:\n  - narration: >-\n      Back at the abandoned relay station, the maintenance drone guards the fuel cells again.\n    outcome: The drone lets you pass.\n  - narration: The fuel depot is dark and cold.\n    outcome: You find the cells.\n";

/// A campaign that has played one session (the demo), with memory corruption turned on, so
/// what a recall counts (rehearsals) changes what later recalls say.
fn played_campaign() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &DEMO);
    std::fs::write(dir.path().join("return.gm.yaml"), RETURN_SCRIPT).unwrap();
    let d = dir.path();
    run(
        d,
        &[
            "play",
            "campaign.json",
            "--gm-script",
            "demo.gm.yaml",
            "--seed",
            "7",
        ],
    );
    let path = d.join("campaign.json");
    let mut campaign: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    campaign["corruption_strength"] = serde_json::json!(1.0);
    std::fs::write(&path, campaign.to_string()).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

const SESSION_2: [&str; 6] = [
    "play",
    "campaign.json",
    "--gm-script",
    "return.gm.yaml",
    "--seed",
    "8",
];

/// Each fact's rehearsal count, by id.
fn rehearsals(dir: &Path) -> Vec<(i64, i64)> {
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, rehearsals FROM memory_facts ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Every fact the memory holds, with where it came from, in order.
fn facts(dir: &Path) -> Vec<(i64, String, String)> {
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, text, scope FROM memory_facts ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// What each recall of a session brought back, in order.
fn recalls(dir: &Path) -> Vec<Value> {
    of_type(
        &read_log(&dir.join("logs/session-2.jsonl")),
        "memory_retrieved",
    )
    .into_iter()
    .map(|e| e["recalled"].clone())
    .collect()
}

#[test]
fn a_kill_between_a_memory_write_and_its_commit_changes_nothing_remembered() {
    let played = played_campaign();
    let (straight, killed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    copy_dir(played.path(), straight.path());
    copy_dir(played.path(), killed.path());

    run(straight.path(), &SESSION_2);
    let log = read_log(&straight.path().join("logs/session-2.jsonl"));
    let retrieved = of_type(&log, "memory_retrieved");
    assert!(
        retrieved.len() >= 2,
        "two turns, one recall each: {retrieved:?}"
    );
    assert!(
        retrieved
            .iter()
            .any(|e| e["recalled"].as_array().is_some_and(|r| !r.is_empty())),
        "the first session's memories are recalled"
    );

    // Kill it at each recall and each storage step: their memory writes are done, their
    // events are not committed.
    let stored = of_type(&log, "memory_storage");
    assert!(!stored.is_empty());
    for e in retrieved.iter().chain(&stored) {
        let seq = e["seq"].as_u64().unwrap();
        let mut child = spawn_paused(killed.path(), &SESSION_2, "TROUPE_PAUSE_BEFORE_COMMIT", seq);
        child.kill().unwrap();
        child.wait().unwrap();
        run(killed.path(), &["resume", "--gm-script", "return.gm.yaml"]);
        // The next kill point is in the same session, which is now finished: start it over
        // from the played campaign, so each kill is tested on its own.
        assert_eq!(recalls(killed.path()), recalls(straight.path()));
        assert_eq!(rehearsals(killed.path()), rehearsals(straight.path()));
        assert_eq!(facts(killed.path()), facts(straight.path()));
        for f in std::fs::read_dir(killed.path()).unwrap() {
            let p = f.unwrap().path();
            if p.is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
        copy_dir(played.path(), killed.path());
    }
}

/// The demo played, its last turn taken back (so the session is unfinished), and its snapshots
/// gone (as in a campaign.db written before they existed): a resume reads every event.
fn unfinished_session() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &DEMO);
    run(
        dir.path(),
        &[
            "play",
            "campaign.json",
            "--gm-script",
            "demo.gm.yaml",
            "--seed",
            "7",
        ],
    );
    run(dir.path(), &["undo", "--turn"]);
    let conn = rusqlite::Connection::open(dir.path().join("campaign.db")).unwrap();
    conn.execute("DELETE FROM snapshots", []).unwrap();
    dir
}

#[test]
fn a_damaged_event_is_named_undo_takes_it_back_and_the_session_goes_on() {
    let dir = unfinished_session();
    let d = dir.path();
    // Damage turn 2's action: a body that no longer reads, as a disk error or a newer troupe
    // could leave.
    let conn = rusqlite::Connection::open(d.join("campaign.db")).unwrap();
    let seq: u64 = conn
        .query_row(
            "SELECT MAX(seq) FROM events WHERE undone = 0 AND event_type = 'character_action'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE events SET body = '{\"event_type\": \"from_a_newer_troupe\", \"seq\": ' WHERE seq = ?1",
        [seq],
    )
    .unwrap();
    drop(conn);

    // Resume explains, twice the same way: no crash, no loop.
    for _ in 0..2 {
        let out = troupe()
            .current_dir(d)
            .args(["resume", "--gm-script", "demo.gm.yaml"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            stderr.contains(&format!("event {seq} cannot be read"))
                && stderr.contains("troupe undo"),
            "{stderr}"
        );
    }
    let said = run(d, &["undo"]);
    assert!(said.contains("Undid"), "{said}");
    let out = troupe()
        .current_dir(d)
        .args(["resume", "--gm-script", "demo.gm.yaml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = rusqlite::Connection::open(d.join("campaign.db")).unwrap();
    let (turns, ended): (u32, String) = conn
        .query_row(
            "SELECT turns, ended_reason FROM sessions WHERE number = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((turns, ended.as_str()), (3, "the GM ended the session"));
}
