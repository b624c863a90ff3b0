//! People's answers at a served table, on disk before the table says it has them.
//!
//! A page's answer is written here (its own commit, `synchronous = FULL` as every store's) before
//! the server answers the request, then handed to the game. The game's next commit takes it out
//! of the inbox in the same transaction that records what the answer decided (see
//! [`super::GameStore::consume_answers`]), so after a kill at any moment an answer is either
//! recorded and gone from here, or still here and handed again to the same seat's next ask of
//! the same decision when the table reopens: applied exactly once. The game asks again for
//! whatever was in flight when it stopped, so that ask comes.
//!
//! An answer the game never took (it stopped waiting for that seat: another seat answered
//! first) stays here until the seat's next fitting ask takes it, or an ask of another decision
//! shows it no longer fits.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use troupe_seat::Answer;

use super::{SqlResult, db, open_db};
use crate::Error;

/// The ids of the answers a game has taken since its last commit.
pub type Received = Arc<Mutex<Vec<i64>>>;

const TABLE: &str = "CREATE TABLE IF NOT EXISTS seat_answers (
    id       INTEGER PRIMARY KEY,
    tbl      TEXT NOT NULL,
    seat     TEXT NOT NULL,
    decision TEXT NOT NULL,
    answer   TEXT NOT NULL
);";

/// An answer kept in the inbox: who sent it, to which decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    pub id: i64,
    pub seat: String,
    pub decision: String,
    pub answer: Answer,
}

/// One served table's inbox in its campaign's `campaign.db`.
pub struct Inbox {
    conn: Mutex<Connection>,
    path: PathBuf,
    table: String,
}

impl Inbox {
    /// Open (or create) the inbox of table `table` in a campaign directory.
    pub fn open(campaign_dir: &Path, table: &str) -> Result<Inbox, Error> {
        let (conn, path) = open_db(campaign_dir)?;
        conn.execute_batch(TABLE).map_err(|e| db(&path, e))?;
        Ok(Inbox {
            conn: Mutex::new(conn),
            path,
            table: table.to_string(),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keep an answer, on disk when this returns: its id.
    pub fn keep(&self, seat: &str, decision: &str, answer: &Answer) -> Result<i64, Error> {
        let body = serde_json::to_string(answer).map_err(|e| Error::Encode(e.to_string()))?;
        let conn = self.conn();
        conn.execute(
            "INSERT INTO seat_answers (tbl, seat, decision, answer) VALUES (?1, ?2, ?3, ?4)",
            params![self.table, seat, decision, body],
        )
        .map_err(|e| db(&self.path, e))?;
        Ok(conn.last_insert_rowid())
    }

    /// Drop an answer that will never be applied (the ask it was for is gone, or it no longer
    /// fits the seat's ask).
    pub fn drop_answer(&self, id: i64) -> Result<(), Error> {
        self.conn()
            .execute("DELETE FROM seat_answers WHERE id = ?1", params![id])
            .map(drop)
            .map_err(|e| db(&self.path, e))
    }

    /// The answers this table holds, oldest first: after a restart, those the game had not
    /// recorded when it stopped. One that cannot be read (a newer troupe's) is dropped.
    pub fn held(&self) -> Result<Vec<Held>, Error> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT id, seat, decision, answer FROM seat_answers WHERE tbl = ?1 ORDER BY id",
            )
            .map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![self.table], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, String>(3)?))
            })
            .map_err(|e| db(&self.path, e))?;
        let mut held = Vec::new();
        for row in rows {
            let (id, seat, decision, body) = row.map_err(|e| db(&self.path, e))?;
            if let Ok(answer) = serde_json::from_str(&body) {
                held.push(Held {
                    id,
                    seat,
                    decision,
                    answer,
                });
            }
        }
        Ok(held)
    }

    /// Whether answer `id` is still in the inbox (not yet recorded by the game).
    pub fn holds(&self, id: i64) -> Result<bool, Error> {
        self.conn()
            .query_row(
                "SELECT 1 FROM seat_answers WHERE id = ?1",
                params![id],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| db(&self.path, e))
    }
}

/// The answers taken since the last commit, for this commit to forget.
pub fn take(received: &Received) -> Vec<i64> {
    std::mem::take(&mut *received.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Inside a commit: the answers it records leave the inbox.
pub(crate) fn forget(tx: &Transaction<'_>, ids: &[i64]) -> SqlResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let mut stmt = tx.prepare_cached("DELETE FROM seat_answers WHERE id = ?1")?;
    for id in ids {
        stmt.execute(params![id])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GameStore, RunLog};
    use serde_json::{Map, Value};

    /// A game of one kind of event, for the store's own tests.
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Note {
        seq: u64,
    }

    impl RunLog for Note {
        const RUNS: &'static str = "note_runs";
        const EVENTS: &'static str = "note_events";
        fn seq(&self) -> u64 {
            self.seq
        }
        fn undoes(&self) -> Option<u64> {
            None
        }
        fn ends_run(&self) -> bool {
            false
        }
        fn mirror_path(dir: &troupe_campaign::CampaignDir, run: u32) -> std::path::PathBuf {
            dir.path().join(format!("logs/note-{run}.jsonl"))
        }
    }

    fn line(text: &str) -> Answer {
        let values = Map::from_iter([("line".to_string(), Value::String(text.into()))]);
        Answer::Decide { values }
    }

    /// What a kill leaves: an answer kept and not yet committed is there for the table that
    /// reopens; one a commit took is gone with that commit, never before it.
    #[test]
    fn an_answer_stays_until_the_commit_that_records_it() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::open(dir.path(), "t1").unwrap();
        let other = Inbox::open(dir.path(), "t2").unwrap();
        let first = inbox.keep("alex", "line", &line("I climb")).unwrap();
        let second = inbox.keep("alex", "line", &line("I look")).unwrap();
        other.keep("bo", "line", &line("not this table's")).unwrap();
        let reopened = Inbox::open(dir.path(), "t1").unwrap();
        let held: Vec<_> = reopened.held().unwrap().into_iter().map(|h| h.id).collect();
        assert_eq!(held, [first, second]);

        let mut store = GameStore::<Note>::open(dir.path()).unwrap();
        let received: Received = Arc::default();
        store.consume_answers(received.clone());
        received.lock().unwrap().push(first);
        assert!(inbox.holds(first).unwrap(), "taken, not yet committed");
        store.begin("s1", "now", &[Note { seq: 0 }]).unwrap();
        assert!(!inbox.holds(first).unwrap(), "gone with the commit");
        assert!(inbox.holds(second).unwrap());
        assert!(received.lock().unwrap().is_empty());
        inbox.drop_answer(second).unwrap();
        assert!(reopened.held().unwrap().is_empty());
    }
}
