//! The campaign's session store: `campaign.db`, SQLite in WAL mode. Every event of every session
//! is a row, appended in transactions (one per driver step), so a crash leaves whole steps or
//! nothing. Undo marks rows instead of deleting them. The JSONL files are mirrors of this.
//!
//! The encounters' and scenes' runs live in the same file ([`crate::RunStore`]) and share what
//! matters here: the same opening (fault checks, WAL, durability), the same error words, and the
//! same undo: appending a game's undo event marks what it takes back, in the same transaction
//! ([`mark_taken_back`]).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::{Envelope, Error, Event, Fault};

/// The schema this build reads and writes (SQLite's `user_version`).
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE sessions (
    number       INTEGER PRIMARY KEY,
    id           TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    turns        INTEGER NOT NULL DEFAULT 0,
    ended_reason TEXT
);
CREATE TABLE events (
    session    INTEGER NOT NULL REFERENCES sessions(number),
    seq        INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    turn       INTEGER NOT NULL,
    phase      TEXT,
    body       TEXT NOT NULL,
    undone     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session, seq)
);
CREATE INDEX events_by_type ON events(session, event_type);
";

/// Added since schema 1: an older file gets them when it is opened (an older troupe reading a
/// file that has them is not affected). `snapshots` is a cache of the session fold, written with
/// the step that ends a turn, so a resume folds one turn's events instead of the whole session.
const ADDITIONS: &str = "
CREATE INDEX IF NOT EXISTS events_by_turn ON events(session, turn);
CREATE TABLE IF NOT EXISTS snapshots (
    session INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    format  INTEGER NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
";

/// How many snapshots a session keeps (the newest): enough for an undo of the last turn to
/// still find one.
const SNAPSHOTS_KEPT: i64 = 2;

/// One row of `troupe sessions`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    pub number: u32,
    pub id: String,
    pub started_at: String,
    pub turns: u32,
    /// Why it ended; `None` while it is unfinished (being played, or interrupted by a crash).
    pub ended_reason: Option<String>,
}

/// A stored event that no longer reads: its seq, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    pub seq: u64,
    pub why: String,
}

/// One stored event, with its undo mark.
#[derive(Clone, Debug)]
pub struct StoredEvent {
    pub envelope: Envelope,
    pub undone: bool,
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

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Whether the file has the snapshot cache (a read-only file from before it may not).
    snapshots: bool,
}

impl Store {
    /// Open (or create) `campaign.db` in a campaign directory. A file that was emptied or cut
    /// short is refused before SQLite sees it (it would start a new database over an empty one).
    pub fn open(campaign_dir: &Path) -> Result<Store, Error> {
        let (conn, path) = open_db(campaign_dir)?;
        Self::prepare(conn, path)
    }

