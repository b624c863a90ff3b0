#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of troupe-encounter: specs as a GM writes them and the encounter's pure
//! parts played together, and its table: how a run starts, what it leaves outside its log, and a
//! run played online on a scripted surface.
//! One test binary for the crate (issue 29).

mod online;
mod play;
mod spec;
mod table_outcome;
mod table_start;
