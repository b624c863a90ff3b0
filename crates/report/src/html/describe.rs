//! One transcript row per event: (channel, what was said or done, the reasoning behind it).
//!
//! `describe` asks each family of events in turn (notes, the GM, the players, the characters,
//! the party); the first that knows the event's kind renders it, and a kind none of them knows
//! (one a newer troupe wrote) is shown raw so nothing is hidden.

use std::fmt::Write;

use serde_json::Value;

use super::{Report, details};
use crate::ev::{agent, num, opt, s, ty};
use crate::svg::esc;

/// A transcript row: the channel tag, what was said or done, the reasoning beside it.
pub(super) type Row = (&'static str, String, String);

impl Report<'_> {
    /// An event as (channel, what was said or done, the reasoning), or None to leave it out.
    pub(super) fn describe(&self, e: &Value) -> Option<Row> {
        if matches!(
            ty(e),
            "turn_completed" | "phase_started" | "phase_completed"
        ) {
            return None;
        }
        Some(
            self.note(e)
                .or_else(|| self.gm(e))
                .or_else(|| self.player(e))
                .or_else(|| self.character(e))
                .or_else(|| self.party(e))
                .unwrap_or_else(|| unknown(e)),
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
    fn note(&self, e: &Value) -> Option<Row> {
        let a = agent(e);
        let said = match ty(e) {
            "session_started" => format!(
                "Session started · seed {} · model {}",
                num(e, "seed"),
                esc(s(e, "model"))
            ),
            "session_ended" => format!("Session ended: {}", esc(s(e, "reason"))),
            "session_resumed" => format!("Session resumed at {}", esc(s(e, "at"))),
            "events_undone" => format!("The GM undid {}", esc(s(e, "what"))),
            "memory_retrieved" => return Some(self.memory_retrieved(e)),
            "clarification_ended" => format!("Questions over: {}", esc(s(e, "reason"))),
            "phase_failed" => format!(
                "<span class=\"bad\">{} failed for {} (failure {})</span>: {}",
                esc(s(e, "phase")),
                self.who(a),
                num(e, "failures"),
                esc(s(e, "error"))
            ),
            "memory_storage" => format!("Memory: {}", esc(s(e, "status"))),
            "context_trimmed" => format!(
                "{}'s {} prompt trimmed to fit ({} tokens, budget {})",
                self.who(a),
                esc(s(e, "purpose")),
                num(e, "prompt_tokens"),
                num(e, "budget")
            ),
            _ => return None,
        };
        Some(("NOTE", said, String::new()))
    }

    /// What memory recalled for a player, each memory with its score beside the line.
    fn memory_retrieved(&self, e: &Value) -> Row {
        let rec = e
            .get("recalled")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut mind = String::new();
        if !rec.is_empty() {
            let mut list = String::from("<ul>");
            for r in &rec {
                let _ = write!(
                    list,
                    "<li>({}) {} <span class=\"meta\">score {}, confidence {}, from {}</span></li>",
                    esc(s(r, "layer")),
                    esc(s(r, "text")),
                    two_places(r, "score"),
                    two_places(r, "confidence"),
                    esc(s(r, "source"))
                );
            }
            list.push_str("</ul>");
            mind = details(&format!("{} memories recalled", rec.len()), &list);
        }
        (
            "NOTE",
            format!("Memory for {}: {}", self.who(agent(e)), esc(s(e, "status"))),
            mind,
        )
    }

    /// What the GM says and rules: narration, answers, rulings, rolls, whispers, scene ends.
    fn gm(&self, e: &Value) -> Option<Row> {
        let a = agent(e);
        let said = match ty(e) {
            "gm_narration" => format!("<b>Narration</b>{}", quote(s(e, "text"))),
            "gm_outcome" => format!("<b>Outcome</b>{}", quote(s(e, "text"))),
            "gm_answers" => {
                let ans = strs(e, "answers");
                if ans.is_empty() {
                    "No more questions.".into()
                } else {
                    format!("<b>Answers</b>{}", list(&ans))
                }
            }
            "gm_ooc" => {
                let said = format!(
                    "<b>GM</b> <span class=\"meta\">(out of character, round {})</span>{}",
                    num(e, "round"),
                    quote(s(e, "text"))
                );
                // Out of character: tagged with the players' talk, not the GM's rulings.
                return Some(("OOC", said, String::new()));
            }
            "gm_reviewed_action" => format!(
                "<b>Sets {}'s action</b>{}",
                self.ch(a),
                quote(s(e, "action"))
            ),
            "gm_adjudication" => self.ruling(e),
            "gm_forced_result" => {
                if flag(e, "success") {
                    "/success: the next roll succeeds".into()
                } else {
                    "/fail: the next roll fails".into()
                }
            }
            "gm_roll" => format!(
                "/roll {} = {}",
                esc(s(e, "expression")),
                e.get("total").map_or_else(String::new, Value::to_string)
            ),
            "laser_feelings_answer" => {
                format!("<b>Answers {}</b>{}", self.ch(a), quote(s(e, "answer")))
            }
            "gm_failure_decision" => format!(
                "After the failure, for {}: {}",
                self.who(a),
                esc(s(e, "choice"))
            ),
            "whisper" => format!(
                "<b>Whisper to {}</b> <span class=\"meta\">({})</span>{}",
                opt(e, "to").map_or_else(|| "the whole table".to_string(), |t| self.player_of(t)),
                esc(s(e, "scope")),
                quote(s(e, "text"))
            ),
            "scene_ended" => match opt(e, "title") {
                Some(t) => format!("<b>The scene ends:</b> {}", esc(t)),
                None => "<b>The scene ends.</b>".to_string(),
            },
            "time_passed" => match num(e, "days") {
                1 => "<b>A day passes.</b>".to_string(),
                n => format!("<b>{n} days pass.</b>"),
            },
            "dice_rolled" | "gm_roll_override" => return Some(self.dice_roll(e)),
            _ => return None,
        };
        Some(("GM", said, String::new()))
    }

    /// The GM's ruling on an action: a roll (with its bonuses) or another ruling and its note.
    fn ruling(&self, e: &Value) -> String {
        let text = match s(e, "ruling") {
            "roll" => format!(
                "roll {}{}{}",
                esc(s(e, "task")),
                if flag(e, "prepared") {
                    ", prepared"
                } else {
                    ""
                },
                if flag(e, "expert") { ", expert" } else { "" }
            ),
            other => format!("{}: {}", esc(other), esc(s(e, "note"))),
        };
        format!("<b>Ruling for {}</b>: {text}", self.ch(agent(e)))
    }

    /// A roll (the character's, a helper's) or the GM's override of one, with every die's face.
    fn dice_roll(&self, e: &Value) -> Row {
        let a = agent(e);
        let r = e.get("result").unwrap_or(&Value::Null);
        let faces: Vec<String> = r
            .get("dice")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|d| {
                let mark = if flag(d, "laser_feelings") {
                    "!"
                } else if flag(d, "success") {
                    "✓"
                } else {
                    "✗"
                };
                format!("{}{mark}", num(d, "face"))
            })
            .collect();
        let what = if ty(e) == "gm_roll_override" {
            if s(e, "override") == "keep" {
                format!("The GM keeps {}'s roll", self.ch(a))
            } else {
                format!(
                    "<b>The GM overrides {}'s roll</b> ({})",
                    self.ch(a),
                    esc(s(e, "override"))
                )
            }
        } else if s(e, "purpose") == "helper" {
            format!(
                "{} helps {}",
                self.ch(a),
                esc(&self
                    .roster
                    .character(&self.roster.agent_of(s(e, "helping"))))
            )
        } else {
            format!("{} rolls {}", self.ch(a), esc(s(r, "task")))
        };
        (
            if ty(e) == "dice_rolled" { "DICE" } else { "GM" },
            format!(
                "{what}: {} → {} success(es), <b>{}</b>",
                esc(&faces.join(" ")),
                num(r, "successes"),
                esc(s(r, "outcome"))
            ),
            String::new(),
        )
    }

    /// What a player decides out of character: questions, a private plan, a directive, insight.
    fn player(&self, e: &Value) -> Option<Row> {
        let a = agent(e);
        Some(match ty(e) {
            "clarifying_questions" => {
                let qs: Vec<String> = strs(e, "questions");
                let said = if qs.is_empty() {
                    format!("{} has no questions for the GM", self.who(a))
                } else {
                    format!("<b>{} asks the GM</b>{}", self.who(a), list(&qs))
                };
                ("OOC", said, String::new())
            }
            "strategic_intent" => self.strategic_intent(e),
            "directive" => (
                "P2C",
                format!(
                    "<b>{} → {}</b> (directive){}",
                    self.who(a),
                    self.ch(a),
                    quote(s(e, "text"))
                ),
                String::new(),
            ),
            "insight_decision" => {
                let d = e.get("decision").unwrap_or(&Value::Null);
                let keep = if flag(d, "change_action") {
                    "change the action"
                } else {
                    "keep the action"
                };
                (
                    "OOC",
                    format!("{} decides to {keep}", self.who(a)),
                    details("why", &format!("<p>{}</p>", esc(s(d, "reason")))),
                )
            }
            _ => return None,
        })
    }

    /// A player's plan: only that it was made is said; the strategy itself sits in the reasoning.
    fn strategic_intent(&self, e: &Value) -> Row {
        let i = e.get("intent").unwrap_or(&Value::Null);
        (
            "OOC",
            format!(
                "<b>{}</b> decides on a plan (private to the player)",
                self.who(agent(e))
            ),
            details(
                "strategy (player only)",
                &format!(
                    "<p>{}</p><p class=\"meta\">directive in mind</p><p>{}</p>{}",
                    esc(s(i, "strategy")),
                    esc(s(i, "directive")),
                    opt(i, "proposal").map_or_else(String::new, |p| format!(
                        "<p class=\"meta\">proposal to the party</p><p>{}</p>",
                        esc(p)
                    ))
                ),
            ),
        )
    }

    /// What a character does in the fiction: attempts, the overreach check on them, questions
    /// to the GM in a LASER FEELINGS moment, reactions.
    fn character(&self, e: &Value) -> Option<Row> {
        let a = agent(e);
        Some(match ty(e) {
            "character_action" => self.character_action(e),
            "validation" => self.overreach_check(e),
            "laser_feelings_question" => (
                "IC",
                format!(
                    "<b>{} asks (LASER FEELINGS)</b>{}",
                    self.ch(a),
                    quote(s(e, "question"))
                ),
                String::new(),
            ),
            "character_reaction" => (
                "IC",
                format!("<b>{} reacts</b>{}", self.ch(a), quote(s(e, "text"))),
                String::new(),
            ),
            _ => return None,
        })
    }

    /// An attempt: the action, what is said, the dice pool it suggests; the justification beside.
    fn character_action(&self, e: &Value) -> Row {
        let a = agent(e);
        let act = e.get("action").unwrap_or(&Value::Null);
        let mut said = format!(
            "<b>{} attempts</b> <span class=\"meta\">(attempt {})</span>{}",
            self.ch(a),
            num(e, "attempt"),
            quote(s(act, "action"))
        );
        if let Some(d) = opt(act, "dialogue") {
            let _ = write!(said, "<i>Says:</i>{}", quote(d));
        }
        let mut pool = vec![s(act, "task_type").to_string()];
        if flag(act, "prepared") {
            pool.push("prepared".into());
        }
        if flag(act, "expert") {
            pool.push("expert".into());
        }
        if let Some(h) = opt(act, "helping") {
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
                &format!("<p>{}</p>", esc(s(act, "justification"))),
            ),
        )
    }

    /// The overreach check's verdict on an attempt, its correction, and why it was flagged.
    fn overreach_check(&self, e: &Value) -> Row {
        let result = s(e, "result");
        let v = e.get("verdict").unwrap_or(&Value::Null);
        let violations: Vec<String> = v
            .get("violations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|x| format!("\"{}\" — {}", s(x, "excerpt"), s(x, "reason")))
            .collect();
        let cls = if result == "passed" { "ok" } else { "bad" };
        let mut said = format!(
            "Overreach check on {}'s attempt {}: <b class=\"{cls}\">{}</b>",
            self.ch(agent(e)),
            num(e, "attempt"),
            esc(&result.replace('_', " "))
        );
        if let Some(c) = opt(e, "corrected") {
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
    fn party(&self, e: &Value) -> Option<Row> {
        let said = match ty(e) {
            "ooc_message" => return Some(("OOC", self.ooc_message(e), String::new())),
            "consensus" => self.consensus_reached(e),
            "vote_cast" => format!(
                "{} votes for {}{}",
                self.who(agent(e)),
                self.player_of(s(e, "vote")),
                opt(e, "remark").map_or_else(String::new, |r| format!(": {}", esc(r)))
            ),
            "discussion_timed_out" => format!(
                "The discussion ran out of time after {} s: the party votes",
                num(e, "elapsed_ms") / 1000
            ),
            "discussion_stalled" => format!(
                "Round {} changed no one's stance: the party votes",
                num(e, "round").saturating_sub(1)
            ),
            _ => return None,
        };
        Some(("PARTY", said, String::new()))
    }

    /// One message of the party's talk: stance, whose proposal it answers, a proposal of its own.
    fn ooc_message(&self, e: &Value) -> String {
        let on = opt(e, "on").map_or_else(String::new, |o| {
            format!(" on {}'s proposal", self.player_of(o))
        });
        let mut said = format!(
            "<b>{}</b> <span class=\"meta\">({}{on}, round {})</span>{}",
            self.who(agent(e)),
            esc(s(e, "stance")),
            num(e, "round"),
            quote(s(e, "message"))
        );
        if let Some(p) = opt(e, "proposal") {
            let _ = write!(said, "<i>Proposes:</i>{}", quote(p));
        }
        said
    }

    /// The party's consensus: the outcome, the plan and who proposed it, everyone's position.
    fn consensus_reached(&self, e: &Value) -> String {
        let positions: Vec<String> = e
            .get("positions")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{}: {}", self.roster.player(k), v.as_str().unwrap_or("")))
            .collect();
        let mut said = format!("<b>Consensus: {}</b>", esc(s(e, "outcome")));
        if let Some(p) = opt(e, "plan") {
            let by = opt(e, "proposer").map_or_else(String::new, |p| {
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

/// An event kind newer than this report: shown raw (its fields without the envelope's), so
/// nothing is hidden.
fn unknown(e: &Value) -> Row {
    let mut body = e.clone();
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
    (
        "LOG",
        format!("<code>{}</code>", esc(ty(e))),
        details("fields", &format!("<pre>{}</pre>", esc(&body.to_string()))),
    )
}

/// Text from the log as a quotation (escaped).
fn quote(t: &str) -> String {
    format!("<blockquote>{}</blockquote>", esc(t))
}

/// Whether a boolean field is present and true.
fn flag(e: &Value, field: &str) -> bool {
    e.get(field).and_then(Value::as_bool) == Some(true)
}

/// A number to two places, or "?" when the field is missing.
fn two_places(e: &Value, field: &str) -> String {
    e.get(field)
        .and_then(Value::as_f64)
        .map_or_else(|| "?".into(), |v| format!("{v:.2}"))
}

fn strs(e: &Value, field: &str) -> Vec<String> {
    e.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

fn list(items: &[String]) -> String {
    let mut o = String::from("<ul>");
    for i in items {
        let _ = write!(o, "<li>{}</li>", esc(i));
    }
    o.push_str("</ul>");
    o
}
