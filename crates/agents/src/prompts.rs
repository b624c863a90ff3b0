//! Prompt templates: Markdown files under `crates/agents/prompts/`, embedded at build time and
//! overridable per campaign by files of the same name in the campaign's `prompts/` folder.

use std::path::Path;

use minijinja::Environment;
use serde::Serialize;

use crate::Error;

/// The embedded templates, by file name.
const EMBEDDED: &[(&str, &str)] = &[
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
        "scene_player.md",
        include_str!("../prompts/scene_player.md"),
    ),
    (
        "scene_polish.md",
        include_str!("../prompts/scene_polish.md"),
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

/// The set of templates in use: the embedded ones, with any campaign overrides on top.
pub struct PromptSet {
    env: Environment<'static>,
    overridden: Vec<String>,
}

impl PromptSet {
    /// The embedded templates only.
    pub fn embedded() -> Self {
        let mut env = Environment::new();
        env.set_trim_blocks(false);
        env.add_filter("a", with_article);
        for (name, source) in EMBEDDED {
            // The embedded templates are tested to compile, so this cannot fail at run time.
            let _ = env.add_template(name, source);
        }
        PromptSet {
            env,
            overridden: Vec::new(),
        }
    }

    /// The embedded templates, with files of the same name in `dir` replacing them.
    pub fn with_overrides(dir: &Path) -> Result<Self, Error> {
        let mut set = Self::embedded();
        if !dir.is_dir() {
            return Ok(set);
        }
        for (name, _) in EMBEDDED {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let source = std::fs::read_to_string(&path).map_err(|e| Error::Override {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            set.env
                .add_template_owned(name.to_string(), source)
                .map_err(|e| Error::Override {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
            set.overridden.push(name.to_string());
        }
        Ok(set)
    }

    /// The names of templates replaced by campaign overrides.
    pub fn overridden(&self) -> &[String] {
        &self.overridden
    }

    /// One template rendered with this context (the games outside this crate, the scene's
    /// speaker and polish among them, render theirs here too).
    pub fn render(&self, name: &str, ctx: impl Serialize) -> Result<String, Error> {
        let err = |e: minijinja::Error| Error::Template {
            name: name.to_string(),
            message: format!("{e:#}"),
        };
        let text = self
            .env
            .get_template(name)
            .map_err(err)?
            .render(ctx)
            .map_err(err)?;
        Ok(tidy(&text))
    }
}

/// Collapse runs of blank lines and trim: templates stay readable, prompts stay short.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

/// `{{ word | a }}`: the word with its indefinite article, "an Android", "a Savvy", "an
/// Intrepid", "a Hot-Shot". By the first letter, with the usual exceptions of sound
/// ("a Unique", "a One-eyed", "an Honest").
fn with_article(word: String) -> String {
    let lower = word.trim().to_lowercase();
    let vowel_letter = lower.starts_with(['a', 'e', 'i', 'o', 'u']);
    let sounds_like_you = ["uni", "use", "usu", "eu", "one", "once"]
        .iter()
        .any(|p| lower.starts_with(p));
    let silent_h = ["honest", "honor", "honour", "hour", "heir"]
        .iter()
        .any(|p| lower.starts_with(p));
    let article = if (vowel_letter && !sounds_like_you) || silent_h {
        "an"
    } else {
        "a"
    };
    format!("{article} {word}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_get_the_article_their_sound_needs() {
        for (style, said) in [
            ("Android", "an Android"),
            ("Alien", "an Alien"),
            ("Intrepid", "an Intrepid"),
            ("Savvy", "a Savvy"),
            ("Hot-Shot", "a Hot-Shot"),
            ("Dangerous", "a Dangerous"),
            ("Unique", "a Unique"),
            ("Honest", "an Honest"),
        ] {
            assert_eq!(with_article(style.to_string()), said);
        }
    }

    #[test]
    fn every_embedded_template_compiles() {
        let mut env = Environment::new();
        for (name, source) in EMBEDDED {
            env.add_template(name, source).unwrap();
        }
    }

    #[test]
    fn an_override_replaces_the_embedded_template() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("player_intent.md"),
            "Custom {{ narration }}",
        )
        .unwrap();
        let set = PromptSet::with_overrides(dir.path()).unwrap();
        assert_eq!(set.overridden(), ["player_intent.md"]);
        let text = set
            .render("player_intent.md", serde_json::json!({"narration": "hi"}))
            .unwrap();
        assert_eq!(text, "Custom hi");
    }

    #[test]
    fn a_broken_override_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("player_intent.md"), "{% if %}").unwrap();
        let err = PromptSet::with_overrides(dir.path()).err().unwrap();
        assert!(err.to_string().contains("player_intent.md"), "{err}");
    }
}
