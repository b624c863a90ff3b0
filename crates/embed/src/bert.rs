//! The BERT encoder, as Hugging Face's `BertModel` computes it, for inference only: the token,
//! position and (first) token-type embeddings, then the transformer layers, returning the last
//! hidden states. Written here on candle-core and candle-nn rather than taken from
//! candle-transformers, whose hundred other models cost about a minute more of build time.
//!
//! Weight names are those of a `BertModel` checkpoint (`embeddings.*`, `encoder.layer.N.*`),
//! optionally under a `bert.` prefix.

use candle_core::{Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, Module, VarBuilder};
use serde::Deserialize;

/// The fields of `config.json` the encoder needs.
#[derive(Clone, Debug, Deserialize)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "gelu")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "absolute")]
    pub position_embedding_type: String,
}

fn gelu() -> String {
    "gelu".into()
}
fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}
fn absolute() -> String {
    "absolute".into()
}

#[derive(Clone, Copy, Debug)]
enum Act {
    /// The exact GELU, with erf (`gelu`).
    Gelu,
    /// The tanh approximation (`gelu_new`, `gelu_pytorch_tanh`).
    GeluTanh,
    Relu,
}

impl Act {
    fn parse(name: &str) -> Option<Act> {
        match name {
            "gelu" => Some(Act::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Some(Act::GeluTanh),
            "relu" => Some(Act::Relu),
            _ => None,
        }
    }

    fn apply(self, xs: &Tensor) -> Result<Tensor> {
        match self {
            Act::Gelu => xs.gelu_erf(),
            Act::GeluTanh => xs.gelu(),
            Act::Relu => xs.relu(),
        }
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    inter: Linear,
    out: Linear,
    out_norm: LayerNorm,
}

/// A loaded BERT encoder.
pub struct Bert {
    words: Embedding,
    positions: Embedding,
    /// Token type 0's embedding, `(hidden,)`: every input here is a single segment.
    type0: Tensor,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    act: Act,
}

impl Bert {
    pub fn load(vb: VarBuilder, c: &Config) -> Result<Bert> {
        let act = Act::parse(&c.hidden_act).ok_or_else(|| {
            candle_core::Error::Msg(format!(
                "hidden_act {:?} is not one this encoder knows (gelu, gelu_new, relu)",
                c.hidden_act
            ))
        })?;
        if c.position_embedding_type != "absolute" {
            candle_core::bail!(
                "position_embedding_type {:?} is not supported (only absolute)",
                c.position_embedding_type
            );
        }
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            candle_core::bail!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                c.hidden_size,
                c.num_attention_heads
            );
        }
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let h = c.hidden_size;
        let norm = |vb: VarBuilder| candle_nn::layer_norm(h, c.layer_norm_eps, vb);
        let e = vb.pp("embeddings");
        let words = candle_nn::embedding(c.vocab_size, h, e.pp("word_embeddings"))?;
        let positions =
            candle_nn::embedding(c.max_position_embeddings, h, e.pp("position_embeddings"))?;
        let type0 = e
            .pp("token_type_embeddings")
            .get((c.type_vocab_size, h), "weight")?
            .get(0)?;
        let embed_norm = norm(e.pp("LayerNorm"))?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                Ok(Layer {
                    query: candle_nn::linear(h, h, a.pp("self.query"))?,
                    key: candle_nn::linear(h, h, a.pp("self.key"))?,
                    value: candle_nn::linear(h, h, a.pp("self.value"))?,
                    attn_out: candle_nn::linear(h, h, a.pp("output.dense"))?,
                    attn_norm: norm(a.pp("output.LayerNorm"))?,
                    inter: candle_nn::linear(h, c.intermediate_size, l.pp("intermediate.dense"))?,
                    out: candle_nn::linear(c.intermediate_size, h, l.pp("output.dense"))?,
                    out_norm: norm(l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert {
            words,
            positions,
            type0,
            embed_norm,
            layers,
            heads: c.num_attention_heads,
            head_dim: h / c.num_attention_heads,
            act,
        })
    }

    /// The last hidden states `(batch, tokens, hidden)` of `ids` `(batch, tokens)`, u32, where
    /// `mask` `(batch, tokens)` is 1 for real tokens and 0 for padding.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (b, t) = ids.dims2()?;
        let pos = Tensor::arange(0u32, t as u32, ids.device())?;
        let x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&pos)?)?
            .broadcast_add(&self.type0)?;
        let mut x = self.embed_norm.forward(&x)?;
        // Padding gets the most negative score, so softmax gives it no weight: (b, 1, 1, t).
        let bias =
            ((mask.to_dtype(x.dtype())? - 1.0)? * f64::from(f32::MAX))?.reshape((b, 1, 1, t))?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let split = |y: Tensor| -> Result<Tensor> {
            y.reshape((b, t, self.heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        for l in &self.layers {
            let q = split(l.query.forward(&x)?)?;
            let k = split(l.key.forward(&x)?)?;
            let v = split(l.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx =
                probs
                    .matmul(&v)?
                    .transpose(1, 2)?
                    .reshape((b, t, self.heads * self.head_dim))?;
            let a = l.attn_norm.forward(&(l.attn_out.forward(&ctx)? + &x)?)?;
            let f = l.out.forward(&self.act.apply(&l.inter.forward(&a)?)?)?;
            x = l.out_norm.forward(&(f + &a)?)?;
        }
        Ok(x)
    }
}
