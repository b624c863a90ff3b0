//! The campaign's store: `campaign.db`, SQLite in WAL mode, one [`GameStore`] for every game's
//! log. A game's events are rows, appended in transactions (one per step), so a crash leaves
//! whole steps or nothing; an undo marks rows instead of deleting them; the JSONL files in
//! `logs/` are mirrors of this.
//!
//! What a game brings is its [`Logged`] event: its tables (a Lasers & Feelings session's in
//! `sessions` and `events`, with turn and phase columns and fold snapshots, in troupe-lasers; a
//! run-logged game's, a scene's or an encounter's, in `{kind}_runs` and `{kind}_events`,
//! [`RunLog`]), how one of its events is written and what it changes in its run's row. What
//! every game gets from here, once: the opening (fault checks, WAL, durability, the schema
//! version), the step's transaction, the undo marks, the reading back, and the mirror (checked
//! against the table and rewritten when it falls short).
//!
//! Why the games keep tables of their own: every reader of `events` (sessions, resume, replay,
//! log, stats, report) decodes its rows as a Lasers & Feelings event, and the
//! published `events` format stays readable; other games' rows there would break each reader or
//! teach each to skip them.

pub mod inbox;
mod runs;

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use troupe_campaign::CampaignDir;

use crate::{Error, EventLog, Fault};

pub use runs::{RunLog, StoredRun};

/// The schema this build reads and writes (SQLite's `user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// An event of a game's log: serialised with an `event_type`, numbered by `seq` within its run
/// (a session, a scene run, an encounter run).
pub trait Logged: Serialize + DeserializeOwned {
    /// The table of the game's runs.
    const RUNS: &'static str;
    /// The table of its events, and their column naming the run.
    const EVENTS: &'static str;
    const KEY: &'static str;
    /// The event type of the game's undo (see [`Logged::undoes`]).
    const UNDO: &'static str;
    fn seq(&self) -> u64;
    /// Where this event, when it is the game's undo, takes the run back from (its first seq
    /// taken back).
    fn undoes(&self) -> Option<u64>;
    /// Where run `run`'s JSONL mirror lives in the campaign directory.
    fn mirror_path(dir: &CampaignDir, run: u32) -> PathBuf;
    /// Create what the game's tables lack in a file at schema `version` (0: a new file).
    fn create_tables(conn: &Connection, version: i64) -> SqlResult<()>;
    /// Insert this event's row, inside its step's transaction: by default the columns every
    /// game's events table has (its run, `seq`, `event_type`, `body`).
    fn insert(
        &self,
        tx: &Transaction<'_>,
        run: u32,
        event_type: &str,
        body: &str,
    ) -> SqlResult<()> {
        let sql = format!(
            "INSERT INTO {} ({}, seq, event_type, body) VALUES (?1, ?2, ?3, ?4)",
            Self::EVENTS,
            Self::KEY
        );
        tx.prepare_cached(&sql)?
            .execute(params![run, self.seq(), event_type, body])
            .map(drop)
    }
    /// What this event changes in its run's row (an end, a turn count) and, for an undo,
    /// beyond the marks, after it is inserted. `snapshots`: whether the file has the sessions'
    /// fold snapshot cache (an undo drops the snapshots that folded in what it takes back).
    fn update_run(&self, tx: &Transaction<'_>, run: u32, snapshots: bool) -> SqlResult<()>;
}

/// What SQLite returns, inside a game's own writes to its tables.
pub type SqlResult<T> = rusqlite::Result<T>;

/// One game's log in a campaign's `campaign.db`.
pub struct GameStore<E> {
    conn: Connection,
    path: PathBuf,
    /// Where the mirrors live; none for a store in memory.
    dir: Option<CampaignDir>,
    /// The mirror this store appends to, and its run's number: opened (and checked) by the
    /// first write to a run, kept while the writes are to that run.
    mirror: Option<(u32, EventLog)>,
    /// Whether the events table has the undo marks (a file opened read-only that an older
    /// troupe wrote may not).
    marked: bool,
    /// Whether the file has the sessions' fold snapshots (troupe-lasers' session store).
    snapshots: bool,
    /// People's answers the game has taken and not yet committed (a served table's).
    received: Option<inbox::Received>,
    kind: PhantomData<E>,
}

impl<E: Logged> GameStore<E> {
    /// Open (or create) this game's tables in a campaign directory's `campaign.db`. A file that
    /// was emptied or cut short is refused before SQLite sees it (it would start a new database
    /// over an empty one).
    pub fn open(campaign_dir: &Path) -> Result<GameStore<E>, Error> {
        let (conn, path) = open_db(campaign_dir)?;
        let dir = Some(CampaignDir::new(campaign_dir));
        let mut store = Self::prepare(conn, path, dir, true)?;
        store.add_undo_marks()?;
        Ok(store)
    }

