//! The JSONL mirrors: `logs/session-N.jsonl` of a session, `logs/encounter-N.jsonl` and
//! `logs/scene-N.jsonl` of the other games' runs, one event per line, flushed as written by
//! the store ([`crate::GameStore`]) after each commit. `campaign.db` is the record; these files
//! are for people and tools that read JSON lines. When the two disagree (a crash between the
//! database commit and the mirror write, a truncated file), the mirror is rewritten from the
//! database ([`reopen_mirror`]). Every game's mirror is written by this one writer: a line is
//! the event's body as the table holds it (any serializable row with a top-level `seq`).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Error;

/// An append-only JSONL file of events.
pub struct EventLog {
    path: PathBuf,
    file: File,
}

impl EventLog {
    /// Create the log for a new session; refuses to overwrite an existing one.
    pub fn create(path: &Path) -> Result<Self, Error> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(EventLog {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append the events of one step. They are written with one write and flushed, so an
    /// interrupt leaves whole lines behind (at worst the step is missing, and a resume restores
    /// it from the database).
    pub fn append<T: Serialize>(&mut self, events: &[T]) -> Result<(), Error> {
        let text = lines(events)?;
        self.write(&text)
    }

    /// Append events already serialized, one JSON object each, as [`EventLog::append`] does.
    pub fn append_lines<'a>(&mut self, rows: impl Iterator<Item = &'a str>) -> Result<(), Error> {
        self.write(&joined(rows))
    }

    fn write(&mut self, text: &str) -> Result<(), Error> {
        self.file
            .write_all(text.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| Error::io(&self.path, e))
    }
}

/// Rows already serialized, each ended by a newline.
fn joined<'a>(rows: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::new();
    for row in rows {
        text.push_str(row);
        text.push('\n');
    }
    text
}

/// Rows as JSON lines, each ended by a newline.
fn lines<T: Serialize>(rows: &[T]) -> Result<String, Error> {
    let mut text = String::new();
    for row in rows {
        text.push_str(&serde_json::to_string(row).map_err(|e| Error::Encode(e.to_string()))?);
        text.push('\n');
    }
    Ok(text)
}

/// Read every line of a JSONL mirror as a `T` (a run's events: its game's envelope, or
/// `serde_json::Value`). A line that does not parse is reported with its number.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let env = serde_json::from_str(&line).map_err(|e| Error::Corrupt {
            path: path.display().to_string(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(env);
    }
    Ok(out)
}

/// What a mirror holds compared with the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MirrorCheck {
    /// Every stored event, in order, and nothing else.
    InStep,
    /// It needs rewriting, and why (for the user).
    Stale(String),
}

/// Compare a mirror with the database's copy of a session or run: `count` stored events
/// (undone ones included), the last of them numbered `last_seq`. It reads the file once and
/// parses only its last line, so checking a 1,000-turn log costs milliseconds: lines are
/// appended whole (a crash can only tear the last one), so a mirror with the right number of
/// lines that ends in the right event holds them all.
pub fn check_mirror(path: &Path, count: u64, last_seq: Option<u64>) -> MirrorCheck {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return MirrorCheck::Stale("the log file is missing".into());
        }
        Err(e) => return MirrorCheck::Stale(format!("the log file could not be read ({e})")),
    };
    if bytes.last().is_some_and(|b| *b != b'\n') {
        return MirrorCheck::Stale("the log ends in half an event (a write was cut off)".into());
    }
    let lines = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let (mut n, mut last) = (0u64, None);
    for line in lines {
        n += 1;
        last = Some(line);
    }
    if n != count {
        return MirrorCheck::Stale(format!(
            "the log has {n} events, the campaign database {count}"
        ));
    }
    /// All a mirror check needs of an event.
    #[derive(serde::Deserialize)]
    struct Numbered {
        seq: u64,
    }
    let seq = last.map(|l| serde_json::from_slice::<Numbered>(l).map(|e| e.seq));
    match (seq, last_seq) {
        (None, None) => MirrorCheck::InStep,
        (Some(Ok(a)), Some(b)) if a == b => MirrorCheck::InStep,
        (Some(Err(_)), _) => {
            MirrorCheck::Stale(format!("line {n} of the log is not a whole event"))
        }
        _ => MirrorCheck::Stale("the log's last event is not the database's".into()),
    }
}

/// A mirror open for appending what comes next, for every game alike: kept when it holds what
/// the database holds ([`check_mirror`] against `count` stored events, the last numbered
/// `last_seq`), rewritten whole from `stored` (the database's bodies, read only then)
/// otherwise, so no torn or missing line is ever left behind what is appended. Why it was
/// rewritten, when it was (for the user).
pub fn reopen_mirror(
    path: &Path,
    (count, last_seq): (u64, Option<u64>),
    stored: impl FnOnce() -> Result<Vec<String>, Error>,
) -> Result<(EventLog, Option<String>), Error> {
    Ok(match check_mirror(path, count, last_seq) {
        MirrorCheck::InStep => (EventLog::open_append(path)?, None),
        MirrorCheck::Stale(why) => (EventLog::rewrite(path, &stored()?)?, Some(why)),
    })
}

impl EventLog {
    /// Write a fresh mirror holding exactly these rows, one a line (via a temporary file and a
    /// rename, so a crash mid-rewrite leaves the old file), then keep appending to it.
    pub fn rewrite(path: &Path, rows: &[String]) -> Result<Self, Error> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let tmp = path.with_extension("jsonl.tmp");
        std::fs::write(&tmp, joined(rows.iter().map(String::as_str)))
            .map_err(|e| Error::io(&tmp, e))?;
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        Self::open_append(path)
    }

    /// Keep appending to an existing mirror.
    pub fn open_append(path: &Path) -> Result<Self, Error> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(EventLog {
            path: path.to_path_buf(),
            file,
        })
    }
}
