//! Building each layer's model calls from its view, and reading the replies.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use troupe_campaign::{CharacterSheet, Personality};
use troupe_llm::{CallTag, ChatRequest};

use crate::{
    ActionDecl, CharacterView, Error, InsightDecision, Intent, OocReply, PlayerView, PromptSet,
    RenderedPrompt, Schemas, VoteReply,
};

/// Which layer of an AI made a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Player,
    Character,
    /// The campaign memory's own calls (fact extraction), made for no one agent.
    Memory,
    /// The AI game master.
    Gm,
}

/// What a call is for; also the replay key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    ClarifyingQuestions,
    StrategicIntent,
    CharacterAction,
    InsightQuestion,
    InsightDecision,
    CharacterReaction,
    /// A player's message in the party's out-of-character discussion.
    OocDiscussion,
    /// A player's ballot when the discussion ran out of rounds or time.
    ForcedVote,
    /// A player's directive under a plan the party chose and it did not back.
    PartyDirective,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::ClarifyingQuestions => "clarifying_questions",
            Purpose::StrategicIntent => "strategic_intent",
            Purpose::CharacterAction => "character_action",
            Purpose::InsightQuestion => "insight_question",
            Purpose::InsightDecision => "insight_decision",
            Purpose::CharacterReaction => "character_reaction",
            Purpose::OocDiscussion => "ooc_discussion",
            Purpose::ForcedVote => "forced_vote",
            Purpose::PartyDirective => "party_directive",
        }
    }

    /// What the agent's model does for this call, in words a page shows after its name
    /// ("Zara is reacting…").
    pub fn doing(self) -> &'static str {
        match self {
            Purpose::ClarifyingQuestions => "considering questions for the GM",
            Purpose::StrategicIntent => "thinking about strategy",
            Purpose::CharacterAction => "deciding what to attempt",
            Purpose::InsightQuestion => "choosing a LASER FEELINGS question",
            Purpose::InsightDecision => "weighing the insight",
            Purpose::CharacterReaction => "reacting",
            Purpose::OocDiscussion => "talking it over with the party",
            Purpose::ForcedVote => "voting",
            Purpose::PartyDirective => "directing their character under the party's plan",
        }
    }

    pub fn layer(self) -> Layer {
        match self {
            Purpose::ClarifyingQuestions
            | Purpose::StrategicIntent
            | Purpose::InsightDecision
            | Purpose::OocDiscussion
            | Purpose::ForcedVote
            | Purpose::PartyDirective => Layer::Player,
            Purpose::CharacterAction | Purpose::InsightQuestion | Purpose::CharacterReaction => {
                Layer::Character
            }
        }
    }
}

/// A model call an agent wants made: the engine runs it through the gateway and records it.
#[derive(Clone, Debug)]
pub struct AgentCall {
    pub agent: String,
    pub purpose: Purpose,
    pub prompt: RenderedPrompt,
    pub request: ChatRequest,
}

fn call(
    agent: &str,
    purpose: Purpose,
    prompt: RenderedPrompt,
    schema: troupe_llm::ResponseSchema,
    max_tokens: u32,
) -> AgentCall {
    let tag = CallTag::new(agent, purpose.as_str());
    AgentCall {
        agent: agent.to_string(),
        purpose,
        request: request(tag, &prompt, schema, max_tokens),
        prompt,
    }
}

/// The chat request for a rendered prompt: the system message, then the user ones (the story,
/// the seat's own part, the ask), a JSON schema, and the cache prefix the prompt names.
pub(crate) fn request(
    tag: CallTag,
    prompt: &RenderedPrompt,
    schema: troupe_llm::ResponseSchema,
    max_tokens: u32,
) -> ChatRequest {
    ChatRequest {
        tag,
        messages: prompt.messages(),
        schema: Some(schema),
        max_tokens,
        temperature: 0.7,
        seed: None,
        stop: Vec::new(),
        structured: troupe_llm::StructuredOutput::default(),
        cache_prefix: prompt.cache_prefix,
    }
}

