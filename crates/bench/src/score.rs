//! A scenario's scores, from the events its sessions logged and nothing else (no judge model).
//! Each score is defined in docs/bench.md; the rules that flag a leaked secret or an ignored
//! directive are the report's own (`troupe_report::flags`), so `troupe report` shows the same
//! cases a bench counts.
//!
//! Scores are split in two: `Scores` depend only on what was said and decided (the same seed
//! and the same replies give the same scores, byte for byte), `Timing` on the clock.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;
use troupe_agents::Outcome;
use troupe_lasers::{Envelope, Event, WhisperScope};
use troupe_report::{Flag, FlagKind, Known, Roster, content_words, flags, metrics, scorecard};

use crate::suite::{Question, Scenario, mentions};

/// What a model did, counted. Rates are `None` when there was nothing to count.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Scores {
    pub sessions: u32,
    /// Turns completed.
    pub turns: u32,
    /// Declared actions the overreach check saw (first attempts).
    pub actions: u32,
    /// Attempts the overreach check did not pass: the character narrated a result.
    pub overreach: u32,
    pub overreach_per_100_actions: Option<f64>,
    /// Player-only secrets told (one per whisper and agent it reached).
    pub secrets: u32,
    /// Secrets the agent never repeated where others hear it (report flag "secret revealed").
    pub secrets_kept: u32,
    /// Character-only secrets told (one per whisper and agent it reached), and those its
    /// character never said where its player hears it (report flag "character-only secret
    /// revealed").
    pub character_secrets: u32,
    pub character_secrets_kept: u32,
    /// Directives of 4+ content words whose character then acted in the same turn.
    pub directives: u32,
    /// Of those, the ones whose action the report does not flag as ignoring them.
    pub directives_followed: u32,
    /// Party discussions held, and how each ended (`unanimous`, `majority`, `vote`, …).
    pub decisions: u32,
    pub decided_by: BTreeMap<String, u32>,
    /// Discussion rounds, over every discussion.
    pub discussion_rounds: u32,
    /// LASER FEELINGS moments (`laser_feelings_question` events), and those whose question is
    /// a question (non-empty, with a `?`).
    pub insights: u32,
    pub insight_questions: u32,
    /// The players' decisions after an insight (`insight_decision` events), and those that
    /// changed the action (suite 2.0's answers are warnings, so heeding them is changing).
    pub insight_decisions: u32,
    pub insight_heeded: u32,
    /// Directives given in a turn whose party settled on a plan (the turn's last `consensus`
    /// with a plan), and those carrying 20 % or more of the plan's content words.
    pub plan_directives: u32,
    pub plan_directives_following: u32,
    /// The scenario's memory questions, and those answered (an accepted answer in the agent's
    /// own words in that turn).
    pub memory_questions: u32,
    pub memory_answered: u32,
    /// Model attempts that got a reply (repair re-asks aside), and those whose reply was valid
    /// as it came (no schema problem, so no repair needed).
    pub replies: u32,
    pub replies_valid: u32,
    /// Model attempts with no reply at all, and steps that failed for good.
    pub failed_calls: u32,
    pub phases_failed: u32,
    /// Input plus output tokens of every attempt.
    pub tokens: u64,
    pub tokens_per_turn: Option<f64>,
}

/// What the clock says: the only numbers that differ between two runs of the same seed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timing {
    /// From each session's first event to its last, summed.
    pub wall_ms: u64,
    pub seconds_per_turn: Option<f64>,
    /// Every model attempt's latency, summed.
    pub model_ms: u64,
    pub model_seconds_per_turn: Option<f64>,
}

/// Score one scenario from every event of its campaign (all its sessions, in order).
pub fn score(scenario: &Scenario, events: &[Value]) -> (Scores, Timing) {
    let mut s = Scores::default();
    let mut model_ms = 0;
    for row in scorecard(events) {
        s.sessions += row.sessions;
        s.turns += row.turns;
        s.actions += row.actions;
        s.overreach += row.overreach;
        s.failed_calls += row.failed_calls;
        s.phases_failed += row.phases_failed;
        s.tokens += row.tokens;
        model_ms += row.latency_ms;
    }
    let logged = Logged::read(events);
    count_secrets_and_directives(events, &logged, &mut s);
    count_decisions(events, &mut s);
    count_plan_directives(&logged, &mut s);
    count_replies_and_insights(&logged, &mut s);
    s.memory_questions = u32::try_from(scenario.questions.len()).unwrap_or(u32::MAX);
    s.memory_answered = count(scenario.questions.iter().filter(|q| answered(q, &logged)));
    s.finish();
    let mut t = Timing {
        wall_ms: wall_ms(&logged),
        model_ms,
        ..Timing::default()
    };
    t.finish(s.turns);
    (s, t)
}

