//! The session log on disk: `logs/session-N.jsonl`, one event per line, flushed as written.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::{Envelope, Error};

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

    /// Append one event as one line. A line is written whole with one write, then flushed, so
    /// an interrupt never leaves half an event behind it in the OS.
    pub fn append(&mut self, env: &Envelope) -> Result<(), Error> {
        let mut line = serde_json::to_string(env).map_err(|e| Error::Encode(e.to_string()))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Make everything written so far durable (at phase and turn boundaries).
    pub fn sync(&mut self) -> Result<(), Error> {
        self.file.sync_data().map_err(|e| Error::io(&self.path, e))
    }
}

/// Read every event of a log. A line that does not parse is reported with its number.
pub fn read_log(path: &Path) -> Result<Vec<Envelope>, Error> {
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

/// The next free session number in a campaign's `logs/` folder, and its log path.
pub fn next_session_log(campaign_dir: &Path) -> (u32, PathBuf) {
    let logs = campaign_dir.join("logs");
    let mut n = 1;
    while logs.join(format!("session-{n}.jsonl")).exists() {
        n += 1;
    }
    (n, logs.join(format!("session-{n}.jsonl")))
}
