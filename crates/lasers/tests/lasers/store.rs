#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! campaign.db: what a session is resumed from.

use crate::support;

use support::*;
use troupe_engine::*;
use troupe_lasers::*;

#[tokio::test]
async fn the_store_holds_exactly_what_the_mirror_shows() {
    let r = run("campaign.json", plain_turn(), QueueGm::turns(1), 1).await;
    let dir = r.log_path.parent().unwrap().parent().unwrap();
    let store = Store::open(dir).unwrap();
    let stored = store.live_events(1).unwrap();
    assert_eq!(stored.len(), r.log.len());
    for (a, b) in stored.iter().zip(&r.log) {
        assert_eq!(
            serde_json::to_value(a).unwrap(),
            serde_json::to_value(b).unwrap()
        );
    }
    let last = stored.last().map(|e| e.seq);
    assert_eq!(
        check_mirror(&r.log_path, stored.len() as u64, last),
        MirrorCheck::InStep
    );
    assert!(matches!(
        check_mirror(&r.log_path, stored.len() as u64 + 1, last),
        MirrorCheck::Stale(w) if w.contains("events")
    ));
    assert!(matches!(
        check_mirror(&r.log_path, stored.len() as u64, last.map(|s| s + 1)),
        MirrorCheck::Stale(w) if w.contains("last event")
    ));
    let info = store.session(1).unwrap().unwrap();
    assert_eq!(info.turns, 1);
    assert_eq!(
        info.ended_reason.as_deref(),
        Some("the GM ended the session")
    );
}

#[tokio::test]
async fn undone_events_stay_stored_but_leave_the_fold() {
    let r = run("campaign.json", plain_turn(), QueueGm::turns(1), 1).await;
    let dir = r.log_path.parent().unwrap().parent().unwrap();
    let mut store = Store::open(dir).unwrap();
    let outcome = r.events("gm_outcome")[0].seq;
    let total = r.log.len();
    let n = store.append_undo(1, &undo_from(&store, outcome)).unwrap();
    assert_eq!(n as u64, total as u64 - outcome);
    assert_eq!(store.events(1).unwrap().len(), total + 1);
    let live = store.live_events(1).unwrap();
    // What stands: the events before the undo, and the undo itself.
    assert_eq!(live.len() as u64, outcome + 1);
    assert!(matches!(
        live.last().unwrap().event,
        Event::EventsUndone { from_seq, .. } if from_seq == outcome
    ));
    let mut s = Session::default();
    for e in &live {
        s.apply(e);
    }
    assert!(s.turn.outcome.is_none() && s.ended.is_none());
    assert_eq!(
        store.next_seq(1).unwrap(),
        total as u64 + 1,
        "seq numbers are never reused"
    );
    let info = store.session(1).unwrap().unwrap();
    assert_eq!((info.turns, info.ended_reason), (0, None));
}

/// A session's log is written by the one store every game uses: its mirror follows each commit,
/// an undo's included, and a mirror cut short by a kill is whole again once the store reopens
/// it, as an encounter's and a scene's are (`mirrors.rs`).
#[tokio::test]
async fn a_sessions_mirror_is_the_stores_undo_and_all_and_is_mended_on_reopening() {
    let r = run("campaign.json", plain_turn(), QueueGm::turns(1), 1).await;
    let dir = r.log_path.parent().unwrap().parent().unwrap();
    let mut store = Store::open(dir).unwrap();
    assert_eq!(store.mirror_file(1), Some(r.log_path.clone()));
    let outcome = r.events("gm_outcome")[0].seq;
    store.append_undo(1, &undo_from(&store, outcome)).unwrap();
    troupe_test_support::mirror::assert_mirror_is_the_table(dir, &store, 1);
    drop(store);

    troupe_test_support::mirror::cut_short(&r.log_path);
    let mut store = Store::open(dir).unwrap();
    let why = store
        .mirror(1)
        .unwrap()
        .expect("a torn mirror is rewritten");
    assert!(why.contains("half an event"), "{why}");
    assert_eq!(
        store.mirror(1).unwrap(),
        None,
        "checked once, then kept open"
    );
    troupe_test_support::mirror::assert_mirror_is_the_table(dir, &store, 1);
}

#[test]
fn session_numbers_skip_logs_already_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    std::fs::write(session_log_path(dir.path(), 1), "").unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.next_session_number().unwrap(), 2);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let conn = rusqlite::Connection::open(dir.path().join("campaign.db")).unwrap();
    conn.execute_batch("PRAGMA user_version = 7;").unwrap();
    drop(conn);
    let err = Store::open(dir.path()).err().unwrap().to_string();
    assert!(
        err.contains("newer troupe") && err.contains("schema 7"),
        "{err}"
    );
}

