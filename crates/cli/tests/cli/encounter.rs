//! Seed 003's encounter GM through the `troupe` binary, with recorded model replies: a spec from
//! opening to resolution with a person and two AI players, the NPC remembering a first run in a
//! second, a kill mid-encounter and a resume, undo, replay, check and list.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;
use support::{examples, run_with, troupe};

pub const SPEC: &str = "smithy.yaml";
/// Mara's lines: her first action, Enter for her roll, her second action.
pub const MARA: &str = "I offer to work the bellows myself\n\nI keep pumping the bellows\n";

/// A campaign directory with the party file (two of its AI players sit at the table), the spec
/// and its recorded replies.
pub fn campaign() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("party.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("encounters")).unwrap();
    for f in [SPEC, "smithy.replay.jsonl", "docking.yaml"] {
        std::fs::copy(
            examples().join("encounters").join(f),
            dir.path().join("encounters").join(f),
        )
        .unwrap();
    }
    dir
}

pub const RUN: [&str; 9] = [
    "encounter",
    "run",
    "encounters/smithy.yaml",
    "--players",
    "human:Mara,ai,ai",
    "--seed",
    "12",
    "--replay",
    "encounters/smithy.replay.jsonl",
];

pub fn log(dir: &Path, run: u32) -> Vec<Value> {
    let out = run_with(dir, &["encounter", "log", "--run", &run.to_string()], "");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn of<'a>(log: &'a [Value], kind: &str) -> Vec<&'a Value> {
    log.iter().filter(|e| e["event_type"] == kind).collect()
}

/// The run as the players lived it: what was said and rolled, without times and latencies.
pub fn story(log: &[Value]) -> Vec<String> {
    log.iter()
        .filter(|e| {
            [
                "narrated",
                "player_acted",
                "check_emitted",
                "check_rolled",
                "resolved",
            ]
            .contains(&e["event_type"].as_str().unwrap())
        })
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("at");
            e.as_object_mut().unwrap().remove("file");
            e.to_string()
        })
        .collect()
}

