//! The AI game master's calls: what it sees (the [`GmView`]), its prompts, and its replies.
//!
//! The GM sees what a GM at the table would know: everything said at the table, the dice, the
//! party's out-of-character talk, the whispers it sent and its own private notes. It never sees
//! a player's private strategy or the directive a player gives its character.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use troupe_campaign::{CharacterSheet, Scenario, Ship};
use troupe_llm::{CallTag, ChatRequest, ResponseSchema};
use troupe_rules::TaskType;

use crate::layers::{number_lean, request};
use crate::{Error, OocLine, PartyPlan, PromptSet, QuestionAnswer, RenderedPrompt, TurnRecap};

/// The agent name the GM's model calls are logged under.
pub const GM_AGENT: &str = "gm";

/// A character at the table, as the GM knows them.
#[derive(Clone, Debug, Serialize)]
pub struct TableSeat {
    pub agent_id: String,
    pub player_name: String,
    pub character: CharacterSheet,
    /// A person plays this character (not an AI).
    pub human: bool,
    /// The character's profile from the campaign (seed 003's registry: pronouns first, then
    /// ancestry, class, level, backstory), or empty.
    pub profile: String,
}

/// An action declared this turn, as the table heard it.
#[derive(Clone, Debug, Serialize)]
pub struct DeclaredAction {
    pub agent_id: String,
    pub character: String,
    pub action: String,
    pub dialogue: String,
    pub task_type: TaskType,
    pub prepared: bool,
    pub expert: bool,
    /// The character id helped, if any.
    pub helping: Option<String>,
}

/// A roll this turn, as the table saw it.
#[derive(Clone, Debug, Serialize)]
pub struct RollLine {
    pub character: String,
    /// "lasers, number 4: [2, 6] → 1 success (complication)".
    pub summary: String,
    pub successes: u32,
}

/// A LASER FEELINGS question this turn and the GM's answer so far.
#[derive(Clone, Debug, Serialize)]
pub struct InsightLine {
    pub character: String,
    pub question: String,
    pub answer: Option<String>,
}

/// What the game master may see.
#[derive(Clone, Debug, Serialize)]
pub struct GmView {
    pub campaign_name: String,
    pub gm_name: String,
    pub ship: Ship,
    pub turn: u32,
    /// The story's in-game day (day 1 is the campaign's first).
    pub day: u32,
    /// The phase being played, by its title ("between turns" when none).
    pub phase: String,
    /// The turn the session stops after, when there is a limit.
    pub last_turn: Option<u32>,
    pub table: Vec<TableSeat>,
    /// The adventure: its premise and the GM's private notes.
    pub scenario: Option<Scenario>,
    pub recent: Vec<TurnRecap>,
    pub narration: String,
    pub clarifications: Vec<QuestionAnswer>,
    /// The party's out-of-character talk this turn (said aloud at the table).
    pub discussion: Vec<OocLine>,
    pub plan: Option<PartyPlan>,
    pub actions: Vec<DeclaredAction>,
    pub rolls: Vec<RollLine>,
    pub insights: Vec<InsightLine>,
    pub outcome: Option<String>,
    /// What the GM whispered, and to whom ("all" for the table).
    pub whispers: Vec<(String, String)>,
}

impl GmView {
    /// Whether an agent of that id is at the table.
    pub fn seated(&self, agent: &str) -> bool {
        self.table.iter().any(|s| s.agent_id == agent)
    }

    pub fn agent_ids(&self) -> Vec<String> {
        self.table.iter().map(|s| s.agent_id.clone()).collect()
    }

    /// The character's name for an agent id (the id when unknown).
    pub fn character_name(&self, agent: &str) -> String {
        self.table
            .iter()
            .find(|s| s.agent_id == agent)
            .map_or_else(|| agent.to_string(), |s| s.character.name.clone())
    }
}

/// What a GM call is for; also its replay key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GmPurpose {
    Narration,
    Answers,
    Ruling,
    InsightAnswer,
    Outcome,
}

impl GmPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            GmPurpose::Narration => "gm_narration",
            GmPurpose::Answers => "gm_answers",
            GmPurpose::Ruling => "gm_ruling",
            GmPurpose::InsightAnswer => "gm_insight_answer",
            GmPurpose::Outcome => "gm_outcome",
        }
    }
}

