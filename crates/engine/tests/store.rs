#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! campaign.db: what a session is resumed from.

mod support;

use support::*;
use troupe_engine::*;

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
    assert_eq!(check_mirror(&r.log_path, &stored), MirrorCheck::InStep);
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
    let n = store.mark_undone(1, outcome).unwrap();
    assert_eq!(n as u64, total as u64 - outcome);
    assert_eq!(store.events(1).unwrap().len(), total);
    let live = store.live_events(1).unwrap();
    assert_eq!(live.len() as u64, outcome);
    let mut s = Session::default();
    for e in &live {
        s.apply(e);
    }
    assert!(s.turn.outcome.is_none() && s.ended.is_none());
    assert_eq!(
        store.next_seq(1).unwrap(),
        total as u64,
        "seq numbers are never reused"
    );
    let info = store.session(1).unwrap().unwrap();
    assert_eq!((info.turns, info.ended_reason), (0, None));
}

#[test]
fn session_numbers_skip_logs_already_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    std::fs::write(session_log_path(dir.path(), 1), "").unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.next_session_number(dir.path()).unwrap(), 2);
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
        matches!(check_mirror(&path, &[]), MirrorCheck::Stale(w) if w.contains("half an event"))
    );
    std::fs::write(&path, "").unwrap();
    assert_eq!(check_mirror(&path, &[]), MirrorCheck::InStep);
    assert!(matches!(
        check_mirror(&dir.path().join("missing.jsonl"), &[]),
        MirrorCheck::Stale(w) if w.contains("missing")
    ));
}
