//! The campaign directory: where each file of a campaign lives, named in one place.
//!
//! A campaign lives in one directory: its campaign file (`campaign.json` or
//! `characters.json`), `campaign.db` (sessions, events, runs and memory), the JSONL mirror
//! `logs/session-N.jsonl` of each session, optional `prompts/` overrides, and what the games
//! keep beside them (`campaign.lock`, the web table's `table.json`, the scenes' `world.json`,
//! the encounters' `tally.json`, `encounters/` and `encounter-sessions/`, `replays/`). Every
//! crate that finds one of these files asks a [`CampaignDir`] instead of joining names itself.

use std::path::{Path, PathBuf};

/// A campaign's directory, and the path of each file troupe keeps in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignDir(PathBuf);

impl CampaignDir {
    /// The names a campaign file goes by, in the order they are looked for.
    pub const CAMPAIGN_FILES: [&str; 2] = ["campaign.json", "characters.json"];

    pub fn new(dir: impl Into<PathBuf>) -> CampaignDir {
        CampaignDir(dir.into())
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `campaign.db`: the sessions, their events, the encounter and scene runs, the memory.
    pub fn db(&self) -> PathBuf {
        self.0.join("campaign.db")
    }

    /// `logs/`: the sessions' JSONL mirrors.
    pub fn logs(&self) -> PathBuf {
        self.0.join("logs")
    }

    /// `logs/session-N.jsonl`: session N's mirror.
    pub fn session_log(&self, session: u32) -> PathBuf {
        self.logs().join(format!("session-{session}.jsonl"))
    }

    /// `prompts/`: the campaign's prompt overrides.
    pub fn prompts(&self) -> PathBuf {
        self.0.join("prompts")
    }

    /// `campaign.lock`: held while a process writes to the campaign.
    pub fn lock(&self) -> PathBuf {
        self.0.join("campaign.lock")
    }

    /// `table.json`: the campaign's table at the web table server (its links' hashed keys).
    pub fn table(&self) -> PathBuf {
        self.0.join("table.json")
    }

    /// `world.json`: what the campaign's scenes have settled of the world, carried between them.
    pub fn world(&self) -> PathBuf {
        self.0.join("world.json")
    }

    /// `tally.json`: how many encounter runs each spec has had.
    pub fn tally(&self) -> PathBuf {
        self.0.join("tally.json")
    }

    /// `encounters/`: the encounter specs `troupe encounter list` looks through by default.
    pub fn encounter_specs(&self) -> PathBuf {
        self.0.join("encounters")
    }

    /// `encounter-sessions/session-N.json`: what session N, a Lasers & Feelings encounter's,
    /// needs to write its outcome when it ends (kept until it does).
    pub fn encounter_session(&self, session: u32) -> PathBuf {
        self.0
            .join("encounter-sessions")
            .join(format!("session-{session}.json"))
    }

    /// `replays/`: the logs `troupe replay` writes.
    pub fn replays(&self) -> PathBuf {
        self.0.join("replays")
    }

    /// The campaign file the directory holds, if it holds one (`campaign.json` first).
    pub fn campaign_file(&self) -> Option<PathBuf> {
        Self::CAMPAIGN_FILES
            .iter()
            .map(|name| self.0.join(name))
            .find(|f| f.is_file())
    }

    /// The session a file in `logs/` mirrors, from its name (`session-3.jsonl` → 3).
    pub fn session_of_log(file_name: &str) -> Option<u32> {
        file_name
            .strip_prefix("session-")?
            .strip_suffix(".jsonl")?
            .parse()
            .ok()
    }

    /// The sessions whose mirrors are in `logs/`, in no particular order (none when there is
    /// no `logs/`).
    pub fn logged_sessions(&self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir(self.logs()) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| Self::session_of_log(&e.file_name().to_string_lossy()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_log_is_named_after_its_session_and_read_back() {
        let dir = CampaignDir::new("/c");
        let log = dir.session_log(12);
        assert_eq!(log, Path::new("/c/logs/session-12.jsonl"));
        let name = log.file_name().unwrap_or_default().to_string_lossy();
        assert_eq!(CampaignDir::session_of_log(&name), Some(12));
        for other in [
            "session-x.jsonl",
            "session-1.json",
            "notes-1.jsonl",
            "session-.jsonl",
        ] {
            assert_eq!(CampaignDir::session_of_log(other), None, "{other}");
        }
    }
}
