//! Lasers & Feelings at troupe's table: the session's events, the turn machine, seats and views.
//!
//! A session is an append-only log of [`Event`]s. [`Session`] is the fold of that log; the pure
//! [`next`] says what the turn needs now; the [`Driver`] performs it and appends the result. The
//! table under it (the store, pauses, call seeds, the error) is `troupe-engine`'s, which names
//! no game.

// The game's pure core: its events, the session's fold, phases, the pure turn machine, a
// player's decision, what a seat may see, lines and the transcript. No store, no models, no
// clock: what a reader of its logs (troupe-report, troupe-export, troupe-bench) builds on
// without the engine.
mod decision;
mod events;
pub mod lines;
mod machine;
pub mod memory;
pub mod offer;
mod phase;
pub mod secrets;
mod session;
mod spend;
pub mod transcript;
pub mod visibility;

// The game at troupe's table (feature `table`): the driver over the engine's store, the AI GM,
// the seats and their asks, recorded play, resume and undo.
#[cfg(feature = "table")]
mod ai_gm;
#[cfg(feature = "table")]
pub mod asks;
#[cfg(feature = "table")]
mod driver;
#[cfg(feature = "table")]
mod error;
#[cfg(feature = "table")]
pub mod online;
#[cfg(feature = "table")]
mod players;
#[cfg(feature = "table")]
pub mod recorded;
#[cfg(feature = "table")]
pub mod script;
#[cfg(feature = "table")]
mod seat;
#[cfg(feature = "table")]
mod session_store;
#[cfg(feature = "table")]
pub mod snapshot;
#[cfg(feature = "table")]
pub mod undo;

#[cfg(feature = "table")]
pub use ai_gm::AiGm;
pub use decision::{PERSONS_JUSTIFICATION, PlayerDecision};
#[cfg(feature = "table")]
pub use driver::{
    Clock, DiscussionLimit, Driver, Observer, SessionSetup, SystemClock, Table, served_calls,
};
#[cfg(feature = "table")]
pub use error::SessionError;
pub use events::{
    Envelope, Event, FailureChoice, RollOverride, RollPurpose, Ruling, StoryMark, VerdictResult,
    WhisperScope,
};
pub use machine::{
    CallSpec, FAILURES_BEFORE_GM, GmAsk, MAX_ACTION_ATTEMPTS, MAX_CLARIFICATION_ROUNDS,
    MAX_QUESTIONS, Step, apply_override, next,
};
#[cfg(feature = "table")]
pub use memory::{CampaignMemory, RecordedMemory, StoreMemory};
pub use memory::{Recalled, Remembered};
pub use phase::Phase;
#[cfg(feature = "table")]
pub use seat::{
    Answers, GmDecision, GmQuestion, GmReply, GmSeat, LayerView, PlayerQuestion, PlayerSeat,
    SeatNote, SeatView,
};
pub use session::{ActionTrack, ConsensusRecord, InsightTrack, OocEntry, Session, Turn, Whispered};
#[cfg(feature = "table")]
pub use session_store::{SessionInfo, Store, StoredEvent, Unreadable, read_log, session_log_path};
pub use spend::{SpendMeter, SpendStop};
pub use transcript::render_markdown;

// The table this game stands on, named inside the crate as its own parts are.
#[cfg(feature = "table")]
use troupe_engine::{CallSeeds, Error, error_chain, guard, pause};
