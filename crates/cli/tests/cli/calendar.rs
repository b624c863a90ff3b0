#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Issue 33 (seed 001): the GM ends scenes and lets days pass, through the real binary. A scene's
//! end is a memory storage trigger; the story's day carries into the next session, dates what
//! memory stores and answers "what happened on day N"; replay and undo know both marks.

use std::path::Path;

use serde_json::Value;

use crate::support;
use support::{DEMO, copy_examples, read_log, run, troupe};

const DAYS_SCRIPT: &str = "turns:
  - narration: >-
      The Raptor drifts into the debris field of an abandoned relay station. The fuel gauge
      reads twelve percent.
    outcome: >-
      The Raptor docks with a shudder and takes on what fuel the station still holds.
    scene_ends: The relay station
    days_pass: 13
  - narration: >-
      Far from the station, the envoy Varro of the Spire of Ash hails the Raptor and asks
      for passage to the Glass Reach.
    outcome: >-
      Varro's shuttle locks onto the Raptor's airlock and the envoy comes aboard with two
      sealed crates.
";

const NEXT_SCRIPT: &str = "turns:
  - narration: >-
      In the Glass Reach, a broker named Ilsa offers to buy the sealed crates.
    outcome: >-
      Ilsa pays in fuel cells and leaves without a word.
";

/// The session the days script plays.
const PLAY_DAYS: [&str; 6] = [
    "play",
    "campaign.json",
    "--gm-script",
    "days.gm.yaml",
    "--seed",
    "7",
];

fn campaign() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &DEMO);
    std::fs::write(dir.path().join("days.gm.yaml"), DAYS_SCRIPT).unwrap();
    std::fs::write(dir.path().join("next.gm.yaml"), NEXT_SCRIPT).unwrap();
    dir
}

fn session_log(dir: &Path, n: u32) -> Vec<Value> {
    read_log(&dir.join(format!("logs/session-{n}.jsonl")))
}

fn types(log: &[Value]) -> Vec<&str> {
    log.iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect()
}

/// The events right after turn `turn`'s outcome.
fn after_outcome(log: &[Value], turn: u64) -> Vec<Value> {
    let at = log
        .iter()
        .position(|e| e["event_type"] == "gm_outcome" && e["turn_number"] == turn)
        .unwrap();
    log[at + 1..].iter().take(2).cloned().collect()
}

#[test]
fn a_scripted_gm_ends_a_scene_lets_days_pass_and_memory_knows_the_day() {
    let dir = campaign();
    let d = dir.path();
    let out = run(d, &PLAY_DAYS);
    assert!(
        out.contains("── The scene ends: The relay station. ──"),
        "{out}"
    );
    assert!(
        out.contains("── 13 days pass. It is now day 14. ──"),
        "{out}"
    );

    let log = session_log(d, 1);
    let marks = after_outcome(&log, 1);
    assert_eq!(marks[0]["event_type"], "scene_ended", "{marks:?}");
    assert_eq!(marks[0]["title"], "The relay station");
    assert_eq!(marks[1]["event_type"], "time_passed");
    assert_eq!(marks[1]["days"], 13);
    // The scene's end is a storage trigger: turn 1 goes into memory at its own storage step.
    let stored = log
        .iter()
        .find(|e| e["event_type"] == "memory_storage" && e["turn_number"] == 1)
        .unwrap();
    assert_eq!(stored["trigger"], "the GM ended the scene", "{stored}");
    assert_eq!(stored["turns"], serde_json::json!([1]), "{stored}");
    assert!(
        !log.iter()
            .any(|e| e["event_type"] == "session_started" && e.get("day").is_some()),
        "the first day is not written"
    );
    // The report tells both, as text.
    run(d, &["report", "1", "-o", "r.html"]);
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(
        html.contains("<b>The scene ends:</b> The relay station")
            && html.contains("<b>13 days pass.</b>"),
        "the report shows the scene's end and the days"
    );
    // And so does the transcript.
    let md = run(d, &["transcript", "1"]);
    assert!(
        md.contains("**[GM]** The scene ends: The relay station.")
            && md.contains("**[GM]** 13 days pass. It is now day 14."),
        "{md}"
    );

    // The next session begins on the day the last one left the story.
    run(
        d,
        &[
            "play",
            "campaign.json",
            "--gm-script",
            "next.gm.yaml",
            "--seed",
            "8",
        ],
    );
    let log2 = session_log(d, 2);
    assert_eq!(log2[0]["event_type"], "session_started");
    assert_eq!(log2[0]["day"], 14, "{}", log2[0]);
    // The AI player knows the day too.
    let player_call = log2
        .iter()
        .find(|e| e["event_type"] == "model_call" && e["agent"] == "alex")
        .unwrap();
    assert!(
        player_call["messages"]
            .to_string()
            .contains("It is day 14 of the story."),
        "{player_call}"
    );

    // Memory dates what it stored by the story's calendar.
    let ask = |q: &str| -> Vec<String> {
        let v: Value =
            serde_json::from_str(&run(d, &["memory", "query", q, "--json", "--top-k", "20"]))
                .unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} [{}]", r["fact"], r["formed_at"]))
            .collect()
    };
    let day14 = ask("What happened on day 14?");
    assert!(
        day14.iter().any(|f| f.contains("Varro")),
        "the envoy came on day 14: {day14:#?}"
    );
    assert!(
        day14.iter().any(|f| f.contains("Ilsa")),
        "session 2 was on day 14 too: {day14:#?}"
    );
    assert!(
        day14.iter().all(|f| f.ends_with("day 14\"]")),
        "only what happened on day 14: {day14:#?}"
    );
    let day1 = ask("What happened on day 1?");
    assert!(
        day1.iter().any(|f| f.contains("relay station")),
        "{day1:#?}"
    );
    assert!(
        day1.iter()
            .all(|f| f.ends_with("day 1\"]") && !f.contains("Varro") && !f.contains("Ilsa")),
        "{day1:#?}"
    );
}

