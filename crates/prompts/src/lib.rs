//! The one prompt registry of every game. A game crate lists its templates ([`Template`]:
//! Markdown files beside the crate, embedded at build); whoever starts a game puts the games'
//! lists in one [`Prompts`], where files in a campaign's `prompts/` folder replace the
//! templates of the same name. Names are file names, unique across the games (each game's own
//! prefix: `encounter_`, `scene_`), so one folder serves every game of the campaign.

use std::path::{Path, PathBuf};

use minijinja::Environment;
use serde::Serialize;

/// One embedded template: its file name (the name a campaign's override file takes) and text.
pub type Template = (&'static str, &'static str);

/// What can go wrong with a template; every message names the template or the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("prompt override {path} could not be read: {message}")]
    Read { path: String, message: String },
    #[error(
        "prompt override {path} is not a valid template (fix it, or remove it to use the \
         built-in {name}): {message}"
    )]
    Syntax {
        path: String,
        name: String,
        message: String,
    },
    /// `template` is the name, and the override file when a campaign replaced it.
    #[error("prompt template {template} could not be rendered: {message}")]
    Render { template: String, message: String },
}

/// The templates in use: every game's embedded ones, with a campaign's overrides on top.
#[derive(Clone)]
pub struct Prompts {
    env: Environment<'static>,
    /// The templates a campaign's files replaced, in the games' order, with the file.
    overridden: Vec<(String, PathBuf)>,
}

impl Prompts {
    /// These games' embedded templates only. Each game's tests check that its templates compile
    /// ([`problems`]), so none is missing at run time.
    pub fn embedded(sets: &[&[Template]]) -> Self {
        Prompts {
            env: environment(sets).0,
            overridden: Vec::new(),
        }
    }

    /// These games' templates, with the files of the same name in `dir` (a campaign's
    /// `prompts/`) replacing them. A file that cannot be read or is not a template is an error
    /// naming it, before anything is played.
    pub fn with_overrides(sets: &[&[Template]], dir: &Path) -> Result<Self, Error> {
        let mut prompts = Self::embedded(sets);
        if !dir.is_dir() {
            return Ok(prompts);
        }
        for (name, _) in sets.iter().flat_map(|set| set.iter()) {
            let path = dir.join(name);
            if path.is_file() {
                prompts.replace(name, path)?;
            }
        }
        Ok(prompts)
    }

