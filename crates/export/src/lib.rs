//! `troupe export`: a session, a campaign or a whole `troupe simulate` batch as Parquet tables
//! (events, model calls, turns, verdicts, scorecards, game runs), for pandas, polars or DuckDB
//! without any troupe code: every game troupe plays, Lasers & Feelings sessions, encounter runs
//! (seed 003) and scenes (seed 004). docs/export-schema.md documents every column.
//!
//! The events come from troupe-report's readers and the numbers from its metrics, so the files
//! say what `troupe stats` says. The Parquet writer itself is feature `parquet` (troupe-cli's
//! `export`, in its default build): the tables are built in every build, and a troupe built
//! without the feature (`--no-default-features`) refuses and says how to build one that writes
//! them.

mod game_tables;
mod game_turns;
mod outdir;
mod source;
mod table;
mod tables;
#[cfg(feature = "parquet")]
mod write;

use std::path::{Path, PathBuf};

pub use source::{Piece, Source};
pub use table::{Column, Kind, Table};

/// The version of the tables' layout, in every file's key-value metadata under
/// [`SCHEMA_VERSION_KEY`]. Raised when a column is renamed, removed, moved or changes meaning,
/// or a table's rows do (a new column does not raise it: readers select the columns they know).
/// 2: encounter runs and scenes, `game` and `game_run` among the keys, `game_runs.parquet`.
pub const SCHEMA_VERSION: u32 = 2;
pub const SCHEMA_VERSION_KEY: &str = "troupe.export_schema_version";

/// The command that builds a troupe with the Parquet writer (the default build has it; only a
/// build with `--no-default-features` and without `--features export` lacks it).
pub const BUILD_HINT: &str = "cargo build --release -p troupe-cli";

/// Whether this build writes Parquet files.
pub const WRITES_PARQUET: bool = cfg!(feature = "parquet");

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "this troupe was built without the Parquet writer (cargo feature `export`, part of the default build; --no-default-features leaves it out); build one that has it with: {BUILD_HINT}"
    )]
    NotBuilt,
    #[error(
        "{path} is not a session, a campaign or a batch to export: {why}. Give a campaign directory (or its campaign.db), a session's logs/session-N.jsonl, or the --out directory of troupe simulate"
    )]
    NotASource { path: String, why: String },
    #[error(
        "{path} already holds files; choose an empty or new directory, or add --force to replace it"
    )]
    OutNotEmpty { path: String },
    #[error("{path} is a file, not a directory to write the tables into")]
    OutIsFile { path: String },
    #[error(transparent)]
    Read(#[from] troupe_report::Error),
    /// A row of a kind this build knows that does not read as that kind: exporting the session
    /// without it would leave its tables quietly short.
    #[error(
        "{at}: a {event_type} event cannot be read ({why}); this troupe knows that kind, so the row is damaged, and the tables would count without it"
    )]
    Unreadable {
        at: String,
        event_type: String,
        why: String,
    },
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: could not write Parquet: {message}")]
    Parquet { path: String, message: String },
}

/// What an export wrote.
#[derive(Clone, Debug, Default)]
pub struct Exported {
    pub out: PathBuf,
    /// Each file written and its rows, in order.
    pub files: Vec<(String, usize)>,
    pub sessions: usize,
    pub encounter_runs: usize,
    pub scenes: usize,
}

impl Exported {
    /// "3 sessions, 1 encounter run, 1 scene".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (n, one, many) in [
            (self.sessions, "session", "sessions"),
            (self.encounter_runs, "encounter run", "encounter runs"),
            (self.scenes, "scene", "scenes"),
        ] {
            if n > 0 || (one == "session" && self.encounter_runs + self.scenes == 0) {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        parts.join(", ")
    }
}

/// The tables and their columns, without rows: what docs/export-schema.md lists.
pub fn schema() -> Vec<Table> {
    tables::empty()
}

