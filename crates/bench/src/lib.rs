//! `troupe bench`: a fixed, versioned suite of scripted GM scenarios that AI players are scored
//! on from the engine's own records, with no judge model (issue 32; docs/bench.md defines every
//! score).
//!
//! This crate holds what a bench *is*: the suite and its checks (`suite`), the scores of one
//! scenario's logged events (`score`), and the results as Markdown and JSON (`render`). Playing
//! the sessions is the `troupe` binary's job (`troupe bench` runs `troupe play` children as
//! `troupe simulate` does), so a lab can also score logs it played another way.

mod render;
mod score;
pub mod suite;

pub use render::{Bench, ModelResult, ScenarioScores, ScenarioTiming, render_markdown};
pub use score::{Scores, Timing, score};
pub use suite::{EMBEDDED, Question, Scenario, Suite};

/// What the suite's name is in every result.
pub const SUITE_NAME: &str = "troupe bench";

/// Everything that can go wrong reading a suite.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Suite { path: String, message: String },
}
