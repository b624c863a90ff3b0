//! Providers as data: a wire format, a base URL, a model and the name of the key variable.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::anthropic::AnthropicModel;
use crate::openai::OpenAiModel;
use crate::{ChatModel, ProviderError};

pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const OLLAMA_DEFAULT_BASE_URL: &str = "http://localhost:11434/v1";

/// The two request/reply shapes that cover the providers troupe talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireFormat {
    /// `POST {base}/chat/completions`: OpenAI, Ollama's `/v1`, vLLM, llama-server, LM Studio.
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// `POST {base}/v1/messages`: Anthropic.
    #[serde(rename = "anthropic-messages")]
    AnthropicMessages,
}

/// Everything needed to reach one model. Holds the *name* of the key variable, never the key,
/// so a spec can be logged or saved safely.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderSpec {
    /// Short provider name used in [`ChatModel::name`], e.g. `openai`, `ollama`.
    pub label: String,
    pub wire: WireFormat,
    /// For OpenAI-style servers this includes the version path (`…/v1`); for Anthropic it does not.
    pub base_url: String,
    pub model: String,
    /// Environment variable read at [`connect`] time; `None` for servers that need no key.
    pub api_key_env: Option<String>,
    /// Ask for replies as a stream, so people see progress while the model writes (on unless
    /// turned off; a server that answers with a whole body anyway is read as one).
    #[serde(default = "streams")]
    pub stream: bool,
}

fn streams() -> bool {
    true
}

impl ProviderSpec {
    /// OpenAI itself; key in `OPENAI_API_KEY`, base URL overridable with `OPENAI_BASE_URL`.
    pub fn openai(model: impl Into<String>) -> Self {
        Self {
            label: "openai".into(),
            wire: WireFormat::OpenAiChat,
            base_url: OPENAI_DEFAULT_BASE_URL.into(),
            model: model.into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            stream: true,
        }
    }

    /// A local Ollama server through its OpenAI-compatible endpoint; no key.
    pub fn ollama(model: impl Into<String>) -> Self {
        Self {
            label: "ollama".into(),
            wire: WireFormat::OpenAiChat,
            base_url: OLLAMA_DEFAULT_BASE_URL.into(),
            model: model.into(),
            api_key_env: None,
            stream: true,
        }
    }

    /// Anthropic; key in `ANTHROPIC_API_KEY`, base URL overridable with `ANTHROPIC_BASE_URL`.
    pub fn anthropic(model: impl Into<String>) -> Self {
        Self {
            label: "anthropic".into(),
            wire: WireFormat::AnthropicMessages,
            base_url: ANTHROPIC_DEFAULT_BASE_URL.into(),
            model: model.into(),
            api_key_env: Some("ANTHROPIC_API_KEY".into()),
            stream: true,
        }
    }

    /// Any server speaking the OpenAI chat format (vLLM, llama-server, LM Studio, a proxy…).
    /// `base_url` includes the version path, e.g. `http://localhost:8080/v1`.
    pub fn openai_compatible(
        base_url: impl Into<String>,
        model: impl Into<String>,
        api_key_env: Option<String>,
    ) -> Self {
        Self {
            label: "openai-compatible".into(),
            wire: WireFormat::OpenAiChat,
            base_url: base_url.into(),
            model: model.into(),
            api_key_env,
            stream: true,
        }
    }
}

/// Builds the model a spec describes, reading its key from the process environment.
///
/// The key is read now, not per call, so a missing key fails before the session starts. When the
/// spec keeps the default OpenAI or Anthropic base URL, `OPENAI_BASE_URL` or `ANTHROPIC_BASE_URL`
/// (if set and non-empty) replaces it — the usual way to point at a proxy or gateway. An explicit
/// base URL in the spec always wins. `http_timeout` bounds each HTTP request.
pub fn connect(
    spec: &ProviderSpec,
    http_timeout: Duration,
) -> Result<Arc<dyn ChatModel>, ProviderError> {
    connect_with_env(spec, http_timeout, &|name| std::env::var(name).ok())
}