#[test]
fn a_person_and_two_ai_players_play_the_encounter_from_opening_to_resolution() {
    let dir = campaign();
    let out = run_with(dir.path(), &RUN, MARA);
    // The opening, the AI players' actions, Mara's roll with advantage, the resolution.
    assert!(out.contains("GM: Rain needles the shutters"), "{out}");
    assert!(out.contains("Zara-7: I study the ledger"), "{out}");
    assert!(out.contains("Mara, roll a d20 with advantage"), "{out}");
    assert!(
        out.contains("Mara rolls d20 [5, 15] → 15: success"),
        "{out}"
    );
    assert!(out.contains("The encounter is over."), "{out}");
    // Neither the malformed tool call nor the leaked DC reached the screen.
    assert!(
        !out.contains("fireball") && !out.contains("The smith snorts"),
        "{out}"
    );
    assert!(!out.contains("DC 14") && !out.contains("14"), "{out}");

    let log = log(dir.path(), 1);
    // Two replies re-asked: one refused for its shape (no such tool in the reply schema)
    // before the engine saw it, one that fit the schema but asked two players to roll at once.
    let rejected = of(&log, "gm_rejected");
    assert_eq!(rejected.len(), 2);
    assert!(
        rejected[0]["reply"].as_str().unwrap().contains("fireball"),
        "{}",
        rejected[0]
    );
    assert!(
        rejected[0]["problems"][0]
            .as_str()
            .unwrap()
            .contains("/tools/0"),
        "{}",
        rejected[0]
    );
    assert!(rejected[1].get("reply").is_none());
    let problem = rejected[1]["problems"][0].as_str().unwrap();
    assert!(
        problem.contains("one skill_check_emit per reply"),
        "{problem}"
    );
    let leak = of(&log, "leak_caught");
    assert_eq!(leak.len(), 1);
    assert_eq!(leak[0]["leaks"][0]["kind"], "dc");
    let check = &of(&log, "check_emitted")[0]["check"];
    assert_eq!(
        (check["player"].as_str(), check["dc"].as_i64()),
        (Some("p1"), Some(14))
    );
    assert_eq!(check["edge"], "advantage");
    let roll = &of(&log, "check_rolled")[0]["roll"];
    assert_eq!(roll["dice"].as_array().unwrap().len(), 2);
    // Every GM call logs its tokens per zone.
    for call in of(&log, "gm_called") {
        assert!(call["zones"]["system"].as_u64().unwrap() > 100, "{call}");
    }
    // The names: the smith from memory (empty on a first run: the fallback), the factor from
    // the built-in vocabulary.
    let names = &of(&log, "started")[0]["names"];
    assert_eq!(names[0]["origin"], "fallback");
    assert_eq!(names[0]["value"], "Brekka Anvilmourn");
    assert_eq!(names[1]["origin"], "vocabulary");

    // The summary file and the tally.
    let summaries: Vec<_> = std::fs::read_dir(dir.path().join("summaries"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(summaries.len(), 1);
    let name = summaries[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert!(name.starts_with("smithy-of-the-cold-forge-") && name.ends_with(".txt"));
    let summary = std::fs::read_to_string(&summaries[0]).unwrap();
    assert!(summary.starts_with("Encounter: The Cold Forge\nID: smithy-of-the-cold-forge\nDate: "));
    assert!(summary.contains("Outcome: relight_forge"), "{summary}");
    assert!(summary.contains("Players: Mara, Alex (Zara-7), Sam (Rex Nova)"));
    let tally: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("tally.json")).unwrap())
            .unwrap();
    assert_eq!(tally["smithy-of-the-cold-forge"]["runs"], 1);
    let list = run_with(dir.path(), &["encounter", "list"], "");
    assert!(
        list.contains("smithy-of-the-cold-forge") && list.contains("runs   1"),
        "{list}"
    );

    // Zara-7's overreaching action was sent back once, with the validator's feedback; the
    // restated one is her action.
    let sent = of(&log, "action_sent_back");
    assert_eq!(sent.len(), 1);
    assert!(sent[0]["text"].as_str().unwrap().contains("confesses"));
    assert!(!out.contains("confesses"), "{out}");
    assert!(out.contains("Zara-7: I point at the third page"), "{out}");

    // The GM's scorecard.
    let stats = run_with(dir.path(), &["encounter", "stats", "--json"], "");
    let card: Value = serde_json::from_str(stats.lines().next().unwrap()).unwrap();
    assert_eq!(card["refused_by_schema"], 1, "{card}");
    assert_eq!(card["refused_by_engine"], 1, "{card}");
    assert_eq!(
        (card["leaks_caught"].as_u64(), card["rewrites"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        (card["rounds"].as_u64(), card["checks"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(card["resolved"], true);
    assert_eq!(card["gm_turns"], 4, "{card}");
    assert_eq!(card["actions_sent_back"], 1, "{card}");

    // Replay derives every event again and finds them identical.
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("events replayed, identical"), "{replay}");

    // An ended run is not reopened by an undo (as a scene's is not): nothing is written.
    let out = troupe()
        .current_dir(dir.path())
        .args(["encounter", "undo"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("encounter run 1 has ended; `troupe encounter run SPEC` starts a new one"),
        "{err}"
    );
    assert_eq!(
        self::log(dir.path(), 1),
        log,
        "the ended run's log is as it was"
    );
}

/// Issue 33, through the binary: a GM model that repeats its preparation. The ledger check's
/// note is sent back, then withheld, and reaches the screen only after the check succeeds; a
/// DC said in words in what the roll is for never reaches the screen.
#[test]
fn a_checks_note_and_a_dc_in_words_never_reach_the_players_before_play_earns_them() {
    let dir = campaign();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/smithy-leaky.replay.jsonl"),
        dir.path().join("encounters/leaky.replay.jsonl"),
    )
    .unwrap();
    let args = [
        "encounter",
        "run",
        "encounters/smithy.yaml",
        "--players",
        "ai",
        "--seed",
        "12",
        "--replay",
        "encounters/leaky.replay.jsonl",
    ];
    let out = run_with(dir.path(), &args, "");
    let note = "debt was doubled by a forged entry";
    let (before, after) = out.split_once("rolls d20").expect(&out);
    assert!(!before.to_lowercase().contains(note), "{out}");
    assert!(
        before.contains("GM: Rain needles the shutters. [withheld] What do you do?"),
        "{out}"
    );
    assert!(!before.contains("twelve"), "{out}");
    assert!(
        before.contains("for a d20 roll: to read the ledger"),
        "{out}"
    );
    assert!(after.contains(note), "{out}");

    let log = log(dir.path(), 1);
    let caught: Vec<(String, bool)> = of(&log, "leak_caught")
        .iter()
        .map(|e| {
            (
                e["leaks"][0]["kind"].as_str().unwrap().to_string(),
                e["withheld"] == true,
            )
        })
        .collect();
    assert_eq!(
        caught,
        [
            ("check_note".to_string(), false),
            ("check_note".to_string(), true),
            ("dc".to_string(), false),
        ]
    );
    // What the AI player was shown is in the log (issue 29), and never held the note.
    let calls = of(&log, "player_called");
    assert!(!calls.is_empty());
    for call in calls {
        let shown = call["call"]["attempts"][0]["messages"].to_string();
        assert!(shown.contains("What does Zara-7 attempt now?"), "{call}");
        assert!(!shown.to_lowercase().contains(note), "{call}");
    }
}

/// Issue 33: a person at an encounter has the table's commands, and an action of theirs that
/// says what happens is explained; they may send it as it is (never rewritten, never blocked).
#[test]
fn a_person_at_an_encounter_has_table_commands_and_is_told_of_an_overreach() {
    let dir = campaign();
    // Seed 003's character registry: Mara's profile, for the GM and her sheet.
    let file = dir.path().join("campaign.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    c["profiles"] = serde_json::json!({"Mara": {"pronouns": "they/them", "class": "ranger"}});
    std::fs::write(&file, c.to_string()).unwrap();
    let input = "/help\n/info\n/whisper the factor pocketed a coin\n/dance\n\
                 I offer to work the bellows myself\n\n\
                 I punch the factor and he falls down unconscious\n\n";
    let out = run_with(dir.path(), &RUN, input);
    assert!(out.contains("Commands: /info"), "{out}");
    assert!(out.contains("You play Mara.\n  they/them; ranger"), "{out}");
    assert!(out.contains("(whispered to the GM)"), "{out}");
    assert!(
        out.contains("(/dance is not a command here. Commands: /whisper"),
        "{out}"
    );
    assert!(
        !out.contains("pocketed a coin"),
        "a whisper is not shown: {out}"
    );
    assert!(
        out.contains("Rephrase it, or press Enter to send it as it is"),
        "{out}"
    );
    assert!(out.contains("The encounter is over."), "{out}");

    let log = log(dir.path(), 1);
    let whispered = of(&log, "whispered");
    assert_eq!(whispered.len(), 1);
    assert_eq!(whispered[0]["text"], "the factor pocketed a coin");
    let mara: Vec<&str> = of(&log, "player_acted")
        .iter()
        .filter(|e| e["seat"] != "alex" && e["seat"] != "sam")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        mara,
        [
            "I offer to work the bellows myself",
            "I punch the factor and he falls down unconscious"
        ],
        "no command was played as an action; the flagged one was sent as it was"
    );
    let sent_back = of(&log, "action_sent_back");
    assert!(
        sent_back
            .iter()
            .any(|e| e["text"] == "I punch the factor and he falls down unconscious"),
        "{sent_back:?}"
    );
    // The GM heard the whisper in its next prompt, and knows Mara's pronouns.
    let gm = of(&log, "gm_called");
    assert!(
        gm[0]
            .to_string()
            .contains("Mara (id p1, played by Mara): they/them; ranger"),
        "{}",
        gm[0]
    );
    assert!(
        gm.iter().any(|e| e.to_string().contains("pocketed a coin")),
        "the GM's prompt holds the whisper"
    );
    let replay = run_with(dir.path(), &["encounter", "replay", "--run", "1"], "");
    assert!(replay.contains("identical"), "{replay}");
}

#[test]
fn the_smith_remembers_the_first_run_in_the_second() {
    let dir = campaign();
    run_with(dir.path(), &RUN, MARA);
    run_with(dir.path(), &RUN, MARA);
    let second = log(dir.path(), 2);
    let started = &of(&second, "started")[0];
    let memories = started["memories"].as_array().unwrap();
    assert_eq!(memories.len(), 1, "{started}");
    assert_eq!(memories[0]["npc"], "smith");
    let line = memories[0]["lines"][0].as_str().unwrap();
    assert!(
        line.contains("The Cold Forge") && line.contains("The forge burns again"),
        "{line}"
    );
    // The smith's name now comes from the campaign memory.
    assert_eq!(started["names"][0]["origin"], "memory");
    assert_eq!(started["names"][0]["value"], "Brekka Anvilmourn");
    // The factor has no memory key: nothing of the first run reaches him.
    assert!(memories.iter().all(|m| m["npc"] != "factor"));
    let tally = std::fs::read_to_string(dir.path().join("tally.json")).unwrap();
    assert!(tally.contains("\"runs\": 2"), "{tally}");
}

/// Start the run with Mara's first `lines` lines on standard input and the pause set; return
/// once it has paused.
fn spawn_paused(dir: &Path, input: &str, events: usize) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("troupe"))
        .current_dir(dir)
        .args(RUN)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("TROUPE_PAUSE_AFTER_EVENT", events.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipe stays open (a killed process never sees its end).
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    // A run that never pauses (it waits for a line instead) must not hang the suite.
    let pid = child.id().to_string();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
    });
    let stderr = child.stderr.take().unwrap();
    for line in BufReader::new(stderr).lines() {
        if line.unwrap().contains("troupe: paused after") {
            return child;
        }
    }
    panic!("troupe never paused: {:?}", child.wait());
}

#[test]
fn a_run_killed_mid_encounter_resumes_to_the_same_story() {
    let whole = campaign();
    run_with(whole.path(), &RUN, MARA);
    let expected = story(&log(whole.path(), 1));

    // Killed once the GM has asked for Mara's roll, before she rolls.
    let full = log(whole.path(), 1);
    let asked = 1 + full
        .iter()
        .position(|e| e["event_type"] == "check_emitted")
        .unwrap();
    let dir = campaign();
    let mut child = spawn_paused(dir.path(), "I offer to work the bellows myself\n", asked);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = log(dir.path(), 1);
    assert_eq!(before.last().unwrap()["event_type"], "check_emitted");
    // The mirror holds what was committed; a kill between a commit and its mirror write loses
    // the last line, which the resume writes back from campaign.db.
    let mirror = dir.path().join("logs/encounter-1.jsonl");
    assert_eq!(support::read_log(&mirror), before);
    let text = std::fs::read_to_string(&mirror).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&mirror, lines[..lines.len() - 1].join("\n") + "\n").unwrap();
    let out = run_with(
        dir.path(),
        &[
            "encounter",
            "resume",
            "--replay",
            "encounters/smithy.replay.jsonl",
        ],
        "\nI keep pumping the bellows\n",
    );
    assert!(out.contains("The encounter is over."), "{out}");
    assert_eq!(story(&log(dir.path(), 1)), expected);
    assert_eq!(support::read_log(&mirror), log(dir.path(), 1));
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("identical"), "{replay}");
}

