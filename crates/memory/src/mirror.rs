//! A write hook for keeping the memory somewhere else too (a graph server: troupe-graph).
//!
//! The store stays the engine: every write runs in SQLite as before. With a [`MemoryMirror`]
//! attached, SQLite's update hook notes which rows each transaction touched; before the
//! transaction commits, those rows are read back (inside it) and handed to the mirror as
//! [`Changes`], ids included. The transaction commits only if the mirror took them; otherwise
//! it rolls back and the write fails with [`Error::Mirror`], so the two never drift apart by a
//! write the mirror refused.
//!
//! [`Snapshot`] is the whole memory as rows (ids preserved): what a mirror is loaded from
//! ([`MemoryStore::restore`]) and what a migration copies ([`MemoryStore::snapshot`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::hooks::Action;
use rusqlite::{Connection, Row, Transaction, params};
use serde::{Deserialize, Serialize};

use crate::store::db;
use crate::{Error, MemoryStore};

/// Where the memory is kept besides SQLite. `apply` must be all or nothing: the store rolls
/// its own transaction back when it fails.
pub trait MemoryMirror: Send {
    /// Write these changes; Err(message) when they could not be written (nothing was).
    fn apply(&mut self, changes: &Changes) -> Result<(), String>;
    /// Where the mirror writes, for messages ("FalkorDB at 127.0.0.1:6379, graph raptor").
    fn describe(&self) -> String;
}

/// An episode as stored, with its row number (the key deletions are known by).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpisodeRow {
    pub row: i64,
    pub id: String,
    pub session: i64,
    pub turn: i64,
    pub day: Option<i64>,
    pub timestamp: String,
    pub speaker: String,
    pub scope: String,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntityRow {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub first_session: i64,
    pub last_session: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AliasRow {
    pub row: i64,
    pub alias: String,
    pub entity: i64,
}

/// A fact as stored: its validity times, provenance and the entities it is about (ids).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactRow {
    pub id: i64,
    /// What makes the same fact stored twice the same (see `fact_key`).
    pub key: String,
    pub text: String,
    pub scope: String,
    pub source: String,
    pub memory_type: String,
    pub importance: f64,
    pub rehearsals: i64,
    pub session: i64,
    pub turn: i64,
    pub day: Option<i64>,
    pub speaker: String,
    pub episode_ids: Vec<String>,
    pub slot: Option<String>,
    pub invalid_session: Option<i64>,
    pub invalid_turn: Option<i64>,
    pub invalid_day: Option<i64>,
    pub invalidated_by: Option<i64>,
    pub entities: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConflictRow {
    pub id: i64,
    pub slot: String,
    pub old_fact: i64,
    pub new_fact: i64,
    pub resolution: String,
    pub session: i64,
    pub turn: i64,
    pub day: Option<i64>,
}

/// One reader's recall of one fact at one turn (so a re-run recall counts once).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RehearsalRow {
    pub row: i64,
    pub session: i64,
    pub turn: i64,
    pub reader: String,
    pub fact: i64,
}

/// Rows, in the order a loader must write them (entities before the facts about them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub episodes: Vec<EpisodeRow>,
    pub entities: Vec<EntityRow>,
    pub aliases: Vec<AliasRow>,
    pub facts: Vec<FactRow>,
    pub conflicts: Vec<ConflictRow>,
    pub rehearsals: Vec<RehearsalRow>,
}

impl Snapshot {
    pub fn is_empty(&self) -> bool {
        self.episodes.is_empty()
            && self.entities.is_empty()
            && self.aliases.is_empty()
            && self.facts.is_empty()
            && self.conflicts.is_empty()
            && self.rehearsals.is_empty()
    }
}

/// Keys of deleted rows: episode, alias and rehearsal row numbers; entity, fact and conflict ids.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Deleted {
    pub episodes: Vec<i64>,
    pub entities: Vec<i64>,
    pub aliases: Vec<i64>,
    pub facts: Vec<i64>,
    pub conflicts: Vec<i64>,
    pub rehearsals: Vec<i64>,
}

impl Deleted {
    pub fn is_empty(&self) -> bool {
        self.episodes.is_empty()
            && self.entities.is_empty()
            && self.aliases.is_empty()
            && self.facts.is_empty()
            && self.conflicts.is_empty()
            && self.rehearsals.is_empty()
    }
}

