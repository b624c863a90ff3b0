//! Sentence vectors for facts (feature `embeddings`): all-MiniLM-L6-v2 through `troupe-embed`,
//! kept beside the facts in `memory_vectors` (384 little-endian f32 a fact).
//!
//! At question time the question's vector is compared with the candidates the other signals
//! found (a re-rank: a few hundred dot products, whatever the memory's size); in a small
//! memory (up to [`BRUTE_FORCE_FACTS`] facts) every visible fact is compared too, so a fact
//! worded nothing like the question can still be found.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::OptionalExtension;
use troupe_embed::{Embedder, cosine};

use crate::{Error, MemoryStore, NewFact, Stored};

/// Up to this many facts, the question is compared with every visible fact (about 10 ms at
/// the limit); above it, only with the candidates of the other signals.
pub(crate) const BRUTE_FORCE_FACTS: u64 = 20_000;

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .filter_map(|c| <[u8; 4]>::try_from(c).ok().map(f32::from_le_bytes))
        .collect()
}

/// Names [`vector_text`]'s recipe in `memory_meta`.
const VECTOR_RECIPE: &str = "speaker: text";

/// What a fact's vector is made from: who said it, then what was said. Questions name people
/// ("What did Caroline research?"): on LoCoMo's tuned pair a vector of the text alone finds a
/// quarter of the evidence in its top 10, one with the speaker half.
fn vector_text(speaker: &str, text: &str) -> String {
    // Keep VECTOR_RECIPE in step: a change here must make older vectors go.
    if speaker.is_empty() {
        text.to_string()
    } else {
        format!("{speaker}: {text}")
    }
}

fn embed_err(e: impl std::fmt::Display) -> Error {
    Error::Embeddings(e.to_string())
}

