//! One transcript row per event: (channel, what was said or done, the reasoning behind it).
//!
//! The events are read as Lasers & Feelings' own (`crate::lasers`). `describe` asks each family
//! of events in turn (notes, the GM, the players, the characters, the party); the first that
//! knows the event's kind renders it. A kind the transcript has no words for (a GM check, a
//! seat handed over), one a newer troupe wrote, or a known kind that does not read is shown as
//! logged, so nothing is hidden.

use std::fmt::Write;

use serde_json::Value;
use troupe_agents::{ActionDecl, Intent};
use troupe_lasers::{
    Envelope, Event, FailureChoice, Phase, Recalled, RollOverride, RollPurpose, Ruling,
};
use troupe_rules::RollResult;
use troupe_validator::Verdict;

use super::{Report, details};
use crate::ev::ty;
use crate::known::Known;
use crate::lasers::{self, given, logged_word};
use crate::svg::esc;

/// A transcript row: the channel tag, what was said or done, the reasoning beside it.
pub(super) type Row = (&'static str, String, String);

impl Report<'_> {
    /// A row of the log (`row`, as logged; `k`, as read) as (channel, what was said or done,
    /// the reasoning), or None to leave it out.
    pub(super) fn describe(&self, row: &Value, k: &lasers::Row) -> Option<Row> {
        let env = match k {
            Known::Event(env) => env,
            Known::Unknown { .. } => return Some(as_logged(row)),
            Known::Malformed {
                event_type, error, ..
            } => return Some(unreadable(row, event_type, error)),
        };
        if matches!(
            env.event,
            Event::TurnCompleted | Event::PhaseStarted | Event::PhaseCompleted
        ) {
            return None;
        }
        Some(
            self.note(env)
                .or_else(|| self.gm(&env.event))
                .or_else(|| self.player(&env.event))
                .or_else(|| self.character(&env.event))
                .or_else(|| self.party(&env.event))
                .unwrap_or_else(|| as_logged(row)),
        )
    }

    /// The player's name for an agent, escaped.
    fn who(&self, a: &str) -> String {
        esc(&self.roster.player(a))
    }

    /// The character's name for an agent, escaped.
    fn ch(&self, a: &str) -> String {
        esc(&self.roster.character(a))
    }

    /// The player's name for a character id as the log names it (a helper, a vote, a proposer).
    fn player_of(&self, id: &str) -> String {
        esc(&self.roster.player(&self.roster.agent_of(id)))
    }

    /// The session's bookkeeping: start and end, undo, memory, failures, trimmed prompts.
    fn note(&self, env: &Envelope) -> Option<Row> {
        let said = match &env.event {
            Event::SessionStarted { seed, model, .. } => {
                format!("Session started · seed {seed} · model {}", esc(model))
            }
            Event::SessionEnded { reason } => format!("Session ended: {}", esc(reason)),
            Event::SessionResumed { at, .. } => format!("Session resumed at {}", esc(at)),
            Event::EventsUndone { what, .. } => format!("The GM undid {}", esc(what)),
            Event::MemoryRetrieved {
                agent,
                recalled,
                status,
                ..
            } => return Some(self.memory_retrieved(agent, recalled, status)),
            Event::ClarificationEnded { reason } => format!("Questions over: {}", esc(reason)),
            Event::PhaseFailed {
                agent,
                error,
                failures,
            } => format!(
                "<span class=\"bad\">{} failed for {} (failure {failures})</span>: {}",
                esc(env.phase.map_or("", Phase::as_str)),
                self.who(agent),
                esc(error)
            ),
            Event::MemoryStorage { status, .. } => format!("Memory: {}", esc(status)),
            Event::ContextTrimmed {
                agent,
                purpose,
                prompt_tokens,
                budget,
                ..
            } => format!(
                "{}'s {} prompt trimmed to fit ({prompt_tokens} tokens, budget {budget})",
                self.who(agent),
                esc(purpose),
            ),
            _ => return None,
        };
        Some(("NOTE", said, String::new()))
    }

    /// What memory recalled for a player, each memory with its score beside the line.
    fn memory_retrieved(&self, agent: &str, recalled: &[Recalled], status: &str) -> Row {
        let mut mind = String::new();
        if !recalled.is_empty() {
            let mut list = String::from("<ul>");
            for r in recalled {
                let _ = write!(
                    list,
                    "<li>({}) {} <span class=\"meta\">score {:.2}, confidence {:.2}, from {}</span></li>",
                    esc(&logged_word(&r.layer)),
                    esc(&r.text),
                    r.score,
                    r.confidence,
                    esc(&r.source)
                );
            }
            list.push_str("</ul>");
            mind = details(&format!("{} memories recalled", recalled.len()), &list);
        }
        (
            "NOTE",
            format!("Memory for {}: {}", self.who(agent), esc(status)),
            mind,
        )
    }

    /// What the GM says and rules: narration, answers, rulings, rolls, whispers, scene ends.
    fn gm(&self, event: &Event) -> Option<Row> {
        let said = match event {
            Event::GmNarration { text } => format!("<b>Narration</b>{}", quote(text)),
            Event::GmOutcome { text } => format!("<b>Outcome</b>{}", quote(text)),
            Event::GmAnswers { answers, .. } => {
                if answers.is_empty() {
                    "No more questions.".into()
                } else {
                    format!("<b>Answers</b>{}", list(answers))
                }
            }
            Event::GmOoc { round, text } => {
                let said = format!(
                    "<b>GM</b> <span class=\"meta\">(out of character, round {round})</span>{}",
                    quote(text)
                );
                // Out of character: tagged with the players' talk, not the GM's rulings.
                return Some(("OOC", said, String::new()));
            }
            Event::GmReviewedAction { agent, action } => {
                format!("<b>Sets {}'s action</b>{}", self.ch(agent), quote(action))
            }
            Event::GmAdjudication { agent, ruling } => self.ruling(agent, ruling),
            Event::GmForcedResult { success: true } => "/success: the next roll succeeds".into(),
            Event::GmForcedResult { success: false } => "/fail: the next roll fails".into(),
            Event::GmRoll {
                expression, total, ..
            } => format!("/roll {} = {total}", esc(expression)),
            Event::LaserFeelingsAnswer { agent, answer } => {
                format!("<b>Answers {}</b>{}", self.ch(agent), quote(answer))
            }
            Event::GmFailureDecision { agent, choice } => format!(
                "After the failure, for {}: {}",
                self.who(agent),
                esc(choice_word(choice))
            ),
            Event::Whisper { to, scope, text } => format!(
                "<b>Whisper to {}</b> <span class=\"meta\">({})</span>{}",
                given(to.as_ref())
                    .map_or_else(|| "the whole table".to_string(), |t| self.player_of(t)),
                esc(scope.as_str()),
                quote(text)
            ),
            Event::SceneEnded { title } => match given(title.as_ref()) {
                Some(t) => format!("<b>The scene ends:</b> {}", esc(t)),
                None => "<b>The scene ends.</b>".to_string(),
            },
            Event::TimePassed { days: 1 } => "<b>A day passes.</b>".to_string(),
            Event::TimePassed { days } => format!("<b>{days} days pass.</b>"),
            Event::DiceRolled {
                agent,
                purpose,
                helping,
                result,
                ..
            } => {
                let what = if *purpose == RollPurpose::Helper {
                    let helped = helping.as_deref().unwrap_or("");
                    format!(
                        "{} helps {}",
                        self.ch(agent),
                        esc(&self.roster.character(&self.roster.agent_of(helped)))
                    )
                } else {
                    format!(
                        "{} rolls {}",
                        self.ch(agent),
                        esc(&logged_word(&result.task))
                    )
                };
                return Some(("DICE", dice_roll(&what, result), String::new()));
            }
            Event::GmRollOverride {
                agent,
                change,
                result,
            } => {
                let what = match change {
                    RollOverride::Keep => format!("The GM keeps {}'s roll", self.ch(agent)),
                    _ => format!(
                        "<b>The GM overrides {}'s roll</b> ({})",
                        self.ch(agent),
                        esc(change.word())
                    ),
                };
                dice_roll(&what, result)
            }
            _ => return None,
        };
        Some(("GM", said, String::new()))
    }

    /// The GM's ruling on an action: a roll (with its bonuses) or another ruling and its note.
    fn ruling(&self, agent: &str, ruling: &Ruling) -> String {
        let text = match ruling {
            Ruling::Roll {
                task,
                prepared,
                expert,
            } => format!(
                "roll {}{}{}",
                esc(&logged_word(task)),
                if *prepared { ", prepared" } else { "" },
                if *expert { ", expert" } else { "" }
            ),
            Ruling::Revise { note } => format!("revise: {}", esc(note)),
            Ruling::NoRoll { note } => format!("no_roll: {}", esc(note)),
        };
        format!("<b>Ruling for {}</b>: {text}", self.ch(agent))
    }

    /// What a player decides out of character: questions, a private plan, a directive, insight.
    fn player(&self, event: &Event) -> Option<Row> {
        Some(match event {
            Event::ClarifyingQuestions {
                agent, questions, ..
            } => {
                let said = if questions.is_empty() {
                    format!("{} has no questions for the GM", self.who(agent))
                } else {
                    format!("<b>{} asks the GM</b>{}", self.who(agent), list(questions))
                };
                ("OOC", said, String::new())
            }
            Event::StrategicIntent { agent, intent } => self.strategic_intent(agent, intent),
            Event::Directive { agent, text, .. } => (
                "P2C",
                format!(
                    "<b>{} → {}</b> (directive){}",
                    self.who(agent),
                    self.ch(agent),
                    quote(text)
                ),
                String::new(),
            ),
            Event::InsightDecision { agent, decision } => {
                let keep = if decision.change_action {
                    "change the action"
                } else {
                    "keep the action"
                };
                (
                    "OOC",
                    format!("{} decides to {keep}", self.who(agent)),
                    details("why", &format!("<p>{}</p>", esc(&decision.reason))),
                )
            }
            _ => return None,
        })
    }

    /// A player's plan: only that it was made is said; the strategy itself sits in the reasoning.
    fn strategic_intent(&self, agent: &str, i: &Intent) -> Row {
        (
            "OOC",
            format!(
                "<b>{}</b> decides on a plan (private to the player)",
                self.who(agent)
            ),
            details(
                "strategy (player only)",
                &format!(
                    "<p>{}</p><p class=\"meta\">directive in mind</p><p>{}</p>{}",
                    esc(&i.strategy),
                    esc(&i.directive),
                    given(i.proposal.as_ref()).map_or_else(String::new, |p| format!(
                        "<p class=\"meta\">proposal to the party</p><p>{}</p>",
                        esc(p)
                    ))
                ),
            ),
        )
    }

    /// What a character does in the fiction: attempts, the overreach check on them, questions
    /// to the GM in a LASER FEELINGS moment, reactions.
    fn character(&self, event: &Event) -> Option<Row> {
        Some(match event {
            Event::CharacterAction {
                agent,
                attempt,
                action,
            } => self.character_action(agent, *attempt, action),
            Event::Validation {
                agent,
                attempt,
                verdict,
                result,
                corrected,
            } => self.overreach_check(
                agent,
                *attempt,
                verdict,
                &logged_word(result),
                corrected.as_ref(),
            ),
            Event::LaserFeelingsQuestion { agent, question } => (
                "IC",
                format!(
                    "<b>{} asks (LASER FEELINGS)</b>{}",
                    self.ch(agent),
                    quote(question)
                ),
                String::new(),
            ),
            Event::CharacterReaction { agent, text } => (
                "IC",
                format!("<b>{} reacts</b>{}", self.ch(agent), quote(text)),
                String::new(),
            ),
            _ => return None,
        })
    }

    /// An attempt: the action, what is said, the dice pool it suggests; the justification beside.
    fn character_action(&self, agent: &str, attempt: u32, act: &ActionDecl) -> Row {
        let mut said = format!(
            "<b>{} attempts</b> <span class=\"meta\">(attempt {attempt})</span>{}",
            self.ch(agent),
            quote(&act.action)
        );
        if !act.dialogue.is_empty() {
            let _ = write!(said, "<i>Says:</i>{}", quote(&act.dialogue));
        }
        let mut pool = vec![logged_word(&act.task_type)];
        if act.prepared {
            pool.push("prepared".into());
        }
        if act.expert {
            pool.push("expert".into());
        }
        if let Some(h) = given(act.helping.as_ref()) {
            pool.push(format!(
                "helping {}",
                self.roster.character(&self.roster.agent_of(h))
            ));
        }
        let _ = write!(
            said,
            "<span class=\"meta\">suggests {}</span>",
            esc(&pool.join(", "))
        );
        (
            "IC",
            said,
            details(
                "justification",
                &format!("<p>{}</p>", esc(&act.justification)),
            ),
        )
    }

    /// The overreach check's verdict on an attempt, its correction, and why it was flagged.
    fn overreach_check(
        &self,
        agent: &str,
        attempt: u32,
        verdict: &Verdict,
        result: &str,
        corrected: Option<&String>,
    ) -> Row {
        let violations: Vec<String> = verdict
            .violations
            .iter()
            .map(|x| format!("\"{}\" — {}", x.excerpt, x.reason))
            .collect();
        let cls = if result == "passed" { "ok" } else { "bad" };
        let mut said = format!(
            "Overreach check on {}'s attempt {attempt}: <b class=\"{cls}\">{}</b>",
            self.ch(agent),
            esc(&result.replace('_', " "))
        );
        if let Some(c) = given(corrected) {
            let _ = write!(said, "<i>Corrected:</i>{}", quote(c));
        }
        let why = if violations.is_empty() {
            String::new()
        } else {
            details("why it was flagged", &list(&violations))
        };
        ("NOTE", said, why)
    }

    /// The party's discussion: messages, the consensus, votes, and why talk stopped.
    fn party(&self, event: &Event) -> Option<Row> {
        let said = match event {
            Event::OocMessage { .. } => {
                return Some(("OOC", self.ooc_message(event), String::new()));
            }
            Event::Consensus { .. } => self.consensus_reached(event),
            Event::VoteCast {
                agent,
                vote,
                remark,
            } => format!(
                "{} votes for {}{}",
                self.who(agent),
                self.player_of(vote),
                given(remark.as_ref()).map_or_else(String::new, |r| format!(": {}", esc(r)))
            ),
            Event::DiscussionTimedOut { elapsed_ms, .. } => format!(
                "The discussion ran out of time after {} s: the party votes",
                elapsed_ms / 1000
            ),
            Event::DiscussionStalled { round } => format!(
                "Round {} changed no one's stance: the party votes",
                round.saturating_sub(1)
            ),
            _ => return None,
        };
        Some(("PARTY", said, String::new()))
    }

    /// One message of the party's talk: stance, whose proposal it answers, a proposal of its own.
    fn ooc_message(&self, event: &Event) -> String {
        let Event::OocMessage {
            agent,
            round,
            message,
            stance,
            on,
            proposal,
            ..
        } = event
        else {
            return String::new();
        };
        let on = given(on.as_ref()).map_or_else(String::new, |o| {
            format!(" on {}'s proposal", self.player_of(o))
        });
        let mut said = format!(
            "<b>{}</b> <span class=\"meta\">({}{on}, round {round})</span>{}",
            self.who(agent),
            esc(stance.as_str()),
            quote(message)
        );
        if let Some(p) = given(proposal.as_ref()) {
            let _ = write!(said, "<i>Proposes:</i>{}", quote(p));
        }
        said
    }

    /// The party's consensus: the outcome, the plan and who proposed it, everyone's position.
    fn consensus_reached(&self, event: &Event) -> String {
        let Event::Consensus {
            outcome,
            plan,
            proposer,
            positions,
            ..
        } = event
        else {
            return String::new();
        };
        let positions: Vec<String> = positions
            .iter()
            .map(|(k, v)| format!("{}: {}", self.roster.player(k), v.as_str()))
            .collect();
        let mut said = format!("<b>Consensus: {}</b>", esc(outcome.as_str()));
        if let Some(p) = given(plan.as_ref()) {
            let by = given(proposer.as_ref()).map_or_else(String::new, |p| {
                format!(" (proposed by {})", self.player_of(p))
            });
            let _ = write!(said, "{by}{}", quote(p));
        }
        if !positions.is_empty() {
            let _ = write!(
                said,
                "<span class=\"meta\">{}</span>",
                esc(&positions.join(" · "))
            );
        }
        said
    }
}

