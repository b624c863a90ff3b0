//! The campaign memory at the table: what each AI recalls before it decides, and what the turn
//! leaves behind in memory.
//!
//! Recall and storage are effects, like model calls: the driver performs them through
//! [`CampaignMemory`] and records what came back as events, so views are built from the log and
//! a replay answers from the recording ([`RecordedMemory`]) instead of today's memory.
//!
//! One job per file, imports one way: `types` is the plain data events and the session hold;
//! `campaign` the memory itself; `episodes` what of a session goes into it and when;
//! `extraction` the model call of a storage step (given the gateway, prompts and memory, so it
//! needs nothing of the driver). `types` and `episodes` are the game's pure core; `campaign` and
//! `extraction` reach the memory store and the models, so they are the table's (feature `table`).

#[cfg(feature = "table")]
pub(crate) mod campaign;
pub(crate) mod episodes;
#[cfg(feature = "table")]
pub(crate) mod extraction;
pub(crate) mod types;

#[cfg(feature = "table")]
pub use campaign::{CampaignMemory, RECALL_TOP_K, RecordedMemory, StoreMemory};
pub use episodes::{episodes_of, storage_trigger, unstored_turns};
#[cfg(feature = "table")]
pub use extraction::{ExtractionOffer, extract, extraction_call, extraction_offer};
pub use types::{Extraction, RecallLayer, Recalled, Remembered};
