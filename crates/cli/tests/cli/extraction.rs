#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Facts drawn from free text by the model, through the real binary with recorded replies: a
//! GM's new word closes the old fact, a character's contrary claim does not override canon, a
//! malformed reply falls back to the raw episode, and a replay serves the recorded extraction.

use std::path::Path;

use serde_json::{Value, json};

use crate::support;
use support::{examples, read_log, run};

const SCRIPT: &str = r#"
turns:
  - narration: "@Galvin is the harbour master of Port Vex."
    ruling: {no_roll: "Docking is routine."}
    outcome: "The dock clamps lock."
  - narration: "@Galvin is now the governor of Port Vex."
    ruling: {no_roll: "Nothing to risk."}
    outcome: "The crowd cheers the new governor."
  - narration: "@Galvin waits on the comms channel."
    ruling: {no_roll: "A greeting."}
    outcome: "Static answers."
  - narration: "@Vos the smuggler waits by the airlock with a crate of stolen coolant."
    ruling: {no_roll: "Just talk."}
    outcome: "Vos shrugs."
"#;

fn reply(agent: &str, purpose: &str, content: Value) -> String {
    json!({"agent": agent, "purpose": purpose, "content": content}).to_string()
}

fn fact(episode: u32, subject: &str, attribute: &str, value: &str, statement: &str) -> Value {
    json!({"episode": episode, "subject": subject, "attribute": attribute, "value": value,
           "statement": statement})
}

/// One turn's replies: no questions, a strategy, the action, a reaction, then the extraction.
fn turn(action: &str, extraction: &[String]) -> Vec<String> {
    let mut lines = vec![
        reply("*", "clarifying_questions", json!({"questions": []})),
        reply(
            "*",
            "strategic_intent",
            json!({"strategy": "Keep it friendly.", "directive": "Greet whoever is there."}),
        ),
        reply(
            "*",
            "character_action",
            json!({"action": action, "dialogue": "", "task_type": "feelings",
                   "prepared": false, "expert": false, "justification": "Talking."}),
        ),
        reply(
            "*",
            "character_reaction",
            json!({"reaction": "Zara-7 tilts her head."}),
        ),
    ];
    lines.extend(extraction.iter().cloned());
    lines
}

fn replies() -> String {
    let mut lines = Vec::new();
    lines.extend(turn(
        "I greet the harbour master politely over the comms.",
        &[reply(
            "memory",
            "extract_facts",
            json!({"facts": [fact(1, "Galvin", "role", "harbour master",
                                  "Galvin is the harbour master of Port Vex.")]}),
        )],
    ));
    // Turn 2's action is one the shipped detector lets through: "I congratulate the new
    // governor with a formal bow." is sent back by it at 73% (a false alarm on a plain intent,
    // kept in BENCHMARKS.md's issue-47 section), and this test is about memory, not the check.
    lines.extend(turn(
        "I bow formally to the new governor and offer my congratulations.",
        &[reply(
            "memory",
            "extract_facts",
            // "job" is the same slot as "role".
            json!({"facts": [fact(1, "Galvin", "job", "governor",
                                  "Galvin is the governor of Port Vex.")]}),
        )],
    ));
    lines.extend(turn(
        "I hail Galvin, the harbour master, and ask for a berth.",
        &[reply(
            "memory",
            "extract_facts",
            json!({"facts": [
                fact(2, "Galvin", "role", "harbour master", "Galvin is the harbour master."),
                // Invented: nothing in the text says so; dropped.
                fact(1, "Galvin", "allegiance", "pirates", "Galvin works for the pirates.")
            ]}),
        )],
    ));
    // A malformed reply, and a malformed repair: the turn falls back to the raw episodes.
    lines.extend(turn(
        "I ask Vos what is in the crate.",
        &[
            reply("memory", "extract_facts", json!("Sure! Galvin is nice.")),
            reply("memory", "extract_facts", json!({"facts": "none"})),
        ],
    ));
    lines.join("\n") + "\n"
}

fn campaign_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("campaign.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("campaign.replay.jsonl"), replies()).unwrap();
    std::fs::write(dir.path().join("galvin.gm.yaml"), SCRIPT).unwrap();
    dir
}

fn of<'a>(log: &'a [Value], event_type: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|e| e["event_type"] == event_type)
        .collect()
}

fn play(dir: &Path) -> Vec<Value> {
    run(
        dir,
        &[
            "play",
            "campaign.json",
            "--gm-script",
            "galvin.gm.yaml",
            "--seed",
            "3",
        ],
    );
    read_log(&dir.join("logs/session-1.jsonl"))
}

