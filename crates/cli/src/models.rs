//! Choosing the model: command-line flags, then the campaign's `model` block, then the
//! environment. When nothing is configured, say what was tried and how to configure one.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use troupe_campaign::ModelSettings;
use troupe_llm::{ChatModel, ProviderSpec, ReplayModel, connect};

/// The model options of `troupe play`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ModelArgs {
    /// Provider: openai, anthropic, ollama, openai-compatible, replay
    #[arg(long)]
    pub provider: Option<String>,
    /// Model name (e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.2)
    #[arg(long)]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible server (vLLM, llama-server, LM Studio…)
    #[arg(long)]
    pub base_url: Option<String>,
    /// Environment variable that holds the API key
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Replay recorded model replies from this JSONL file (implies --provider replay)
    #[arg(long)]
    pub replay: Option<std::path::PathBuf>,
}

const HOW: &str = "Configure a model with one of:
  --provider openai --model gpt-4o-mini          (key in OPENAI_API_KEY)
  --provider anthropic --model claude-sonnet-4-5 (key in ANTHROPIC_API_KEY)
  --provider ollama --model llama3.2             (a local Ollama server)
  --provider openai-compatible --base-url http://localhost:8080/v1 --model NAME
  --replay FILE.jsonl                            (recorded replies, for demos and tests)
or a \"model\" block in the campaign file, e.g. {\"provider\": \"ollama\", \"model\": \"llama3.2\"}.";

pub fn choose(
    args: &ModelArgs,
    campaign: Option<&ModelSettings>,
    campaign_dir: &Path,
) -> anyhow::Result<Arc<dyn ChatModel>> {
    let http_timeout = Duration::from_secs(120);
    if let Some(file) = &args.replay {
        return replay(file);
    }
    // Flags win field by field over the campaign's block.
    let provider = args
        .provider
        .clone()
        .or_else(|| campaign.map(|c| c.provider.clone()));
    let model = args
        .model
        .clone()
        .or_else(|| campaign.and_then(|c| c.model.clone()));
    let base_url = args
        .base_url
        .clone()
        .or_else(|| campaign.and_then(|c| c.base_url.clone()));
    let key_env = args
        .api_key_env
        .clone()
        .or_else(|| campaign.and_then(|c| c.api_key_env.clone()));

    let provider = match provider {
        Some(p) => p,
        None => {
            let mut tried = vec![
                "--provider (not given)".to_string(),
                "the campaign's \"model\" block (absent)".to_string(),
            ];
            if std::env::var_os("OPENAI_API_KEY").is_some() {
                "openai".to_string()
            } else if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
                "anthropic".to_string()
            } else {
                tried.push("OPENAI_API_KEY (not set)".into());
                tried.push("ANTHROPIC_API_KEY (not set)".into());
                bail!(
                    "no model is configured. Tried: {}.\n{HOW}",
                    tried.join(", ")
                );
            }
        }
    };
    let need_model = |default: &str| model.clone().unwrap_or_else(|| default.to_string());
    let mut spec = match provider.to_ascii_lowercase().as_str() {
        "replay" => {
            let file = campaign
                .and_then(|c| c.replay_file.clone())
                .context("provider \"replay\" needs a file: --replay FILE or \"replay_file\" in the campaign's model block")?;
            return replay(&campaign_dir.join(file));
        }
        "openai" => ProviderSpec::openai(need_model("gpt-4o-mini")),
        "anthropic" => ProviderSpec::anthropic(need_model("claude-sonnet-4-5")),
        "ollama" => ProviderSpec::ollama(need_model("llama3.2")),
        "openai-compatible" => {
            let Some(url) = base_url.clone() else {
                bail!(
                    "provider openai-compatible needs --base-url (e.g. http://localhost:8080/v1)"
                );
            };
            let Some(m) = model.clone() else {
                bail!(
                    "provider openai-compatible needs --model (the name the server knows the model by)"
                );
            };
            ProviderSpec::openai_compatible(url, m, key_env.clone())
        }
        "local" => bail!(
            "the embedded local model is not built yet (it is planned: a llama.cpp provider that runs a GGUF file on the CPU).\n{HOW}"
        ),
        other => bail!(
            "unknown provider \"{other}\"; known: openai, anthropic, ollama, openai-compatible, replay"
        ),
    };
    if let Some(url) = base_url {
        spec.base_url = url;
    }
    if key_env.is_some() {
        spec.api_key_env = key_env;
    }
    connect(&spec, http_timeout).map_err(|e| anyhow::anyhow!("{e}"))
}

fn replay(file: &Path) -> anyhow::Result<Arc<dyn ChatModel>> {
    let model = ReplayModel::from_file(file).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Arc::new(model))
}
