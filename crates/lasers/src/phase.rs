//! The phases of a turn, in the order the seeds' turn cycle runs them.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    GmNarration,
    MemoryRetrieval,
    Clarification,
    StrategicIntent,
    /// The party's out-of-character discussion and consensus (two or more AI players).
    Discussion,
    Directive,
    CharacterAction,
    Validation,
    GmAdjudication,
    HelperRolls,
    DiceResolution,
    LaserFeelings,
    GmOutcome,
    CharacterReaction,
    MemoryStorage,
}

impl Phase {
    pub const ALL: [Phase; 15] = [
        Phase::GmNarration,
        Phase::MemoryRetrieval,
        Phase::Clarification,
        Phase::StrategicIntent,
        Phase::Discussion,
        Phase::Directive,
        Phase::CharacterAction,
        Phase::Validation,
        Phase::GmAdjudication,
        Phase::HelperRolls,
        Phase::DiceResolution,
        Phase::LaserFeelings,
        Phase::GmOutcome,
        Phase::CharacterReaction,
        Phase::MemoryStorage,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::GmNarration => "gm_narration",
            Phase::MemoryRetrieval => "memory_retrieval",
            Phase::Clarification => "clarification",
            Phase::StrategicIntent => "strategic_intent",
            Phase::Discussion => "discussion",
            Phase::Directive => "directive",
            Phase::CharacterAction => "character_action",
            Phase::Validation => "validation",
            Phase::GmAdjudication => "gm_adjudication",
            Phase::HelperRolls => "helper_rolls",
            Phase::DiceResolution => "dice_resolution",
            Phase::LaserFeelings => "laser_feelings",
            Phase::GmOutcome => "gm_outcome",
            Phase::CharacterReaction => "character_reaction",
            Phase::MemoryStorage => "memory_storage",
        }
    }

    /// How a person would say it.
    pub fn title(self) -> &'static str {
        match self {
            Phase::GmNarration => "GM narration",
            Phase::MemoryRetrieval => "Memory retrieval",
            Phase::Clarification => "Questions for the GM",
            Phase::StrategicIntent => "Strategy",
            Phase::Discussion => "Party discussion (OOC)",
            Phase::Directive => "Directive",
            Phase::CharacterAction => "Character action",
            Phase::Validation => "Overreach check",
            Phase::GmAdjudication => "GM adjudication",
            Phase::HelperRolls => "Helper rolls",
            Phase::DiceResolution => "Dice",
            Phase::LaserFeelings => "LASER FEELINGS",
            Phase::GmOutcome => "GM outcome",
            Phase::CharacterReaction => "Reaction",
            Phase::MemoryStorage => "Memory storage",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
