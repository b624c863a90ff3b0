//! The numbers researchers ask for (FR-022, FR-023), computed from events alone.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use troupe_lasers::{Envelope, Event, RollOverride, RollPurpose};
use troupe_llm::AttemptRecord;
use troupe_rules::RollResult;

use crate::ev::Roster;
use crate::lasers::{self, Unreadable};

/// Every metric of a set of events (one session or a whole campaign).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Metrics {
    pub sessions: Vec<u32>,
    /// Turns completed.
    pub turns: u32,
    /// Turns started (one more than completed when a session stopped mid-turn).
    pub turns_started: u32,
    pub per_turn: Vec<TurnStats>,
    pub validation: ValidationStats,
    pub model: ModelStats,
    /// P50/P95 response time per layer, then per purpose.
    pub latency: Vec<Latency>,
    /// Tokens in and out per AI player.
    pub tokens_by_agent: BTreeMap<String, Tokens>,
    pub consensus: Vec<ConsensusCount>,
    /// Adopted plans per proposer (the leadership signal), over all sessions.
    pub adopted_by: BTreeMap<String, u32>,
    /// Per session: who proposed the adopted plans.
    pub adopted_by_session: BTreeMap<u32, BTreeMap<String, u32>>,
    /// Every discussion's end, in order: what was adopted, from whom, how.
    pub discussions: Vec<Discussion>,
    /// Directed: what `from` did towards `to`.
    pub pairs: Vec<PairStats>,
    pub dice: DiceStats,
    pub gm_overrides: u32,
    /// Party discussion events (`ooc_message`, `consensus`, `vote_cast`) are present.
    pub has_party_discussion: bool,
    pub whispers: u32,
    /// Rows of a kind this build knows that do not read as it: counted in no figure above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

