//! Is the log complete (SC-012)? Three things must each have their event, every time:
//!
//! - **phase transitions**: every phase a turn enters is opened (`phase_started`) and closed
//!   (`phase_completed`) in the log, and one phase follows another only along the turn machine's
//!   own edges, so a transition missing from the log shows up as a jump the machine cannot make;
//!   every event is stamped with the phase that is open when it happens;
//! - **model calls**: every AI decision in the log is backed by an answered `model_call` of the
//!   same agent and purpose logged before it, and every answered call is followed by the
//!   decision it produced (or by the phase failing); each call carries the fields researchers
//!   need (provider, tokens, latency, attempt …);
//! - **validation verdicts**: every declared action gets its verdict before the turn ends,
//!   unless the GM wrote the action.
//!
//! It also checks that every event carries the envelope researchers filter on.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use troupe_lasers::{Envelope, Event, FailureChoice, Phase};

use crate::calls::{GameCalls, RunGap, audit_calls};
use crate::ev::{seq, session, ty};
use crate::games::Games;
use crate::known::Known;
use crate::lasers::{self, Row};

/// An AI's decision: whose it is and the purpose of the model call it comes from.
fn ai_decision(event: &Event) -> Option<(&str, &'static str)> {
    Some(match event {
        Event::ClarifyingQuestions { agent, .. } => (agent, "clarifying_questions"),
        Event::StrategicIntent { agent, .. } => (agent, "strategic_intent"),
        Event::OocMessage { agent, .. } => (agent, "ooc_discussion"),
        Event::VoteCast { agent, .. } => (agent, "forced_vote"),
        Event::CharacterAction { agent, .. } => (agent, "character_action"),
        Event::LaserFeelingsQuestion { agent, .. } => (agent, "insight_question"),
        Event::InsightDecision { agent, .. } => (agent, "insight_decision"),
        Event::CharacterReaction { agent, .. } => (agent, "character_reaction"),
        _ => return None,
    })
}

/// A GM's decision and the purpose of the AI GM's call behind it: a GM decision with no such
/// call was a person's (or a script's), which needs no call.
fn gm_decision(event: &Event) -> Option<&'static str> {
    Some(match event {
        Event::GmNarration { .. } => "gm_narration",
        Event::GmAnswers { .. } => "gm_answers",
        Event::GmAdjudication { .. } => "gm_ruling",
        Event::LaserFeelingsAnswer { .. } => "gm_insight_answer",
        Event::GmOutcome { .. } => "gm_outcome",
        _ => return None,
    })
}

/// An event a call's answer becomes that does not always come from a call, with the purpose
/// of that call and the agent whose calls it uses (any agent's when none): a `directive` is
/// usually the player's own (from its intent or its OOC message); a `memory_storage` step may
/// run without the model.
fn answer_event(event: &Event) -> Option<(&'static str, Option<&str>)> {
    match event {
        Event::Directive { agent, .. } => Some(("party_directive", Some(agent))),
        Event::MemoryStorage { .. } => Some(("extract_facts", None)),
        _ => None,
    }
}

/// The turn machine's edges: the phases that may follow each phase within a turn.
pub const PHASE_EDGES: &[(&str, &[&str])] = &[
    ("gm_narration", &["memory_retrieval"]),
    ("memory_retrieval", &["clarification"]),
    ("clarification", &["strategic_intent"]),
    ("strategic_intent", &["discussion", "directive"]),
    ("discussion", &["directive"]),
    ("directive", &["character_action"]),
    ("character_action", &["validation"]),
    ("validation", &["character_action", "gm_adjudication"]),
    ("gm_adjudication", &["character_action", "helper_rolls"]),
    ("helper_rolls", &["dice_resolution"]),
    ("dice_resolution", &["laser_feelings", "gm_outcome"]),
    ("laser_feelings", &["character_action", "gm_outcome"]),
    ("gm_outcome", &["character_reaction"]),
    ("character_reaction", &["memory_storage"]),
    ("memory_storage", &[]),
];

