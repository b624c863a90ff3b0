//! Opening a table, the same for every surface (the terminal, the web table, Discord, a batch's
//! runs): the model chosen from flags, campaign file and environment; whether it can be used
//! before anything starts; the retry policy; the campaign's prompt registry and memory; the AI GM
//! and who sits in which seat.

pub mod graph;
pub mod models;
pub mod preflight;
mod seats;
mod table;

pub use seats::{GmChoice, SeatArgs, SpendArgs, seat_table};
pub use table::{
    SPEND_LIMIT_EXIT, ai_gm, campaign_memory, finish_encounter, prompts, retry_policy, seed_or_now,
    sleeper, table,
};
