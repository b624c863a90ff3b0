//! Who may read a line a game renders: the readers of a table (the GM's seat, a player's seat,
//! a watcher) and the audiences a line is for. The seat protocol's, since every game's renderer
//! names them and every surface filters by them.

/// The reader that sees the whole table: the GM's seat.
pub const GM: &str = "gm";
/// The reader that only watches the table (not seated).
pub const WATCH: &str = "watch";
/// The invitation link: it reads what a watcher reads, and asks to sit down.
pub const JOIN: &str = "join";

/// Who may read a line. A reader is the GM ([`GM`]), a player's seat (its agent id), or a
/// watcher ([`WATCH`], [`JOIN`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Everyone at the table, watchers included.
    Table,
    /// Every seat at the table (the GM and the players), not the watchers.
    Players,
    /// The GM only.
    Gm,
    /// One player's seat, and the GM.
    Seat(String),
    /// One seat alone, not the GM's (at an encounter the GM is the model: the person at the
    /// GM's seat is not who a whisper is for).
    Own(String),
}

impl Audience {
    pub fn includes(&self, reader: &str) -> bool {
        match self {
            Audience::Table => true,
            Audience::Players => reader != WATCH && reader != JOIN,
            Audience::Gm => reader == GM,
            Audience::Seat(agent) => reader == GM || reader == agent,
            Audience::Own(agent) => reader == agent,
        }
    }
}
