//! The runs of the games whose log is a numbered run (a scene, an encounter), beside the
//! sessions but in tables of their own (`{kind}_runs`, `{kind}_events`), named by the game
//! ([`RunLog`]). Data flows one way: the game's events in, the same events out; the folds live
//! in the games' crates. The games' folds still read the undo events themselves, so logs written
//! before the undo marks (and files an older troupe writes) read as they always did.

use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use troupe_campaign::CampaignDir;

use super::{GameStore, Logged, SqlResult, db};
use crate::Error;

/// A game whose log is a numbered run of one scene or encounter: its runs' table (the same
/// columns for every such game) counts the input lines a run consumed and says whether it
/// ended ([`StoredRun`]). A game says where its tables are and what its events mean to the
/// store; the store does the rest (every run-logged game is [`Logged`] the same way).
pub trait RunLog: Serialize + DeserializeOwned {
    /// The table of the game's runs, and of their events.
    const RUNS: &'static str;
    const EVENTS: &'static str;
    fn seq(&self) -> u64;
    /// The first seq this event takes back, when it is an undo.
    fn undoes(&self) -> Option<u64>;
    /// Whether the run ends with this event.
    fn ends_run(&self) -> bool;
    /// The run's JSONL mirror in the campaign's `logs/`.
    fn mirror_path(dir: &CampaignDir, run: u32) -> PathBuf;
}

impl<E: RunLog> Logged for E {
    const RUNS: &'static str = <E as RunLog>::RUNS;
    const EVENTS: &'static str = <E as RunLog>::EVENTS;
    const KEY: &'static str = "run";
    const UNDO: &'static str = "undone";
    fn seq(&self) -> u64 {
        RunLog::seq(self)
    }
    fn undoes(&self) -> Option<u64> {
        RunLog::undoes(self)
    }
    fn mirror_path(dir: &CampaignDir, run: u32) -> PathBuf {
        <E as RunLog>::mirror_path(dir, run)
    }
    fn create_tables(conn: &Connection, _version: i64) -> SqlResult<()> {
        create_run_tables::<E>(conn)
    }
    fn update_run(&self, tx: &Transaction<'_>, run: u32, _snapshots: bool) -> SqlResult<()> {
        end_run::<E>(tx, run, self.ends_run())
    }
}

/// The schema of a game's runs, its tables named by the game ([`RunLog::RUNS`],
/// [`RunLog::EVENTS`]). The column `scene_id` holds the id of what a run plays, whatever the
/// game (its name is from when scenes were the only runs, and stays so that every
/// `campaign.db` written since reads the same).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS {runs} (
    number     INTEGER PRIMARY KEY,
    scene_id   TEXT NOT NULL,
    started_at TEXT NOT NULL,
    -- How many input lines (terminal or script) the run has consumed: a resumed script picks
    -- up after them. Updated in the same transaction as the events those lines caused.
    inputs     INTEGER NOT NULL DEFAULT 0,
    ended      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS {events} (
    run        INTEGER NOT NULL REFERENCES {runs}(number),
    seq        INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    body       TEXT NOT NULL,
    -- Taken back by a later undo event of the run (see `mark_taken_back`).
    undone     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run, seq)
);
";

fn create_run_tables<E: RunLog>(conn: &Connection) -> SqlResult<()> {
    conn.execute_batch(
        &SCHEMA
            .replace("{runs}", E::RUNS)
            .replace("{events}", E::EVENTS),
    )
}

/// The run's row says it ended once its ending event is in.
fn end_run<E: RunLog>(tx: &Transaction<'_>, run: u32, ends: bool) -> SqlResult<()> {
    if !ends {
        return Ok(());
    }
    let sql = format!("UPDATE {} SET ended = 1 WHERE number = ?1", E::RUNS);
    tx.execute(&sql, params![run]).map(drop)
}

/// One row of the campaign's runs of one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRun {
    pub number: u32,
    /// The id of what the run plays (a scene's, an encounter spec's): the `scene_id` column.
    pub spec_id: String,
    pub started_at: String,
    pub inputs: u64,
    pub ended: bool,
}

impl<E: RunLog> GameStore<E> {
    /// Start a new run; its number: one past every run in the table and every mirror of this
    /// kind already in `logs/` (see `next_number`).
    /// Its row and its first events are one transaction: a run is never half-opened.
    pub fn begin(&mut self, spec_id: &str, started_at: &str, first: &[E]) -> Result<u32, Error> {
        let number = self.next_number()?;
        let sql = format!(
            "INSERT INTO {} (number, scene_id, started_at) VALUES (?1, ?2, ?3)",
            E::RUNS
        );
        self.commit_opening(
            number,
            first,
            |tx| {
                tx.execute(&sql, params![number, spec_id, started_at])
                    .map(drop)
            },
            |_| Ok(()),
        )?;
        Ok(number)
    }

    /// Append events and the run's consumed-input count, all or nothing; then the events to the
    /// run's mirror.
    pub fn append(&mut self, run: u32, events: &[E], inputs: u64) -> Result<(), Error> {
        let sql = format!("UPDATE {} SET inputs = ?2 WHERE number = ?1", E::RUNS);
        self.commit(run, events, |tx| {
            tx.execute(&sql, params![run, inputs]).map(drop)
        })
        .map(drop)
    }

    /// Every event of a run, in order.
    pub fn events(&self, run: u32) -> Result<Vec<E>, Error> {
        self.events_where(run, 0, "")
    }

    pub fn run(&self, number: u32) -> Result<Option<StoredRun>, Error> {
        self.conn
            .query_row(
                &format!("{} WHERE number = ?1", select_runs(E::RUNS)),
                params![number],
                stored_run,
            )
            .optional()
            .map_err(|e| db(&self.path, e))
    }

    /// Every run of this kind, by number.
    pub fn runs(&self) -> Result<Vec<StoredRun>, Error> {
        let sql = format!("{} ORDER BY number", select_runs(E::RUNS));
        let mut stmt = self.conn.prepare(&sql).map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map([], stored_run)
            .map_err(|e| db(&self.path, e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| db(&self.path, e))
    }

    /// The latest run, if any.
    pub fn latest(&self) -> Result<Option<StoredRun>, Error> {
        match self.last_number()? {
            Some(n) => self.run(n),
            None => Ok(None),
        }
    }
}

/// The columns of a run, in the order [`stored_run`] reads them.
fn select_runs(table: &str) -> String {
    format!("SELECT number, scene_id, started_at, inputs, ended FROM {table}")
}

fn stored_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRun> {
    Ok(StoredRun {
        number: r.get(0)?,
        spec_id: r.get(1)?,
        started_at: r.get(2)?,
        inputs: r.get(3)?,
        ended: r.get(4)?,
    })
}
