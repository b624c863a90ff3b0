//! troupe-campaign: the campaign file a GM writes (players, characters, ship, model).
//!
//! The file is read as untyped JSON and walked field by field, so one run reports every mistake
//! at once, each naming the file, the field path, the bad value and what is allowed. (A derived
//! `Deserialize` would stop at the first error and name neither the value nor the choices.)

// Text from people, models and files is taken apart here: nothing is indexed unchecked.
#![deny(clippy::indexing_slicing)]

mod check;
mod dir;
mod memory_place;
pub mod prices;

use std::fmt;
use std::path::{Path, PathBuf};

pub use dir::{CampaignDir, Mirrored};
pub use memory_place::{GraphPlace, MemoryPlace, MemoryPlaceError};
pub use prices::{Limit, Price, PriceTable, Priced, SpendLimits, TokenCounts};
use serde::{Deserialize, Serialize};
pub use troupe_rules::{CharacterNumber, Role, ShipProblem, ShipStrength, Style};

/// The default ship, as in the rulebook.
pub const DEFAULT_SHIP_NAME: &str = "The Raptor";

/// The model providers a campaign may name.
pub const PROVIDERS: &[&str] = &[
    "openai",
    "anthropic",
    "ollama",
    "openai-compatible",
    "replay",
    "local",
];

/// Stands in for [`Problem::value`] when a required field is absent.
pub const MISSING: &str = "(missing)";

/// A validated campaign: everything the engine needs to seat the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    /// `campaign_name` in the file.
    pub name: String,
    /// `gm_name` (or `dm_name`) in the file.
    pub gm_name: String,
    /// The party's ship.
    pub ship: Ship,
    /// One AI player and their character per seat, in file order.
    pub seats: Vec<Seat>,
    /// How to reach a language model, if the file says.
    pub model: Option<ModelSettings>,
    /// Seed 000's global memory corruption strength: 0 (off, the default) to 1.
    #[serde(default)]
    pub corruption_strength: f64,
    /// `memory.extraction` in the file: draw subject/attribute facts from free text with the
    /// model at each storage step (default on); off stores each episode as one fact.
    #[serde(default = "on")]
    pub memory_extraction: bool,
    /// `memory.backend` falkordb or neo4j in the file: the memory lives on that graph server
    /// instead of in campaign.db.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_server: Option<MemoryServer>,
    /// `gm` in the file: who runs the game (default: a person).
    #[serde(default)]
    pub gm: GmSettings,
    /// `prices` in the file: dollars per million tokens per model, over troupe's list prices.
    #[serde(default, skip_serializing_if = "PriceTable::is_empty")]
    pub prices: PriceTable,
    /// `spend_limit` in the file: when a session or a batch stops, saved.
    #[serde(default, skip_serializing_if = "SpendLimits::is_none")]
    pub spend_limit: SpendLimits,
    /// `profiles` in the file (seed 003's character registry): who each character at an
    /// encounter's table is, keyed by the character's name (a person's name when they play
    /// themselves).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub profiles: std::collections::BTreeMap<String, CharacterProfile>,
}

/// A character's profile for a game master: the pronouns above all, and what the seed's
/// character registry holds. Every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CharacterProfile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pronouns: Option<String>,
    /// Class or role ("ranger", "ship's engineer").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ancestry: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backstory: Option<String>,
}

impl CharacterProfile {
    /// One line for a prompt or a sheet: "she/her; half-elf ranger, level 3. Raised by smugglers."
    pub fn describe(&self) -> String {
        let what: Vec<&str> = [self.ancestry.as_deref(), self.class.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        let mut who: Vec<String> = Vec::new();
        if let Some(p) = &self.pronouns {
            who.push(p.clone());
        }
        let mut kind = what.join(" ");
        if let Some(level) = self.level {
            kind = if kind.is_empty() {
                format!("level {level}")
            } else {
                format!("{kind}, level {level}")
            };
        }
        if !kind.is_empty() {
            who.push(kind);
        }
        let mut line = who.join("; ");
        if let Some(b) = &self.backstory {
            if !line.is_empty() {
                line.push_str(". ");
            }
            line.push_str(b.trim());
        }
        line
    }
}

/// A graph server holding the campaign's memory (`memory` block of the campaign file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryServer {
    /// `falkordb` or `neo4j`.
    pub backend: String,
    /// `redis://host:6379` (FalkorDB) or `http://host:7474` (Neo4j).
    pub url: String,
    /// FalkorDB's graph or Neo4j's database, when the URL names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<String>,
}

/// Who runs the game, and with what.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GmSettings {
    pub seat: GmSeatKind,
    /// The AI GM's own model; the players' model when absent.
    pub model: Option<ModelSettings>,
    /// The adventure; an AI GM rolls one on the rulebook's threat tables when absent.
    pub scenario: Option<Scenario>,
}

/// The GM's seat: a person (at the terminal or by script) or an AI.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GmSeatKind {
    #[default]
    Person,
    Ai,
}

/// A prepared adventure: the premise the GM opens with, and what only the GM knows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    pub text: String,
    /// The GM's private notes: revealed only through play.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Who plays a character: an AI player (the default) or a person at the terminal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatTaker {
    #[default]
    Ai,
    Human,
}

