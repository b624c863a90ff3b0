//! Campaign memory: what the AI players remember across sessions.
//!
//! A temporal knowledge graph kept in the campaign's `campaign.db`: episodes (what was said or
//! done, verbatim), facts (what is believed, with when it became and stopped being true, its
//! source, confidence, importance and rehearsals), and entities (NPCs, places, items…) the facts
//! link. Each fact belongs to one scope: the party's shared memory, one AI's player layer, or
//! one AI's character layer; readers see only their scopes, so player-only knowledge never
//! reaches a character. [`MemoryStore`] is the embedded SQLite backend; retrieval fuses full-text
//! search with entity links, time, speaker, neighbouring turns and (feature `embeddings`)
//! sentence vectors.

// Text from people, models and files is taken apart here: nothing is indexed unchecked.
#![deny(clippy::indexing_slicing)]

pub mod claims;
mod confidence;
pub mod extract;
mod forget;
pub mod mirror;
mod model;
mod retrieve;
mod store;
pub mod text;
#[cfg(feature = "embeddings")]
mod vectors;

pub use confidence::{
    Age, Corruption, CorruptionType, Rememberer, confidence, corrupt, corruption_probability,
};
pub use mirror::{Changes, MemoryMirror, Snapshot};
pub use model::{
    Conflict, EntityKind, Episode, Fact, GameTime, MemoryType, NewFact, Reader, RecallKey, Scope,
    Source, TruthLevel,
};
pub use retrieve::{Hit, Query, Signals, formed_at};
pub use store::{Counts, EntityRecord, MEMORY_SCHEMA_VERSION, Marks, MemoryStore, Stored};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: database error: {message}")]
    Db {
        path: String,
        message: String,
        /// SQLite's kind of failure, so a caller can say what to do about a full disk or a
        /// damaged file (troupe-engine's `Fault` does).
        code: Option<rusqlite::ErrorCode>,
    },
    #[error(
        "{path}: its memory was written by a newer troupe (memory schema {found}; this one reads up to {supported}); nothing was changed"
    )]
    NewerStore {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error("{file}, line {line}: {message}")]
    BadLine {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// The mirror (a graph server) refused a write: it was rolled back, nothing changed.
    #[error("campaign memory on {target}: {message}")]
    Mirror { target: String, message: String },
    #[error("embeddings: {0}")]
    Embeddings(String),
}

/// Whether this build can use sentence embeddings (feature `embeddings`).
pub const EMBEDDINGS_BUILT: bool = cfg!(feature = "embeddings");