/// A GM call, rendered and ready for the gateway.
#[derive(Clone, Debug)]
pub struct GmCall {
    pub purpose: GmPurpose,
    pub prompt: RenderedPrompt,
    pub request: ChatRequest,
}

/// The GM's ruling on an action, as the model gives it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct GmRulingReply {
    /// Roll the dice (the action is risky), or narrate without a roll.
    pub roll: bool,
    pub task_type: TaskType,
    #[serde(default)]
    pub prepared: bool,
    #[serde(default)]
    pub expert: bool,
    #[serde(default)]
    pub reason: String,
}

/// The GM's narration of the outcome, and whether this is a good place to stop.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct GmOutcomeReply {
    pub outcome: String,
    #[serde(default)]
    pub end_session: bool,
    /// This outcome closes a scene.
    #[serde(default)]
    pub scene_ends: bool,
    /// In-game days that pass after this outcome (0: the story goes straight on).
    #[serde(default)]
    pub days_pass: u32,
}

fn text(min: u32) -> Value {
    json!({"type": "string", "minLength": min})
}

fn schema(name: &str, schema: Value) -> ResponseSchema {
    ResponseSchema {
        name: name.to_string(),
        schema,
    }
}

fn gm_ctx(v: &GmView, extra: Value) -> Value {
    let table: Vec<Value> = v
        .table
        .iter()
        .map(|s| json!({"seat": s, "number_lean": number_lean(&s.character)}))
        .collect();
    let mut ctx = json!({
        "gm_name": v.gm_name, "ship": v.ship, "turn": v.turn, "day": v.day,
        "last_turn": v.last_turn,
        "table": table, "scenario": v.scenario, "recent": v.recent,
        "narration": v.narration, "clarifications": v.clarifications,
        "discussion": v.discussion, "plan": v.plan, "actions": v.actions, "rolls": v.rolls,
        "insights": v.insights, "outcome": v.outcome, "whispers": v.whispers,
    });
    if let (Value::Object(a), Value::Object(b)) = (&mut ctx, extra) {
        a.extend(b);
    }
    ctx
}

fn gm_call(
    purpose: GmPurpose,
    prompt: RenderedPrompt,
    schema: ResponseSchema,
    max_tokens: u32,
) -> GmCall {
    let request = request(
        CallTag::new(GM_AGENT, purpose.as_str()),
        &prompt,
        schema,
        max_tokens,
    );
    GmCall {
        purpose,
        prompt,
        request,
    }
}

/// The GM's calls. `feedback` is what a check found wrong with the last try ("" the first
/// time): the model is asked to rewrite.
impl PromptSet {
    fn gm(&self, v: &GmView, task: &str, extra: Value) -> Result<RenderedPrompt, Error> {
        let ctx = gm_ctx(v, extra);
        Ok(RenderedPrompt::plain(
            self.render("gm_system.md", &ctx)?,
            self.render(task, &ctx)?,
        ))
    }

    pub fn gm_narration(&self, v: &GmView, feedback: &str) -> Result<GmCall, Error> {
        let p = self.gm(v, "gm_narration.md", json!({"feedback": feedback}))?;
        let s = schema(
            "gm_narration",
            json!({"type": "object", "properties": {"narration": text(20)},
                "required": ["narration"]}),
        );
        Ok(gm_call(GmPurpose::Narration, p, s, 350))
    }

    /// Answers to this round's questions, one per question, in order.
    pub fn gm_answers(
        &self,
        v: &GmView,
        questions: &[(String, String)],
        feedback: &str,
    ) -> Result<GmCall, Error> {
        let asked: Vec<Value> = questions
            .iter()
            .map(|(a, q)| json!({"character": v.character_name(a), "question": q}))
            .collect();
        let p = self.gm(
            v,
            "gm_answers.md",
            json!({"questions": asked, "feedback": feedback}),
        )?;
        let n = questions.len();
        let s = schema(
            "gm_answers",
            json!({"type": "object", "properties": {"answers": {"type": "array",
                "items": text(2), "minItems": n, "maxItems": n}}, "required": ["answers"]}),
        );
        Ok(gm_call(GmPurpose::Answers, p, s, 300))
    }

