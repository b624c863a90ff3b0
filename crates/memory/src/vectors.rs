//! Sentence vectors for facts (feature `embeddings`): all-MiniLM-L6-v2, stored beside the facts
//! in `memory_vectors`, searched by brute-force cosine over the facts a reader may see.

use std::sync::Arc;

use troupe_embed::{Embedder, cosine};

use crate::{Error, MemoryStore, Stored};

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl MemoryStore {
    /// Use sentence embeddings from now on; facts without a vector get one now.
    pub fn attach_embedder(&mut self, embedder: Arc<Embedder>) -> Result<usize, Error> {
        self.embedder = Some(embedder);
        let missing: Vec<(i64, String)> = {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT f.id, f.text FROM memory_facts f
                     LEFT JOIN memory_vectors v ON v.fact = f.id WHERE v.fact IS NULL",
                )
                .map_err(|e| self.err(e))?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(|e| self.err(e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.err(e))?
        };
        self.write_vectors(&missing)?;
        Ok(missing.len())
    }

    pub(crate) fn embed_new(&mut self, stored: &[Stored]) -> Result<(), Error> {
        if self.embedder.is_none() {
            return Ok(());
        }
        let ids: Vec<i64> = stored.iter().filter(|s| s.inserted).map(|s| s.id).collect();
        let mut todo = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(f) = self.fact(id)? {
                todo.push((id, f.text));
            }
        }
        self.write_vectors(&todo)
    }

    fn write_vectors(&mut self, facts: &[(i64, String)]) -> Result<(), Error> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(());
        };
        for chunk in facts.chunks(32) {
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let vecs = embedder
                .embed_batch(&texts)
                .map_err(|e| Error::Embeddings(e.to_string()))?;
            let tx = self
                .conn
                .transaction()
                .map_err(|e| crate::store::db(&self.path_buf(), e))?;
            for ((id, _), v) in chunk.iter().zip(vecs) {
                tx.execute(
                    "INSERT OR REPLACE INTO memory_vectors(fact, vec) VALUES (?1, ?2)",
                    rusqlite::params![id, to_blob(&v)],
                )
                .map_err(|e| crate::store::db(&self.path_buf(), e))?;
            }
            tx.commit()
                .map_err(|e| crate::store::db(&self.path_buf(), e))?;
        }
        Ok(())
    }

    fn path_buf(&self) -> std::path::PathBuf {
        self.path().to_path_buf()
    }

    /// The facts nearest the question by cosine similarity, best first (at most `limit`).
    pub(crate) fn nearest(
        &self,
        question: &str,
        filter: &str,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>, Error> {
        let Some(embedder) = &self.embedder else {
            return Ok(Vec::new());
        };
        let q = embedder
            .embed(question)
            .map_err(|e| Error::Embeddings(e.to_string()))?;
        let sql = format!(
            "SELECT f.id, v.vec FROM memory_vectors v JOIN memory_facts f ON f.id = v.fact WHERE 1=1 {filter}"
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut scored: Vec<(i64, f64)> = stmt
            .query_map([], |r| {
                let id: i64 = r.get(0)?;
                let blob: Vec<u8> = r.get(1)?;
                Ok((id, f64::from(cosine(&q, &from_blob(&blob)))))
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(limit);
        Ok(scored)
    }
}
