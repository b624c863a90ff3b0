#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The fuzz targets (proptest), one module per parser. One test binary for the crate (issue 29):
//! `cargo test -p troupe-fuzz --test fuzz validator::` runs one target.

mod campaign;
mod dice;
mod encounter;
mod log;
mod memory;
mod replay;
mod validator;
