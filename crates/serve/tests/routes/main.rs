#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The table server's routes in-process: the real router listening on a free loopback port
//! inside the test, real HTTP from a client, the campaign's real SQLite file, and a real game
//! behind it (the mill's scene on the rules planner: no model). What only a process shows (a
//! SIGKILL, the binary's output, a browser) stays in the binary's tests (crates/cli/tests/cli/
//! serve*.rs); what a route promises is checked here, in seconds. One test binary (issue 29).

mod durable;
mod host;
mod requests;
mod streams;
mod support;
