//! Who decides for the player seats of a step, asked alike: the people ([`People`]: their seat
//! answers with the protocol's answer, read back here, with why and again while it does not
//! fit) and the AI players ([`AiPlayers`]: their models, the step's calls made together, as the
//! party's are). Either gives each decision in the game's terms ([`PlayerReply`]: one
//! [`PlayerDecision`] type, a person's read from their form, an AI's from its model's reply
//! with everything it said), with what the seat did on the way that the log must hold (an AI's
//! trimmed prompts and the attempts of its calls). The driver records both by one rule.

use async_trait::async_trait;
use serde_json::Value;
use troupe_agents::{AgentCall, PromptSet};
use troupe_engine::attempts::{self, CallWatch, For};
use troupe_llm::{AttemptRecord, Progress};
use troupe_seat::Answer;

use crate::asks::MAX_BAD_ANSWERS;
use crate::decision::PlayerDecision;
use crate::driver::{Observer, Table};
use crate::machine::CallSpec;
use crate::{Error, Event, GmReply, LayerView, PlayerQuestion, PlayerSeat, Session};

/// What a player's seat gave for one decision, whoever holds it.
#[derive(Debug)]
pub enum PlayerReply {
    /// Its decision: a person's read from their form, an AI's from its model's reply.
    Decided(PlayerDecision),
    /// An AI could not decide (its prompt did not build, its model failed past its retries,
    /// its reply did not read): the phase's failure for that agent, recorded; the turn machine
    /// says what comes next.
    Failed(String),
    /// A person's seat could not decide (answers that never fit, a seat that failed): the
    /// session stops, saved.
    SeatFailed(String),
    /// The seat changed hands while it was asked.
    Handed,
    /// The person left the table, for this reason: the session ends.
    Left(String),
}

/// A step's replies, in the order asked, and the events the seat's work left for the log: those
/// of the whole step first (an AI's prompts trimmed to fit, found before any call was made),
/// then each reply's own (an AI's call attempts) before it. A person's seat that stopped the
/// step (left, handed over, failed) gives no replies after that one.
#[derive(Debug, Default)]
pub struct StepReplies {
    pub before: Vec<Event>,
    pub replies: Vec<(Vec<Event>, PlayerReply)>,
}

/// Whoever decides for player seats, asked a step's decisions at once.
#[async_trait]
pub trait PlayerSeats: Send {
    async fn decide_step(&mut self, questions: &[PlayerQuestion<'_>]) -> StepReplies;
}

/// The seats people hold: their first answers asked together where their seats can be, then
/// each read back in order; an answer that does not fit is sent back with why, a few times.
pub struct People<'a> {
    pub seat: &'a mut dyn PlayerSeat,
    pub session: &'a Session,
}

#[async_trait]
impl PlayerSeats for People<'_> {
    async fn decide_step(&mut self, questions: &[PlayerQuestion<'_>]) -> StepReplies {
        let first = self.seat.decide_all(questions).await;
        let mut replies = Vec::new();
        for (question, answer) in questions.iter().zip(first) {
            let reply = self.read(question, answer).await;
            let stops = !matches!(reply, PlayerReply::Decided(_));
            replies.push((Vec::new(), reply));
            if stops {
                break;
            }
        }
        StepReplies {
            before: Vec::new(),
            replies,
        }
    }
}

impl People<'_> {
    /// A person's reply, read from their first answer and, while it does not fit, from the
    /// answers they give when told why.
    async fn read(&mut self, question: &PlayerQuestion<'_>, first: Answer) -> PlayerReply {
        let mut why = match question.read(first) {
            Ok(reply) => return taken(question.call, reply),
            Err(e) => e,
        };
        for _ in 1..MAX_BAD_ANSWERS {
            let again = PlayerQuestion {
                error: Some(&why),
                again: crate::driver::asked_again(self.session, question.call),
                ..*question
            };
            let answer = self.seat.decide(&again).await;
            why = match question.read(answer) {
                Ok(reply) => return taken(question.call, reply),
                Err(e) => e,
            };
        }
        PlayerReply::SeatFailed(format!(
            "{}'s seat answered {MAX_BAD_ANSWERS} times with answers that do not fit: {why}",
            question.call.agent()
        ))
    }
}

/// A person's reply as the game reads it back from their answer.
fn taken(call: &CallSpec, reply: GmReply<PlayerDecision>) -> PlayerReply {
    match reply {
        GmReply::Answer(decision) => PlayerReply::Decided(decision),
        GmReply::Fail(message) => PlayerReply::SeatFailed(message),
        GmReply::Handed => PlayerReply::Handed,
        GmReply::End(why) => PlayerReply::Left(why),
        // A player's seat has no table commands: anything else is leaving the table.
        _ => PlayerReply::Left(format!("{}'s player left the table", call.agent())),
    }
}

