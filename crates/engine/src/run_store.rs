//! Runs of the other systems in the campaign's `campaign.db`, beside the sessions but in tables
//! of their own: scenes (seed 004) in `scene_runs` and `scene_events`, encounters (seed 003) in
//! `encounter_runs` and `encounter_events`.
//!
//! Why not rows in `events`: every reader of that table (sessions, resume, replay, log, stats,
//! report) decodes its rows as the Lasers & Feelings [`crate::Event`]; other events there would
//! break each of them or teach each to skip them. Own tables in the same file keep the same
//! guarantees (WAL, FULL sync, one transaction per turn, append-only) and touch no existing
//! reader. Data flows one way: the system's events in, the same events out; the folds live in
//! troupe-scene and troupe-encounter.
//!
//! What the games share with the sessions' store is shared code, not a copy: the file is
//! opened the same way ([`crate::store`]'s `open_db`: fault checks, WAL, durability), errors
//! read the same, and an undo is the same: the game's undo event, appended, marks the rows it
//! takes back `undone` in its own transaction, as a session's `events_undone` does. The
//! games' folds still read the undo events themselves, so logs written before the marks (and
//! files an older troupe writes) read as they always did.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use troupe_campaign::CampaignDir;

use crate::store::db;
use crate::{Error, EventLog};

/// An event of a run's log: serialised with an `event_type`, numbered by `seq`.
pub trait Logged: Serialize + DeserializeOwned {
    /// The runs' table prefix: `scene`, `encounter`.
    const KIND: &'static str;
    /// The event type that ends a run.
    const END: &'static str;
    /// The event type of the game's undo (see [`Logged::undoes`]).
    const UNDO: &'static str;
    fn seq(&self) -> u64;
    /// Where this event, when it is the game's undo, takes the run back from (its first seq
    /// taken back).
    fn undoes(&self) -> Option<u64>;
    /// Where run `run`'s JSONL mirror lives in the campaign directory.
    fn mirror_path(dir: &CampaignDir, run: u32) -> PathBuf;
}

impl Logged for troupe_scene::Envelope {
    const KIND: &'static str = "scene";
    const END: &'static str = "scene_ended";
    const UNDO: &'static str = "undone";
    fn seq(&self) -> u64 {
        self.seq
    }
    fn undoes(&self) -> Option<u64> {
        match self.event {
            troupe_scene::SceneEvent::Undone { from_seq } => Some(from_seq),
            _ => None,
        }
    }
    fn mirror_path(dir: &CampaignDir, run: u32) -> PathBuf {
        dir.scene_log(run)
    }
}

impl Logged for troupe_encounter::log::Envelope {
    const KIND: &'static str = "encounter";
    const END: &'static str = "resolved";
    const UNDO: &'static str = "undone";
    fn seq(&self) -> u64 {
        self.seq
    }
    fn undoes(&self) -> Option<u64> {
        match self.event {
            troupe_encounter::log::EncounterEvent::Undone { from } => Some(from),
            _ => None,
        }
    }
    fn mirror_path(dir: &CampaignDir, run: u32) -> PathBuf {
        dir.encounter_log(run)
    }
}

/// The scene runs.
pub type SceneStore = RunStore<troupe_scene::Envelope>;
/// The encounter runs.
pub type EncounterStore = RunStore<troupe_encounter::log::Envelope>;

fn schema(kind: &str) -> String {
    SCHEMA
        .replace("scene_runs", &format!("{kind}_runs"))
        .replace("scene_events", &format!("{kind}_events"))
}

/// The schema, written for scenes; other kinds get the same tables under their own prefix.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS scene_runs (
    number     INTEGER PRIMARY KEY,
    scene_id   TEXT NOT NULL,
    started_at TEXT NOT NULL,
    -- How many input lines (terminal or script) the run has consumed: a resumed script picks
    -- up after them. Updated in the same transaction as the events those lines caused.
    inputs     INTEGER NOT NULL DEFAULT 0,
    ended      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS scene_events (
    run        INTEGER NOT NULL REFERENCES scene_runs(number),
    seq        INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    body       TEXT NOT NULL,
    -- Taken back by a later undo event of the run (see `mark_taken_back`).
    undone     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run, seq)
);
";

/// One row of the campaign's runs of one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRun {
    pub number: u32,
    /// The scene's or encounter's id.
    pub scene_id: String,
    pub started_at: String,
    pub inputs: u64,
    pub ended: bool,
}

