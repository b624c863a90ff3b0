//! The embedded store: memory tables in the campaign's `campaign.db` (SQLite, FTS5).
//!
//! Facts are the edges of the graph: each links to the entities it is about and to the
//! episodes it came from, with valid/invalid times. A later fact on the same slot closes an
//! earlier one when its source ranks at least as high (GM > player > character); every such
//! conflict is kept in `memory_conflicts` with both sources.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row, params};
use sha2::{Digest, Sha256};

use crate::text::normalise_name;
use crate::{
    Conflict, EntityKind, Episode, Error, Fact, GameTime, MemoryType, NewFact, Reader, RecallKey,
    Scope, Source,
};

/// The memory tables' own schema version (kept in `memory_meta`, apart from the session
/// store's `user_version`, so each part of `campaign.db` evolves on its own).
pub const MEMORY_SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memory_episodes (
    id        TEXT PRIMARY KEY,
    session   INTEGER NOT NULL,
    turn      INTEGER NOT NULL,
    day       INTEGER,
    timestamp TEXT NOT NULL,
    speaker   TEXT NOT NULL,
    scope     TEXT NOT NULL,
    text      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_entities (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    first_session INTEGER NOT NULL,
    last_session  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_aliases (
    alias  TEXT PRIMARY KEY,
    entity INTEGER NOT NULL REFERENCES memory_entities(id)
);
CREATE TABLE IF NOT EXISTS memory_facts (
    id             INTEGER PRIMARY KEY,
    key            TEXT NOT NULL UNIQUE,
    text           TEXT NOT NULL,
    scope          TEXT NOT NULL,
    source         TEXT NOT NULL,
    memory_type    TEXT NOT NULL,
    importance     REAL NOT NULL,
    rehearsals     INTEGER NOT NULL DEFAULT 0,
    session        INTEGER NOT NULL,
    turn           INTEGER NOT NULL,
    day            INTEGER,
    speaker        TEXT NOT NULL,
    episode_ids    TEXT NOT NULL,
    slot           TEXT,
    invalid_session INTEGER,
    invalid_turn   INTEGER,
    invalid_day    INTEGER,
    invalidated_by INTEGER
);
CREATE INDEX IF NOT EXISTS memory_facts_by_time ON memory_facts(session, turn);
CREATE INDEX IF NOT EXISTS memory_facts_by_slot ON memory_facts(slot) WHERE slot IS NOT NULL;
CREATE TABLE IF NOT EXISTS memory_fact_entities (
    entity INTEGER NOT NULL,
    fact   INTEGER NOT NULL,
    PRIMARY KEY (entity, fact)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_fact_entities_by_fact ON memory_fact_entities(fact, entity);
CREATE INDEX IF NOT EXISTS memory_facts_by_day ON memory_facts(day) WHERE day IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
    text, content='memory_facts', content_rowid='id', tokenize='porter unicode61'
);
CREATE TABLE IF NOT EXISTS memory_conflicts (
    id         INTEGER PRIMARY KEY,
    slot       TEXT NOT NULL,
    old_fact   INTEGER NOT NULL,
    new_fact   INTEGER NOT NULL,
    resolution TEXT NOT NULL,
    session    INTEGER NOT NULL,
    turn       INTEGER NOT NULL,
    day        INTEGER
);
CREATE TABLE IF NOT EXISTS memory_rehearsals (
    session INTEGER NOT NULL,
    turn    INTEGER NOT NULL,
    reader  TEXT NOT NULL,
    fact    INTEGER NOT NULL,
    PRIMARY KEY (session, turn, reader, fact)
);
CREATE TABLE IF NOT EXISTS memory_vectors (
    fact INTEGER PRIMARY KEY,
    vec  BLOB NOT NULL
);
";

/// Ids as one SQL parameter, for `… IN rarray(?1)`: the statement stays the same whatever the
/// list, so it is parsed once and cached, where ids written into the SQL made every call a new
/// statement.
pub(crate) fn id_array(ids: &[i64]) -> std::rc::Rc<Vec<rusqlite::types::Value>> {
    std::rc::Rc::new(
        ids.iter()
            .copied()
            .map(rusqlite::types::Value::from)
            .collect(),
    )
}

/// What storing a fact did.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    pub id: i64,
    /// False when the very same fact was already stored (a re-run step after a crash).
    pub inserted: bool,
    pub conflicts: Vec<Conflict>,
}

/// Counts for `troupe memory stats` and the logs.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub episodes: u64,
    pub facts: u64,
    pub valid_facts: u64,
    pub entities: u64,
    pub conflicts: u64,
}

