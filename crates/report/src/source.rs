//! Reading a campaign's events as JSON: from `campaign.db` (the record), or, when a campaign
//! directory holds only the JSONL mirrors, from `logs/session-N.jsonl`.
//!
//! The rows are read raw (their `body`), not through the engine's types, so a log written by a
//! newer troupe with event types this build does not know still loads.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, params};
use serde_json::Value;
use troupe_campaign::CampaignDir;

use crate::Error;
use crate::ev::{num, seq, ty};

/// What to analyse: one session, or every session of the campaign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Session(u32),
    Campaign,
}

fn db_path(dir: &Path) -> PathBuf {
    CampaignDir::new(dir).db()
}

fn mirror_path(dir: &Path, n: u32) -> PathBuf {
    CampaignDir::new(dir).session_log(n)
}

pub(crate) fn store_err(path: &Path, e: rusqlite::Error) -> Error {
    Error::Store {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

pub(crate) fn open_db(dir: &Path) -> Result<Option<Connection>, Error> {
    let path = db_path(dir);
    if !path.is_file() {
        return Ok(None);
    }
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| store_err(&path, e))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| store_err(&path, e))?;
    Ok(Some(conn))
}

/// The sessions of a campaign, in order.
pub fn session_numbers(dir: &Path) -> Result<Vec<u32>, Error> {
    if let Some(conn) = open_db(dir)? {
        let path = db_path(dir);
        // A campaign that has played only encounters or scenes has a campaign.db without the
        // sessions' tables: no sessions, not an error.
        if !has_table(&conn, &path, "sessions")? {
            return Ok(Vec::new());
        }
        let mut stmt = conn
            .prepare("SELECT number FROM sessions ORDER BY number")
            .map_err(|e| store_err(&path, e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, u32>(0))
            .map_err(|e| store_err(&path, e))?;
        return rows
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| store_err(&path, e));
    }
    let mut out = CampaignDir::new(dir).logged_sessions();
    if out.is_empty() {
        return Err(Error::NoCampaign(dir.display().to_string()));
    }
    out.sort_unstable();
    Ok(out)
}

/// Whether the database has this table.
pub(crate) fn has_table(conn: &Connection, path: &Path, table: &str) -> Result<bool, Error> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        params![table],
        |r| r.get(0),
    )
    .map_err(|e| store_err(path, e))
}

/// One session's events in log order. Undone events are left out, or, with `include_undone`,
/// kept and marked `"undone": true`.
pub fn load_session(dir: &Path, session: u32, include_undone: bool) -> Result<Vec<Value>, Error> {
    let known = session_numbers(dir)?;
    if !known.contains(&session) {
        return Err(Error::NoSuchSession {
            session,
            dir: dir.display().to_string(),
            known: if known.is_empty() {
                "none yet".into()
            } else {
                known
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        });
    }
    let rows = match open_db(dir)? {
        Some(conn) => from_db(&conn, &db_path(dir), session)?,
        None => from_mirror(&mirror_path(dir, session))?,
    };
    Ok(rows
        .into_iter()
        .filter_map(|(mut e, undone)| {
            if !undone {
                Some(e)
            } else if include_undone {
                if let Some(o) = e.as_object_mut() {
                    o.insert("undone".into(), Value::Bool(true));
                }
                Some(e)
            } else {
                None
            }
        })
        .collect())
}

/// Every standing event of every session, session by session.
pub fn load_campaign(dir: &Path) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for n in session_numbers(dir)? {
        out.extend(load_session(dir, n, false)?);
    }
    Ok(out)
}

/// One campaign directory of a batch (the `--out` of `troupe simulate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchRun {
    /// The directory's name, e.g. `party-seed3-replay`.
    pub name: String,
    pub dir: PathBuf,
}

