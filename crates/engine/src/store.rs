//! The campaign's session store: `campaign.db`, SQLite in WAL mode. Every event of every session
//! is a row, appended in transactions (one per driver step), so a crash leaves whole steps or
//! nothing. Undo marks rows instead of deleting them. The JSONL files are mirrors of this.

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

/// One stored event, with its undo mark.
#[derive(Clone, Debug)]
pub struct StoredEvent {
    pub envelope: Envelope,
    pub undone: bool,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Open (or create) `campaign.db` in a campaign directory. A file that was emptied or cut
    /// short is refused before SQLite sees it (it would start a new database over an empty one).
    pub fn open(campaign_dir: &Path) -> Result<Store, Error> {
        std::fs::create_dir_all(campaign_dir).map_err(|e| Error::io(campaign_dir, e))?;
        let path = campaign_dir.join("campaign.db");
        if let Some(fault) = Fault::of_db_file(&path, campaign_dir) {
            return Err(Error::fault(&path, fault));
        }
        let conn = Connection::open(&path).map_err(|e| db(&path, e))?;
        // The busy timeout first: switching to WAL already needs the lock another process may
        // hold. FULL: a commit is on disk before we go on, so power loss keeps every saved step.
        conn.execute_batch(
            "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
             PRAGMA foreign_keys = ON;",
        )
        .map_err(|e| db(&path, e))?;
        Self::prepare(conn, path)
    }

    /// Check, without writing anything or minding the schema version, that a campaign's
    /// `campaign.db` (when it has one) can be read: for the commands that read the events raw
    /// (`log`, `stats`, `report`), so a damaged file gets the same words as everywhere else.
    pub fn check_readable(campaign_dir: &Path) -> Result<(), Error> {
        let path = campaign_dir.join("campaign.db");
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
        Ok(Store { conn, path })
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
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
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
                    _ => {}
                }
            }
        }
        tx.commit().map_err(|e| db(&path, e))
    }

    /// Every event of a session in order, undone ones included and marked.
    pub fn events(&self, session: u32) -> Result<Vec<StoredEvent>, Error> {
        self.query(session, "")
    }

    /// The events that still stand (not undone): what the session state is folded from.
    pub fn live_events(&self, session: u32) -> Result<Vec<Envelope>, Error> {
        Ok(self
            .query(session, "AND undone = 0")?
            .into_iter()
            .map(|e| e.envelope)
            .collect())
    }

    /// The standing events the session state depends on: every one but the raw model calls
    /// (the fold ignores them, and they are most of the log's bytes), for a fast resume.
    pub fn state_events(&self, session: u32) -> Result<Vec<Envelope>, Error> {
        Ok(self
            .query(session, "AND undone = 0 AND event_type != 'model_call'")?
            .into_iter()
            .map(|e| e.envelope)
            .collect())
    }

    /// A session's events in order, narrowed by a fixed SQL condition.
    fn query(&self, session: u32, condition: &str) -> Result<Vec<StoredEvent>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT seq, body, undone FROM events WHERE session = ?1 {condition} ORDER BY seq"
            ))
            .map_err(|e| db(&self.path, e))?;
        let rows = stmt
            .query_map(params![session], |r| {
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

    /// Mark every live event of a session from `from_seq` on as undone; returns how many.
    pub fn mark_undone(&mut self, session: u32, from_seq: u64) -> Result<usize, Error> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        let n = tx
            .execute(
                "UPDATE events SET undone = 1 WHERE session = ?1 AND seq >= ?2 AND undone = 0",
                params![session, from_seq],
            )
            .map_err(|e| db(&path, e))?;
        // The turn count and end reason follow the events that still stand.
        tx.execute(
            "UPDATE sessions SET
                turns = (SELECT COUNT(*) FROM events
                         WHERE session = ?1 AND undone = 0 AND event_type = 'turn_completed'),
                ended_reason = NULL
             WHERE number = ?1",
            params![session],
        )
        .map_err(|e| db(&path, e))?;
        tx.commit().map_err(|e| db(&path, e))?;
        Ok(n)
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

/// An SQLite error of the store: a fault people can act on says what to do (see [`Fault`]),
/// anything else keeps SQLite's words.
fn db(path: &Path, e: rusqlite::Error) -> Error {
    if let Some(fault) = Fault::of_sqlite(&e) {
        return Error::fault(path, fault);
    }
    Error::Store {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}