impl Tokens {
    /// Add these counts, saturating (a log's counts are not trusted).
    pub fn add(&mut self, more: &Tokens) {
        self.input = self.input.saturating_add(more.input);
        self.output = self.output.saturating_add(more.output);
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct TurnStats {
    pub session: u32,
    pub turn: u32,
    pub tokens: Tokens,
    /// Model attempts in the turn.
    pub calls: u32,
    /// Summed model latency in the turn.
    pub latency_ms: u64,
    pub validations: u32,
    /// Verdicts other than `passed`.
    pub validation_failures: u32,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ValidationStats {
    /// Declared actions that were checked (a run of attempts from attempt 1).
    pub actions: u32,
    pub verdicts: u32,
    /// Actions whose first attempt was not passed.
    pub first_pass_failures: u32,
    /// Actions still not passed after the retries (auto-corrected or flagged for the GM).
    pub final_failures: u32,
    pub retries: u32,
    pub auto_corrected: u32,
    pub flagged_for_gm: u32,
}

impl ValidationStats {
    pub fn first_pass_rate(&self) -> Option<f64> {
        ratio(self.first_pass_failures, self.actions)
    }
    pub fn final_rate(&self) -> Option<f64> {
        ratio(self.final_failures, self.actions)
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ModelStats {
    /// Gateway calls (a run of attempts from attempt 1).
    pub calls: u32,
    /// Every attempt, each a `model_call` event.
    pub attempts: u32,
    /// Attempts after the first of a call (provider retries and JSON repairs).
    pub retries: u32,
    pub repairs: u32,
    /// Attempts that ended in an error.
    pub errors: u32,
    /// Phases that failed because a model call gave up (`phase_failed`).
    pub failed_phases: u32,
    pub tokens: Tokens,
}

#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// "layer" or "purpose".
    pub by: String,
    pub key: String,
    pub count: usize,
    pub p50_ms: u64,
    pub p95_ms: u64,
}

/// How one party discussion ended.
#[derive(Clone, Debug, Serialize)]
pub struct Discussion {
    pub session: u32,
    pub turn: u32,
    /// The `consensus` event that settled it (or the last round's).
    pub seq: u64,
    pub rounds: u32,
    pub outcome: String,
    pub plan: Option<String>,
    pub proposer: Option<String>,
    pub dissent: Vec<String>,
}

/// How a session's party discussions ended: one per discussion (a turn's OOC talk), by the
/// outcome of its last `consensus` event.
#[derive(Clone, Debug, Serialize)]
pub struct ConsensusCount {
    pub session: u32,
    pub outcomes: BTreeMap<String, u32>,
    /// Discussions held.
    pub discussions: u32,
    /// Rounds that ended without agreement (`consensus` events with outcome `conflicted`).
    pub conflicted_rounds: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PairCounts {
    /// `from` agreed with a proposal of `to`.
    pub agree: u32,
    pub disagree: u32,
    /// `from` rolled to help `to`'s character.
    pub helps: u32,
    /// `from` voted for `to`.
    pub votes: u32,
}

impl PairCounts {
    /// Support given: agreement, help and votes.
    pub fn support(&self) -> u32 {
        self.agree + self.helps + self.votes
    }
    pub fn add(&mut self, o: &PairCounts) {
        self.agree += o.agree;
        self.disagree += o.disagree;
        self.helps += o.helps;
        self.votes += o.votes;
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PairStats {
    pub from: String,
    pub to: String,
    pub total: PairCounts,
    pub by_session: BTreeMap<u32, PairCounts>,
    /// Turn by turn, as `(session, turn, counts)`, for the relationship over time.
    pub by_turn: Vec<(u32, u32, PairCounts)>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct DiceStats {
    /// How often each face 1–6 came up on the action and helper rolls (before any override).
    pub faces: [u32; 6],
    pub rolls: u32,
    /// Rolls by number of successes (0, 1, 2, 3+).
    pub successes: BTreeMap<u32, u32>,
    /// Rolls by outcome (`failure`, `complication`, `success`, `critical`).
    pub outcomes: BTreeMap<String, u32>,
    pub laser_feelings: u32,
}

impl DiceStats {
    pub fn dice(&self) -> u32 {
        self.faces.iter().sum()
    }
    /// Pearson's chi-square against a fair d6 (5 degrees of freedom), when any dice rolled.
    pub fn chi_square(&self) -> Option<f64> {
        let n = f64::from(self.dice());
        if n == 0.0 {
            return None;
        }
        let expected = n / 6.0;
        Some(
            self.faces
                .iter()
                .map(|&o| (f64::from(o) - expected).powi(2) / expected)
                .sum(),
        )
    }
}

/// What each player did toward each other, by (from, to), then by (session, turn).
type PairsByTurn = BTreeMap<(String, String), BTreeMap<(u32, u32), PairCounts>>;

fn ratio(a: u32, b: u32) -> Option<f64> {
    (b > 0).then(|| f64::from(a) / f64::from(b))
}

/// The nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn usage(record: &AttemptRecord) -> Tokens {
    Tokens {
        input: u64::from(record.usage.input_tokens),
        output: u64::from(record.usage.output_tokens),
    }
}

/// Every figure from the events this build knows. A newer troupe's kind counts in none; a
/// known kind that does not read counts in none either, and is named in `unreadable`.
pub fn metrics(events: &[Value]) -> Metrics {
    metrics_of(&lasers::read(events))
}

/// The metrics of rows already read.
pub(crate) fn metrics_of(read: &[lasers::Row]) -> Metrics {
    let roster = Roster::from_read(read);
    let mut tally = Tally::new(&roster);
    for env in lasers::known(read) {
        tally.event(env);
    }
    let mut m = tally.finish();
    m.unreadable = lasers::unreadable(read);
    m
}

/// The running counts while the events are read once, in log order; `finish` turns what is
/// kept per turn, per discussion and per pair into the metrics' lists.
struct Tally<'a> {
    roster: &'a Roster,
    m: Metrics,
    turns: BTreeMap<(u32, u32), TurnStats>,
    by_layer: BTreeMap<String, Vec<u64>>,
    by_purpose: BTreeMap<String, Vec<u64>>,
    /// The latest `consensus` event of each discussion, by (session, turn), and its rounds.
    discussions: BTreeMap<(u32, u32), (&'a Envelope, u32)>,
    conflicted_rounds: BTreeMap<u32, u32>,
    pairs: PairsByTurn,
    /// The action being checked per (session, turn, agent): (first attempt passed, latest passed).
    last_action: BTreeMap<(u32, u32, String), (bool, bool)>,
}

impl<'a> Tally<'a> {
    fn new(roster: &'a Roster) -> Self {
        Tally {
            roster,
            m: Metrics::default(),
            turns: BTreeMap::new(),
            by_layer: BTreeMap::new(),
            by_purpose: BTreeMap::new(),
            discussions: BTreeMap::new(),
            conflicted_rounds: BTreeMap::new(),
            pairs: BTreeMap::new(),
            last_action: BTreeMap::new(),
        }
    }

    fn event(&mut self, env: &'a Envelope) {
        let (sn, tn) = (env.session_number, env.turn_number);
        if !self.m.sessions.contains(&sn) {
            self.m.sessions.push(sn);
        }
        self.turns.entry((sn, tn)).or_insert_with(|| TurnStats {
            session: sn,
            turn: tn,
            ..TurnStats::default()
        });
        let m = &mut self.m;
        match &env.event {
            Event::TurnStarted => m.turns_started += 1,
            Event::TurnCompleted => m.turns += 1,
            Event::ModelCall {
                agent,
                layer,
                purpose,
                record,
            } => self.model_call(env, agent, &lasers::logged_word(layer), purpose, record),
            Event::PhaseFailed { .. } => m.model.failed_phases += 1,
            Event::Validation {
                agent,
                attempt,
                result,
                ..
            } => self.validation(env, agent, *attempt, &lasers::logged_word(result)),
            Event::GmRollOverride { change, .. } if *change != RollOverride::Keep => {
                m.gm_overrides += 1;
            }
            Event::GmForcedResult { .. } => m.gm_overrides += 1,
            Event::DiceRolled {
                agent,
                purpose,
                helping,
                result,
                ..
            } => self.dice_rolled(env, agent, *purpose, helping.as_ref(), result),
            Event::OocMessage { .. } | Event::VoteCast { .. } | Event::Consensus { .. } => {
                self.party(env);
            }
            Event::Whisper { .. } => m.whispers += 1,
            _ => {}
        }
    }

    /// The turn's entry for an event (made for every event before it is counted).
    fn turn_of(&mut self, env: &Envelope) -> &mut TurnStats {
        self.turns
            .entry((env.session_number, env.turn_number))
            .or_default()
    }

    /// One attempt of a model call: calls, retries, repairs, errors, tokens and response times.
    fn model_call(
        &mut self,
        env: &Envelope,
        agent: &str,
        layer: &str,
        purpose: &str,
        record: &AttemptRecord,
    ) {
        let u = usage(record);
        let model = &mut self.m.model;
        model.attempts += 1;
        if record.attempt <= 1 {
            model.calls += 1;
        } else {
            model.retries += 1;
        }
        if record.repair {
            model.repairs += 1;
        }
        if lasers::given(record.error.as_ref()).is_some() {
            model.errors += 1;
        }
        // Counts from a log are whatever it says: a damaged one may say u32::MAX, so
        // the sums saturate instead of overflowing.
        model.tokens.add(&u);
        let lat = record.latency_ms;
        let t = self.turn_of(env);
        t.tokens.add(&u);
        t.calls += 1;
        t.latency_ms = t.latency_ms.saturating_add(lat);
        let tok = self.m.tokens_by_agent.entry(agent.to_string()).or_default();
        tok.add(&u);
        // Response time: attempts that got an answer.
        if record.reply.is_some() {
            self.by_layer
                .entry(layer.to_string())
                .or_default()
                .push(lat);
            self.by_purpose
                .entry(purpose.to_string())
                .or_default()
                .push(lat);
        }
    }

    /// An overreach verdict: counted by result, and each action's first and latest verdicts
    /// kept until its next first attempt closes it.
    fn validation(&mut self, env: &Envelope, agent: &str, attempt: u32, result: &str) {
        let t = self.turn_of(env);
        t.validations += 1;
        if result != "passed" {
            t.validation_failures += 1;
        }
        let v = &mut self.m.validation;
        v.verdicts += 1;
        match result {
            "retry" => v.retries += 1,
            "auto_corrected" => v.auto_corrected += 1,
            "flagged_for_gm" => v.flagged_for_gm += 1,
            _ => {}
        }
        let key = (env.session_number, env.turn_number, agent.to_string());
        let passed = result == "passed";
        if attempt <= 1 || !self.last_action.contains_key(&key) {
            close_action(v, self.last_action.remove(&key));
            self.last_action.insert(key, (passed, passed));
        } else if let Some(a) = self.last_action.get_mut(&key) {
            a.1 = passed;
        }
    }

    /// A roll: its faces, successes and outcome, and a helper's roll as help given.
    fn dice_rolled(
        &mut self,
        env: &Envelope,
        agent: &str,
        purpose: RollPurpose,
        helping: Option<&String>,
        r: &RollResult,
    ) {
        let dice = &mut self.m.dice;
        dice.rolls += 1;
        for d in &r.dice {
            if (1..=6).contains(&d.face) {
                dice.faces[usize::from(d.face - 1)] += 1;
            }
            if d.laser_feelings {
                dice.laser_feelings += 1;
            }
        }
        *dice.successes.entry(r.successes.min(3)).or_default() += 1;
        *dice
            .outcomes
            .entry(r.outcome.as_str().to_string())
            .or_default() += 1;
        if purpose == RollPurpose::Helper
            && let Some(target) = lasers::given(helping)
        {
            let to = self.roster.agent_of(target);
            let at = (env.session_number, env.turn_number);
            if let Some(c) = pair(&mut self.pairs, agent, &to, at) {
                c.helps += 1;
            }
        }
    }

    /// The party's discussion: stances on a proposal and votes (between pairs of players), and
    /// each discussion's latest consensus.
    fn party(&mut self, env: &'a Envelope) {
        let at = (env.session_number, env.turn_number);
        self.m.has_party_discussion = true;
        let toward = |id: Option<&String>| lasers::given(id).map(|c| self.roster.agent_of(c));
        match &env.event {
            Event::OocMessage {
                agent, stance, on, ..
            } => {
                let stance = stance.as_str();
                if let Some(on) = toward(on.as_ref())
                    && matches!(stance, "agree" | "disagree")
                    && let Some(c) = pair(&mut self.pairs, agent, &on, at)
                {
                    if stance == "agree" {
                        c.agree += 1;
                    } else {
                        c.disagree += 1;
                    }
                }
            }
            Event::VoteCast { agent, vote, .. } => {
                if let Some(v) = toward(Some(vote))
                    && let Some(c) = pair(&mut self.pairs, agent, &v, at)
                {
                    c.votes += 1;
                }
            }
            Event::Consensus { outcome, .. } => {
                if outcome.as_str() == "conflicted" {
                    *self.conflicted_rounds.entry(at.0).or_default() += 1;
                }
                // A later round of the same discussion replaces the earlier one.
                let d = self.discussions.entry(at).or_insert((env, 0));
                *d = (env, d.1 + 1);
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Metrics {
        for (_, a) in std::mem::take(&mut self.last_action) {
            close_action(&mut self.m.validation, Some(a));
        }
        let mut m = self.m;
        m.per_turn = self
            .turns
            .into_values()
            .filter(|t| t.turn > 0 && (t.calls > 0 || t.validations > 0))
            .collect();
        for (by, groups) in [("layer", self.by_layer), ("purpose", self.by_purpose)] {
            for (key, mut v) in groups {
                v.sort_unstable();
                m.latency.push(Latency {
                    by: by.into(),
                    key,
                    count: v.len(),
                    p50_ms: percentile(&v, 50.0),
                    p95_ms: percentile(&v, 95.0),
                });
            }
        }
        discussions(
            &mut m,
            self.roster,
            self.discussions,
            &self.conflicted_rounds,
        );
        m.pairs = pair_stats(self.pairs);
        m
    }
}

/// Each discussion as its latest consensus, counted per session, and whose plans were adopted.
fn discussions(
    m: &mut Metrics,
    roster: &Roster,
    latest: BTreeMap<(u32, u32), (&Envelope, u32)>,
    conflicted_rounds: &BTreeMap<u32, u32>,
) {
    let mut consensus: BTreeMap<u32, ConsensusCount> = BTreeMap::new();
    for ((sn, tn), (env, rounds)) in latest {
        let Event::Consensus {
            outcome,
            plan,
            proposer,
            dissent,
            ..
        } = &env.event
        else {
            continue;
        };
        let c = consensus.entry(sn).or_insert_with(|| ConsensusCount {
            session: sn,
            outcomes: BTreeMap::new(),
            discussions: 0,
            conflicted_rounds: conflicted_rounds.get(&sn).copied().unwrap_or(0),
        });
        c.discussions += 1;
        let outcome = outcome.as_str();
        *c.outcomes.entry(outcome.to_string()).or_default() += 1;
        let (plan, proposer) = (
            lasers::given(plan.as_ref()),
            lasers::given(proposer.as_ref()),
        );
        m.discussions.push(Discussion {
            session: sn,
            turn: tn,
            seq: env.seq,
            rounds,
            outcome: outcome.to_string(),
            plan: plan.map(String::from),
            proposer: proposer.map(|p| roster.agent_of(p)),
            dissent: dissent.iter().map(|a| roster.agent_of(a)).collect(),
        });
        if outcome != "conflicted"
            && plan.is_some()
            && let Some(p) = proposer
        {
            let p = roster.agent_of(p);
            *m.adopted_by.entry(p.clone()).or_default() += 1;
            *m.adopted_by_session
                .entry(sn)
                .or_default()
                .entry(p)
                .or_default() += 1;
        }
    }
    m.consensus = consensus.into_values().collect();
}

/// Each (from, to) pair's counts: in total, per session and turn by turn.
fn pair_stats(pairs: PairsByTurn) -> Vec<PairStats> {
    pairs
        .into_iter()
        .map(|((from, to), by_turn)| {
            let mut total = PairCounts::default();
            let mut by_session: BTreeMap<u32, PairCounts> = BTreeMap::new();
            for ((sn, _), c) in &by_turn {
                total.add(c);
                by_session.entry(*sn).or_default().add(c);
            }
            PairStats {
                from,
                to,
                total,
                by_session,
                by_turn: by_turn
                    .into_iter()
                    .map(|((sn, tn), c)| (sn, tn, c))
                    .collect(),
            }
        })
        .collect()
}

fn close_action(v: &mut ValidationStats, action: Option<(bool, bool)>) {
    if let Some((first, last)) = action {
        v.actions += 1;
        if !first {
            v.first_pass_failures += 1;
        }
        if !last {
            v.final_failures += 1;
        }
    }
}

fn pair<'a>(
    pairs: &'a mut PairsByTurn,
    from: &str,
    to: &str,
    at: (u32, u32),
) -> Option<&'a mut PairCounts> {
    // Backing one's own plan is no relationship.
    if from == to || from.is_empty() || to.is_empty() {
        return None;
    }
    let c = pairs
        .entry((from.to_string(), to.to_string()))
        .or_default()
        .entry(at)
        .or_default();
    Some(c)
}

/// Who led a session: the proposer with the most adopted plans (ties: none).
pub fn leader(adopted: &BTreeMap<String, u32>) -> Option<String> {
    let max = adopted.values().copied().max()?;
    let top: Vec<&String> = adopted
        .iter()
        .filter(|(_, n)| **n == max)
        .map(|(a, _)| a)
        .collect();
    (top.len() == 1 && max > 0).then(|| top[0].clone())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::lasers::rows::row;
    use serde_json::json;

    fn call(turn: u32, layer: &str, purpose: &str, attempt: u32, lat: u64, ok: bool) -> Value {
        row(
            json!({"event_type": "model_call", "session_number": 1, "turn_number": turn,
               "agent": "alex", "layer": layer, "purpose": purpose, "attempt": attempt,
               "latency_ms": lat, "usage": {"input_tokens": 100, "output_tokens": 10},
               "reply": if ok { json!("{}") } else { Value::Null },
               "error": if ok { Value::Null } else { json!("HTTP 429") }}),
        )
    }

    fn verdict(turn: u32, agent: &str, attempt: u32, result: &str) -> Value {
        row(
            json!({"event_type": "validation", "session_number": 1, "turn_number": turn,
               "agent": agent, "attempt": attempt, "result": result}),
        )
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 95.0), 95);
        assert_eq!(percentile(&[7], 95.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn model_calls_count_retries_errors_tokens_and_latency_by_layer() {
        let events = vec![
            call(1, "player", "strategic_intent", 1, 900, false),
            call(1, "player", "strategic_intent", 2, 100, true),
            call(1, "character", "character_action", 1, 300, true),
            call(2, "character", "character_action", 1, 500, true),
        ];
        let m = metrics(&events);
        assert_eq!(
            (
                m.model.calls,
                m.model.attempts,
                m.model.retries,
                m.model.errors
            ),
            (3, 4, 1, 1)
        );
        assert_eq!(m.model.tokens.input, 400);
        assert_eq!(m.per_turn.len(), 2);
        assert_eq!(m.per_turn[0].tokens.input, 300);
        assert_eq!(m.per_turn[0].latency_ms, 1300);
        let player = m.latency.iter().find(|l| l.key == "player").unwrap();
        // The failed attempt has no reply: it is not a response time.
        assert_eq!((player.count, player.p50_ms), (1, 100));
        let character = m.latency.iter().find(|l| l.key == "character").unwrap();
        assert_eq!((character.p50_ms, character.p95_ms), (300, 500));
        assert_eq!(m.tokens_by_agent["alex"].output, 40);
    }

    #[test]
    fn validation_rates_are_per_action_first_pass_and_after_retries() {
        let events = vec![
            verdict(1, "alex", 1, "passed"),
            verdict(2, "alex", 1, "retry"),
            verdict(2, "alex", 2, "passed"),
            verdict(3, "alex", 1, "retry"),
            verdict(3, "alex", 2, "retry"),
            verdict(3, "alex", 3, "auto_corrected"),
            verdict(3, "sam", 1, "passed"),
        ];
        let v = metrics(&events).validation;
        assert_eq!(
            (v.actions, v.first_pass_failures, v.final_failures),
            (4, 2, 1)
        );
        assert_eq!(v.retries, 3);
        assert_eq!(v.first_pass_rate(), Some(0.5));
        assert_eq!(v.final_rate(), Some(0.25));
    }

    #[test]
    fn party_events_feed_consensus_leadership_and_relationships() {
        // The recorded party's start: alex plays zara, sam plays rex.
        let start = row(json!({"event_type": "session_started"}));
        let events = vec![
            start,
            row(
                json!({"event_type": "ooc_message", "session_number": 1, "turn_number": 1, "agent": "sam",
                   "stance": "agree", "on": "alex", "message": "good plan"}),
            ),
            row(
                json!({"event_type": "ooc_message", "session_number": 1, "turn_number": 1, "agent": "alex",
                   "stance": "disagree", "on": "sam", "message": "no"}),
            ),
            row(
                json!({"event_type": "consensus", "session_number": 1, "turn_number": 1, "outcome": "majority",
                   "plan": "sneak in", "proposer": "alex"}),
            ),
            row(
                json!({"event_type": "consensus", "session_number": 1, "turn_number": 2, "outcome": "conflicted",
                   "plan": null, "proposer": null}),
            ),
            row(
                json!({"event_type": "dice_rolled", "session_number": 1, "turn_number": 2, "agent": "sam",
                   "purpose": "helper", "helping": "zara",
                   "result": {"number": 5, "task": "feelings", "dice": [{"face": 6, "success": true,
                   "laser_feelings": false}], "successes": 1, "outcome": "complication"}}),
            ),
        ];
        let m = metrics(&events);
        assert!(m.has_party_discussion);
        assert_eq!(m.consensus[0].outcomes["majority"], 1);
        assert_eq!(m.consensus[0].outcomes["conflicted"], 1);
        assert_eq!(m.adopted_by["alex"], 1);
        assert_eq!(leader(&m.adopted_by).as_deref(), Some("alex"));
        let sam_alex = m
            .pairs
            .iter()
            .find(|p| p.from == "sam" && p.to == "alex")
            .unwrap();
        assert_eq!((sam_alex.total.agree, sam_alex.total.helps), (1, 1));
        assert_eq!(sam_alex.total.support(), 2);
        let alex_sam = m.pairs.iter().find(|p| p.from == "alex").unwrap();
        assert_eq!(alex_sam.total.disagree, 1);
        assert_eq!(m.dice.faces, [0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn without_party_events_there_is_no_discussion_to_report() {
        let m = metrics(&[verdict(1, "alex", 1, "passed")]);
        assert!(!m.has_party_discussion);
        assert!(m.consensus.is_empty() && m.pairs.is_empty() && m.adopted_by.is_empty());
        assert_eq!(leader(&m.adopted_by), None);
    }

    #[test]
    fn a_fair_die_has_a_small_chi_square() {
        let mut d = DiceStats {
            faces: [10; 6],
            ..DiceStats::default()
        };
        assert_eq!(d.chi_square(), Some(0.0));
        d.faces = [60, 0, 0, 0, 0, 0];
        assert!(d.chi_square().unwrap() > 100.0);
        assert_eq!(DiceStats::default().chi_square(), None);
    }

    #[test]
    fn a_discussion_counts_once_by_how_it_ended_and_the_proposer_leads() {
        let c = |turn: u32, round: u32, outcome: &str, proposer: Option<&str>| {
            row(
                json!({"event_type": "consensus", "session_number": 1, "turn_number": turn,
                "round": round, "outcome": outcome, "plan": proposer.map(|p| format!("plan of {p}")),
                "proposer": proposer, "dissent": ["jo"]}),
            )
        };
        let events = vec![
            c(1, 1, "unanimous", Some("alex")),
            c(2, 1, "conflicted", Some("sam")),
            c(2, 2, "conflicted", Some("alex")),
            c(2, 3, "majority", Some("sam")),
            c(3, 1, "conflicted", Some("sam")),
            c(3, 2, "vote", Some("sam")),
            // Backing one's own plan is not a relationship.
            row(
                json!({"event_type": "ooc_message", "session_number": 1, "turn_number": 3,
                "agent": "sam", "stance": "agree", "on": "sam"}),
            ),
            row(
                json!({"event_type": "gm_roll_override", "session_number": 1, "turn_number": 3,
                "agent": "sam", "override": "keep"}),
            ),
            row(
                json!({"event_type": "gm_roll_override", "session_number": 1, "turn_number": 3,
                "agent": "sam", "override": "success"}),
            ),
        ];
        let m = metrics(&events);
        let c = &m.consensus[0];
        assert_eq!((c.discussions, c.conflicted_rounds), (3, 3));
        assert_eq!(
            c.outcomes
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>(),
            [("majority", 1), ("unanimous", 1), ("vote", 1)]
        );
        assert_eq!(m.adopted_by["sam"], 2);
        assert_eq!(m.adopted_by["alex"], 1);
        assert_eq!(leader(&m.adopted_by).as_deref(), Some("sam"));
        let rounds: Vec<u32> = m.discussions.iter().map(|d| d.rounds).collect();
        assert_eq!(rounds, [1, 3, 2]);
        assert_eq!(m.discussions[1].dissent, ["jo"]);
        assert!(m.pairs.is_empty(), "{:?}", m.pairs);
        assert_eq!(m.gm_overrides, 1, "keeping a roll is no override");
        // A tie has no leader.
        let mut tie = BTreeMap::new();
        tie.insert("alex".to_string(), 2);
        tie.insert("sam".to_string(), 2);
        assert_eq!(leader(&tie), None);
    }

    #[test]
    fn relationships_are_kept_turn_by_turn_and_summed_per_session() {
        let ooc = |turn: u32, session: u32, stance: &str| {
            row(
                json!({"event_type": "ooc_message", "session_number": session, "turn_number": turn,
                "agent": "sam", "stance": stance, "on": "alex"}),
            )
        };
        let m = metrics(&[
            ooc(1, 1, "agree"),
            ooc(2, 1, "agree"),
            ooc(2, 1, "disagree"),
            ooc(1, 2, "agree"),
        ]);
        let p = &m.pairs[0];
        assert_eq!((p.from.as_str(), p.to.as_str()), ("sam", "alex"));
        assert_eq!((p.total.agree, p.total.disagree), (3, 1));
        assert_eq!(p.by_session[&1].agree, 2);
        assert_eq!(p.by_session[&2].agree, 1);
        let turns: Vec<(u32, u32, u32)> = p
            .by_turn
            .iter()
            .map(|(s, t, c)| (*s, *t, c.agree))
            .collect();
        assert_eq!(turns, [(1, 1, 1), (1, 2, 1), (2, 1, 1)]);
    }

    #[test]
    fn dice_count_faces_successes_and_laser_feelings_as_rolled() {
        let roll = |faces: &[u64], number: u64| {
            let dice: Vec<Value> = faces
                .iter()
                .map(
                    |f| json!({"face": f, "success": *f <= number, "laser_feelings": *f == number}),
                )
                .collect();
            let successes = faces.iter().filter(|f| **f <= number).count();
            let outcome = ["failure", "complication", "success", "critical"][successes.min(3)];
            row(
                json!({"event_type": "dice_rolled", "session_number": 1, "turn_number": 1, "agent": "alex",
                "purpose": "action", "result": {"number": number, "task": "lasers", "dice": dice,
                "successes": successes,
                "outcome": outcome}}),
            )
        };
        let m = metrics(&[roll(&[1, 4], 3), roll(&[3, 6, 2], 3), roll(&[5], 3)]);
        assert_eq!(m.dice.faces, [1, 1, 1, 1, 1, 1]);
        assert_eq!(
            (m.dice.rolls, m.dice.dice(), m.dice.laser_feelings),
            (3, 6, 1)
        );
        assert_eq!(m.dice.successes[&1], 1);
        assert_eq!(m.dice.successes[&2], 1);
        assert_eq!(m.dice.successes[&0], 1);
        assert_eq!(m.dice.outcomes["success"], 1);
        assert_eq!(m.dice.chi_square(), Some(0.0));
        // 12 dice, all sixes: chi-square = 5 × 2 + (12 − 2)² / 2 = 60.
        let m = metrics(&[roll(&[6; 12], 3)]);
        assert!((m.dice.chi_square().unwrap() - 60.0).abs() < 1e-9);
    }

    /// A newer troupe's kind in the middle of a recorded session counts in no figure, and
    /// every figure is as without it; a known kind that does not read counts in none either
    /// and is named, with why.
    #[test]
    fn a_newer_kind_changes_no_figure_and_a_damaged_one_is_named() {
        let party = crate::lasers::rows::party();
        let json = |events: &[Value]| serde_json::to_string(&metrics(events)).unwrap();
        let before = json(&party);
        let newer = crate::lasers::rows::party_with_newer("weather_changed", json!({"sky": "red"}));
        assert_eq!(json(&newer), before);

        let mut damaged = party;
        let i = damaged
            .iter()
            .position(|r| r["event_type"] == "model_call")
            .unwrap();
        damaged[i]["usage"] = json!("a lot");
        let m = metrics(&damaged);
        assert_eq!(m.unreadable.len(), 1, "{:?}", m.unreadable);
        let u = &m.unreadable[0];
        assert_eq!(
            (u.event_type.as_str(), u.seq),
            ("model_call", damaged[i]["seq"].as_u64().unwrap())
        );
        assert!(!u.error.is_empty());
        // The damaged call is no attempt counted: the figures say what was read.
        let recorded = metrics(&crate::lasers::rows::party()).model.attempts;
        assert_eq!(m.model.attempts + 1, recorded);
    }
}
