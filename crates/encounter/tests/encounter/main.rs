#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of troupe-encounter: specs as a GM writes them and the encounter's pure
//! parts played together, and its table: how a run starts and what it leaves outside its log.
//! One test binary for the crate (issue 29).

mod play;
mod spec;
mod table_outcome;
mod table_start;
