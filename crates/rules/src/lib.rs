//! troupe-rules: the game's rules as pure functions.
//!
//! Everything here is deterministic and free of I/O so that a session log holding only seeds and
//! inputs can be folded again into the exact same rolls (resume and replay depend on that).

// Text from people, models and files is taken apart here: nothing is indexed unchecked.
#![deny(clippy::indexing_slicing)]

mod adventure;
pub mod d20;
mod dice;
mod kernel;
mod lasers;
mod notation;
mod vocab;

pub use adventure::{Adventure, roll_adventure};
pub use d20::{D20Check, D20Roll, Natural, roll_d20};
pub use dice::{roll_dice, roll_seed};
pub use kernel::{Band, Check, CheckRoll, Edge, band_for, band_probabilities, roll_check};
pub use lasers::{
    CharacterNumber, DieResult, Outcome, RollResult, TaskType, action_pool, helper_succeeded,
    resolve, roll_pool,
};
pub use notation::{DiceExpr, NotationRoll, roll_expr};
pub use vocab::{
    CHARACTER_GOALS, PLAYER_GOAL, Role, STANDARD_KIT, ShipProblem, ShipStrength, Style,
};

/// Everything that can go wrong when turning user text into rules values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A character number outside the rulebook's 2..=5.
    #[error(
        "character number {0} is out of range: must be a whole number from 2 to 5 (2–3 lean FEELINGS, 4–5 lean LASERS)"
    )]
    NumberOutOfRange(u8),
    /// Neither "lasers" nor "feelings".
    #[error("'{0}' is not a task type: expected lasers or feelings")]
    UnknownTaskType(String),
    /// A word that is not in one of the game's lists (style, role, ship strength, ship problem).
    #[error("'{input}' is not a {kind}; allowed: {allowed}")]
    UnknownWord {
        /// What was expected, e.g. "ship strength".
        kind: &'static str,
        /// The text as given.
        input: String,
        /// The rulebook's list, comma separated.
        allowed: String,
    },
    /// Text that does not have the shape NdM, NdM+K or NdM-K.
    #[error("'{0}' is not dice notation: expected NdM, NdM+K or NdM-K, e.g. 2d6+3")]
    NotDiceNotation(String),
    /// Well-formed notation asking for too few or too many dice.
    #[error("'{input}' rolls {count} dice: the number of dice must be 1 to 100")]
    DiceCountOutOfRange {
        /// The text as given.
        input: String,
        /// The count as written.
        count: String,
    },
    /// Well-formed notation with dice that have too few or too many sides.
    #[error("'{input}' uses dice with {sides} sides: dice must have 2 to 1000 sides")]
    DiceSidesOutOfRange {
        /// The text as given.
        input: String,
        /// The sides as written.
        sides: String,
    },
    /// A modifier so large it can only be a typo.
    #[error(
        "'{input}' has modifier {modifier}: the modifier must be between -1000000 and +1000000"
    )]
    ModifierOutOfRange {
        /// The text as given.
        input: String,
        /// The modifier as written, with its sign.
        modifier: String,
    },
}
