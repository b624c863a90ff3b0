//! Fine-tuned weights on top of the base model, small enough to ship in a repository.
//!
//! An adapter is a safetensors file. A pair `NAME.lora_a` (r × in) and `NAME.lora_b` (out × r,
//! already scaled) adds the low-rank update `lora_b · lora_a` to the base weight `NAME.weight`
//! (LoRA, merged once at load, so an adapted model runs exactly as fast as the base). Any other
//! tensor whose name the base model has replaces it. Tensors the base model does not have
//! (a classifier's head, say) are left for the caller: see [`extra`].

use std::collections::HashMap;

use candle_core::{DType, Device, Result, Tensor};

const LORA_A: &str = ".lora_a";
const LORA_B: &str = ".lora_b";

/// The base weights with the adapter applied, by name.
pub(crate) fn adapted(
    base: &[u8],
    adapter: &[u8],
    device: &Device,
) -> Result<HashMap<String, Tensor>> {
    let mut weights = candle_core::safetensors::load_buffer(base, device)?;
    let prefix = if weights.contains_key("bert.embeddings.word_embeddings.weight") {
        "bert."
    } else {
        ""
    };
    let delta = candle_core::safetensors::load_buffer(adapter, device)?;
    for (name, t) in &delta {
        if let Some(stem) = name.strip_suffix(LORA_A) {
            let b = delta.get(&format!("{stem}{LORA_B}")).ok_or_else(|| {
                candle_core::Error::Msg(format!("adapter: {name} has no {stem}{LORA_B}"))
            })?;
            let key = format!("{prefix}{stem}.weight");
            let w = weights
                .get(&key)
                .ok_or_else(|| candle_core::Error::Msg(format!("adapter: no base weight {key}")))?;
            let update = b.to_dtype(DType::F32)?.matmul(&t.to_dtype(DType::F32)?)?;
            let merged = (w.to_dtype(DType::F32)? + update)?;
            weights.insert(key, merged);
        } else if name.ends_with(LORA_B) {
            continue;
        } else {
            let key = format!("{prefix}{name}");
            if let Some(w) = weights.get_mut(&key) {
                if w.dims() != t.dims() {
                    candle_core::bail!(
                        "adapter: {name} is {:?}, the base has {:?}",
                        t.dims(),
                        w.dims()
                    );
                }
                *w = t.to_dtype(DType::F32)?;
            }
        }
    }
    Ok(weights)
}

/// The adapter's tensors that are not part of the base model (a head, say), as f32 rows:
/// name → (shape, values).
pub fn extra(
    adapter: &[u8],
    names: &[&str],
) -> std::result::Result<HashMap<String, (Vec<usize>, Vec<f32>)>, crate::Error> {
    let tensors = candle_core::safetensors::load_buffer(adapter, &Device::Cpu).map_err(|e| {
        crate::Error::Inference {
            reason: format!("adapter: {e}"),
        }
    })?;
    let mut out = HashMap::new();
    for name in names {
        let t = tensors.get(*name).ok_or_else(|| crate::Error::Inference {
            reason: format!("adapter: it has no tensor {name}"),
        })?;
        let values = t
            .to_dtype(DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| crate::Error::Inference {
                reason: format!("adapter: {name}: {e}"),
            })?;
        out.insert((*name).to_string(), (t.dims().to_vec(), values));
    }
    Ok(out)
}
