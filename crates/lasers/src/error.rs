//! What stops a Lasers & Feelings session, in the session's words. The table's error
//! (`troupe_engine::Error`) carries it as a game's own ([`troupe_engine::Error::Game`]), so the
//! engine names no session.

/// Why a session cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(
        "session {session} cannot go on: {what} could not be processed ({message}). This is a bug \
         in troupe; please report it with the session's log. {saved} `troupe undo` takes back the \
         last GM decision and everything after it; then `troupe resume` continues."
    )]
    Poisoned {
        session: u32,
        /// The event, e.g. "event 1234 (character_action, turn 12)".
        what: String,
        message: String,
        /// Whether the event is in the log already, for the user.
        saved: &'static str,
    },
    #[error(
        "session {session} stopped: {message}. Everything so far is saved; `troupe resume` \
         asks again."
    )]
    SeatFailed { session: u32, message: String },
    /// A GM script that cannot be played, with the file and what is wrong.
    #[error("{0}")]
    Script(String),
    #[error("there is no session {0} in this campaign")]
    NoSuchSession(u32),
    #[error("no agent {0} at this table")]
    UnknownAgent(String),
}

impl From<SessionError> for troupe_engine::Error {
    fn from(e: SessionError) -> Self {
        troupe_engine::Error::game(e)
    }
}
