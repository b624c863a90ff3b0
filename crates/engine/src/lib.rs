//! The table every game stands on, naming none of them: the one store of every game's log in a
//! campaign's `campaign.db` with its JSONL mirrors and the inbox of answers people sent
//! ([`store`]), the crash tests' pause points ([`pause`]), each model call's seed ([`call_seed`])
//! and a call as an encounter's and a scene's table make it, its attempts as their logs keep them
//! ([`attempts`]), the faults a person can fix
//! ([`Fault`]), the guard around a fold ([`guard`]), the replay verdict ([`replay`]) and the one
//! error of them all ([`Error`]; a game's own error travels inside it as [`Error::Game`]), and
//! what a game played online renders into and asks through ([`surface`]).
//!
//! A game is a crate on top: `troupe-lasers` (Lasers & Feelings sessions), `troupe-encounter`
//! and `troupe-scene`, each with its events, its fold, its loop; `troupe-games` lists them.

pub mod attempts;
pub mod call_seed;
mod fault;
pub mod guard;
pub mod log;
pub mod pause;
pub mod replay;
pub mod store;
pub mod surface;
pub mod watch;

pub use call_seed::{CallSeeds, call_seed};
pub use fault::Fault;
pub use log::{EventLog, MirrorCheck, check_mirror, read_jsonl, reopen_mirror};
pub use store::{
    Durability, GameStore, Logged, RunLog, SCHEMA_VERSION, SqlResult, StoredRun, db, set_durability,
};
pub use troupe_prompts::Prompts;
pub use watch::{CallWatch, Watch};

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("could not encode an event: {0}")]
    Encode(String),
    #[error("{path}, line {line}: not a valid event ({message})")]
    Corrupt {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Store { path: String, message: String },
    /// A campaign file fault the user can act on (see [`Fault`]).
    #[error("{path}: {fault}")]
    Fault { path: String, fault: Fault },
    #[error(
        "{path} was written by a newer troupe (schema {found}; this build reads up to {supported}). \
         Upgrade troupe to open this campaign; nothing was changed."
    )]
    NewerStore {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error(
        "{path}: session {session}, event {seq} cannot be read ({message}). Nothing else is \
         affected: `troupe undo` takes back the last GM decision before it (the unreadable event \
         stays in the file, marked undone), then `troupe resume` goes on from there."
    )]
    CorruptStore {
        path: String,
        session: u32,
        seq: u64,
        message: String,
    },
    #[error(transparent)]
    Prompt(#[from] troupe_prompts::Error),
    /// A game's own error (a scene's file, …), from the game's crate.
    #[error(transparent)]
    Game(Box<dyn std::error::Error + Send + Sync>),
    #[error("campaign memory")]
    Memory(#[source] troupe_memory::Error),
    #[error(transparent)]
    Campaign(#[from] troupe_campaign::Error),
}

/// An error and every cause under it, joined by ": " the way the binary prints errors
/// (`{:#}`): for messages a person reads that do not go through the binary's error path
/// (the web table, a failure the GM is asked about). Each error's own `Display` says only its
/// own level; the cause is its `source()`.
pub fn error_chain(error: impl std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

impl Error {
    /// A failed file operation; the faults people can fix (a full disk, a read-only directory)
    /// say what to do.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        if let Some(fault) = Fault::of_io(&source) {
            return Error::fault(path, fault);
        }
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }

    pub fn fault(path: &Path, fault: Fault) -> Self {
        Error::Fault {
            path: path.display().to_string(),
            fault,
        }
    }

    /// A game's own error, carried as the table's (see [`Error::Game`]).
    pub fn game(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Game(Box::new(e))
    }

    /// The fault behind this error, if it is one (for callers that react to a kind).
    pub fn as_fault(&self) -> Option<&Fault> {
        match self {
            Error::Fault { fault, .. } => Some(fault),
            _ => None,
        }
    }
}
