//! The turn machine: a pure function from the session to what the turn needs next.
//!
//! The driver performs the step (asks a seat, calls a model, or just records a fact), appends the
//! resulting events, folds them in, and asks again. Validation and dice are pure here: the verdict
//! comes from the text, the dice from the session seed and the roll's index, so a step computed
//! twice gives the same event.

use troupe_agents::ActionDecl;
use troupe_rules::{RollResult, action_pool, helper_succeeded, resolve, roll_dice, roll_seed};
use troupe_validator::{Verdict, auto_correct, check, feedback};

use crate::{Event, Phase, RollOverride, RollPurpose, Ruling, Session, VerdictResult};

/// Clarification rounds per turn (seeds: up to 3).
pub const MAX_CLARIFICATION_ROUNDS: u32 = 3;
/// Questions per agent per round.
pub const MAX_QUESTIONS: u32 = 2;
/// Character action attempts before the validator auto-corrects.
pub const MAX_ACTION_ATTEMPTS: u32 = 3;
/// A person gets the validator's feedback once and may rephrase it or send it again as it is;
/// then it goes to the GM, who rules on it (a person's words are never rewritten by the
/// validator alone).
pub const PERSON_ACTION_ATTEMPTS: u32 = 2;
/// Failed model calls in a phase before the GM is asked what to do (one automatic retry).
pub const FAILURES_BEFORE_GM: u32 = 2;

/// A GM decision the turn is waiting for.
#[derive(Clone, Debug)]
pub enum GmAsk {
    Narration,
    Answers {
        round: u32,
        /// (agent, question) in asking order.
        questions: Vec<(String, String)>,
    },
    Review {
        agent: String,
        original: String,
        corrected: String,
        verdict: Verdict,
    },
    Adjudicate {
        agent: String,
        action: ActionDecl,
    },
    Override {
        agent: String,
        roll: RollResult,
    },
    Insight {
        agent: String,
        question: String,
    },
    Outcome,
    /// Between discussion rounds: the GM may speak into the OOC talk.
    Interject {
        round: u32,
    },
    Failure {
        phase: Phase,
        agent: String,
        error: String,
    },
}

impl GmAsk {
    /// What the GM does for this decision, in words a page shows after its name ("The GM is
    /// narrating…").
    pub fn doing(&self) -> &'static str {
        match self {
            GmAsk::Narration => "narrating",
            GmAsk::Answers { .. } => "answering the players' questions",
            GmAsk::Review { .. } => "reviewing an action",
            GmAsk::Adjudicate { .. } => "ruling on an action",
            GmAsk::Override { .. } => "looking at the roll",
            GmAsk::Insight { .. } => "answering a LASER FEELINGS question",
            GmAsk::Outcome => "narrating the outcome",
            GmAsk::Interject { .. } => "listening to the party's talk",
            GmAsk::Failure { .. } => "deciding what to do about a failed call",
        }
    }
}

/// A model call an agent must make.
#[derive(Clone, Debug, PartialEq)]
pub enum CallSpec {
    Questions {
        agent: String,
        round: u32,
    },
    Intent {
        agent: String,
    },
    Action {
        agent: String,
        attempt: u32,
        feedback: String,
    },
    InsightQuestion {
        agent: String,
    },
    InsightDecision {
        agent: String,
    },
    Reaction {
        agent: String,
    },
    Discussion {
        agent: String,
        round: u32,
    },
    Vote {
        agent: String,
    },
    PartyDirective {
        agent: String,
    },
}

impl CallSpec {
    pub fn agent(&self) -> &str {
        match self {
            CallSpec::Questions { agent, .. }
            | CallSpec::Intent { agent }
            | CallSpec::Action { agent, .. }
            | CallSpec::InsightQuestion { agent }
            | CallSpec::InsightDecision { agent }
            | CallSpec::Reaction { agent }
            | CallSpec::Discussion { agent, .. }
            | CallSpec::Vote { agent }
            | CallSpec::PartyDirective { agent } => agent,
        }
    }
}

