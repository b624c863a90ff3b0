//! The AI game master: a [`GmSeat`] that decides through model calls. Its calls and what its
//! checks found are handed to the driver as [`SeatNote`]s, so they are logged like the players'
//! calls (model_call events) before the decision they led to.
//!
//! It runs the game by the rulebook: the prompts carry the GM advice; the checks catch an
//! outcome that goes against the dice, a narration that decides what a character does or
//! feels, and a private note read out, and send the text back once for a rewrite. A note still
//! read out in the rewrite is withheld (`[withheld]`) before anyone sees it.

use std::collections::BTreeSet;

use async_trait::async_trait;
use serde_json::Value;
use troupe_agents::{GM_AGENT, GmCall, GmPurpose, GmView, PromptSet};
use troupe_engine::attempts::{self, CallWatch, For};
use troupe_llm::Gateway;
use troupe_seat::Answer;
use troupe_validator::gm::{contradicts_dice, decides_for, repeats_note, withhold_notes};

use crate::asks::gm_answer;
use crate::machine::GmAsk;
use crate::{
    Answers, FailureChoice, GmDecision, GmQuestion, GmReply, GmSeat, Phase, RollOverride, Ruling,
    SeatNote, StoryMark,
};

/// Model calls that failed (past the gateway's own retries) before the seat gives up.
const FAILED_CALLS: u32 = 2;

