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

/// A tensor read out of an adapter: its shape and its values, row-major, as f32.
pub type Values = (Vec<usize>, Vec<f32>);

/// The adapter's tensors that are not part of the base model (a head, say), by name.
pub fn extra(
    adapter: &[u8],
    names: &[&str],
) -> std::result::Result<HashMap<String, Values>, crate::Error> {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    fn file(tensors: &[(&str, Vec<f32>, &[usize])]) -> Vec<u8> {
        let map: HashMap<String, Tensor> = tensors
            .iter()
            .map(|(n, v, s)| {
                let t = Tensor::from_vec(v.clone(), *s, &Device::Cpu).unwrap();
                ((*n).to_string(), t)
            })
            .collect();
        // One name per call: the tests run in parallel threads of one process, and a shared
        // name let one test remove the file another was reading (seen in CI).
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("adapter-{}-{call}.st", std::process::id());
        let path = std::env::temp_dir().join(name);
        candle_core::safetensors::save(&map, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        bytes
    }

    fn values(t: &Tensor) -> Vec<f32> {
        t.flatten_all().unwrap().to_vec1().unwrap()
    }

    #[test]
    fn a_lora_pair_adds_its_product_and_other_tensors_replace() {
        // A checkpoint whose names carry the `bert.` prefix, as the shipped model's do; the
        // adapter's names never do.
        let base = file(&[
            ("bert.embeddings.word_embeddings.weight", vec![0.0], &[1, 1]),
            ("bert.l.weight", vec![1.0, 0.0, 0.0, 1.0], &[2, 2]),
            ("bert.l.bias", vec![0.5, 0.5], &[2]),
        ]);
        let adapter = file(&[
            ("l.lora_a", vec![1.0, 2.0], &[1, 2]),
            ("l.lora_b", vec![3.0, 4.0], &[2, 1]),
            ("l.bias", vec![9.0, 8.0], &[2]),
            ("head.weight", vec![7.0], &[1]),
        ]);
        let w = adapted(&base, &adapter, &Device::Cpu).unwrap();
        // [[1,0],[0,1]] + [3,4]ᵀ·[1,2] = [[4,6],[4,9]]
        assert_eq!(values(&w["bert.l.weight"]), [4.0, 6.0, 4.0, 9.0]);
        assert_eq!(values(&w["bert.l.bias"]), [9.0, 8.0]);
        assert!(!w.contains_key("head.weight") && !w.contains_key("bert.head.weight"));
        let head = extra(&adapter, &["head.weight"]).unwrap();
        assert_eq!(head["head.weight"], (vec![1], vec![7.0]));
    }

    #[test]
    fn a_mismatched_or_orphaned_tensor_is_an_error() {
        let base = file(&[("l.weight", vec![1.0, 0.0, 0.0, 1.0], &[2, 2])]);
        let wrong_shape = file(&[("l.weight", vec![1.0], &[1])]);
        let err = adapted(&base, &wrong_shape, &Device::Cpu).unwrap_err();
        assert!(err.to_string().contains("the base has [2, 2]"), "{err}");
        let orphan = file(&[("l.lora_a", vec![1.0, 2.0], &[1, 2])]);
        let err = adapted(&base, &orphan, &Device::Cpu).unwrap_err();
        assert!(err.to_string().contains("has no l.lora_b"), "{err}");
        assert!(extra(&base, &["head.weight"]).is_err());
    }
}