/// What the turn needs now.
#[derive(Clone, Debug)]
pub enum Step {
    /// Start the next turn at GM narration.
    Begin,
    /// Complete the current phase and start this one.
    Advance(Phase),
    /// Complete the last phase and the turn.
    FinishTurn,
    /// Record a fact that needs no one's input.
    Emit(Event),
    /// Ask the campaign memory what this agent recalls (both layers).
    Recall {
        agent: String,
        query: String,
    },
    /// Store the turns not yet in memory, for this reason; `None` holds them for a later
    /// trigger.
    Remember {
        trigger: Option<String>,
    },
    Ask(GmAsk),
    Call(CallSpec),
    /// Independent calls (one per agent) to run at once; their events are recorded in this
    /// order, whatever order the replies come in.
    Calls(Vec<CallSpec>),
    /// The session is over.
    Done,
}

/// The next step of the session: the phase the turn is in decides, each phase in its own
/// function below (in the order a turn runs through them).
pub fn next(s: &Session) -> Step {
    if s.ended.is_some() || s.campaign.is_none() {
        return Step::Done;
    }
    let Some(phase) = s.phase.filter(|_| s.in_turn) else {
        return Step::Begin;
    };
    let t = &s.turn;
    let agents = s.agent_ids();
    match phase {
        Phase::GmNarration => match t.narration {
            None => Step::Ask(GmAsk::Narration),
            Some(_) => Step::Advance(Phase::MemoryRetrieval),
        },
        Phase::MemoryRetrieval => memory_retrieval(s, &agents),
        Phase::Clarification => clarification(s, &agents),
        Phase::StrategicIntent => strategic_intent(s, &agents),
        Phase::Discussion => discussion(s, &agents),
        Phase::Directive => directive(s, &agents),
        Phase::CharacterAction => character_action(s, &agents),
        Phase::Validation => validation(s),
        Phase::GmAdjudication => adjudication(s),
        Phase::HelperRolls => helper_rolls(s),
        Phase::DiceResolution => dice_resolution(s),
        Phase::LaserFeelings => laser_feelings(s),
        Phase::GmOutcome => match t.outcome {
            None => Step::Ask(GmAsk::Outcome),
            Some(_) => Step::Advance(Phase::CharacterReaction),
        },
        Phase::CharacterReaction => {
            let pending = agents
                .iter()
                .filter(|a| !t.reactions.contains_key(*a) && !s.skipped(phase, a))
                .map(|a| CallSpec::Reaction { agent: a.clone() });
            calls(s, phase, pending).unwrap_or(Step::Advance(Phase::MemoryStorage))
        }
        Phase::MemoryStorage => {
            if t.memory_stored {
                Step::FinishTurn
            } else {
                Step::Remember {
                    trigger: crate::memory::storage_trigger(s),
                }
            }
        }
    }
}

/// Each player recalls from memory, one at a time, with the narration as the query.
fn memory_retrieval(s: &Session, agents: &[String]) -> Step {
    for a in agents {
        if !s.turn.memory_done.contains(a) {
            return Step::Recall {
                agent: a.clone(),
                query: s.turn.narration.clone().unwrap_or_default(),
            };
        }
    }
    Step::Advance(Phase::Clarification)
}

/// Every player's private strategy at once; then the party discusses (or, alone, directs).
fn strategic_intent(s: &Session, agents: &[String]) -> Step {
    let phase = Phase::StrategicIntent;
    let pending = agents
        .iter()
        .filter(|a| !s.turn.intents.contains_key(*a) && !s.skipped(phase, a))
        .map(|a| CallSpec::Intent { agent: a.clone() });
    if let Some(step) = calls(s, phase, pending) {
        return step;
    }
    if s.is_party() {
        Step::Advance(Phase::Discussion)
    } else {
        Step::Advance(Phase::Directive)
    }
}

/// Each player's directive to its character, recorded one at a time.
fn directive(s: &Session, agents: &[String]) -> Step {
    let t = &s.turn;
    // Players who did not back the plan the party settled on direct their characters
    // under it (all at once); the others keep the directive they gave in discussion.
    if let Some(settled) = s.settled().filter(|c| c.proposer.is_some()) {
        let pending = agents
            .iter()
            .filter(|a| {
                !t.directives.contains_key(*a)
                    && (settled.positions.get(*a) != Some(&troupe_agents::Stance::Agree)
                        || s.directs_under_own_plan(a, settled))
                    && !s.skipped(Phase::Directive, a)
            })
            .map(|a| CallSpec::PartyDirective { agent: a.clone() });
        if let Some(step) = calls(s, Phase::Directive, pending) {
            return step;
        }
    }
    for a in agents {
        if !t.directives.contains_key(a) {
            let character = s
                .seat(a)
                .map(|seat| seat.character.character_id.clone())
                .unwrap_or_default();
            let text = s.latest_directive(a);
            return Step::Emit(Event::Directive {
                agent: a.clone(),
                character,
                text,
            });
        }
    }
    Step::Advance(Phase::CharacterAction)
}

