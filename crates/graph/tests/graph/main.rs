#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one story, from its setting up to what it proves"
)]
//! Integration tests of troupe-graph: the parity suite against a real FalkorDB server and the
//! Neo4j backend against a mock. One test binary for the crate (issue 29).

mod neo4j;
mod parity;
