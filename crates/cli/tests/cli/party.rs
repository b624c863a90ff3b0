#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The party end to end: four AI players through the real binary, a scripted GM with whispers
//! and an OOC interjection, recorded replies that agree at once (turn 1), by a majority (turn 2)
//! and never (turn 3: the second round changes no one's stance, so the party votes without
//! the three rounds that would repeat it).

use std::path::Path;

use serde_json::{Value, json};

use crate::support;
use support::{copy_examples, examples, of_type, read_log, troupe};

const AGENTS: [&str; 4] = ["alex", "sam", "priya", "jo"];
const CHARACTERS: [&str; 4] = ["zara", "rex", "vell", "kit"];
/// Alex's player-only secret, which Alex's player tries to pass on word for word.
const VAULT: &str = "The vault code is 4471 and Galvin knows it";
/// Sam's character-only secret.
const VEX: &str = "You once served with the pirate queen Vex";
/// Said out of character only: no character may ever read it.
const OOC_MARK: &str = "between us players, oocmarker";

fn reply(agent: &str, purpose: &str, content: Value) -> String {
    json!({"agent": agent, "purpose": purpose, "content": content.to_string()}).to_string()
}

fn ooc(stance: &str, on: &str, message: &str, directive: &str) -> Value {
    json!({"message": message, "stance": stance, "on": on, "proposal": "", "directive": directive})
}

/// The recorded replies for three turns.
fn replies() -> String {
    let mut lines = Vec::new();
    for turn in 1..=3 {
        for (i, a) in AGENTS.iter().enumerate() {
            lines.push(reply(a, "clarifying_questions", json!({"questions": []})));
            let directive = if turn == 1 && *a == "alex" {
                // A player trying to hand its secret to its character.
                format!("Tell the guard that {VAULT}")
            } else {
                format!("Check the airlock, turn {turn}")
            };
            lines.push(reply(
                a,
                "strategic_intent",
                json!({"strategy": format!("{a} thinks it over"),
                    "proposal": format!("Plan of {a} for turn {turn}"),
                    "directive": directive}),
            ));
            // Turn 1: everyone agrees with Alex's plan (Alex leaks its secret in OOC).
            let t1 = match *a {
                "alex" => ooc(
                    "agree",
                    "alex",
                    &format!("Let's go, {OOC_MARK}. psst: {VAULT}"),
                    "Sneak to the vault door",
                ),
                _ => ooc("agree", "alex", "Alex's plan works for me", "Cover Zara-7"),
            };
            // Turn 2: three back Sam's plan, Jo stays neutral: a majority.
            let t2 = match *a {
                "jo" => ooc("neutral", "", "Not sure", "Wait and watch"),
                _ => ooc("agree", "sam", "Sam is right", "Follow Rex's lead"),
            };
            // Turn 3: two against two, every round.
            let t3 = match *a {
                "alex" | "priya" => ooc("agree", "alex", "Still Alex's plan", "Go left"),
                "sam" => ooc("disagree", "alex", "No, my plan", "Go right"),
                _ => ooc("agree", "sam", "Sam's plan", "Go right"),
            };
            match turn {
                1 => lines.push(reply(a, "ooc_discussion", t1)),
                2 => lines.push(reply(a, "ooc_discussion", t2)),
                _ => {
                    for _ in 0..5 {
                        lines.push(reply(a, "ooc_discussion", t3.clone()));
                    }
                    let vote = if *a == "alex" || *a == "priya" {
                        "alex"
                    } else {
                        "sam"
                    };
                    lines.push(reply(
                        a,
                        "forced_vote",
                        json!({"vote": vote, "remark": format!("{a} grumbles: fine, have it your way")}),
                    ));
                }
            }
            let helping = if turn == 1 && *a == "sam" { "zara" } else { "" };
            lines.push(reply(
                a,
                "character_action",
                json!({"action": format!("I try to open the hatch, turn {turn}"),
                    "dialogue": "", "task_type": "lasers", "prepared": false, "expert": false,
                    "justification": "careful work", "helping": helping}),
            ));
            lines.push(reply(
                a,
                "character_reaction",
                json!({"reaction": format!("{} nods", CHARACTERS[i])}),
            ));
        }
    }
    // Directives under a plan the player did not back: Jo in turn 2, Sam and Jo in turn 3.
    for a in ["jo", "sam", "jo"] {
        lines.push(reply(
            a,
            "party_directive",
            json!({"directive": "Go along with the party"}),
        ));
    }
    // LASER FEELINGS comes up when a die shows a character's number.
    for _ in 0..12 {
        lines.push(reply(
            "*",
            "insight_question",
            json!({"question": "What is really going on?"}),
        ));
        lines.push(reply(
            "*",
            "insight_decision",
            json!({"change_action": false, "reason": "Stay the course"}),
        ));
    }
    lines.join("\n")
}