/// A turn opens with this phase and closes after that one.
const FIRST_PHASE: &str = "gm_narration";
const LAST_PHASE: &str = "memory_storage";

/// The envelope every event must carry.
const ENVELOPE: &[&str] = &[
    "event_type",
    "timestamp",
    "session_id",
    "session_number",
    "turn_number",
    "seq",
];

#[derive(Clone, Debug, Serialize)]
pub struct Gap {
    pub session: u32,
    pub seq: u64,
    pub what: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Audit {
    pub events: usize,
    pub phases_started: u32,
    pub phases_closed: u32,
    /// Phases still open where the log stops (the script ran out, a crash, Ctrl-C): a resume
    /// carries on inside them, so they are not gaps.
    pub phases_interrupted: u32,
    /// Phase-to-phase moves checked against the turn machine's edges.
    pub transitions: u32,
    pub turns_started: u32,
    pub turns_completed: u32,
    pub decisions: u32,
    /// Decisions backed by a model call (the rest were typed by the GM after a failure).
    pub decisions_from_models: u32,
    pub decisions_typed_by_gm: u32,
    /// `model_call` events (one per attempt).
    pub model_calls: u32,
    /// Attempts that got an answer.
    pub answered_calls: u32,
    pub actions: u32,
    pub actions_with_verdict: u32,
    /// Actions that needed no verdict: the GM wrote them, or the log ended first.
    pub actions_exempt: u32,
    pub gaps: Vec<Gap>,
    /// The model calls of each game in the log: the sessions', the encounters', the scenes'.
    pub games: Vec<GameCalls>,
    /// What the encounters' and scenes' logs lack (a call without the request it was shown).
    pub run_gaps: Vec<RunGap>,
}

impl Audit {
    pub fn complete(&self) -> bool {
        self.gaps.is_empty() && self.run_gaps.is_empty()
    }
}

/// The audit of the sessions' events and of the encounter runs' and scenes' model calls.
pub fn audit_with_games(events: &[Value], games: &Games) -> Audit {
    audit_with_games_of(events, &lasers::read(events), games)
}

/// The audit with the games' calls, of rows as loaded (`events`) and as read.
pub(crate) fn audit_with_games_of(events: &[Value], read: &[Row], games: &Games) -> Audit {
    let mut a = audit_of(events, read);
    (a.games, a.run_gaps) = audit_calls(events, read, games);
    a
}

/// Audit one or more sessions' standing events (in log order, undone events left out). The
/// envelope is checked on every row as logged; the turn machine, the calls and the verdicts on
/// the events read as Lasers & Feelings' own: a newer troupe's kind takes no part in them, and
/// a known kind that does not read is a gap of its own (what follows may then show gaps that
/// are its consequence, never a silent miscount).
pub fn audit(events: &[Value]) -> Audit {
    audit_of(events, &lasers::read(events))
}

/// The audit of rows as loaded (`events`) and as read (`read`, one per row).
fn audit_of(events: &[Value], read: &[Row]) -> Audit {
    let mut a = Audit {
        events: events.len(),
        ..Audit::default()
    };
    let mut by_session: BTreeMap<u32, Vec<(&Value, &Row)>> = BTreeMap::new();
    for (e, k) in events.iter().zip(read) {
        by_session.entry(session(e)).or_default().push((e, k));
    }
    for (sn, rows) in by_session {
        envelope(sn, &rows, &mut a);
        let known: Vec<(&Value, &Envelope)> = rows
            .iter()
            .filter_map(|(e, k)| Some((*e, k.event()?)))
            .collect();
        phases(sn, &known, &mut a);
        let known: Vec<&Envelope> = known.into_iter().map(|(_, env)| env).collect();
        model_calls(sn, &known, &mut a);
        verdicts(sn, &known, &mut a);
    }
    a.gaps.sort_by_key(|g| (g.session, g.seq));
    a
}

fn gap(a: &mut Audit, session: u32, seq: u64, what: String) {
    a.gaps.push(Gap { session, seq, what });
}

fn missing<'a>(e: &Value, fields: &[&'a str]) -> Vec<&'a str> {
    fields
        .iter()
        .copied()
        .filter(|f| e.get(*f).is_none_or(Value::is_null))
        .collect()
}