/// What a model call came back with: every attempt's record, and the reply or the error.
type CallReply = (
    Vec<AttemptRecord>,
    Result<troupe_llm::GatewayReply, troupe_llm::GatewayError>,
);

/// The AI players of a step: each one's call built from its seat's view (the view a person at
/// that seat is shown), within the prompt budget; the step's calls seeded in the order asked
/// and run through the gateway together, each reporting its progress to the one observer.
pub struct AiPlayers<'a> {
    pub table: &'a Table,
    /// Where the calls take their seeds, and how many plans a vote chooses from.
    pub session: &'a Session,
    pub observer: &'a mut Observer,
}

#[async_trait]
impl PlayerSeats for AiPlayers<'_> {
    async fn decide_step(&mut self, questions: &[PlayerQuestion<'_>]) -> StepReplies {
        let mut before = Vec::new();
        let mut built = Vec::with_capacity(questions.len());
        for question in questions {
            let b = self.build(question);
            if let Ok((call, Some(t))) = &b {
                before.push(Event::ContextTrimmed {
                    agent: question.call.agent().to_string(),
                    purpose: call.purpose.as_str().to_string(),
                    prompt_tokens: t.prompt_tokens,
                    budget: t.budget,
                    turns_dropped: t.turns_dropped as u32,
                    memories_dropped: t.memories_dropped as u32,
                });
            }
            built.push(b.map(|(call, _)| call));
        }
        self.seed_calls(questions, &mut built);
        let made = self.run_calls(questions, &built).await;
        let replies = questions
            .iter()
            .zip(built)
            .zip(made)
            .map(|((question, b), r)| reply(question.call, b, r))
            .collect();
        StepReplies { before, replies }
    }
}

