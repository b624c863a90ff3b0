//! The session engine: the event log, the turn machine, seats and views.
//!
//! A session is an append-only log of [`Event`]s. [`Session`] is the fold of that log; the pure
//! [`next`] says what the turn needs now; the [`Driver`] performs it and appends the result.

mod driver;
mod events;
mod log;
mod machine;
mod phase;
mod seat;
mod session;
pub mod visibility;

pub use driver::{Clock, Driver, Observer, Quiet, SessionSetup, SystemClock, Table};
pub use events::{
    Envelope, Event, FailureChoice, RollOverride, RollPurpose, Ruling, VerdictResult,
};
pub use log::{EventLog, next_session_log, read_log};
pub use machine::{
    CallSpec, FAILURES_BEFORE_GM, GmAsk, MAX_ACTION_ATTEMPTS, MAX_CLARIFICATION_ROUNDS,
    MAX_QUESTIONS, MEMORY_NOT_BUILT, Step, apply_override, next,
};
pub use phase::Phase;
pub use seat::{Answers, GmReply, GmSeat};
pub use session::{ActionTrack, InsightTrack, Session, Turn};

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
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
    #[error("no agent {0} at this table")]
    UnknownAgent(String),
    #[error(transparent)]
    Agent(#[from] troupe_agents::Error),
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