pub struct RunStore<E> {
    conn: Connection,
    path: PathBuf,
    dir: CampaignDir,
    /// The mirror this store appends to, and its run's number: opened (and checked) by the
    /// first write to a run, kept while the writes are to that run.
    mirror: Option<(u32, EventLog)>,
    kind: PhantomData<E>,
}

impl<E: Logged> RunStore<E> {
    /// Open (or create) this kind's tables in a campaign directory's `campaign.db`.
    pub fn open(campaign_dir: &Path) -> Result<RunStore<E>, Error> {
        let (conn, path) = crate::store::open_db(campaign_dir)?;
        conn.execute_batch(&schema(E::KIND))
            .map_err(|e| db(&path, e))?;
        let mut store = RunStore {
            conn,
            path,
            dir: CampaignDir::new(campaign_dir),
            mirror: None,
            kind: PhantomData,
        };
        store.add_undo_marks()?;
        Ok(store)
    }

    /// A file written before the undo marks gets the column, and the marks its undo events
    /// call for, once, in one transaction.
    fn add_undo_marks(&mut self) -> Result<(), Error> {
        if self.has_marks()? {
            return Ok(());
        }
        let table = format!("{}_events", E::KIND);
        let undos = self.undo_events()?;
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        tx.execute_batch(&format!(
            "ALTER TABLE {table} ADD COLUMN undone INTEGER NOT NULL DEFAULT 0"
        ))
        .map_err(|e| db(&path, e))?;
        for (run, from, at) in undos {
            crate::store::mark_taken_back(&tx, (&table, "run"), run, from, at)
                .map_err(|e| db(&path, e))?;
        }
        tx.commit().map_err(|e| db(&path, e))
    }

