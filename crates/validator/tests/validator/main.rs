#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of troupe-validator: the labelled corpus, the frozen holdout and the learned
//! classifier (feature `model`). One test binary for the crate (issue 29), except
//! `tests/opinion.rs`, which registers a stand-in as its process's second opinion.

mod support;

mod corpus;
mod holdout;
mod learned;
mod play;