/// A roll (the character's, a helper's) or the GM's override of one, with every die's face:
/// `what` happened, then the dice.
fn dice_roll(what: &str, r: &RollResult) -> String {
    let faces: Vec<String> = r
        .dice
        .iter()
        .map(|d| {
            let mark = if d.laser_feelings {
                "!"
            } else if d.success {
                "✓"
            } else {
                "✗"
            };
            format!("{}{mark}", d.face)
        })
        .collect();
    format!(
        "{what}: {} → {} success(es), <b>{}</b>",
        esc(&faces.join(" ")),
        r.successes,
        esc(r.outcome.as_str())
    )
}

/// The word the GM's choice after a failure is logged as.
fn choice_word(choice: &FailureChoice) -> &'static str {
    match choice {
        FailureChoice::Retry => "retry",
        FailureChoice::Skip => "skip",
        FailureChoice::TakeOver { .. } => "take_over",
    }
}

/// A row the transcript has no words for, shown as logged: its kind, and its fields without
/// the envelope's (a newer troupe's kind among them, so nothing is hidden).
fn as_logged(row: &Value) -> Row {
    (
        "LOG",
        format!("<code>{}</code>", esc(ty(row))),
        details("fields", &fields(row)),
    )
}

/// A row of a kind this build knows that does not read as it: its kind, that it is
/// unreadable and why, and its fields as logged (never shown as if they were empty).
fn unreadable(row: &Value, kind: &str, error: &str) -> Row {
    (
        "LOG",
        format!(
            "<code>{}</code> <span class=\"bad\">(unreadable: {})</span>",
            esc(kind),
            esc(error)
        ),
        details("fields", &fields(row)),
    )
}

/// A row's fields without the envelope's, as JSON.
fn fields(row: &Value) -> String {
    let mut body = row.clone();
    if let Some(o) = body.as_object_mut() {
        for k in [
            "seq",
            "timestamp",
            "session_id",
            "session_number",
            "turn_number",
            "event_type",
        ] {
            o.remove(k);
        }
    }
    format!("<pre>{}</pre>", esc(&body.to_string()))
}

/// Text from the log as a quotation (escaped).
fn quote(t: &str) -> String {
    format!("<blockquote>{}</blockquote>", esc(t))
}

fn list(items: &[String]) -> String {
    let mut o = String::from("<ul>");
    for i in items {
        let _ = write!(o, "<li>{}</li>", esc(i));
    }
    o.push_str("</ul>");
    o
}
