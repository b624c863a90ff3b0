#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of troupe-engine: the turn machine, the store, the transcript, the AI GM's
//! seat, the scene's table loop, every game's JSONL mirror and the leak property. One test
//! binary for the crate (issue 29); shared helpers in `support`.

mod support;

mod ai_gm;
mod asks;
mod encounter_outcome;
mod encounter_start;
mod leaks;
mod lines;
mod mirrors;
mod one_undo;
mod scene_table;
mod store;
mod transcript;
mod turns;
