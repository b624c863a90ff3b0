//! Issue 32: every model request of every game carries a sampling seed derived from the
//! session's (or run's) seed and the call's place, so a model server that honours `seed` plays
//! the same batch twice at any temperature. Checked on the wire: the real binary against a mock
//! OpenAI-compatible server that keeps each request's `seed`. The same seed sends the same
//! seeds (a session, its crash and resume, an AI GM's, an encounter's, a scene's); no two calls
//! send the same one; another seed sends others; the log records each, and a replay derives
//! them again.

use std::path::Path;

use serde_json::Value;

use crate::support::openai_server::{OpenAiServer, Personality};
use crate::support::{campaign_with, copy_examples, of_type, read_log, run, spawn_paused, troupe};

/// A server that answers every request correctly, at once.
fn server() -> OpenAiServer {
    OpenAiServer::start(Personality::Paced {
        delay: std::time::Duration::ZERO,
    })
}

/// `troupe ARGS` in `dir` against `server`; it must succeed.
fn against(dir: &Path, server: &OpenAiServer, args: &[&str]) -> String {
    let url = server.base_url();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--provider", "openai-compatible", "--base-url", &url]);
    all.extend(["--model", "mock"]);
    let out = troupe()
        .current_dir(dir)
        .env_remove("OPENAI_BASE_URL")
        .args(&all)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "troupe {all:?}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Every seed the server was sent, sorted; every request must have sent one.
fn wire(server: &OpenAiServer) -> Vec<u64> {
    let served = server.served();
    assert!(!served.is_empty(), "no request reached the server");
    let mut seeds: Vec<u64> = served
        .iter()
        .map(|s| {
            s.seed
                .unwrap_or_else(|| panic!("a request without a seed: {s:?}"))
        })
        .collect();
    seeds.sort_unstable();
    seeds
}

fn assert_distinct(seeds: &[u64]) {
    let mut unique = seeds.to_vec();
    unique.dedup();
    assert_eq!(
        unique.len(),
        seeds.len(),
        "two calls sent one seed: {seeds:?}"
    );
}

/// The seeds the log's model calls record, in log order, with their agents.
fn logged(log: &[Value]) -> Vec<(String, u64)> {
    of_type(log, "model_call")
        .iter()
        .map(|c| {
            let seed = c["seed"].as_u64().unwrap_or_else(|| panic!("no seed: {c}"));
            (c["agent"].as_str().unwrap().to_string(), seed)
        })
        .collect()
}

fn sorted(calls: &[(String, u64)]) -> Vec<u64> {
    let mut seeds: Vec<u64> = calls.iter().map(|(_, s)| *s).collect();
    seeds.sort_unstable();
    seeds
}

const PARTY: [&str; 2] = ["party.json", "research.gm.yaml"];

fn play_party(seed: &str) -> (tempfile::TempDir, OpenAiServer) {
    let (dir, server) = (campaign_with(&PARTY), server());
    let args = ["play", "party.json", "--gm-script", "research.gm.yaml"];
    against(
        dir.path(),
        &server,
        &[&args[..], &["--seed", seed]].concat(),
    );
    (dir, server)
}

fn session_log(dir: &Path) -> Vec<Value> {
    read_log(&dir.join("logs/session-1.jsonl"))
}

#[test]
fn a_party_session_sends_the_same_seeds_again_after_a_crash_and_in_its_replay() {
    let (a, server_a) = play_party("5");
    let (_b, server_b) = play_party("5");
    let (_c, server_c) = play_party("6");
    let seeds = wire(&server_a);
    assert!(seeds.len() >= 20, "{} calls", seeds.len());
    assert_eq!(seeds, wire(&server_b), "the same seed, the same seeds");
    assert_distinct(&seeds);
    let other = wire(&server_c);
    assert!(
        seeds.iter().all(|s| !other.contains(s)),
        "another seed sends other seeds"
    );
    // The log records each call's seed as it was sent (no call here needed a retry).
    let calls = logged(&session_log(a.path()));
    assert_eq!(sorted(&calls), seeds);

    // The replay derives every seed again, call for call.
    run(a.path(), &["replay", "1"]);
    let replayed = read_log(&a.path().join("replays/session-1-replay-1.jsonl"));
    assert_eq!(logged(&replayed), calls);

    // Killed halfway, then resumed: the calls the log keeps carry the seeds of the session
    // played through (the one in flight at the kill is asked again with its own).
    let d = campaign_with(&PARTY);
    let resumed_server = server();
    let url = resumed_server.base_url();
    let play = [
        "play",
        "party.json",
        "--gm-script",
        "research.gm.yaml",
        "--seed",
        "5",
        "--provider",
        "openai-compatible",
        "--base-url",
        &url,
        "--model",
        "mock",
    ];
    let half = session_log(a.path()).len() as u64 / 2;
    let mut child = spawn_paused(d.path(), &play, "TROUPE_PAUSE_AFTER_EVENT", half);
    child.kill().unwrap();
    child.wait().unwrap();
    let before = logged(&session_log(d.path())).len();
    assert!(
        before > 0 && before < calls.len(),
        "{before} calls before the kill"
    );
    against(
        d.path(),
        &resumed_server,
        &["resume", "--gm-script", "research.gm.yaml"],
    );
    assert_eq!(logged(&session_log(d.path())), calls);
}

#[test]
fn an_ai_gms_calls_are_seeded_and_its_players_seeds_do_not_depend_on_them() {
    let play = |seed: &str| {
        let (dir, server) = (campaign_with(&["party.json"]), server());
        let args = ["play", "party.json", "--gm", "ai", "--turns", "1", "--seed"];
        against(dir.path(), &server, &[&args[..], &[seed]].concat());
        (dir, server)
    };
    let (a, server_a) = play("5");
    let (_b, server_b) = play("5");
    let seeds = wire(&server_a);
    assert_eq!(seeds, wire(&server_b));
    assert_distinct(&seeds);
    let calls = logged(&session_log(a.path()));
    assert_eq!(sorted(&calls), seeds);
    let players: Vec<(String, u64)> = calls.iter().filter(|(a, _)| a != "gm").cloned().collect();
    assert!(players.len() < calls.len(), "the GM made calls");
    assert!(!players.is_empty(), "the players made calls");

    // The replay seats the AI GM again on its recorded replies (issue 46: an untouched session
    // replays identically): the GM's calls and the players' get the seeds they had.
    run(a.path(), &["replay", "1"]);
    let replayed = read_log(&a.path().join("replays/session-1-replay-1.jsonl"));
    assert_eq!(logged(&replayed), calls);
}

/// An encounter with two AI players, then a scene with an AI speaker, the model planner and
/// the polish, in one campaign directory; the seeds each sent.
fn encounter_and_scene(seed: &str) -> (Vec<u64>, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(
        crate::support::examples().join("party.json"),
        d.join("campaign.json"),
    )
    .unwrap();
    std::fs::create_dir(d.join("encounters")).unwrap();
    std::fs::copy(
        crate::support::examples().join("encounters/smithy.yaml"),
        d.join("encounters/smithy.yaml"),
    )
    .unwrap();
    let encounter = server();
    let args = ["encounter", "run", "encounters/smithy.yaml", "--players"];
    let more = ["ai,ai", "--max-turns", "3", "--seed", seed];
    against(d, &encounter, &[&args[..], &more[..]].concat());
    copy_examples(d, &["mill.scene.yaml"]);
    let scene = server();
    let args = ["scene", "play", "mill.scene.yaml", "--player", "ai"];
    let more = [
        "--ai-lines",
        "3",
        "--planner",
        "model",
        "--polish",
        "--seed",
        seed,
    ];
    against(d, &scene, &[&args[..], &more[..]].concat());
    (wire(&encounter), wire(&scene))
}

#[test]
fn an_encounter_and_a_scene_send_the_same_seeds_for_the_same_seed() {
    let (encounter, scene) = encounter_and_scene("12");
    assert!(encounter.len() >= 3, "{encounter:?}");
    assert!(scene.len() >= 3, "{scene:?}");
    assert_distinct(&encounter);
    assert_distinct(&scene);
    assert_eq!(
        encounter_and_scene("12"),
        (encounter.clone(), scene.clone())
    );
    let (other, _) = encounter_and_scene("13");
    assert!(encounter.iter().all(|s| !other.contains(s)));
}
