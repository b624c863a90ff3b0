//! What each seat's stream carries: the session's events as lines of text, each with the
//! audience that may read it. The lines and their audiences are the engine's
//! ([`troupe_lasers::lines`]); the rule is a whitelist twice over: the engine renders for the
//! table only the events the table may read (the rest, model calls, memories, verdicts and the
//! GM's decisions among them, only for the GM), a private line (a whisper, a player's plan or
//! directive to their character) reaches only its seat and the GM's, and this file shows only
//! the kinds of line it has a style for: any other kind reaches no one.

use serde::Serialize;
use troupe_lasers::lines::{self, Kind};
use troupe_lasers::{Envelope, Session};

pub use troupe_lasers::lines::{Audience, GM, JOIN, WATCH};

/// One line of a seat's stream. `id` orders the lines of a table: an event's sequence number
/// times [`LINES_PER_EVENT`] plus the line's place among that event's lines, so a browser that
/// reconnects after line `id` gets exactly the lines it has not seen.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    pub id: u64,
    pub kind: &'static str,
    pub text: String,
    #[serde(skip)]
    pub audience: Audience,
}

pub const LINES_PER_EVENT: u64 = 4;

/// The lines an event adds to the table's streams, given the session as it stands after it.
pub fn lines(env: &Envelope, s: &Session) -> Vec<Line> {
    numbered(env.seq, rendered(env, s))
}

/// An event's rendered lines, numbered from its sequence number (any game's).
pub fn numbered(seq: u64, rendered: Vec<Rendered>) -> Vec<Line> {
    rendered
        .into_iter()
        .take(LINES_PER_EVENT as usize)
        .enumerate()
        .map(|(i, (audience, kind, text))| Line {
            id: seq * LINES_PER_EVENT + i as u64,
            kind,
            text,
            audience,
        })
        .collect()
}

/// A line before it is numbered: who may read it, its kind (for the page's style), its text.
pub type Rendered = (Audience, &'static str, String);

/// The engine's lines of an event, in the feed's kinds; a line of a kind the feed does not show
/// (how the session was set up, overreach checks, memory, model calls, the GM's own notices and
/// decisions) is left out, whoever may read it.
fn rendered(env: &Envelope, s: &Session) -> Vec<Rendered> {
    lines::render(env, s)
        .into_iter()
        .filter_map(|line| Some((line.audience, feed_kind(line.kind)?, line.text)))
        .collect()
}

/// The page's style of each kind of line it shows; None for a kind it does not.
fn feed_kind(kind: Kind) -> Option<&'static str> {
    Some(match kind {
        Kind::Session => "session",
        Kind::Turn => "turn",
        Kind::Gm => "gm",
        Kind::Question => "question",
        Kind::Plan | Kind::Directive => "private",
        Kind::Ooc | Kind::Consensus => "ooc",
        Kind::Attempt => "action",
        Kind::Speech => "say",
        Kind::Ruling => "ruling",
        Kind::Roll => "dice",
        Kind::Insight => "insight",
        Kind::Seat => "seat",
        Kind::Whisper => "whisper",
        Kind::Mark => "story",
        Kind::Problem => "problem",
        Kind::Setup
        | Kind::Notice
        | Kind::Check
        | Kind::Decision
        | Kind::Memory
        | Kind::Recalled
        | Kind::Model => return None,
    })
}
