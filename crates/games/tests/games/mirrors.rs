//! Every game's JSONL mirror: an encounter run and a scene run, played in-process at their
//! tables, leave `logs/encounter-N.jsonl` and `logs/scene-N.jsonl` holding the run's events
//! exactly as `campaign.db` holds them, in order, undo included; a mirror cut short or lost (a
//! kill between a commit and its mirror write) is whole again once the run is reopened.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use troupe_campaign::CampaignDir;
use troupe_encounter::table::EncounterStore;
use troupe_encounter::table::asks::{ACTION, ACTION_AGAIN, ROLL};
use troupe_encounter::table::start::{Begun, Opening, SeatSpec, begin, campaign_in};
use troupe_encounter::table::{EncounterTable, Stop};
use troupe_llm::{Gateway, ReplayModel, RetryPolicy, TokioSleeper};
use troupe_memory::MemoryStore;
use troupe_scene::Scene;
use troupe_scene::table::SceneStore;
use troupe_scene::table::{SceneStop, SceneTable, SceneWatch};
use troupe_seat::{Answer, Ask, Seat};

use troupe_engine::watch::Unwatched;
use troupe_engine::{Logged, read_jsonl};

use troupe_test_support::examples;
use troupe_test_support::mirror::{assert_mirror_is_the_table, cut_short};

// ---- the encounter ----

/// Mara at the table: her two actions in turn, and Enter for every roll.
struct Mara(Vec<&'static str>);

#[async_trait]
impl Seat for Mara {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        let mut values = Map::new();
        match ask.decision.as_str() {
            ACTION | ACTION_AGAIN if !self.0.is_empty() => {
                values.insert("action".into(), Value::from(self.0.remove(0)));
            }
            ROLL => {}
            _ => return Answer::Leave,
        }
        Answer::Decide { values }
    }
}

/// The smithy begun in a campaign of the example party, Mara and two AI players, seed 12 (the
/// recorded replies' run).
fn smithy(dir: &Path) -> (EncounterStore, u32) {
    std::fs::copy(examples().join("party.json"), dir.join("campaign.json")).unwrap();
    let text = std::fs::read_to_string(examples().join("encounters/smithy.yaml")).unwrap();
    let spec = troupe_encounter::check::check(&text).unwrap();
    let players = vec![
        SeatSpec::Person {
            name: Some("Mara".into()),
        },
        SeatSpec::Ai { agent: None },
        SeatSpec::Ai { agent: None },
    ];
    let dir = CampaignDir::new(dir);
    let memory = MemoryStore::open(&dir.db()).unwrap();
    let campaign = campaign_in(&dir);
    let opening = Opening {
        spec: &spec,
        scene: None,
        players: &players,
        seed: 12,
        window: 32_000,
        campaign: campaign.as_ref(),
    };
    let Begun { store, run, .. } = begin(&dir, &memory, opening).unwrap();
    (store, run)
}

fn replies() -> Gateway {
    let model = ReplayModel::from_file(examples().join("encounters/smithy.replay.jsonl")).unwrap();
    let policy = RetryPolicy {
        delays: vec![std::time::Duration::ZERO],
        ..RetryPolicy::default()
    };
    Gateway::new(Arc::new(model), policy, Arc::new(TokioSleeper))
}

fn at_table(store: EncounterStore, run: u32, mara: Mara) -> EncounterTable<Mara> {
    let prompts = troupe_games::embedded();
    let watch = Box::new(Unwatched);
    EncounterTable::open(store, run, replies(), prompts, mara, watch).unwrap()
}

#[tokio::test]
async fn an_encounter_runs_mirror_is_its_events_in_order_undo_and_all() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, run) = smithy(tmp.path());
    let mut table = at_table(store, run, Mara(vec!["I offer to work the bellows myself"]));
    table.stop_before_round(Some(1));
    assert_eq!(table.play().await.unwrap(), Stop::Rounds(1));
    let from = table
        .take_back_round()
        .unwrap()
        .expect("a round to take back");
    drop(table);

    let store = EncounterStore::open(tmp.path()).unwrap();
    let path = CampaignDir::new(tmp.path()).encounter_log(run);
    assert_eq!(store.mirror_path(run), Some(path.clone()));
    assert_mirror_is_the_table(tmp.path(), &store, run);
    let lines: Vec<Value> = read_jsonl(&path).unwrap();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|l| l["event_type"].as_str().unwrap())
        .collect();
    for kind in [
        "started",
        "gm_called",
        "gm_rejected",
        "leak_caught",
        "check_rolled",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let undo = lines.last().unwrap();
    assert_eq!(
        (undo["event_type"].as_str(), undo["from"].as_u64()),
        (Some("undone"), Some(from))
    );
    // A run's mirror is no session's.
    let dir = CampaignDir::new(tmp.path());
    assert!(dir.logged_sessions().is_empty());
    assert!(!dir.session_log(run).exists());
}

