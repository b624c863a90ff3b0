//! The suite: scenarios as data files (a campaign and the GM scripts of its sessions, played in
//! order in one campaign directory), checked when loaded so a lab's own suite fails early with a
//! message that names the file and the field.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;

/// The suite shipped with troupe, embedded at build: `(file name, text)`. `suite.yaml` first.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("suite.yaml", include_str!("../suite/suite.yaml")),
    ("solo.json", include_str!("../suite/solo.json")),
    ("duo.json", include_str!("../suite/duo.json")),
    ("secrets.gm.yaml", include_str!("../suite/secrets.gm.yaml")),
    (
        "laser-feelings.gm.yaml",
        include_str!("../suite/laser-feelings.gm.yaml"),
    ),
    (
        "overreach.gm.yaml",
        include_str!("../suite/overreach.gm.yaml"),
    ),
    ("party.gm.yaml", include_str!("../suite/party.gm.yaml")),
    (
        "memory-1.gm.yaml",
        include_str!("../suite/memory-1.gm.yaml"),
    ),
    (
        "memory-2.gm.yaml",
        include_str!("../suite/memory-2.gm.yaml"),
    ),
];

/// A loaded, checked suite. Paths are resolved against the suite file's directory.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Suite {
    /// Changes whenever a scenario, script or campaign changes: scores of different versions
    /// are not comparable.
    pub version: String,
    pub scenarios: Vec<Scenario>,
    /// The seed a generated suite (2.0 on) was drawn with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(skip)]
    pub dir: PathBuf,
}

/// One scenario: a campaign and the GM scripts of its sessions.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Letters, digits and `-`: it names the scenario's directory and its recorded replies.
    pub id: String,
    pub about: String,
    /// The template family a generated scenario comes from, and its own seed (suite 2.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The campaign file, relative to the suite file.
    pub campaign: String,
    /// One GM script per session, played in this order in the same campaign.
    pub sessions: Vec<String>,
    /// Questions whose answers only an earlier session holds.
    #[serde(default)]
    pub questions: Vec<Question>,
}

/// A question asked in a session's turn, answered when the agent says one of `answer`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The session (from 1) and turn whose outputs are searched.
    pub session: u32,
    pub turn: u32,
    /// The AI player whose outputs are searched.
    pub agent: String,
    /// The question, as the scenario poses it (for people reading the results).
    pub ask: String,
    /// Accepted answers: any one, as whole words, in any case.
    pub answer: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    suite_version: String,
    #[serde(default)]
    seed: Option<u64>,
    scenarios: Vec<Scenario>,
}

/// Read and check a suite file.
pub fn load(path: &Path) -> Result<Suite, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    let file: SuiteFile = serde_saphyr::from_str(&text).map_err(|e| Error::Suite {
        path: path.display().to_string(),
        message: format!("not a suite file: {e}"),
    })?;
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let suite = Suite {
        version: file.suite_version.trim().to_string(),
        scenarios: file.scenarios,
        seed: file.seed,
        dir,
    };
    check(&suite).map_err(|message| Error::Suite {
        path: path.display().to_string(),
        message,
    })?;
    Ok(suite)
}

/// Write the embedded suite into `dir` (created when missing) and return its suite file.
pub fn write_embedded(dir: &Path) -> Result<PathBuf, Error> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| Error::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for (name, text) in EMBEDDED {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    Ok(dir.join("suite.yaml"))
}

impl Suite {
    /// A scenario's file, resolved against the suite's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn check(suite: &Suite) -> Result<(), String> {
    if suite.version.is_empty() {
        return Err("suite_version is empty: give the suite a version (e.g. \"1.0\")".into());
    }
    if suite.scenarios.is_empty() {
        return Err("scenarios is empty: a suite needs at least one scenario".into());
    }
    let mut seen = BTreeSet::new();
    for (i, s) in suite.scenarios.iter().enumerate() {
        let at = format!("scenarios[{i}]");
        check_id(&s.id).map_err(|m| format!("{at}.id: {m}"))?;
        if !seen.insert(s.id.as_str()) {
            return Err(format!("{at}.id: \"{}\" is used twice", s.id));
        }
        check_scenario(suite, s).map_err(|m| format!("{at} ({}): {m}", s.id))?;
    }
    Ok(())
}

fn check_id(id: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if id.is_empty() || !id.chars().all(allowed) {
        return Err(format!(
            "\"{id}\" is not an id: use lowercase letters, digits and -"
        ));
    }
    Ok(())
}