impl AiPlayers<'_> {
    /// Build the call from the seat's view, within the prompt budget: past 80% of the context,
    /// the oldest recent turns go first (they are in memory, which recall brings back as
    /// summaries), then the weakest memories. Returns the call and what was trimmed.
    fn build(&self, question: &PlayerQuestion<'_>) -> Result<(AgentCall, Option<Trimmed>), Error> {
        let p: &PromptSet = &self.table.prompts;
        let spec = question.call;
        let budget = self.table.prompt_budget();
        let built = match &question.view.layer {
            LayerView::Player(v) => {
                let (mut recent, mut memories) = (v.recent.clone(), v.memories.clone());
                fit(budget, &mut recent, &mut memories, |r, m| {
                    let view = troupe_agents::PlayerView {
                        recent: r.to_vec(),
                        memories: m.to_vec(),
                        ..v.clone()
                    };
                    match spec {
                        CallSpec::Questions { .. } => {
                            p.questions(&view, crate::machine::MAX_QUESTIONS)
                        }
                        CallSpec::Intent { .. } => p.intent(&view),
                        CallSpec::Discussion { round, .. } => p.discussion(&view, *round),
                        CallSpec::Vote { .. } => {
                            p.vote(&view, self.session.turn.consensus.len() as u32)
                        }
                        CallSpec::PartyDirective { .. } => p.party_directive(&view),
                        _ => p.insight_decision(&view),
                    }
                })
            }
            LayerView::Character(v) => {
                let (mut recent, mut memories) = (v.recent.clone(), v.memories.clone());
                fit(budget, &mut recent, &mut memories, |r, m| {
                    let view = troupe_agents::CharacterView {
                        recent: r.to_vec(),
                        memories: m.to_vec(),
                        ..v.clone()
                    };
                    match spec {
                        CallSpec::Action {
                            attempt, feedback, ..
                        } => p.action(&view, *attempt, feedback),
                        CallSpec::InsightQuestion { .. } => p.insight_question(&view),
                        _ => p.reaction(&view),
                    }
                })
            }
        };
        built.map_err(Error::game)
    }

    /// Give each call of a step its seed: its agent's next, in the order asked.
    fn seed_calls(&self, questions: &[PlayerQuestion<'_>], built: &mut [Result<AgentCall, Error>]) {
        let mut made: std::collections::BTreeMap<&str, u64> = Default::default();
        for (question, b) in questions.iter().zip(built.iter_mut()) {
            if let Ok(call) = b {
                let agent = question.call.agent();
                let k = made.entry(agent).or_default();
                call.request.seed = Some(self.session.call_seeds(agent).nth(agent, *k));
                *k += 1;
            }
        }
    }

    /// The step's calls run together through the gateway; each reports its progress to the
    /// one observer. A call that could not be built is not made (None).
    async fn run_calls(
        &mut self,
        questions: &[PlayerQuestion<'_>],
        built: &[Result<AgentCall, Error>],
    ) -> Vec<Option<CallReply>> {
        let gateway = &self.table.gateway;
        let observer = std::sync::Mutex::new(&mut *self.observer);
        let replies =
            futures_util::future::join_all(questions.iter().zip(built).map(|(question, b)| {
                let observer = &observer;
                async move {
                    let call = b.as_ref().ok()?;
                    let whose = For {
                        seat: question.call.agent(),
                        doing: call.purpose.doing(),
                    };
                    let mut watch = StepWatch(observer);
                    let made = attempts::make(gateway, &call.request, whose, &mut watch).await;
                    let records = made.attempts.into_iter().map(|a| a.record).collect();
                    Some((records, made.reply))
                }
            }))
            .await;
        self.observer.idle();
        replies
    }
}

/// One of a step's calls as the one observer watches them all: who thinks and each one's
/// progress, told as they come; that no model works is told once every call is back (by the
/// step, not by each call).
struct StepWatch<'a, 'o>(&'a std::sync::Mutex<&'o mut Observer>);

impl<'o> StepWatch<'_, 'o> {
    fn observer(&self) -> std::sync::MutexGuard<'_, &'o mut Observer> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl CallWatch for StepWatch<'_, '_> {
    fn thinking(&mut self, seat: &str, doing: &str) {
        self.observer().thinking(seat, doing);
    }
    fn progress(&mut self, seat: &str, progress: &Progress) {
        self.observer().progress(seat, progress);
    }
}

/// One AI's reply as the log keeps it: every attempt of its call, then its decision read from
/// the model's reply, or why there is none.
fn reply(
    spec: &CallSpec,
    built: Result<AgentCall, Error>,
    made: Option<CallReply>,
) -> (Vec<Event>, PlayerReply) {
    let (call, (records, result)) = match (built, made) {
        (Err(e), _) => return (Vec::new(), PlayerReply::Failed(crate::error_chain(&e))),
        (Ok(_), None) => return (Vec::new(), failed("the call was not made")),
        (Ok(call), Some(made)) => (call, made),
    };
    let attempts = records
        .into_iter()
        .map(|record| Event::ModelCall {
            agent: spec.agent().to_string(),
            layer: call.purpose.layer(),
            purpose: call.purpose.as_str().to_string(),
            record,
        })
        .collect();
    let decided = match result {
        Err(e) => failed(&e.to_string()),
        Ok(reply) => {
            let value = reply.json.unwrap_or(Value::String(reply.content));
            match PlayerDecision::from_reply(spec, &value) {
                Ok(decision) => PlayerReply::Decided(decision),
                Err(e) => failed(&e.to_string()),
            }
        }
    };
    (attempts, decided)
}

fn failed(why: &str) -> PlayerReply {
    PlayerReply::Failed(why.to_string())
}

/// What fitting a prompt into its budget took out.
#[derive(Clone, Debug, PartialEq)]
pub struct Trimmed {
    pub prompt_tokens: u32,
    pub budget: u32,
    pub turns_dropped: usize,
    pub memories_dropped: usize,
}

fn prompt_tokens(call: &AgentCall) -> u32 {
    call.request
        .messages
        .iter()
        .map(|m| troupe_llm::estimate_tokens(&m.content))
        .sum()
}

/// Render, and while over budget drop the oldest turn, then the last (weakest) memory.
fn fit<T: Clone, M: Clone>(
    budget: u32,
    recent: &mut Vec<T>,
    memories: &mut Vec<M>,
    render: impl Fn(&[T], &[M]) -> Result<AgentCall, troupe_agents::Error>,
) -> Result<(AgentCall, Option<Trimmed>), troupe_agents::Error> {
    let (mut turns_dropped, mut memories_dropped) = (0, 0);
    loop {
        let call = render(recent, memories)?;
        let tokens = prompt_tokens(&call);
        if tokens <= budget || (recent.is_empty() && memories.is_empty()) {
            let trimmed = (turns_dropped + memories_dropped > 0).then_some(Trimmed {
                prompt_tokens: tokens,
                budget,
                turns_dropped,
                memories_dropped,
            });
            return Ok((call, trimmed));
        }
        if !recent.is_empty() {
            recent.remove(0);
            turns_dropped += 1;
        } else {
            memories.pop();
            memories_dropped += 1;
        }
    }
}
