//! A scene played online, in-process: [`SceneGame`] on a scripted surface (no pages, no server),
//! its person's lines and the GM's commands from a script. What a game sends a surface is the
//! whole of what the pages may show, so the walls are checked here: the GM's note on a card and
//! the GM's view (a hidden entity) reach the GM's seat alone, and a reopened table publishes its
//! story again with the same ids, audiences and texts.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use troupe_engine::surface::{Audience, GM, Line, Playable, ScriptedSurface, Surface, WATCH};
use troupe_scene::Scene;
use troupe_scene::table::online::SceneGame;
use troupe_scene::table::{PlannerKind, SPEAKER, SceneModels, SceneStore};
use troupe_seat::Answer;

fn mill() -> troupe_scene::SceneDef {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mill.scene.yaml"
    );
    troupe_scene::check(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The mill's scene begun in a fresh store with a person at the speaker's seat (as `troupe serve
/// --scene` begins it), and its run's number.
fn begun(dir: &std::path::Path) -> u32 {
    let mut store = SceneStore::open(dir).unwrap();
    let run = store
        .begin("mill-night", "2025-01-01T00:00:00Z", &[])
        .unwrap();
    let scene = Scene::start(mill(), 7);
    store.append(run, &scene.events, 0).unwrap();
    run
}

/// The table's game on the store in `dir`: the rules planner, no model, a GM seat.
fn game(dir: &std::path::Path, run: u32) -> Box<SceneGame> {
    Box::new(SceneGame {
        store: SceneStore::open(dir).unwrap(),
        run,
        models: SceneModels {
            gateway: None,
            prompts: troupe_prompts::Prompts::embedded(&[troupe_scene::prompts::TEMPLATES]),
            planner: PlannerKind::Rules,
            polish: false,
        },
        ai: None,
        gm: true,
        keep_world: Box::new(|_, _| Ok(())),
    })
}

fn line(text: &str) -> (String, Answer) {
    let values = Map::from_iter([("line".to_string(), Value::String(text.into()))]);
    (SPEAKER.into(), Answer::Decide { values })
}

fn gm_command(name: &str, args: &str) -> (String, Answer) {
    let values = json!({ "args": args }).as_object().cloned().unwrap();
    let name = name.into();
    (GM.into(), Answer::Command { name, values })
}

/// Every line the game sent, in order: (id, kind, text, audience).
fn lines(surface: &ScriptedSurface) -> Vec<(u64, &'static str, String, Audience)> {
    let all: Vec<Line> = surface
        .updates()
        .iter()
        .flat_map(|u| u.lines.clone())
        .collect();
    all.into_iter()
        .map(|l| (l.id, l.kind, l.text, l.audience))
        .collect()
}

/// The last sheet the game published for `seat`, as text.
fn last_sheet(surface: &ScriptedSurface, seat: &str) -> String {
    let updates = surface.updates();
    let mut sheets = updates.iter().flat_map(|u| u.sheets.iter());
    let last = sheets.rfind(|(s, _)| s == seat);
    last.map(|(_, sheet)| sheet.to_string()).unwrap_or_default()
}

async fn play(surface: &Arc<ScriptedSurface>, game: Box<SceneGame>) -> Result<String, String> {
    let on: Arc<dyn Surface> = surface.clone();
    game.play(on).await
}

#[tokio::test]
async fn the_gms_note_and_the_gms_view_reach_the_gm_alone() {
    let dir = tempfile::tempdir().unwrap();
    let run = begun(dir.path());
    let surface = Arc::new(ScriptedSurface::new([
        line("go to the mill yard"),
        gm_command("note", "tam NOTE-7Q owes the smuggler"),
        line("look"),
    ]));
    let stopped = play(&surface, game(dir.path(), run)).await;
    assert_eq!(
        stopped.as_deref(),
        Ok("the speaker left"),
        "the script ran out"
    );
    assert_eq!(surface.unanswered(), 0);
    assert!(
        surface.asked().iter().all(|a| a.ready),
        "no seat was asked before the streams held the story"
    );
    let lines = lines(&surface);
    let (_, kind, text, audience) = lines
        .iter()
        .find(|(_, _, text, _)| text.contains("NOTE-7Q"))
        .expect("the note is a line");
    assert_eq!((*kind, audience), ("session", &Audience::Gm), "{text}");
    assert!(audience.includes(GM));
    for reader in [SPEAKER, WATCH] {
        assert!(!audience.includes(reader), "{reader} reads the GM's note");
    }
    let moved = lines
        .iter()
        .find(|(_, kind, text, _)| *kind == "gm" && text.contains("yard"))
        .expect("the move is narrated");
    assert_eq!(
        moved.3,
        Audience::Table,
        "the world's narration is everyone's"
    );
    // Each event's lines numbered from its sequence number: ids only grow.
    assert!(lines.windows(2).all(|w| w[0].0 < w[1].0), "{lines:?}");
    // Vesk hides in the storehouse: in the GM's view, never in the speaker's.
    assert!(last_sheet(&surface, GM).contains("Vesk"));
    let speaker = last_sheet(&surface, SPEAKER);
    assert!(
        speaker.contains("Wren") && !speaker.contains("Vesk"),
        "{speaker}"
    );
    // Every ask the speaker's page got, whole as it goes on the wire (the view an AI at the seat
    // makes its prompt of): neither the hidden smuggler nor the GM's note.
    let speakers = surface
        .asked()
        .into_iter()
        .filter(|a| a.ask.seat == SPEAKER);
    for asked in speakers {
        let wire = serde_json::to_string(&asked.ask).unwrap();
        assert!(wire.contains("Wren"), "{wire}");
        for secret in ["Vesk", "smuggler\"", "NOTE-7Q"] {
            assert!(!wire.contains(secret), "{secret} in {wire}");
        }
    }
}

#[tokio::test]
async fn a_reopened_table_publishes_its_story_again_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let run = begun(dir.path());
    let first = Arc::new(ScriptedSurface::new([
        line("go to the mill yard"),
        gm_command("note", "tam owes the smuggler"),
        line("talk to Tam about the ledger"),
    ]));
    play(&first, game(dir.path(), run)).await.unwrap();
    let played = lines(&first);
    assert!(played.len() >= 3, "{played:?}");
    // After a restart: the same store, nobody answering yet.
    let again = Arc::new(ScriptedSurface::new([]));
    play(&again, game(dir.path(), run)).await.unwrap();
    let asked = again.asked();
    let first_ask = asked.iter().find(|a| a.ask.seat == SPEAKER).unwrap();
    assert!(first_ask.ready);
    assert_eq!(lines(&again), played, "the same lines, ids and audiences");
}
