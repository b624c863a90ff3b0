//! The structured decisions the layers return, and the JSON schemas the models must follow.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use troupe_llm::ResponseSchema;
use troupe_rules::TaskType;

/// The player's strategy and the directive it sends its character.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    pub strategy: String,
    pub directive: String,
    /// In a party: the plan this player puts to the others (out of character).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "empty_as_none"
    )]
    pub proposal: Option<String>,
}

/// A player's message in the party's out-of-character discussion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OocReply {
    /// What the player says to the table, out of character.
    pub message: String,
    /// agree, disagree or neutral: the speaker's position, classified by the model with the
    /// message.
    pub stance: crate::Stance,
    /// The agent whose plan the stance is about.
    #[serde(default, deserialize_with = "empty_as_none")]
    pub on: Option<String>,
    /// A new or revised plan of the speaker's own.
    #[serde(default, deserialize_with = "empty_as_none")]
    pub proposal: Option<String>,
    /// What the player will tell its character to attempt, as things stand.
    #[serde(default, deserialize_with = "empty_as_none")]
    pub directive: Option<String>,
}

/// A player's ballot in a forced vote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VoteReply {
    /// The agent whose plan gets the vote.
    pub vote: String,
    /// What the player says if outvoted (the minority may voice frustration), or "".
    #[serde(default, deserialize_with = "empty_as_none")]
    pub remark: Option<String>,
}

/// The player's directive once the party has settled on a plan it did not back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartyDirective {
    pub directive: String,
}

/// What a character attempts: the action the GM adjudicates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionDecl {
    pub action: String,
    #[serde(default)]
    pub dialogue: String,
    pub task_type: TaskType,
    #[serde(default)]
    pub prepared: bool,
    #[serde(default)]
    pub expert: bool,
    /// The character id this action helps, if any.
    #[serde(default, deserialize_with = "empty_as_none")]
    pub helping: Option<String>,
    #[serde(default)]
    pub justification: String,
}

/// After a LASER FEELINGS insight: change the action and roll again, or not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InsightDecision {
    pub change_action: bool,
    #[serde(default)]
    pub reason: String,
}

fn empty_as_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    Ok(s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
}

/// The response schemas, one per purpose.
pub struct Schemas;

fn text(min: u32) -> Value {
    json!({"type": "string", "minLength": min})
}

impl Schemas {
    pub fn questions(max: u32) -> ResponseSchema {
        schema(
            "clarifying_questions",
            json!({"type": "object", "properties": {
                "questions": {"type": "array", "items": text(3), "maxItems": max}},
                "required": ["questions"]}),
        )
    }
    /// `party`: the player also puts a plan to the other players.
    pub fn intent(party: bool) -> ResponseSchema {
        if party {
            return schema(
                "strategic_intent",
                json!({"type": "object", "properties": {
                    "strategy": text(3), "proposal": text(3), "directive": text(3)},
                    "required": ["strategy", "proposal", "directive"]}),
            );
        }
        schema(
            "strategic_intent",
            json!({"type": "object", "properties": {"strategy": text(3), "directive": text(3)},
                "required": ["strategy", "directive"]}),
        )
    }
    /// `proposers`: the agents whose plans are on the table (what `on` may name).
    pub fn discussion(proposers: &[String]) -> ResponseSchema {
        let mut on: Vec<Value> = proposers.iter().map(|p| json!(p)).collect();
        on.push(json!(""));
        schema(
            "ooc_discussion",
            json!({"type": "object", "properties": {
                "message": text(2),
                "stance": {"type": "string", "enum": ["agree", "disagree", "neutral"]},
                "on": {"type": "string", "enum": on},
                "proposal": {"type": "string"},
                "directive": text(3)},
                "required": ["message", "stance", "on", "proposal", "directive"]}),
        )
    }
    pub fn vote(proposers: &[String]) -> ResponseSchema {
        schema(
            "forced_vote",
            json!({"type": "object", "properties": {
                "vote": {"type": "string", "enum": proposers},
                "remark": {"type": "string"}},
                "required": ["vote", "remark"]}),
        )
    }
    pub fn party_directive() -> ResponseSchema {
        schema(
            "party_directive",
            json!({"type": "object", "properties": {"directive": text(3)},
                "required": ["directive"]}),
        )
    }
    pub fn action(helping: bool) -> ResponseSchema {
        let mut props = json!({
            "action": text(8),
            "dialogue": {"type": "string"},
            "task_type": {"type": "string", "enum": ["lasers", "feelings"]},
            "prepared": {"type": "boolean"},
            "expert": {"type": "boolean"},
            "justification": {"type": "string"}
        });
        if helping {
            props["helping"] = json!({"type": "string"});
        }
        schema(
            "character_action",
            json!({"type": "object", "properties": props,
                "required": ["action", "dialogue", "task_type", "prepared", "expert", "justification"]}),
        )
    }
    pub fn insight_question() -> ResponseSchema {
        schema(
            "laser_feelings_question",
            json!({"type": "object", "properties": {"question": text(3)}, "required": ["question"]}),
        )
    }
    pub fn insight_decision() -> ResponseSchema {
        schema(
            "insight_decision",
            json!({"type": "object", "properties": {
                "change_action": {"type": "boolean"}, "reason": {"type": "string"}},
                "required": ["change_action", "reason"]}),
        )
    }
    pub fn reaction() -> ResponseSchema {
        schema(
            "character_reaction",
            json!({"type": "object", "properties": {"reaction": text(2)}, "required": ["reaction"]}),
        )
    }
}

fn schema(name: &str, schema: Value) -> ResponseSchema {
    ResponseSchema {
        name: name.to_string(),
        schema,
    }
}