#[test]
fn a_replay_marks_the_story_where_the_session_did() {
    let dir = campaign();
    let d = dir.path();
    run(d, &PLAY_DAYS);
    run(d, &["replay", "1"]);
    let replayed = read_log(&d.join("replays/session-1-replay-1.jsonl"));
    let original = session_log(d, 1);
    let marks = |log: &[Value]| -> Vec<String> {
        log.iter()
            .filter(|e| {
                matches!(
                    e["event_type"].as_str(),
                    Some("gm_outcome" | "scene_ended" | "time_passed" | "gm_narration")
                )
            })
            .map(|e| format!("{} {}", e["turn_number"], e["event_type"]))
            .collect()
    };
    assert_eq!(marks(&replayed), marks(&original));
    assert!(types(&replayed).contains(&"time_passed"));
}

#[test]
fn the_terminal_gm_ends_scenes_and_passes_time_with_commands() {
    let dir = campaign();
    let d = dir.path();
    let out = troupe()
        .current_dir(d)
        .args(["play", "campaign.json", "--seed", "3"])
        .write_stdin("/help\n/time 3\n/info\n/time soon\n/scene Docking\n/quit\n")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("Day 4, turn 1"),
        "/info shows the day: {stdout}"
    );
    assert!(
        stdout.contains("/time needs a number of days from 1 to 3650"),
        "{stdout}"
    );
    assert!(stdout.contains("/scene [TITLE]"), "help lists it: {stdout}");
    let log = session_log(d, 1);
    let passed = log
        .iter()
        .find(|e| e["event_type"] == "time_passed")
        .unwrap();
    assert_eq!(passed["days"], 3);
    let ended = log
        .iter()
        .find(|e| e["event_type"] == "scene_ended")
        .unwrap();
    assert_eq!(ended["title"], "Docking");

    // Taken back like any GM decision: the last one first.
    let undo = run(d, &["undo"]);
    assert!(undo.contains("the scene's end"), "{undo}");
    let undo = run(d, &["undo"]);
    assert!(undo.contains("the days that passed"), "{undo}");
    let live: Vec<String> = troupe_log(d);
    assert!(
        !live
            .iter()
            .any(|t| t == "time_passed" || t == "scene_ended"),
        "{live:?}"
    );
}

/// The standing event types of session 1, from `troupe log`.
fn troupe_log(dir: &Path) -> Vec<String> {
    run(dir, &["log", "1"])
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| e["event_type"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_ai_gm_ends_a_scene_and_lets_days_pass_in_its_outcome() {
    let dir = support::campaign_with(&["aigm.json", "aigm.replay.jsonl"]);
    let d = dir.path();
    // The AI GM's first outcome closes the scene and lets two days pass.
    let replay = d.join("aigm.replay.jsonl");
    let text = std::fs::read_to_string(&replay).unwrap();
    let text = text.replacen(
        "\"end_session\": false}}",
        "\"end_session\": false, \"scene_ends\": true, \"days_pass\": 2}}",
        1,
    );
    std::fs::write(&replay, text).unwrap();
    let out = run(d, &["play", "aigm.json", "--seed", "7", "--turns", "2"]);
    assert!(out.contains("played the 2 turns asked for"), "{out}");

    let log = session_log(d, 1);
    let marks = after_outcome(&log, 1);
    assert_eq!(marks[0]["event_type"], "scene_ended", "{marks:?}");
    assert!(marks[0].get("title").is_none());
    assert_eq!(marks[1]["event_type"], "time_passed");
    assert_eq!(marks[1]["days"], 2);
    let narrations: Vec<&Value> = log
        .iter()
        .filter(|e| {
            e["event_type"] == "model_call" && e["agent"] == "gm" && e["purpose"] == "gm_narration"
        })
        .collect();
    let prompt = |i: usize| narrations[i]["messages"].to_string();
    assert!(
        prompt(0).contains("It is day 1 of the story."),
        "{}",
        prompt(0)
    );
    assert!(
        prompt(1).contains("It is day 3 of the story."),
        "{}",
        prompt(1)
    );
    // The second outcome marked nothing.
    assert_eq!(
        log.iter()
            .filter(|e| matches!(
                e["event_type"].as_str(),
                Some("scene_ended" | "time_passed")
            ))
            .count(),
        2
    );
}
