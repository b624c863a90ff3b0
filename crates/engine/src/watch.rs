//! Who watches a table of any game as it is played: the one trait every surface subscribes
//! through (the terminal prints, the web table and Discord publish, a test collects). A game
//! names only its state and its envelope ([`Watch<S, E>`]); what a watch hears, and when, is the
//! same at every game's table.

use troupe_llm::Progress;

/// Who watches a table's model calls: whose model starts work and on what, how far each reply
/// has come, and when none works any more. Several seats' models may work at once (the AI
/// players of one step). The text of a draft is the model's, unchecked: show it only to whom
/// may see it.
pub trait CallWatch: Send {
    /// `seat`'s model starts on `doing`, words a page can show after the seat's name
    /// ("deciding what to attempt", "thinking").
    fn thinking(&mut self, _seat: &str, _doing: &str) {}
    /// `seat`'s reply is streaming in.
    fn progress(&mut self, _seat: &str, _progress: &Progress) {}
    /// No model works now: every call the table made is back.
    fn idle(&mut self) {}
}

/// Nobody watches (a call made between turns, as memory's extraction is; a replay checked
/// without a screen; a test).
pub struct Unwatched;

impl CallWatch for Unwatched {}

/// Who watches a game's table: each committed event with the game's state after it (`S`, the
/// game's fold; `E`, its envelope), the table's model calls, and a stop on purpose.
pub trait Watch<S: ?Sized, E>: CallWatch {
    fn on_event(&mut self, state: &S, env: &E);
    /// The table stopped on purpose (the crash tests' pause) after this many events.
    fn paused(&mut self, _events: u64) {}
}

impl<S: ?Sized, E> Watch<S, E> for Unwatched {
    fn on_event(&mut self, _: &S, _: &E) {}
}