/// Every character whose last attempt has its verdict (and is not final) declares again, all
/// at once, with the feedback of that verdict.
fn character_action(s: &Session, agents: &[String]) -> Step {
    let phase = Phase::CharacterAction;
    let pending = agents
        .iter()
        .filter(|a| !s.skipped(phase, a))
        .filter_map(|a| {
            let track = s.turn.actions.get(a).cloned().unwrap_or_default();
            let waiting = track.final_text.is_none()
                && track.awaiting_review.is_none()
                && track.attempts.len() == track.verdicts.len();
            waiting.then(|| CallSpec::Action {
                agent: a.clone(),
                attempt: track.attempts.len() as u32 + 1,
                feedback: track
                    .verdicts
                    .last()
                    .map(|(v, _)| feedback(v))
                    .unwrap_or_default(),
            })
        });
    if let Some(step) = calls(s, phase, pending) {
        return step;
    }
    Step::Advance(Phase::Validation)
}

/// The overreach check on each acting character's latest attempt, or the GM's review of a
/// correction; an attempt sent back goes round to declaring again.
fn validation(s: &Session) -> Step {
    for a in acting(s) {
        let track = s.turn.actions.get(&a).cloned().unwrap_or_default();
        if track.final_text.is_some() {
            continue;
        }
        if let Some(corrected) = &track.awaiting_review {
            let original = track
                .attempts
                .last()
                .map(|x| x.action.clone())
                .unwrap_or_default();
            let verdict = track
                .verdicts
                .last()
                .map(|(v, _)| v.clone())
                .unwrap_or_else(|| check(""));
            return Step::Ask(GmAsk::Review {
                agent: a,
                original,
                corrected: corrected.clone(),
                verdict,
            });
        }
        if track.attempts.len() > track.verdicts.len() {
            let person = s
                .seat(&a)
                .is_some_and(|x| x.taken_by == troupe_campaign::SeatTaker::Human);
            let max = if person {
                PERSON_ACTION_ATTEMPTS
            } else {
                MAX_ACTION_ATTEMPTS
            };
            return Step::Emit(validate(&a, &track.attempts, max, person));
        }
        // The last attempt was sent back: the character tries again.
        return Step::Advance(Phase::CharacterAction);
    }
    Step::Advance(Phase::GmAdjudication)
}

/// The GM rules on each acting character's final action, one at a time.
fn adjudication(s: &Session) -> Step {
    for a in acting(s) {
        let track = s.turn.actions.get(&a).cloned().unwrap_or_default();
        let Some(action) = track.final_action() else {
            // The GM asked for a revision.
            return Step::Advance(Phase::CharacterAction);
        };
        if track.ruling.is_none() {
            return Step::Ask(GmAsk::Adjudicate { agent: a, action });
        }
    }
    Step::Advance(Phase::HelperRolls)
}

/// Each helper rolls one die for the task of the character it helps (when that is a roll).
fn helper_rolls(s: &Session) -> Step {
    for (helper, target) in helpers(s) {
        if s.turn.helper_rolls.contains_key(&helper) {
            continue;
        }
        let task = match ruling(s, &target) {
            Some(Ruling::Roll { task, .. }) => task,
            _ => continue,
        };
        let Some(number) = s.seat(&helper).map(|x| x.character.number) else {
            continue;
        };
        let (roll_index, seed, faces) = dice(s, 1);
        return Step::Emit(Event::DiceRolled {
            agent: helper,
            purpose: RollPurpose::Helper,
            helping: Some(target),
            roll_index,
            seed,
            pool: 1,
            result: resolve(number, task, &faces),
        });
    }
    Step::Advance(Phase::DiceResolution)
}