/// Issue 33: a person joins a running encounter (`resume --join`): the join is in the log,
/// the table hears of it, and the newcomer acts from their turn in the round on.
#[test]
fn a_person_joins_a_running_encounter_and_acts_in_the_round() {
    let dir = campaign();
    let out = run_with(dir.path(), &RUN, "/quit\n");
    assert!(!out.contains("The encounter is over."), "{out}");
    let out = run_with(
        dir.path(),
        &[
            "encounter",
            "resume",
            "--join",
            "human:Kit",
            "--replay",
            "encounters/smithy.replay.jsonl",
        ],
        "I offer to work the bellows myself\nI hold the lantern up for the smith\n",
    );
    assert!(out.contains("Kit joins the table."), "{out}");
    assert!(!out.contains("playing Kit"), "one name is said once: {out}");
    assert!(out.contains("Kit, what do you attempt?"), "{out}");
    let log = log(dir.path(), 1);
    let joined = of(&log, "seat_joined");
    assert_eq!(joined.len(), 1);
    assert_eq!(joined[0]["seat"]["id"], "p4");
    assert!(
        of(&log, "player_acted")
            .iter()
            .any(|e| e["seat"] == "p4" && e["text"] == "I hold the lantern up for the smith"),
        "{out}"
    );
    // Joining twice as the same AI player is refused with a clear error.
    let refused = troupe()
        .current_dir(dir.path())
        .args(["encounter", "resume", "--join", "ai:alex", "--replay"])
        .arg("encounters/smithy.replay.jsonl")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("already at this table"), "{err}");
}

