//! What each seat's stream carries: a game's events as lines of text, each with the audience
//! that may read it. The lines are the game's own (each game's `online` module renders its
//! events into [`troupe_engine::surface`]'s neutral lines); the server numbers nothing and
//! judges nothing of them: it hands each line only to the seats its audience includes.

pub use troupe_engine::surface::{
    Audience, GM, JOIN, LINES_PER_EVENT, Line, Rendered, WATCH, numbered,
};
