#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `troupe scene` through the binary: a scripted scene of more than ten turns using every tool,
//! killed with SIGKILL in the middle and resumed, ends with the same log byte for byte as an
//! uninterrupted run; replay reproduces it; the world knowledge gets the scene's deltas; and
//! `scene check` reports every mistake with its line and column.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use assert_cmd::cargo::CommandCargoExt;

use crate::support;
use support::{copy_examples, examples, troupe};

pub fn scene_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["mill.scene.yaml", "mill.player.yaml"]);
    dir
}

const PLAY: [&str; 7] = [
    "scene",
    "play",
    "mill.scene.yaml",
    "--player-script",
    "mill.player.yaml",
    "--seed",
    "7",
];

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = troupe().current_dir(dir).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?} failed:\n{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout
}

/// `troupe ARGS` in `dir`, which must fail (without a panic): its standard error.
fn run_err(dir: &Path, args: &[&str]) -> String {
    let out = troupe().current_dir(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{args:?} succeeded: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// The run's events as stored: (seq, body).
fn stored_events(dir: &Path) -> Vec<(u64, String)> {
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT seq, body FROM scene_events WHERE run = 1 ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_scripted_scene_survives_sigkill_and_replays_byte_for_byte() {
    let baseline = scene_dir();
    let out = run_ok(baseline.path(), &PLAY);
    for tool in [
        "ask_roll",
        "attack",
        "move",
        "talk",
        "use_item",
        "get_info",
        "narrate_only",
        "apply_effects",
        "ask_clarifying",
    ] {
        assert!(
            out.contains(&format!("[{tool}]")),
            "{tool} never ran:\n{out}"
        );
    }
    assert!(out.contains("(undone: events from"), "{out}");
    assert!(
        out.contains("Wren — 12/12 hp"),
        "/state shows the character:\n{out}"
    );
    let want = stored_events(baseline.path());
    let turns = want
        .iter()
        .filter(|(_, b)| b.contains("\"event_type\":\"tool_applied\""))
        .count();
    assert!(turns >= 10, "only {turns} tool calls");

    // The same scene, killed after its sixth event (mid-scene) and resumed.
    let crashed = scene_dir();
    let mut child = std::process::Command::cargo_bin("troupe")
        .unwrap()
        .current_dir(crashed.path())
        .args(PLAY)
        .env("TROUPE_PAUSE_AFTER_EVENT", "6")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let paused = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("troupe: paused after"));
    assert!(paused, "the run never paused");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        stored_events(crashed.path()).len(),
        6,
        "six events were saved"
    );

    let resumed = run_ok(
        crashed.path(),
        &["scene", "resume", "--player-script", "mill.player.yaml"],
    );
    assert!(
        resumed.contains("Resuming scene mill-night (run 1)"),
        "{resumed}"
    );
    assert_eq!(
        stored_events(crashed.path()),
        want,
        "the resumed log differs"
    );

    let replay = run_ok(crashed.path(), &["scene", "replay"]);
    assert!(replay.contains("identical to the log"), "{replay}");

    let world = std::fs::read_to_string(crashed.path().join("world.json")).unwrap();
    assert!(world.contains("hums old river songs"), "{world}");
    // The deltas are in the campaign memory too, with their truth levels.
    let recalled = run_ok(
        crashed.path(),
        &[
            "memory",
            "query",
            "What do we know about Old Tam?",
            "--json",
        ],
    );
    assert!(recalled.contains("hums old river songs"), "{recalled}");
    assert!(recalled.contains("improv"), "{recalled}");
}

#[test]
fn scene_check_reports_every_mistake_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "scene:\n  id: s\n  goal: g\nzones:\n  - id: a\n    adjacent: [b]\n\
         entities:\n  - id: p\n    kind: pc\n    zone: nowhere\nturn_order: []\n",
    )
    .unwrap();
    let out = troupe()
        .current_dir(dir.path())
        .args(["scene", "check", "bad.yaml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.yaml:6:16: zones[0].adjacent[0]: 'b': no zone"),
        "{err}"
    );
    assert!(
        err.contains("bad.yaml:10:11: entities[0].zone: 'nowhere'"),
        "{err}"
    );
    assert!(err.contains("turn_order: must list at least one"), "{err}");
    assert!(err.contains("3 problems"), "{err}");

    let ok = run_ok(&examples(), &["scene", "check", "mill.scene.yaml"]);
    assert!(ok.contains("OK — scene mill-night"), "{ok}");
}

