#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of troupe-memory: the memory rules through the store, and the write hook.
//! One test binary for the crate (issue 29).

mod mirror;
mod store;
