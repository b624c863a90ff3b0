//! The worker's scheduler: every call in flight is one llama.cpp sequence, and one `decode`
//! per step advances them all (continuous batching).
//!
//! Each sequence lives in its own KV stream (`kv_unified = false`) and attention is computed
//! without flash attention, so a sequence's keys and values sit at the same cell indices, and
//! each of its logits is computed by the same arithmetic in the same order, whatever else is
//! in the batch: a reply is the reply the call would get alone. `tests/llm/local_batch.rs` checks
//! it against the real model.
//!
//! Prompt prefixes are reused twice over: a sequence keeps the tokens of its previous call in
//! its stream (a player's next call usually starts like its last), and a call whose prompt
//! shares a longer prefix with another sequence's cache copies that sequence's stream
//! instead of evaluating the prefix again.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use super::schema::grammar_schema;
use super::{Job, LocalReply, LocalTimings, chain, complete_json, count, ms};
use crate::{ChatReply, ChatRequest, ProviderError, Usage};

/// Tokens decoded per llama.cpp batch (prompt chunks plus one token per generating sequence).
pub(super) const BATCH_TOKENS: u32 = 512;

/// A prefix shorter than this is evaluated rather than copied from another sequence: copying
/// a stream moves its whole buffer, which costs about what a few dozen tokens do.
const MIN_COPY_TOKENS: usize = 64;

pub(super) struct Engine<'m> {
    pub model: &'m LlamaModel,
    pub ctx: LlamaContext<'m>,
    pub template: LlamaChatTemplate,
    pub model_name: String,
    /// Context tokens of one sequence.
    pub seq_tokens: usize,
    /// Grammars generated from JSON schemas, by schema text.
    pub grammars: HashMap<String, String>,
    /// One per llama.cpp sequence id.
    pub slots: Vec<Slot>,
    /// Reused between tokens so each step does not allocate a vocabulary-sized array.
    pub candidates: LlamaTokenDataArray,
    /// Counts admissions, to pick the least recently used free slot.
    pub clock: u64,
}

#[derive(Default)]
pub(super) struct Slot {
    /// The tokens whose keys and values are in this sequence's stream, in position order.
    cached: Vec<LlamaToken>,
    last_used: u64,
    call: Option<Call>,
}

impl Slot {
    pub fn new() -> Self {
        Self::default()
    }
}

/// One call in flight.
struct Call {
    job: Job,
    started: Instant,
    prompt: Vec<LlamaToken>,
    /// Prompt tokens that were already in the stream (own or copied) when the call began.
    reused: usize,
    max_tokens: usize,
    chain: LlamaSampler,
    grammar: Option<LlamaSampler>,
    /// The token to feed at the next step (the last one sampled).
    next: Option<LlamaToken>,
    /// The batch index of this sequence's logits after the current step.
    logits: Option<i32>,
    /// Whether the current step decodes a chunk of this call's prompt.
    reading: bool,
    prompt_ms: f64,
    first_token_ms: f64,
    generating_since: Option<Instant>,
    bytes: Vec<u8>,
    /// Of `bytes`, how many have been reported as text (a token may end mid-character).
    reported: usize,
    text: String,
    generated: u32,
    resamples: u32,
}

