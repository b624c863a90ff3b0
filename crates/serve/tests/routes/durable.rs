//! Issue 45's promise at the answer route: an answer the server acknowledged (204) is in the
//! table's SQLite file before the page hears it, and a server dropped before the game recorded
//! it applies it, once, when the table is reopened. The kill is made deterministic here: the
//! game never gets the answer the hub handed it (its surface holds it forever), as a process
//! killed between the 204 and its step's commit never records it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::sync::futures::Notified;
use troupe_engine::store::inbox::{Inbox, Received};
use troupe_engine::surface::{Draft, HandOvers, Joins, Playable, Surface, Update};
use troupe_scene::table::SPEAKER;
use troupe_seat::{Answer, Ask};

use crate::support::{
    Pages, Server, keys_of, open_scene, scene_game, scene_run, table_run, times_said, until_said,
};

/// The table's surface, except that an answer of the speaker's never reaches the game.
struct Swallowing(Arc<dyn Surface>);

#[async_trait]
impl Surface for Swallowing {
    fn publish(&self, update: Update) {
        self.0.publish(update);
    }
    fn thinking(&self, who: Option<String>) {
        self.0.thinking(who);
    }
    fn progress(&self, seat: &str, progress: &troupe_llm::Progress, draft: Draft) {
        self.0.progress(seat, progress, draft);
    }
    async fn ask_and_wait(&self, ask: Ask) -> Option<Answer> {
        let speaker = ask.seat == SPEAKER;
        let answer = self.0.ask_and_wait(ask).await;
        if speaker {
            std::future::pending::<()>().await;
        }
        answer
    }
    fn mark_ready(&self) {
        self.0.mark_ready();
    }
    fn withdraw_asks(&self) {
        self.0.withdraw_asks();
    }
    fn undo_by_table(&self) {
        self.0.undo_by_table();
    }
    fn undo_asked(&self) -> Notified<'_> {
        self.0.undo_asked()
    }
    fn received(&self) -> Received {
        self.0.received()
    }
    fn hand_overs(&self) -> HandOvers {
        self.0.hand_overs()
    }
    fn handed(&self) -> Arc<Notify> {
        self.0.handed()
    }
    fn joins(&self) -> Joins {
        self.0.joins()
    }
    fn ai_failed(&self, seat: &str, failed: bool) {
        self.0.ai_failed(seat, failed);
    }
}

/// The mill's scene on a [`Swallowing`] surface.
struct Killed(Box<dyn Playable>);

#[async_trait(?Send)]
impl Playable for Killed {
    async fn play(self: Box<Self>, surface: Arc<dyn Surface>) -> Result<String, String> {
        self.0.play(Arc::new(Swallowing(surface))).await
    }
}

/// The speaker's lines the table's inbox holds.
fn held_lines(dir: &std::path::Path, table: &str) -> Vec<Value> {
    let inbox = Inbox::open(dir, table).unwrap();
    inbox
        .held()
        .unwrap()
        .into_iter()
        .filter(|h| h.seat == SPEAKER)
        .map(|h| match h.answer {
            Answer::Decide { values } => values["line"].clone(),
            other => json!(format!("{other:?}")),
        })
        .collect()
}

/// The binary's test kills one `troupe serve` at one moment mid-step (serve_durable.rs); here
/// the server is dropped at several moments after the 204, from at once to well after it, the
/// game never recording the answer: at each the answer is in campaign.db, and the reopened
/// table applies it once.
#[tokio::test]
async fn an_acknowledged_answer_is_on_disk_and_applied_once_after_the_server_is_dropped() {
    for ms in [0, 20, 100, 400] {
        dropped_after_its_204(Duration::from_millis(ms)).await;
    }
}

/// The speaker's line acknowledged, the server dropped `after` the 204 and the table reopened.
async fn dropped_after_its_204(after: Duration) {
    let dir = tempfile::tempdir().unwrap();
    let (table, links) = open_scene(dir.path());
    let keys = keys_of(&links);
    let game = Killed(scene_game(dir.path(), table.session));
    let server = Server::start(vec![table_run(dir.path(), Box::new(game))], None).await;
    let pages = Pages::new(&server, &table.id, &keys);
    let asked = pages.next_ask(SPEAKER).await;
    let line = "talk to Old Tam about the ledger";
    let (status, text) = pages.answer(SPEAKER, &asked, json!({"line": line})).await;
    assert_eq!(status, 204, "{text}");
    // Acknowledged: in campaign.db (read through a connection of its own), not yet in the log.
    assert_eq!(held_lines(dir.path(), &table.id), [json!(line)]);
    // And still only there when the server is dropped.
    tokio::time::sleep(after).await;
    assert_eq!(
        held_lines(dir.path(), &table.id),
        [json!(line)],
        "{after:?}"
    );
    assert_eq!(times_said(dir.path(), table.session, line), 0, "{after:?}");
    drop(pages);
    drop(server);

    let server = Server::start(vec![scene_run(dir.path())], None).await;
    let pages = Pages::new(&server, &table.id, &keys);
    until_said(dir.path(), table.session, line).await;
    // The reopened table took the line from the inbox and asks for the next one (a new ask).
    let next = pages.next_ask(SPEAKER).await;
    assert!(
        next["ask"]["id"].as_u64() > asked["ask"]["id"].as_u64(),
        "{next}"
    );
    pages.say("listen").await;
    until_said(dir.path(), table.session, "listen").await;
    assert_eq!(
        times_said(dir.path(), table.session, line),
        1,
        "{after:?}: applied once"
    );
    assert_eq!(
        held_lines(dir.path(), &table.id),
        [] as [Value; 0],
        "{after:?}: gone with its commit"
    );
}