/// Every row as logged: the envelope researchers filter on, in order, and a known kind that
/// does not read named with why (a row whose envelope lacks a field does not read either: its
/// gap says what it lacks).
fn envelope(sn: u32, rows: &[(&Value, &Row)], a: &mut Audit) {
    let mut last: Option<u64> = None;
    for (e, k) in rows {
        let lacks = missing(e, ENVELOPE);
        if !lacks.is_empty() {
            gap(
                a,
                sn,
                seq(e),
                format!("{} lacks {}", ty(e), lacks.join(", ")),
            );
        } else if let Known::Malformed {
            event_type, error, ..
        } = k
        {
            gap(a, sn, seq(e), format!("{event_type} (unreadable: {error})"));
        }
        if let Some(prev) = last
            && seq(e) <= prev
        {
            gap(
                a,
                sn,
                seq(e),
                format!("{} is out of order (after event {prev})", ty(e)),
            );
        }
        last = Some(seq(e));
    }
}

/// The phase an event is stamped with, as logged ("" for none).
fn phase_of(env: &Envelope) -> &'static str {
    env.phase.map_or("", Phase::as_str)
}

/// The walk through the turn machine. Each event comes with its row as logged, which tells a
/// row stamped with no phase (`null`) from one written before events carried a stamp.
fn phases(sn: u32, evs: &[(&Value, &Envelope)], a: &mut Audit) {
    let mut turn = PhaseWalk {
        edges: PHASE_EDGES.iter().copied().collect(),
        open: None,
        closed: None,
        in_turn: false,
    };
    for (row, env) in evs {
        match env.event {
            Event::TurnStarted => turn.turn_started(sn, env, a),
            Event::PhaseStarted => turn.phase_started(sn, env, a),
            Event::PhaseCompleted => turn.phase_completed(sn, env, a),
            Event::TurnCompleted => turn.turn_completed(sn, env, a),
            _ => turn.inside(sn, env, row.get("phase").is_some(), a),
        }
    }
    if turn.open.is_some() {
        a.phases_interrupted += 1;
    }
}

/// Where a session's walk through the turn machine's phases stands, event by event.
struct PhaseWalk {
    /// Each phase and the phases that may follow it.
    edges: BTreeMap<&'static str, &'static [&'static str]>,
    /// The phase open now, and where it started.
    open: Option<(String, u64)>,
    /// The last phase closed in this turn.
    closed: Option<String>,
    in_turn: bool,
}

impl PhaseWalk {
    /// A phase still open when its turn moves on was never completed.
    fn close_open(&mut self, sn: u32, a: &mut Audit) {
        if let Some((p, at)) = self.open.take() {
            gap(a, sn, at, format!("phase {p} was never completed"));
        }
    }

    fn turn_started(&mut self, sn: u32, env: &Envelope, a: &mut Audit) {
        a.turns_started += 1;
        if self.in_turn {
            gap(
                a,
                sn,
                env.seq,
                "turn_started while the previous turn was not completed".into(),
            );
        }
        self.close_open(sn, a);
        self.in_turn = true;
        self.closed = None;
    }

    fn phase_started(&mut self, sn: u32, env: &Envelope, a: &mut Audit) {
        let phase = phase_of(env);
        a.phases_started += 1;
        if !self.edges.contains_key(phase) {
            gap(
                a,
                sn,
                env.seq,
                format!("phase_started for unknown phase {phase:?}"),
            );
        }
        self.close_open(sn, a);
        if !self.in_turn {
            gap(
                a,
                sn,
                env.seq,
                format!("phase {phase} started outside a turn"),
            );
        }
        match &self.closed {
            None if phase != FIRST_PHASE => gap(
                a,
                sn,
                env.seq,
                format!("the turn's first phase is {phase}, not {FIRST_PHASE}"),
            ),
            Some(prev) => {
                a.transitions += 1;
                let allowed = self.edges.get(prev.as_str()).copied().unwrap_or(&[]);
                if !allowed.contains(&phase) {
                    gap(
                        a,
                        sn,
                        env.seq,
                        format!(
                            "phase {phase} follows {prev}: the turn machine never moves so; a transition is missing from the log"
                        ),
                    );
                }
            }
            None => {}
        }
        self.open = Some((phase.to_string(), env.seq));
    }

