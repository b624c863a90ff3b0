//! One undo for every game's log: a game's undo event, appended, marks the rows it takes back
//! `undone` in its own transaction, so the store's marks always agree with the game's fold,
//! and a file written before the marks gets them from its undo events when it is opened.

use troupe_encounter::table::EncounterStore;
use troupe_engine::{GameStore, Logged};
use troupe_scene::table::SceneStore;
use troupe_scene::{Caller, Scene, ToolCall};

/// A two-zone scene where one character walks back and forth.
fn scene() -> Scene {
    let text = "scene: {id: s, goal: g}\nzones: [{id: a, adjacent: [b]}, {id: b, adjacent: [a]}]\n\
                entities: [{id: p, kind: pc, zone: a}]\nturn_order: [p]\n";
    Scene::start(troupe_scene::check(text).unwrap(), 5)
}

fn walk(scene: &mut Scene, zone: &str) {
    let call = ToolCall::Move {
        actor: "p".into(),
        zone: zone.into(),
    };
    scene.act(&format!("go to {zone}"), call, Caller::Player);
}

/// The seqs the store marks undone, and the seqs the game's own fold leaves standing.
fn marks_and_fold<E: Logged>(store: &GameStore<E>, run: u32) -> (Vec<u64>, Vec<u64>) {
    let rows = store.marked_events(run).unwrap();
    let marked = rows
        .iter()
        .filter(|(_, undone)| *undone)
        .map(|(e, _)| e.seq())
        .collect();
    let unmarked = rows
        .iter()
        .filter(|(e, undone)| !undone && e.undoes().is_none())
        .map(|(e, _)| e.seq())
        .collect();
    (marked, unmarked)
}

#[test]
fn a_scene_undo_marks_exactly_what_the_fold_takes_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SceneStore::open(dir.path()).unwrap();
    let run = store.begin("s", "now", &[]).unwrap();
    let mut scene = scene();
    walk(&mut scene, "b");
    walk(&mut scene, "a");
    store.append(run, &scene.events, 2).unwrap();
    let before = scene.events.len();
    scene.undo().unwrap();
    store.append(run, &scene.events[before..], 3).unwrap();

    let standing: Vec<u64> = troupe_scene::log::live(&scene.events)
        .iter()
        .map(|e| e.seq)
        .collect();
    let (marked, unmarked) = marks_and_fold(&store, run);
    assert_eq!(unmarked, standing, "the store and the fold agree");
    assert!(!marked.is_empty(), "the undo marked what it took back");
    let undo_seq = scene.events.last().unwrap().seq;
    assert!(marked.iter().all(|&seq| seq < undo_seq));
    // An undo of an undo's turn: marks only what still stood.
    walk(&mut scene, "b");
    let before = scene.events.len();
    scene.undo().unwrap();
    store.append(run, &scene.events[before..], 4).unwrap();
    let standing: Vec<u64> = troupe_scene::log::live(&scene.events)
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(marks_and_fold(&store, run).1, standing);
}

/// An encounter's log, as JSON: two rounds of one seat's actions, then `troupe encounter
/// undo`'s event taking back the second.
fn encounter_events() -> Vec<troupe_encounter::log::Envelope> {
    let narrated = |seq: u64, text: &str| serde_json::json!({"seq": seq, "event_type": "narrated", "text": text, "facts": []});
    let rows = vec![
        narrated(0, "The forge is cold."),
        narrated(1, "Mara works the bellows."),
        narrated(2, "The coals catch."),
        serde_json::json!({"seq": 3, "event_type": "undone", "from": 1}),
        narrated(4, "Mara waits."),
    ];
    rows.into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect()
}

#[test]
fn an_encounter_undo_marks_in_the_same_append() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = EncounterStore::open(dir.path()).unwrap();
    let run = store.begin("smithy", "now", &[]).unwrap();
    store.append(run, &encounter_events(), 0).unwrap();
    let events = store.events(run).unwrap();
    let standing: Vec<u64> = troupe_encounter::log::live(&events)
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(standing, vec![0, 4]);
    assert_eq!(marks_and_fold(&store, run), (vec![1, 2], vec![0, 4]));
}

/// `campaign.db` as troupe wrote it before the undo marks: the scene tables without `undone`.
fn old_file(dir: &std::path::Path, events: &[troupe_scene::Envelope]) {
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE scene_runs (number INTEGER PRIMARY KEY, scene_id TEXT NOT NULL,
             started_at TEXT NOT NULL, inputs INTEGER NOT NULL DEFAULT 0,
             ended INTEGER NOT NULL DEFAULT 0);
         CREATE TABLE scene_events (run INTEGER NOT NULL REFERENCES scene_runs(number),
             seq INTEGER NOT NULL, event_type TEXT NOT NULL, body TEXT NOT NULL,
             PRIMARY KEY (run, seq));
         INSERT INTO scene_runs (scene_id, started_at) VALUES ('s', 'then');",
    )
    .unwrap();
    for env in events {
        let value = serde_json::to_value(env).unwrap();
        conn.execute(
            "INSERT INTO scene_events (run, seq, event_type, body) VALUES (1, ?1, ?2, ?3)",
            rusqlite::params![
                env.seq,
                value["event_type"].as_str().unwrap(),
                value.to_string()
            ],
        )
        .unwrap();
    }
}

