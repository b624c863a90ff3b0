//! The one prompt registry through the `troupe` binary: a campaign's `prompts/` override of an
//! encounter's template reaches the model's requests (and replay derives the run with it); a
//! broken override stops a run before it starts, or a resume before it plays, naming the file
//! and losing nothing; `troupe check` checks the overrides.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use serde_json::Value;

use crate::encounter::{MARA, RUN, campaign, log, of};
use crate::support::{examples, run_with, troupe};

/// The encounter's embedded template `name`, with `line` added: what a campaign would write.
fn extended(name: &str, line: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../encounter/prompts")
        .join(name);
    format!("{}\n{line}\n", std::fs::read_to_string(path).unwrap())
}

fn write_override(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir.join("prompts")).unwrap();
    std::fs::write(dir.join("prompts").join(name), text).unwrap();
}

/// Every message of every attempt of these calls, by role.
fn shown<'a>(calls: &[&'a Value], role: &str) -> Vec<&'a str> {
    calls
        .iter()
        .flat_map(|c| c["call"]["attempts"].as_array().unwrap())
        .flat_map(|a| a["messages"].as_array().unwrap())
        .filter(|m| m["role"] == role)
        .map(|m| m["content"].as_str().unwrap())
        .collect()
}

fn troupe_fails(dir: &Path, args: &[&str], input: &str) -> String {
    let out = troupe()
        .current_dir(dir)
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "troupe {args:?} should fail:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn a_campaigns_override_of_an_encounter_prompt_reaches_the_models_requests() {
    let dir = campaign();
    let gm_rule = "House rule: every NPC speaks in rhyme.";
    let player_rule = "House rule: answer in under ten words.";
    write_override(
        dir.path(),
        "encounter_gm_system.md",
        &extended("encounter_gm_system.md", gm_rule),
    );
    write_override(
        dir.path(),
        "encounter_player_turn.md",
        &extended("encounter_player_turn.md", player_rule),
    );
    let out = run_with(dir.path(), &RUN, MARA);
    assert!(out.contains("The encounter is over."), "{out}");

    let log = log(dir.path(), 1);
    let gm_calls = of(&log, "gm_called");
    let systems = shown(&gm_calls, "system");
    assert!(!systems.is_empty());
    for system in &systems {
        assert!(system.ends_with(gm_rule), "{system}");
        // The override is the embedded template plus a line: the rest renders as before.
        assert!(system.contains("## The NPCs you voice"), "{system}");
    }
    let player_calls = of(&log, "player_called");
    let asks = shown(&player_calls, "user");
    assert!(!asks.is_empty());
    assert!(asks.iter().all(|a| a.contains(player_rule)), "{asks:?}");
    // The AI players' system prompt is not overridden, and the GM's rule is the GM's alone.
    let player_systems = shown(&player_calls, "system");
    assert!(player_systems.iter().all(|s| !s.contains(gm_rule)));

    // Replay derives the GM's prompt zones again with the campaign's prompts: identical.
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("events replayed, identical"), "{replay}");
}

#[test]
fn a_broken_encounter_override_stops_the_run_before_it_starts_and_names_the_file() {
    let dir = campaign();
    write_override(dir.path(), "encounter_gm_turn.md", "{% if open %}Open.");
    let err = troupe_fails(dir.path(), &RUN, MARA);
    let file = Path::new("prompts").join("encounter_gm_turn.md");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("is not a valid template"), "{err}");
    // Nothing was begun: no run in the log, no tally.
    let none = troupe_fails(dir.path(), &["encounter", "log"], "");
    assert!(none.contains("no encounter runs yet"), "{none}");
    assert!(!dir.path().join("tally.json").exists());

    // Fixed, the run starts as run 1.
    std::fs::remove_file(dir.path().join(&file)).unwrap();
    let out = run_with(dir.path(), &RUN, MARA);
    assert!(out.contains("run 1, seed 12"), "{out}");
}

#[test]
fn a_broken_override_stops_a_resume_and_the_run_goes_on_once_it_is_fixed() {
    let dir = campaign();
    let mut args = RUN.to_vec();
    args.extend(["--max-turns", "1"]);
    let out = run_with(dir.path(), &args, MARA);
    assert!(out.contains("stopped after round 1"), "{out}");
    let before = log(dir.path(), 1);

    write_override(dir.path(), "encounter_player_system.md", "{{ character ");
    let resume = [
        "encounter",
        "resume",
        "--replay",
        "encounters/smithy.replay.jsonl",
    ];
    let err = troupe_fails(dir.path(), &resume, "I keep pumping the bellows\n");
    assert!(err.contains("encounter_player_system.md"), "{err}");
    assert_eq!(log(dir.path(), 1), before, "the log is untouched");

    std::fs::remove_file(dir.path().join("prompts/encounter_player_system.md")).unwrap();
    let out = run_with(dir.path(), &resume, "I keep pumping the bellows\n");
    assert!(out.contains("The encounter is over."), "{out}");
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("identical"), "{replay}");
}

#[test]
fn check_names_the_overrides_a_broken_one_and_a_misspelt_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("campaign.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    write_override(dir.path(), "encounter_gm_turn.md", "Go on.");
    write_override(dir.path(), "player_intent.md", "Intent: {{ narration }}");
    write_override(dir.path(), "encounter_gm.md", "misspelt");
    let out = troupe()
        .current_dir(dir.path())
        .arg("check")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("overrides player_intent.md, encounter_gm_turn.md"),
        "{stdout}"
    );
    assert!(
        stderr.contains("encounter_gm.md replaces no prompt template"),
        "{stderr}"
    );

    write_override(dir.path(), "scene_polish.md", "{% for %}");
    let out = troupe()
        .current_dir(dir.path())
        .arg("check")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("scene_polish.md is not a valid template"),
        "{stderr}"
    );
}