/// A player's or character's prompt: the layer's system message, the story and the seat's own
/// part (each call of the seat this turn repeats those three, the story and system every seat
/// of the layer too), then the ask.
fn laid_out(system: String, story: String, seat: String, ask: String) -> RenderedPrompt {
    let shared = 1 + usize::from(!story.is_empty()) + usize::from(!seat.is_empty());
    RenderedPrompt {
        system,
        story,
        seat,
        exchange: None,
        user: ask,
        cache_prefix: Some(shared),
    }
}

/// The shortest prompt prefix both providers cache (OpenAI automatically, Anthropic at a
/// breakpoint), in estimated tokens.
const CACHEABLE_TOKENS: u32 = 1024;

/// Whether a prompt is long enough for a provider to cache it.
fn cacheable(p: &RenderedPrompt) -> bool {
    troupe_llm::estimate_tokens(&p.text()) >= CACHEABLE_TOKENS
}

/// How a character's number leans, in the rulebook's terms (a high number favours LASERS).
pub(crate) fn number_lean(sheet: &CharacterSheet) -> String {
    let n = sheet.number.get();
    let lean = if n >= 4 {
        "better at LASERS (technology, science, calm precision) than FEELINGS"
    } else {
        "better at FEELINGS (intuition, diplomacy, passion) than LASERS"
    };
    format!("{lean}; a LASERS die succeeds under {n}, a FEELINGS die over {n}")
}

/// The player's nine traits, said in words a model can act on.
pub fn temperament(t: &Personality) -> String {
    let pick = |v: f64, low: &'static str, high: &'static str| -> Option<&'static str> {
        if v >= 0.65 {
            Some(high)
        } else if v <= 0.35 {
            Some(low)
        } else {
            None
        }
    };
    let words: Vec<&str> = [
        pick(
            t.analytical_score,
            "trusts gut feelings",
            "thinks things through logically",
        ),
        pick(t.risk_tolerance, "cautious", "bold, happy to take risks"),
        pick(t.detail_oriented, "big-picture", "notices details"),
        pick(
            t.emotional_memory,
            "lets things go",
            "remembers how things felt",
        ),
        pick(t.assertiveness, "prefers to follow", "likes to lead"),
        pick(t.cooperativeness, "independent", "a team player"),
        pick(t.openness, "sticks to what works", "loves new ideas"),
        pick(t.rule_adherence, "bends the rules", "plays by the rules"),
        pick(
            t.roleplay_intensity,
            "plays light",
            "plays the character to the hilt",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    if words.is_empty() {
        "even-tempered, middle of the road".to_string()
    } else {
        words.join(", ")
    }
}

fn player_ctx(v: &PlayerView, extra: Value) -> Value {
    let mut ctx = json!({
        "gm_name": v.gm_name,
        "ship": v.ship,
        "player": v.player,
        "character": v.character,
        "day": v.day,
        "recent": v.recent,
        "narration": v.narration,
        "clarifications": v.clarifications,
        "memories": v.memories,
        "number_lean": number_lean(&v.character),
        "temperament": temperament(&v.player.traits),
        "party": v.party,
        "proposals": v.proposals,
        "discussion": v.discussion,
        "plan": v.plan,
        "secrets": v.secrets,
        "party_table": !v.party.is_empty(),
    });
    merge(&mut ctx, extra);
    ctx
}

fn character_ctx(v: &CharacterView, extra: Value) -> Value {
    let mut ctx = json!({
        "ship": v.ship,
        "character": v.character,
        "day": v.day,
        "recent": v.recent,
        "narration": v.narration,
        "clarifications": v.clarifications,
        "memories": v.memories,
        "directive": v.directive,
        "others": v.others,
        "gm_note": v.gm_note,
        "insight": v.insight,
        "action": v.action,
        "roll": v.roll,
        "outcome": v.outcome,
        "number_lean": number_lean(&v.character),
        "secrets": v.secrets,
        "party_table": !v.others.is_empty(),
    });
    merge(&mut ctx, extra);
    ctx
}

fn merge(into: &mut Value, extra: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, extra) {
        a.extend(b);
    }
}