/// Issue 46: a person who joins from the terminal (`resume --join`) when a round's actions are
/// all in sits down in the next round and acts at their turn in it, as a person invited from a
/// browser does: not alone, answered by the GM, before the players whose turn it was.
#[test]
fn a_person_who_joins_between_rounds_acts_at_their_turn_in_the_next() {
    let dir = campaign();
    let mut args = RUN.to_vec();
    args.extend(["--turns", "1"]);
    let out = run_with(dir.path(), &args, MARA);
    assert!(out.contains("stopped after round 1"), "{out}");
    let before = log(dir.path(), 1).len();
    let out = run_with(
        dir.path(),
        &[
            "encounter",
            "resume",
            "--join",
            "human:Jo",
            "--turns",
            "2",
            "--replay",
            "encounters/smithy.replay.jsonl",
        ],
        "I keep pumping the bellows\nI hold the lantern up for the smith\n\n\n\n",
    );
    assert!(out.contains("Jo joins the table."), "{out}");
    let log = log(dir.path(), 1);
    let new = &log[before..];
    let kinds: Vec<String> = new
        .iter()
        .map(|e| match e["event_type"].as_str().unwrap() {
            "player_acted" => format!("acted {}", e["seat"].as_str().unwrap()),
            "seat_joined" => format!("joined {}", e["seat"]["id"].as_str().unwrap()),
            other => other.to_string(),
        })
        .filter(|k| k.starts_with("acted") || k.starts_with("joined") || k == "narrated")
        .collect();
    let joined = kinds.iter().position(|k| k.starts_with("joined")).unwrap();
    let jo = kinds[joined].replace("joined", "acted");
    let first = kinds.iter().position(|k| k.starts_with("acted")).unwrap();
    assert!(
        first < joined && kinds[first] != jo,
        "the round began with the player whose turn it was: {kinds:?}"
    );
    let jo_acts = kinds.iter().position(|k| *k == jo).expect("Jo acted");
    let round: Vec<&String> = kinds[first..jo_acts].iter().collect();
    assert!(
        !round.iter().any(|k| *k == "narrated"),
        "Jo acts in the round, before the GM answers it: {kinds:?}"
    );
    assert_eq!(
        round.iter().filter(|k| k.starts_with("acted")).count(),
        3,
        "everyone before Jo acted first: {kinds:?}"
    );
}

