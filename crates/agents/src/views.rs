//! Views: what one layer of one agent may see. The engine builds them from the session log by
//! the channel and scope rules; the prompt builders get nothing else.

use serde::{Deserialize, Serialize};
use troupe_campaign::{CharacterSheet, PlayerProfile, Ship};

/// One earlier turn, as the table saw it in character.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TurnRecap {
    pub turn: u32,
    pub narration: String,
    pub action: Option<String>,
    pub outcome: Option<String>,
}

/// A clarifying question and the GM's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QuestionAnswer {
    pub asked_by: String,
    pub question: String,
    pub answer: String,
}

/// The LASER FEELINGS question and the GM's honest answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Insight {
    pub question: String,
    pub answer: String,
}

/// Another player at the table, as the others know them.
#[derive(Clone, Debug, Serialize)]
pub struct PartyMember {
    pub agent_id: String,
    pub player_name: String,
    pub character_name: String,
    /// Their temperament in a few words ("cautious, likes to lead").
    pub temperament: String,
}

/// One message of the party's out-of-character talk this turn (the GM's included).
#[derive(Clone, Debug, Serialize)]
pub struct OocLine {
    pub round: u32,
    /// The agent id, or "GM".
    pub speaker: String,
    pub message: String,
    /// The plan the speaker put forward with it, if any.
    pub proposal: Option<String>,
    /// "agree", "disagree" or "neutral", and whose plan it is about.
    pub stance: Option<String>,
    pub on: Option<String>,
}

/// The plan the party settled on this turn.
#[derive(Clone, Debug, Serialize)]
pub struct PartyPlan {
    pub plan: String,
    pub proposer: String,
    /// unanimous, majority or vote.
    pub outcome: String,
}

/// What the player layer (out of character) may see.
#[derive(Clone, Debug, Serialize)]
pub struct PlayerView {
    pub agent_id: String,
    pub gm_name: String,
    pub ship: Ship,
    pub player: PlayerProfile,
    pub character: CharacterSheet,
    /// The story's in-game day (day 1 is the campaign's first).
    pub day: u32,
    pub recent: Vec<TurnRecap>,
    pub narration: String,
    pub clarifications: Vec<QuestionAnswer>,
    pub memories: Vec<String>,
    pub insight: Option<Insight>,
    /// The other AI players (empty when this one plays alone).
    pub party: Vec<PartyMember>,
    /// Plans on the table this turn: (agent id, plan).
    pub proposals: Vec<(String, String)>,
    /// The out-of-character discussion so far this turn.
    pub discussion: Vec<OocLine>,
    pub plan: Option<PartyPlan>,
    /// What the GM whispered to this player (player-only or both): never shown to a character.
    pub secrets: Vec<String>,
}

/// What the character layer (in character) may see. It has no player profile, no strategy and
/// no out-of-character talk: only the fiction, its sheet and its player's directive (P2C).
#[derive(Clone, Debug, Serialize)]
pub struct CharacterView {
    pub agent_id: String,
    pub ship: Ship,
    pub character: CharacterSheet,
    /// The story's in-game day, as the character lives it.
    pub day: u32,
    pub recent: Vec<TurnRecap>,
    pub narration: String,
    pub clarifications: Vec<QuestionAnswer>,
    pub memories: Vec<String>,
    pub directive: String,
    /// Ids of other characters this one could help.
    pub others: Vec<String>,
    pub gm_note: Option<String>,
    pub insight: Option<Insight>,
    /// The action this turn, once declared (for the insight question and the reaction).
    pub action: Option<String>,
    /// A one-line summary of the dice, when there was a roll.
    pub roll: Option<String>,
    pub outcome: Option<String>,
    /// What the GM whispered to this character (character-only or both).
    pub secrets: Vec<String>,
}