    fn phase_completed(&mut self, sn: u32, env: &Envelope, a: &mut Audit) {
        let phase = phase_of(env);
        match self.open.take() {
            Some((p, _)) if p == phase => {
                a.phases_closed += 1;
                self.closed = Some(p);
            }
            other => {
                gap(
                    a,
                    sn,
                    env.seq,
                    format!("phase_completed for phase {phase}, which had not started"),
                );
                self.open = other;
            }
        }
    }

    fn turn_completed(&mut self, sn: u32, env: &Envelope, a: &mut Audit) {
        a.turns_completed += 1;
        self.close_open(sn, a);
        if self.closed.as_deref() != Some(LAST_PHASE) {
            gap(
                a,
                sn,
                env.seq,
                format!(
                    "the turn completed after {}, not after {LAST_PHASE}",
                    self.closed.as_deref().unwrap_or("no phase at all")
                ),
            );
        }
        self.in_turn = false;
    }

    /// Everything else happens inside the phase that is open, and says so (`stamped`: the row
    /// carries a phase, `null` included).
    fn inside(&self, sn: u32, env: &Envelope, stamped: bool, a: &mut Audit) {
        let phase = phase_of(env);
        if let Some((p, _)) = &self.open
            && stamped
            && phase != p
        {
            gap(
                a,
                sn,
                env.seq,
                format!(
                    "{} is stamped phase {phase:?} while phase {p} is open",
                    env.event.event_type()
                ),
            );
        }
    }
}

/// One `model_call` attempt as the matching needs it.
struct Call {
    seq: u64,
    agent: String,
    purpose: String,
    answered: bool,
    used: bool,
}

/// Every decision is matched to the answered model call behind it (or to the GM typing it),
/// and every answered call to what it led to.
fn model_calls(sn: u32, evs: &[&Envelope], a: &mut Audit) {
    let mut m = CallMatch {
        sn,
        calls: Vec::new(),
        by_gm: BTreeSet::new(),
    };
    for env in evs {
        m.event(env, a);
    }
    m.unused(evs, a);
}

/// The model calls of a session so far, and which of them a decision has used.
struct CallMatch {
    sn: u32,
    calls: Vec<Call>,
    /// A failure the GM resolved by typing the AI's part (or skipping it), by (agent, phase):
    /// the next decision of that agent in that phase came from the GM.
    by_gm: BTreeSet<(String, String)>,
}

impl CallMatch {
    fn event(&mut self, env: &Envelope, a: &mut Audit) {
        match &env.event {
            Event::ModelCall {
                agent,
                purpose,
                record,
                ..
            } => {
                let answered =
                    record.reply.is_some() && lasers::given(record.error.as_ref()).is_none();
                return self.logged(env.seq, agent, purpose, answered, a);
            }
            Event::GmFailureDecision {
                agent,
                choice: FailureChoice::TakeOver { .. } | FailureChoice::Skip,
            } => {
                self.by_gm.insert((agent.clone(), phase_of(env).into()));
                return;
            }
            Event::TurnCompleted => self.by_gm.clear(),
            // A failed phase: the answers that led to it produced no decision, rightly.
            Event::PhaseFailed { agent, .. } => {
                for c in self
                    .calls
                    .iter_mut()
                    .filter(|c| c.agent == *agent && c.answered)
                {
                    c.used = true;
                }
                return;
            }
            // A GM text sent back for a rewrite: the call that wrote it led to the flag.
            Event::GmFlagged { .. } => {
                if let Some(c) = self
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| !c.used && c.answered && c.agent == "gm")
                {
                    c.used = true;
                }
                return;
            }
            _ => {}
        }
        if let Some(purpose) = gm_decision(&env.event) {
            let by_ai = self
                .calls
                .iter_mut()
                .find(|c| !c.used && c.answered && c.agent == "gm" && c.purpose == purpose);
            if let Some(c) = by_ai {
                c.used = true;
                a.decisions += 1;
                a.decisions_from_models += 1;
            }
        } else if let Some((agent, purpose)) = ai_decision(&env.event) {
            self.decision(env, agent, purpose, a);
        } else if let Some((purpose, agent)) = answer_event(&env.event) {
            self.answers(env, purpose, agent, a);
        }
    }