#[test]
fn a_file_from_before_the_marks_gets_them_from_its_undo_events() {
    let dir = tempfile::tempdir().unwrap();
    let mut scene = scene();
    walk(&mut scene, "b");
    walk(&mut scene, "a");
    scene.undo().unwrap();
    old_file(dir.path(), &scene.events);
    // Read-only, it reads as before, unmarked.
    let old = SceneStore::open_existing(dir.path()).unwrap().unwrap();
    assert!(old.marked_events(1).unwrap().iter().all(|(_, u)| !u));
    assert_eq!(old.events(1).unwrap(), scene.events);

    let store = SceneStore::open(dir.path()).unwrap();
    let standing: Vec<u64> = troupe_scene::log::live(&scene.events)
        .iter()
        .map(|e| e.seq)
        .collect();
    let (marked, unmarked) = marks_and_fold(&store, 1);
    assert_eq!(unmarked, standing);
    assert!(!marked.is_empty());
    assert_eq!(store.events(1).unwrap(), scene.events, "no event changed");
    // Opening it again marks nothing twice.
    drop(store);
    let again = SceneStore::open(dir.path()).unwrap();
    assert_eq!(marks_and_fold(&again, 1), (marked, unmarked));
}

#[test]
fn a_cut_short_campaign_file_gets_the_same_words_in_every_game() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = SceneStore::open(dir.path()).unwrap();
        let run = store.begin("s", "now", &[]).unwrap();
        let mut scene = scene();
        walk(&mut scene, "b");
        store.append(run, &scene.events, 1).unwrap();
        troupe_lasers::Store::open(dir.path()).unwrap();
    }
    let db = dir.path().join("campaign.db");
    let file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    file.set_len(1024).unwrap();
    let session = troupe_lasers::Store::open(dir.path()).err().unwrap();
    let scene = SceneStore::open(dir.path()).err().unwrap();
    let encounter = EncounterStore::open(dir.path()).err().unwrap();
    assert!(session.to_string().contains("cut short"), "{session}");
    assert_eq!(scene.to_string(), session.to_string());
    assert_eq!(encounter.to_string(), session.to_string());
}

/// A second store opened in a process that already has `campaign.db` open (a served table
/// reads its title beside its loop) must not cost the first one its writes. Opening checks the
/// file's header for a cut-short file, and closing a file descriptor drops every POSIX lock the
/// process holds on that file: another process, closing, then took itself for the last
/// connection, checkpointed and deleted the WAL under the first, whose later commits went to a
/// deleted file (seen when a restarted web table stopped saving).
#[test]
fn a_second_store_in_the_same_process_costs_the_first_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut scene = scene();
    walk(&mut scene, "b");
    let run = {
        let mut store = SceneStore::open(dir.path()).unwrap();
        let run = store.begin("s", "now", &[]).unwrap();
        store.append(run, &scene.events, 1).unwrap();
        run
    };
    // The first store opens the file as a reopened table does: its WAL is empty.
    let mut first = SceneStore::open(dir.path()).unwrap();
    assert_eq!(first.events(run).unwrap(), scene.events);
    drop(SceneStore::open(dir.path()).unwrap());
    assert_eq!(
        events_seen_by_another_process(dir.path()),
        scene.events.len()
    );
    let before = scene.events.len();
    walk(&mut scene, "a");
    first.append(run, &scene.events[before..], 2).unwrap();
    assert_eq!(
        events_seen_by_another_process(dir.path()),
        scene.events.len(),
        "a commit another process cannot see is lost at a kill"
    );
}

const READ_IN: &str = "TROUPE_TEST_READ_CAMPAIGN";

/// How many scene events another process reads from the campaign: this test binary again,
/// running only [`another_process_reads_the_campaign`].
fn events_seen_by_another_process(dir: &std::path::Path) -> usize {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "one_undo::another_process_reads_the_campaign",
            "--nocapture",
        ])
        .env(READ_IN, dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("scene events: "))
        .unwrap_or_else(|| panic!("no count in {stdout}"))
        .parse()
        .unwrap()
}

/// The other process of [`events_seen_by_another_process`]: with the variable set, open the
/// campaign's scene runs with a plain connection, print how many events run 1 has, and close
/// it. Without it (the suite's own run of it), nothing to do.
#[test]
fn another_process_reads_the_campaign() {
    let Some(dir) = std::env::var_os(READ_IN) else {
        return;
    };
    let db = std::path::Path::new(&dir).join("campaign.db");
    let conn = rusqlite::Connection::open(db).unwrap();
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM scene_events WHERE run = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    println!("scene events: {n}");
}