impl MemoryStore {
    /// Use sentence embeddings from now on; facts without a vector get one now. Returns how
    /// many were embedded.
    pub fn attach_embedder(&mut self, embedder: Arc<Embedder>) -> Result<usize, Error> {
        self.embedder = Some(embedder);
        self.forget_vectors_of_another_recipe()?;
        let missing: Vec<(i64, String)> = {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT f.id, f.speaker, f.text FROM memory_facts f
                     LEFT JOIN memory_vectors v ON v.fact = f.id WHERE v.fact IS NULL",
                )
                .map_err(|e| self.err(e))?;
            stmt.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    vector_text(&r.get::<_, String>(1)?, &r.get::<_, String>(2)?),
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?
        };
        self.write_vectors(&missing)?;
        Ok(missing.len())
    }

    /// Vectors made from other text than [`vector_text`]'s (before the speaker was part of
    /// it) are dropped, to be made again: one memory's vectors must be comparable.
    fn forget_vectors_of_another_recipe(&mut self) -> Result<(), Error> {
        let recipe: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM memory_meta WHERE key = 'vector_text'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if recipe.as_deref() != Some(VECTOR_RECIPE) {
            self.conn
                .execute_batch(&format!(
                    "DELETE FROM memory_vectors;
                     INSERT OR REPLACE INTO memory_meta(key, value) VALUES ('vector_text', '{VECTOR_RECIPE}');"
                ))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Vectors for the facts a `store()` call just inserted.
    pub(crate) fn embed_new(&mut self, stored: &[Stored], facts: &[NewFact]) -> Result<(), Error> {
        if self.embedder.is_none() {
            return Ok(());
        }
        let todo: Vec<(i64, String)> = stored
            .iter()
            .zip(facts)
            .filter(|(s, _)| s.inserted)
            .map(|(s, f)| (s.id, vector_text(&f.speaker, &f.text)))
            .collect();
        self.write_vectors(&todo)
    }

    fn write_vectors(&mut self, facts: &[(i64, String)]) -> Result<(), Error> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(());
        };
        for chunk in facts.chunks(32) {
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let vecs = embedder.embed_batch(&texts).map_err(embed_err)?;
            let path = self.path().to_path_buf();
            let tx = self
                .conn
                .transaction()
                .map_err(|e| crate::store::db(&path, e))?;
            for ((id, _), v) in chunk.iter().zip(vecs) {
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO memory_vectors(fact, vec) VALUES (?1, ?2)",
                )
                .and_then(|mut st| st.execute(rusqlite::params![id, to_blob(&v)]))
                .map_err(|e| crate::store::db(&path, e))?;
            }
            tx.commit().map_err(|e| crate::store::db(&path, e))?;
        }
        Ok(())
    }

    /// The question's vector, when an embedder is attached.
    pub(crate) fn question_vector(&self, question: &str) -> Result<Option<Vec<f32>>, Error> {
        match &self.embedder {
            Some(e) => e.embed(question).map(Some).map_err(embed_err),
            None => Ok(None),
        }
    }

    /// Cosine similarity of the question with each of these facts (those with a vector).
    pub(crate) fn cosines(&self, q: &[f32], ids: &[i64]) -> Result<HashMap<i64, f64>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT fact, vec FROM memory_vectors WHERE fact IN rarray(?1)")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([crate::store::id_array(ids)], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(|e| self.err(e))?;
        let mut out = HashMap::new();
        for row in rows {
            let (id, blob) = row.map_err(|e| self.err(e))?;
            out.insert(id, f64::from(cosine(q, &from_blob(&blob))));
        }
        Ok(out)
    }

    /// The visible facts nearest the question, best first (at most `limit`); only in a small
    /// memory (see [`BRUTE_FORCE_FACTS`]), else none.
    pub(crate) fn nearest(
        &self,
        q: &[f32],
        filter: &str,
        facts: u64,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>, Error> {
        if facts > BRUTE_FORCE_FACTS {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT f.id, v.vec FROM memory_vectors v JOIN memory_facts f ON f.id = v.fact WHERE 1=1 {filter}"
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut scored: Vec<(i64, f64)> = stmt
            .query_map([], |r| {
                let id: i64 = r.get(0)?;
                let blob: Vec<u8> = r.get(1)?;
                Ok((id, f64::from(cosine(q, &from_blob(&blob)))))
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        scored.truncate(limit);
        Ok(scored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EntityKind, GameTime, MemoryType, Scope, Source};

    fn fact(speaker: &str, text: &str) -> NewFact {
        NewFact {
            text: text.into(),
            scope: Scope::Party,
            source: Source::Gm,
            memory_type: MemoryType::Episodic,
            importance: 0.5,
            at: GameTime::default(),
            speaker: speaker.into(),
            episode_ids: Vec::new(),
            entities: Vec::<(String, EntityKind)>::new(),
            slot: None,
        }
    }

    fn stored_vector(store: &MemoryStore) -> Vec<f32> {
        let blob: Vec<u8> = store
            .conn
            .query_row("SELECT vec FROM memory_vectors", [], |r| r.get(0))
            .unwrap();
        from_blob(&blob)
    }

    #[test]
    fn a_vector_holds_the_speaker_and_older_recipes_are_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = MemoryStore::open(&dir.path().join("campaign.db")).unwrap();
        store
            .store(
                &[],
                &[fact("Caroline", "I went to a support group yesterday.")],
            )
            .unwrap();
        let embedder = Arc::new(Embedder::load(None).unwrap());
        let want = embedder
            .embed("Caroline: I went to a support group yesterday.")
            .unwrap();
        let text_alone = embedder
            .embed("I went to a support group yesterday.")
            .unwrap();
        assert_eq!(store.attach_embedder(embedder.clone()).unwrap(), 1);
        assert_eq!(stored_vector(&store), want);

        // A memory whose vectors were made from the text alone (no recipe noted).
        store
            .conn
            .execute_batch("DELETE FROM memory_meta WHERE key = 'vector_text'")
            .unwrap();
        store
            .conn
            .execute("UPDATE memory_vectors SET vec = ?1", [to_blob(&text_alone)])
            .unwrap();
        assert_eq!(store.attach_embedder(embedder).unwrap(), 1);
        assert_eq!(stored_vector(&store), want);
    }
}
