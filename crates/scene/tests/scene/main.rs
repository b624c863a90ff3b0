#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of troupe-scene: the example scene played end to end, properties over random
//! play, the scene's table loop, and the scene played online on a scripted surface. One test
//! binary for the crate (issue 29).

mod online;
mod prompts;
mod properties;
mod scene;
mod table;