    fn replace(&mut self, name: &str, path: PathBuf) -> Result<(), Error> {
        let shown = path.display().to_string();
        let source = std::fs::read_to_string(&path).map_err(|e| Error::Read {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        self.env
            .add_template_owned(name.to_string(), source)
            .map_err(|e| Error::Syntax {
                path: shown,
                name: name.to_string(),
                message: format!("{e:#}"),
            })?;
        self.overridden.push((name.to_string(), path));
        Ok(())
    }

    /// The names of the templates a campaign's files replaced.
    pub fn overridden(&self) -> Vec<&str> {
        self.overridden.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// One template rendered with this context, tidied ([`tidy`]): templates stay readable,
    /// prompts stay short.
    pub fn render(&self, name: &str, ctx: impl Serialize) -> Result<String, Error> {
        Ok(tidy(&self.render_exact(name, ctx)?))
    }

    /// One template rendered as it comes out, untidied: for a prompt that carries someone's
    /// words or a view as they are (a person's blank lines and trailing spaces included).
    pub fn render_exact(&self, name: &str, ctx: impl Serialize) -> Result<String, Error> {
        let err = |e: minijinja::Error| Error::Render {
            template: self.shown(name),
            message: format!("{e:#}"),
        };
        self.env
            .get_template(name)
            .map_err(err)?
            .render(ctx)
            .map_err(err)
    }

    /// The template's name, and its file when a campaign's override replaced it.
    fn shown(&self, name: &str) -> String {
        match self.overridden.iter().find(|(n, _)| n == name) {
            Some((_, path)) => format!("{name} (the override {})", path.display()),
            None => name.to_string(),
        }
    }
}

/// Every problem of these embedded sets: a template that does not compile, a name two of them
/// use. Each game's tests assert there are none.
pub fn problems(sets: &[&[Template]]) -> Vec<String> {
    environment(sets).1
}

/// The files in `dir` (a campaign's `prompts/`) that replace no template of these sets: a
/// misspelt override is otherwise never read.
pub fn unused_files(sets: &[&[Template]], dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let known = |file: &str| sets.iter().flat_map(|s| s.iter()).any(|(n, _)| *n == file);
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| !p.file_name().and_then(|f| f.to_str()).is_some_and(known))
        .collect();
    out.sort();
    out
}

/// The environment of these sets, and what was wrong with them.
fn environment(sets: &[&[Template]]) -> (Environment<'static>, Vec<String>) {
    let mut env = Environment::new();
    env.add_filter("a", with_article);
    let mut problems = Vec::new();
    for (name, source) in sets.iter().flat_map(|set| set.iter()) {
        if env.get_template(name).is_ok() {
            problems.push(format!("two games embed a template named {name}"));
        }
        if let Err(e) = env.add_template(name, source) {
            problems.push(format!("{name}: {e}"));
        }
    }
    (env, problems)
}

/// Collapse runs of blank lines, trim each line's end and the whole: what [`Prompts::render`]
/// does to a rendered template.
pub fn tidy(text: &str) -> String {
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
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    const GAME: &[Template] = &[
        ("game_intent.md", "Intent: {{ narration }}\n\n\n\nEnd.  "),
        ("game_style.md", "You are {{ style | a }}."),
    ];
    const OTHER: &[Template] = &[("other_turn.md", "Turn {{ n }}")];

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
    fn a_render_is_tidied_and_an_exact_render_is_not() {
        let p = Prompts::embedded(&[GAME, OTHER]);
        let ctx = serde_json::json!({"narration": "hi  \n\n\nthere"});
        assert_eq!(
            p.render("game_intent.md", &ctx).unwrap(),
            "Intent: hi\n\nthere\n\nEnd."
        );
        assert_eq!(
            p.render_exact("game_intent.md", &ctx).unwrap(),
            "Intent: hi  \n\n\nthere\n\n\n\nEnd.  "
        );
        let style = serde_json::json!({"style": "Android"});
        assert_eq!(
            p.render("game_style.md", style).unwrap(),
            "You are an Android."
        );
        assert_eq!(
            p.render("other_turn.md", serde_json::json!({"n": 3}))
                .unwrap(),
            "Turn 3"
        );
    }

    #[test]
    fn an_override_replaces_the_template_of_its_name_in_any_game() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("other_turn.md"), "Custom {{ n }}").unwrap();
        std::fs::write(dir.path().join("notes.md"), "mine").unwrap();
        let p = Prompts::with_overrides(&[GAME, OTHER], dir.path()).unwrap();
        assert_eq!(p.overridden(), ["other_turn.md"]);
        let ctx = serde_json::json!({"n": 3});
        assert_eq!(p.render("other_turn.md", ctx).unwrap(), "Custom 3");
        let style = serde_json::json!({"style": "Savvy"});
        assert_eq!(
            p.render("game_style.md", style).unwrap(),
            "You are a Savvy."
        );
        assert_eq!(
            unused_files(&[GAME, OTHER], dir.path()),
            [dir.path().join("notes.md")]
        );
    }

    #[test]
    fn a_campaign_without_a_prompts_folder_gets_the_embedded_templates() {
        let dir = tempfile::tempdir().unwrap();
        let p = Prompts::with_overrides(&[GAME], &dir.path().join("prompts")).unwrap();
        assert!(p.overridden().is_empty());
        assert!(unused_files(&[GAME], &dir.path().join("prompts")).is_empty());
    }

    #[test]
    fn a_broken_override_names_its_file_and_the_template_it_would_replace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("game_intent.md");
        std::fs::write(&path, "line one\n{% if %}").unwrap();
        let err = Prompts::with_overrides(&[GAME], dir.path()).err().unwrap();
        let Error::Syntax { path: named, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(named, &path.display().to_string());
        let text = err.to_string();
        assert!(text.contains("is not a valid template"), "{text}");
        assert!(text.contains("line 2") || text.contains(":2"), "{text}");
        assert!(text.contains("built-in game_intent.md"), "{text}");
    }

    #[test]
    fn an_override_that_fails_to_render_is_named_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("other_turn.md"), "{{ n.a.b }}").unwrap();
        let p = Prompts::with_overrides(&[OTHER], dir.path()).unwrap();
        let err = p
            .render("other_turn.md", serde_json::json!({}))
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("other_turn.md (the override "), "{text}");
        assert!(
            text.contains(&dir.path().join("other_turn.md").display().to_string()),
            "{text}"
        );
    }

    #[test]
    fn a_broken_or_doubled_embedded_template_is_a_problem() {
        assert!(problems(&[GAME, OTHER]).is_empty());
        let broken: &[Template] = &[("bad.md", "{% if %}")];
        assert_eq!(problems(&[broken]).len(), 1);
        assert_eq!(
            problems(&[OTHER, OTHER]),
            ["two games embed a template named other_turn.md"]
        );
    }
}