    /// Check, without writing anything or minding the schema version, that a campaign's
    /// `campaign.db` (when it has one) can be read: for the commands that read the events raw
    /// (`log`, `stats`, `report`), so a damaged file gets the same words as everywhere else.
    pub fn check_readable(campaign_dir: &Path) -> Result<(), Error> {
        let path = troupe_campaign::CampaignDir::new(campaign_dir).db();
        if !path.is_file() {
            return Ok(());
        }
        if let Some(fault) = Fault::of_db_file(&path, campaign_dir) {
            return Err(Error::fault(&path, fault));
        }
        let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| db(&path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| db(&path, e))?;
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| db(&path, e))?;
        Ok(())
    }

    /// A store that lives in memory only (replays, benchmarks).
    pub fn in_memory() -> Result<Store, Error> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| db(&path, e))?;
        Self::prepare(conn, path)
    }

    fn prepare(conn: Connection, path: PathBuf) -> Result<Store, Error> {
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
        if version == 0 {
            conn.execute_batch(&format!(
                "BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))
            .map_err(|e| db(&path, e))?;
        }
        // Best effort: a read-only file without them is still read correctly, only slower.
        let _ = conn.execute_batch(ADDITIONS);
        let snapshots = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'snapshots'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| db(&path, e))?
            > 0;
        Ok(Store {
            conn,
            path,
            snapshots,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number the next session gets: one past every session in the store and every
    /// `logs/session-N.jsonl` already on disk (so an old log is never overwritten).
    pub fn next_session_number(&self, campaign_dir: &Path) -> Result<u32, Error> {
        let stored: Option<u32> = self
            .conn
            .query_row("SELECT MAX(number) FROM sessions", [], |r| r.get(0))
            .map_err(|e| db(&self.path, e))?;
        let mut n = stored.unwrap_or(0) + 1;
        while crate::log::session_log_path(campaign_dir, n).exists() {
            n += 1;
        }
        Ok(n)
    }

    pub fn begin_session(&self, number: u32, id: &str, started_at: &str) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO sessions (number, id, started_at) VALUES (?1, ?2, ?3)",
                params![number, id, started_at],
            )
            .map_err(|e| db(&self.path, e))?;
        Ok(())
    }

    /// Append the events of one step, all or none.
    pub fn append(&mut self, session: u32, events: &[Envelope]) -> Result<(), Error> {
        self.append_step(session, events, None)
    }

    /// Append the events of one step and, in the same transaction, a snapshot of the session
    /// state they lead to (`format` says how it is encoded; see `snapshot.rs`).
    pub fn append_step(
        &mut self,
        session: u32,
        events: &[Envelope],
        snapshot: Option<(i64, &str)>,
    ) -> Result<(), Error> {
        self.commit_step(session, events, snapshot).map(drop)
    }

    /// Append an undo ([`Event::EventsUndone`]): it marks what it takes back in the same
    /// transaction. How many events it marked undone.
    pub fn append_undo(&mut self, session: u32, marker: &Envelope) -> Result<usize, Error> {
        self.commit_step(session, std::slice::from_ref(marker), None)
    }

    /// One step's transaction; how many events its undo (if it has one) marked.
    fn commit_step(
        &mut self,
        session: u32,
        events: &[Envelope],
        snapshot: Option<(i64, &str)>,
    ) -> Result<usize, Error> {
        let mut marked = 0;
        let snapshots = self.snapshots;
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        if let (Some((format, body)), Some(last), true) = (snapshot, events.last(), self.snapshots)
        {
            tx.execute(
                "INSERT OR REPLACE INTO snapshots (session, seq, format, body)
                 VALUES (?1, ?2, ?3, ?4)",
                params![session, last.seq, format, body],
            )
            .map_err(|e| db(&path, e))?;
            tx.execute(
                "DELETE FROM snapshots WHERE session = ?1 AND seq NOT IN
                 (SELECT seq FROM snapshots WHERE session = ?1 ORDER BY seq DESC LIMIT ?2)",
                params![session, SNAPSHOTS_KEPT],
            )
            .map_err(|e| db(&path, e))?;
        }
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO events (session, seq, event_type, turn, phase, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(|e| db(&path, e))?;
            for env in events {
                let value = serde_json::to_value(env).map_err(|e| Error::Encode(e.to_string()))?;
                let event_type = value["event_type"].as_str().unwrap_or_default().to_string();
                let body = value.to_string();
                insert
                    .execute(params![
                        session,
                        env.seq,
                        event_type,
                        env.turn_number,
                        env.phase.map(|p| p.as_str()),
                        body
                    ])
                    .map_err(|e| db(&path, e))?;
                match &env.event {
                    Event::TurnCompleted => {
                        tx.execute(
                            "UPDATE sessions SET turns = turns + 1 WHERE number = ?1",
                            params![session],
                        )
                        .map_err(|e| db(&path, e))?;
                    }
                    Event::SessionEnded { reason } => {
                        tx.execute(
                            "UPDATE sessions SET ended_reason = ?2 WHERE number = ?1",
                            params![session, reason],
                        )
                        .map_err(|e| db(&path, e))?;
                    }
                    Event::SessionResumed { .. } => {
                        tx.execute(
                            "UPDATE sessions SET ended_reason = NULL WHERE number = ?1",
                            params![session],
                        )
                        .map_err(|e| db(&path, e))?;
                    }
                    Event::EventsUndone { from_seq, .. } => {
                        marked += take_back_session(&tx, snapshots, session, *from_seq, env.seq)
                            .map_err(|e| db(&path, e))?;
                    }
                    _ => {}
                }
            }
        }
        tx.commit().map_err(|e| db(&path, e))?;
        Ok(marked)
    }

    /// Every event of a session in order, undone ones included and marked.
    pub fn events(&self, session: u32) -> Result<Vec<StoredEvent>, Error> {
        self.query(session, "")
    }

    /// The events that still stand (not undone): what the session state is folded from.
    pub fn live_events(&self, session: u32) -> Result<Vec<Envelope>, Error> {
        Ok(envelopes(self.query(session, "AND undone = 0")?))
    }

    /// The standing events but the raw model calls (most of the log's bytes; the fold only
    /// counts them, see [`Store::live_events_after`]).
    pub fn state_events(&self, session: u32) -> Result<Vec<Envelope>, Error> {
        Ok(envelopes(self.query(
            session,
            "AND undone = 0 AND event_type != 'model_call'",
        )?))
    }

    /// The standing state events (as [`Store::state_events`]) of turn `from_turn` and later:
    /// what a storage step reads back, without the turns already in memory.
    pub fn state_events_from_turn(
        &self,
        session: u32,
        from_turn: u32,
    ) -> Result<Vec<Envelope>, Error> {
        Ok(envelopes(self.query_from(
            session,
            u64::from(from_turn),
            "AND undone = 0 AND event_type != 'model_call' AND turn >= ?2",
        )?))
    }

    /// The standing events after `seq`, model calls included (the fold counts them): what a
    /// snapshot taken at `seq` lacks, at most a turn's.
    pub fn live_events_after(&self, session: u32, seq: u64) -> Result<Vec<Envelope>, Error> {
        Ok(envelopes(self.query_from(
            session,
            seq,
            "AND undone = 0 AND seq > ?2",
        )?))
    }

    /// Every standing event (model calls included) of turn `from_turn` and later.
    pub fn live_events_from_turn(
        &self,
        session: u32,
        from_turn: u32,
    ) -> Result<Vec<Envelope>, Error> {
        Ok(envelopes(self.query_from(
            session,
            u64::from(from_turn),
            "AND undone = 0 AND turn >= ?2",
        )?))
    }

    /// The standing events of these types only (e.g. the GM's inputs, to move a script on).
    pub fn live_events_of_types(
        &self,
        session: u32,
        types: &[&str],
    ) -> Result<Vec<Envelope>, Error> {
        // The types are the engine's own snake_case names, never user input: quote them plainly.
        let list = types
            .iter()
            .filter(|t| t.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .map(|t| format!("'{t}'"))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(envelopes(self.query(
            session,
            &format!("AND undone = 0 AND event_type IN ({list})"),
        )?))
    }

    /// The in-game day the campaign's latest session left the story on: where a new session
    /// begins. Day 1 for a campaign without sessions.
    pub fn campaign_day(&self) -> Result<u32, Error> {
        let Some(last) = self.latest_session()? else {
            return Ok(crate::events::FIRST_DAY);
        };
        // The session's own fold, over the only events that move the day.
        let events = self.live_events_of_types(last.number, &["session_started", "time_passed"])?;
        let mut session = crate::Session::new(String::new(), last.number);
        for env in &events {
            session.apply(env);
        }
        Ok(session.day())
    }

    /// The standing events up to the first one that cannot be read, and that one's seq and
    /// what is wrong with it: what `troupe undo` works from when a stored event is damaged.
    pub fn readable_live_events(
        &self,
        session: u32,
    ) -> Result<(Vec<Envelope>, Option<Unreadable>), Error> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, body FROM events WHERE session = ?1 AND undone = 0 ORDER BY seq",
            )
            .map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![session], |r| {
                Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| db(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body) = row.map_err(|e| db(&self.path, e))?;
            match serde_json::from_str(&body) {
                Ok(envelope) => out.push(envelope),
                Err(e) => {
                    let why = e.to_string();
                    return Ok((out, Some(Unreadable { seq, why })));
                }
            }
        }
        Ok((out, None))
    }

    /// The newest snapshot of a session: the seq it was taken at, its format and its body.
    pub fn latest_snapshot(&self, session: u32) -> Result<Option<(u64, i64, String)>, Error> {
        if !self.snapshots {
            return Ok(None);
        }
        self.conn
            .query_row(
                "SELECT seq, format, body FROM snapshots WHERE session = ?1
                 ORDER BY seq DESC LIMIT 1",
                params![session],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| db(&self.path, e))
    }

    /// How many events (undone ones included) a session has.
    pub fn event_count(&self, session: u32) -> Result<u64, Error> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM events WHERE session = ?1",
                params![session],
                |r| r.get(0),
            )
            .map_err(|e| db(&self.path, e))
    }

    /// A session's events in order, narrowed by a fixed SQL condition. (`query_from` always
    /// binds `?2`, and SQLite refuses a bound parameter the statement lacks: `seq >= 0` uses it
    /// and holds for every row.)
    fn query(&self, session: u32, condition: &str) -> Result<Vec<StoredEvent>, Error> {
        self.query_from(session, 0, &format!("{condition} AND seq >= ?2"))
    }

    /// A session's events in order, narrowed by a fixed SQL condition that may use `?2` (a
    /// turn or a seq).
    fn query_from(
        &self,
        session: u32,
        at: u64,
        condition: &str,
    ) -> Result<Vec<StoredEvent>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT seq, body, undone FROM events WHERE session = ?1 {condition} ORDER BY seq"
            ))
            .map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![session, at], |r| {
                Ok((
                    r.get::<_, u64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                ))
            })
            .map_err(|e| db(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body, undone) = row.map_err(|e| db(&self.path, e))?;
            let envelope = serde_json::from_str(&body).map_err(|e| Error::CorruptStore {
                path: self.path.display().to_string(),
                session,
                seq,
                message: e.to_string(),
            })?;
            out.push(StoredEvent { envelope, undone });
        }
        Ok(out)
    }

    /// The sequence number the next event of this session gets.
    pub fn next_seq(&self, session: u32) -> Result<u64, Error> {
        let max: Option<u64> = self
            .conn
            .query_row(
                "SELECT MAX(seq) FROM events WHERE session = ?1",
                params![session],
                |r| r.get(0),
            )
            .map_err(|e| db(&self.path, e))?;
        Ok(max.map_or(0, |m| m + 1))
    }

    pub fn sessions(&self) -> Result<Vec<SessionInfo>, Error> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT number, id, started_at, turns, ended_reason FROM sessions ORDER BY number",
            )
            .map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SessionInfo {
                    number: r.get(0)?,
                    id: r.get(1)?,
                    started_at: r.get(2)?,
                    turns: r.get(3)?,
                    ended_reason: r.get(4)?,
                })
            })
            .map_err(|e| db(&self.path, e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| db(&self.path, e))
    }

    pub fn session(&self, number: u32) -> Result<Option<SessionInfo>, Error> {
        Ok(self.sessions()?.into_iter().find(|s| s.number == number))
    }

    pub fn latest_session(&self) -> Result<Option<SessionInfo>, Error> {
        let number: Option<u32> = self
            .conn
            .query_row("SELECT MAX(number) FROM sessions", [], |r| r.get(0))
            .optional()
            .map_err(|e| db(&self.path, e))?
            .flatten();
        match number {
            Some(n) => self.session(n),
            None => Ok(None),
        }
    }
}

