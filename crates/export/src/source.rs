//! What the export reads: one session, a campaign or a batch, named by a path the way a person
//! points at them (the session's log file, the campaign's directory or its `campaign.db`, the
//! `--out` directory of `troupe simulate`). The events come from troupe-report's readers, the
//! same that `troupe stats` and `troupe report` use, so the export counts what they count.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Error;

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// One session of a campaign (`DIR/logs/session-N.jsonl`).
    Session { dir: PathBuf, number: u32 },
    /// Every session of a campaign directory (or of its `campaign.db`).
    Campaign(PathBuf),
    /// Every run of a `troupe simulate` batch, sessions numbered across it.
    Batch(PathBuf),
}

impl Source {
    /// Work out what `path` is; an error names it and says what was expected.
    pub fn find(path: &Path) -> Result<Source, Error> {
        let not = |why: &str| Error::NotASource {
            path: path.display().to_string(),
            why: why.to_string(),
        };
        if path.is_file() {
            if path.file_name().is_some_and(|n| n == "campaign.db") {
                return Ok(Source::Campaign(parent(path)));
            }
            return session_log(path).ok_or_else(|| {
                not("a file here must be a campaign.db or a session log, logs/session-N.jsonl")
            });
        }
        if !path.is_dir() {
            return Err(not("there is nothing at this path"));
        }
        if troupe_report::is_batch(path) {
            return Ok(Source::Batch(path.to_path_buf()));
        }
        match troupe_report::session_numbers(path) {
            Ok(numbers) if !numbers.is_empty() => Ok(Source::Campaign(path.to_path_buf())),
            Ok(_) | Err(troupe_report::Error::NoCampaign(_)) => Err(not(
                "no Lasers & Feelings session was played here (no campaign.db with sessions, no logs/session-N.jsonl, no batch of runs)",
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// The standing events (undone ones left out, as `troupe stats` counts them). A batch's
    /// events carry `run` and `run_session`, and their `session_number` is the batch's.
    pub fn events(&self) -> Result<Vec<Value>, Error> {
        Ok(match self {
            Source::Session { dir, number } => troupe_report::load_session(dir, *number, false)?,
            Source::Campaign(dir) => troupe_report::load_campaign(dir)?,
            Source::Batch(dir) => troupe_report::load_batch(dir)?,
        })
    }
}

/// `DIR/logs/session-N.jsonl` → session N of DIR.
fn session_log(path: &Path) -> Option<Source> {
    let number = path
        .file_name()?
        .to_str()?
        .strip_prefix("session-")?
        .strip_suffix(".jsonl")?
        .parse()
        .ok()?;
    let logs = path.parent()?;
    if logs.file_name()? != "logs" {
        return None;
    }
    Some(Source::Session {
        dir: parent(logs),
        number,
    })
}

/// The directory holding `path` (`.` for a bare file name).
fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn campaign(dir: &Path) {
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        std::fs::write(
            dir.join("logs/session-2.jsonl"),
            "{\"event_type\":\"session_started\",\"seq\":0,\"session_number\":2,\"turn_number\":0}\n",
        )
        .unwrap();
    }

    #[test]
    fn a_path_names_a_session_a_campaign_or_a_batch() {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("party-seed1");
        campaign(&run);
        assert_eq!(
            Source::find(&run.join("logs/session-2.jsonl")).unwrap(),
            Source::Session {
                dir: run.clone(),
                number: 2
            }
        );
        assert_eq!(Source::find(&run).unwrap(), Source::Campaign(run.clone()));
        assert_eq!(
            Source::find(root.path()).unwrap(),
            Source::Batch(root.path().to_path_buf())
        );
        assert_eq!(Source::find(&run).unwrap().events().unwrap().len(), 1);
    }

    #[test]
    fn anything_else_is_named_in_the_error() {
        let root = tempfile::tempdir().unwrap();
        let notes = root.path().join("notes.txt");
        std::fs::write(&notes, "hello").unwrap();
        for path in [
            notes,
            root.path().join("missing"),
            root.path().to_path_buf(),
        ] {
            let err = Source::find(&path).unwrap_err().to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
        }
    }
}
