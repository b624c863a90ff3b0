#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests across the games: every game's JSONL mirror of its log in the one store, and
//! one undo mark for all of them. One test binary for the crate (issue 29).

// The engine's check of a mirror against its table, shared with the engine's own tests.
#[path = "../../../lasers/tests/lasers/mirror_check.rs"]
mod mirror_check;
mod mirrors;
mod one_undo;
