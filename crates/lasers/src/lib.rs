//! Lasers & Feelings at troupe's table: the session's events, the turn machine, seats and views.
//!
//! A session is an append-only log of [`Event`]s. [`Session`] is the fold of that log; the pure
//! [`next`] says what the turn needs now; the [`Driver`] performs it and appends the result. The
//! table under it (the store, pauses, call seeds, the error) is `troupe-engine`'s, which names
//! no game.

mod ai_gm;
pub mod asks;
mod decision;
mod driver;
mod events;
pub mod lines;
mod machine;
pub mod memory;
pub mod online;
mod phase;
pub mod recorded;
pub mod script;
mod seat;
pub mod secrets;
mod session;
mod session_store;
pub mod snapshot;
mod spend;
pub mod transcript;
pub mod undo;
pub mod visibility;

pub use ai_gm::{AiGm, GmProgress};
pub use decision::{PERSONS_JUSTIFICATION, PlayerDecision};
pub use driver::{
    Clock, DiscussionLimit, Driver, Observer, Quiet, SessionSetup, SystemClock, Table, served_calls,
};
pub use events::{
    Envelope, Event, FailureChoice, RollOverride, RollPurpose, Ruling, StoryMark, VerdictResult,
    WhisperScope,
};
pub use machine::{
    CallSpec, FAILURES_BEFORE_GM, GmAsk, MAX_ACTION_ATTEMPTS, MAX_CLARIFICATION_ROUNDS,
    MAX_QUESTIONS, Step, apply_override, next,
};
pub use memory::{CampaignMemory, Recalled, RecordedMemory, Remembered, StoreMemory};
pub use phase::Phase;
pub use seat::{
    Answers, GmDecision, GmQuestion, GmReply, GmSeat, LayerView, PlayerQuestion, PlayerSeat,
    SeatNote, SeatView,
};
pub use session::{ActionTrack, ConsensusRecord, InsightTrack, OocEntry, Session, Turn, Whispered};
pub use session_store::{SessionInfo, Store, StoredEvent, Unreadable, read_log};
pub use spend::{SpendMeter, SpendStop};
pub use transcript::render_markdown;

// The table this game stands on, named inside the crate as its own parts are.
use troupe_engine::{CallSeeds, Error, error_chain, guard, pause};
