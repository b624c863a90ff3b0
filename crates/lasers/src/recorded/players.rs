//! The people of a recorded session, for a replay: each decision a person made is read
//! back from the log and given again when asked, as the protocol's answer their seat gave.

use std::collections::{BTreeMap, VecDeque};

use crate::asks::player_answer;
use crate::{CallSpec, Envelope, Event, PlayerQuestion, PlayerSeat};
use async_trait::async_trait;
use serde_json::{Value, json};
use troupe_campaign::SeatTaker;
use troupe_seat::Answer;

/// What kind of call a recorded decision answers.
fn kind(call: &CallSpec) -> &'static str {
    match call {
        CallSpec::Questions { .. } => "questions",
        CallSpec::Intent { .. } => "intent",
        CallSpec::Action { .. } => "action",
        CallSpec::InsightQuestion { .. } => "insight_question",
        CallSpec::InsightDecision { .. } => "insight_decision",
        CallSpec::Reaction { .. } => "reaction",
        CallSpec::Discussion { .. } => "discussion",
        CallSpec::Vote { .. } => "vote",
        CallSpec::PartyDirective { .. } => "directive",
    }
}

/// A person's recorded decision as (kind, the reply their seat gave).
fn decision(event: &Event) -> Option<(&'static str, Value)> {
    Some(match event {
        Event::ClarifyingQuestions { questions, .. } => {
            ("questions", json!({ "questions": questions }))
        }
        Event::StrategicIntent { intent, .. } => ("intent", serde_json::to_value(intent).ok()?),
        Event::CharacterAction { action, .. } => ("action", serde_json::to_value(action).ok()?),
        Event::LaserFeelingsQuestion { question, .. } => {
            ("insight_question", json!({ "question": question }))
        }
        Event::InsightDecision { decision, .. } => {
            ("insight_decision", serde_json::to_value(decision).ok()?)
        }
        Event::CharacterReaction { text, .. } => ("reaction", json!({ "reaction": text })),
        Event::OocMessage {
            message,
            stance,
            on,
            proposal,
            directive,
            ..
        } => (
            "discussion",
            json!({"message": message, "stance": stance, "on": on.clone().unwrap_or_default(),
                "proposal": proposal.clone().unwrap_or_default(),
                "directive": directive.clone().unwrap_or_default()}),
        ),
        Event::VoteCast { vote, remark, .. } => (
            "vote",
            json!({"vote": vote, "remark": remark.clone().unwrap_or_default()}),
        ),
        Event::Directive { text, .. } => ("directive", json!({ "directive": text })),
        _ => return None,
    })
}

/// The recorded decisions of the people at the table, by (turn, agent, kind), in order.
pub struct RecordedPeople {
    decisions: BTreeMap<(u32, String, &'static str), VecDeque<Value>>,
}

impl RecordedPeople {
    /// `None` when nobody at the recorded table was a person.
    pub fn from_log(events: &[Envelope]) -> Option<Self> {
        let people: Vec<String> = events.iter().find_map(|e| match &e.event {
            Event::SessionStarted { campaign, .. } => Some(
                campaign
                    .seats
                    .iter()
                    .filter(|s| s.taken_by == SeatTaker::Human)
                    .map(|s| s.player.agent_id.clone())
                    .collect(),
            ),
            _ => None,
        })?;
        if people.is_empty() {
            return None;
        }
        let mut decisions: BTreeMap<(u32, String, &'static str), VecDeque<Value>> = BTreeMap::new();
        for env in events {
            let Some(agent) = env
                .event
                .decision_agent()
                .filter(|a| people.iter().any(|p| p == a))
            else {
                continue;
            };
            if let Some((kind, value)) = decision(&env.event) {
                decisions
                    .entry((env.turn_number, agent.to_string(), kind))
                    .or_default()
                    .push_back(value);
            }
        }
        Some(RecordedPeople { decisions })
    }
}

#[async_trait]
impl PlayerSeat for RecordedPeople {
    /// The recorded decision; a directive is the last one of its turn (the ones before it came
    /// from the person's plan). Past the recording, the person has left.
    async fn decide(&mut self, question: &PlayerQuestion<'_>) -> Answer {
        let call = question.call;
        let key = (question.view.turn, call.agent().to_string(), kind(call));
        let queue = self.decisions.get_mut(&key);
        let value = match (kind(call), queue) {
            ("directive", Some(q)) => q.pop_back(),
            (_, Some(q)) => q.pop_front(),
            (_, None) => None,
        };
        match value {
            Some(v) => player_answer(call, &v),
            None => Answer::Leave,
        }
    }
}
