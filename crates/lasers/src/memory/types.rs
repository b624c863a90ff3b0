//! The plain data of memory at the table: what an AI recalled, what a storage step wrote, and
//! what came of its extraction call. Events and the session fold hold these; nothing here
//! reaches back into the engine.

use serde::{Deserialize, Serialize};
use troupe_memory::CorruptionType;
use troupe_memory::claims::Claim;

/// Which layer of an AI a recalled memory is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecallLayer {
    Player,
    Character,
}

/// One memory as an AI got it back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recalled {
    pub layer: RecallLayer,
    pub fact_id: i64,
    /// What the AI remembers (corrupted, when it was).
    pub text: String,
    /// How well it matched the query: the retrieval's ranking score (relevance, not truth).
    #[serde(default)]
    pub score: f64,
    pub confidence: f64,
    pub formed_at: String,
    pub source: String,
    pub episode_ids: Vec<String>,
    /// The stored fact, when this recall came back corrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corruption: Option<CorruptionType>,
}

impl Recalled {
    /// The line a prompt shows.
    pub fn line(&self) -> String {
        format!(
            "{} ({}, {}; confidence {:.2})",
            self.text, self.source, self.formed_at, self.confidence
        )
    }
}

/// What a storage step wrote.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Remembered {
    pub episodes: u64,
    pub facts: u64,
    /// Contradictions settled by precedence, for researchers: "slot: old (source) → new (source)".
    pub conflicts: Vec<String>,
    /// Facts the model drew from free text that passed the checks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extracted: u64,
    /// Facts the model gave that were dropped, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// How facts were drawn from free text (`model`, `fallback: …`, `off`); the driver logs it
    /// as the `memory_storage` event's own `extraction` field.
    #[serde(skip)]
    pub extraction: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What became of a storage step's extraction call.
#[derive(Clone, Debug, PartialEq)]
pub enum Extraction {
    /// The campaign turned extraction off (`memory.extraction: false`).
    Off,
    /// The turns held no free text to extract from.
    Nothing,
    /// The model's facts, each tied to its episode and the memory it goes to.
    Claims(Vec<Claim>),
    /// The call failed or its reply could not be used: the raw episodes are stored.
    Failed(String),
}

impl Extraction {
    /// The log's word for it, when there was anything to extract from.
    #[cfg(feature = "table")]
    pub(super) fn status(&self) -> Option<String> {
        match self {
            Extraction::Off => Some("off".into()),
            Extraction::Nothing => None,
            Extraction::Claims(c) if c.is_empty() => {
                Some("fallback: the model found no facts".into())
            }
            Extraction::Claims(_) => Some("model".into()),
            Extraction::Failed(why) => Some(format!("fallback: {why}")),
        }
    }
}
