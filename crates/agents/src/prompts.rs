//! The player's, character's and AI GM's prompt templates (Lasers & Feelings) and the memory's
//! extraction: Markdown files under `crates/agents/prompts/`, embedded at build, in the one
//! prompt registry ([`troupe_prompts::Prompts`]) where a campaign's `prompts/` folder overrides
//! them by name.

use serde::Serialize;
use troupe_prompts::{Prompts, Template};

use crate::Error;

/// The embedded templates, by file name.
pub const TEMPLATES: &[Template] = &[
    ("_story.md", include_str!("../prompts/_story.md")),
    (
        "_clarifications.md",
        include_str!("../prompts/_clarifications.md"),
    ),
    (
        "player_system.md",
        include_str!("../prompts/player_system.md"),
    ),
    ("player_seat.md", include_str!("../prompts/player_seat.md")),
    (
        "player_questions.md",
        include_str!("../prompts/player_questions.md"),
    ),
    (
        "player_intent.md",
        include_str!("../prompts/player_intent.md"),
    ),
    (
        "player_discussion.md",
        include_str!("../prompts/player_discussion.md"),
    ),
    ("player_vote.md", include_str!("../prompts/player_vote.md")),
    (
        "player_party_directive.md",
        include_str!("../prompts/player_party_directive.md"),
    ),
    (
        "player_insight.md",
        include_str!("../prompts/player_insight.md"),
    ),
    (
        "character_system.md",
        include_str!("../prompts/character_system.md"),
    ),
    (
        "character_seat.md",
        include_str!("../prompts/character_seat.md"),
    ),
    (
        "character_action.md",
        include_str!("../prompts/character_action.md"),
    ),
    (
        "character_insight_question.md",
        include_str!("../prompts/character_insight_question.md"),
    ),
    (
        "character_reaction.md",
        include_str!("../prompts/character_reaction.md"),
    ),
    ("_gm_turn.md", include_str!("../prompts/_gm_turn.md")),
    ("gm_system.md", include_str!("../prompts/gm_system.md")),
    (
        "gm_narration.md",
        include_str!("../prompts/gm_narration.md"),
    ),
    ("gm_answers.md", include_str!("../prompts/gm_answers.md")),
    ("gm_ruling.md", include_str!("../prompts/gm_ruling.md")),
    (
        "gm_insight_answer.md",
        include_str!("../prompts/gm_insight_answer.md"),
    ),
    ("gm_outcome.md", include_str!("../prompts/gm_outcome.md")),
    (
        "extract_facts.md",
        include_str!("../prompts/extract_facts.md"),
    ),
    (
        "extract_facts_system.md",
        include_str!("../prompts/extract_facts_system.md"),
    ),
];

/// A prompt's messages, rendered. The game master's are a system and a user message. An AI
/// player's or character's open with what the whole party shares, so that the calls of a turn
/// share a prefix a provider's prompt cache can keep: the system message (the same for every
/// seat of a layer all session), the story (a user message, the same for every seat this
/// turn), then the seat's own part (who it is, its secrets and memories: the same for each of
/// its calls this turn) and last the ask.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedPrompt {
    pub system: String,
    /// The story so far and the GM's narration this turn (empty: no such message).
    pub story: String,
    /// What is this seat's own: never shared (empty: no such message).
    pub seat: String,
    /// An earlier ask of this seat and the answer it gave, between the seat's part and the ask:
    /// the call then repeats that earlier call's whole prompt, which a provider may have cached.
    pub exchange: Option<(String, String)>,
    /// The ask, the last message.
    pub user: String,
    /// How many leading messages later calls repeat byte for byte (`None`: not known).
    pub cache_prefix: Option<usize>,
}

impl RenderedPrompt {
    /// A system and a user message, with no story, seat part or named cache prefix.
    pub fn plain(system: String, user: String) -> Self {
        RenderedPrompt {
            system,
            story: String::new(),
            seat: String::new(),
            exchange: None,
            user,
            cache_prefix: None,
        }
    }

    /// The messages, in order (the empty ones left out).
    pub fn messages(&self) -> Vec<troupe_llm::Message> {
        use troupe_llm::Message;
        let mut out = vec![Message::system(self.system.clone())];
        for m in [&self.story, &self.seat] {
            if !m.is_empty() {
                out.push(Message::user(m.clone()));
            }
        }
        if let Some((ask, answer)) = &self.exchange {
            out.push(Message::user(ask.clone()));
            out.push(Message::assistant(answer.clone()));
        }
        out.push(Message::user(self.user.clone()));
        out
    }

    /// Every message's text, in order: all a model reads (for tests and checks).
    pub fn text(&self) -> String {
        self.messages()
            .into_iter()
            .map(|m| m.content)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The registry as the players, characters and AI GM use it: the embedded templates of
/// [`TEMPLATES`] (and, built by whoever starts the game, every other game's), with a
/// campaign's overrides on top.
#[derive(Clone)]
pub struct PromptSet(Prompts);

impl PromptSet {
    /// This crate's embedded templates only.
    pub fn embedded() -> Self {
        PromptSet(Prompts::embedded(&[TEMPLATES]))
    }

    /// The names of templates replaced by campaign overrides.
    pub fn overridden(&self) -> Vec<&str> {
        self.0.overridden()
    }

    /// One template rendered with this context, tidied.
    pub fn render(&self, name: &str, ctx: impl Serialize) -> Result<String, Error> {
        Ok(self.0.render(name, ctx)?)
    }

    /// The registry itself.
    pub fn registry(&self) -> &Prompts {
        &self.0
    }
}

/// A registry holding at least [`TEMPLATES`] (the binary's holds every game's).
impl From<Prompts> for PromptSet {
    fn from(prompts: Prompts) -> Self {
        PromptSet(prompts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_template_compiles() {
        assert_eq!(troupe_prompts::problems(&[TEMPLATES]), Vec::<String>::new());
    }

    #[test]
    fn an_override_replaces_the_embedded_template() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("player_intent.md"),
            "Custom {{ narration }}",
        )
        .unwrap();
        let set = PromptSet::from(Prompts::with_overrides(&[TEMPLATES], dir.path()).unwrap());
        assert_eq!(set.overridden(), ["player_intent.md"]);
        let text = set
            .render("player_intent.md", serde_json::json!({"narration": "hi"}))
            .unwrap();
        assert_eq!(text, "Custom hi");
    }
}
