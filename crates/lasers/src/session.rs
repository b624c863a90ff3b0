//! The session state: a fold over the events of the log. Nothing changes it except `apply`.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use troupe_agents::consensus::Proposal;
use troupe_agents::{
    ActionDecl, Insight, InsightDecision, Intent, Outcome, QuestionAnswer, Stance, TurnRecap,
};
use troupe_campaign::{Campaign, Seat};
use troupe_rules::RollResult;
use troupe_validator::Verdict;

use crate::{
    Envelope, Event, FailureChoice, Phase, RollOverride, RollPurpose, Ruling, VerdictResult,
    WhisperScope,
};

/// A message of the out-of-character discussion (a player's or the GM's).
/// How many earlier turns a prompt recalls (and the session keeps for it).
pub const RECENT_TURNS: usize = 3;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OocEntry {
    pub round: u32,
    /// The agent id, or None for the GM.
    pub agent: Option<String>,
    pub message: String,
    pub stance: Option<Stance>,
    pub on: Option<String>,
    pub proposal: Option<String>,
    pub directive: Option<String>,
}

/// A consensus check: after a round, or the settled outcome.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConsensusRecord {
    pub round: u32,
    pub outcome: Outcome,
    pub plan: Option<String>,
    pub proposer: Option<String>,
    pub positions: BTreeMap<String, Stance>,
    pub dissent: Vec<String>,
}

/// Something the GM whispered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Whispered {
    pub to: Option<String>,
    pub scope: WhisperScope,
    pub text: String,
}

/// One character's action this turn, through validation, review and adjudication.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ActionTrack {
    pub attempts: Vec<ActionDecl>,
    pub verdicts: Vec<(Verdict, VerdictResult)>,
    /// The correction waiting for the GM, when validation gave up.
    pub awaiting_review: Option<String>,
    /// The accepted action text (as declared, corrected, or edited by the GM).
    pub final_text: Option<String>,
    pub ruling: Option<Ruling>,
    pub gm_note: Option<String>,
}

impl ActionTrack {
    /// The declared action with the accepted text, once there is one.
    pub fn final_action(&self) -> Option<ActionDecl> {
        let text = self.final_text.as_ref()?;
        let mut decl = self.attempts.last()?.clone();
        decl.action = text.clone();
        Some(decl)
    }
}

/// A LASER FEELINGS exchange.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct InsightTrack {
    pub question: Option<String>,
    pub answer: Option<String>,
    pub decision: Option<InsightDecision>,
}

/// What has happened so far in the current turn.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Turn {
    pub narration: Option<String>,
    pub memory_done: BTreeSet<String>,
    /// What each AI recalled this turn, both layers.
    pub recalled: BTreeMap<String, Vec<crate::memory::types::Recalled>>,
    pub clarification_round: u32,
    /// Questions per round, per agent, in seat order.
    pub questions: BTreeMap<u32, BTreeMap<String, Vec<String>>>,
    pub answered_rounds: BTreeSet<u32>,
    pub clarification_done: bool,
    pub clarifications: Vec<QuestionAnswer>,
    pub intents: BTreeMap<String, Intent>,
    pub directives: BTreeMap<String, String>,
    pub actions: BTreeMap<String, ActionTrack>,
    pub helper_rolls: BTreeMap<String, RollResult>,
    pub rolls: BTreeMap<String, RollResult>,
    pub roll_reviewed: BTreeSet<String>,
    pub forced: Option<bool>,
    pub insights: BTreeMap<String, InsightTrack>,
    /// Agents who already had their LASER FEELINGS insight this turn (once per turn).
    pub insight_used: BTreeSet<String>,
    pub outcome: Option<String>,
    pub reactions: BTreeMap<String, String>,
    /// The party's out-of-character talk this turn, in order.
    pub ooc: Vec<OocEntry>,
    /// One consensus check per discussion round; the last settles it unless conflicted.
    pub consensus: Vec<ConsensusRecord>,
    /// Rounds after which the GM was offered the floor.
    pub interjected: BTreeSet<u32>,
    pub discussion_started: Option<DateTime<Utc>>,
    /// The round the discussion ran out of time before.
    pub timed_out: Option<u32>,
    /// The round the discussion stopped before because the one ahead of it changed nothing.
    #[serde(default)]
    pub stalled: Option<u32>,
    /// Forced-vote ballots: agent → (plan's proposer, remark).
    pub votes: BTreeMap<String, (String, Option<String>)>,
    pub memory_stored: bool,
    /// Model-call failures per (phase, agent) since the GM last decided, with the last error.
    #[serde(with = "pairs")]
    pub failures: BTreeMap<(Phase, String), (u32, String)>,
    /// AI contributions the GM chose to skip.
    pub skipped: BTreeSet<(Phase, String)>,
    /// The in-game day the turn began on: its episodes are remembered as of that day, even
    /// when the GM lets time pass at its end.
    #[serde(default)]
    pub day: u32,
    /// The GM ended a scene during this turn: a memory storage trigger.
    #[serde(default)]
    pub scene_ended: bool,
}