/// The events of stored rows, without their undo marks.
fn envelopes(rows: Vec<StoredEvent>) -> Vec<Envelope> {
    rows.into_iter().map(|e| e.envelope).collect()
}

/// Open (or create) `campaign.db` in a campaign directory, for every game's store. A file that
/// was emptied or cut short is refused before SQLite sees it (it would start a new database
/// over an empty one).
pub(crate) fn open_db(campaign_dir: &Path) -> Result<(Connection, PathBuf), Error> {
    std::fs::create_dir_all(campaign_dir).map_err(|e| Error::io(campaign_dir, e))?;
    let path = troupe_campaign::CampaignDir::new(campaign_dir).db();
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
pub(crate) fn mark_taken_back(
    tx: &rusqlite::Transaction<'_>,
    (table, key): (&str, &str),
    run: u32,
    from_seq: u64,
    marker_seq: u64,
) -> rusqlite::Result<usize> {
    tx.execute(
        &format!(
            "UPDATE {table} SET undone = 1
             WHERE {key} = ?1 AND seq >= ?2 AND seq < ?3 AND undone = 0"
        ),
        params![run, from_seq, marker_seq],
    )
}

/// A session's undo, inside its marker's transaction: the events it takes back are marked, the
/// snapshots that folded them in go, and the turn count and end reason follow the events that
/// still stand.
fn take_back_session(
    tx: &rusqlite::Transaction<'_>,
    snapshots: bool,
    session: u32,
    from_seq: u64,
    marker_seq: u64,
) -> rusqlite::Result<usize> {
    let n = mark_taken_back(tx, ("events", "session"), session, from_seq, marker_seq)?;
    if snapshots {
        tx.execute(
            "DELETE FROM snapshots WHERE session = ?1 AND seq >= ?2",
            params![session, from_seq],
        )?;
    }
    tx.execute(
        "UPDATE sessions SET
            turns = (SELECT COUNT(*) FROM events
                     WHERE session = ?1 AND undone = 0 AND event_type = 'turn_completed'),
            ended_reason = NULL
         WHERE number = ?1",
        params![session],
    )?;
    Ok(n)
}

/// An SQLite error of the store: a fault people can act on says what to do (see [`Fault`]),
/// anything else keeps SQLite's words.
pub(crate) fn db(path: &Path, e: rusqlite::Error) -> Error {
    if let Some(fault) = Fault::of_sqlite(&e) {
        return Error::fault(path, fault);
    }
    Error::Store {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}
