#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Campaign memory through the real binary: what one session leaves, the next recalls; the
//! memory commands a researcher uses; undo forgets what it takes back.

use std::path::Path;

use serde_json::Value;

use crate::support;
use support::{DEMO, copy_examples, run, troupe};

fn campaign_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &DEMO);
    std::fs::write(
        dir.path().join("return.gm.yaml"),
        "turns:\n  - narration: >-\n      Back at the abandoned relay station, the maintenance drone guards the fuel cells again.\n    outcome: The drone lets you pass.\n",
    )
    .unwrap();
    dir
}

fn log(dir: &Path, n: u32) -> Vec<Value> {
    std::fs::read_to_string(dir.join(format!("logs/session-{n}.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn two_sessions() -> tempfile::TempDir {
    let dir = campaign_dir();
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
    run(
        d,
        &[
            "play",
            "campaign.json",
            "--gm-script",
            "return.gm.yaml",
            "--seed",
            "8",
        ],
    );
    dir
}

#[test]
fn the_next_session_recalls_the_last_and_keeps_player_secrets_from_the_character() {
    let dir = two_sessions();
    let log2 = log(dir.path(), 2);
    let recall = log2
        .iter()
        .find(|e| e["event_type"] == "memory_retrieved")
        .unwrap();
    let recalled = recall["recalled"].as_array().unwrap();
    assert!(!recalled.is_empty(), "{recall}");
    // Everything recalled comes from session 1, with its time, source and confidence.
    for r in recalled {
        let eps = r["episode_ids"].as_array().unwrap();
        assert!(
            eps.iter().all(|e| e.as_str().unwrap().starts_with("s1-")),
            "{r}"
        );
        assert!(
            r["formed_at"].as_str().unwrap().starts_with("last session"),
            "{r}"
        );
        let c = r["confidence"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&c), "{r}");
    }
    // The drone from session 1 is remembered.
    assert!(
        recalled
            .iter()
            .any(|r| r["text"].as_str().unwrap().contains("maintenance drone")),
        "{recall}"
    );
    // The player's own strategy is recalled by the player, never by the character.
    let strategy = |layer: &str| {
        recalled
            .iter()
            .filter(|r| r["layer"] == layer)
            .any(|r| r["episode_ids"][0].as_str().unwrap().contains("strategy"))
    };
    assert!(strategy("player"), "{recall}");
    assert!(!strategy("character"), "{recall}");
    // The prompts carry the memories: the strategy call sees them, the character's prompt
    // sees its own layer's and never the player's plan.
    let prompt = |purpose: &str| {
        log2.iter()
            .find(|e| e["event_type"] == "model_call" && e["purpose"] == purpose)
            .unwrap()["messages"]
            .to_string()
    };
    assert!(prompt("strategic_intent").contains("What you remember"));
    assert!(prompt("strategic_intent").contains("My plan:"));
    let action = prompt("character_action");
    assert!(action.contains("What you remember"), "{action}");
    assert!(!action.contains("My plan:"), "{action}");
}

#[test]
fn memory_query_answers_with_confidence_source_time_and_episodes() {
    let dir = two_sessions();
    let d = dir.path();
    let out = run(
        d,
        &[
            "memory",
            "query",
            "What do we know about the drone?",
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{v}");
    for r in results {
        for field in [
            "fact",
            "confidence",
            "score",
            "source",
            "formed_at",
            "episode_ids",
        ] {
            assert!(!r[field].is_null(), "{field} missing in {r}");
        }
    }
    assert!(
        results[0]["fact"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("drone"),
        "{v}"
    );

    let text = run(d, &["memory", "query", "Who is Zorgon the Conqueror?"]);
    assert_eq!(text.trim(), "Nothing known.");

    // A character never recalls its player's plans; the player does.
    let q = "What was the plan for the drone?";
    let player = run(
        d,
        &[
            "memory", "query", q, "--as", "alex", "--json", "--top-k", "10",
        ],
    );
    let character = run(
        d,
        &[
            "memory",
            "query",
            q,
            "--as",
            "alex",
            "--character",
            "--json",
            "--top-k",
            "10",
        ],
    );
    assert!(player.contains("My plan:"), "{player}");
    assert!(!character.contains("My plan:"), "{character}");

    // One JSON line per question on standard input.
    let out = troupe()
        .current_dir(d)
        .args(["memory", "query", "--stdin"])
        .write_stdin("the hatch\n\nZorgon\nfuel gauge\n")
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["nothing_known"], true);
    assert_eq!(lines[2]["question"], "fuel gauge");
    assert_eq!(lines[2]["nothing_known"], false);
}

#[test]
fn import_export_round_trip_and_bad_lines_import_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("notes.jsonl"),
        "{\"id\":\"old-1\",\"session\":1,\"timestamp\":\"2025-01-01T10:00:00Z\",\"speaker\":\"gm\",\"text\":\"The smuggler Kessa owes the party 200 credits.\"}\n\
         {\"id\":\"old-2\",\"session\":2,\"timestamp\":\"2025-01-08T10:00:00Z\",\"speaker\":\"alex\",\"text\":\"Kessa hides her ship in the rings of Vell.\"}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("bad.jsonl"),
        "{\"id\":\"x\",\"session\":1}\nnot json\n",
    )
    .unwrap();
    let out = troupe()
        .current_dir(d)
        .args(["memory", "import", "bad.jsonl"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.jsonl, line 1:") && err.contains("bad.jsonl, line 2:"),
        "{err}"
    );
    assert!(err.contains("nothing was imported"), "{err}");

    let said = run(d, &["memory", "import", "notes.jsonl"]);
    assert!(said.contains("Imported 2 new episodes"), "{said}");
    let out = run(d, &["memory", "query", "Where does Kessa hide?", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"][0]["episode_ids"][0], "old-2", "{v}");
    // An imported note from a player ranks as a player observation: below the GM, above 0.7.
    let c = v["results"][0]["confidence"].as_f64().unwrap();
    assert!(c > 0.7 && c < 0.9, "{v}");

    run(d, &["memory", "export", "-o", "graph.jsonl"]);
    let graph = std::fs::read_to_string(d.join("graph.jsonl")).unwrap();
    let episodes: Vec<Value> = graph
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "episode")
        .collect();
    assert_eq!(episodes.len(), 2);
    // The exported episodes import into a fresh campaign as the same memory.
    let again = tempfile::tempdir().unwrap();
    let lines: Vec<String> = episodes
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("type");
            e.to_string()
        })
        .collect();
    std::fs::write(again.path().join("e.jsonl"), lines.join("\n")).unwrap();
    run(again.path(), &["memory", "import", "e.jsonl"]);
    assert_eq!(
        run(again.path(), &["memory", "stats"]),
        run(d, &["memory", "stats"])
    );
}

#[test]
fn undo_forgets_what_the_undone_turn_stored() {
    let dir = campaign_dir();
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
    let before = run(d, &["memory", "stats"]);
    // The last GM decision is turn 3's outcome (the session then ended at turn 4's narration).
    let said = run(d, &["undo"]);
    assert!(said.contains("from turn 3 on forgotten"), "{said}");
    let after = run(d, &["memory", "stats"]);
    assert_ne!(before, after);
    let out = run(
        d,
        &["memory", "query", "battered maintenance drone", "--json"],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    for r in v["results"].as_array().unwrap() {
        assert!(
            !r["episode_ids"][0].as_str().unwrap().starts_with("s1-t3"),
            "{r}"
        );
    }
    // Resuming replays turn 3 and remembers it again, once.
    run(d, &["resume", "--gm-script", "demo.gm.yaml"]);
    assert_eq!(run(d, &["memory", "stats"]), before);
}