pub struct MemoryStore {
    pub(crate) conn: Connection,
    path: PathBuf,
    /// Speakers (lowercase) written through this handle, or all of them after a forget. Not
    /// read at open: that was a scan of every fact per process (20 ms at 100k facts), and
    /// retrieval reads the speakers of its candidates instead. Nothing reads it today.
    pub(crate) speakers: Vec<String>,
    /// Sentence embeddings, once attached (feature `embeddings`).
    #[cfg(feature = "embeddings")]
    pub(crate) embedder: Option<std::sync::Arc<troupe_embed::Embedder>>,
    /// Where every write is also kept, when attached (a graph server).
    pub(crate) mirror: Option<crate::mirror::Attached>,
}

pub(crate) fn db(path: &Path, e: rusqlite::Error) -> Error {
    Error::Db {
        path: path.display().to_string(),
        message: e.to_string(),
        code: e.sqlite_error_code(),
    }
}

impl MemoryStore {
    /// Open the memory in a `campaign.db` file (created if missing), next to the sessions.
    pub fn open(db_path: &Path) -> Result<MemoryStore, Error> {
        let conn = Connection::open(db_path).map_err(|e| db(db_path, e))?;
        conn.execute_batch(
            // Reads go through a memory map (no read() call per page: retrieval visits a few
            // hundred facts scattered over the file) and a 16 MB page cache.
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;
             PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -16384;",
        )
        .map_err(|e| db(db_path, e))?;
        Self::prepare(conn, db_path.to_path_buf())
    }

