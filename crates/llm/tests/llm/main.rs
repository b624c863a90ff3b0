//! Integration tests for troupe-llm: both wire formats against a local mock server, the
//! gateway's retry and repair behaviour, and the replay provider.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod caching;
mod support;

mod gateway;
mod ladder;
#[cfg(feature = "local")]
mod local_batch;
#[cfg(feature = "local")]
mod local_budget;
mod replay;
mod stream;
mod wire;