/// A problem a check found: (check, what is wrong, the text).
type Finding = (&'static str, String, String);

pub struct AiGm {
    gateway: Gateway,
    prompts: PromptSet,
    notes: Vec<SeatNote>,
    /// (turn, phase, agent) already retried after a failure: the next time, skip.
    retried: BTreeSet<(u32, Phase, String)>,
    /// Why the session ends at the next narration (the story reached a stopping point).
    ending: Option<String>,
    /// Where the calls of the decision being made take their seeds.
    seeds: crate::CallSeeds,
    /// What the decision being made has the GM do, as the watch shows it.
    doing: &'static str,
}

impl AiGm {
    pub fn new(gateway: Gateway, prompts: PromptSet) -> Self {
        AiGm {
            gateway,
            prompts,
            notes: Vec::new(),
            retried: BTreeSet::new(),
            ending: None,
            seeds: crate::CallSeeds::default(),
            doing: "thinking",
        }
    }

    /// One model call, its attempts noted for the log: the reply's JSON, or why it failed.
    /// `watch` hears it as the GM's, doing what the decision asks.
    async fn call(&mut self, mut call: GmCall, watch: &mut dyn CallWatch) -> Result<Value, String> {
        // The calls noted but not yet in the log come before this one.
        let unlogged = self
            .notes
            .iter()
            .filter(|n| matches!(n, SeatNote::Call { record, .. } if record.attempt <= 1))
            .count();
        call.request.seed = Some(self.seeds.nth(GM_AGENT, unlogged as u64));
        let purpose = call.purpose.as_str();
        let whose = For {
            seat: GM_AGENT,
            doing: self.doing,
        };
        let made = attempts::make(&self.gateway, &call.request, whose, watch).await;
        self.notes
            .extend(made.attempts.into_iter().map(|a| SeatNote::Call {
                purpose: purpose.to_string(),
                record: a.record,
            }));
        let reply = made.reply.map_err(|e| e.to_string())?;
        Ok(reply.json.unwrap_or(Value::String(reply.content)))
    }

    /// Build, call, read and check; a text the checks flag goes back once with what was wrong.
    /// The model failing twice stops the seat (the session is saved; resume asks again).
    async fn ask_model<T>(
        &mut self,
        build: impl Fn(&PromptSet, &str) -> Result<GmCall, troupe_agents::Error>,
        read: impl Fn(&Value) -> Result<T, troupe_agents::Error>,
        check: impl Fn(&T) -> Option<Finding>,
        watch: &mut dyn CallWatch,
    ) -> GmReply<T> {
        let (mut feedback, mut failures, mut sent_back) = (String::new(), 0, false);
        loop {
            let call = match build(&self.prompts, &feedback) {
                Ok(c) => c,
                Err(e) => return GmReply::Fail(format!("the AI GM's prompt failed: {e}")),
            };
            let decided = match self.call(call, watch).await {
                Ok(value) => read(&value).map_err(|e| e.to_string()),
                Err(e) => Err(e),
            };
            let decided = match decided {
                Ok(d) => d,
                Err(e) => {
                    failures += 1;
                    if failures >= FAILED_CALLS {
                        return GmReply::Fail(format!("the AI GM's model failed twice: {e}"));
                    }
                    continue;
                }
            };
            let Some((check, detail, text)) = check(&decided) else {
                return GmReply::Answer(decided);
            };
            let kept = sent_back;
            self.notes.push(SeatNote::Flag {
                check: check.to_string(),
                detail: detail.clone(),
                text,
                sent_back: !kept,
                kept,
            });
            if kept {
                return GmReply::Answer(decided);
            }
            sent_back = true;
            feedback = detail;
        }
    }
}

/// The checks every text the GM says aloud goes through. `deeds`: a scene's narration may not
/// make a character act either (an outcome restates the declared action).
fn said_aloud(v: &GmView, text: &str, deeds: bool) -> Option<Finding> {
    let names: Vec<String> = v.table.iter().map(|s| s.character.name.clone()).collect();
    if let Some(sentence) = decides_for(text, &names, deeds) {
        let what = if deeds {
            "does or feels"
        } else {
            "feels or decides"
        };
        return Some((
            "decides_for_character",
            format!(
                "\"{sentence}\" says what a player character {what}; describe the world and let the players decide"
            ),
            text.to_string(),
        ));
    }
    note_read_out(v, text)
}

/// The GM's private notes of the scenario (the premise, `scenario.text`, is not secret).
fn notes(v: &GmView) -> Vec<String> {
    v.scenario
        .as_ref()
        .map(|s| s.notes.clone())
        .unwrap_or_default()
}

/// `text` with every sentence that reads a private note out withheld.
fn kept_secret(v: &GmView, text: &str) -> String {
    withhold_notes(text, &notes(v))
}

fn note_read_out(v: &GmView, text: &str) -> Option<Finding> {
    repeats_note(text, &notes(v)).map(|phrase| {
        (
            "private_note_verbatim",
            format!(
                "it reads your private note out (\"{phrase}\"); reveal it only through what happens"
            ),
            text.to_string(),
        )
    })
}

#[async_trait]
impl GmSeat for AiGm {
    fn take_notes(&mut self) -> Vec<SeatNote> {
        std::mem::take(&mut self.notes)
    }

    async fn decide(&mut self, question: &GmQuestion<'_>, watch: &mut dyn CallWatch) -> Answer {
        self.seeds = question.seeds;
        self.doing = question.decision.doing();
        let v = question.view;
        let reply = match question.decision {
            GmAsk::Narration => self.narrate(v, watch).await.map(GmDecision::Text),
            GmAsk::Answers { questions, .. } => self
                .answer_questions(v, questions, watch)
                .await
                .map(GmDecision::Answers),
            // The correction keeps the character's intent without the overreach: the AI GM
            // takes it.
            GmAsk::Review { corrected, .. } => GmReply::Answer(GmDecision::Text(corrected.clone())),
            GmAsk::Adjudicate { agent, .. } => self
                .adjudicate(v, agent, watch)
                .await
                .map(GmDecision::Ruling),
            // The dice stand: the AI GM lets the chips fall where they may.
            GmAsk::Override { .. } => GmReply::Answer(GmDecision::Override(RollOverride::Keep)),
            GmAsk::Insight { agent, question } => self
                .answer_insight(v, agent, question, watch)
                .await
                .map(GmDecision::Text),
            GmAsk::Outcome => self.narrate_outcome(v, watch).await.map(GmDecision::Text),
            // The party talks it out without the AI GM.
            GmAsk::Interject { .. } => GmReply::Answer(GmDecision::Interjection(None)),
            GmAsk::Failure { phase, agent, .. } => {
                GmReply::Answer(GmDecision::Failure(self.resolve_failure(v, *phase, agent)))
            }
        };
        gm_answer(question.decision, reply)
    }
}

impl AiGm {
    async fn narrate(&mut self, v: &GmView, watch: &mut dyn CallWatch) -> GmReply<String> {
        if let Some(why) = self.ending.take() {
            return GmReply::End(why);
        }
        let view = v.clone();
        self.ask_model(
            |p, fb| p.gm_narration(&view, fb),
            GmPurpose::read_narration,
            |text| said_aloud(&view, text, true),
            watch,
        )
        .await
        .map(|text| kept_secret(&view, &text))
    }

    async fn answer_questions(
        &mut self,
        v: &GmView,
        questions: &[(String, String)],
        watch: &mut dyn CallWatch,
    ) -> GmReply<Answers> {
        let (view, n) = (v.clone(), questions.len());
        self.ask_model(
            |p, fb| p.gm_answers(&view, questions, fb),
            |value| GmPurpose::read_answers(value, n),
            |answers| said_aloud(&view, &answers.join("\n"), false),
            watch,
        )
        .await
        .map(|answers| answers.iter().map(|a| kept_secret(&view, a)).collect())
        .map(Answers::Answered)
    }

    async fn adjudicate(
        &mut self,
        v: &GmView,
        agent: &str,
        watch: &mut dyn CallWatch,
    ) -> GmReply<Ruling> {
        let view = v.clone();
        self.ask_model(
            |p, _| p.gm_ruling(&view, agent),
            GmPurpose::read_ruling,
            |r| note_read_out(&view, &r.reason),
            watch,
        )
        .await
        .map(|r| {
            if r.roll {
                Ruling::Roll {
                    task: r.task_type,
                    prepared: r.prepared,
                    expert: r.expert,
                }
            } else {
                Ruling::NoRoll {
                    note: kept_secret(&view, &r.reason),
                }
            }
        })
    }

    async fn answer_insight(
        &mut self,
        v: &GmView,
        agent: &str,
        question: &str,
        watch: &mut dyn CallWatch,
    ) -> GmReply<String> {
        let view = v.clone();
        self.ask_model(
            |p, fb| p.gm_insight(&view, agent, question, fb),
            GmPurpose::read_insight_answer,
            |text| said_aloud(&view, text, false),
            watch,
        )
        .await
        .map(|text| kept_secret(&view, &text))
    }

    async fn narrate_outcome(&mut self, v: &GmView, watch: &mut dyn CallWatch) -> GmReply<String> {
        let view = v.clone();
        let successes: Vec<u32> = v.rolls.iter().map(|r| r.successes).collect();
        let reply = self
            .ask_model(
                |p, fb| p.gm_outcome(&view, fb),
                GmPurpose::read_outcome,
                |o| {
                    contradicts_dice(&o.outcome, &successes)
                        .map(|d| ("outcome_contradicts_dice", d, o.outcome.clone()))
                        .or_else(|| said_aloud(&view, &o.outcome, false))
                },
                watch,
            )
            .await;
        reply.map(|mut o| {
            o.outcome = kept_secret(&view, &o.outcome);
            // With a turn limit the session plays its turns; without, the GM may stop here.
            if o.end_session && v.last_turn.is_none() {
                self.ending =
                    Some("the AI GM ended the session at a natural stopping point".into());
            }
            self.notes.extend(
                StoryMark::with_outcome(
                    o.scene_ends.then(|| StoryMark::scene_ended(None)),
                    o.days_pass,
                )
                .into_iter()
                .map(SeatNote::Mark),
            );
            o.outcome
        })
    }

    /// Twice failed: try once more, then skip the AI's part and keep the story moving.
    fn resolve_failure(&mut self, v: &GmView, phase: Phase, agent: &str) -> FailureChoice {
        if self.retried.insert((v.turn, phase, agent.to_string())) {
            FailureChoice::Retry
        } else {
            FailureChoice::Skip
        }
    }
}