/// What one transaction changed: rows as they now stand, and rows that are gone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    pub upserts: Snapshot,
    pub deleted: Deleted,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deleted.is_empty()
    }
}

/// The memory tables a mirror follows (vectors are derived from the text and recomputed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Table {
    Episodes,
    Entities,
    Aliases,
    Facts,
    Conflicts,
    Rehearsals,
}

impl Table {
    fn of(name: &str) -> Option<Table> {
        Some(match name {
            "memory_episodes" => Table::Episodes,
            "memory_entities" => Table::Entities,
            "memory_aliases" => Table::Aliases,
            "memory_facts" => Table::Facts,
            "memory_conflicts" => Table::Conflicts,
            "memory_rehearsals" => Table::Rehearsals,
            _ => return None,
        })
    }
}

/// Rows touched since the transaction began: (table, rowid) → whether the row is now gone.
type Touched = Arc<Mutex<BTreeMap<(Table, i64), bool>>>;

/// An attached mirror and the log its hooks fill.
pub(crate) struct Attached {
    target: Box<dyn MemoryMirror>,
    touched: Touched,
}

impl MemoryStore {
    /// Keep every write in `mirror` too, from now on: a write the mirror refuses is rolled
    /// back and fails with [`Error::Mirror`].
    pub fn attach_mirror(&mut self, mirror: Box<dyn MemoryMirror>) {
        let touched: Touched = Arc::default();
        let log = Arc::clone(&touched);
        self.conn
            .update_hook(Some(move |action, _db: &str, table: &str, rowid| {
                if let (Some(t), Ok(mut log)) = (Table::of(table), log.lock()) {
                    log.insert((t, rowid), action == Action::SQLITE_DELETE);
                }
            }));
        let log = Arc::clone(&touched);
        self.conn.rollback_hook(Some(move || {
            if let Ok(mut log) = log.lock() {
                log.clear();
            }
        }));
        self.mirror = Some(Attached {
            target: mirror,
            touched,
        });
    }

    /// Where the attached mirror writes, if one is attached.
    pub fn mirror(&self) -> Option<String> {
        self.mirror.as_ref().map(|m| m.target.describe())
    }

    /// The whole memory as rows, ids preserved.
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        read_rows(&self.conn, None).map_err(|e| self.err(e))
    }

    /// Write a snapshot into this store, ids preserved (loading a mirror, migrating back).
    /// Refused unless the memory is empty: rows would collide.
    pub fn restore(&mut self, s: &Snapshot) -> Result<(), Error> {
        let path = self.path().to_path_buf();
        let counts = self.counts()?;
        if counts.episodes + counts.facts + counts.entities > 0 {
            return Err(Error::Io {
                path: path.display().to_string(),
                message: "this memory is not empty; restoring into it would mix two memories"
                    .into(),
            });
        }
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        write_rows(&tx, s).map_err(|e| db(&path, e))?;
        commit(tx, &path, &mut self.mirror)?;
        self.refresh_speakers()
    }
}

/// Commit a write transaction, through the mirror when one is attached: the mirror gets what
/// changed first, and a refusal rolls everything back.
pub(crate) fn commit(
    tx: Transaction<'_>,
    path: &Path,
    mirror: &mut Option<Attached>,
) -> Result<(), Error> {
    if let Some(m) = mirror {
        let touched = match m.touched.lock() {
            Ok(mut log) => std::mem::take(&mut *log),
            Err(_) => BTreeMap::new(),
        };
        let changes = changes(&tx, &touched).map_err(|e| db(path, e))?;
        if !changes.is_empty()
            && let Err(message) = m.target.apply(&changes)
        {
            drop(tx);
            return Err(Error::Mirror {
                target: m.target.describe(),
                message,
            });
        }
    }
    tx.commit().map_err(|e| db(path, e))
}

fn changes(conn: &Connection, touched: &BTreeMap<(Table, i64), bool>) -> rusqlite::Result<Changes> {
    let mut out = Changes::default();
    let mut live: BTreeMap<Table, Vec<i64>> = BTreeMap::new();
    for ((table, rowid), gone) in touched {
        if *gone {
            let d = &mut out.deleted;
            match table {
                Table::Episodes => d.episodes.push(*rowid),
                Table::Entities => d.entities.push(*rowid),
                Table::Aliases => d.aliases.push(*rowid),
                Table::Facts => d.facts.push(*rowid),
                Table::Conflicts => d.conflicts.push(*rowid),
                Table::Rehearsals => d.rehearsals.push(*rowid),
            }
        } else {
            live.entry(*table).or_default().push(*rowid);
        }
    }
    out.upserts = read_rows(conn, Some(&live))?;
    Ok(out)
}