    /// A `model_call` attempt: counted, kept for matching. (It read as the game's event, so it
    /// has every field researchers need; one that lacks one is unreadable, a gap of its own.)
    fn logged(&mut self, seq: u64, agent: &str, purpose: &str, answered: bool, a: &mut Audit) {
        a.model_calls += 1;
        if answered {
            a.answered_calls += 1;
        }
        self.calls.push(Call {
            seq,
            agent: agent.into(),
            purpose: purpose.into(),
            answered,
            used: false,
        });
    }

    /// An AI's decision: typed by the GM after a failure, or backed by the first unused answer
    /// of its agent for its purpose.
    fn decision(&mut self, env: &Envelope, agent: &str, purpose: &str, a: &mut Audit) {
        a.decisions += 1;
        if self.by_gm.remove(&(agent.into(), phase_of(env).into())) {
            a.decisions_typed_by_gm += 1;
            return;
        }
        match self
            .calls
            .iter_mut()
            .find(|c| !c.used && c.answered && c.agent == agent && c.purpose == purpose)
        {
            Some(c) => {
                c.used = true;
                a.decisions_from_models += 1;
            }
            None => gap(
                a,
                self.sn,
                env.seq,
                format!(
                    "{} by {agent} has no answered model_call ({purpose}) before it",
                    env.event.event_type(),
                ),
            ),
        }
    }

    /// The events an answer leads to besides decisions (memory storage, …) use up the calls
    /// of their purpose (of `agent`, or of any agent).
    fn answers(&mut self, env: &Envelope, purpose: &str, agent: Option<&str>, a: &mut Audit) {
        let mut took = false;
        for c in self
            .calls
            .iter_mut()
            .filter(|c| !c.used && c.purpose == purpose)
            .filter(|c| agent.is_none_or(|agent| c.agent == agent))
        {
            c.used = true;
            took |= c.answered;
        }
        if let Event::MemoryStorage { extraction, .. } = &env.event
            && extraction.as_deref() == Some("model")
            && !took
        {
            gap(
                a,
                self.sn,
                env.seq,
                "memory_storage says its facts came from the model, but no answered extract_facts model_call precedes it".into(),
            );
        }
    }

    /// Every answer went somewhere. The last calls of a log that stops mid-step are spared.
    fn unused(&self, evs: &[&Envelope], a: &mut Audit) {
        let last_decision = evs
            .iter()
            .rev()
            .find(|env| {
                ai_decision(&env.event).is_some()
                    || gm_decision(&env.event).is_some()
                    || answer_event(&env.event).is_some()
            })
            .map_or(0, |env| env.seq);
        for c in self.calls.iter().filter(|c| c.answered && !c.used) {
            if c.seq < last_decision {
                gap(
                    a,
                    self.sn,
                    c.seq,
                    format!(
                        "{}'s answered model_call ({}) led to no logged decision",
                        c.agent, c.purpose
                    ),
                );
            }
        }
    }
}

