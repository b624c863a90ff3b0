//! Each seat's stream (`/feed`, the page's long poll): a page that reconnects after the last
//! line it read (`after`, the stream's Last-Event-ID) gets exactly what came since, across a
//! restart too; a held request wakes when the table changes; and what is for the GM alone never
//! reaches another seat's stream, byte for byte.

use std::time::{Duration, Instant};

use serde_json::Value;
use troupe_scene::table::{GM, SPEAKER};

use crate::support::{Pages, Server, keys_of, open_scene, scene_run, until_said};

/// The ids of a stream's lines.
fn ids(feed: &Value) -> Vec<u64> {
    feed["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn streams_resume_after_the_last_line_read_without_repeats_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (table, links) = open_scene(dir.path());
    let keys = keys_of(&links);
    let server = Server::start(vec![scene_run(dir.path())], None).await;
    let pages = Pages::new(&server, &table.id, &keys);
    pages.say("go to the mill yard").await;
    until_said(dir.path(), table.session, "go to the mill yard").await;
    let read = pages.feed("watch", None, None).await;
    let seen = ids(&read);
    let last = *seen.last().expect("the line said is on the stream");

    // A request held on the version it read wakes when a line is said, well inside its hold.
    let version = read["version"].as_u64().unwrap();
    let held = pages.feed("watch", Some(last), Some(version));
    let say = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        pages.say("listen").await;
    };
    let started = Instant::now();
    let (woken, ()) = tokio::join!(held, say);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(woken["version"].as_u64().unwrap() > version);
    until_said(dir.path(), table.session, "listen").await;

    let whole = pages.feed("watch", None, None).await;
    let resumed = pages.feed("watch", Some(last), None).await;
    let new = ids(&resumed);
    assert!(!new.is_empty(), "the lines said since");
    assert!(new.iter().all(|id| *id > last), "{new:?} after {last}");
    assert_eq!(
        [seen.clone(), new.clone()].concat(),
        ids(&whole),
        "what was read and what came since is the whole stream, once"
    );
    let before = whole["lines"].clone();
    let last = *new.last().unwrap();
    drop(pages);
    drop(server);

    // Reopened in-process: the same links, the same lines with the same ids, nothing again.
    let server = Server::start(vec![scene_run(dir.path())], None).await;
    let pages = Pages::new(&server, &table.id, &keys);
    assert_eq!(pages.feed("watch", None, None).await["lines"], before);
    assert_eq!(
        ids(&pages.feed("watch", Some(last), None).await),
        [] as [u64; 0]
    );
    pages.say("examine the place closely").await;
    until_said(dir.path(), table.session, "examine the place closely").await;
    let after_restart = ids(&pages.feed("watch", Some(last), None).await);
    assert!(!after_restart.is_empty() && after_restart.iter().all(|id| *id > last));
}

#[tokio::test]
async fn the_gms_notes_and_view_reach_no_other_seats_stream_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (table, links) = open_scene(dir.path());
    let server = Server::start(vec![scene_run(dir.path())], None).await;
    let pages = Pages::new(&server, &table.id, &keys_of(&links));
    pages.say("go to the mill yard").await;
    until_said(dir.path(), table.session, "go to the mill yard").await;
    pages.gm("note", "tam NOTEQZ9 owes the smuggler").await;
    pages.say("look").await;
    until_said(dir.path(), table.session, "look").await;
    // The GM's page is asked again once the note's line is on its stream.
    let started = Instant::now();
    while !pages.raw_feed(GM).await.contains("NOTEQZ9") {
        assert!(
            started.elapsed() < crate::support::PATIENCE,
            "the GM never read the note"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Vesk the smuggler hides in the storehouse: in the GM's view (their sheet) alone.
    assert!(pages.raw_feed(GM).await.contains("Vesk"));
    for seat in [SPEAKER, "watch"] {
        let raw = pages.raw_feed(seat).await;
        assert!(
            raw.contains("yard"),
            "{seat} reads the table's story: {raw}"
        );
        for secret in ["NOTEQZ9", "Vesk"] {
            assert!(!raw.contains(secret), "{seat} read {secret:?}: {raw}");
        }
    }
}
