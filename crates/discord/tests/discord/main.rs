#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one story, from its setting up to what it proves"
)]
//! troupe-discord against a fake Discord (REST and a real websocket gateway, on free local
//! ports): the smithy encounter played from a thread, the walls between what the thread and
//! each person read, a bot stopped and started again, rate limits and long messages.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use troupe_test_support::discord as fake;
mod support;

mod durable;
mod encounter;
mod walls;