/// The model planner with recorded replies: each reply is a call from the menu, run through the
/// same validator and router; the log replays without the model.
#[test]
fn the_model_planner_plays_from_recorded_replies() {
    let dir = scene_dir();
    std::fs::copy(
        examples().join("mill.replay.jsonl"),
        dir.path().join("mill.replay.jsonl"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("model.player.yaml"),
        "- head into the yard\n- ask Tam about the ledger\n- go for the dog\n- leave\n",
    )
    .unwrap();
    let out = run_ok(
        dir.path(),
        &[
            "scene",
            "play",
            "mill.scene.yaml",
            "--player-script",
            "model.player.yaml",
            "--seed",
            "3",
            "--planner",
            "model",
            "--replay",
            "mill.replay.jsonl",
        ],
    );
    assert!(
        out.contains("[move] Wren moves from the mill road to the mill yard."),
        "{out}"
    );
    assert!(out.contains("[talk]"), "{out}");
    assert!(out.contains("[attack]"), "{out}");
    assert!(out.contains("[ask_clarifying] Which door?"), "{out}");
    let replies = stored_events(dir.path())
        .iter()
        .filter(|(_, b)| b.contains("\"event_type\":\"planner_replied\""))
        .count();
    assert_eq!(replies, 4, "every model reply is in the log");
    let replay = run_ok(dir.path(), &["scene", "replay"]);
    assert!(replay.contains("identical to the log"), "{replay}");
}

/// The model's polish of the narration: a rewrite that keeps the facts is shown instead of the
/// template; one that adds a fact (a number the facts do not have) is refused, logged, and the
/// template stands. Both replay from the log.
#[test]
fn a_polished_narration_is_used_only_when_it_keeps_the_facts() {
    let dir = scene_dir();
    std::fs::write(
        dir.path().join("polish.replay.jsonl"),
        concat!(
            r#"{"agent": "*", "purpose": "scene_polish", "content": "Wren stands on the rutted mill road, the broken fence at her back."}"#,
            "\n",
            r#"{"agent": "*", "purpose": "scene_polish", "content": "Wren has 99 hit points and a sword."}"#,
            "\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("p.yaml"), "- look around\n- status\n").unwrap();
    let out = run_ok(
        dir.path(),
        &[
            "scene",
            "play",
            "mill.scene.yaml",
            "--player-script",
            "p.yaml",
            "--seed",
            "1",
            "--polish",
            "--replay",
            "polish.replay.jsonl",
        ],
    );
    assert!(
        out.contains("[polished] Wren stands on the rutted mill road"),
        "{out}"
    );
    assert!(
        !out.contains("[narrate_only]"),
        "the template was replaced:\n{out}"
    );
    assert!(out.contains("not used: it states the number 99"), "{out}");
    assert!(
        out.contains("[get_info] Wren: 12/12 hp"),
        "the template stands:\n{out}"
    );
    let replay = run_ok(dir.path(), &["scene", "replay"]);
    assert!(replay.contains("identical to the log"), "{replay}");
}

/// An AI at the player's seat (recorded replies): its lines go through the same planner and
/// router, and it stops after --ai-lines.
#[test]
fn an_ai_player_speaks_for_the_character() {
    let dir = scene_dir();
    std::fs::write(
        dir.path().join("ai.replay.jsonl"),
        concat!(
            r#"{"agent": "*", "purpose": "scene_player", "content": "I head into the mill yard."}"#,
            "\n",
            r#"{"agent": "*", "purpose": "scene_player", "content": "I talk to Old Tam about the ledger."}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = run_ok(
        dir.path(),
        &[
            "scene",
            "play",
            "mill.scene.yaml",
            "--seed",
            "2",
            "--player",
            "ai",
            "--ai-lines",
            "2",
            "--replay",
            "ai.replay.jsonl",
        ],
    );
    assert!(out.contains("Wren> I head into the mill yard."), "{out}");
    assert!(
        out.contains("[move] Wren moves from the mill road to the mill yard."),
        "{out}"
    );
    assert!(out.contains("[talk]"), "{out}");
    assert!(
        out.contains("troupe scene resume"),
        "it stops after two lines:\n{out}"
    );
    // Every call the AI player made is in the log with what it was shown (issue 29).
    let calls: Vec<serde_json::Value> = stored_events(dir.path())
        .iter()
        .filter(|(_, b)| b.contains("\"event_type\":\"model_called\""))
        .map(|(_, b)| serde_json::from_str(b).unwrap())
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for call in &calls {
        assert_eq!(call["purpose"], "scene_player");
        let attempt = &call["attempts"][0];
        let shown = attempt["messages"].to_string();
        assert!(shown.contains("speaking for Wren"), "{attempt}");
        assert!(
            attempt["reply"].as_str().unwrap().starts_with("I "),
            "{attempt}"
        );
    }
    let replay = run_ok(dir.path(), &["scene", "replay"]);
    assert!(replay.contains("identical to the log"), "{replay}");
}

/// A person who played a scene and types the Lasers & Feelings commands (`troupe resume`,
/// `undo`, `replay`) is told which run the campaign has and the scene's command for it, and
/// nothing is written; the command named works; `troupe sessions` lists the run.
#[test]
fn the_session_commands_name_a_campaigns_scene_run_and_its_own_command() {
    let dir = scene_dir();
    run_ok(dir.path(), &PLAY);
    let db = std::fs::read(dir.path().join("campaign.db")).unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["resume"],
            "scene run 1 (mill-night, finished): it has ended",
        ),
        (
            &["undo"],
            "scene run 1 (mill-night, finished): it has ended",
        ),
        (&["replay", "1"], "`troupe scene replay --run 1 --campaign "),
    ];
    for (args, hint) in cases {
        let stderr = run_err(dir.path(), args);
        assert!(
            stderr.contains("This campaign also has scene run 1"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(hint), "{args:?}: {stderr}");
        assert!(!stderr.contains("encounter run"), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read(dir.path().join("campaign.db")).unwrap(), db);
    // `troupe sessions` lists the scene's runs under their own heading.
    let listed = run_ok(dir.path(), &["sessions"]);
    let run = listed
        .lines()
        .skip_while(|l| !l.contains("scene  started"))
        .nth(1);
    assert!(
        run.is_some_and(|l| l.contains("mill-night") && l.ends_with("ended")),
        "{listed}"
    );
    assert!(!listed.contains("No sessions yet"), "{listed}");
    let replayed = run_ok(dir.path(), &["scene", "replay", "--run", "1"]);
    assert!(replayed.contains("identical"), "{replayed}");
}

/// `troupe scene undo` takes back the latest run's last turn in one commit (its mirror gets the
/// same line) and nothing before it; the run still replays identically, a run with no turn left
/// or one that has ended is refused with why, so is an undo while someone plays the scene, and
/// `resume` plays on from there.
#[test]
fn scene_undo_takes_back_the_last_turn_and_resume_plays_on() {
    let dir = scene_dir();
    let short = "- look around\n- go to the mill yard\n- talk to Old Tam about the ledger\n";
    std::fs::write(dir.path().join("short.yaml"), short).unwrap();
    let mut play = PLAY.to_vec();
    play[4] = "short.yaml";
    let out = run_ok(dir.path(), &play);
    assert!(out.contains("`troupe scene resume --campaign "), "{out}");
    let before = stored_events(dir.path());

    let out = run_ok(dir.path(), &["scene", "undo"]);
    assert!(
        out.contains("the last turn (from event 3) is taken back"),
        "{out}"
    );
    let after = stored_events(dir.path());
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after.len(), before.len() + 1);
    let (seq, body) = after.last().unwrap();
    let undone: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        (undone["event_type"].as_str(), undone["from_seq"].as_u64()),
        (Some("undone"), Some(3))
    );
    let mirror = std::fs::read_to_string(dir.path().join("logs/scene-1.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(mirror.lines().last().unwrap()).unwrap();
    assert_eq!(
        (line["event_type"].as_str(), line["seq"].as_u64()),
        (Some("undone"), Some(*seq))
    );
    assert!(run_ok(dir.path(), &["scene", "replay"]).contains("identical"));

    // Two more turns to take back, then none.
    run_ok(dir.path(), &["scene", "undo"]);
    run_ok(dir.path(), &["scene", "undo"]);
    let err = run_err(dir.path(), &["scene", "undo"]);
    assert!(
        err.contains("scene run 1 has no turn to take back"),
        "{err}"
    );

    // While a person plays the scene at the terminal, undo is kept out (it would interleave
    // its commit with theirs).
    let mut playing = std::process::Command::cargo_bin("troupe")
        .unwrap()
        .current_dir(dir.path())
        .args(["scene", "resume"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(playing.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap().starts_with("Resuming scene")));
    let err = run_err(dir.path(), &["scene", "undo"]);
    assert!(err.contains("another troupe"), "{err}");
    drop(playing.stdin.take());
    assert!(playing.wait().unwrap().success());

    // Resume plays on from the taken-back state (the script's played lines are skipped).
    let more = format!("{short}- listen\n- /end\n");
    std::fs::write(dir.path().join("more.yaml"), more).unwrap();
    let out = run_ok(
        dir.path(),
        &["scene", "resume", "--player-script", "more.yaml"],
    );
    assert!(
        out.contains("at turn 1, 3 lines already played; more.yaml goes on from its line 4"),
        "{out}"
    );
    assert!(out.contains("The scene ends"), "{out}");
    let err = run_err(dir.path(), &["scene", "undo"]);
    assert!(err.contains("has ended"), "{err}");
    assert!(run_ok(dir.path(), &["scene", "replay"]).contains("identical"));
}

/// The campaign directory as the hints name it: its full path.
fn full(dir: &Path) -> String {
    std::fs::canonicalize(dir).unwrap().display().to_string()
}

/// Issue 46: a script given at `scene resume` that is not the one the run was played with is
/// played from its first line, and the resume says so (it used to skip as many of its lines as
/// the run had read); the hint a `/quit` leaves names the campaign, so it resumes this scene
/// from any directory.
#[test]
fn a_new_script_at_resume_is_played_from_its_start() {
    let dir = scene_dir();
    let first = "- look around\n- go to the mill yard\n- /quit\n";
    std::fs::write(dir.path().join("first.yaml"), first).unwrap();
    let mut play = PLAY.to_vec();
    play[4] = "first.yaml";
    let out = run_ok(dir.path(), &play);
    let hint = format!(
        "Saved; `troupe scene resume --campaign {}` continues.",
        full(dir.path())
    );
    assert!(out.contains(&hint), "{out}");

    std::fs::write(dir.path().join("r.yaml"), "- listen\n- /quit\n").unwrap();
    let out = run_ok(
        dir.path(),
        &["scene", "resume", "--player-script", "r.yaml"],
    );
    assert!(
        out.contains("3 lines already played. r.yaml is not the script those lines came from: it is played from its first line."),
        "{out}"
    );
    let inputs: Vec<String> = stored_events(dir.path())
        .iter()
        .map(|(_, b)| serde_json::from_str::<serde_json::Value>(b).unwrap())
        .filter(|e| e["event_type"] == "tool_applied" || e["event_type"] == "rejected")
        .map(|e| e["input"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        inputs,
        ["look around", "go to the mill yard", "listen"],
        "{out}"
    );
    // Run from another directory, the hint's command resumes this campaign's scene.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = run_ok(
        elsewhere.path(),
        &["scene", "resume", "--campaign", &full(dir.path())],
    );
    assert!(out.contains("Resuming scene mill-night (run 1)"), "{out}");
}

/// Issue 46: `troupe scene log` and `troupe scene stats`, as the encounter has them: a run's
/// events as JSON lines, and each run's figures as a table or JSON.
#[test]
fn scene_log_and_stats_show_a_run() {
    let dir = scene_dir();
    let err = run_err(dir.path(), &["scene", "log"]);
    assert!(
        err.contains("has no scene runs yet; `troupe scene play FILE` starts one"),
        "{err}"
    );
    run_ok(dir.path(), &PLAY);
    let logged: Vec<serde_json::Value> = run_ok(dir.path(), &["scene", "log"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let stored = stored_events(dir.path());
    assert_eq!(logged.len(), stored.len());
    assert_eq!(logged[0]["event_type"], "scene_started");
    // The tools applied that still stand: an undo takes back the events from its from_seq.
    let undone: Vec<(u64, u64)> = logged
        .iter()
        .filter(|e| e["event_type"] == "undone")
        .map(|e| (e["from_seq"].as_u64().unwrap(), e["seq"].as_u64().unwrap()))
        .collect();
    let applied = logged
        .iter()
        .filter(|e| e["event_type"] == "tool_applied")
        .filter(|e| {
            let seq = e["seq"].as_u64().unwrap();
            !undone.iter().any(|(from, at)| (*from..*at).contains(&seq))
        })
        .count() as u64;
    let json = run_ok(dir.path(), &["scene", "stats", "--json"]);
    let card: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(card["run"], 1, "{card}");
    assert_eq!(card["spec"], "mill-night", "{card}");
    assert_eq!(card["tools_applied"], applied, "{card}");
    assert_eq!(card["undone"], undone.len() as u64, "{card}");
    assert_eq!(card["ended"], true, "{card}");
    assert!(card["turns"].as_u64().unwrap() >= 5, "{card}");
    let table = run_ok(dir.path(), &["scene", "stats"]);
    assert!(table.starts_with("Scene runs\n"), "{table}");
    assert!(table.contains("mill-night"), "{table}");
    let err = run_err(dir.path(), &["scene", "stats", "--run", "9"]);
    assert!(err.contains("there is no scene run 9"), "{err}");
}

/// Issue 46: every count agrees with its noun ("1 clock", not "1 clocks"), and a session that
/// is not there is looked for in a directory named in full (not "no session 1 in .").
#[test]
fn counts_agree_and_a_missing_session_names_its_directory() {
    let dir = scene_dir();
    let out = run_ok(dir.path(), &["scene", "check", "mill.scene.yaml"]);
    assert!(
        out.contains(", 1 clock") && !out.contains("1 clocks"),
        "{out}"
    );
    run_ok(dir.path(), &PLAY);
    let err = run_err(dir.path(), &["transcript", "1"]);
    let said = format!("there is no session 1 in {} (", full(dir.path()));
    assert!(err.contains(&said), "{err}");
}

/// The scene's end is committed before its world is kept: when keeping fails (here a
/// `world.json` that does not read; a memory server down fails the same way), the scene's
/// changes are not lost. `troupe scene resume` of the ended run keeps them, says the run has
/// ended, and a second resume adds nothing twice.
#[test]
fn a_world_that_could_not_be_kept_at_the_end_is_kept_by_resume() {
    let dir = scene_dir();
    let world = dir.path().join("world.json");
    std::fs::write(&world, "{ this is not json").unwrap();
    let err = run_err(dir.path(), &PLAY);
    assert!(err.contains("world.json"), "{err}");
    assert!(err.contains("`troupe scene resume` keeps them"), "{err}");
    let ended: Vec<(u64, String)> = stored_events(dir.path());
    assert!(
        ended.last().unwrap().1.contains("\"scene_ended\""),
        "the end was committed first"
    );

    std::fs::remove_file(&world).unwrap();
    let out = run_ok(dir.path(), &["scene", "resume"]);
    assert!(out.contains("World knowledge: "), "{out}");
    assert!(
        out.contains("Scene run 1 has ended; `troupe scene play FILE` starts a new one."),
        "{out}"
    );
    let kept = std::fs::read_to_string(&world).unwrap();
    assert!(kept.contains("hums old river songs"), "{kept}");
    let recalled = |dir: &Path| {
        run_ok(
            dir,
            &[
                "memory",
                "query",
                "What do we know about Old Tam?",
                "--json",
            ],
        )
    };
    let first = recalled(dir.path());
    assert!(first.contains("hums old river songs"), "{first}");

    run_ok(dir.path(), &["scene", "resume"]);
    assert_eq!(std::fs::read_to_string(&world).unwrap(), kept);
    assert_eq!(recalled(dir.path()), first, "nothing remembered twice");
    assert_eq!(stored_events(dir.path()), ended, "the log is as it ended");
}