    /// A memory that lives in RAM only (replays, tests, benchmarks).
    pub fn in_memory() -> Result<MemoryStore, Error> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| db(&path, e))?;
        Self::prepare(conn, path)
    }

    fn prepare(conn: Connection, path: PathBuf) -> Result<MemoryStore, Error> {
        // `rarray(?)`: a list of ids bound as one parameter (see `id_array`).
        rusqlite::vtab::array::load_module(&conn).map_err(|e| db(&path, e))?;
        let has_meta: bool = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'memory_meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| db(&path, e))?
            > 0;
        if has_meta {
            let found: Option<String> = conn
                .query_row(
                    "SELECT value FROM memory_meta WHERE key = 'schema'",
                    [],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| db(&path, e))?;
            let found: i64 = found.and_then(|v| v.parse().ok()).unwrap_or(0);
            if found > MEMORY_SCHEMA_VERSION {
                return Err(Error::NewerStore {
                    path: path.display().to_string(),
                    found,
                    supported: MEMORY_SCHEMA_VERSION,
                });
            }
        }
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA}
             INSERT OR IGNORE INTO memory_meta(key, value) VALUES ('schema', '{MEMORY_SCHEMA_VERSION}');
             COMMIT;"
        ))
        .map_err(|e| db(&path, e))?;
        let store = MemoryStore {
            conn,
            path,
            speakers: Vec::new(),
            #[cfg(feature = "embeddings")]
            embedder: None,
            mirror: None,
        };
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Merges the full-text index into one segment (FTS5's `optimize`). A bulk import leaves it
    /// in many (at least one a transaction), and every word a question searches is looked up in
    /// each of them: at 100k imported facts merging costs 0.5 s once and saves 3–10% of every
    /// question's CPU after it (BENCHMARKS.md, "A question's cost"). Play does not call it:
    /// facts come a turn at a time, and FTS5's automatic merging keeps the segments few.
    pub fn optimize_text_index(&self) -> Result<(), Error> {
        self.conn
            .execute("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')", [])
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> Error {
        db(&self.path, e)
    }

    pub(crate) fn refresh_speakers(&mut self) -> Result<(), Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT lower(speaker) FROM memory_facts")
            .map_err(|e| db(&self.path, e))?;
        let speakers = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| db(&self.path, e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| db(&self.path, e))?;
        drop(stmt);
        self.speakers = speakers;
        Ok(())
    }

    /// Store episodes and the facts drawn from them in one transaction: all or nothing.
    /// Storing the same episode or fact again changes nothing, so a re-run step is harmless.
    pub fn store(&mut self, episodes: &[Episode], facts: &[NewFact]) -> Result<Vec<Stored>, Error> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO memory_episodes(id, session, turn, day, timestamp, speaker, scope, text)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(|e| db(&path, e))?;
            for ep in episodes {
                insert
                    .execute(params![
                        ep.id,
                        ep.session,
                        ep.turn,
                        ep.day,
                        ep.timestamp,
                        ep.speaker,
                        ep.scope.key(),
                        ep.text
                    ])
                    .map_err(|e| db(&path, e))?;
            }
        }
        let mut out = Vec::with_capacity(facts.len());
        let mut entities = Resolver::default();
        for f in facts {
            out.push(insert_fact(&tx, &path, f, &mut entities)?);
        }
        entities.flush(&tx, &path)?;
        crate::mirror::commit(tx, &path, &mut self.mirror)?;
        for (f, s) in facts.iter().zip(&out) {
            if !s.inserted {
                continue;
            }
            let speaker = f.speaker.to_lowercase();
            if !self.speakers.contains(&speaker) {
                self.speakers.push(speaker);
            }
        }
        #[cfg(feature = "embeddings")]
        self.embed_new(&out, facts)?;
        Ok(out)
    }

    /// Count a recall: rehearsed memories resist corruption.
    pub fn rehearse(&mut self, ids: &[i64]) -> Result<(), Error> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        for id in ids {
            tx.execute(
                "UPDATE memory_facts SET rehearsals = rehearsals + 1 WHERE id = ?1",
                [id],
            )
            .map_err(|e| db(&path, e))?;
        }
        crate::mirror::commit(tx, &path, &mut self.mirror)
    }

    /// Count one recall of these facts by `key`'s reader at `key`'s turn, once: the same recall
    /// run again (a step re-run after a crash) counts nothing more.
    pub fn rehearse_once(&mut self, ids: &[i64], key: &RecallKey) -> Result<(), Error> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        for id in ids {
            let new = tx
                .execute(
                    "INSERT OR IGNORE INTO memory_rehearsals (fact, session, turn, reader)
                     VALUES (?1, ?2, ?3, ?4)",
                    rusqlite::params![id, key.session, key.turn, key.reader],
                )
                .map_err(|e| db(&path, e))?;
            if new == 1 {
                tx.execute(
                    "UPDATE memory_facts SET rehearsals = rehearsals + 1 WHERE id = ?1",
                    [id],
                )
                .map_err(|e| db(&path, e))?;
            }
        }
        crate::mirror::commit(tx, &path, &mut self.mirror)
    }

    /// Take back what `key`'s recall counted, so that recall can run again from the memory as
    /// it stood before it: a step that recalled, then crashed before the session saved it,
    /// leaves the memory as if it had never run.
    pub fn unrehearse(&mut self, key: &RecallKey) -> Result<(), Error> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        let args = rusqlite::params![key.session, key.turn, key.reader];
        tx.execute(
            "UPDATE memory_facts SET rehearsals = MAX(rehearsals - 1, 0) WHERE id IN
             (SELECT fact FROM memory_rehearsals WHERE session = ?1 AND turn = ?2 AND reader = ?3)",
            args,
        )
        .map_err(|e| db(&path, e))?;
        tx.execute(
            "DELETE FROM memory_rehearsals WHERE session = ?1 AND turn = ?2 AND reader = ?3",
            args,
        )
        .map_err(|e| db(&path, e))?;
        crate::mirror::commit(tx, &path, &mut self.mirror)
    }

    pub fn fact(&self, id: i64) -> Result<Option<Fact>, Error> {
        let sql = format!("{FACT_SELECT} WHERE f.id = ?1");
        let mut facts = self.query_facts(&sql, [id])?;
        Ok(facts.pop())
    }

    /// Every fact this reader may see (closed ones too when `include_invalid`), oldest first.
    pub fn facts(&self, reader: &Reader, include_invalid: bool) -> Result<Vec<Fact>, Error> {
        let mut sql = format!("{FACT_SELECT} WHERE 1=1");
        if !include_invalid {
            sql.push_str(" AND f.invalid_session IS NULL");
        }
        if let Some(scopes) = reader.scopes() {
            sql.push_str(&format!(" AND f.scope IN ({})", scope_list(&scopes)));
        }
        sql.push_str(" ORDER BY f.id");
        self.query_facts(&sql, [])
    }

    pub(crate) fn query_facts<P: rusqlite::Params>(
        &self,
        sql: &str,
        p: P,
    ) -> Result<Vec<Fact>, Error> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(p, read_fact)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    pub fn episodes(&self) -> Result<Vec<Episode>, Error> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, session, turn, day, timestamp, speaker, scope, text
                 FROM memory_episodes ORDER BY session, turn, rowid",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let scope: String = r.get(6)?;
                Ok(Episode {
                    id: r.get(0)?,
                    session: r.get(1)?,
                    turn: r.get(2)?,
                    day: r.get(3)?,
                    timestamp: r.get(4)?,
                    speaker: r.get(5)?,
                    scope: Scope::parse(&scope).unwrap_or(Scope::Party),
                    text: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Every logged conflict, oldest first.
    pub fn conflicts(&self) -> Result<Vec<Conflict>, Error> {
        self.conflicts_after(&Marks::default())
    }

    /// Where the growing tables stand now: [`MemoryStore::added_since`] and
    /// [`MemoryStore::conflicts_after`] then count what a write added in time proportional to
    /// what it added, not to the size of the memory (a storage step every turn of a long
    /// campaign must not scan it).
    pub fn marks(&self) -> Result<Marks, Error> {
        let max = |table: &str| -> Result<i64, Error> {
            self.conn
                .query_row(
                    &format!("SELECT IFNULL(MAX(rowid), 0) FROM {table}"),
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| self.err(e))
        };
        Ok(Marks {
            episodes: max("memory_episodes")?,
            facts: max("memory_facts")?,
            conflicts: max("memory_conflicts")?,
        })
    }

    /// The episodes and facts added since `marks` were taken.
    pub fn added_since(&self, marks: &Marks) -> Result<(u64, u64), Error> {
        let count = |table: &str, after: i64| -> Result<u64, Error> {
            self.conn
                .query_row(
                    &format!("SELECT COUNT(*) FROM {table} WHERE rowid > ?1"),
                    [after],
                    |r| r.get::<_, i64>(0),
                )
                .map(|n| n.max(0) as u64)
                .map_err(|e| self.err(e))
        };
        Ok((
            count("memory_episodes", marks.episodes)?,
            count("memory_facts", marks.facts)?,
        ))
    }

    /// The conflicts logged since `marks` were taken, oldest first.
    pub fn conflicts_after(&self, marks: &Marks) -> Result<Vec<Conflict>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT c.slot, c.old_fact, o.text, o.source, c.new_fact, n.text, n.source,
                        c.resolution, c.session, c.turn, c.day
                 FROM memory_conflicts c
                 JOIN memory_facts o ON o.id = c.old_fact
                 JOIN memory_facts n ON n.id = c.new_fact
                 WHERE c.id > ?1
                 ORDER BY c.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([marks.conflicts], |r| {
                let os: String = r.get(3)?;
                let ns: String = r.get(6)?;
                Ok(Conflict {
                    slot: r.get(0)?,
                    old_fact: r.get(1)?,
                    old_text: r.get(2)?,
                    old_source: Source::parse(&os).unwrap_or(Source::Import),
                    new_fact: r.get(4)?,
                    new_text: r.get(5)?,
                    new_source: Source::parse(&ns).unwrap_or(Source::Import),
                    resolution: r.get(7)?,
                    at: GameTime {
                        session: r.get(8)?,
                        turn: r.get(9)?,
                        day: r.get(10)?,
                    },
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Entities with their aliases, for export.
    pub fn entities(&self) -> Result<Vec<EntityRecord>, Error> {
        let mut aliases: HashMap<i64, Vec<String>> = HashMap::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT entity, alias FROM memory_aliases ORDER BY alias")
                .map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (e, a) = row.map_err(|e| self.err(e))?;
                aliases.entry(e).or_default().push(a);
            }
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, name, kind, first_session, last_session FROM memory_entities ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let kind: String = r.get(2)?;
                Ok(EntityRecord {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    kind: EntityKind::parse(&kind),
                    first_session: r.get(3)?,
                    last_session: r.get(4)?,
                    aliases: Vec::new(),
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows
            .into_iter()
            .map(|mut e| {
                e.aliases = aliases.remove(&e.id).unwrap_or_default();
                e
            })
            .collect())
    }

    /// Every name the entity called `name` goes by, its own name first; empty when no entity
    /// is known by that name or alias.
    pub fn names_of(&self, name: &str) -> Result<Vec<String>, Error> {
        let key = normalise_name(name);
        if key.is_empty() {
            return Ok(Vec::new());
        }
        let found: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT e.id, e.name FROM memory_aliases a JOIN memory_entities e ON e.id = a.entity
                 WHERE a.alias = ?1",
                [&key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((id, own)) = found else {
            return Ok(Vec::new());
        };
        let mut stmt = self
            .conn
            .prepare_cached("SELECT alias FROM memory_aliases WHERE entity = ?1 ORDER BY alias")
            .map_err(|e| self.err(e))?;
        let aliases = stmt
            .query_map([id], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        let mut out = vec![own.clone()];
        out.extend(aliases.into_iter().filter(|a| *a != normalise_name(&own)));
        Ok(out)
    }

    /// Teach the store another name for an entity ("the merchant" for Galvin).
    pub fn add_alias(&mut self, name: &str, alias: &str, session: u32) -> Result<(), Error> {
        self.add_aliases(&[(name.to_string(), alias.to_string(), session)])
    }

    /// Teach the store several other names at once, in one transaction: `(name, alias,
    /// session)`. An alias already taken keeps its entity.
    pub fn add_aliases(&mut self, aliases: &[(String, String, u32)]) -> Result<(), Error> {
        if aliases.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        let mut entities = Resolver::default();
        for (name, alias, session) in aliases {
            let a = normalise_name(alias);
            if a.is_empty() || normalise_name(name).is_empty() {
                continue;
            }
            let id = entities.resolve(&tx, &path, name, EntityKind::Unknown, *session)?;
            tx.prepare_cached(
                "INSERT OR IGNORE INTO memory_aliases(alias, entity) VALUES (?1, ?2)",
            )
            .and_then(|mut st| st.execute(params![a, id]))
            .map_err(|e| db(&path, e))?;
        }
        entities.flush(&tx, &path)?;
        crate::mirror::commit(tx, &path, &mut self.mirror)
    }

    pub fn counts(&self) -> Result<Counts, Error> {
        let one = |sql: &str| -> Result<u64, Error> {
            self.conn
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|n| n.max(0) as u64)
                .map_err(|e| self.err(e))
        };
        Ok(Counts {
            episodes: one("SELECT COUNT(*) FROM memory_episodes")?,
            facts: one("SELECT COUNT(*) FROM memory_facts")?,
            valid_facts: one("SELECT COUNT(*) FROM memory_facts WHERE invalid_session IS NULL")?,
            entities: one("SELECT COUNT(*) FROM memory_entities")?,
            conflicts: one("SELECT COUNT(*) FROM memory_conflicts")?,
        })
    }
}

/// Where the memory's growing tables stood at one moment (see [`MemoryStore::marks`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    episodes: i64,
    facts: i64,
    conflicts: i64,
}

/// An entity as exported.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EntityRecord {
    pub id: i64,
    pub name: String,
    pub kind: EntityKind,
    pub first_session: u32,
    pub last_session: u32,
    pub aliases: Vec<String>,
}

pub(crate) const FACT_SELECT: &str =
    "SELECT f.id, f.text, f.scope, f.source, f.memory_type, f.importance, f.rehearsals,
        f.session, f.turn, f.day, f.speaker, f.episode_ids, f.slot,
        f.invalid_session, f.invalid_turn, f.invalid_day, f.invalidated_by,
        (SELECT group_concat(e.name, '\u{1f}') FROM memory_fact_entities fe
           JOIN memory_entities e ON e.id = fe.entity WHERE fe.fact = f.id)
    FROM memory_facts f";

pub(crate) fn read_fact(r: &Row<'_>) -> rusqlite::Result<Fact> {
    let scope: String = r.get(2)?;
    let source: String = r.get(3)?;
    let mtype: String = r.get(4)?;
    let episodes: String = r.get(11)?;
    let invalid_session: Option<u32> = r.get(13)?;
    let entities: Option<String> = r.get(17)?;
    let source = Source::parse(&source).unwrap_or(Source::Import);
    Ok(Fact {
        id: r.get(0)?,
        text: r.get(1)?,
        scope: Scope::parse(&scope).unwrap_or(Scope::Party),
        source,
        memory_type: MemoryType::parse(&mtype).unwrap_or(MemoryType::Episodic),
        truth: source.truth(),
        importance: r.get(5)?,
        rehearsals: r.get(6)?,
        at: GameTime {
            session: r.get(7)?,
            turn: r.get(8)?,
            day: r.get(9)?,
        },
        speaker: r.get(10)?,
        episode_ids: serde_json::from_str(&episodes).unwrap_or_default(),
        slot: r.get(12)?,
        invalid_at: match invalid_session {
            Some(session) => Some(GameTime {
                session,
                turn: r.get::<_, Option<u32>>(14)?.unwrap_or(0),
                day: r.get(15)?,
            }),
            None => None,
        },
        invalidated_by: r.get(16)?,
        entities: entities
            .map(|s| s.split('\u{1f}').map(str::to_string).collect())
            .unwrap_or_default(),
    })
}

pub(crate) fn scope_list(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| format!("'{}'", s.key().replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",")
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn fact_key(f: &NewFact) -> String {
    let mut h = Sha256::new();
    for part in [
        f.scope.key().as_str(),
        f.source.as_str(),
        f.text.as_str(),
        &f.episode_ids.join(","),
        &format!("{}:{}", f.at.session, f.at.turn),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let d = h.finalize();
    let mut out = String::with_capacity(32);
    for b in d.iter().take(16) {
        for nibble in [b >> 4, b & 15] {
            out.extend(HEX.get(usize::from(nibble)).copied().map(char::from));
        }
    }
    out
}

/// Names resolved to entities within one transaction: each name is looked up once, and the
/// entities' last-seen session and kind are written once, at the end.
#[derive(Default)]
struct Resolver {
    known: HashMap<String, i64>,
    /// entity → (latest session seen, kind learnt)
    touched: HashMap<i64, (u32, EntityKind)>,
}

impl Resolver {
    /// Resolve a name to one entity: by its normalised name or a known alias, else a new entity.
    fn resolve(
        &mut self,
        tx: &rusqlite::Transaction<'_>,
        path: &Path,
        name: &str,
        kind: EntityKind,
        session: u32,
    ) -> Result<i64, Error> {
        let key = normalise_name(name);
        let id = match self.known.get(&key) {
            Some(id) => *id,
            None => {
                let found: Option<i64> = tx
                    .prepare_cached("SELECT entity FROM memory_aliases WHERE alias = ?1")
                    .and_then(|mut st| st.query_row([&key], |r| r.get(0)).optional())
                    .map_err(|e| db(path, e))?;
                let id = match found {
                    Some(id) => id,
                    None => {
                        tx.prepare_cached(
                            "INSERT INTO memory_entities(name, kind, first_session, last_session) VALUES (?1, ?2, ?3, ?3)",
                        )
                        .and_then(|mut st| st.execute(params![name.trim(), kind.as_str(), session]))
                        .map_err(|e| db(path, e))?;
                        let id = tx.last_insert_rowid();
                        tx.prepare_cached(
                            "INSERT OR IGNORE INTO memory_aliases(alias, entity) VALUES (?1, ?2)",
                        )
                        .and_then(|mut st| st.execute(params![key, id]))
                        .map_err(|e| db(path, e))?;
                        id
                    }
                };
                self.known.insert(key, id);
                id
            }
        };
        let t = self.touched.entry(id).or_insert((session, kind));
        t.0 = t.0.max(session);
        if t.1 == EntityKind::Unknown {
            t.1 = kind;
        }
        Ok(id)
    }

    /// Write what was learnt about the entities: when they were last seen, and their kind
    /// where it was unknown.
    fn flush(&mut self, tx: &rusqlite::Transaction<'_>, path: &Path) -> Result<(), Error> {
        let mut st = tx
            .prepare_cached(
                "UPDATE memory_entities SET last_session = max(last_session, ?2),
                     kind = CASE WHEN kind = 'unknown' THEN ?3 ELSE kind END WHERE id = ?1",
            )
            .map_err(|e| db(path, e))?;
        for (id, (session, kind)) in self.touched.drain() {
            st.execute(params![id, session, kind.as_str()])
                .map_err(|e| db(path, e))?;
        }
        Ok(())
    }
}

fn insert_fact(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    f: &NewFact,
    entities: &mut Resolver,
) -> Result<Stored, Error> {
    let key = fact_key(f);
    let existing: Option<i64> = tx
        .prepare_cached("SELECT id FROM memory_facts WHERE key = ?1")
        .and_then(|mut st| st.query_row([&key], |r| r.get(0)).optional())
        .map_err(|e| db(path, e))?;
    if let Some(id) = existing {
        return Ok(Stored {
            id,
            inserted: false,
            conflicts: Vec::new(),
        });
    }
    let episodes = serde_json::to_string(&f.episode_ids).unwrap_or_else(|_| "[]".into());
    tx.prepare_cached(
        "INSERT INTO memory_facts(key, text, scope, source, memory_type, importance, session, turn, day,
                                  speaker, episode_ids, slot)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )
    .and_then(|mut st| {
        st.execute(params![
            key,
            f.text,
            f.scope.key(),
            f.source.as_str(),
            f.memory_type.as_str(),
            f.importance.clamp(0.0, 1.0),
            f.at.session,
            f.at.turn,
            f.at.day,
            f.speaker,
            episodes,
            f.slot,
        ])
    })
    .map_err(|e| db(path, e))?;
    let id = tx.last_insert_rowid();
    tx.prepare_cached("INSERT INTO memory_fts(rowid, text) VALUES (?1, ?2)")
        .and_then(|mut st| st.execute(params![id, f.text]))
        .map_err(|e| db(path, e))?;
    for (name, kind) in &f.entities {
        if normalise_name(name).is_empty() {
            continue;
        }
        let entity = entities.resolve(tx, path, name, *kind, f.at.session)?;
        tx.prepare_cached(
            "INSERT OR IGNORE INTO memory_fact_entities(entity, fact) VALUES (?1, ?2)",
        )
        .and_then(|mut st| st.execute(params![entity, id]))
        .map_err(|e| db(path, e))?;
    }
    let conflicts = match &f.slot {
        Some(slot) => settle_slot(tx, path, id, slot, f)?,
        None => Vec::new(),
    };
    Ok(Stored {
        id,
        inserted: true,
        conflicts,
    })
}

/// A new fact on a slot meets the facts already true on it: precedence decides which stands.
/// Only facts the new one could contradict are compared: the same scope, or the party's canon.
fn settle_slot(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    new_id: i64,
    slot: &str,
    f: &NewFact,
) -> Result<Vec<Conflict>, Error> {
    let mut stmt = tx
        .prepare(
            "SELECT id, text, source, scope FROM memory_facts
             WHERE slot = ?1 AND id != ?2 AND invalid_session IS NULL",
        )
        .map_err(|e| db(path, e))?;
    let olds = stmt
        .query_map(params![slot, new_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .map_err(|e| db(path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| db(path, e))?;
    drop(stmt);
    let mut out = Vec::new();
    for (old_id, old_text, old_source, old_scope) in olds {
        if old_text.trim().eq_ignore_ascii_case(f.text.trim()) {
            continue;
        }
        let old_source = Source::parse(&old_source).unwrap_or(Source::Import);
        let old_scope = Scope::parse(&old_scope).unwrap_or(Scope::Party);
        // Canon (GM, game) speaks for everyone; otherwise facts only meet within one memory.
        let meets =
            old_scope == f.scope || f.source.precedence() == 3 || old_source.precedence() == 3;
        if !meets {
            continue;
        }
        let (resolution, closed) = if f.source.precedence() >= old_source.precedence() {
            ("superseded", old_id)
        } else {
            ("kept_old", new_id)
        };
        tx.execute(
            "UPDATE memory_facts SET invalid_session = ?2, invalid_turn = ?3, invalid_day = ?4,
                 invalidated_by = ?5 WHERE id = ?1",
            params![
                closed,
                f.at.session,
                f.at.turn,
                f.at.day,
                if closed == old_id { new_id } else { old_id }
            ],
        )
        .map_err(|e| db(path, e))?;
        tx.execute(
            "INSERT INTO memory_conflicts(slot, old_fact, new_fact, resolution, session, turn, day)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                slot,
                old_id,
                new_id,
                resolution,
                f.at.session,
                f.at.turn,
                f.at.day
            ],
        )
        .map_err(|e| db(path, e))?;
        out.push(Conflict {
            slot: slot.to_string(),
            old_fact: old_id,
            old_text,
            old_source,
            new_fact: new_id,
            new_text: f.text.clone(),
            new_source: f.source,
            resolution: resolution.to_string(),
            at: f.at,
        });
        if closed == new_id {
            // The new fact is closed already; it contradicts nothing else.
            break;
        }
    }
    Ok(out)
}