fn check_scenario(suite: &Suite, s: &Scenario) -> Result<(), String> {
    if s.sessions.is_empty() {
        return Err("sessions is empty: give at least one GM script".into());
    }
    for name in std::iter::once(&s.campaign).chain(&s.sessions) {
        if !suite.file(name).is_file() {
            return Err(format!(
                "{} does not exist (paths are relative to the suite file)",
                suite.file(name).display()
            ));
        }
    }
    for (i, q) in s.questions.iter().enumerate() {
        check_question(suite, s, q).map_err(|m| format!("questions[{i}]: {m}"))?;
    }
    Ok(())
}

/// A question must point at a session the scenario plays, and its answers must not be in that
/// session's own script: the answer has to come from memory, not from the GM's words.
fn check_question(suite: &Suite, s: &Scenario, q: &Question) -> Result<(), String> {
    let Some(script) = q
        .session
        .checked_sub(1)
        .and_then(|i| s.sessions.get(i as usize))
    else {
        return Err(format!(
            "session {} is not one of the scenario's 1 to {}",
            q.session,
            s.sessions.len()
        ));
    };
    if q.turn == 0 || q.answer.iter().all(|a| a.trim().is_empty()) {
        return Err("needs a turn (from 1) and at least one answer".into());
    }
    let text = std::fs::read_to_string(suite.file(script)).map_err(|e| e.to_string())?;
    if let Some(given) = q.answer.iter().find(|a| mentions(&text, a)) {
        return Err(format!(
            "the answer \"{given}\" is in {script} itself, so it does not test memory"
        ));
    }
    Ok(())
}

/// Lowercase words of letters and digits.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `term`'s words appear in `text`, in a row, as whole words, in any case.
pub fn mentions(text: &str, term: &str) -> bool {
    let want = words(term);
    if want.is_empty() {
        return false;
    }
    words(text)
        .windows(want.len())
        .any(|w| w == want.as_slice())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_embedded_suite_loads_and_lists_every_file_of_the_suite_directory() {
        let dir = tempfile::tempdir().unwrap();
        let suite = load(&write_embedded(dir.path()).unwrap()).unwrap();
        assert!(!suite.version.is_empty());
        assert_eq!(suite.scenarios.len(), 5);
        let on_disk: BTreeSet<String> =
            std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("suite"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
        let embedded: BTreeSet<String> = EMBEDDED.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(on_disk, embedded, "a suite file is not embedded (or gone)");
    }

    #[test]
    fn mentions_match_whole_words_in_any_case() {
        assert!(mentions("It was ILSA, at vault 4471.", "ilsa"));
        assert!(mentions("vault 4471", "4471"));
        assert!(mentions("Ilsa Marrow sold it", "ilsa marrow"));
        assert!(!mentions("vault 44710", "4471"));
        assert!(!mentions("Ilsabel", "Ilsa"));
        assert!(!mentions("anything", " "));
    }

    fn suite_with(dir: &Path, yaml: &str) -> Result<Suite, Error> {
        write_embedded(dir).unwrap();
        let path = dir.join("mine.yaml");
        std::fs::write(&path, yaml).unwrap();
        load(&path)
    }

    #[test]
    fn mistakes_in_a_suite_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("suite_version: ''\nscenarios: []", "suite_version is empty"),
            ("suite_version: '1'\nscenarios: []", "scenarios is empty"),
            (
                "suite_version: '1'\nscenarios:\n  - {id: 'A b', about: x, campaign: solo.json, sessions: [party.gm.yaml]}",
                "scenarios[0].id: \"A b\" is not an id",
            ),
            (
                "suite_version: '1'\nscenarios:\n  - {id: a, about: x, campaign: nope.json, sessions: [party.gm.yaml]}",
                "nope.json does not exist",
            ),
            (
                "suite_version: '1'\nscenarios:\n  - {id: a, about: x, campaign: solo.json, sessions: [memory-2.gm.yaml], questions: [{session: 2, turn: 1, agent: alex, ask: q, answer: [x]}]}",
                "questions[0]: session 2 is not one of the scenario's 1 to 1",
            ),
            (
                "suite_version: '1'\nscenarios:\n  - {id: a, about: x, campaign: solo.json, sessions: [memory-1.gm.yaml], questions: [{session: 1, turn: 1, agent: alex, ask: q, answer: [Ilsa]}]}",
                "the answer \"Ilsa\" is in memory-1.gm.yaml itself",
            ),
            (
                "suite_version: '1'\nscenarios: []\nextra: 1",
                "not a suite file",
            ),
        ];
        for (yaml, want) in cases {
            let err = suite_with(dir.path(), yaml).unwrap_err().to_string();
            assert!(err.contains(want), "{yaml}\n→ {err}");
            assert!(err.contains("mine.yaml"), "{err}");
        }
    }
}