/// Whether `dir` is a batch: not a campaign itself (no campaign.db, no logs/), but holding
/// campaign directories.
pub fn is_batch(dir: &Path) -> bool {
    !db_path(dir).is_file() && !CampaignDir::new(dir).logs().is_dir() && !batch_runs(dir).is_empty()
}

/// The campaign directories directly under `dir` that hold a session, in natural order of
/// their names (seed2 before seed10).
pub fn batch_runs(dir: &Path) -> Vec<BatchRun> {
    let mut runs: Vec<BatchRun> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.path().is_dir() && played(&entry.path()))
        .map(|entry| BatchRun {
            name: entry.file_name().to_string_lossy().to_string(),
            dir: entry.path(),
        })
        .collect();
    runs.sort_by_key(|r| natural_key(&r.name));
    runs
}

/// A campaign directory with a session in it. One whose store cannot be read counts, so that
/// reading the batch names the damage instead of leaving the run out unseen; a run that failed
/// before its session began (no store, or an empty one) does not.
fn played(dir: &Path) -> bool {
    match session_numbers(dir) {
        Ok(numbers) => !numbers.is_empty(),
        Err(Error::NoCampaign(_)) => false,
        Err(_) => true,
    }
}

/// Every standing event of every campaign of a batch. Sessions are numbered anew across the
/// batch (1, 2, … in run order) so the metrics, flags and audit see one session per run and
/// never merge two runs' "session 1"; each event keeps where it came from in `run` (the
/// directory's name) and `run_session` (its session number there).
pub fn load_batch(dir: &Path) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    let mut number = 0u64;
    for run in batch_runs(dir) {
        for n in session_numbers(&run.dir)? {
            number += 1;
            for mut e in load_session(&run.dir, n, false)? {
                if let Some(o) = e.as_object_mut() {
                    o.insert("session_number".into(), Value::from(number));
                    o.insert("run".into(), Value::from(run.name.as_str()));
                    o.insert("run_session".into(), Value::from(n));
                }
                out.push(e);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::NoCampaign(dir.display().to_string()));
    }
    Ok(out)
}

/// A sort key that orders the digit runs of a name by value.
fn natural_key(name: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            key.push((
                std::mem::take(&mut text),
                digits.parse().unwrap_or(u64::MAX),
            ));
            digits.clear();
        }
        text.push(c);
    }
    key.push((text, digits.parse().unwrap_or(0)));
    key
}

fn from_db(conn: &Connection, path: &Path, session: u32) -> Result<Vec<(Value, bool)>, Error> {
    let mut stmt = conn
        .prepare("SELECT seq, body, undone FROM events WHERE session = ?1 ORDER BY seq")
        .map_err(|e| store_err(path, e))?;
    let rows = stmt
        .query_map(params![session], |r| {
            Ok((
                r.get::<_, u64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
            ))
        })
        .map_err(|e| store_err(path, e))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, body, undone) = row.map_err(|e| store_err(path, e))?;
        let value: Value = serde_json::from_str(&body).map_err(|e| Error::CorruptRow {
            path: path.display().to_string(),
            session,
            seq,
            message: e.to_string(),
        })?;
        out.push((value, undone));
    }
    Ok(out)
}