/// The whole session, folded from its events.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub number: u32,
    pub seed: u64,
    pub model: String,
    pub campaign: Option<Campaign>,
    pub turn_number: u32,
    pub phase: Option<Phase>,
    pub in_turn: bool,
    pub turn: Turn,
    /// The recaps of the last [`RECENT_TURNS`] completed turns, oldest first
    /// (what the prompts show; older turns live in the log and the campaign memory).
    pub history: Vec<TurnRecap>,
    pub rolls_made: u64,
    pub ended: Option<String>,
    /// The last turn of this session whose episodes are in the campaign memory.
    pub memory_through: u32,
    /// What the GM whispered this session, in order.
    pub whispers: Vec<Whispered>,
    /// The story's in-game day now (see [`Session::day`]; 0 in snapshots written before days
    /// were tracked).
    #[serde(default)]
    pub day: u32,
    /// Model calls each agent (`gm` and `memory` too) has made this session: the ordinal of its
    /// next call's seed (see [`crate::call_seed`]).
    #[serde(default)]
    pub calls: BTreeMap<String, u64>,
}

impl Session {
    pub fn new(id: impl Into<String>, number: u32) -> Self {
        Session {
            id: id.into(),
            number,
            ..Default::default()
        }
    }

    /// The story's in-game day (day 1 is the campaign's first).
    pub fn day(&self) -> u32 {
        self.day.max(crate::events::FIRST_DAY)
    }

    /// The day the current (or last) turn began on.
    pub fn turn_day(&self) -> u32 {
        if self.turn.day == 0 {
            self.day()
        } else {
            self.turn.day
        }
    }

    /// The seats in campaign order.
    pub fn seats(&self) -> &[Seat] {
        self.campaign
            .as_ref()
            .map(|c| c.seats.as_slice())
            .unwrap_or(&[])
    }

    pub fn seat(&self, agent: &str) -> Option<&Seat> {
        self.seats().iter().find(|s| s.player.agent_id == agent)
    }

    pub fn agent_ids(&self) -> Vec<String> {
        self.seats()
            .iter()
            .map(|s| s.player.agent_id.clone())
            .collect()
    }

    /// The agent whose character has this character id.
    pub fn agent_of_character(&self, character_id: &str) -> Option<String> {
        self.seats()
            .iter()
            .find(|s| s.character.character_id == character_id)
            .map(|s| s.player.agent_id.clone())
    }

    /// Two or more AI players: they talk strategy and settle on a plan before acting.
    pub fn is_party(&self) -> bool {
        self.seats().len() >= 2
    }

