//! Every game's JSONL mirror: an encounter run and a scene run, played in-process at their
//! tables, leave `logs/encounter-N.jsonl` and `logs/scene-N.jsonl` holding the run's events
//! exactly as `campaign.db` holds them, in order, undo included; a mirror cut short or lost (a
//! kill between a commit and its mirror write) is whole again once the run is reopened.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use troupe_campaign::CampaignDir;
use troupe_encounter::log::State;
use troupe_engine::encounter::asks::{ACTION, ACTION_AGAIN, ROLL};
use troupe_engine::encounter::start::{Begun, Opening, SeatSpec, begin, campaign_in};
use troupe_engine::encounter::{EncounterTable, EncounterWatch, Stop};
use troupe_engine::scene::{SceneStop, SceneTable, SceneWatch};
use troupe_engine::{EncounterStore, GameStore, Logged, SceneStore, read_jsonl};
use troupe_llm::{Gateway, ReplayModel, RetryPolicy, TokioSleeper};
use troupe_memory::MemoryStore;
use troupe_scene::Scene;
use troupe_seat::{Answer, Ask, Seat};

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The mirror's lines against the table's rows: the same bodies, byte for byte, in `seq`
/// order; and a row is marked undone exactly when a later `undone` line's `from`/`from_seq`
/// reaches back over it (what docs/log-schema.md tells a reader of the mirror).
pub(crate) fn assert_mirror_is_the_table<E: Logged>(dir: &Path, store: &GameStore<E>, run: u32) {
    let text = std::fs::read_to_string(store.mirror_path(run).unwrap()).unwrap();
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    let sql = format!(
        "SELECT body, undone FROM {} WHERE {} = ?1 ORDER BY seq",
        E::EVENTS,
        E::KEY
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    let rows: Vec<(String, bool)> = stmt
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!rows.is_empty());
    let bodies: Vec<&str> = rows.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), bodies);
    assert!(text.ends_with('\n'));
    let lines: Vec<E> = read_jsonl(&store.mirror_path(run).unwrap()).unwrap();
    let marks: Vec<bool> = rows.iter().map(|(_, undone)| *undone).collect();
    assert_eq!(undone_by_the_lines(&lines), marks);
}

/// Which lines a reader of the mirror takes as undone: those a later undo line reaches back over.
fn undone_by_the_lines<E: Logged>(lines: &[E]) -> Vec<bool> {
    lines
        .iter()
        .map(|line| {
            lines.iter().any(|undo| {
                undo.undoes()
                    .is_some_and(|from| from <= line.seq() && line.seq() < undo.seq())
            })
        })
        .collect()
}

/// Cut the mirror as a kill would: its last line lost and the one before torn in half.
pub(crate) fn cut_short(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop();
    let torn = lines.pop().unwrap();
    let half: String = torn.chars().take(torn.chars().count() / 2).collect();
    let kept = lines.join("\n") + "\n" + &half;
    std::fs::write(path, kept).unwrap();
}

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

struct Unwatched;

impl EncounterWatch for Unwatched {
    fn on_event(&mut self, _state: &State, _env: &troupe_encounter::log::Envelope) {}
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
    let prompts = troupe_engine::prompts::embedded();
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

struct Quiet;

impl SceneWatch for Quiet {
    fn on_event(&mut self, _state: &troupe_scene::State, _env: &troupe_scene::Envelope) {}
}

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
