//! What the export reads: one session, a campaign or a batch, named by a path the way a person
//! points at them (the session's log file, the campaign's directory or its `campaign.db`, the
//! `--out` directory of `troupe simulate`). The events come from troupe-report's readers, the
//! same that `troupe stats` and `troupe report` use, so the export counts what they count.

use std::path::{Path, PathBuf};

use serde_json::Value;
use troupe_report::GameRun;

use crate::Error;

/// One piece of an export, read whole and written before the next is read: the memory an
/// export needs is the largest piece's, not the batch's.
#[derive(Debug)]
pub enum Piece {
    /// One Lasers & Feelings session's standing events (in a batch, marked with `run` and
    /// `run_session` and numbered across the batch, as `troupe_report::load_batch` does).
    Session(Vec<Value>),
    /// One encounter run or scene, and the batch run directory it is in (None outside a batch).
    Game { run: Option<String>, game: GameRun },
}

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
        let sessions = match troupe_report::session_numbers(path) {
            Ok(numbers) => !numbers.is_empty(),
            Err(troupe_report::Error::NoCampaign(_)) => false,
            Err(e) => return Err(e.into()),
        };
        if sessions || has_games(path)? {
            return Ok(Source::Campaign(path.to_path_buf()));
        }
        Err(not(
            "nothing was played here (no campaign.db with sessions, encounter runs or scenes, no logs/session-N.jsonl, no batch of runs)",
        ))
    }

    /// Read the source piece by piece, handing each to `f` before reading the next: every
    /// session in order, then the campaign's encounter runs and scenes (a batch: each run
    /// directory's sessions, then its games). A single session is that session alone, as
    /// `troupe stats N` reads it.
    pub fn for_each(&self, mut f: impl FnMut(Piece) -> Result<(), Error>) -> Result<(), Error> {
        match self {
            Source::Session { dir, number } => f(Piece::Session(troupe_report::load_session(
                dir, *number, false,
            )?)),
            Source::Campaign(dir) => {
                for n in campaign_sessions(dir)? {
                    f(Piece::Session(troupe_report::load_session(dir, n, false)?))?;
                }
                games(dir, None, &mut f)
            }
            Source::Batch(dir) => batch(dir, &mut f),
        }
    }
}

/// Whether a campaign has an encounter run or a scene (read one at a time, never all at once).
fn has_games(dir: &Path) -> Result<bool, Error> {
    let mut any = false;
    troupe_report::for_each_game_run(dir, |_| {
        any = true;
        Ok::<(), Error>(())
    })?;
    Ok(any)
}

/// A campaign's sessions; none when it has played only encounters and scenes.
fn campaign_sessions(dir: &Path) -> Result<Vec<u32>, Error> {
    match troupe_report::session_numbers(dir) {
        Err(troupe_report::Error::NoCampaign(_)) => Ok(Vec::new()),
        other => Ok(other?),
    }
}

/// The encounter runs and scenes of a campaign directory, one at a time.
fn games(
    dir: &Path,
    run: Option<&str>,
    f: &mut impl FnMut(Piece) -> Result<(), Error>,
) -> Result<(), Error> {
    troupe_report::for_each_game_run(dir, |game| {
        f(Piece::Game {
            run: run.map(String::from),
            game,
        })
    })
}

/// A batch run by run, session by session, marked and numbered as `load_batch` marks them
/// (sessions 1, 2, … across the runs; `run` and `run_session` say where each came from).
fn batch(dir: &Path, f: &mut impl FnMut(Piece) -> Result<(), Error>) -> Result<(), Error> {
    let mut number = 0u64;
    for run in troupe_report::batch_runs(dir) {
        for n in troupe_report::session_numbers(&run.dir)? {
            number += 1;
            let mut events = troupe_report::load_session(&run.dir, n, false)?;
            for e in &mut events {
                if let Some(o) = e.as_object_mut() {
                    o.insert("session_number".into(), Value::from(number));
                    o.insert("run".into(), Value::from(run.name.as_str()));
                    o.insert("run_session".into(), Value::from(n));
                }
            }
            f(Piece::Session(events))?;
        }
        games(&run.dir, Some(&run.name), f)?;
    }
    Ok(())
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
        assert_eq!(
            sessions(&Source::find(&run).unwrap()),
            [vec![session_started(2)]]
        );
    }

    fn session_started(number: u64) -> Value {
        serde_json::json!({"event_type": "session_started", "seq": 0,
            "session_number": number, "turn_number": 0})
    }

    /// The sessions' events a source hands out, piece by piece.
    fn sessions(source: &Source) -> Vec<Vec<Value>> {
        let mut out = Vec::new();
        source
            .for_each(|piece| {
                if let Piece::Session(events) = piece {
                    out.push(events);
                }
                Ok(())
            })
            .unwrap();
        out
    }

    /// Read piece by piece, a batch is what `troupe stats` reads at once: the same events,
    /// marked and numbered the same.
    #[test]
    fn a_batch_read_session_by_session_is_the_batch_stats_reads() {
        let root = tempfile::tempdir().unwrap();
        for name in ["party-seed10", "party-seed2"] {
            campaign(&root.path().join(name));
        }
        let pieces = sessions(&Source::Batch(root.path().to_path_buf()));
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[1][0]["session_number"], 2);
        assert_eq!(pieces[1][0]["run"], "party-seed10");
        assert_eq!(pieces[1][0]["run_session"], 2);
        assert_eq!(
            pieces.concat(),
            troupe_report::load_batch(root.path()).unwrap()
        );
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