#[test]
fn undo_takes_back_the_last_round_and_resume_plays_it_again() {
    let dir = campaign();
    // Stop before round 2, then take round 1 back.
    let mut args = RUN.to_vec();
    args.extend(["--turns", "1"]);
    let out = run_with(dir.path(), &args, MARA);
    assert!(out.contains("stopped after round 1"), "{out}");
    // Issue 46: every hint names the exact command, this campaign included.
    let at = std::fs::canonicalize(dir.path()).unwrap();
    let goes_on = format!(
        "`troupe encounter resume --turns N --campaign {}` goes on",
        at.display()
    );
    assert!(out.contains(&goes_on), "{out}");
    // The Lasers & Feelings commands name the run and the encounter's own command for it.
    for (args, hint) in [
        ("resume", "`troupe encounter resume --campaign "),
        ("undo", "`troupe encounter undo --campaign "),
    ] {
        let out = troupe().current_dir(dir.path()).arg(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        let run = "This campaign also has encounter run 1 (";
        assert!(
            err.contains(run) && err.contains(", not finished): "),
            "{err}"
        );
        assert!(err.contains(hint), "{err}");
    }
    let listed = run_with(dir.path(), &["sessions"], "");
    let unfinished =
        "smithy-of-the-cold-forge      unfinished — `troupe encounter resume --campaign ";
    assert!(listed.contains(unfinished), "{listed}");
    let undone = run_with(dir.path(), &["encounter", "undo"], "");
    assert!(undone.contains("taken back"), "{undone}");
    let log1 = log(dir.path(), 1);
    assert_eq!(of(&log1, "undone")[0]["from"], 3);
    // Resume: round 1 is played again (the replay file serves its round-1 replies anew).
    let out = run_with(
        dir.path(),
        &[
            "encounter",
            "resume",
            "--max-turns",
            "1",
            "--replay",
            "encounters/smithy.replay.jsonl",
        ],
        MARA,
    );
    assert!(out.contains("Zara-7: I study the ledger"), "{out}");
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("identical"), "{replay}");
}

