//! The campaign directory: where each file of a campaign lives, named in one place.
//!
//! A campaign lives in one directory: its campaign file (`campaign.json` or
//! `characters.json`), `campaign.db` (sessions, events, runs and memory), the JSONL mirrors in
//! `logs/` (`session-N.jsonl` of each session, `encounter-N.jsonl` and `scene-N.jsonl` of each
//! encounter and scene run), optional `prompts/` overrides, and what the games
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

    /// `logs/`: the JSONL mirrors of the sessions and of the encounter and scene runs.
    pub fn logs(&self) -> PathBuf {
        self.0.join("logs")
    }

    /// `logs/session-N.jsonl`: session N's mirror.
    pub fn session_log(&self, session: u32) -> PathBuf {
        self.logs().join(Mirrored::Session(session).file_name())
    }

    /// `logs/encounter-N.jsonl`: the mirror of encounter run N (its number in `encounter_runs`).
    pub fn encounter_log(&self, run: u32) -> PathBuf {
        self.logs().join(Mirrored::Encounter(run).file_name())
    }

    /// `logs/scene-N.jsonl`: the mirror of scene run N (its number in `scene_runs`).
    pub fn scene_log(&self, run: u32) -> PathBuf {
        self.logs().join(Mirrored::Scene(run).file_name())
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

    /// The session a file in `logs/` mirrors, from its name (`session-3.jsonl` → 3); None for
    /// the runs' mirrors and anything else.
    pub fn session_of_log(file_name: &str) -> Option<u32> {
        match Mirrored::of_file(file_name)? {
            Mirrored::Session(n) => Some(n),
            Mirrored::Encounter(_) | Mirrored::Scene(_) => None,
        }
    }

    /// What the mirrors in `logs/` mirror, in no particular order (none when there is no
    /// `logs/`).
    pub fn mirrors(&self) -> Vec<Mirrored> {
        let Ok(entries) = std::fs::read_dir(self.logs()) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| Mirrored::of_file(&e.file_name().to_string_lossy()))
            .collect()
    }

    /// The sessions whose mirrors are in `logs/`, in no particular order (none when there is
    /// no `logs/`).
    pub fn logged_sessions(&self) -> Vec<u32> {
        self.mirrors()
            .into_iter()
            .filter_map(|m| match m {
                Mirrored::Session(n) => Some(n),
                Mirrored::Encounter(_) | Mirrored::Scene(_) => None,
            })
            .collect()
    }
}

/// What a JSONL mirror in `logs/` mirrors: a session, or a run of another game, by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mirrored {
    Session(u32),
    Encounter(u32),
    Scene(u32),
}

impl Mirrored {
    /// Its file's name in `logs/`: `session-N.jsonl`, `encounter-N.jsonl`, `scene-N.jsonl`.
    pub fn file_name(self) -> String {
        let (prefix, n) = self.parts();
        format!("{prefix}{n}.jsonl")
    }

    /// What a file in `logs/` mirrors, from its name; None for a name no mirror has.
    pub fn of_file(file_name: &str) -> Option<Mirrored> {
        let kinds: [fn(u32) -> Mirrored; 3] =
            [Mirrored::Session, Mirrored::Encounter, Mirrored::Scene];
        kinds.into_iter().find_map(|kind| {
            let (prefix, _) = kind(0).parts();
            let n = file_name.strip_prefix(prefix)?.strip_suffix(".jsonl")?;
            n.parse().ok().map(kind)
        })
    }

    /// The name's prefix and the number: the names are defined here alone.
    fn parts(self) -> (&'static str, u32) {
        match self {
            Mirrored::Session(n) => ("session-", n),
            Mirrored::Encounter(n) => ("encounter-", n),
            Mirrored::Scene(n) => ("scene-", n),
        }
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

    #[test]
    fn the_runs_mirrors_are_named_apart_and_never_taken_for_sessions() {
        let dir = CampaignDir::new("/c");
        assert_eq!(dir.encounter_log(2), Path::new("/c/logs/encounter-2.jsonl"));
        assert_eq!(dir.scene_log(3), Path::new("/c/logs/scene-3.jsonl"));
        for (name, mirrored) in [
            ("session-1.jsonl", Mirrored::Session(1)),
            ("encounter-2.jsonl", Mirrored::Encounter(2)),
            ("scene-3.jsonl", Mirrored::Scene(3)),
        ] {
            assert_eq!(Mirrored::of_file(name), Some(mirrored), "{name}");
            assert_eq!(mirrored.file_name(), name);
        }
        for run in ["encounter-2.jsonl", "scene-3.jsonl", "scene-3.jsonl.tmp"] {
            assert_eq!(CampaignDir::session_of_log(run), None, "{run}");
        }
    }

    #[test]
    fn logged_sessions_leaves_out_the_runs_mirrors() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = CampaignDir::new(tmp.path());
        std::fs::create_dir(dir.logs()).unwrap();
        for path in [dir.session_log(4), dir.encounter_log(1), dir.scene_log(1)] {
            std::fs::write(path, "").unwrap();
        }
        assert_eq!(dir.logged_sessions(), vec![4]);
        let mut all = dir.mirrors();
        all.sort_by_key(|m| m.file_name());
        let expected = vec![
            Mirrored::Encounter(1),
            Mirrored::Scene(1),
            Mirrored::Session(4),
        ];
        assert_eq!(all, expected);
    }
}