impl PromptSet {
    fn player(&self, v: &PlayerView, task: &str, extra: Value) -> Result<RenderedPrompt, Error> {
        let ctx = player_ctx(v, extra);
        Ok(laid_out(
            self.render("player_system.md", &ctx)?,
            self.render("_story.md", &ctx)?,
            self.render("player_seat.md", &ctx)?,
            self.render(task, &ctx)?,
        ))
    }

    fn character(
        &self,
        v: &CharacterView,
        task: &str,
        extra: Value,
    ) -> Result<RenderedPrompt, Error> {
        let ctx = character_ctx(v, extra);
        Ok(laid_out(
            self.render("character_system.md", &ctx)?,
            self.render("_story.md", &ctx)?,
            self.render("character_seat.md", &ctx)?,
            self.render(task, &ctx)?,
        ))
    }

    /// The player's clarifying questions for the GM (up to `max`).
    pub fn questions(&self, v: &PlayerView, max: u32) -> Result<AgentCall, Error> {
        let p = self.player(v, "player_questions.md", json!({"max_questions": max}))?;
        Ok(call(
            &v.agent_id,
            Purpose::ClarifyingQuestions,
            p,
            Schemas::questions(max),
            200,
        ))
    }

    /// The player's strategy and directive.
    pub fn intent(&self, v: &PlayerView) -> Result<AgentCall, Error> {
        let p = self.player(v, "player_intent.md", json!({}))?;
        Ok(call(
            &v.agent_id,
            Purpose::StrategicIntent,
            p,
            Schemas::intent(!v.party.is_empty()),
            250,
        ))
    }

    fn proposers(v: &PlayerView) -> Vec<String> {
        v.proposals.iter().map(|(a, _)| a.clone()).collect()
    }

    /// The player's message in discussion round `round`.
    pub fn discussion(&self, v: &PlayerView, round: u32) -> Result<AgentCall, Error> {
        let proposers = Self::proposers(v);
        let p = self.player(
            v,
            "player_discussion.md",
            json!({"round": round, "max_rounds": crate::consensus::MAX_DISCUSSION_ROUNDS,
                "proposers": proposers}),
        )?;
        Ok(call(
            &v.agent_id,
            Purpose::OocDiscussion,
            p,
            Schemas::discussion(&proposers),
            250,
        ))
    }

    /// The player's ballot after `rounds` rounds without agreement.
    pub fn vote(&self, v: &PlayerView, rounds: u32) -> Result<AgentCall, Error> {
        let proposers = Self::proposers(v);
        let p = self.player(
            v,
            "player_vote.md",
            json!({"rounds": rounds, "proposers": proposers}),
        )?;
        Ok(call(
            &v.agent_id,
            Purpose::ForcedVote,
            p,
            Schemas::vote(&proposers),
            150,
        ))
    }

    /// The player's directive under the plan the party settled on.
    pub fn party_directive(&self, v: &PlayerView) -> Result<AgentCall, Error> {
        let p = self.player(v, "player_party_directive.md", json!({}))?;
        Ok(call(
            &v.agent_id,
            Purpose::PartyDirective,
            p,
            Schemas::party_directive(),
            120,
        ))
    }

    /// After an insight: change the action and roll again?
    pub fn insight_decision(&self, v: &PlayerView) -> Result<AgentCall, Error> {
        let (q, a) = v
            .insight
            .as_ref()
            .map(|i| (i.question.as_str(), i.answer.as_str()))
            .unwrap_or(("", ""));
        let p = self.player(
            v,
            "player_insight.md",
            json!({"insight_question": q, "insight_answer": a}),
        )?;
        Ok(call(
            &v.agent_id,
            Purpose::InsightDecision,
            p,
            Schemas::insight_decision(),
            120,
        ))
    }