    /// The plans on the table this turn: those made with the intents (in seat order), then
    /// those made in discussion; a proposer's newest replaces its older one.
    pub fn proposals(&self) -> Vec<Proposal> {
        let mut out: Vec<Proposal> = Vec::new();
        let mut put = |proposer: &str, plan: &str, round: u32| {
            out.retain(|p| p.proposer != proposer);
            out.push(Proposal {
                proposer: proposer.to_string(),
                plan: plan.to_string(),
                round,
            });
        };
        for a in self.agent_ids() {
            if let Some(p) = self
                .turn
                .intents
                .get(&a)
                .and_then(|i| i.proposal.as_deref())
            {
                put(&a, p, 0);
            }
        }
        for m in &self.turn.ooc {
            if let (Some(a), Some(p)) = (&m.agent, &m.proposal) {
                put(a, p, m.round);
            }
        }
        out
    }

    /// The consensus the discussion settled on, once it has.
    pub fn settled(&self) -> Option<&ConsensusRecord> {
        self.turn
            .consensus
            .last()
            .filter(|c| c.outcome != Outcome::Conflicted)
    }

    /// Whether a person who backs the settled plan (another player's) still has only the
    /// directive of their own plan: a person's discussion form writes no directive, so theirs is
    /// asked under the plan the party adopted instead of their rejected plan's being kept.
    pub fn directs_under_own_plan(&self, agent: &str, settled: &ConsensusRecord) -> bool {
        let person = self
            .seat(agent)
            .is_some_and(|x| x.taken_by == troupe_campaign::SeatTaker::Human);
        let directed_in_talk = self
            .turn
            .ooc
            .iter()
            .any(|m| m.agent.as_deref() == Some(agent) && m.directive.is_some());
        person && settled.proposer.as_deref() != Some(agent) && !directed_in_talk
    }

    /// The directive this agent's player gives as things stand: its latest in discussion,
    /// else the one from its strategic intent.
    pub fn latest_directive(&self, agent: &str) -> String {
        self.turn
            .ooc
            .iter()
            .rev()
            .filter(|m| m.agent.as_deref() == Some(agent))
            .find_map(|m| m.directive.clone())
            .or_else(|| self.turn.intents.get(agent).map(|i| i.directive.clone()))
            .unwrap_or_default()
    }

    pub fn skipped(&self, phase: Phase, agent: &str) -> bool {
        self.turn.skipped.contains(&(phase, agent.to_string()))
    }