    /// Open this game's tables for reading when the directory's `campaign.db` already has
    /// them; None otherwise (nothing is created: readers like `troupe stats` must not leave a
    /// `campaign.db` where there was none).
    pub fn open_existing(campaign_dir: &Path) -> Result<Option<GameStore<E>>, Error> {
        let path = CampaignDir::new(campaign_dir).db();
        if !path.is_file() {
            return Ok(None);
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| db(&path, e))?;
        if !has_table(&conn, E::RUNS).map_err(|e| db(&path, e))? {
            return Ok(None);
        }
        let dir = Some(CampaignDir::new(campaign_dir));
        Self::prepare(conn, path, dir, false).map(Some)
    }

    /// Refuse a file a newer troupe wrote, create what this game's tables lack when the file
    /// is opened for writing, and see what the file has.
    fn prepare(
        conn: Connection,
        path: PathBuf,
        dir: Option<CampaignDir>,
        writable: bool,
    ) -> Result<GameStore<E>, Error> {
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db(&path, e))?;
        if version > SCHEMA_VERSION {
            return Err(Error::NewerStore {
                path: path.display().to_string(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if writable {
            E::create_tables(&conn, version).map_err(|e| db(&path, e))?;
        }
        let marked = has_column(&conn, E::EVENTS, "undone").map_err(|e| db(&path, e))?;
        let snapshots = has_table(&conn, "snapshots").map_err(|e| db(&path, e))?;
        Ok(GameStore {
            conn,
            path,
            dir,
            mirror: None,
            marked,
            snapshots,
            received: None,
            kind: PhantomData,
        })
    }

    /// A store that lives in memory only (replays, benchmarks): it has no mirror.
    pub fn in_memory() -> Result<GameStore<E>, Error> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| db(&path, e))?;
        Self::prepare(conn, path, None, true)
    }

    /// Check, without writing anything or minding the schema version, that a campaign's
    /// `campaign.db` (when it has one) can be read: for the commands that read the events raw
    /// (`log`, `stats`, `report`), so a damaged file gets the same words as everywhere else.
    pub fn check_readable(campaign_dir: &Path) -> Result<(), Error> {
        let path = CampaignDir::new(campaign_dir).db();
        if !path.is_file() {
            return Ok(());
        }
        if let Some(fault) = Fault::of_db_file(&path, campaign_dir) {
            return Err(Error::fault(&path, fault));
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| db(&path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| db(&path, e))?;
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| db(&path, e))?;
        Ok(())
    }

    /// The connection, for a game's own reads of its tables (a session's sessions, snapshots).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Whether the file has the sessions' fold snapshots.
    pub fn snapshots(&self) -> bool {
        self.snapshots
    }

    /// A file written before the undo marks gets the column, and the marks its undo events
    /// call for, once, in one transaction.
    fn add_undo_marks(&mut self) -> Result<(), Error> {
        if self.marked {
            return Ok(());
        }
        let undos = self.undo_events()?;
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        tx.execute_batch(&format!(
            "ALTER TABLE {} ADD COLUMN undone INTEGER NOT NULL DEFAULT 0",
            E::EVENTS
        ))
        .map_err(|e| db(&path, e))?;
        for (run, from, at) in undos {
            mark_taken_back(&tx, (E::EVENTS, E::KEY), run, from, at).map_err(|e| db(&path, e))?;
        }
        tx.commit().map_err(|e| db(&path, e))?;
        self.marked = true;
        Ok(())
    }

    /// Every undo event of every run, in order: (run, where it takes back from, its own seq).
    fn undo_events(&self) -> Result<Vec<(u32, u64, u64)>, Error> {
        let sql = format!(
            "SELECT {}, seq, body FROM {} WHERE event_type = ?1 ORDER BY 1, seq",
            E::KEY,
            E::EVENTS
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

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where run `run`'s JSONL mirror lives in the campaign directory (none for a store in
    /// memory).
    pub fn mirror_path(&self, run: u32) -> Option<PathBuf> {
        self.dir.as_ref().map(|dir| E::mirror_path(dir, run))
    }

    /// Where run `run`'s events are mirrored: the mirror given to [`GameStore::mirror_into`],
    /// else its place in the campaign directory.
    pub fn mirror_file(&self, run: u32) -> Option<PathBuf> {
        match &self.mirror {
            Some((open, log)) if *open == run => Some(log.path().to_path_buf()),
            _ => self.mirror_path(run),
        }
    }

    /// Mirror run `run`'s appends into `log` from now on, taken to hold what the table holds: a
    /// replay's own file, or the mirror of a store in memory.
    pub fn mirror_into(&mut self, run: u32, log: EventLog) {
        self.mirror = Some((run, log));
    }

    /// Open run `run`'s mirror for the writes to come, checked against the table first and
    /// rewritten from it when it does not hold every stored event (missing, torn, short: a kill
    /// between a commit and its mirror write). Why it was rewritten, for the user; None when it
    /// was whole, or already open here (this store wrote every line since), or the store has
    /// no directory.
    pub fn mirror(&mut self, run: u32) -> Result<Option<String>, Error> {
        if self.mirror.as_ref().is_some_and(|(open, _)| *open == run) {
            return Ok(None);
        }
        let Some(path) = self.mirror_path(run) else {
            return Ok(None);
        };
        let (log, rewritten) =
            crate::log::reopen_mirror(&path, self.stored_count(run)?, || self.bodies(run))?;
        self.mirror = Some((run, log));
        Ok(rewritten)
    }

    /// Commit one step of run `run`: its events with the undo marks and run updates they call
    /// for, then `also` (what the step writes beside them), all or nothing; then the events to
    /// the run's mirror, in one write. The mirror is checked before the commit, so the check
    /// sees the table as the mirror should already be. How many events the step's undo marked.
    pub fn commit(
        &mut self,
        run: u32,
        events: &[E],
        also: impl FnOnce(&Transaction<'_>) -> SqlResult<()>,
    ) -> Result<usize, Error> {
        self.commit_opening(run, events, |_| Ok(()), also)
    }

    /// [`GameStore::commit`], with `open` run first in the same transaction: a run's row is
    /// written with its first events, so a run is never half-opened (a row with no events).
    pub fn commit_opening(
        &mut self,
        run: u32,
        events: &[E],
        open: impl FnOnce(&Transaction<'_>) -> SqlResult<()>,
        also: impl FnOnce(&Transaction<'_>) -> SqlResult<()>,
    ) -> Result<usize, Error> {
        self.mirror(run)?;
        let rows = events
            .iter()
            .map(row_of)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Encode(e.to_string()))?;
        let marked = self
            .transaction(run, events, &rows, open, also)
            .map_err(|e| db(&self.path, e))?;
        self.mirror_rows(&rows)?;
        Ok(marked)
    }

    /// Hand the store the answers people's seats have handed to the game since its last commit
    /// (their ids in the table's [`inbox::Inbox`]): each commit takes them out of the inbox in
    /// its own transaction, so an answer is applied and forgotten at once, never one without the
    /// other (see `inbox.rs`).
    pub fn consume_answers(&mut self, received: inbox::Received) {
        self.received = Some(received);
    }

    fn transaction(
        &mut self,
        run: u32,
        events: &[E],
        rows: &[(String, String)],
        open: impl FnOnce(&Transaction<'_>) -> SqlResult<()>,
        also: impl FnOnce(&Transaction<'_>) -> SqlResult<()>,
    ) -> SqlResult<usize> {
        let snapshots = self.snapshots;
        let consumed = self.received.as_ref().map(inbox::take).unwrap_or_default();
        let tx = self.conn.transaction()?;
        open(&tx)?;
        inbox::forget(&tx, &consumed)?;
        let mut marked = 0;
        for (event, (event_type, body)) in events.iter().zip(rows) {
            event.insert(&tx, run, event_type, body)?;
            if let Some(from) = event.undoes() {
                marked += mark_taken_back(&tx, (E::EVENTS, E::KEY), run, from, event.seq())?;
            }
            event.update_run(&tx, run, snapshots)?;
        }
        also(&tx)?;
        tx.commit()?;
        Ok(marked)
    }

    /// The committed rows' bodies onto the open mirror, each a line. A failed write drops the
    /// mirror, so the next append checks it again and rewrites it from the table.
    fn mirror_rows(&mut self, rows: &[(String, String)]) -> Result<(), Error> {
        let Some((_, log)) = self.mirror.as_mut().filter(|_| !rows.is_empty()) else {
            return Ok(());
        };
        let written = log.append_lines(rows.iter().map(|(_, body)| body.as_str()));
        if written.is_err() {
            self.mirror = None;
        }
        written
    }

    /// Run `run`'s events in order, each with its undo mark, narrowed by a fixed SQL condition
    /// that may use `?2` (bound to `at`: a turn or a seq). SQLite refuses a bound parameter the
    /// statement lacks, so a condition without `?2` gets `seq >= ?2` (`at` is then 0, which
    /// holds for every row and lets SQLite walk the primary key in `seq` order).
    pub fn rows(&self, run: u32, at: u64, condition: &str) -> Result<Vec<(E, bool)>, Error> {
        let marks = if self.marked { "undone" } else { "0" };
        let seq_from = if condition.contains("?2") {
            ""
        } else {
            "AND seq >= ?2"
        };
        let sql = format!(
            "SELECT seq, body, {marks} FROM {} WHERE {} = ?1 {condition} {seq_from} ORDER BY seq",
            E::EVENTS,
            E::KEY
        );
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![run, at], |r| {
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

    /// Every event of a run in order, each with its undo mark.
    pub fn marked_events(&self, run: u32) -> Result<Vec<(E, bool)>, Error> {
        self.rows(run, 0, "")
    }

    /// Run `run`'s events in order, narrowed as [`GameStore::rows`] narrows them, without
    /// their undo marks.
    pub fn events_where(&self, run: u32, at: u64, condition: &str) -> Result<Vec<E>, Error> {
        Ok(self
            .rows(run, at, condition)?
            .into_iter()
            .map(|(e, _)| e)
            .collect())
    }

    /// Every event of a run in order, its body as the table holds it: what its mirror's lines
    /// are.
    pub fn bodies(&self, run: u32) -> Result<Vec<String>, Error> {
        let sql = format!(
            "SELECT body FROM {} WHERE {} = ?1 ORDER BY seq",
            E::EVENTS,
            E::KEY
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![run], |r| r.get(0))
            .map_err(|e| db(&self.path, e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| db(&self.path, e))
    }

    fn decode(&self, run: u32, seq: u64, body: &str) -> Result<E, Error> {
        serde_json::from_str(body).map_err(|e| self.corrupt(run, seq, &e))
    }

    fn corrupt(&self, run: u32, seq: u64, e: &serde_json::Error) -> Error {
        Error::CorruptStore {
            path: self.path.display().to_string(),
            session: run,
            seq,
            message: e.to_string(),
        }
    }

    /// How many events run `run` has stored (undone ones included), and the last one's seq.
    pub fn stored_count(&self, run: u32) -> Result<(u64, Option<u64>), Error> {
        let sql = format!(
            "SELECT COUNT(*), MAX(seq) FROM {} WHERE {} = ?1",
            E::EVENTS,
            E::KEY
        );
        self.conn
            .query_row(&sql, params![run], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| db(&self.path, e))
    }

    /// The highest run number in the table, if any run was begun.
    fn last_number(&self) -> Result<Option<u32>, Error> {
        self.conn
            .query_row(&format!("SELECT MAX(number) FROM {}", E::RUNS), [], |r| {
                r.get(0)
            })
            .map_err(|e| db(&self.path, e))
    }

    /// The number the next run gets: one past every run in the table and every mirror of this
    /// game already in `logs/`, so a mirror left from an earlier `campaign.db` is never taken
    /// for the new run's and rewritten.
    pub fn next_number(&self) -> Result<u32, Error> {
        let mut number = self.last_number()?.unwrap_or(0) + 1;
        while self.mirror_path(number).is_some_and(|path| path.exists()) {
            number += 1;
        }
        Ok(number)
    }
}

/// An event's row: its `event_type` and its body, the JSON the table holds and the mirror's line
/// (serialized once, so both hold the same bytes, its fields in the event's own order).
fn row_of<E: Serialize>(event: &E) -> serde_json::Result<(String, String)> {
    /// All a row needs to know of its body besides the body.
    #[derive(serde::Deserialize)]
    struct Tagged<'a> {
        #[serde(borrow, default)]
        event_type: Option<std::borrow::Cow<'a, str>>,
    }
    let body = serde_json::to_string(event)?;
    let tagged = serde_json::from_str::<Tagged<'_>>(&body)?;
    let event_type = tagged.event_type.unwrap_or_default().into_owned();
    Ok((event_type, body))
}

fn has_table(conn: &Connection, name: &str) -> SqlResult<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        params![name],
        |r| r.get(0),
    )
}

fn has_column(conn: &Connection, table: &str, column: &str) -> SqlResult<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)",
        params![table, column],
        |r| r.get(0),
    )
}

/// How a commit reaches the disk, for every store this process opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Every commit is on disk before the session goes on (SQLite `synchronous = FULL`): a
    /// power cut keeps every saved step. The default, for a session someone plays and resumes.
    EveryCommit,
    /// Commits reach the disk at WAL checkpoints (`synchronous = NORMAL`): a crashed or killed
    /// process loses nothing and the file is never corrupted, but a power cut may lose the last
    /// commits. For the runs of `troupe simulate`, which flushes each run whole before marking it
    /// finished and plays again from the start a run that was not marked.
    Checkpoints,
}

static CHECKPOINTS_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Choose the durability of the stores this process opens from now on.
pub fn set_durability(d: Durability) {
    CHECKPOINTS_ONLY.store(
        d == Durability::Checkpoints,
        std::sync::atomic::Ordering::SeqCst,
    );
}

/// The `synchronous` pragma for [`Durability`].
pub(crate) fn synchronous_pragma() -> &'static str {
    if CHECKPOINTS_ONLY.load(std::sync::atomic::Ordering::SeqCst) {
        "PRAGMA synchronous = NORMAL;"
    } else {
        "PRAGMA synchronous = FULL;"
    }
}

/// Open (or create) `campaign.db` in a campaign directory, for every game's store. A file that
/// was emptied or cut short is refused before SQLite sees it (it would start a new database
/// over an empty one).
pub(crate) fn open_db(campaign_dir: &Path) -> Result<(Connection, PathBuf), Error> {
    std::fs::create_dir_all(campaign_dir).map_err(|e| Error::io(campaign_dir, e))?;
    let path = CampaignDir::new(campaign_dir).db();
    if let Some(fault) = Fault::of_db_file(&path, campaign_dir) {
        return Err(Error::fault(&path, fault));
    }
    let conn = Connection::open(&path).map_err(|e| db(&path, e))?;
    // The busy timeout first: switching to WAL already needs the lock another process may
    // hold. FULL (the default): a commit is on disk before we go on, so power loss keeps
    // every saved step; see Durability.
    conn.execute_batch(
        "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;",
    )
    .and_then(|()| conn.execute_batch(synchronous_pragma()))
    .map_err(|e| db(&path, e))?;
    Ok((conn, path))
}

/// Every game's undo, in the transaction that appends the game's undo event (at `marker_seq`):
/// the rows of run `run` from `from_seq` up to the marker are marked undone (kept, never
/// deleted), so every reader of the table, SQL included, sees the same standing events as the
/// game's fold. `table` and `key` are the engine's own names. How many rows it marked.
fn mark_taken_back(
    tx: &Transaction<'_>,
    (table, key): (&str, &str),
    run: u32,
    from_seq: u64,
    marker_seq: u64,
) -> SqlResult<usize> {
    tx.execute(
        &format!(
            "UPDATE {table} SET undone = 1
             WHERE {key} = ?1 AND seq >= ?2 AND seq < ?3 AND undone = 0"
        ),
        params![run, from_seq, marker_seq],
    )
}

/// An SQLite error of the store: a fault people can act on says what to do (see [`Fault`]),
/// anything else keeps SQLite's words.
pub fn db(path: &Path, e: rusqlite::Error) -> Error {
    if let Some(fault) = Fault::of_sqlite(&e) {
        return Error::fault(path, fault);
    }
    Error::Store {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}
