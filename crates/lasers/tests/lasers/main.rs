#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one story, from its setting up to what it proves"
)]
//! Integration tests of troupe-lasers: the turn machine, the store, the transcript, the AI GM's
//! seat and the leak property. One test binary for the crate (issue 29); shared helpers in
//! `support`.

mod support;

mod ai_gm;
mod asks;
mod leaks;
mod lines;
mod store;
mod transcript;
mod turns;