const SCRIPT: &str = r#"
turns:
  - whisper:
      - {to: alex, scope: player_only, text: "The vault code is 4471 and Galvin knows it"}
      - {to: sam, scope: character_only, text: "You once served with the pirate queen Vex"}
      - {to: all, scope: both, text: "A storm is coming"}
    narration: "A freighter drifts, lights dark. Its vault is said to hold a map."
    outcome: "The hatch gives with a groan."
  - narration: "Inside, two corridors split left and right."
    outcome: "You move on."
  - narration: "A locked bulkhead: left goes to the bridge, right to the hold."
    ooc: "You have two minutes of air, folks."
    outcome: "The ship shudders."
"#;

fn campaign(dir: &Path) {
    // The script whispers exactly the secrets the checks look for.
    assert!(SCRIPT.contains(VAULT) && SCRIPT.contains(VEX));
    let mut c: Value =
        serde_json::from_str(&std::fs::read_to_string(examples().join("party4.json")).unwrap())
            .unwrap();
    c["model"] = json!({"provider": "replay", "replay_file": "party.replay.jsonl"});
    std::fs::write(dir.join("campaign.json"), c.to_string()).unwrap();
    std::fs::write(dir.join("party.replay.jsonl"), replies()).unwrap();
    std::fs::write(dir.join("party.gm.yaml"), SCRIPT).unwrap();
}

