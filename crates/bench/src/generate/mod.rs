//! Suite 2.0: scenarios generated from versioned templates with a seed. Each family's template
//! (`families.rs`) draws names, secrets, numbers, places and who holds what from the pools,
//! so a lab can study the published development seed and report on seeds it never tuned on;
//! the same seed gives the same suite, file for file.
//!
//! Alongside each scenario, its template writes the replies of two scripted players (rules,
//! no model): a good one (keeps secrets, states intents, asks at LASER FEELINGS and heeds the
//! answer, agrees on a plan and directs under it, remembers) and a bad one (leaks, narrates
//! results, ignores insights, deadlocks, forgets). They are the ceiling and the floor of every
//! score, and they play any seed because they are written from the scenario itself.

mod families;
mod memory;
mod party;
mod play;
mod pools;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::Error;
use crate::rng::Rng;
use crate::suite::Question;

/// The version of the template set. Change any template, pool or family and it changes.
pub const VERSION: &str = "2.0";

/// The families, in the suite's order.
pub const FAMILIES: &[&str] = &["secrets", "overreach", "laser-feelings", "party", "memory"];

/// Scenarios per family by default: 12, so every score rests on at least 40 items.
pub const PER_FAMILY: usize = 12;

/// One generated scenario: its campaign, GM scripts, memory questions and both scripted
/// players' replies (one list per session).
#[derive(Clone, Debug)]
pub struct Generated {
    pub id: String,
    pub family: &'static str,
    pub seed: u64,
    pub about: String,
    pub campaign: Value,
    pub sessions: Vec<Value>,
    pub questions: Vec<Question>,
    pub good: Vec<Vec<Reply>>,
    pub bad: Vec<Vec<Reply>>,
}

/// One recorded reply, in the replay provider's format.
#[derive(Clone, Debug)]
pub struct Reply {
    pub agent: String,
    pub purpose: &'static str,
    pub content: Value,
}

/// A seat at a generated table: the player's id and name, the character's name and number.
#[derive(Clone, Debug)]
pub struct Seat {
    pub agent: String,
    pub player: String,
    pub character: String,
    pub number: u32,
}

/// The suite of `seed`: `per_family` scenarios of every family.
pub fn generate(seed: u64, per_family: usize) -> Vec<Generated> {
    let mut out = Vec::new();
    for family in FAMILIES {
        for i in 1..=per_family {
            let id = format!("{family}-{i:02}");
            let scenario_seed = Rng::derived(seed, &id).next_u64();
            let mut rng = Rng::new(scenario_seed);
            let mut g = families::build(family, &mut rng);
            g.id = id;
            g.seed = scenario_seed;
            out.push(g);
        }
    }
    out
}

/// A table of `n` players with differing traits.
pub(crate) fn table(rng: &mut Rng, n: usize) -> (Value, Vec<Seat>) {
    let agents = rng.choose(pools::AGENTS, n);
    let names = rng.choose(pools::CHARACTERS, n);
    let mut seats = Vec::new();
    let mut characters = Vec::new();
    for ((agent, player), name) in agents.iter().zip(&names) {
        let number = rng.range(2, 5);
        seats.push(Seat {
            agent: agent.to_string(),
            player: player.to_string(),
            character: name.to_string(),
            number,
        });
        characters.push(json!({
            "player": player_json(rng, agent, player),
            "character": character_json(rng, agent, name, number),
        }));
    }
    let campaign = json!({
        "campaign_name": format!("Bench {VERSION}: a table of {n}"),
        "gm_name": "Ryan",
        "party": {
            "ship_name": rng.pick(pools::SHIPS),
            "ship_strengths": ["Fast", "Superior Sensors"],
            "ship_problem": "Fuel Hog",
        },
        "characters": characters,
    });
    (campaign, seats)
}