#[test]
fn the_gms_new_word_closes_the_old_fact_and_a_characters_claim_does_not_override_it() {
    let dir = campaign_dir();
    let d = dir.path();
    let log = play(d);
    let storage = of(&log, "memory_storage");
    let extraction: Vec<&str> = storage
        .iter()
        .map(|s| s["extraction"].as_str().unwrap_or("(none)"))
        .collect();
    assert_eq!(extraction.len(), 4, "{storage:#?}");
    assert_eq!(
        &extraction[..3],
        ["model", "model", "model"],
        "{storage:#?}"
    );
    // The extraction call is logged like every call, for the memory, once per storage step.
    let calls: Vec<&Value> = of(&log, "model_call")
        .into_iter()
        .filter(|c| c["purpose"] == "extract_facts")
        .collect();
    assert!(
        calls
            .iter()
            .all(|c| c["agent"] == "memory" && c["layer"] == "memory")
    );
    assert!(
        calls[0]["messages"]
            .to_string()
            .contains("[1] GM: @Galvin is the harbour master of Port Vex."),
        "{}",
        calls[0]["messages"]
    );
    // The second storage step's prompt knows Galvin already.
    assert!(calls[1]["messages"].to_string().contains("- Galvin"));

    // Turn 2: the GM's new word closed the old fact, and the conflict names both sources.
    let t2 = &storage[1]["stored"];
    assert_eq!(t2["extracted"], 1, "{t2}");
    let conflicts = t2["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{t2}");
    let c = conflicts[0].as_str().unwrap();
    assert!(
        c.starts_with("galvin/role: \"Galvin is the harbour master of Port Vex.\" (GM narration) → \"Galvin is the governor of Port Vex.\" (GM narration), superseded"),
        "{c}"
    );
    // Turn 3: the character's contrary claim is kept as its belief but does not override
    // canon; the invented fact is dropped with why.
    let t3 = &storage[2]["stored"];
    let c = t3["conflicts"][0].as_str().unwrap();
    assert!(
        c.contains("(GM narration) → \"Galvin is the harbour master.\" (character interpretation), kept_old"),
        "{t3}"
    );
    let dropped = t3["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{t3}");
    assert!(dropped[0].as_str().unwrap().contains("pirates"), "{t3}");

    // What memory now says about Galvin: the governor, not the harbour master.
    let out = run(d, &["memory", "query", "Galvin", "--json", "--top-k", "20"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let facts: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["fact"].as_str().unwrap())
        .collect();
    assert!(
        facts.contains(&"Galvin is the governor of Port Vex."),
        "{facts:?}"
    );
    assert!(
        !facts
            .iter()
            .any(|f| f.starts_with("Galvin is the harbour master")),
        "{facts:?}"
    );
    let stats = run(d, &["memory", "stats"]);
    assert!(stats.contains("2 conflicts"), "{stats}");
    assert!(
        stats.contains("galvin/role: \"Galvin is the harbour master of Port Vex.\" (GM narration) vs \"Galvin is the governor of Port Vex.\" (GM narration): superseded"),
        "{stats}"
    );
}

#[test]
fn a_malformed_reply_stores_the_raw_episode_and_says_so() {
    let dir = campaign_dir();
    let d = dir.path();
    let log = play(d);
    let storage = of(&log, "memory_storage");
    let last = storage[3];
    let extraction = last["extraction"].as_str().unwrap();
    assert!(extraction.starts_with("fallback: "), "{last}");
    // Asked once, repaired once, both logged.
    let t4: Vec<&Value> = of(&log, "model_call")
        .into_iter()
        .filter(|c| c["purpose"] == "extract_facts" && c["turn_number"] == 4)
        .collect();
    assert_eq!(t4.len(), 2);
    assert_eq!(t4[1]["repair"], true);
    // Nothing is lost: the narration is remembered verbatim.
    let out = run(d, &["memory", "query", "Who is the smuggler?", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["results"][0]["fact"],
        "Vos the smuggler waits by the airlock with a crate of stolen coolant.",
        "{v}"
    );
}

#[test]
fn memory_extraction_false_in_the_campaign_makes_no_call() {
    let dir = campaign_dir();
    let d = dir.path();
    let path = d.join("campaign.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    c["memory"] = json!({"extraction": false});
    std::fs::write(&path, c.to_string()).unwrap();
    let log = play(d);
    assert!(
        of(&log, "model_call")
            .iter()
            .all(|c| c["purpose"] != "extract_facts")
    );
    for s in of(&log, "memory_storage") {
        assert_eq!(s["extraction"], "off", "{s}");
    }
    // The raw episodes hold both of the GM's words, unsettled.
    let stats = run(d, &["memory", "stats"]);
    assert!(stats.contains("0 conflicts"), "{stats}");
}

#[test]
fn a_replay_serves_the_recorded_extraction_and_reads_the_same() {
    let dir = campaign_dir();
    let d = dir.path();
    let original = play(d);
    let out = run(d, &["replay", "1"]);
    assert!(out.contains("identical"), "{out}");
    // Every event, the extraction prompts with the names memory knew included.
    assert!(out.contains("Its events are session 1's too"), "{out}");
    let replayed = read_log(&d.join("replays/session-1-replay-1.jsonl"));
    let extraction = |log: &[Value]| -> Vec<(Value, Value, Value, Value)> {
        of(log, "model_call")
            .into_iter()
            .filter(|c| c["purpose"] == "extract_facts")
            .map(|c| {
                (
                    c["turn_number"].clone(),
                    c["messages"].clone(),
                    c["reply"].clone(),
                    c["error"].clone(),
                )
            })
            .collect()
    };
    let prompts = extraction(&original);
    assert!(
        prompts
            .iter()
            .any(|c| c.1.to_string().contains("Names already known")),
        "no extraction prompt listed a known name: {prompts:?}"
    );
    assert_eq!(prompts, extraction(&replayed));
    let storage = |log: &[Value]| -> Vec<Value> {
        of(log, "memory_storage")
            .into_iter()
            .map(|s| json!([s["extraction"], s["stored"], s["turns"]]))
            .collect()
    };
    assert_eq!(storage(&original), storage(&replayed));
}
