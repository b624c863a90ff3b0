//! troupe-encounter: seed 003's encounter game master, on troupe's spine.
//!
//! A GM writes an encounter once as a spec ([`check::check`] reads it into a [`spec::Spec`]);
//! an AI game master runs it for a table. Play is a log of events whose fold is the encounter's
//! state; the GM's replies are structured: narration plus tool calls checked against their
//! schemas. Its prompt is assembled within budget zones ([`budget`]) and its narration is checked
//! for secrets before a player sees it ([`leaks`]). Pure: no I/O, no models, no clock.

pub mod budget;
pub mod check;
pub mod lasers;
pub mod leaks;
pub mod log;
pub mod names;
pub mod prompt;
pub mod score;
pub mod spec;
pub mod tools;
pub mod turn;
pub mod view;

pub use spec::Spec;