/// One logged row this build reads as a Lasers & Feelings event, with the row as written (a
/// memory question's answer is looked for in every string the row holds, as logged).
///
/// Only rows of a kind this build knows that read whole are scored. A kind a newer troupe wrote
/// is skipped: no score counts it. A known kind that does not read (a damaged row) is skipped
/// too, as the scores have always done: each score looked for the fields it needed and passed
/// over a row without them, so skipping it keeps every scores file the bench wrote the same.
struct Logged<'a> {
    env: Envelope,
    row: &'a Value,
}

impl<'a> Logged<'a> {
    fn read(events: &'a [Value]) -> Vec<Logged<'a>> {
        events
            .iter()
            .filter_map(|row| match Known::<Envelope>::read(row) {
                Known::Event(env) => Some(Logged { env, row }),
                Known::Unknown { .. } | Known::Malformed { .. } => None,
            })
            .collect()
    }

    fn place(&self) -> (u32, u32) {
        (self.env.session_number, self.env.turn_number)
    }

    /// The AI player whose decision or words this is, if any: a player seat's decision
    /// ([`Event::decision_agent`]) but an insight's yes or no and a vote, which hold no words of
    /// the player's own to score.
    fn agent(&self) -> Option<&str> {
        match &self.env.event {
            Event::InsightDecision { .. } | Event::VoteCast { .. } => None,
            event => event.decision_agent(),
        }
    }
}

fn count<T>(items: impl Iterator<Item = T>) -> u32 {
    u32::try_from(items.count()).unwrap_or(u32::MAX)
}

/// Secrets of a scope told, and those kept: told less the report's flags of that kind.
fn secrets(
    events: &[Value],
    logged: &[Logged],
    raised: &[Flag],
    scope: WhisperScope,
    kind: FlagKind,
) -> (u32, u32) {
    let roster = Roster::from_events(events);
    let told: u32 = logged
        .iter()
        .filter_map(|l| match &l.env.event {
            Event::Whisper { to, scope: s, .. } if *s == scope => Some(match to {
                Some(_) => 1,
                None => u32::try_from(roster.agents().len()).unwrap_or(0),
            }),
            _ => None,
        })
        .sum();
    let leaked = count(raised.iter().filter(|f| f.kind == kind));
    (told, told.saturating_sub(leaked))
}

fn count_secrets_and_directives(events: &[Value], logged: &[Logged], s: &mut Scores) {
    let raised = flags(events);
    (s.secrets, s.secrets_kept) = secrets(
        events,
        logged,
        &raised,
        WhisperScope::PlayerOnly,
        FlagKind::SecretRevealed,
    );
    (s.character_secrets, s.character_secrets_kept) = secrets(
        events,
        logged,
        &raised,
        WhisperScope::CharacterOnly,
        FlagKind::CharacterSecretRevealed,
    );
    // The latest long-enough directive of each agent in each turn, judged when it acted.
    let acted: BTreeSet<((u32, u32), &str)> = logged
        .iter()
        .filter_map(|l| match &l.env.event {
            Event::CharacterAction { agent, .. } => Some((l.place(), agent.as_str())),
            _ => None,
        })
        .collect();
    let judged: BTreeSet<((u32, u32), &str)> = logged
        .iter()
        .filter_map(|l| match &l.env.event {
            Event::Directive { agent, text, .. } if content_words(text).len() >= 4 => {
                Some((l.place(), agent.as_str()))
            }
            _ => None,
        })
        .filter(|key| acted.contains(key))
        .collect();
    s.directives = count(judged.iter());
    let ignored = count(
        raised
            .iter()
            .filter(|f| f.kind == FlagKind::DirectiveIgnored),
    );
    s.directives_followed = s.directives.saturating_sub(ignored);
}

fn count_decisions(events: &[Value], s: &mut Scores) {
    for d in metrics(events).discussions {
        s.decisions += 1;
        s.discussion_rounds += d.rounds;
        *s.decided_by.entry(d.outcome).or_default() += 1;
    }
}

fn count_replies_and_insights(logged: &[Logged], s: &mut Scores) {
    for l in logged {
        match &l.env.event {
            // A repair re-ask's reply is the second chance of a reply already counted.
            Event::ModelCall { record, .. } if record.reply.is_some() && !record.repair => {
                s.replies += 1;
                if record.error.is_none() {
                    s.replies_valid += 1;
                }
            }
            Event::InsightDecision { decision, .. } => {
                s.insight_decisions += 1;
                if decision.change_action {
                    s.insight_heeded += 1;
                }
            }
            Event::LaserFeelingsQuestion { question, .. } => {
                s.insights += 1;
                if question.trim().contains('?') {
                    s.insight_questions += 1;
                }
            }
            _ => {}
        }
    }
}

/// Each directive under the plan its party settled on in that turn.
fn count_plan_directives(logged: &[Logged], s: &mut Scores) {
    let mut plans: BTreeMap<(u32, u32), &str> = BTreeMap::new();
    for l in logged {
        if let Event::Consensus {
            outcome,
            plan: Some(plan),
            ..
        } = &l.env.event
            && *outcome != Outcome::Conflicted
        {
            plans.insert(l.place(), plan);
        }
    }
    for l in logged {
        let Event::Directive { text, .. } = &l.env.event else {
            continue;
        };
        let Some(plan) = plans.get(&l.place()) else {
            continue;
        };
        s.plan_directives += 1;
        let want = content_words(plan);
        let said = content_words(text);
        let shared = want.intersection(&said).count();
        if !want.is_empty() && shared * 5 >= want.len() {
            s.plan_directives_following += 1;
        }
    }
}

/// Fields of the envelope, never the agent's words.
const ENVELOPE: &[&str] = &[
    "event_type",
    "timestamp",
    "session_id",
    "session_number",
    "turn_number",
    "phase",
    "seq",
    "agent",
    "character",
];

/// Answered by the decisions and words of the question's AI player (either layer) in its turn.
fn answered(q: &Question, logged: &[Logged]) -> bool {
    let at = (q.session, q.turn);
    logged
        .iter()
        .filter(|l| l.place() == at && l.agent() == Some(q.agent.as_str()))
        .any(|l| {
            let said = strings_of(l.row);
            q.answer.iter().any(|a| mentions(&said, a))
        })
}

/// Every string in an event but its envelope, joined.
fn strings_of(e: &Value) -> String {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Value::Object(map) = e {
        for (k, v) in map {
            if !ENVELOPE.contains(&k.as_str()) {
                walk(v, &mut out);
            }
        }
    }
    out.join("\n")
}

/// Each session's span, first event to last, from the events' timestamps.
fn wall_ms(logged: &[Logged]) -> u64 {
    let mut spans: BTreeMap<u32, (i64, i64)> = BTreeMap::new();
    for l in logged {
        let ms = l.env.timestamp.timestamp_millis();
        let span = spans.entry(l.env.session_number).or_insert((ms, ms));
        span.0 = span.0.min(ms);
        span.1 = span.1.max(ms);
    }
    spans
        .values()
        .map(|(a, b)| u64::try_from(b - a).unwrap_or(0))
        .sum()
}

fn per(n: f64, d: u32, scale: f64) -> Option<f64> {
    (d > 0).then(|| round(n * scale / f64::from(d)))
}

/// Two decimals: enough to compare models, and stable in JSON.
fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Scores {
    /// Add another scenario's counts (rates are recomputed by `finish`).
    pub fn add(&mut self, o: &Scores) {
        self.sessions += o.sessions;
        self.turns += o.turns;
        self.actions += o.actions;
        self.overreach += o.overreach;
        self.secrets += o.secrets;
        self.secrets_kept += o.secrets_kept;
        self.character_secrets += o.character_secrets;
        self.character_secrets_kept += o.character_secrets_kept;
        self.directives += o.directives;
        self.directives_followed += o.directives_followed;
        self.decisions += o.decisions;
        for (k, v) in &o.decided_by {
            *self.decided_by.entry(k.clone()).or_default() += v;
        }
        self.discussion_rounds += o.discussion_rounds;
        self.insights += o.insights;
        self.insight_questions += o.insight_questions;
        self.insight_decisions += o.insight_decisions;
        self.insight_heeded += o.insight_heeded;
        self.plan_directives += o.plan_directives;
        self.plan_directives_following += o.plan_directives_following;
        self.memory_questions += o.memory_questions;
        self.memory_answered += o.memory_answered;
        self.replies += o.replies;
        self.replies_valid += o.replies_valid;
        self.failed_calls += o.failed_calls;
        self.phases_failed += o.phases_failed;
        self.tokens += o.tokens;
    }

    pub fn finish(&mut self) {
        self.overreach_per_100_actions = per(f64::from(self.overreach), self.actions, 100.0);
        self.tokens_per_turn = per(self.tokens as f64, self.turns, 1.0);
    }
}

impl Timing {
    pub fn add(&mut self, o: &Timing) {
        self.wall_ms += o.wall_ms;
        self.model_ms += o.model_ms;
    }

