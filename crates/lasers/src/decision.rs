//! A player seat's decision, whoever holds the seat: one type for an AI's reply and a person's
//! answer. The game reads each into this from what the seat really gave (the model's JSON, the
//! person's form), so a person's answer is never dressed up as a model's reply, and what an AI
//! says beyond the form (its strategy, its stance, its reasons) travels with its decision into
//! the log. The game's rules for a decision (at most so many questions, no helping oneself, a
//! plan on the table to back) are applied once, to either, in the driver.

use serde_json::{Map, Value};
use troupe_agents::{ActionDecl, InsightDecision, Intent, OocReply, Purpose, Stance, VoteReply};
use troupe_rules::TaskType;
use troupe_seat::Values;

use crate::machine::CallSpec;

/// What a player's seat decided, in the game's terms: the decision its [`CallSpec`] asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerDecision {
    Questions(Vec<String>),
    Intent(Intent),
    Action(ActionDecl),
    InsightQuestion(String),
    InsightDecision(InsightDecision),
    Reaction(String),
    Discussion(OocReply),
    Vote(VoteReply),
    PartyDirective(String),
}

/// The reason a person's action is recorded with: the model gives its own, a person gives none.
pub const PERSONS_JUSTIFICATION: &str = "chosen by the person playing";

impl PlayerDecision {
    /// An AI's decision: the model's validated reply to the call, with everything it said.
    pub fn from_reply(call: &CallSpec, reply: &Value) -> Result<Self, troupe_agents::Error> {
        Ok(match call {
            CallSpec::Questions { .. } => Self::Questions(Purpose::read_questions(reply)?),
            CallSpec::Intent { .. } => Self::Intent(Purpose::read_intent(reply)?),
            CallSpec::Action { .. } => Self::Action(Purpose::read_action(reply)?),
            CallSpec::InsightQuestion { .. } => {
                Self::InsightQuestion(Purpose::read_insight_question(reply)?)
            }
            CallSpec::InsightDecision { .. } => {
                Self::InsightDecision(Purpose::read_insight_decision(reply)?)
            }
            CallSpec::Reaction { .. } => Self::Reaction(Purpose::read_reaction(reply)?),
            CallSpec::Discussion { .. } => Self::Discussion(Purpose::read_discussion(reply)?),
            CallSpec::Vote { .. } => Self::Vote(Purpose::read_vote(reply)?),
            CallSpec::PartyDirective { .. } => {
                Self::PartyDirective(Purpose::read_party_directive(reply)?)
            }
        })
    }

    /// A person's decision: the values of the form they answered (already checked against the
    /// ask). A person's plan is their strategy, their proposal and their directive at once;
    /// backing a plan in the party's talk is agreeing with it; the form asks no reasons.
    pub fn from_form(call: &CallSpec, x: &Map<String, Value>) -> Result<Self, String> {
        Ok(match call {
            CallSpec::Questions { .. } => Self::Questions(x.lines("questions")),
            CallSpec::Intent { .. } => {
                let plan = x.text("plan");
                Self::Intent(Intent {
                    strategy: plan.clone(),
                    directive: plan.clone(),
                    proposal: non_empty(plan),
                })
            }
            CallSpec::Action { .. } => Self::Action(action_from_form(x)?),
            CallSpec::InsightQuestion { .. } => Self::InsightQuestion(x.text("question")),
            CallSpec::InsightDecision { .. } => Self::InsightDecision(InsightDecision {
                change_action: x.flag("change_action"),
                reason: String::new(),
            }),
            CallSpec::Reaction { .. } => Self::Reaction(x.text("reaction")),
            CallSpec::Discussion { .. } => {
                let on = non_empty(x.text("on"));
                Self::Discussion(OocReply {
                    message: x.text("message"),
                    stance: if on.is_some() {
                        Stance::Agree
                    } else {
                        Stance::Neutral
                    },
                    on,
                    proposal: None,
                    directive: None,
                })
            }
            CallSpec::Vote { .. } => Self::Vote(VoteReply {
                vote: x.text("vote"),
                remark: None,
            }),
            CallSpec::PartyDirective { .. } => Self::PartyDirective(x.text("directive")),
        })
    }

    /// The name of the decision, as the ask names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Questions(_) => "questions",
            Self::Intent(_) => "plan",
            Self::Action(_) => "action",
            Self::InsightQuestion(_) => "insight_question",
            Self::InsightDecision(_) => "insight_decision",
            Self::Reaction(_) => "reaction",
            Self::Discussion(_) => "discussion",
            Self::Vote(_) => "vote",
            Self::PartyDirective(_) => "directive",
        }
    }
}

fn action_from_form(x: &Map<String, Value>) -> Result<ActionDecl, String> {
    let task_type = match x.text("task_type").as_str() {
        "lasers" => TaskType::Lasers,
        "feelings" => TaskType::Feelings,
        other => return Err(format!("task_type: {other:?} is not lasers or feelings")),
    };
    Ok(ActionDecl {
        action: x.text("action"),
        dialogue: x.text("dialogue"),
        task_type,
        prepared: x.flag("prepared"),
        expert: x.flag("expert"),
        helping: non_empty(x.text("helping")),
        justification: PERSONS_JUSTIFICATION.to_string(),
    })
}

fn non_empty(text: String) -> Option<String> {
    Some(text).filter(|t| !t.is_empty())
}
