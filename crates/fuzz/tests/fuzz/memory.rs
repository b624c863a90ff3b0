#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzz target: campaign memory on what the GM, a model or an import file says: entity names,
//! aliases, the tokeniser, time references, import lines, storage, claims, retrieval and
//! corruption.

use proptest::prelude::*;
use serde_json::json;
use troupe_fuzz::{config, nasty_bytes, nasty_text};
use troupe_memory::claims::{Claim, attribute_key, check_claim, coverage, store_claims};
use troupe_memory::extract::{Moment, aliases_in, entity_key, import, read_import, store_episodes};
use troupe_memory::text::{
    content_words, fts_query, lean, names_in, normalise_name, query_words, time_ref, untag, words,
};
use troupe_memory::{
    Episode, GameTime, MemoryStore, Query, Reader, Rememberer, Scope, Source, corrupt,
};

/// Names, tags, appositives, time words: what the memory code reads in a sentence.
const VOCAB: &[&str] = &[
    "Galvin",
    "Vos",
    "the",
    "The",
    "THE",
    "a",
    "an",
    "merchant",
    "old",
    "trader",
    ", the ",
    ", a ",
    "@Galvin",
    "@{Old Vos}",
    "@",
    "@{",
    "}",
    "Hello",
    "GM",
    "LASER FEELINGS",
    "I'm",
    "day",
    "days",
    "session",
    "sessions",
    "ago",
    "last",
    "first",
    "now",
    "three",
    "26",
    "0",
    "4294967296",
    "'s",
    "’s",
    "'",
    "is",
    "was",
    "captain",
    "of",
    "OR",
    "AND",
    "NEAR",
    "\"",
];

fn episode(id: usize, speaker: &str, text: String, scope: Scope) -> Episode {
    Episode {
        id: format!("e{id}"),
        session: 1 + (id as u32 % 3),
        turn: id as u32,
        day: Some(id as u32),
        timestamp: String::new(),
        speaker: speaker.to_string(),
        text,
        scope,
    }
}

/// Every pure text function on one text.
fn text_functions(text: &str) {
    let _ = names_in(text);
    let _ = untag(text);
    let _ = words(text);
    let _ = content_words(text);
    let qw = query_words(text);
    let _ = fts_query(&qw);
    let _ = lean(text);
    let _ = time_ref(text, 3, Some(40));
    let _ = time_ref(text, 0, None);
    let _ = normalise_name(text);
    let _ = entity_key(text);
    let _ = attribute_key(text);
    let _ = aliases_in(text);
}

/// The GM's and the characters' words stored, claims drawn from them, a question asked, and
/// the recalled facts corrupted: the path a line of narration takes during `troupe play`.
fn store_and_recall(texts: &[String], question: &str) -> Result<(), TestCaseError> {
    let mut store = MemoryStore::in_memory().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let items: Vec<(Episode, Source, Moment)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (speaker, source, scope) = match i % 3 {
                0 => ("gm", Source::Gm, Scope::Party),
                1 => ("zara", Source::Character, Scope::Character("zara".into())),
                _ => ("p1", Source::Player, Scope::Player("p1".into())),
            };
            (
                episode(i, speaker, t.clone(), scope),
                source,
                Moment::Narration,
            )
        })
        .collect();
    store_episodes(&mut store, &items).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let claims: Vec<Claim> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Claim {
            episode_id: format!("e{i}"),
            subject: names_in(t)
                .into_iter()
                .next()
                .unwrap_or_else(|| question.to_string()),
            attribute: question.to_string(),
            value: words(t).last().cloned().unwrap_or_default(),
            statement: t.clone(),
            scope: Scope::Party,
        })
        .collect();
    for (claim, text) in claims.iter().zip(texts) {
        let _ = check_claim(text, claim, &[question.to_string()]);
        let _ = coverage(text, &[claim]);
    }
    store_claims(&mut store, &items, &claims).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let now = GameTime {
        session: 3,
        turn: 9,
        day: Some(40),
    };
    for reader in [
        Reader::All,
        Reader::Character("zara".into()),
        Reader::Player("p1".into()),
    ] {
        let hits = store
            .search(&Query::new(question, reader, now))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let who = Rememberer {
            detail_oriented: 0.0,
            emotional_memory: 1.0,
            base_decay_rate: 1.0,
        };
        for (i, hit) in hits.iter().enumerate() {
            let other = hits.get(i + 1).map(|h| h.fact.text.as_str());
            let _ = corrupt(&hit.fact, &who, 10_000, 1.0, i as u64, other);
        }
    }
    let _ = store
        .entities()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(())
}

/// An import file: lines that are episodes with nasty fields, and lines that are not JSON.
fn import_file(texts: &[String], raw: &[u8]) -> Result<(), TestCaseError> {
    let mut file = String::new();
    for (i, t) in texts.iter().enumerate() {
        let line = json!({"id": t, "session": i, "speaker": t, "text": t, "day": i, "turn": i});
        file.push_str(&line.to_string());
        file.push('\n');
    }
    file.push_str(&String::from_utf8_lossy(raw));
    match read_import(&file, "notes.jsonl") {
        Ok(episodes) => {
            let mut store =
                MemoryStore::in_memory().map_err(|e| TestCaseError::fail(e.to_string()))?;
            import(&mut store, &episodes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        Err(errors) => {
            for e in errors {
                prop_assert!(e.to_string().starts_with("notes.jsonl, line "), "{}", e);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn memory_text_never_panics(text in nasty_text(VOCAB, 40)) {
        text_functions(&text);
    }

    #[test]
    fn memory_storage_never_panics(
        texts in proptest::collection::vec(nasty_text(VOCAB, 24), 1..5),
        question in nasty_text(VOCAB, 12),
    ) {
        store_and_recall(&texts, &question)?;
    }

    #[test]
    fn memory_import_never_panics(
        texts in proptest::collection::vec(nasty_text(VOCAB, 12), 0..4),
        raw in nasty_bytes(VOCAB, 16),
    ) {
        import_file(&texts, &raw)?;
    }
}

/// Inputs that once broke memory.
#[test]
fn regressions() {
    for text in [
        // aliases_in sliced the text at an offset found in its lowercased copy ("İ" grows).
        "Hello Galvin. İ the éé Galvin.",
        "İİİİ the trader Vos nods.",
    ] {
        text_functions(text);
        store_and_recall(&[text.to_string()], text).unwrap();
    }
}