fn player_json(rng: &mut Rng, agent: &str, player: &str) -> Value {
    let mut p = json!({"agent_id": agent, "player_name": player,
        "player_goal": "Play my character boldly and help the party through the night"});
    for trait_name in [
        "analytical_score",
        "risk_tolerance",
        "detail_oriented",
        "emotional_memory",
        "assertiveness",
        "cooperativeness",
        "openness",
        "rule_adherence",
        "roleplay_intensity",
    ] {
        p[trait_name] = json!(rng.share());
    }
    p
}

fn character_json(rng: &mut Rng, agent: &str, name: &str, number: u32) -> Value {
    json!({
        "character_id": format!("{agent}-pc"),
        "name": name,
        "style": rng.pick(pools::STYLES),
        "role": rng.pick(pools::ROLES),
        "number": number,
        "character_goal": "Keep the crew alive and get paid",
        "equipment": ["Consortium uniform (with built-in vacc-suit)", "Multi-tool", "Phase pistol (set to stun)"],
        "speech_patterns": ["Speaks plainly"],
        "mannerisms": ["Drums fingers when thinking"],
    })
}

impl Generated {
    /// Write the campaign and GM scripts into `dir`; returns the suite entry's YAML.
    fn write(&self, dir: &Path) -> Result<String, Error> {
        let campaign = format!("{}.json", self.id);
        write(&dir.join(&campaign), &pretty(&self.campaign))?;
        let mut names = Vec::new();
        for (n, script) in self.sessions.iter().enumerate() {
            let name = format!("{}-{}.gm.yaml", self.id, n + 1);
            write(&dir.join(&name), &pretty(script))?;
            names.push(name);
        }
        let entry = json!({"id": self.id, "family": self.family, "seed": self.seed,
            "about": self.about, "campaign": campaign, "sessions": names,
            "questions": self.questions});
        Ok(format!(
            "  - {}\n",
            serde_json::to_string(&entry).unwrap_or_default()
        ))
    }

    /// The replies of one scripted player (`good` or `bad`) into `dir/SCENARIO-N.jsonl`.
    fn write_player(&self, dir: &Path, good: bool) -> Result<(), Error> {
        let sessions = if good { &self.good } else { &self.bad };
        for (n, replies) in sessions.iter().enumerate() {
            let mut text = format!(
                "// troupe bench {VERSION}, the scripted {} player: scenario {}, session {}.\n",
                if good { "good" } else { "bad" },
                self.id,
                n + 1
            );
            for r in replies.iter().chain(&spare_extractions()) {
                let line = json!({"agent": r.agent, "purpose": r.purpose, "content": r.content});
                text.push_str(&line.to_string());
                text.push('\n');
            }
            write(&dir.join(format!("{}-{}.jsonl", self.id, n + 1)), &text)?;
        }
        Ok(())
    }
}

/// Replies for the memory's fact extraction (agent `memory`), which runs when a scene ends or
/// a session closes: no facts drawn, so what a player remembers is only what its own
/// recall holds. Spares left unused are harmless.
fn spare_extractions() -> Vec<Reply> {
    (0..4)
        .map(|_| Reply {
            agent: "memory".into(),
            purpose: "extract_facts",
            content: json!({"facts": []}),
        })
        .collect()
}

