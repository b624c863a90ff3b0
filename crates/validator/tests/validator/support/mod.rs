#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub mod holdout;
pub mod measure;