/// A mirror's events, each with its undo mark worked out from the `events_undone` markers.
fn from_mirror(path: &Path) -> Result<Vec<(Value, bool)>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let mut events = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => events.push(v),
            // A last line cut off mid-write is what a crash leaves; the database has it.
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(Error::CorruptLine {
                    path: path.display().to_string(),
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(mark_undone(events))
}

/// An `events_undone` marker takes back `from_seq..=to_seq`; the marker itself stands.
fn mark_undone(events: Vec<Value>) -> Vec<(Value, bool)> {
    let ranges: Vec<(u64, u64)> = events
        .iter()
        .filter(|e| ty(e) == "events_undone")
        .map(|e| (num(e, "from_seq"), num(e, "to_seq")))
        .collect();
    events
        .into_iter()
        .map(|e| {
            let s = seq(&e);
            let undone =
                ty(&e) != "events_undone" && ranges.iter().any(|&(from, to)| s >= from && s <= to);
            (e, undone)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_mirror_applies_undo_markers_and_tolerates_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("logs")).unwrap();
        let lines = [
            r#"{"event_type":"gm_narration","seq":0,"session_number":1,"turn_number":1}"#,
            r#"{"event_type":"gm_outcome","seq":1,"session_number":1,"turn_number":1}"#,
            r#"{"event_type":"events_undone","seq":2,"from_seq":1,"to_seq":1}"#,
            r#"{"event_type":"gm_outcome","seq":3,"session_number":1,"turn_number":1}"#,
            r#"{"event_type":"gm_ou"#,
        ];
        std::fs::write(dir.path().join("logs/session-1.jsonl"), lines.join("\n")).unwrap();
        assert_eq!(session_numbers(dir.path()).unwrap(), [1]);
        let standing = load_session(dir.path(), 1, false).unwrap();
        let seqs: Vec<u64> = standing.iter().map(seq).collect();
        assert_eq!(seqs, [0, 2, 3]);
        let all = load_session(dir.path(), 1, true).unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(all[1]["undone"], true);
        assert!(matches!(
            load_session(dir.path(), 2, false),
            Err(Error::NoSuchSession { session: 2, .. })
        ));
    }

    #[test]
    fn a_damaged_line_in_the_middle_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("logs")).unwrap();
        std::fs::write(
            dir.path().join("logs/session-1.jsonl"),
            "{\"seq\":0}\nnot json\n{\"seq\":2}\n",
        )
        .unwrap();
        let err = load_session(dir.path(), 1, false).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    fn campaign_with_session(dir: &Path, model: &str) {
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        let lines = [
            format!(
                r#"{{"event_type":"session_started","seq":0,"session_number":1,"turn_number":0,"model":"{model}"}}"#
            ),
            r#"{"event_type":"turn_started","seq":1,"session_number":1,"turn_number":1}"#.into(),
        ];
        std::fs::write(dir.join("logs/session-1.jsonl"), lines.join("\n") + "\n").unwrap();
    }

    #[test]
    fn a_batch_numbers_its_runs_sessions_anew_in_natural_order() {
        let out = tempfile::tempdir().unwrap();
        for (name, model) in [("party-seed10", "a:x"), ("party-seed2", "b:y")] {
            campaign_with_session(&out.path().join(name), model);
        }
        // A run that failed before its session began holds none and is left out.
        std::fs::create_dir_all(out.path().join("broken-seed1")).unwrap();
        std::fs::write(out.path().join("simulate.json"), "{}").unwrap();
        assert!(is_batch(out.path()));
        assert!(!is_batch(&out.path().join("party-seed2")));
        let names: Vec<String> = batch_runs(out.path()).into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["party-seed2", "party-seed10"]);
        let events = load_batch(out.path()).unwrap();
        assert_eq!(events.len(), 4);
        assert_eq!(events[0]["run"], "party-seed2");
        assert_eq!(events[0]["model"], "b:y");
        assert_eq!(events[3]["session_number"], 2);
        assert_eq!(events[3]["run"], "party-seed10");
        assert_eq!(events[3]["run_session"], 1);
        // A run whose store is damaged is not skipped: reading the batch says so.
        let damaged = out.path().join("party-seed3");
        std::fs::create_dir_all(&damaged).unwrap();
        std::fs::write(damaged.join("campaign.db"), "not a database").unwrap();
        assert_eq!(batch_runs(out.path()).len(), 3);
        let err = load_batch(out.path()).unwrap_err().to_string();
        assert!(err.contains("party-seed3"), "{err}");
    }

    #[test]
    fn an_empty_directory_says_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_campaign(dir.path()).unwrap_err();
        assert!(matches!(err, Error::NoCampaign(_)), "{err}");
    }
}
