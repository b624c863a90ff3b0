#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests across the games: every game's JSONL mirror of its log in the one store, and
//! one undo mark for all of them. One test binary for the crate (issue 29).

mod mirrors;
mod one_undo;
