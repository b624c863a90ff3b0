//! A Lasers & Feelings session's log in the store: `sessions` and `events`, each event with its
//! turn and phase, and a cache of the session's fold (`snapshots`) written with the step that
//! ends a turn. What every game's log shares is the engine's [`GameStore`]; this is what a
//! session adds ([`Store`]: the same store, with a session's own reads and writes).

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use troupe_campaign::CampaignDir;

use troupe_engine::{GameStore, Logged, SCHEMA_VERSION, SqlResult, db, read_jsonl};

use crate::{Envelope, Error, Event};

/// Where a session's mirror lives in a campaign directory.
pub fn session_log_path(campaign_dir: &Path, number: u32) -> std::path::PathBuf {
    CampaignDir::new(campaign_dir).session_log(number)
}

/// The sessions' store: the engine's store of the session's events, with what a session adds.
pub struct Store(GameStore<Envelope>);

impl std::ops::Deref for Store {
    type Target = GameStore<Envelope>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Store {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// Read every event of a session's log. A line that does not parse is reported with its number.
pub fn read_log(path: &Path) -> Result<Vec<Envelope>, Error> {
    read_jsonl(path)
}

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

impl Logged for Envelope {
    const RUNS: &'static str = "sessions";
    const EVENTS: &'static str = "events";
    const KEY: &'static str = "session";
    const UNDO: &'static str = "events_undone";
    fn seq(&self) -> u64 {
        self.seq
    }
    fn undoes(&self) -> Option<u64> {
        match self.event {
            Event::EventsUndone { from_seq, .. } => Some(from_seq),
            _ => None,
        }
    }
    fn mirror_path(dir: &CampaignDir, run: u32) -> std::path::PathBuf {
        dir.session_log(run)
    }
    fn create_tables(conn: &Connection, version: i64) -> SqlResult<()> {
        if version == 0 {
            conn.execute_batch(&format!(
                "BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))?;
        }
        // Best effort: a file without them is still read correctly, only slower.
        let _ = conn.execute_batch(ADDITIONS);
        Ok(())
    }
    fn insert(
        &self,
        tx: &Transaction<'_>,
        run: u32,
        event_type: &str,
        body: &str,
    ) -> SqlResult<()> {
        tx.prepare_cached(
            "INSERT INTO events (session, seq, event_type, turn, phase, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            run,
            self.seq,
            event_type,
            self.turn_number,
            self.phase.map(|p| p.as_str()),
            body
        ])
        .map(drop)
    }
    fn update_run(&self, tx: &Transaction<'_>, run: u32, snapshots: bool) -> SqlResult<()> {
        let update = |sql: &str| tx.execute(sql, params![run]).map(drop);
        match &self.event {
            Event::TurnCompleted => {
                update("UPDATE sessions SET turns = turns + 1 WHERE number = ?1")
            }
            Event::SessionEnded { reason } => tx
                .execute(
                    "UPDATE sessions SET ended_reason = ?2 WHERE number = ?1",
                    params![run, reason],
                )
                .map(drop),
            Event::SessionResumed { .. } => {
                update("UPDATE sessions SET ended_reason = NULL WHERE number = ?1")
            }
            Event::EventsUndone { from_seq, .. } => taken_back(tx, snapshots, run, *from_seq),
            _ => Ok(()),
        }
    }
}

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

impl Store {
    /// Open (or create) the sessions' tables in a campaign directory's `campaign.db`.
    pub fn open(campaign_dir: &Path) -> Result<Store, Error> {
        GameStore::open(campaign_dir).map(Store)
    }

    /// The sessions' tables for reading, when the file has them (see
    /// [`GameStore::open_existing`]).
    pub fn open_existing(campaign_dir: &Path) -> Result<Option<Store>, Error> {
        Ok(GameStore::open_existing(campaign_dir)?.map(Store))
    }

    /// A store that lives in memory only (replays, benchmarks): it has no mirror.
    pub fn in_memory() -> Result<Store, Error> {
        GameStore::in_memory().map(Store)
    }

    /// See [`GameStore::check_readable`].
    pub fn check_readable(campaign_dir: &Path) -> Result<(), Error> {
        GameStore::<Envelope>::check_readable(campaign_dir)
    }

    /// The number the next session gets: one past every session in the store and every
    /// `logs/session-N.jsonl` already on disk (so an old log is never overwritten), the rule
    /// every game's runs are numbered by.
    pub fn next_session_number(&self) -> Result<u32, Error> {
        self.next_number()
    }

    /// Begin session `number` with its first events, in one transaction: a session is never
    /// half-opened (a row without its `session_started`), whenever the process is killed.
    pub fn begin_session(
        &mut self,
        number: u32,
        id: &str,
        started_at: &str,
        first: &[Envelope],
    ) -> Result<(), Error> {
        self.commit_opening(
            number,
            first,
            |tx| {
                tx.execute(
                    "INSERT INTO sessions (number, id, started_at) VALUES (?1, ?2, ?3)",
                    params![number, id, started_at],
                )
                .map(drop)
            },
            |_| Ok(()),
        )
        .map(drop)
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

    /// One step's transaction (with the snapshot it caches, if any); how many events its undo
    /// (if it has one) marked.
    fn commit_step(
        &mut self,
        session: u32,
        events: &[Envelope],
        snapshot: Option<(i64, &str)>,
    ) -> Result<usize, Error> {
        let at = events.last().map(|e| e.seq).filter(|_| self.snapshots());
        self.commit(session, events, |tx| match (snapshot, at) {
            (Some((format, body)), Some(seq)) => cache_snapshot(tx, session, seq, (format, body)),
            _ => Ok(()),
        })
    }

    /// Every event of a session in order, undone ones included and marked.
    pub fn events(&self, session: u32) -> Result<Vec<StoredEvent>, Error> {
        let rows = self.rows(session, 0, "")?;
        Ok(rows
            .into_iter()
            .map(|(envelope, undone)| StoredEvent { envelope, undone })
            .collect())
    }

    /// The events that still stand (not undone): what the session state is folded from.
    pub fn live_events(&self, session: u32) -> Result<Vec<Envelope>, Error> {
        self.events_where(session, 0, "AND undone = 0")
    }

    /// The standing events but the raw model calls (most of the log's bytes; the fold only
    /// counts them, see [`Store::live_events_after`]).
    pub fn state_events(&self, session: u32) -> Result<Vec<Envelope>, Error> {
        self.events_where(session, 0, "AND undone = 0 AND event_type != 'model_call'")
    }

    /// The standing state events (as [`Store::state_events`]) of turn `from_turn` and later:
    /// what a storage step reads back, without the turns already in memory.
    pub fn state_events_from_turn(
        &self,
        session: u32,
        from_turn: u32,
    ) -> Result<Vec<Envelope>, Error> {
        self.events_where(
            session,
            u64::from(from_turn),
            "AND undone = 0 AND event_type != 'model_call' AND turn >= ?2",
        )
    }

    /// The standing events after `seq`, model calls included (the fold counts them): what a
    /// snapshot taken at `seq` lacks, at most a turn's.
    pub fn live_events_after(&self, session: u32, seq: u64) -> Result<Vec<Envelope>, Error> {
        self.events_where(session, seq, "AND undone = 0 AND seq > ?2")
    }

    /// Every standing event (model calls included) of turn `from_turn` and later.
    pub fn live_events_from_turn(
        &self,
        session: u32,
        from_turn: u32,
    ) -> Result<Vec<Envelope>, Error> {
        self.events_where(
            session,
            u64::from(from_turn),
            "AND undone = 0 AND turn >= ?2",
        )
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
        self.events_where(
            session,
            0,
            &format!("AND undone = 0 AND event_type IN ({list})"),
        )
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
            .conn()
            .prepare_cached(
                "SELECT seq, body FROM events WHERE session = ?1 AND undone = 0 ORDER BY seq",
            )
            .map_err(|e| db(self.path(), e))?;
        let rows = stmt
            .query_map(params![session], |r| {
                Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| db(self.path(), e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body) = row.map_err(|e| db(self.path(), e))?;
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
        if !self.snapshots() {
            return Ok(None);
        }
        self.conn()
            .query_row(
                "SELECT seq, format, body FROM snapshots WHERE session = ?1
                 ORDER BY seq DESC LIMIT 1",
                params![session],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| db(self.path(), e))
    }

    /// How many events (undone ones included) a session has.
    pub fn event_count(&self, session: u32) -> Result<u64, Error> {
        Ok(self.stored_count(session)?.0)
    }

    /// The sequence number the next event of this session gets.
    pub fn next_seq(&self, session: u32) -> Result<u64, Error> {
        Ok(self.stored_count(session)?.1.map_or(0, |m| m + 1))
    }

    pub fn sessions(&self) -> Result<Vec<SessionInfo>, Error> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT number, id, started_at, turns, ended_reason FROM sessions ORDER BY number",
            )
            .map_err(|e| db(self.path(), e))?;
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
            .map_err(|e| db(self.path(), e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| db(self.path(), e))
    }

    pub fn session(&self, number: u32) -> Result<Option<SessionInfo>, Error> {
        Ok(self.sessions()?.into_iter().find(|s| s.number == number))
    }

    pub fn latest_session(&self) -> Result<Option<SessionInfo>, Error> {
        let number: Option<u32> = self
            .conn()
            .query_row("SELECT MAX(number) FROM sessions", [], |r| r.get(0))
            .optional()
            .map_err(|e| db(self.path(), e))?
            .flatten();
        match number {
            Some(n) => self.session(n),
            None => Ok(None),
        }
    }
}

/// A session's undo, inside its marker's transaction, after the events it takes back are
/// marked: the snapshots that folded them in go, and the turn count and end reason follow the
/// events that still stand.
fn taken_back(tx: &Transaction<'_>, snapshots: bool, session: u32, from_seq: u64) -> SqlResult<()> {
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
    )
    .map(drop)
}

/// The session's fold at `seq`, cached in the step that ends a turn; only the newest
/// [`SNAPSHOTS_KEPT`] stay.
fn cache_snapshot(
    tx: &Transaction<'_>,
    session: u32,
    seq: u64,
    (format, body): (i64, &str),
) -> SqlResult<()> {
    tx.execute(
        "INSERT OR REPLACE INTO snapshots (session, seq, format, body) VALUES (?1, ?2, ?3, ?4)",
        params![session, seq, format, body],
    )?;
    tx.execute(
        "DELETE FROM snapshots WHERE session = ?1 AND seq NOT IN
         (SELECT seq FROM snapshots WHERE session = ?1 ORDER BY seq DESC LIMIT ?2)",
        params![session, SNAPSHOTS_KEPT],
    )
    .map(drop)
}