/// Characters who rolled LASER FEELINGS ask the GM a question and decide whether to change
/// their action.
fn laser_feelings(s: &Session) -> Step {
    let (t, phase) = (&s.turn, Phase::LaserFeelings);
    let waiting: Vec<String> = acting(s)
        .into_iter()
        .filter(|a| {
            t.rolls.get(a).is_some_and(|r| r.laser_feelings()) && !t.insight_used.contains(a)
        })
        .collect();
    if let Some(a) = waiting.iter().find(|a| s.skipped(phase, a)) {
        return Step::Emit(Event::InsightDecision {
            agent: a.clone(),
            decision: troupe_agents::InsightDecision {
                change_action: false,
                reason: "the GM skipped the insight".into(),
            },
        });
    }
    // Every question at once, then the GM's answers, then every decision at once.
    let ins = |a: &String| t.insights.get(a).cloned().unwrap_or_default();
    let questions = waiting
        .iter()
        .filter(|a| ins(a).question.is_none())
        .map(|a| CallSpec::InsightQuestion { agent: a.clone() });
    if let Some(step) = calls(s, phase, questions) {
        return step;
    }
    for a in &waiting {
        if let (Some(question), None) = (ins(a).question, ins(a).answer) {
            return Step::Ask(GmAsk::Insight {
                agent: a.clone(),
                question,
            });
        }
    }
    let decisions = waiting
        .iter()
        .map(|a| CallSpec::InsightDecision { agent: a.clone() });
    if let Some(step) = calls(s, phase, decisions) {
        return step;
    }
    // An action changed after an insight goes back through declaration and the GM.
    if acting(s)
        .iter()
        .any(|a| t.actions.get(a).is_none_or(|x| x.final_text.is_none()))
    {
        return Step::Advance(Phase::CharacterAction);
    }
    Step::Advance(Phase::GmOutcome)
}

/// A model call, unless it already failed twice: then the GM decides.
fn call(s: &Session, phase: Phase, spec: CallSpec) -> Step {
    let (failures, error) = s.failures(phase, spec.agent());
    if failures >= FAILURES_BEFORE_GM {
        return Step::Ask(GmAsk::Failure {
            phase,
            agent: spec.agent().to_string(),
            error,
        });
    }
    Step::Call(spec)
}

/// Calls for every pending agent at once, or the GM's decision for one whose calls failed
/// twice; None when nobody is pending.
fn calls(s: &Session, phase: Phase, pending: impl Iterator<Item = CallSpec>) -> Option<Step> {
    let mut specs = Vec::new();
    for spec in pending {
        match call(s, phase, spec) {
            Step::Call(spec) => specs.push(spec),
            ask => return Some(ask),
        }
    }
    match specs.len() {
        0 => None,
        1 => specs.pop().map(Step::Call),
        _ => Some(Step::Calls(specs)),
    }
}

