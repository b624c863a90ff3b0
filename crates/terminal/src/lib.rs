//! The terminal surface of a Lasers & Feelings campaign, as functions the `troupe` binary calls:
//! a session played at this terminal (`troupe play`, `resume`) and checked against its log
//! (`replay`); the terminal GM, people's seats at the keyboard, the story as it is told and the
//! spinners while a model thinks; the campaign's sessions (`sessions`, `undo`, `transcript`, the
//! campaign's lock and store as every command of the binary opens them); its memory
//! (`troupe memory`). Opening the table itself is troupe-host's, the same as on every surface.

mod display;
mod info;
pub mod keyboard;
pub mod memory;
mod people;
pub mod play;
pub mod replay;
pub mod sessions;
pub mod spinner;
mod terminal;

// troupe-host's modules, under the names this surface has always reached them by.
use troupe_host::{graph, models, preflight};
