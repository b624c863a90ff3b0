//! troupe-report's integration tests, one binary (the workspace's convention: a test binary
//! per crate, its files as modules): the games' recorded logs read through `Known`, and the
//! session readers on them with a newer troupe's kind in the middle.
#![allow(clippy::unwrap_used)]

mod known;
mod sessions;
mod support;