    /// Whether `agent`'s declared action calls for a roll, and which dice.
    pub fn gm_ruling(&self, v: &GmView, agent: &str) -> Result<GmCall, Error> {
        let action = v.actions.iter().find(|a| a.agent_id == agent);
        let p = self.gm(v, "gm_ruling.md", json!({"acting": action}))?;
        let s = schema(
            "gm_ruling",
            json!({"type": "object", "properties": {
                "roll": {"type": "boolean"},
                "task_type": {"type": "string", "enum": ["lasers", "feelings"]},
                "prepared": {"type": "boolean"}, "expert": {"type": "boolean"},
                "reason": {"type": "string"}},
                "required": ["roll", "task_type", "prepared", "expert", "reason"]}),
        );
        Ok(gm_call(GmPurpose::Ruling, p, s, 150))
    }

    /// An honest answer to a LASER FEELINGS question.
    pub fn gm_insight(
        &self,
        v: &GmView,
        agent: &str,
        question: &str,
        feedback: &str,
    ) -> Result<GmCall, Error> {
        let p = self.gm(
            v,
            "gm_insight_answer.md",
            json!({"asker": v.character_name(agent), "question": question, "feedback": feedback}),
        )?;
        let s = schema(
            "gm_insight_answer",
            json!({"type": "object", "properties": {"answer": text(3)}, "required": ["answer"]}),
        );
        Ok(gm_call(GmPurpose::InsightAnswer, p, s, 200))
    }

    /// The outcome of the turn's rolls (or of actions that needed none).
    pub fn gm_outcome(&self, v: &GmView, feedback: &str) -> Result<GmCall, Error> {
        let p = self.gm(v, "gm_outcome.md", json!({"feedback": feedback}))?;
        let s = schema(
            "gm_outcome",
            json!({"type": "object", "properties": {"outcome": text(20),
                "end_session": {"type": "boolean"}, "scene_ends": {"type": "boolean"},
                "days_pass": {"type": "integer", "minimum": 0, "maximum": 3650}},
                "required": ["outcome", "end_session"]}),
        );
        Ok(gm_call(GmPurpose::Outcome, p, s, 350))
    }
}

fn read<T: for<'de> Deserialize<'de>>(purpose: GmPurpose, value: &Value) -> Result<T, Error> {
    serde_json::from_value(value.clone()).map_err(|e| Error::Reply {
        purpose: purpose.as_str().to_string(),
        message: e.to_string(),
    })
}

#[derive(Deserialize)]
struct Narration {
    narration: String,
}
#[derive(Deserialize)]
struct AnswersReply {
    answers: Vec<String>,
}
#[derive(Deserialize)]
struct InsightAnswer {
    answer: String,
}

/// A reply that is only blanks says nothing: it is not accepted.
fn said(purpose: GmPurpose, text: String) -> Result<String, Error> {
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err(Error::Reply {
            purpose: purpose.as_str().to_string(),
            message: "the text is empty".into(),
        });
    }
    Ok(text)
}

/// Reading the GM's validated replies.
impl GmPurpose {
    pub fn read_narration(value: &Value) -> Result<String, Error> {
        let n: Narration = read(GmPurpose::Narration, value)?;
        said(GmPurpose::Narration, n.narration)
    }
    /// Exactly `n` answers: missing ones say so, extra ones are dropped.
    pub fn read_answers(value: &Value, n: usize) -> Result<Vec<String>, Error> {
        let mut a: AnswersReply = read(GmPurpose::Answers, value)?;
        a.answers.resize(n, "You don't know yet.".to_string());
        Ok(a.answers
            .into_iter()
            .map(|x| x.trim().to_string())
            .collect())
    }
    pub fn read_ruling(value: &Value) -> Result<GmRulingReply, Error> {
        read(GmPurpose::Ruling, value)
    }
    pub fn read_insight_answer(value: &Value) -> Result<String, Error> {
        let a: InsightAnswer = read(GmPurpose::InsightAnswer, value)?;
        said(GmPurpose::InsightAnswer, a.answer)
    }
    pub fn read_outcome(value: &Value) -> Result<GmOutcomeReply, Error> {
        let mut o: GmOutcomeReply = read(GmPurpose::Outcome, value)?;
        o.outcome = said(GmPurpose::Outcome, o.outcome)?;
        Ok(o)
    }
}