    /// Every undo event of every run, in order: (run, where it takes back from, its own seq).
    fn undo_events(&self) -> Result<Vec<(u32, u64, u64)>, Error> {
        let sql = format!(
            "SELECT run, seq, body FROM {}_events WHERE event_type = ?1 ORDER BY run, seq",
            E::KIND
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![E::UNDO], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))
            })
            .map_err(|e| db(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (run, seq, body): (u32, u64, String) = row.map_err(|e| db(&self.path, e))?;
            let event = self.decode(run, seq, &body)?;
            out.extend(event.undoes().map(|from| (run, from, seq)));
        }
        Ok(out)
    }

    /// Open this kind's tables for reading when the directory's `campaign.db` already has them;
    /// None otherwise (nothing is created: readers like `troupe stats` must not leave a
    /// `campaign.db` where there was none).
    pub fn open_existing(campaign_dir: &Path) -> Result<Option<RunStore<E>>, Error> {
        let path = troupe_campaign::CampaignDir::new(campaign_dir).db();
        if !path.is_file() {
            return Ok(None);
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| db(&path, e))?;
        let has: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                params![format!("{}_runs", E::KIND)],
                |r| r.get(0),
            )
            .map_err(|e| db(&path, e))?;
        Ok(has.then_some(RunStore {
            conn,
            path,
            dir: CampaignDir::new(campaign_dir),
            mirror: None,
            kind: PhantomData,
        }))
    }

    /// Start a new run; its number: one past every run in the table and every mirror of this
    /// kind already in `logs/`, so a mirror left from an earlier `campaign.db` is never taken
    /// for the new run's and rewritten (as [`crate::Store::next_session_number`] keeps old
    /// session logs).
    pub fn begin(&mut self, scene_id: &str, started_at: &str) -> Result<u32, Error> {
        let mut number = self.last_number()?.unwrap_or(0) + 1;
        while E::mirror_path(&self.dir, number).exists() {
            number += 1;
        }
        self.conn
            .execute(
                &format!(
                    "INSERT INTO {}_runs (number, scene_id, started_at) VALUES (?1, ?2, ?3)",
                    E::KIND
                ),
                params![number, scene_id, started_at],
            )
            .map_err(|e| db(&self.path, e))?;
        Ok(number)
    }

    /// Where run `run`'s JSONL mirror lives.
    pub fn mirror_path(&self, run: u32) -> PathBuf {
        E::mirror_path(&self.dir, run)
    }

    /// Open run `run`'s mirror for the writes to come, checked against the table first and
    /// rewritten from it when it does not hold every stored event (missing, torn, short: a kill
    /// between a commit and its mirror write). Why it was rewritten, for the user; None when it
    /// was whole, or already open here (this store wrote every line since).
    pub fn mirror(&mut self, run: u32) -> Result<Option<String>, Error> {
        if self.mirror.as_ref().is_some_and(|(open, _)| *open == run) {
            return Ok(None);
        }
        let path = self.mirror_path(run);
        let (log, rewritten) =
            crate::log::reopen_mirror(&path, self.stored_count(run)?, || self.bodies(run))?;
        self.mirror = Some((run, log));
        Ok(rewritten)
    }

    /// Append events and the run's consumed-input count, all or nothing; then the events to the
    /// run's mirror, in one write. The mirror is checked before the commit, so the check sees
    /// the table as the mirror should already be.
    pub fn append(&mut self, run: u32, events: &[E], inputs: u64) -> Result<(), Error> {
        self.mirror(run)?;
        let bodies = events
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<Vec<Value>, _>>()
            .map_err(|e| Error::Encode(e.to_string()))?;
        self.commit(run, events.iter().zip(&bodies), inputs)?;
        self.mirror_bodies(&bodies)
    }

    /// The committed events' bodies onto the open mirror. A failed write drops the mirror, so
    /// the next append checks it again and rewrites it from the table.
    fn mirror_bodies(&mut self, bodies: &[Value]) -> Result<(), Error> {
        let Some((_, log)) = self.mirror.as_mut().filter(|_| !bodies.is_empty()) else {
            return Ok(());
        };
        let written = log.append(bodies);
        if written.is_err() {
            self.mirror = None;
        }
        written
    }

    /// The transaction of an append: the events, the undo marks they call for, the end, the
    /// input count.
    fn commit<'a>(
        &mut self,
        run: u32,
        events: impl Iterator<Item = (&'a E, &'a Value)>,
        inputs: u64,
    ) -> Result<(), Error>
    where
        E: 'a,
    {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        for (env, value) in events {
            let kind = value["event_type"].as_str().unwrap_or_default().to_string();
            tx.execute(
                &format!(
                    "INSERT INTO {}_events (run, seq, event_type, body) VALUES (?1, ?2, ?3, ?4)",
                    E::KIND
                ),
                params![run, env.seq(), kind, value.to_string()],
            )
            .map_err(|e| db(&path, e))?;
            if let Some(from) = env.undoes() {
                let table = format!("{}_events", E::KIND);
                crate::store::mark_taken_back(&tx, (&table, "run"), run, from, env.seq())
                    .map_err(|e| db(&path, e))?;
            }
            if kind == E::END {
                tx.execute(
                    &format!("UPDATE {}_runs SET ended = 1 WHERE number = ?1", E::KIND),
                    params![run],
                )
                .map_err(|e| db(&path, e))?;
            }
        }
        tx.execute(
            &format!("UPDATE {}_runs SET inputs = ?2 WHERE number = ?1", E::KIND),
            params![run, inputs],
        )
        .map_err(|e| db(&path, e))?;
        tx.commit().map_err(|e| db(&path, e))
    }

    /// Every event of a run in order, each with its undo mark (false in a file opened read-only
    /// that was written before the marks).
    pub fn marked_events(&self, run: u32) -> Result<Vec<(E, bool)>, Error> {
        let marked = self.has_marks()?;
        let marks = if marked { "undone" } else { "0" };
        let sql = format!(
            "SELECT seq, body, {marks} FROM {}_events WHERE run = ?1 ORDER BY seq",
            E::KIND
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![run], |r| {
                Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?, r.get(2)?))
            })
            .map_err(|e| db(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body, undone) = row.map_err(|e| db(&self.path, e))?;
            out.push((self.decode(run, seq, &body)?, undone));
        }
        Ok(out)
    }

    /// Whether the events table has the undo marks.
    fn has_marks(&self) -> Result<bool, Error> {
        self.conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM pragma_table_info(?1) WHERE name = 'undone')",
                params![format!("{}_events", E::KIND)],
                |r| r.get(0),
            )
            .map_err(|e| db(&self.path, e))
    }

    fn decode(&self, run: u32, seq: u64, body: &str) -> Result<E, Error> {
        serde_json::from_str(body).map_err(|e| self.corrupt(run, seq, &e))
    }

    /// How many events run `run` has stored (undone ones included), and the last one's seq.
    fn stored_count(&self, run: u32) -> Result<(u64, Option<u64>), Error> {
        let sql = format!(
            "SELECT COUNT(*), MAX(seq) FROM {}_events WHERE run = ?1",
            E::KIND
        );
        self.conn
            .query_row(&sql, params![run], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| db(&self.path, e))
    }

    /// Every event of a run in order, as the table holds its body: what its mirror's lines are.
    pub fn bodies(&self, run: u32) -> Result<Vec<Value>, Error> {
        let sql = format!(
            "SELECT seq, body FROM {}_events WHERE run = ?1 ORDER BY seq",
            E::KIND
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![run], |r| {
                Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| db(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body) = row.map_err(|e| db(&self.path, e))?;
            out.push(serde_json::from_str(&body).map_err(|e| self.corrupt(run, seq, &e))?);
        }
        Ok(out)
    }

    fn corrupt(&self, run: u32, seq: u64, e: &serde_json::Error) -> Error {
        Error::CorruptStore {
            path: self.path.display().to_string(),
            session: run,
            seq,
            message: e.to_string(),
        }
    }

    /// Every event of a run, in order.
    pub fn events(&self, run: u32) -> Result<Vec<E>, Error> {
        let sql = format!(
            "SELECT seq, body FROM {}_events WHERE run = ?1 ORDER BY seq",
            E::KIND
        );
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![run], |r| {
                Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| db(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body) = row.map_err(|e| db(&self.path, e))?;
            out.push(self.decode(run, seq, &body)?);
        }
        Ok(out)
    }

    pub fn run(&self, number: u32) -> Result<Option<StoredRun>, Error> {
        self.conn
            .query_row(
                &format!("{} WHERE number = ?1", select_runs(E::KIND)),
                params![number],
                stored_run,
            )
            .optional()
            .map_err(|e| db(&self.path, e))
    }

    /// Every run of this kind, by number.
    pub fn runs(&self) -> Result<Vec<StoredRun>, Error> {
        let sql = format!("{} ORDER BY number", select_runs(E::KIND));
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

    /// The highest run number in the table, if any run was begun.
    fn last_number(&self) -> Result<Option<u32>, Error> {
        self.conn
            .query_row(
                &format!("SELECT MAX(number) FROM {}_runs", E::KIND),
                [],
                |r| r.get(0),
            )
            .map_err(|e| db(&self.path, e))
    }
}

/// The columns of a run, in the order [`stored_run`] reads them.
fn select_runs(kind: &str) -> String {
    format!("SELECT number, scene_id, started_at, inputs, ended FROM {kind}_runs")
}

fn stored_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRun> {
    Ok(StoredRun {
        number: r.get(0)?,
        scene_id: r.get(1)?,
        started_at: r.get(2)?,
        inputs: r.get(3)?,
        ended: r.get(4)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_the_input_count_round_trip_and_the_engine_store_still_opens() {
        let dir = tempfile::tempdir().unwrap();
        let text = "scene: {id: s, goal: g}\nzones: [{id: a}]\n\
                    entities: [{id: p, kind: pc, zone: a}]\nturn_order: [p]\n";
        let def = troupe_scene::check(text).unwrap();
        let mut scene = troupe_scene::Scene::start(def, 5);
        let call = troupe_scene::ToolCall::GetInfo { actor: "p".into() };
        scene.act("status", call, troupe_scene::Caller::Player);
        let mut store = SceneStore::open(dir.path()).unwrap();
        let run = store.begin("s", "now").unwrap();
        store.append(run, &scene.events, 1).unwrap();
        assert_eq!(store.events(run).unwrap(), scene.events);
        assert_eq!(store.latest().unwrap().unwrap().inputs, 1);
        // The sessions' store opens the same file afterwards and sees no sessions.
        let sessions = crate::Store::open(dir.path()).unwrap();
        assert!(sessions.sessions().unwrap().is_empty());
    }

    #[test]
    fn reading_runs_where_there_are_none_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(SceneStore::open_existing(dir.path()).unwrap().is_none());
        assert!(!dir.path().join("campaign.db").exists());
        crate::Store::open(dir.path()).unwrap();
        assert!(
            crate::EncounterStore::open_existing(dir.path())
                .unwrap()
                .is_none()
        );
        SceneStore::open(dir.path()).unwrap();
        assert!(SceneStore::open_existing(dir.path()).unwrap().is_some());
    }
}
