#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one story, from its setting up to what it proves"
)]
//! Integration tests of the `troupe` binary: each module drives the real binary (spawned as
//! its own process) through one area. One test binary for the crate, so the suite links once
//! (issue 29); shared helpers in `support`.

mod support;

mod bench;
mod caching_bench;
mod calendar;
mod detector;
mod discord;
mod docs;
mod durable;
mod e2e;
mod encounter;
mod errors;
mod export;
mod extraction;
mod graph_memory;
mod hostile;
mod http;
mod local_model;
mod memory;
mod model_faults;
mod nasty_input;
mod party;
mod preflight;
mod prompts;
mod reliability;
mod report_games;
mod report_screenshot;
mod research;
mod scene;
mod seats;
mod seeds;
mod serve;
mod serve_durable;
mod serve_encounter;
mod serve_play;
mod serve_scene;
mod shards;
mod simulate;
mod slurm;
mod spend;
mod streaming;