/// [`connect`] with the environment injected, so tests need not mutate the process environment.
pub fn connect_with_env(
    spec: &ProviderSpec,
    http_timeout: Duration,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ChatModel>, ProviderError> {
    let non_empty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let key = match &spec.api_key_env {
        None => None,
        Some(var) => Some(non_empty(var).ok_or_else(|| {
            ProviderError::Config(format!(
                "the {} provider needs an API key in the environment variable {var}, which is not set. \
                 Set it (e.g. `export {var}=...`) or choose a local provider such as ollama.",
                spec.label
            ))
        })?),
    };
    let (default_base, override_var) = match spec.wire {
        WireFormat::OpenAiChat => (OPENAI_DEFAULT_BASE_URL, "OPENAI_BASE_URL"),
        WireFormat::AnthropicMessages => (ANTHROPIC_DEFAULT_BASE_URL, "ANTHROPIC_BASE_URL"),
    };
    let base_url = if spec.base_url.trim_end_matches('/') == default_base {
        non_empty(override_var).unwrap_or_else(|| spec.base_url.clone())
    } else {
        spec.base_url.clone()
    };
    let base_url = base_url.trim_end_matches('/').to_string();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(ProviderError::Config(format!(
            "the base URL \"{base_url}\" of the {} provider must start with http:// or https://",
            spec.label
        )));
    }
    if spec.model.trim().is_empty() {
        return Err(ProviderError::Config(format!(
            "the {} provider needs a model name (e.g. --model)",
            spec.label
        )));
    }
    let client = reqwest::Client::builder()
        .timeout(http_timeout)
        .connect_timeout(http_timeout.min(Duration::from_secs(15)))
        .build()
        .map_err(|e| ProviderError::Config(format!("could not set up the HTTP client: {e}")))?;
    let name = format!("{}:{}@{}", spec.label, spec.model, base_url);
    let model: Arc<dyn ChatModel> = match spec.wire {
        WireFormat::OpenAiChat => Arc::new(OpenAiModel::new(
            client,
            name,
            base_url,
            spec.model.clone(),
            key,
            spec.api_key_env.clone(),
            spec.stream,
        )),
        WireFormat::AnthropicMessages => Arc::new(AnthropicModel::new(
            client,
            name,
            base_url,
            spec.model.clone(),
            key,
            spec.api_key_env.clone(),
            spec.stream,
        )),
    };
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_missing_key_names_the_variable_and_how_to_set_it() {
        let err = connect_with_env(
            &ProviderSpec::openai("gpt-4o-mini"),
            Duration::from_secs(5),
            &env_of(&[]),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(err.contains("OPENAI_API_KEY"), "{err}");
        assert!(err.contains("export OPENAI_API_KEY="), "{err}");
    }

    #[test]
    fn the_name_shows_provider_model_and_url_but_never_the_key() {
        let env = env_of(&[("OPENAI_API_KEY", "sk-secret-123")]);
        let model = connect_with_env(
            &ProviderSpec::openai("gpt-4o-mini"),
            Duration::from_secs(5),
            &env,
        );
        let name = model.map(|m| m.name()).unwrap_or_default();
        assert_eq!(name, "openai:gpt-4o-mini@https://api.openai.com/v1");
        assert!(!name.contains("sk-secret"));
    }

    #[test]
    fn the_base_url_variable_overrides_only_the_default() {
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://proxy.local/"),
            ("OPENAI_BASE_URL", "http://proxy.local/v1"),
        ]);
        let t = Duration::from_secs(5);
        let anthropic =
            connect_with_env(&ProviderSpec::anthropic("claude"), t, &env).map(|m| m.name());
        assert_eq!(
            anthropic.ok().as_deref(),
            Some("anthropic:claude@http://proxy.local")
        );
        let ollama = connect_with_env(&ProviderSpec::ollama("llama3.2"), t, &env).map(|m| m.name());
        assert_eq!(
            ollama.ok().as_deref(),
            Some("ollama:llama3.2@http://localhost:11434/v1")
        );
    }

    #[test]
    fn a_base_url_without_scheme_is_a_config_error() {
        let spec = ProviderSpec::openai_compatible("localhost:8080/v1", "m", None);
        let err = connect_with_env(&spec, Duration::from_secs(5), &env_of(&[])).err();
        assert!(
            matches!(err, Some(ProviderError::Config(ref m)) if m.contains("http://")),
            "{err:?}"
        );
    }
}