/// The party's out-of-character discussion: rounds of talk (everyone at once), a consensus
/// check after each, the GM offered the floor between rounds, and a forced vote when the
/// rounds or the time run out.
fn discussion(s: &Session, agents: &[String]) -> Step {
    use troupe_agents::consensus::{MAX_DISCUSSION_ROUNDS, Said, count_votes, tally};
    use troupe_agents::{Outcome, Stance};
    let t = &s.turn;
    let phase = Phase::Discussion;
    if s.settled().is_some() {
        return Step::Advance(Phase::Directive);
    }
    let held = t.consensus.len() as u32;
    let proposals = s.proposals();
    // Every seat's model failed for good: more rounds would only ask the GM to interject into
    // silence, so the discussion ends with no plan.
    let nobody_left = agents.iter().all(|a| s.skipped(phase, a));
    let ended = t.timed_out.is_some() || t.stalled.is_some();
    if ended || held >= MAX_DISCUSSION_ROUNDS || nobody_left {
        if proposals.is_empty() {
            // Nobody put a plan forward: each player keeps its own directive.
            return no_plan(held);
        }
        let pending = agents
            .iter()
            .filter(|a| !t.votes.contains_key(*a) && !s.skipped(phase, a))
            .map(|a| CallSpec::Vote { agent: a.clone() });
        if let Some(step) = calls(s, phase, pending) {
            return step;
        }
        let votes: Vec<(String, String)> = agents
            .iter()
            .filter_map(|a| t.votes.get(a).map(|(v, _)| (a.clone(), v.clone())))
            .collect();
        let last = t.consensus.last().and_then(|c| c.proposer.as_deref());
        let Some(result) = count_votes(&proposals, &votes, last) else {
            return no_plan(held);
        };
        let positions = agents
            .iter()
            .map(|a| {
                let stance = match t.votes.get(a) {
                    None => Stance::Silent,
                    Some((v, _)) if *v == result.winner.proposer => Stance::Agree,
                    Some(_) => Stance::Disagree,
                };
                (a.clone(), stance)
            })
            .collect();
        return Step::Emit(Event::Consensus {
            round: held,
            outcome: Outcome::Vote,
            plan: Some(result.winner.plan),
            proposer: Some(result.winner.proposer),
            positions,
            dissent: result.minority,
        });
    }
    let round = held + 1;
    if round > 1 && !t.interjected.contains(&held) {
        return Step::Ask(GmAsk::Interject { round: held });
    }
    let spoke = |a: &str| {
        t.ooc
            .iter()
            .any(|m| m.round == round && m.agent.as_deref() == Some(a))
    };
    let pending = agents
        .iter()
        .filter(|a| !spoke(a) && !s.skipped(phase, a))
        .map(|a| CallSpec::Discussion {
            agent: a.clone(),
            round,
        });
    if let Some(step) = calls(s, phase, pending) {
        return step;
    }
    let said: Vec<Said> = t
        .ooc
        .iter()
        .filter(|m| m.round == round)
        .filter_map(|m| {
            Some(Said {
                agent: m.agent.clone()?,
                stance: m.stance?,
                on: m.on.clone(),
                proposed: m.proposal.is_some(),
            })
        })
        .collect();
    let tallied = tally(agents, &proposals, &said);
    Step::Emit(Event::Consensus {
        round,
        outcome: tallied.outcome,
        plan: tallied.leading.as_ref().map(|p| p.plan.clone()),
        proposer: tallied.leading.map(|p| p.proposer),
        positions: tallied.positions,
        dissent: tallied.dissent,
    })
}

/// The discussion ends with no plan adopted: each player keeps its own directive.
fn no_plan(round: u32) -> Step {
    Step::Emit(Event::Consensus {
        round,
        outcome: troupe_agents::Outcome::Vote,
        plan: None,
        proposer: None,
        positions: Default::default(),
        dissent: Vec::new(),
    })
}

fn clarification(s: &Session, agents: &[String]) -> Step {
    let t = &s.turn;
    let phase = Phase::Clarification;
    if t.clarification_done {
        return Step::Advance(Phase::StrategicIntent);
    }
    let round = t.clarification_round.max(1);
    if round > MAX_CLARIFICATION_ROUNDS {
        return Step::Emit(Event::ClarificationEnded {
            reason: format!("{MAX_CLARIFICATION_ROUNDS} rounds of questions asked"),
        });
    }
    let asked = t.questions.get(&round);
    let pending = agents
        .iter()
        .filter(|a| asked.is_none_or(|q| !q.contains_key(*a)) && !s.skipped(phase, a))
        .map(|a| CallSpec::Questions {
            agent: a.clone(),
            round,
        });
    if let Some(step) = calls(s, phase, pending) {
        return step;
    }
    let questions: Vec<(String, String)> = asked
        .map(|q| {
            q.iter()
                .flat_map(|(a, qs)| qs.iter().map(move |x| (a.clone(), x.clone())))
                .collect()
        })
        .unwrap_or_default();
    if questions.is_empty() {
        let reason = if round == 1 {
            "no questions"
        } else {
            "no more questions"
        };
        return Step::Emit(Event::ClarificationEnded {
            reason: reason.to_string(),
        });
    }
    Step::Ask(GmAsk::Answers { round, questions })
}

/// Agents whose characters act this turn (not skipped by the GM).
fn acting(s: &Session) -> Vec<String> {
    s.agent_ids()
        .into_iter()
        .filter(|a| !s.skipped(Phase::CharacterAction, a))
        .collect()
}

fn ruling(s: &Session, agent: &str) -> Option<Ruling> {
    s.turn.actions.get(agent)?.ruling.clone()
}

/// (helper agent, helped agent) for every accepted action that helps another character.
fn helpers(s: &Session) -> Vec<(String, String)> {
    acting(s)
        .into_iter()
        .filter_map(|a| {
            let target_char = s.turn.actions.get(&a)?.final_action()?.helping?;
            let target = s.agent_of_character(&target_char)?;
            (target != a && matches!(ruling(s, &a), Some(Ruling::Roll { .. })))
                .then_some((a, target))
        })
        .collect()
}