    /// The character's action; `attempt` 2 and 3 carry the validator's feedback, more sternly.
    pub fn action(
        &self,
        v: &CharacterView,
        attempt: u32,
        feedback: &str,
    ) -> Result<AgentCall, Error> {
        let mut p = self.character(
            v,
            "character_action.md",
            json!({"attempt": attempt, "feedback": feedback}),
        )?;
        if attempt == 1 && cacheable(&p) {
            // The reaction will repeat this whole prompt (see `reaction`): name it all, so
            // Anthropic marks the end of the ask too.
            p.cache_prefix = p.cache_prefix.map(|n| n + 1);
        }
        let schema = Schemas::action(!v.others.is_empty());
        Ok(call(&v.agent_id, Purpose::CharacterAction, p, schema, 300))
    }

    /// The character's LASER FEELINGS question.
    pub fn insight_question(&self, v: &CharacterView) -> Result<AgentCall, Error> {
        let p = self.character(v, "character_insight_question.md", json!({}))?;
        Ok(call(
            &v.agent_id,
            Purpose::InsightQuestion,
            p,
            Schemas::insight_question(),
            100,
        ))
    }

    /// The character's emotional reaction to the outcome. When the action's prompt was long
    /// enough for a provider to cache it (1,024 tokens), the reaction repeats it, the action
    /// declared as the answer, and asks on: most of its prompt is then read from the cache
    /// instead of paid in full. A shorter action's prompt is not cached, and the reaction
    /// stays short.
    pub fn reaction(&self, v: &CharacterView) -> Result<AgentCall, Error> {
        let action = self.character(
            v,
            "character_action.md",
            json!({"attempt": 1, "feedback": ""}),
        )?;
        let p = match &v.action {
            Some(declared) if cacheable(&action) => {
                let mut p =
                    self.character(v, "character_reaction.md", json!({"continued": true}))?;
                p.exchange = Some((action.user, declared.clone()));
                // The action's prompt, its ask included, is the prefix read back.
                p.cache_prefix = p.cache_prefix.map(|n| n + 1);
                p
            }
            _ => self.character(v, "character_reaction.md", json!({}))?,
        };
        Ok(call(
            &v.agent_id,
            Purpose::CharacterReaction,
            p,
            Schemas::reaction(),
            200,
        ))
    }
}

#[derive(Deserialize)]
struct Questions {
    questions: Vec<String>,
}
#[derive(Deserialize)]
struct Question {
    question: String,
}
#[derive(Deserialize)]
struct Reaction {
    reaction: String,
}

fn read<T: for<'de> Deserialize<'de>>(purpose: Purpose, value: &Value) -> Result<T, Error> {
    serde_json::from_value(value.clone()).map_err(|e| Error::Reply {
        purpose: purpose.as_str().to_string(),
        message: e.to_string(),
    })
}

/// Reading validated replies into decisions.
impl Purpose {
    pub fn read_questions(value: &Value) -> Result<Vec<String>, Error> {
        let q: Questions = read(Purpose::ClarifyingQuestions, value)?;
        Ok(q.questions
            .into_iter()
            .map(|q| q.trim().to_string())
            .filter(|q| !q.is_empty())
            .collect())
    }
    pub fn read_intent(value: &Value) -> Result<Intent, Error> {
        read(Purpose::StrategicIntent, value)
    }
    pub fn read_action(value: &Value) -> Result<ActionDecl, Error> {
        read(Purpose::CharacterAction, value)
    }
    pub fn read_insight_question(value: &Value) -> Result<String, Error> {
        Ok(read::<Question>(Purpose::InsightQuestion, value)?.question)
    }
    pub fn read_insight_decision(value: &Value) -> Result<InsightDecision, Error> {
        read(Purpose::InsightDecision, value)
    }
    pub fn read_discussion(value: &Value) -> Result<OocReply, Error> {
        let mut r: OocReply = read(Purpose::OocDiscussion, value)?;
        r.message = r.message.trim().to_string();
        Ok(r)
    }
    pub fn read_vote(value: &Value) -> Result<VoteReply, Error> {
        read(Purpose::ForcedVote, value)
    }
    pub fn read_party_directive(value: &Value) -> Result<String, Error> {
        Ok(read::<crate::PartyDirective>(Purpose::PartyDirective, value)?.directive)
    }
    pub fn read_reaction(value: &Value) -> Result<String, Error> {
        Ok(read::<Reaction>(Purpose::CharacterReaction, value)?.reaction)
    }
}
