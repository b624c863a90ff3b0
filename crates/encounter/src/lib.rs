//! troupe-encounter: seed 003's encounter game master, on troupe's spine.
//!
//! A GM writes an encounter once as a spec ([`check::check`] reads it into a [`spec::Spec`]);
//! an AI game master runs it for a table. Play is a log of events whose fold is the encounter's
//! state; the GM's replies are structured: narration plus tool calls checked against their
//! schemas. Its prompt is assembled within budget zones ([`budget`]) and its narration is checked
//! for secrets before a player sees it ([`leaks`]). All of that is pure: no I/O, no models, no
//! clock. Its table ([`table`]) plays it on troupe's engine: the store, the seats, the models.

pub mod budget;
pub mod check;
pub mod lasers;
pub mod leaks;
pub mod log;
pub mod names;
pub mod offer;
pub mod prompt;
pub mod score;
pub mod spec;
#[cfg(feature = "table")]
pub mod table;
pub mod tools;
pub mod turn;
pub mod view;

pub use spec::Spec;

/// What can go wrong in the encounter's core. (Rendering its prompt templates has its own
/// [`prompt::TemplateError`]; reading a spec lists every [`troupe_scene::Problem`] in it at
/// once; a GM reply that fails the tools' checks is a list of problems handed back to the GM,
/// not an error.)
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scene kept in the encounter's log no longer passes the scene checker (a scene file
    /// from an older troupe, or a damaged log): every problem, each with its line and place.
    #[error("the encounter's scene no longer checks: {}", joined(problems))]
    Scene {
        problems: Vec<troupe_scene::Problem>,
    },
}

fn joined(problems: &[troupe_scene::Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
    lines.join("; ")
}