const EPISODES: &str =
    "SELECT rowid, id, session, turn, day, timestamp, speaker, scope, text FROM memory_episodes";
const ENTITIES: &str = "SELECT id, name, kind, first_session, last_session FROM memory_entities";
const ALIASES: &str = "SELECT rowid, alias, entity FROM memory_aliases";
const FACTS: &str = "SELECT id, key, text, scope, source, memory_type, importance, rehearsals,
    session, turn, day, speaker, episode_ids, slot, invalid_session, invalid_turn, invalid_day,
    invalidated_by FROM memory_facts";
const CONFLICTS: &str =
    "SELECT id, slot, old_fact, new_fact, resolution, session, turn, day FROM memory_conflicts";
const REHEARSALS: &str = "SELECT rowid, session, turn, reader, fact FROM memory_rehearsals";

/// Every row (`only` None), or only the rows named per table.
fn read_rows(
    conn: &Connection,
    only: Option<&BTreeMap<Table, Vec<i64>>>,
) -> rusqlite::Result<Snapshot> {
    let ids = |t: Table| only.map(|m| m.get(&t).map(Vec::as_slice).unwrap_or_default());
    let mut facts = select(conn, FACTS, ids(Table::Facts), fact_row)?;
    let mut links = conn.prepare_cached(
        "SELECT entity FROM memory_fact_entities WHERE fact = ?1 ORDER BY entity",
    )?;
    for f in &mut facts {
        f.entities = links
            .query_map([f.id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
    }
    Ok(Snapshot {
        episodes: select(conn, EPISODES, ids(Table::Episodes), episode_row)?,
        entities: select(conn, ENTITIES, ids(Table::Entities), entity_row)?,
        aliases: select(conn, ALIASES, ids(Table::Aliases), alias_row)?,
        facts,
        conflicts: select(conn, CONFLICTS, ids(Table::Conflicts), conflict_row)?,
        rehearsals: select(conn, REHEARSALS, ids(Table::Rehearsals), rehearsal_row)?,
    })
}

/// Rows of one table in rowid order: all of them, or those of `ids` still there.
fn select<T>(
    conn: &Connection,
    sql: &str,
    ids: Option<&[i64]>,
    map: fn(&Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    match ids {
        None => {
            let mut st = conn.prepare_cached(&format!("{sql} ORDER BY rowid"))?;
            st.query_map([], map)?.collect()
        }
        Some(ids) => {
            let mut st = conn.prepare_cached(&format!("{sql} WHERE rowid = ?1"))?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                out.extend(st.query_map([id], map)?.collect::<Result<Vec<_>, _>>()?);
            }
            Ok(out)
        }
    }
}

fn episode_row(r: &Row<'_>) -> rusqlite::Result<EpisodeRow> {
    Ok(EpisodeRow {
        row: r.get(0)?,
        id: r.get(1)?,
        session: r.get(2)?,
        turn: r.get(3)?,
        day: r.get(4)?,
        timestamp: r.get(5)?,
        speaker: r.get(6)?,
        scope: r.get(7)?,
        text: r.get(8)?,
    })
}

fn entity_row(r: &Row<'_>) -> rusqlite::Result<EntityRow> {
    Ok(EntityRow {
        id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        first_session: r.get(3)?,
        last_session: r.get(4)?,
    })
}

fn alias_row(r: &Row<'_>) -> rusqlite::Result<AliasRow> {
    Ok(AliasRow {
        row: r.get(0)?,
        alias: r.get(1)?,
        entity: r.get(2)?,
    })
}

fn fact_row(r: &Row<'_>) -> rusqlite::Result<FactRow> {
    let episodes: String = r.get(12)?;
    Ok(FactRow {
        id: r.get(0)?,
        key: r.get(1)?,
        text: r.get(2)?,
        scope: r.get(3)?,
        source: r.get(4)?,
        memory_type: r.get(5)?,
        importance: r.get(6)?,
        rehearsals: r.get(7)?,
        session: r.get(8)?,
        turn: r.get(9)?,
        day: r.get(10)?,
        speaker: r.get(11)?,
        episode_ids: serde_json::from_str(&episodes).unwrap_or_default(),
        slot: r.get(13)?,
        invalid_session: r.get(14)?,
        invalid_turn: r.get(15)?,
        invalid_day: r.get(16)?,
        invalidated_by: r.get(17)?,
        entities: Vec::new(),
    })
}

fn conflict_row(r: &Row<'_>) -> rusqlite::Result<ConflictRow> {
    Ok(ConflictRow {
        id: r.get(0)?,
        slot: r.get(1)?,
        old_fact: r.get(2)?,
        new_fact: r.get(3)?,
        resolution: r.get(4)?,
        session: r.get(5)?,
        turn: r.get(6)?,
        day: r.get(7)?,
    })
}

fn rehearsal_row(r: &Row<'_>) -> rusqlite::Result<RehearsalRow> {
    Ok(RehearsalRow {
        row: r.get(0)?,
        session: r.get(1)?,
        turn: r.get(2)?,
        reader: r.get(3)?,
        fact: r.get(4)?,
    })
}

/// Insert a snapshot's rows with their ids, and the facts' full-text entries.
fn write_rows(tx: &Transaction<'_>, s: &Snapshot) -> rusqlite::Result<()> {
    let mut st = tx.prepare_cached(
        "INSERT INTO memory_episodes(rowid, id, session, turn, day, timestamp, speaker, scope, text)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for e in &s.episodes {
        let row = params![
            e.row,
            e.id,
            e.session,
            e.turn,
            e.day,
            e.timestamp,
            e.speaker,
            e.scope,
            e.text
        ];
        st.execute(row)?;
    }
    let mut st = tx.prepare_cached(
        "INSERT INTO memory_entities(id, name, kind, first_session, last_session)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for e in &s.entities {
        st.execute(params![
            e.id,
            e.name,
            e.kind,
            e.first_session,
            e.last_session
        ])?;
    }
    let mut st =
        tx.prepare_cached("INSERT INTO memory_aliases(rowid, alias, entity) VALUES (?1, ?2, ?3)")?;
    for a in &s.aliases {
        st.execute(params![a.row, a.alias, a.entity])?;
    }
    for f in &s.facts {
        write_fact(tx, f)?;
    }
    let mut st = tx.prepare_cached(
        "INSERT INTO memory_conflicts(id, slot, old_fact, new_fact, resolution, session, turn, day)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for c in &s.conflicts {
        let row = params![
            c.id,
            c.slot,
            c.old_fact,
            c.new_fact,
            c.resolution,
            c.session,
            c.turn,
            c.day
        ];
        st.execute(row)?;
    }
    let mut st = tx.prepare_cached(
        "INSERT INTO memory_rehearsals(rowid, session, turn, reader, fact) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for r in &s.rehearsals {
        st.execute(params![r.row, r.session, r.turn, r.reader, r.fact])?;
    }
    Ok(())
}

fn write_fact(tx: &Transaction<'_>, f: &FactRow) -> rusqlite::Result<()> {
    let episodes = serde_json::to_string(&f.episode_ids).unwrap_or_else(|_| "[]".into());
    tx.prepare_cached(
        "INSERT INTO memory_facts(id, key, text, scope, source, memory_type, importance, rehearsals,
             session, turn, day, speaker, episode_ids, slot, invalid_session, invalid_turn,
             invalid_day, invalidated_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?
    .execute(params![
        f.id,
        f.key,
        f.text,
        f.scope,
        f.source,
        f.memory_type,
        f.importance,
        f.rehearsals,
        f.session,
        f.turn,
        f.day,
        f.speaker,
        episodes,
        f.slot,
        f.invalid_session,
        f.invalid_turn,
        f.invalid_day,
        f.invalidated_by
    ])?;
    tx.prepare_cached("INSERT INTO memory_fts(rowid, text) VALUES (?1, ?2)")?
        .execute(params![f.id, f.text])?;
    let mut link = tx.prepare_cached(
        "INSERT OR IGNORE INTO memory_fact_entities(entity, fact) VALUES (?1, ?2)",
    )?;
    for e in &f.entities {
        link.execute(params![e, f.id])?;
    }
    Ok(())
}