/// Write a generated suite into `dir`: `suite.yaml`, every campaign and GM script, and the
/// scripted players' replies under `dir/players/good` and `dir/players/bad`.
pub fn write_suite(dir: &Path, seed: u64, scenarios: &[Generated]) -> Result<PathBuf, Error> {
    let mut yaml = format!(
        "# troupe bench suite {VERSION}, generated from its templates with seed {seed}.\n\
         suite_version: \"{VERSION}\"\nseed: {seed}\nscenarios:\n"
    );
    for g in scenarios {
        yaml.push_str(&g.write(dir)?);
        for good in [true, false] {
            let who = if good { "good" } else { "bad" };
            g.write_player(&dir.join("players").join(who), good)?;
        }
    }
    let path = dir.join("suite.yaml");
    write(&path, &yaml)?;
    Ok(path)
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::write(path, text).map_err(io)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn files(dir: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for e in walk(dir) {
            let name = e.strip_prefix(dir).unwrap().display().to_string();
            out.push((name, std::fs::read_to_string(&e).unwrap()));
        }
        out.sort();
        out
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    fn written(seed: u64) -> (tempfile::TempDir, Vec<(String, String)>) {
        let dir = tempfile::tempdir().unwrap();
        write_suite(dir.path(), seed, &generate(seed, PER_FAMILY)).unwrap();
        let f = files(dir.path());
        (dir, f)
    }

    #[test]
    fn the_same_seed_writes_the_same_suite_and_another_seed_another() {
        let (_a, first) = written(1);
        let (_b, again) = written(1);
        let (_c, other) = written(2);
        assert_eq!(first, again);
        assert_eq!(first.len(), other.len(), "the same files, other contents");
        let differ = first.iter().zip(&other).filter(|(a, b)| a.1 != b.1).count();
        assert!(differ > first.len() / 2, "{differ} of {}", first.len());
    }

    #[test]
    fn a_generated_suite_passes_the_suite_checks_on_many_seeds() {
        for seed in [1, 2, 3, 99, 12345] {
            let dir = tempfile::tempdir().unwrap();
            let path = write_suite(dir.path(), seed, &generate(seed, PER_FAMILY)).unwrap();
            let suite = crate::suite::load(&path).unwrap();
            assert_eq!(suite.version, VERSION);
            assert_eq!(suite.seed, Some(seed));
            assert_eq!(suite.scenarios.len(), FAMILIES.len() * PER_FAMILY);
            assert!(dir.path().join("players/good/memory-01-3.jsonl").is_file());
            assert!(dir.path().join("players/bad/party-12-1.jsonl").is_file());
        }
    }

    fn whispers(g: &Generated) -> usize {
        g.sessions
            .iter()
            .flat_map(|s| s["turns"].as_array().unwrap())
            .map(|t| t["whisper"].as_array().map_or(0, Vec::len))
            .sum()
    }

    fn turns(g: &Generated, family: &str) -> usize {
        if g.family != family {
            return 0;
        }
        g.sessions
            .iter()
            .map(|s| s["turns"].as_array().unwrap().len())
            .sum()
    }

    #[test]
    fn every_skill_gets_at_least_forty_planned_items_on_any_seed() {
        for seed in 1..=20 {
            let suite = generate(seed, PER_FAMILY);
            let secrets: usize = suite.iter().map(whispers).sum();
            let moments: usize = suite.iter().map(|g| turns(g, "laser-feelings")).sum();
            let dilemmas: usize = suite.iter().map(|g| turns(g, "party")).sum();
            let questions: usize = suite.iter().map(|g| g.questions.len()).sum();
            let tempting: usize = suite.iter().map(|g| turns(g, "overreach")).sum();
            for (what, n) in [
                ("secrets", secrets),
                ("LASER FEELINGS", moments),
                ("dilemmas", dilemmas),
                ("memory questions", questions),
                ("tempting turns", tempting),
            ] {
                assert!(n >= 36, "seed {seed}: {what} {n}");
            }
            assert!(secrets >= 40 && moments >= 40 && dilemmas >= 40 && questions >= 40);
        }
    }

    #[test]
    fn particulars_change_with_the_seed() {
        let names = |seed| -> Vec<String> {
            generate(seed, 3)
                .iter()
                .map(|g| g.campaign["characters"][0]["character"]["name"].to_string())
                .collect()
        };
        assert_ne!(names(1), names(2));
        let memory = generate(5, 1)
            .into_iter()
            .find(|g| g.family == "memory")
            .unwrap();
        assert_eq!(memory.sessions.len(), 3);
        assert_eq!(memory.questions.len(), 5);
    }
}