fn is_helper(s: &Session, agent: &str) -> bool {
    helpers(s).iter().any(|(h, _)| h == agent)
}

/// The next roll's index, seed and faces: pure in the session seed and the rolls made so far.
fn dice(s: &Session, count: u32) -> (u64, u64, Vec<u8>) {
    let index = s.rolls_made;
    let seed = roll_seed(s.seed, index);
    let faces = roll_dice(seed, count, 6)
        .into_iter()
        .map(|f| u8::try_from(f).unwrap_or(6))
        .collect();
    (index, seed, faces)
}

fn dice_resolution(s: &Session) -> Step {
    let t = &s.turn;
    for a in acting(s) {
        if is_helper(s, &a) {
            continue;
        }
        let Some(Ruling::Roll {
            task,
            prepared,
            expert,
        }) = ruling(s, &a)
        else {
            continue;
        };
        let Some(number) = s.seat(&a).map(|x| x.character.number) else {
            continue;
        };
        let Some(roll) = t.rolls.get(&a) else {
            let help = helpers(s)
                .iter()
                .filter(|(h, target)| {
                    target == &a && t.helper_rolls.get(h).is_some_and(helper_succeeded)
                })
                .count() as u32;
            let pool = action_pool(prepared, expert, help);
            let (roll_index, seed, faces) = dice(s, pool);
            return Step::Emit(Event::DiceRolled {
                agent: a,
                purpose: RollPurpose::Action,
                helping: None,
                roll_index,
                seed,
                pool,
                result: resolve(number, task, &faces),
            });
        };
        if !t.roll_reviewed.contains(&a) {
            return match t.forced {
                Some(success) => {
                    let change = if success {
                        RollOverride::Success
                    } else {
                        RollOverride::Failure
                    };
                    Step::Emit(Event::GmRollOverride {
                        agent: a,
                        result: apply_override(roll, &change),
                        change,
                    })
                }
                None => Step::Ask(GmAsk::Override {
                    agent: a,
                    roll: roll.clone(),
                }),
            };
        }
    }
    let insight_due = acting(s)
        .iter()
        .any(|a| t.rolls.get(a).is_some_and(|r| r.laser_feelings()) && !t.insight_used.contains(a));
    if insight_due {
        Step::Advance(Phase::LaserFeelings)
    } else {
        Step::Advance(Phase::GmOutcome)
    }
}

/// The roll after a GM override: new faces are resolved by the rules; a forced success or
/// failure keeps the faces and sets the count (2 successes: done well; 0: it goes wrong).
pub fn apply_override(roll: &RollResult, change: &RollOverride) -> RollResult {
    match change {
        RollOverride::Keep => roll.clone(),
        RollOverride::Faces { faces } => resolve(roll.number, roll.task, faces),
        RollOverride::Success | RollOverride::Failure => {
            let successes = if *change == RollOverride::Success {
                2
            } else {
                0
            };
            let mut forced = roll.clone();
            forced.successes = successes;
            forced.outcome = troupe_rules::Outcome::from_successes(successes);
            forced
        }
    }
}

/// The verdict on the latest attempt; after the last attempt, auto-correct an AI's action or
/// flag it for the GM; a person's goes to the GM as they wrote it, with the correction beside
/// it.
fn validate(agent: &str, attempts: &[ActionDecl], max_attempts: u32, person: bool) -> Event {
    let attempt = attempts.len() as u32;
    let text = attempts
        .last()
        .map(|a| a.action.as_str())
        .unwrap_or_default();
    let verdict = check(text);
    let (result, corrected) = if !verdict.flagged {
        (VerdictResult::Passed, None)
    } else if attempt < max_attempts {
        (VerdictResult::Retry, None)
    } else {
        let fix = auto_correct(text);
        if !person && fix.reads_as_action && !check(&fix.text).flagged {
            (VerdictResult::AutoCorrected, Some(fix.text))
        } else {
            (VerdictResult::FlaggedForGm, Some(fix.text))
        }
    };
    Event::Validation {
        agent: agent.to_string(),
        attempt,
        verdict,
        result,
        corrected,
    }
}