fn on() -> bool {
    true
}

/// The party's ship: two strengths and one problem, narrative only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ship {
    /// Defaults to "The Raptor".
    pub name: String,
    /// Exactly two, distinct.
    pub strengths: Vec<ShipStrength>,
    /// Exactly one.
    pub problem: ShipProblem,
}

/// One seat at the table: the player (out of character) and the character they play.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Seat {
    /// The strategic, out-of-character layer.
    pub player: PlayerProfile,
    /// The in-character layer.
    pub character: CharacterSheet,
    /// `seat` in the file: who plays this character.
    #[serde(default, rename = "seat")]
    pub taken_by: SeatTaker,
}

/// Who the AI player is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerProfile {
    /// Unique, lowercase `[a-z0-9_-]+`: used in file names and commands.
    pub agent_id: String,
    /// `player_name` in the file.
    pub name: String,
    /// Defaults to the rulebook's player goal.
    pub player_goal: String,
    /// The nine personality traits, each 0.0–1.0.
    pub traits: Personality,
}

/// The player's personality; each trait is 0.0–1.0 and steers the player prompt.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Personality {
    /// Prefers reasoning and plans over instinct.
    pub analytical_score: f64,
    /// Willingness to take dangerous actions.
    pub risk_tolerance: f64,
    /// Attention to small facts in the narration.
    pub detail_oriented: f64,
    /// How strongly past events colour decisions.
    pub emotional_memory: f64,
    /// Pushes their own ideas in party discussion.
    pub assertiveness: f64,
    /// Supports and helps other characters.
    pub cooperativeness: f64,
    /// Receptive to strange ideas and new plans.
    pub openness: f64,
    /// Respects the rules and the GM's calls.
    pub rule_adherence: f64,
    /// How fully the character is voiced.
    pub roleplay_intensity: f64,
}

/// A Lasers & Feelings character sheet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CharacterSheet {
    /// Unique, lowercase `[a-z0-9_-]+`: used in file names and commands.
    pub character_id: String,
    /// The character's name.
    pub name: String,
    /// How they do things.
    pub style: Style,
    /// Their job aboard the ship.
    pub role: Role,
    /// 2–5: high is better at LASERS, low at FEELINGS.
    pub number: CharacterNumber,
    /// What the character wants.
    pub character_goal: String,
    /// Defaults to the rulebook's standard kit.
    pub equipment: Vec<String>,
    /// How the character talks; may be empty.
    pub speech_patterns: Vec<String>,
    /// Habits shown in narration; may be empty.
    pub mannerisms: Vec<String>,
}

/// Which model the AI seats use; the llm crate turns this into a provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSettings {
    /// One of [`PROVIDERS`], lowercase.
    pub provider: String,
    /// Model name as the provider knows it.
    pub model: Option<String>,
    /// Override of the provider's endpoint.
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Recorded model calls to replay, relative to the campaign file.
    pub replay_file: Option<String>,
    /// Context window to budget prompts against.
    pub context_tokens: Option<u32>,
}

/// One mistake in a campaign file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Field path, e.g. `characters[0].character.number`.
    pub path: String,
    /// The offending value as JSON (truncated if long), or [`MISSING`].
    pub value: String,
    /// What is wrong and what would be accepted.
    pub allowed: String,
}

impl Problem {
    /// The field was required but absent.
    pub fn is_missing(&self) -> bool {
        self.value == MISSING
    }
}

impl fmt::Display for Problem {
    /// `characters[0].character.number = 7: must be ...`; the file name is added by [`Error`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_missing() {
            write!(f, "{} is missing: {}", self.path, self.allowed)
        } else {
            write!(f, "{} = {}: {}", self.path, self.value, self.allowed)
        }
    }
}

/// Why a campaign file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or read. The OS reason is the error's `source()`, so an
    /// error chain (`{:#}` in anyhow) prints it once.
    #[error("could not read campaign file {}", path.display())]
    Io {
        /// The file as given.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid JSON.
    #[error("{file}:{line}:{column}: not valid JSON: {message}")]
    Syntax {
        /// The file label.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// Valid JSON, but not a valid campaign; every problem found is listed.
    #[error("{}", invalid_message(file, problems))]
    Invalid {
        /// The file label.
        file: String,
        /// Every problem, in the order found.
        problems: Vec<Problem>,
    },
}

fn invalid_message(file: &str, problems: &[Problem]) -> String {
    let noun = if problems.len() == 1 {
        "problem"
    } else {
        "problems"
    };
    let mut out = format!("{file} has {} {noun}:", problems.len());
    for p in problems {
        out.push_str(&format!("\n{file}: {p}"));
    }
    out
}

/// Reads and validates a campaign file; errors name the file as given.
pub fn load(path: &Path) -> Result<Campaign, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, &path.display().to_string())
}

/// Validates campaign JSON; `file_label` is the name used in every message.
pub fn parse(text: &str, file_label: &str) -> Result<Campaign, Error> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
        Error::Syntax {
            file: file_label.to_string(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })?;
    check::campaign(&value).map_err(|problems| Error::Invalid {
        file: file_label.to_string(),
        problems,
    })
}