    pub fn finish(&mut self, turns: u32) {
        self.seconds_per_turn = per(self.wall_ms as f64, turns, 0.001);
        self.model_seconds_per_turn = per(self.model_ms as f64, turns, 0.001);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A whole logged row: the envelope around `v` (its own timestamp kept), as the table
    /// writes it, so that it reads as the game's event.
    fn ev(seq: u64, session: u32, turn: u32, v: Value) -> Value {
        let mut row = json!({"seq": seq, "timestamp": "2026-01-01T00:00:00Z",
            "session_id": format!("s{session}"), "session_number": session,
            "turn_number": turn, "phase": null});
        let o = row.as_object_mut().unwrap();
        for (k, v) in v.as_object().unwrap() {
            o.insert(k.clone(), v.clone());
        }
        row
    }

    fn memory_scenario() -> Scenario {
        Scenario {
            id: "memory".into(),
            about: String::new(),
            family: None,
            seed: None,
            campaign: "solo.json".into(),
            sessions: vec!["a.yaml".into(), "b.yaml".into()],
            questions: vec![
                Question {
                    session: 2,
                    turn: 1,
                    agent: "alex".into(),
                    ask: "who".into(),
                    answer: vec!["Ilsa".into()],
                },
                Question {
                    session: 2,
                    turn: 1,
                    agent: "alex".into(),
                    ask: "vault".into(),
                    answer: vec!["4471".into()],
                },
            ],
        }
    }

    #[test]
    fn a_memory_question_is_answered_by_the_agents_words_in_its_turn_only() {
        let events = vec![
            // Said in session 1: does not count for a question of session 2.
            ev(
                1,
                1,
                1,
                json!({"event_type": "character_action", "agent": "alex",
                "attempt": 1,
                "action": {"action": "I wave to vault 4471.", "dialogue": "", "task_type": "lasers"}}),
            ),
            ev(
                2,
                2,
                1,
                json!({"event_type": "strategic_intent", "agent": "alex",
                "intent": {"strategy": "Tell him ilsa sold it.", "directive": "", "proposal": ""}}),
            ),
            // Another agent's words do not count either.
            ev(
                3,
                2,
                1,
                json!({"event_type": "character_action", "agent": "sam",
                "attempt": 1,
                "action": {"action": "Vault 4471!", "dialogue": "", "task_type": "feelings"}}),
            ),
        ];
        let (s, _) = score(&memory_scenario(), &events);
        assert_eq!((s.memory_questions, s.memory_answered), (2, 1));
    }

    #[test]
    fn a_repeated_secret_and_an_ignored_directive_cost_points() {
        let whisper = json!({"event_type": "whisper", "to": "alex", "scope": "player_only",
            "text": "The beacon was faked by the Consortium."});
        let directive = json!({"event_type": "directive", "agent": "alex", "character": "zara",
            "text": "Restore power to the docking bay doors carefully."});
        let kept = vec![
            ev(1, 1, 1, whisper.clone()),
            ev(2, 1, 1, directive.clone()),
            ev(
                3,
                1,
                1,
                json!({"event_type": "character_action", "agent": "alex",
                "attempt": 1,
                "action": {"action": "I restore power to the bay doors, carefully.", "dialogue": "",
                    "task_type": "lasers"}}),
            ),
        ];
        let leaked = vec![
            ev(1, 1, 1, whisper),
            ev(2, 1, 1, directive),
            ev(
                3,
                1,
                1,
                json!({"event_type": "character_action", "agent": "alex",
                "attempt": 1,
                "action": {"action": "I shout that the beacon was faked by the Consortium.",
                    "dialogue": "", "task_type": "feelings"}}),
            ),
        ];
        let scenario = memory_scenario();
        let (good, _) = score(&scenario, &kept);
        let (bad, _) = score(&scenario, &leaked);
        assert_eq!((good.secrets, good.secrets_kept), (1, 1));
        assert_eq!((bad.secrets, bad.secrets_kept), (1, 0));
        assert_eq!((good.directives, good.directives_followed), (1, 1));
        assert_eq!((bad.directives, bad.directives_followed), (1, 0));
    }

    #[test]
    fn a_character_only_secret_said_aloud_is_not_kept() {
        let whisper = json!({"event_type": "whisper", "to": "alex", "scope": "character_only",
            "text": "Zara-7 recognises the station's markings: her own factory serial is painted on the hull."});
        let reaction = |text: &str| {
            ev(
                2,
                1,
                1,
                json!({"event_type": "character_reaction", "agent": "alex", "text": text}),
            )
        };
        let scenario = memory_scenario();
        let kept = vec![
            ev(1, 1, 1, whisper.clone()),
            reaction("Zara-7 runs a hand over the hull and says nothing."),
        ];
        let told = vec![
            ev(1, 1, 1, whisper),
            reaction("Zara-7 gasps: 'My factory serial is painted on the station's markings!'"),
        ];
        let (good, _) = score(&scenario, &kept);
        let (bad, _) = score(&scenario, &told);
        assert_eq!(
            (good.character_secrets, good.character_secrets_kept),
            (1, 1)
        );
        assert_eq!((bad.character_secrets, bad.character_secrets_kept), (1, 0));
        // The player-only count is its own.
        assert_eq!((bad.secrets, bad.secrets_kept), (0, 0));
    }

    #[test]
    fn replies_count_valid_only_when_they_needed_no_repair() {
        let call = |reply: Value, error: Value, repair: bool| {
            ev(
                1,
                1,
                1,
                json!({"event_type": "model_call", "agent": "alex", "layer": "player",
                "purpose": "strategic_intent", "attempt": 1, "provider": "replay",
                "request_hash": "h", "messages": [], "reply": reply, "error": error,
                "retry_in_ms": null, "repair": repair, "latency_ms": 10,
                "usage": {"input_tokens": 3, "output_tokens": 1}}),
            )
        };
        let events = vec![
            call(json!("{}"), Value::Null, false),
            call(json!("nope"), json!("not JSON"), false),
            call(json!("{}"), Value::Null, true),
            call(Value::Null, json!("timeout"), false),
        ];
        let (s, t) = score(&memory_scenario(), &events);
        assert_eq!((s.replies, s.replies_valid, s.failed_calls), (2, 1, 1));
        assert_eq!((s.tokens, t.model_ms), (16, 40));
    }

    #[test]
    fn wall_time_spans_each_session_apart() {
        let at = |session, ts: &str| {
            ev(
                1,
                session,
                1,
                json!({"event_type": "turn_started", "timestamp": ts}),
            )
        };
        let events = vec![
            at(1, "2026-01-01T00:00:00Z"),
            at(1, "2026-01-01T00:00:02.500Z"),
            at(2, "2026-01-02T00:00:00Z"),
            at(2, "2026-01-02T00:00:01Z"),
        ];
        assert_eq!(wall_ms(&Logged::read(&events)), 3500);
    }

    /// A kind a newer troupe writes, in the middle of a real party session, changes no score
    /// and no time (its timestamp lies years after the session: counted, it would).
    #[test]
    fn a_newer_event_kind_in_a_recorded_session_changes_no_score() {
        let log: Vec<Value> = include_str!("../../fuzz/data/party.session-1.jsonl")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut newer = log.clone();
        newer.insert(
            log.len() / 2,
            json!({"seq": 9999, "timestamp": "2031-01-01T00:00:00Z", "session_id": "s",
                "session_number": 1, "turn_number": 1, "phase": null,
                "event_type": "weather_changed", "agent": "alex", "sky": "red"}),
        );
        let scenario = memory_scenario();
        let before = score(&scenario, &log);
        assert!(before.0.turns > 0 && before.0.replies > 0 && before.0.decisions > 0);
        assert!(before.0.directives > 0 && before.1.wall_ms > 0);
        assert_eq!(score(&scenario, &newer), before);
    }
}
