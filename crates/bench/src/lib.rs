//! `troupe bench`: a versioned suite of scripted GM scenarios that AI players are scored on
//! from the engine's own records, with no judge model (issues 32 and 50; docs/bench.md defines
//! every score).
//!
//! This crate holds what a bench *is*: the suite and its checks (`suite`), suite 2.0's
//! scenarios generated from templates with a seed and its scripted players (`generate`), the
//! scores of one scenario's logged events (`score`), the skills with their bootstrap intervals
//! and the pairwise comparisons (`stats`), and the results as Markdown, JSON and HTML
//! (`render`, `html`). Playing the sessions is the `troupe` binary's job (`troupe bench` runs
//! `troupe play` children as `troupe simulate` does), so a lab can also score logs it played
//! another way.

pub mod generate;
mod html;
mod render;
pub mod rng;
mod score;
pub mod stats;
pub mod suite;

pub use html::render_html;
pub use render::{
    Bench, FamilyResult, ModelResult, ScenarioInfo, ScenarioScores, ScenarioTiming, render_markdown,
};
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
