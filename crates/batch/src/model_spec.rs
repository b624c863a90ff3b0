//! A model as a batch names it (`PROVIDER:MODEL`, `troupe simulate --model`, `troupe bench`):
//! parsed once, turned into `troupe play` flags and into short labels for directory names.

use std::path::Path;

/// A model to play with, as `troupe play` takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    pub provider: String,
    pub model: String,
}

pub fn parse_model(text: &str) -> Result<ModelSpec, String> {
    match text.split_once(':') {
        Some((p, m)) if !p.trim().is_empty() && !m.trim().is_empty() => Ok(ModelSpec {
            provider: p.trim().to_ascii_lowercase(),
            model: m.trim().to_string(),
        }),
        _ => Err(format!(
            "\"{text}\" is not PROVIDER:MODEL (e.g. openai:gpt-4o-mini, ollama:llama3.2, replay:FILE.jsonl)"
        )),
    }
}

impl ModelSpec {
    /// The `troupe play` flags that choose this model.
    pub fn play_flags(&self) -> Vec<String> {
        if self.provider == "replay" {
            return vec!["--replay".into(), self.model.clone()];
        }
        let flags = ["--provider", &self.provider, "--model", &self.model];
        flags.iter().map(|s| (*s).to_string()).collect()
    }

    /// A short name for directory names: `replay-research` for replay:examples/research.replay.jsonl,
    /// `openai-gpt-4o-mini` for openai:gpt-4o-mini.
    pub fn label(&self) -> String {
        let model = if self.provider == "replay" {
            let file = Path::new(&self.model).file_name().unwrap_or_default();
            let file = file.to_string_lossy();
            file.split('.').next().unwrap_or_default().to_string()
        } else {
            self.model.clone()
        };
        slug(&format!("{}-{model}", self.provider))
    }

    pub fn spec(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }
}

/// Letters, digits, `-` and `_`; every other run of characters becomes one `-`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_become_play_flags_and_short_labels() {
        let replay = parse_model("replay:examples/research.replay.jsonl").unwrap();
        assert_eq!(
            replay.play_flags(),
            ["--replay", "examples/research.replay.jsonl"]
        );
        assert_eq!(replay.label(), "replay-research");
        let hosted = parse_model("OpenAI:gpt-4o-mini").unwrap();
        assert_eq!(
            hosted.play_flags(),
            ["--provider", "openai", "--model", "gpt-4o-mini"]
        );
        assert_eq!(hosted.label(), "openai-gpt-4o-mini");
        assert!(parse_model("gpt-4o").is_err());
        assert!(parse_model("openai:").is_err());
    }
}