#[test]
fn a_mirror_with_a_torn_tail_or_missing_lines_is_stale() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, "{\"seq\":0").unwrap();
    assert!(
        matches!(check_mirror(&path, 1, Some(0)), MirrorCheck::Stale(w) if w.contains("half an event"))
    );
    std::fs::write(&path, "").unwrap();
    assert_eq!(check_mirror(&path, 0, None), MirrorCheck::InStep);
    std::fs::write(&path, "{\"seq\":0\ngarbage\n").unwrap();
    assert!(
        matches!(check_mirror(&path, 2, Some(1)), MirrorCheck::Stale(w) if w.contains("line 2"))
    );
    assert!(matches!(
        check_mirror(&dir.path().join("missing.jsonl"), 0, None),
        MirrorCheck::Stale(w) if w.contains("missing")
    ));
}

/// The session as JSON: two folds are the same state when these are equal.
fn state_json(s: &Session) -> String {
    serde_json::to_string(s).unwrap()
}

#[tokio::test]
async fn a_resume_from_the_snapshot_is_the_whole_fold() {
    let replies = (0..5).flat_map(|_| plain_turn()).collect();
    let r = run("campaign.json", replies, QueueGm::turns(5), 3).await;
    let dir = r.log_path.parent().unwrap().parent().unwrap();
    let mut store = Store::open(dir).unwrap();
    let whole = snapshot::fold(1, &store.live_events(1).unwrap()).unwrap();
    let (seq, _, _) = store.latest_snapshot(1).unwrap().expect("a snapshot");
    assert!(
        seq < store.next_seq(1).unwrap() - 1,
        "the snapshot is older than the log's end, so the resume folds events after it"
    );
    assert_eq!(
        state_json(&snapshot::fold_stored(&store, 1).unwrap()),
        state_json(&whole)
    );
    // Five turns played; the GM quit when the sixth began.
    assert_eq!(whole.turn_number, 6);
    assert_eq!(whole.history.len(), visibility::RECENT_TURNS);

    // Undo from the fifth turn on: the snapshot it fed goes, and the fold still agrees.
    let fifth = r
        .log
        .iter()
        .find(|e| matches!(e.event, Event::TurnStarted) && e.turn_number == 5)
        .unwrap()
        .seq;
    store.append_undo(1, &undo_from(&store, fifth)).unwrap();
    let whole = snapshot::fold(1, &store.live_events(1).unwrap()).unwrap();
    assert_eq!(whole.turn_number, 4);
    assert_eq!(
        state_json(&snapshot::fold_stored(&store, 1).unwrap()),
        state_json(&whole)
    );
}

#[tokio::test]
async fn an_unreadable_snapshot_is_ignored_not_trusted() {
    let replies = (0..2).flat_map(|_| plain_turn()).collect();
    let r = run("campaign.json", replies, QueueGm::turns(2), 3).await;
    let dir = r.log_path.parent().unwrap().parent().unwrap();
    let whole = {
        let store = Store::open(dir).unwrap();
        snapshot::fold(1, &store.live_events(1).unwrap()).unwrap()
    };
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    conn.execute("UPDATE snapshots SET body = '{\"id\": 7}'", [])
        .unwrap();
    drop(conn);
    let store = Store::open(dir).unwrap();
    assert_eq!(
        state_json(&snapshot::fold_stored(&store, 1).unwrap()),
        state_json(&whole)
    );
}

#[tokio::test]
async fn a_damaged_event_is_named_with_what_to_do() {
    let replies = (0..2).flat_map(|_| plain_turn()).collect();
    let r = run("campaign.json", replies, QueueGm::turns(2), 3).await;
    let dir = r.log_path.parent().unwrap().parent().unwrap();
    let action = r.events("character_action")[1].seq;
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    conn.execute("DELETE FROM snapshots", []).unwrap();
    conn.execute(
        "UPDATE events SET body = '{\"event_type\": \"from_a_newer_troupe\"' WHERE seq = ?1",
        [action],
    )
    .unwrap();
    drop(conn);
    let store = Store::open(dir).unwrap();
    let err = snapshot::fold_stored(&store, 1).unwrap_err().to_string();
    assert!(
        err.contains(&format!("event {action} cannot be read")) && err.contains("troupe undo"),
        "{err}"
    );
    let (readable, bad) = store.readable_live_events(1).unwrap();
    assert_eq!(readable.len() as u64, action);
    assert_eq!(bad.map(|b| b.seq), Some(action));
}

/// The undo of session 1's events from `from_seq` on, as `troupe undo` records it.
fn undo_from(store: &Store, from_seq: u64) -> Envelope {
    let live = store.live_events(1).unwrap();
    let last = live.last().unwrap().clone();
    Envelope {
        seq: store.next_seq(1).unwrap(),
        event: Event::EventsUndone {
            from_seq,
            to_seq: last.seq,
            what: "a test's undo".into(),
        },
        ..last
    }
}