impl Engine<'_> {
    /// Serves jobs until every sender is gone: admits what has arrived whenever a slot is
    /// free, then advances every call by one decode.
    pub fn serve(&mut self, inbox: &mpsc::Receiver<Job>) {
        let mut open = true;
        loop {
            if self.busy() == 0 {
                match inbox.recv() {
                    Ok(job) => self.admit(job),
                    Err(_) => return,
                }
            }
            while open && self.busy() < self.slots.len() {
                match inbox.try_recv() {
                    Ok(job) => self.admit(job),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => open = false,
                }
            }
            if self.busy() > 0 {
                self.step();
            } else if !open {
                return;
            }
        }
    }

    fn busy(&self) -> usize {
        self.slots.iter().filter(|s| s.call.is_some()).count()
    }

    /// Starts a job in a free slot, or answers it at once when it cannot run.
    fn admit(&mut self, job: Job) {
        if job.reply.is_closed() {
            return;
        }
        let prompt = match self.tokenize(&job.req) {
            Ok(p) => p,
            Err(e) => {
                let _ = job.reply.send(Err(e));
                return;
            }
        };
        let Some(slot) = self.pick_slot(&prompt) else {
            let _ = job.reply.send(Err(ProviderError::Config(
                "the local model has no free sequence (a bug: jobs are admitted only when one is)"
                    .into(),
            )));
            return;
        };
        self.slots[slot].call = self.start(slot, job, prompt);
    }

    /// The rendered, tokenized prompt, checked against one sequence's context.
    fn tokenize(&self, req: &ChatRequest) -> Result<Vec<LlamaToken>, ProviderError> {
        let text = self.render(req)?;
        let vocab = self.model.vocab();
        let mut tokens = vocab.tokenize(text.as_bytes(), true, true);
        // A template that writes its own BOS plus the tokenizer's would give two.
        if tokens.len() >= 2 && tokens[0] == tokens[1] && tokens[0] == vocab.bos() {
            tokens.remove(0);
        }
        if tokens.is_empty() {
            return Err(ProviderError::Config("the prompt is empty".into()));
        }
        if tokens.len() + 8 >= self.seq_tokens {
            return Err(ProviderError::Config(format!(
                "the prompt is {} tokens but the local model's context holds {}; raise \
                 \"context_tokens\" in the campaign's model block (the model was trained on {})",
                tokens.len(),
                self.seq_tokens,
                self.model.n_ctx_train()
            )));
        }
        Ok(tokens)
    }

    /// The conversation in the model's chat format, ending where the assistant speaks.
    fn render(&self, req: &ChatRequest) -> Result<String, ProviderError> {
        let messages = crate::types::merge_consecutive(&req.messages)
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

    /// The free slot whose cache starts most like `prompt`; among equals, the least recently
    /// used (so a player's calls tend to come back to the slot that holds its last prompt).
    fn pick_slot(&self, prompt: &[LlamaToken]) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.call.is_none())
            .max_by_key(|(_, s)| (common_prefix(&s.cached, prompt), u64::MAX - s.last_used))
            .map(|(i, _)| i)
    }

    /// Prepares the slot's stream for `prompt` (keeping or copying the longest cached prefix)
    /// and builds the call's samplers; answers the job with the error when its schema has no
    /// grammar.
    fn start(&mut self, slot: usize, job: Job, prompt: Vec<LlamaToken>) -> Option<Call> {
        self.clock += 1;
        self.slots[slot].last_used = self.clock;
        let keep = prompt.len() - 1; // the last prompt token is always evaluated, for logits
        let reused = if job.no_cache {
            self.forget(slot, 0);
            0
        } else {
            self.reuse_prefix(slot, &prompt[..keep])
        };
        let req = &job.req;
        let room = self.seq_tokens - prompt.len();
        let max_tokens = usize::try_from(req.max_tokens)
            .unwrap_or(usize::MAX)
            .min(room)
            .max(1);
        let grammar = match (&req.schema, job.unconstrained) {
            (Some(schema), false) => {
                // The grammar fits the budget the call really has, which a long prompt shrinks.
                let budget = u32::try_from(max_tokens).unwrap_or(u32::MAX);
                match self.grammar(&schema.name, &schema.schema, budget) {
                    Ok(g) => Some(g),
                    Err(e) => {
                        let _ = job.reply.send(Err(e));
                        return None;
                    }
                }
            }
            _ => None,
        };
        Some(Call {
            chain: chain(req, self.model.n_vocab()),
            grammar,
            started: Instant::now(),
            prompt,
            reused,
            max_tokens,
            next: None,
            logits: None,
            reading: false,
            prompt_ms: 0.0,
            first_token_ms: 0.0,
            generating_since: None,
            bytes: Vec::new(),
            reported: 0,
            text: String::new(),
            generated: 0,
            resamples: 0,
            job,
        })
    }

    /// Leaves in `slot`'s stream the longest cached prefix of `prefix` found in any stream,
    /// copying another sequence's stream when that saves at least [`MIN_COPY_TOKENS`].
    /// Returns how many prompt tokens are now cached.
    fn reuse_prefix(&mut self, slot: usize, prefix: &[LlamaToken]) -> usize {
        let own = common_prefix(&self.slots[slot].cached, prefix);
        let donor = self
            .slots
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != slot)
            .map(|(i, s)| (i, common_prefix(&s.cached, prefix)))
            .max_by_key(|(i, n)| (*n, usize::MAX - i));
        if let Some((from, n)) = donor
            && n >= own + MIN_COPY_TOKENS
            && self.copy_stream(from, slot, n)
        {
            return n;
        }
        self.forget(slot, own);
        self.slots[slot].cached.len()
    }

    /// Copies sequence `from`'s stream into `to` and trims it to `keep` tokens. llama.cpp
    /// copies streams whole; the buffer is copied at the next decode, before it computes.
    fn copy_stream(&mut self, from: usize, to: usize, keep: usize) -> bool {
        let (Ok(src), Ok(dst)) = (i32::try_from(from), i32::try_from(to)) else {
            return false;
        };
        if self.ctx.copy_kv_cache_seq(src, dst, None, None).is_err() {
            return false;
        }
        self.slots[to].cached = self.slots[from].cached.clone();
        self.forget(to, keep);
        self.slots[to].cached.len() == keep
    }

    /// Drops `slot`'s cached positions from `keep` on (all of them if llama.cpp cannot trim).
    fn forget(&mut self, slot: usize, keep: usize) {
        let cached = &mut self.slots[slot].cached;
        if keep >= cached.len() {
            return;
        }
        let seq = u32::try_from(slot).ok();
        let p0 = u32::try_from(keep).ok();
        let trimmed = self.ctx.clear_kv_cache_seq(seq, p0, None).unwrap_or(false);
        if trimmed {
            cached.truncate(keep);
        } else {
            let _ = self.ctx.clear_kv_cache_seq(seq, None, None);
            cached.clear();
        }
    }

    /// One decode for every call in flight: each generating call feeds its last token, then
    /// calls still reading their prompt share what is left of the batch. Then every call
    /// whose logits came out samples its next token.
    fn step(&mut self) {
        self.drop_abandoned();
        let capacity = usize::try_from(BATCH_TOKENS).unwrap_or(512);
        let mut batch = LlamaBatch::new(capacity, 1);
        let prompt_started = Instant::now();
        if let Err(e) = self.fill(&mut batch, capacity) {
            self.fail_all(&e);
            return;
        }
        if batch.n_tokens() == 0 {
            return;
        }
        if let Err(e) = self.ctx.decode(&mut batch) {
            self.ctx.clear_kv_cache();
            self.slots.iter_mut().for_each(|s| s.cached.clear());
            self.fail_all(&ProviderError::BadReply(format!(
                "llama.cpp could not evaluate the batch: {e}"
            )));
            return;
        }
        let decode_ms = ms(prompt_started.elapsed());
        for slot in 0..self.slots.len() {
            self.advance(slot, decode_ms);
        }
    }

    /// Calls whose caller stopped waiting (the gateway's timeout) stop spending the CPU.
    fn drop_abandoned(&mut self) {
        for s in &mut self.slots {
            if s.call.as_ref().is_some_and(|c| c.job.reply.is_closed()) {
                s.call = None;
            }
        }
    }

    /// Puts this step's tokens in `batch`: a chunk of one call's prompt when a call is still
    /// reading its prompt (the call admitted first), else the last token of every generating
    /// call. A prompt is never decoded beside other sequences' tokens: llama.cpp splits such a
    /// batch into pieces whose arithmetic differs from the prompt's alone (measured: a reply
    /// changed), while generation steps, one token per sequence, give the same logits as alone.
    fn fill(&mut self, batch: &mut LlamaBatch, capacity: usize) -> Result<(), ProviderError> {
        let reading = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                s.call
                    .as_ref()
                    .is_some_and(|c| c.generating_since.is_none())
            })
            .min_by_key(|(_, s)| s.last_used)
            .map(|(i, _)| i);
        for slot in &mut self.slots {
            if let Some(call) = slot.call.as_mut() {
                call.logits = None;
                call.reading = false;
            }
        }
        match reading {
            Some(i) => self.fill_prompt(batch, i, capacity),
            None => self.fill_generation(batch),
        }
    }

    fn fill_prompt(
        &mut self,
        batch: &mut LlamaBatch,
        i: usize,
        capacity: usize,
    ) -> Result<(), ProviderError> {
        let slot = &mut self.slots[i];
        let Some(call) = slot.call.as_mut() else {
            return Ok(());
        };
        call.reading = true;
        let done = slot.cached.len();
        let end = call.prompt.len().min(done + capacity);
        for (pos, token) in call.prompt.iter().enumerate().take(end).skip(done) {
            let last = pos + 1 == call.prompt.len();
            if last {
                call.logits = Some(batch.n_tokens());
            }
            add(batch, *token, pos, i, last)?;
        }
        slot.cached.extend_from_slice(&call.prompt[done..end]);
        Ok(())
    }

    fn fill_generation(&mut self, batch: &mut LlamaBatch) -> Result<(), ProviderError> {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(call) = slot.call.as_mut() else {
                continue;
            };
            if let Some(token) = call.next.take() {
                call.logits = Some(batch.n_tokens());
                add(batch, token, slot.cached.len(), i, true)?;
                slot.cached.push(token);
            }
        }
        Ok(())
    }

    /// After a decode: samples `slot`'s next token if its logits came out, and answers the
    /// call when it is done.
    fn advance(&mut self, slot: usize, decode_ms: f64) {
        let Some(mut call) = self.slots[slot].call.take() else {
            return;
        };
        if call.reading {
            call.prompt_ms += decode_ms;
        }
        let Some(idx) = call.logits else {
            self.slots[slot].call = Some(call);
            return;
        };
        if call.generating_since.is_none() {
            call.generating_since = Some(Instant::now());
            call.first_token_ms = ms(call.started.elapsed());
        }
        match self.next_token(&mut call, idx) {
            Ok(None) => self.slots[slot].call = Some(call),
            Ok(Some(finish)) => {
                let reply = self.reply(&call, finish);
                let _ = call.job.reply.send(Ok(reply));
            }
            Err(e) => {
                let _ = call.job.reply.send(Err(e));
            }
        }
    }

    /// Samples and takes one token; `Some(finish)` when generation stops here.
    fn next_token(
        &mut self,
        call: &mut Call,
        idx: i32,
    ) -> Result<Option<&'static str>, ProviderError> {
        let (token, resampled) = self.sample(idx, &mut call.chain, call.grammar.as_mut());
        call.resamples += u32::from(resampled);
        let vocab = self.model.vocab();
        if vocab.is_eog(token) {
            return Ok(Some("end"));
        }
        call.chain.accept(token);
        if let Some(g) = call.grammar.as_mut() {
            g.try_accept(token).map_err(|e| {
                ProviderError::BadReply(format!(
                    "the local model's grammar refused a token it had allowed ({e})"
                ))
            })?;
        }
        call.generated += 1;
        call.bytes.extend(vocab.token_to_piece(token, false, None));
        call.text = String::from_utf8_lossy(&call.bytes).into_owned();
        let req = &call.job.req;
        if let Some(cut) = req
            .stop
            .iter()
            .filter_map(|s| call.text.find(s.as_str()))
            .min()
        {
            call.text.truncate(cut);
            return Ok(Some("stop"));
        }
        report(call);
        if call.job.req.schema.is_some() && complete_json(&call.text) {
            return Ok(Some("json"));
        }
        if usize::try_from(call.generated).unwrap_or(usize::MAX) >= call.max_tokens {
            return Ok(Some("max_tokens"));
        }
        call.next = Some(token);
        Ok(None)
    }

    fn reply(&self, call: &Call, finish: &'static str) -> LocalReply {
        let generate_ms = call.generating_since.map_or(0.0, |t| ms(t.elapsed()));
        let timings = LocalTimings {
            prompt_tokens: count(call.prompt.len()),
            cached_tokens: count(call.reused),
            prompt_ms: call.prompt_ms,
            first_token_ms: call.first_token_ms,
            generated_tokens: call.generated,
            generate_ms,
            grammar_resamples: call.resamples,
            finish,
        };
        LocalReply {
            reply: ChatReply {
                content: call.text.clone(),
                usage: Usage {
                    input_tokens: timings.prompt_tokens,
                    // The KV cache kept from the previous call: llama.cpp's own prefix cache.
                    cached_input_tokens: timings.cached_tokens.min(timings.prompt_tokens),
                    cache_write_tokens: 0,
                    output_tokens: call.generated,
                },
                model: self.model_name.clone(),
            },
            timings,
        }
    }

    fn fail_all(&mut self, e: &ProviderError) {
        for s in &mut self.slots {
            if let Some(call) = s.call.take() {
                let _ = call.job.reply.send(Err(e.clone()));
            }
        }
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

/// Tells the caller, if it listens, the token count and the text since the last report (the
/// whole characters only: a token may end inside one).
fn report(call: &mut Call) {
    let Some(progress) = &call.job.progress else {
        return;
    };
    let fresh = call.bytes.get(call.reported..).unwrap_or_default();
    let whole = match std::str::from_utf8(fresh) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&fresh[..e.valid_up_to()]).unwrap_or_default(),
    };
    call.reported += whole.len();
    let _ = progress.send((call.generated, whole.to_string()));
}

fn add(
    batch: &mut LlamaBatch,
    token: LlamaToken,
    pos: usize,
    seq: usize,
    logits: bool,
) -> Result<(), ProviderError> {
    let pos = i32::try_from(pos).unwrap_or(i32::MAX);
    let seq = i32::try_from(seq).unwrap_or(i32::MAX);
    batch
        .add(token, pos, &[seq], logits)
        .map_err(|e| ProviderError::BadReply(format!("llama.cpp batch: {e}")))
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
