//! The seats of a recorded session, for a replay: the GM's decisions and the people's, read back
//! from the session's log and given again in order.

mod gm;
mod players;

pub use gm::RecordedGm;
pub use players::RecordedPeople;