    pub fn failures(&self, phase: Phase, agent: &str) -> (u32, String) {
        self.turn
            .failures
            .get(&(phase, agent.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    pub fn insight(&self, agent: &str) -> Option<Insight> {
        let t = self.turn.insights.get(agent)?;
        Some(Insight {
            question: t.question.clone()?,
            answer: t.answer.clone()?,
        })
    }

    /// Fold one event into the state. The match names every kind of event, so a new kind
    /// cannot be left out of the fold unnoticed; each family's changes are folded by its own
    /// function below.
    pub fn apply(&mut self, env: &Envelope) {
        match &env.event {
            Event::SessionStarted { .. }
            | Event::SessionEnded { .. }
            | Event::SessionResumed { .. }
            | Event::TurnStarted
            | Event::TurnCompleted
            | Event::PhaseStarted
            | Event::PhaseFailed { .. }
            | Event::GmFailureDecision { .. }
            | Event::SeatHanded { .. }
            | Event::TimePassed { .. }
            | Event::ModelCall { .. } => self.apply_table(env),
            Event::GmNarration { .. }
            | Event::MemoryRetrieved { .. }
            | Event::ClarifyingQuestions { .. }
            | Event::GmAnswers { .. }
            | Event::ClarificationEnded { .. }
            | Event::StrategicIntent { .. }
            | Event::Directive { .. }
            | Event::GmOutcome { .. }
            | Event::SceneEnded { .. }
            | Event::CharacterReaction { .. }
            | Event::Whisper { .. }
            | Event::MemoryStorage { .. } => self.apply_story(env),
            Event::CharacterAction { .. }
            | Event::Validation { .. }
            | Event::GmReviewedAction { .. }
            | Event::GmAdjudication { .. } => self.turn.apply_action(&env.event),
            Event::GmForcedResult { .. }
            | Event::DiceRolled { .. }
            | Event::GmRoll { .. }
            | Event::GmRollOverride { .. }
            | Event::LaserFeelingsQuestion { .. }
            | Event::LaserFeelingsAnswer { .. }
            | Event::InsightDecision { .. } => self.apply_dice(&env.event),
            Event::OocMessage { .. }
            | Event::GmOoc { .. }
            | Event::Consensus { .. }
            | Event::DiscussionTimedOut { .. }
            | Event::DiscussionStalled { .. }
            | Event::VoteCast { .. } => self.turn.apply_party(&env.event),
            // The undone events themselves are left out of the fold when the log is loaded.
            Event::EventsUndone { .. } => {}
            Event::PhaseCompleted | Event::ContextTrimmed { .. } | Event::GmFlagged { .. } => {}
        }
    }

    /// The session and its turns: start, end and resume, turn and phase boundaries, failures
    /// and the GM's decision on them, seats handed over, days passing, model calls counted.
    fn apply_table(&mut self, env: &Envelope) {
        let t = &mut self.turn;
        match &env.event {
            Event::SessionStarted {
                campaign,
                seed,
                model,
                day,
                ..
            } => {
                self.campaign = Some((**campaign).clone());
                self.seed = *seed;
                self.model = model.clone();
                self.day = *day;
            }
            Event::SessionEnded { reason } => self.ended = Some(reason.clone()),
            Event::SessionResumed { .. } => self.ended = None,
            Event::TurnStarted => {
                self.turn_number = env.turn_number;
                self.in_turn = true;
                self.turn = Turn {
                    clarification_round: 1,
                    day: self.day(),
                    ..Default::default()
                };
            }
            Event::TurnCompleted => {
                let recap = self.recap();
                self.history.push(recap);
                // Only the recent window is ever read; keeping more would grow every fold,
                // snapshot and clone with the length of the session.
                let excess = self.history.len().saturating_sub(RECENT_TURNS);
                self.history.drain(..excess);
                self.in_turn = false;
                self.phase = None;
            }
            Event::PhaseStarted => {
                self.phase = env.phase;
                if env.phase == Some(Phase::Discussion) {
                    t.discussion_started = Some(env.timestamp);
                }
            }
            Event::PhaseFailed { agent, error, .. } => {
                if let Some(phase) = env.phase {
                    let entry = t.failures.entry((phase, agent.clone())).or_default();
                    entry.0 += 1;
                    entry.1 = error.clone();
                }
            }
            Event::GmFailureDecision { agent, choice } => {
                if let Some(phase) = env.phase {
                    t.failures.remove(&(phase, agent.clone()));
                    if *choice == FailureChoice::Skip {
                        t.skipped.insert((phase, agent.clone()));
                    }
                }
            }
            Event::SeatHanded { agent, person } => {
                let seat = self
                    .campaign
                    .as_mut()
                    .and_then(|c| c.seats.iter_mut().find(|x| &x.player.agent_id == agent));
                if let Some(seat) = seat {
                    seat.taken_by = if *person {
                        troupe_campaign::SeatTaker::Human
                    } else {
                        troupe_campaign::SeatTaker::Ai
                    };
                }
            }
            Event::TimePassed { days } => self.day = self.day().saturating_add(*days),
            // A call's first attempt; its retries and repair are the same call.
            Event::ModelCall { agent, record, .. } if record.attempt <= 1 => {
                *self.calls.entry(agent.clone()).or_default() += 1;
            }
            _ => {}
        }
    }

    /// What the table said this turn: narration, memory, questions and answers, plans and
    /// directives, the outcome and reactions, whispers, the scene's end.
    fn apply_story(&mut self, env: &Envelope) {
        let t = &mut self.turn;
        match &env.event {
            Event::GmNarration { text } => t.narration = Some(text.clone()),
            Event::MemoryRetrieved {
                agent, recalled, ..
            } => {
                t.memory_done.insert(agent.clone());
                t.recalled.insert(agent.clone(), recalled.clone());
            }
            Event::ClarifyingQuestions {
                agent,
                round,
                questions,
            } => {
                t.questions
                    .entry(*round)
                    .or_default()
                    .insert(agent.clone(), questions.clone());
            }
            Event::GmAnswers {
                round,
                answers,
                finished,
            } => {
                t.answered_rounds.insert(*round);
                if let Some(qs) = t.questions.get(round) {
                    let asked = qs
                        .iter()
                        .flat_map(|(agent, qs)| qs.iter().map(move |q| (agent, q)));
                    for ((agent, question), answer) in asked.zip(answers) {
                        t.clarifications.push(QuestionAnswer {
                            asked_by: agent.clone(),
                            question: question.clone(),
                            answer: answer.clone(),
                        });
                    }
                }
                if *finished {
                    t.clarification_done = true;
                } else {
                    t.clarification_round = round + 1;
                }
            }
            Event::ClarificationEnded { .. } => t.clarification_done = true,
            Event::StrategicIntent { agent, intent } => {
                t.intents.insert(agent.clone(), intent.clone());
            }
            Event::Directive { agent, text, .. } => {
                t.directives.insert(agent.clone(), text.clone());
            }
            Event::GmOutcome { text } => t.outcome = Some(text.clone()),
            Event::SceneEnded { .. } => t.scene_ended = true,
            Event::CharacterReaction { agent, text } => {
                t.reactions.insert(agent.clone(), text.clone());
            }
            Event::Whisper { to, scope, text } => self.whispers.push(Whispered {
                to: to.clone(),
                scope: *scope,
                text: text.clone(),
            }),
            Event::MemoryStorage { turns, .. } => {
                if env.phase == Some(Phase::MemoryStorage) {
                    t.memory_stored = true;
                }
                if let Some(last) = turns.iter().max() {
                    self.memory_through = self.memory_through.max(*last);
                }
            }
            _ => {}
        }
    }

    /// Rolls and what follows them: forced results, the dice (counted for the session's
    /// seeds), the GM's overrides, LASER FEELINGS insights.
    fn apply_dice(&mut self, event: &Event) {
        let t = &mut self.turn;
        match event {
            Event::GmForcedResult { success } => t.forced = Some(*success),
            Event::DiceRolled {
                agent,
                purpose,
                result,
                ..
            } => {
                self.rolls_made += 1;
                match purpose {
                    RollPurpose::Helper => t.helper_rolls.insert(agent.clone(), result.clone()),
                    RollPurpose::Action => t.rolls.insert(agent.clone(), result.clone()),
                };
            }
            Event::GmRoll { .. } => self.rolls_made += 1,
            Event::GmRollOverride {
                agent,
                change,
                result,
            } => {
                t.roll_reviewed.insert(agent.clone());
                if *change != RollOverride::Keep {
                    t.rolls.insert(agent.clone(), result.clone());
                }
                t.forced = None;
            }
            Event::LaserFeelingsQuestion { agent, question } => {
                t.insights.entry(agent.clone()).or_default().question = Some(question.clone());
            }
            Event::LaserFeelingsAnswer { agent, answer } => {
                t.insights.entry(agent.clone()).or_default().answer = Some(answer.clone());
            }
            Event::InsightDecision { agent, decision } => {
                t.insights.entry(agent.clone()).or_default().decision = Some(decision.clone());
                t.insight_used.insert(agent.clone());
                if decision.change_action {
                    // Per the rules: change the action and roll again.
                    t.actions.insert(agent.clone(), ActionTrack::default());
                    t.rolls.remove(agent);
                    t.roll_reviewed.remove(agent);
                    t.helper_rolls.clear();
                }
            }
            _ => {}
        }
    }

    /// Where `agent`'s next calls take their seeds.
    #[cfg(feature = "table")]
    pub fn call_seeds(&self, agent: &str) -> crate::CallSeeds {
        crate::CallSeeds {
            seed: self.seed,
            logged: self.calls.get(agent).copied().unwrap_or(0),
        }
    }

    /// The current turn as the table saw it in character.
    fn recap(&self) -> TurnRecap {
        let actions: Vec<String> = self
            .seats()
            .iter()
            .filter_map(|s| {
                let text = self
                    .turn
                    .actions
                    .get(&s.player.agent_id)?
                    .final_text
                    .clone()?;
                Some(if self.seats().len() > 1 {
                    format!("{}: {}", s.character.name, text)
                } else {
                    text
                })
            })
            .collect();
        TurnRecap {
            turn: self.turn_number,
            narration: self.turn.narration.clone().unwrap_or_default(),
            action: (!actions.is_empty()).then(|| actions.join(" ")),
            outcome: self.turn.outcome.clone(),
        }
    }
}

impl Turn {
    /// A character's attempts and what the check and the GM made of them.
    fn apply_action(&mut self, event: &Event) {
        let t = self;
        match event {
            Event::CharacterAction { agent, action, .. } => {
                t.actions
                    .entry(agent.clone())
                    .or_default()
                    .attempts
                    .push(action.clone());
            }
            Event::Validation {
                agent,
                verdict,
                result,
                corrected,
                ..
            } => {
                let track = t.actions.entry(agent.clone()).or_default();
                track.verdicts.push((verdict.clone(), *result));
                match result {
                    VerdictResult::Passed => {
                        track.final_text = track.attempts.last().map(|a| a.action.clone());
                    }
                    VerdictResult::AutoCorrected => track.final_text = corrected.clone(),
                    VerdictResult::FlaggedForGm => track.awaiting_review = corrected.clone(),
                    VerdictResult::Retry => {}
                }
            }
            Event::GmReviewedAction { agent, action } => {
                let track = t.actions.entry(agent.clone()).or_default();
                track.awaiting_review = None;
                track.final_text = Some(action.clone());
            }
            Event::GmAdjudication { agent, ruling } => {
                let track = t.actions.entry(agent.clone()).or_default();
                if let Ruling::Revise { note } = ruling {
                    // The character declares again, from scratch, with the GM's note.
                    *track = ActionTrack {
                        gm_note: Some(note.clone()),
                        ..Default::default()
                    };
                } else {
                    track.ruling = Some(ruling.clone());
                }
            }
            _ => {}
        }
    }

    /// The party's discussion: messages, the GM's word, consensus, votes, and why it stopped.
    fn apply_party(&mut self, event: &Event) {
        let t = self;
        match event {
            Event::OocMessage {
                agent,
                round,
                message,
                stance,
                on,
                proposal,
                directive,
            } => t.ooc.push(OocEntry {
                round: *round,
                agent: Some(agent.clone()),
                message: message.clone(),
                stance: Some(*stance),
                on: on.clone(),
                proposal: proposal.clone(),
                directive: directive.clone(),
            }),
            Event::GmOoc { round, text } => {
                t.interjected.insert(*round);
                if !text.trim().is_empty() {
                    t.ooc.push(OocEntry {
                        round: *round,
                        agent: None,
                        message: text.clone(),
                        stance: None,
                        on: None,
                        proposal: None,
                        directive: None,
                    });
                }
            }
            Event::Consensus {
                round,
                outcome,
                plan,
                proposer,
                positions,
                dissent,
            } => t.consensus.push(ConsensusRecord {
                round: *round,
                outcome: *outcome,
                plan: plan.clone(),
                proposer: proposer.clone(),
                positions: positions.clone(),
                dissent: dissent.clone(),
            }),
            Event::DiscussionTimedOut { round, .. } => t.timed_out = Some(*round),
            Event::DiscussionStalled { round } => t.stalled = Some(*round),
            Event::VoteCast {
                agent,
                vote,
                remark,
            } => {
                t.votes
                    .insert(agent.clone(), (vote.clone(), remark.clone()));
            }
            _ => {}
        }
    }
}

/// A map with tuple keys, written as a list of `[key, value]` pairs (JSON object keys must be
/// strings).
mod pairs {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        map: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter())
    }

    pub fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}