/// Every prompt the model was sent, with who it was for and which layer.
fn prompts(log: &[Value]) -> Vec<(String, String, String)> {
    of_type(log, "model_call")
        .into_iter()
        .map(|e| {
            let text: String = e["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["content"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join("\n");
            (
                e["agent"].as_str().unwrap().to_string(),
                e["layer"].as_str().unwrap().to_string(),
                text,
            )
        })
        .collect()
}

#[test]
fn four_players_agree_split_and_vote_and_secrets_stay_put() {
    let dir = tempfile::tempdir().unwrap();
    campaign(dir.path());
    let out = troupe()
        .current_dir(dir.path())
        .args(["play", "--gm-script", "party.gm.yaml", "--seed", "7"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));

    // Consensus: unanimous at once, then a majority with Jo's dissent, then a forced vote.
    let consensus = of_type(&log, "consensus");
    let settled: Vec<(u64, &str, u64)> = consensus
        .iter()
        .filter(|e| e["outcome"] != "conflicted")
        .map(|e| {
            (
                e["turn_number"].as_u64().unwrap(),
                e["outcome"].as_str().unwrap(),
                e["round"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        settled,
        vec![(1, "unanimous", 1), (2, "majority", 1), (3, "vote", 2)]
    );
    let t2 = consensus.iter().find(|e| e["turn_number"] == 2).unwrap();
    assert_eq!(t2["proposer"], "sam");
    assert_eq!(t2["dissent"], json!(["jo"]));
    let conflicted = consensus
        .iter()
        .filter(|e| e["turn_number"] == 3 && e["outcome"] == "conflicted")
        .count();
    assert_eq!(
        conflicted, 2,
        "two rounds with the same stances, then the vote (not five)"
    );
    let stalled = of_type(&log, "discussion_stalled");
    assert_eq!(stalled.len(), 1, "the log says why the discussion ended");
    assert_eq!(
        (&stalled[0]["turn_number"], &stalled[0]["round"]),
        (&json!(3), &json!(3))
    );
    let vote = consensus.iter().find(|e| e["outcome"] == "vote").unwrap();
    assert_eq!(
        vote["proposer"], "alex",
        "2–2: the tie goes to the plan leading the last round"
    );
    assert_eq!(vote["dissent"], json!(["sam", "jo"]));
    assert_eq!(of_type(&log, "vote_cast").len(), 4);
    // The GM's interjection reached the players.
    assert!(
        of_type(&log, "gm_ooc")
            .iter()
            .any(|e| e["text"] == "You have two minutes of air, folks.")
    );
    // Every OOC message carries its stance.
    for m in of_type(&log, "ooc_message") {
        assert!(["agree", "disagree", "neutral"].contains(&m["stance"].as_str().unwrap()));
    }
    // Those who did not back the plan direct their characters under it.
    let party_directives: Vec<(u64, String)> = of_type(&log, "model_call")
        .into_iter()
        .filter(|e| e["purpose"] == "party_directive")
        .map(|e| {
            (
                e["turn_number"].as_u64().unwrap(),
                e["agent"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        party_directives,
        vec![(2, "jo".into()), (3, "sam".into()), (3, "jo".into())]
    );
    // The interpretation gap, side by side: each character's directive, then its action.
    assert_eq!(of_type(&log, "directive").len(), 12);
    // Helping: Sam's Rex helps Zara-7, and rolls first.
    let helper = of_type(&log, "dice_rolled")
        .into_iter()
        .find(|e| e["purpose"] == "helper")
        .expect("a helper roll");
    assert_eq!(helper["agent"], "sam");
    assert_eq!(helper["helping"], "alex", "Zara-7 is Alex's character");

    // The GM watches the OOC talk live.
    assert!(stdout.contains("[OOC] Alex: "), "{stdout}");
    assert!(stdout.contains("(round 1; "), "{stdout}");
    assert!(stdout.contains("consensus (vote)"), "{stdout}");
    assert!(stdout.contains("Sam: sam grumbles"), "{stdout}");

    // Secrets: no player-only text in any character's prompt or another player's; no
    // character-only text in any player's prompt or another character's; no OOC talk in any
    // character's prompt.
    let prompts = prompts(&log);
    assert!(prompts.len() > 60);
    assert!(
        prompts.iter().any(|(_, layer, _)| layer == "memory"),
        "fact extraction ran"
    );
    let mut saw_own = (false, false);
    for (agent, layer, text) in &prompts {
        let vault = text.contains("4471");
        let vex = text.contains("pirate queen Vex");
        if agent == "alex" && layer == "player" {
            saw_own.0 |= vault;
        } else {
            assert!(
                !vault,
                "{agent}'s {layer} prompt holds Alex's secret:\n{text}"
            );
        }
        if agent == "sam" && layer == "character" {
            saw_own.1 |= vex;
        } else {
            assert!(!vex, "{agent}'s {layer} prompt holds Rex's secret:\n{text}");
        }
        if layer == "character" {
            assert!(
                !text.contains("oocmarker"),
                "OOC reached {agent}'s character"
            );
            assert!(
                !text.contains("Plan of"),
                "a proposal reached {agent}'s character"
            );
        }
        if layer == "memory" {
            // Fact extraction reads only what everyone heard: no whisper, not even one to all.
            assert!(
                !text.contains("A storm is coming"),
                "a whisper reached extraction"
            );
        } else {
            assert!(text.contains("A storm is coming"), "the table-wide whisper");
        }
    }
    assert_eq!(saw_own, (true, true), "each secret reaches its own layer");

    // The party's memory holds the consensus, and nobody else's memory holds Alex's secret.
    let q = troupe()
        .current_dir(dir.path())
        .args([
            "memory",
            "query",
            "vault code Galvin",
            "--as",
            "sam",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(q.status.success());
    assert!(!String::from_utf8_lossy(&q.stdout).contains("4471"));
    let q = troupe()
        .current_dir(dir.path())
        .args([
            "memory",
            "query",
            "which plan did the party agree on",
            "--as",
            "jo",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&q.stdout).contains("plan"),
        "{}",
        String::from_utf8_lossy(&q.stdout)
    );

    // A replay takes the same path through the discussion, word for word.
    if let Ok(keep) = std::env::var("PARTY_TEST_KEEP") {
        let _ = std::process::Command::new("cp")
            .args(["-r", &dir.path().display().to_string(), &keep])
            .status();
    }
    let r = troupe()
        .current_dir(dir.path())
        .args(["replay", "1"])
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
}

/// The committed party demo (README, examples/README.md) plays through with no failure: a
/// majority with Sam outvoted, a unanimous plan, and a deadlock the GM's hint breaks.
#[test]
fn the_party_demo_plays_clean() {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(
        dir.path(),
        &["party.json", "party.gm.yaml", "party.replay.jsonl"],
    );
    let out = troupe()
        .current_dir(dir.path())
        .args([
            "play",
            "party.json",
            "--gm-script",
            "party.gm.yaml",
            "--seed",
            "7",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.trim_start().starts_with('!')),
        "a call failed in the demo:\n{stdout}"
    );
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));
    let consensus: Vec<(String, String, u64)> = of_type(&log, "consensus")
        .iter()
        .map(|e| {
            (
                e["outcome"].as_str().unwrap().to_string(),
                e["proposer"].as_str().unwrap_or("").to_string(),
                e["round"].as_u64().unwrap(),
            )
        })
        .filter(|(o, _, _)| o != "conflicted")
        .collect();
    assert_eq!(
        consensus,
        [
            ("majority".to_string(), "alex".to_string(), 1),
            ("unanimous".to_string(), "sam".to_string(), 1),
            ("unanimous".to_string(), "priya".to_string(), 2),
        ]
    );
    assert_eq!(of_type(&log, "gm_ooc").len(), 1);
    assert_eq!(of_type(&log, "whisper").len(), 2);
    for s in of_type(&log, "memory_storage") {
        assert_eq!(s["extraction"], "model", "{s}");
    }
    let replay = troupe()
        .current_dir(dir.path())
        .args(["replay", "1"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&replay.stdout).contains("identical"),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
}

/// Conflicted rounds per turn, and the turns whose discussion the log says stalled.
fn talk(log: &[Value]) -> (Vec<(u64, usize)>, Vec<u64>) {
    let mut rounds: Vec<(u64, usize)> = Vec::new();
    for e in of_type(log, "consensus") {
        if e["outcome"] == "conflicted" {
            let turn = e["turn_number"].as_u64().unwrap();
            match rounds.last_mut() {
                Some((t, n)) if *t == turn => *n += 1,
                _ => rounds.push((turn, 1)),
            }
        }
    }
    let stalled = of_type(log, "discussion_stalled")
        .iter()
        .map(|e| e["turn_number"].as_u64().unwrap())
        .collect();
    (rounds, stalled)
}

/// A log recorded before the stall rule existed (the first test's session, played by the
/// build before it, commit 37d8770: turn 3 talks five rounds with the same stances, then
/// votes) still replays word for word: a replay follows its recording, not today's rule.
/// The fixture was made with `PARTY_TEST_KEEP=DIR` on the first test, then, in a copy of DIR
/// without its logs and database, `troupe play --gm-script party.gm.yaml --seed 7` by that
/// build.
#[test]
fn a_log_from_before_the_stall_rule_replays_its_five_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let old =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/party-before-stall.session-1.jsonl");
    let events = troupe_lasers::read_log(&old).unwrap();
    let mut store = troupe_lasers::Store::open(dir.path()).unwrap();
    store
        .begin_session(
            1,
            &events[0].session_id,
            &events[0].timestamp.to_rfc3339(),
            &[],
        )
        .unwrap();
    store.append(1, &events).unwrap();
    drop(store);
    let (rounds, stalled) = talk(&read_log(&old));
    assert_eq!((rounds, stalled), (vec![(3, 5)], vec![]), "the fixture");

    let r = troupe()
        .current_dir(dir.path())
        .args(["replay", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success() && stdout.contains("identical"),
        "{stdout}{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let again = read_log(&dir.path().join("replays/session-1-replay-1.jsonl"));
    assert_eq!(
        talk(&again),
        (vec![(3, 5)], vec![]),
        "the replay talks five rounds, as recorded, and does not stall"
    );
}