#[test]
fn check_reports_every_mistake_with_line_and_column() {
    let dir = campaign();
    let good = run_with(
        dir.path(),
        &["encounter", "check", "encounters/smithy.yaml"],
        "",
    );
    assert!(good.contains("ok: \"The Cold Forge\""), "{good}");
    let spec = "encounterId: broken\ntitle: Broken\nsetting:\n  location: here\n  mood: calm\n  \
                ambientNpcs: none\nopeningNarrative: Hello {{stranger}}\nnpcs:\n  - id: a\n    \
                name: A\n    role: r\n    persona: p\ngoals:\n  primary: [{id: g, label: G}]\n\
                tools: [fireball, move]\n";
    std::fs::write(dir.path().join("broken.yaml"), spec).unwrap();
    let out = troupe()
        .current_dir(dir.path())
        .args(["encounter", "check", "broken.yaml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown tool `fireball`"), "{err}");
    assert!(err.contains("move"), "{err}");
    assert!(err.contains("stranger"), "{err}");
    assert!(err.contains("broken.yaml:15:"), "{err}");
    assert!(err.contains("broken.yaml:7:"), "{err}");
}

/// Issue 33: a Lasers & Feelings encounter whose session was killed, then finished with
/// `troupe resume`, still writes its summary and the NPCs' memory (once).
#[test]
fn a_lasers_and_feelings_encounter_finished_by_resume_writes_its_outcome() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("aigm.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    std::fs::copy(
        examples().join("aigm.replay.jsonl"),
        dir.path().join("r.jsonl"),
    )
    .unwrap();
    let spec = examples().join("encounters/docking.yaml");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("troupe"))
        .current_dir(dir.path())
        .args([
            "encounter",
            "run",
            spec.to_str().unwrap(),
            "--players",
            "ai,ai,ai",
        ])
        .args(["--seed", "7", "--max-turns", "3", "--replay", "r.jsonl"])
        .env("TROUPE_PAUSE_AFTER_EVENT", "40")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let paused = BufReader::new(stderr)
        .lines()
        .any(|l| l.unwrap().contains("troupe: paused after"));
    assert!(paused, "the run never paused");
    child.kill().unwrap();
    child.wait().unwrap();
    let summaries = |d: &Path| std::fs::read_dir(d.join("summaries")).map_or(0, |r| r.count());
    assert_eq!(
        summaries(dir.path()),
        0,
        "killed mid-session: no outcome yet"
    );
    assert!(
        dir.path()
            .join("encounter-sessions/session-1.json")
            .exists()
    );

    let out = run_with(
        dir.path(),
        &["resume", "--turns", "3", "--replay", "r.jsonl"],
        "",
    );
    assert!(out.contains("played the 3 turns asked for"), "{out}");
    assert_eq!(summaries(dir.path()), 1, "{out}");
    assert!(
        !dir.path()
            .join("encounter-sessions/session-1.json")
            .exists()
    );
    let summary = std::fs::read_dir(dir.path().join("summaries"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(summary).unwrap();
    assert!(text.contains("Session 1 ended"), "{text}");
}

#[test]
fn a_lasers_and_feelings_encounter_is_played_through_the_turn_cycle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("aigm.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    // The AI GM's and the AI players' recorded replies of the AI-GM example: the replay model
    // serves them by agent and purpose, whatever the adventure.
    std::fs::copy(
        examples().join("aigm.replay.jsonl"),
        dir.path().join("r.jsonl"),
    )
    .unwrap();
    let spec = examples().join("encounters/docking.yaml");
    let out = run_with(
        dir.path(),
        &[
            "encounter",
            "run",
            spec.to_str().unwrap(),
            "--players",
            "ai,ai,ai",
            "--seed",
            "7",
            "--max-turns",
            "3",
            "--replay",
            "r.jsonl",
        ],
        "",
    );
    assert!(out.contains("LASER FEELINGS"), "{out}");
    assert!(out.contains("played the 3 turns asked for"), "{out}");
    // The session's AI GM ran the spec: its adventure is the encounter, its notes the secrets.
    let log = support::read_log(&dir.path().join("logs/session-1.jsonl"));
    let started = &support::of_type(&log, "session_started")[0];
    let scenario = &started["campaign"]["gm"]["scenario"];
    assert!(
        scenario["text"]
            .as_str()
            .unwrap()
            .starts_with("Docking Trouble at Halcyon Ring.")
    );
    let notes = scenario["notes"].to_string();
    assert!(notes.contains("Hidden goal"), "{notes}");
    // The tally and the summary file.
    let tally = std::fs::read_to_string(dir.path().join("tally.json")).unwrap();
    assert!(tally.contains("docking-at-halcyon-ring"), "{tally}");
    let summaries = std::fs::read_dir(dir.path().join("summaries"))
        .unwrap()
        .count();
    assert_eq!(summaries, 1);

    // A d20 encounter in the same campaign: `troupe stats` shows the session and, after it,
    // the encounter runs' scorecards.
    let smithy = examples().join("encounters/smithy.yaml");
    let replies = examples().join("encounters/smithy.replay.jsonl");
    let args = [
        "encounter",
        "run",
        smithy.to_str().unwrap(),
        "--players",
        "human:Mara,ai,ai",
        "--seed",
        "12",
        "--replay",
        replies.to_str().unwrap(),
    ];
    run_with(dir.path(), &args, MARA);
    let stats = run_with(dir.path(), &["stats"], "");
    assert!(
        stats.contains("Encounter runs: the GM's scorecard"),
        "{stats}"
    );
    assert!(stats.contains("smithy-of-the-cold-forge"), "{stats}");
    let json: Value =
        serde_json::from_str(&run_with(dir.path(), &["stats", "--json"], "")).unwrap();
    assert_eq!(
        json["encounters"][0]["rewrites"], 1,
        "{}",
        json["encounters"]
    );
}

#[test]
fn with_a_scene_the_gm_acts_through_the_scene_engine_and_the_engine_decides() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("local.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    let spec = examples().join("encounters/mill-raid.yaml");
    let replies = examples().join("encounters/mill-raid.replay.jsonl");
    let args = [
        "encounter",
        "run",
        spec.to_str().unwrap(),
        "--players",
        "ai",
        "--seed",
        "5",
        "--replay",
        replies.to_str().unwrap(),
    ];
    let out = run_with(dir.path(), &args, "");
    // The engine moved Old Tam, refused the move to a zone that does not border his (the
    // players never hear of it), and the encounter resolved.
    assert!(
        out.contains("Old Tam moves from the mill yard to the storehouse."),
        "{out}"
    );
    assert!(!out.contains("refused"), "{out}");
    assert!(out.contains("The encounter is over."), "{out}");
    let log = log(dir.path(), 1);
    let acted = of(&log, "scene_acted");
    assert_eq!(acted.len(), 2);
    assert_eq!(
        (acted[0]["applied"].as_bool(), acted[1]["applied"].as_bool()),
        (Some(true), Some(false))
    );
    assert!(
        acted[1]["outcome"]
            .as_str()
            .unwrap()
            .contains("not next to")
    );
    // The scene's text is in the log: replay needs no file.
    assert!(
        of(&log, "started")[0]["scene"]
            .as_str()
            .unwrap()
            .contains("mill-night")
    );
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("identical"), "{replay}");
}

/// Issue 46: an empty answer where an action is needed is asked again saying why, and `/quit`
/// names the exact command that goes on, this campaign included.
#[test]
fn an_empty_action_is_asked_again_with_a_reason_and_quit_names_the_campaign() {
    let dir = campaign();
    let out = run_with(dir.path(), &RUN, "\n/help\n/quit\n");
    assert!(
        out.contains("(an action is needed: say what your character attempts"),
        "{out}"
    );
    let at = std::fs::canonicalize(dir.path()).unwrap();
    let hint = format!(
        "(saved; `troupe encounter resume --campaign {}` goes on)",
        at.display()
    );
    assert!(out.contains(&hint), "{out}");
    let help = format!(
        "/quit (stop; `troupe encounter resume --campaign {}` continues)",
        at.display()
    );
    assert!(out.contains(&help), "{out}");
}