fn verdicts(sn: u32, evs: &[&Envelope], a: &mut Audit) {
    // Declared actions waiting for their verdict, by (agent, attempt).
    let mut waiting: BTreeMap<(String, u32), u64> = BTreeMap::new();
    for env in evs {
        match &env.event {
            Event::CharacterAction { agent, attempt, .. } => {
                a.actions += 1;
                waiting.insert((agent.clone(), *attempt), env.seq);
            }
            Event::Validation { agent, attempt, .. } => {
                if waiting.remove(&(agent.clone(), *attempt)).is_some() {
                    a.actions_with_verdict += 1;
                } else {
                    gap(
                        a,
                        sn,
                        env.seq,
                        format!("validation of {agent}'s attempt {attempt} with no such action"),
                    );
                }
            }
            // The GM's own words need no overreach check.
            Event::GmReviewedAction { agent, .. } => {
                let mine: Vec<(String, u32)> = waiting
                    .keys()
                    .filter(|(ag, _)| ag == agent)
                    .cloned()
                    .collect();
                for k in mine {
                    waiting.remove(&k);
                    a.actions_exempt += 1;
                }
            }
            Event::TurnCompleted => {
                for ((ag, attempt), at) in std::mem::take(&mut waiting) {
                    gap(
                        a,
                        sn,
                        at,
                        format!("{ag}'s action (attempt {attempt}) has no validation verdict"),
                    );
                }
            }
            _ => {}
        }
    }
    // The log stopped before these were checked; a resume checks them.
    a.actions_exempt += waiting.len() as u32;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// An event of a one-session log: seq, the envelope, and the phase given.
    /// (Read as the game's event: `crate::lasers::rows::row` fills in the kind's other fields.)
    fn ev(seq: u64, phase: Option<&str>, v: Value) -> Value {
        let mut e = json!({"seq": seq, "session_number": 1, "turn_number": 1,
            "timestamp": "2026-01-01T00:00:00Z", "session_id": "s1", "phase": phase});
        let o = e.as_object_mut().unwrap();
        o.extend(v.as_object().unwrap().clone());
        crate::lasers::rows::row(e)
    }

    /// A log builder that stamps each event with the phase it is in.
    #[derive(Default)]
    struct Log {
        events: Vec<Value>,
        phase: Option<String>,
    }

    impl Log {
        fn push(&mut self, v: Value) -> &mut Self {
            let seq = self.events.len() as u64;
            let t = v["event_type"].as_str().unwrap().to_string();
            if t == "phase_started" {
                self.phase = v["phase"].as_str().map(String::from);
            }
            let phase = self.phase.clone();
            self.events.push(ev(seq, phase.as_deref(), v));
            self
        }
        fn start(&mut self, p: &str) -> &mut Self {
            self.push(json!({"event_type": "phase_started", "phase": p}))
        }
        fn done(&mut self) -> &mut Self {
            self.push(json!({"event_type": "phase_completed"}))
        }
        fn call(&mut self, agent: &str, purpose: &str) -> &mut Self {
            self.push(
                json!({"event_type": "model_call", "agent": agent, "layer": "player",
                "purpose": purpose, "attempt": 1, "provider": "replay", "request_hash": "ab",
                "messages": [], "usage": {"input_tokens": 1, "output_tokens": 1},
                "latency_ms": 3, "reply": "{}", "error": null}),
            )
        }
        fn decision(&mut self, t: &str, agent: &str) -> &mut Self {
            self.push(json!({"event_type": t, "agent": agent, "attempt": 1}))
        }
    }

    /// One whole turn for one AI player, every phase with its events.
    fn turn() -> Log {
        let mut l = Log::default();
        l.push(json!({"event_type": "turn_started"}));
        l.start("gm_narration")
            .push(json!({"event_type": "gm_narration", "text": "A ship."}))
            .done();
        l.start("memory_retrieval")
            .decision("memory_retrieved", "alex")
            .done();
        l.start("clarification")
            .call("alex", "clarifying_questions")
            .decision("clarifying_questions", "alex")
            .done();
        l.start("strategic_intent")
            .call("alex", "strategic_intent")
            .decision("strategic_intent", "alex")
            .done();
        l.start("directive").decision("directive", "alex").done();
        l.start("character_action")
            .call("alex", "character_action")
            .decision("character_action", "alex")
            .done();
        l.start("validation")
            .push(json!({"event_type": "validation", "agent": "alex", "attempt": 1, "result": "passed"}))
            .done();
        l.start("gm_adjudication").done();
        l.start("helper_rolls").done();
        l.start("dice_resolution").done();
        l.start("gm_outcome").done();
        l.start("character_reaction")
            .call("alex", "character_reaction")
            .decision("character_reaction", "alex")
            .done();
        l.start("memory_storage")
            .call("memory", "extract_facts")
            .push(
                json!({"event_type": "memory_storage", "status": "stored", "extraction": "model"}),
            )
            .done();
        l.push(json!({"event_type": "turn_completed"}));
        l
    }

    fn whats(a: &Audit) -> Vec<&str> {
        a.gaps.iter().map(|g| g.what.as_str()).collect()
    }

    #[test]
    fn a_complete_turn_has_no_gaps() {
        let mut l = turn();
        // The next turn is cut off by the end of the log.
        l.push(json!({"event_type": "turn_started"}));
        l.start("gm_narration");
        let a = audit(&l.events);
        assert!(a.complete(), "{:?}", whats(&a));
        assert_eq!((a.phases_started, a.phases_closed), (14, 13));
        assert_eq!((a.phases_interrupted, a.transitions), (1, 12));
        assert_eq!((a.decisions, a.decisions_from_models), (4, 4));
        assert_eq!((a.model_calls, a.answered_calls), (5, 5));
        assert_eq!((a.actions, a.actions_with_verdict), (1, 1));
    }

    /// Each kind of missing event, taken out of a complete turn, is found.
    #[test]
    fn any_missing_event_is_a_gap() {
        let full = turn().events;
        let without = |pred: &dyn Fn(&Value) -> bool| -> Audit {
            let mut left: Vec<Value> = full.iter().filter(|e| !pred(e)).cloned().collect();
            // Keep seq contiguous-looking: it need only increase.
            for (i, e) in left.iter_mut().enumerate() {
                e["seq"] = json!(i);
            }
            audit(&left)
        };
        // A model call.
        let a = without(&|e| e["event_type"] == "model_call" && e["purpose"] == "character_action");
        assert_eq!(
            whats(&a),
            ["character_action by alex has no answered model_call (character_action) before it"]
        );
        // The extraction call behind a memory step that says it used the model.
        let a = without(&|e| e["purpose"] == "extract_facts");
        assert!(
            whats(&a)[0].contains("no answered extract_facts"),
            "{:?}",
            whats(&a)
        );
        // A decision after an answered call.
        let a = without(&|e| e["event_type"] == "strategic_intent");
        assert!(
            whats(&a)[0].contains("led to no logged decision"),
            "{:?}",
            whats(&a)
        );
        // A verdict.
        let a = without(&|e| e["event_type"] == "validation");
        assert_eq!(
            whats(&a),
            ["alex's action (attempt 1) has no validation verdict"]
        );
        // A phase transition, both halves: the machine cannot jump from clarification to
        // directive.
        let a = without(&|e| e["phase"] == "strategic_intent");
        assert!(
            whats(&a)
                .iter()
                .any(|w| w.contains("phase directive follows clarification")),
            "{:?}",
            whats(&a)
        );
        // Only the completion.
        let a = without(&|e| e["event_type"] == "phase_completed" && e["phase"] == "validation");
        assert!(
            whats(&a).contains(&"phase validation was never completed"),
            "{:?}",
            whats(&a)
        );
        // The last phase.
        let a = without(&|e| e["phase"] == "memory_storage" && e["event_type"] != "turn_completed");
        assert!(
            whats(&a)
                .iter()
                .any(|w| w.contains("not after memory_storage")),
            "{:?}",
            whats(&a)
        );
    }

    #[test]
    fn a_damaged_envelope_or_model_call_is_a_gap() {
        let mut l = turn();
        l.events[3].as_object_mut().unwrap().remove("timestamp");
        let i = l
            .events
            .iter()
            .position(|e| e["event_type"] == "model_call")
            .unwrap();
        l.events[i].as_object_mut().unwrap().remove("usage");
        l.events[5]["phase"] = json!("validation");
        let a = audit(&l.events);
        let w = whats(&a);
        assert!(w.iter().any(|w| w.contains("lacks timestamp")), "{w:?}");
        assert!(
            w.iter()
                .any(|w| w.starts_with("model_call (unreadable: ") && w.contains("usage")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| w.contains("stamped phase \"validation\"")),
            "{w:?}"
        );
    }

    #[test]
    fn retries_failures_and_the_gms_typing_are_not_gaps() {
        let mut l = Log::default();
        l.push(json!({"event_type": "turn_started"}));
        l.start("gm_narration").done();
        l.start("memory_retrieval").done();
        l.start("clarification").done();
        l.start("strategic_intent")
            // A failed call, a failed phase, the GM types the intent.
            .push(json!({"event_type": "model_call", "agent": "alex", "layer": "player",
                "purpose": "strategic_intent", "attempt": 1, "provider": "p", "request_hash": "h",
                "messages": [], "usage": {"input_tokens": 5, "output_tokens": 0}, "latency_ms": 1,
                "reply": null, "error": "HTTP 500", "retry_in_ms": null, "repair": false}))
            .push(json!({"event_type": "phase_failed", "agent": "alex", "error": "HTTP 500", "failures": 1}))
            .push(json!({"event_type": "gm_failure_decision", "agent": "alex", "choice": "take_over", "text": "x"}))
            .decision("strategic_intent", "alex")
            .done();
        l.start("directive").decision("directive", "alex").done();
        // An action rejected, tried again and passed.
        l.start("character_action")
            .call("alex", "character_action")
            .decision("character_action", "alex")
            .done();
        l.start("validation")
            .push(json!({"event_type": "validation", "agent": "alex", "attempt": 1, "result": "retry"}))
            .done();
        l.start("character_action")
            .call("alex", "character_action")
            .push(json!({"event_type": "character_action", "agent": "alex", "attempt": 2}))
            .done();
        l.start("validation")
            .push(json!({"event_type": "validation", "agent": "alex", "attempt": 2, "result": "passed"}))
            .done();
        l.start("gm_adjudication").done();
        // The session ends mid-turn: an open phase, not a gap.
        l.start("helper_rolls")
            .push(json!({"event_type": "session_ended", "reason": "quit"}));
        let a = audit(&l.events);
        assert!(a.complete(), "{:?}", whats(&a));
        assert_eq!((a.decisions_typed_by_gm, a.decisions_from_models), (1, 2));
        assert_eq!(a.actions_with_verdict, 2);
        assert_eq!(a.phases_interrupted, 1);
    }

    /// A newer troupe's kind in the middle of a recorded session is a row like any other to the
    /// envelope's check and takes no part in the rest: only the count of rows moves. A known
    /// kind that does not read is a gap that says so, with why.
    #[test]
    fn a_newer_kind_changes_only_the_row_count_and_a_damaged_one_is_a_gap() {
        let party = crate::lasers::rows::party();
        let before = audit(&party);
        assert!(before.complete(), "{:?}", whats(&before));
        let middle = party.len() / 2;
        let mut newer = party.clone();
        let mut row = party[middle].clone();
        row["event_type"] = json!("weather_changed");
        newer.insert(middle, row);
        // Its seq repeats its neighbour's: give the rows after it room.
        for (i, e) in newer.iter_mut().enumerate().skip(middle + 1) {
            e["seq"] = json!(i);
        }
        let mut after = audit(&newer);
        assert!(after.complete(), "{:?}", whats(&after));
        assert_eq!(after.events, before.events + 1);
        after.events = before.events;
        assert_eq!(
            serde_json::to_string(&after).unwrap(),
            serde_json::to_string(&before).unwrap()
        );

        let mut damaged = party;
        let i = damaged
            .iter()
            .position(|r| r["event_type"] == "validation")
            .unwrap();
        damaged[i]["result"] = json!("maybe");
        let a = audit(&damaged);
        let w = whats(&a);
        assert!(
            w.iter()
                .any(|w| w.starts_with("validation (unreadable: ") && w.contains("maybe")),
            "{w:?}"
        );
    }
}