#[tokio::test]
async fn an_encounter_mirror_cut_short_or_lost_is_whole_again_when_the_run_is_reopened() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, run) = smithy(tmp.path());
    let mut table = at_table(store, run, Mara(vec!["I offer to work the bellows myself"]));
    table.stop_before_round(Some(1));
    table.play().await.unwrap();
    drop(table);
    let path = CampaignDir::new(tmp.path()).encounter_log(run);

    // Reopened and checked (as `troupe encounter resume` does first), the mirror is rewritten.
    cut_short(&path);
    let mut store = EncounterStore::open(tmp.path()).unwrap();
    let why = store
        .mirror(run)
        .unwrap()
        .expect("the cut mirror is rewritten");
    assert!(why.contains("half an event"), "{why}");
    assert_mirror_is_the_table(tmp.path(), &store, run);

    // Lost, and the run played on at its table: the first write puts it back, then its own line.
    std::fs::remove_file(&path).unwrap();
    let store = EncounterStore::open(tmp.path()).unwrap();
    let mut table = at_table(store, run, Mara(Vec::new()));
    table
        .take_back_round()
        .unwrap()
        .expect("a round to take back");
    let joined = table.events().len();
    drop(table);
    let store = EncounterStore::open(tmp.path()).unwrap();
    assert_mirror_is_the_table(tmp.path(), &store, run);
    assert_eq!(read_jsonl::<Value>(&path).unwrap().len(), joined);
    let mut store = store;
    assert_eq!(store.mirror(run).unwrap(), None, "whole: kept as it is");
}

// ---- the scene ----

/// The speaker: each answer in turn, then `/quit`.
struct Says(Vec<Answer>);

#[async_trait]
impl Seat for Says {
    async fn decide(&mut self, _ask: &Ask) -> Answer {
        if self.0.is_empty() {
            return command("quit");
        }
        self.0.remove(0)
    }
}

fn line(text: &str) -> Answer {
    let mut values = Map::new();
    values.insert("line".into(), Value::from(text));
    Answer::Decide { values }
}

fn command(name: &str) -> Answer {
    Answer::Command {
        name: name.into(),
        values: Map::new(),
    }
}

/// A scene watched by nobody.
struct Quiet;
impl troupe_engine::CallWatch for Quiet {}
impl troupe_engine::Watch<troupe_scene::State, troupe_scene::Envelope> for Quiet {
    fn on_event(&mut self, _: &troupe_scene::State, _: &troupe_scene::Envelope) {}
}
impl SceneWatch for Quiet {}

/// The mill's scene begun in a fresh campaign directory.
fn mill(dir: &Path) -> (SceneStore, u32, Scene) {
    let text = std::fs::read_to_string(examples().join("mill.scene.yaml")).unwrap();
    let def = troupe_scene::check(&text).unwrap();
    let mut store = SceneStore::open(dir).unwrap();
    let run = store.begin(&def.id, "2025-01-01T00:00:00Z", &[]).unwrap();
    let scene = Scene::start(def, 7);
    store.append(run, &scene.events, 0).unwrap();
    (store, run, scene)
}

async fn play_scene(dir: &Path, run: u32, says: Vec<Answer>) -> usize {
    let store = SceneStore::open(dir).unwrap();
    let latest = store.run(run).unwrap().unwrap();
    let scene = Scene::resume(store.events(run).unwrap()).unwrap();
    let mut table = SceneTable::new(
        store,
        run,
        scene,
        latest.inputs,
        Says(says),
        Box::new(Quiet),
    );
    assert_eq!(table.play().await.unwrap(), SceneStop::Quit);
    table.events().len()
}

#[tokio::test]
async fn a_scene_runs_mirror_is_its_events_in_order_undo_and_all() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, run, _) = mill(tmp.path());
    drop(store);
    let says = vec![
        line("go to the mill yard"),
        command("undo"),
        line("go to the mill yard"),
    ];
    play_scene(tmp.path(), run, says).await;

    let store = SceneStore::open(tmp.path()).unwrap();
    let path = CampaignDir::new(tmp.path()).scene_log(run);
    assert_eq!(store.mirror_path(run), Some(path.clone()));
    assert_mirror_is_the_table(tmp.path(), &store, run);
    let lines: Vec<troupe_scene::Envelope> = read_jsonl(&path).unwrap();
    assert!(
        lines.iter().any(|l| l.undoes().is_some()),
        "the undo is a line"
    );
    assert!(
        store
            .marked_events(run)
            .unwrap()
            .iter()
            .any(|(_, undone)| *undone)
    );
    assert!(CampaignDir::new(tmp.path()).logged_sessions().is_empty());
}

#[tokio::test]
async fn a_scene_mirror_cut_short_or_lost_is_whole_again_when_the_run_is_reopened() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, run, _) = mill(tmp.path());
    drop(store);
    play_scene(tmp.path(), run, vec![line("go to the mill yard")]).await;
    let path = CampaignDir::new(tmp.path()).scene_log(run);

    cut_short(&path);
    // Reopened and quit at once: `/quit` counts its line, and that write mends the mirror.
    let events = play_scene(tmp.path(), run, Vec::new()).await;
    let store = SceneStore::open(tmp.path()).unwrap();
    assert_mirror_is_the_table(tmp.path(), &store, run);
    assert_eq!(read_jsonl::<Value>(&path).unwrap().len(), events);

    std::fs::remove_file(&path).unwrap();
    play_scene(tmp.path(), run, vec![line("go to the storehouse")]).await;
    assert_mirror_is_the_table(tmp.path(), &store, run);
}
