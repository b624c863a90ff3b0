#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of troupe-scene: the example scene played end to end, and properties over
//! random play, and the scene's table loop. One test binary for the crate (issue 29).

mod prompts;
mod properties;
mod scene;
mod table;