/// The tables of one piece of an export, not yet written: a session's or a game run's rows.
/// `Err` when a session's or a game run's row of a kind this build knows does not read.
pub fn tables_of(piece: &Piece) -> Result<Vec<Table>, Error> {
    match piece {
        Piece::Session(events) => tables::of_sessions(events),
        Piece::Game { run, game } => game_tables::of_game_run(run.as_deref(), game),
    }
}

/// Export `path` into the directory `out`: one `NAME.parquet` per table. `out` must be new or
/// empty unless `force`, which replaces it. Nothing is half-written: the files go to a
/// temporary directory beside `out`, renamed into place once all are written. The source is
/// read a session (or a game run) at a time, its rows added to the open files before the next
/// is read, so a batch of any size needs the memory of its largest session.
pub fn export(path: &Path, out: &Path, force: bool) -> Result<Exported, Error> {
    if !WRITES_PARQUET {
        return Err(Error::NotBuilt);
    }
    outdir::check(out, force)?;
    let source = Source::find(path)?;
    let mut done = Exported {
        out: out.to_path_buf(),
        ..Exported::default()
    };
    outdir::write_all(out, |dir| write_tables(&source, dir, &mut done))?;
    Ok(done)
}

#[cfg(feature = "parquet")]
fn write_tables(source: &Source, dir: &Path, done: &mut Exported) -> Result<(), Error> {
    let mut files = Vec::new();
    for t in schema() {
        let name = format!("{}.parquet", t.name);
        let writer = write::TableWriter::create(t.name, &t.columns, &dir.join(&name))?;
        files.push((name, writer));
    }
    source.for_each(|piece| {
        match &piece {
            Piece::Session(_) => done.sessions += 1,
            Piece::Game { game, .. } => match game.game {
                troupe_report::Game::Encounter => done.encounter_runs += 1,
                troupe_report::Game::Scene => done.scenes += 1,
            },
        }
        for (table, (_, writer)) in tables_of(&piece)?.into_iter().zip(&mut files) {
            writer.add(table.rows)?;
        }
        Ok(())
    })?;
    for (name, writer) in files {
        let rows = writer.close()?;
        done.files.push((name, rows));
    }
    Ok(())
}

#[cfg(not(feature = "parquet"))]
fn write_tables(_: &Source, _: &Path, _: &mut Exported) -> Result<(), Error> {
    Err(Error::NotBuilt)
}

/// The column tables of docs/export-schema.md, as the code defines them.
pub fn schema_markdown() -> String {
    let mut md = column_table("The keys: the first columns of every table", tables::KEYS);
    for t in schema() {
        let own = t.columns.get(tables::KEYS.len()..).unwrap_or_default();
        md.push_str(&column_table(
            &format!("`{}.parquet`: the keys, then", t.name),
            own,
        ));
    }
    md
}

fn column_table(heading: &str, columns: &[Column]) -> String {
    let mut md = format!("### {heading}\n\n| column | type | meaning |\n|---|---|---|\n");
    for c in columns {
        md.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.name,
            c.kind.doc_name(),
            c.meaning
        ));
    }
    md.push('\n');
    md
}

/// A real encounter run of two AI seats, as logged (the unit tests' recording).
#[cfg(test)]
fn recorded_encounter() -> Vec<serde_json::Value> {
    include_str!("../tests/data/encounter-two-ai-rounds.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The published column list is the code's: a column added, renamed or retyped without
    /// its line in docs/export-schema.md fails here (the message has the text to paste).
    #[test]
    fn the_column_doc_lists_every_column() {
        let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/export-schema.md");
        let doc = std::fs::read_to_string(doc).unwrap();
        let tables = schema_markdown();
        assert!(
            doc.contains(tables.trim_end()),
            "docs/export-schema.md's column tables should read:\n\n{tables}"
        );
        assert!(doc.contains(&format!("`{SCHEMA_VERSION_KEY}`")));
        assert!(doc.contains(&format!("schema version {SCHEMA_VERSION}")));
    }

    #[test]
    fn without_the_writer_export_says_how_to_build_it() {
        let msg = Error::NotBuilt.to_string();
        assert!(
            msg.contains(BUILD_HINT) && msg.contains("default build"),
            "{msg}"
        );
    }
}
