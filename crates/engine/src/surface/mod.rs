//! A game played online, in no game's terms: what a game renders its events into (lines, each
//! with its audience and kind; who holds each seat; each seat's sheet), the [`Surface`] it plays
//! on (the web server's hub, which the Discord bot shares), the one seat that asks a surface
//! ([`SurfaceSeat`]), and what makes a game playable there ([`Playable`]).
//!
//! Each game adapts its own table to this (its `online` module) and renders with its own
//! renderer; the surface knows only these types, so it names no game. The rules a surface keeps
//! (a draft only to a seat whose view holds every secret, ask ids that never repeat, an answer
//! leaving the inbox with the commit that records it) are the surface's; a game says only which
//! drafts may show ([`Draft`]) and who may read each line ([`Audience`]).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;
use troupe_seat::{Answer, Ask, JoinRequest, Seat};

use crate::store::inbox::Received;

// Who may read a line is the seat protocol's (a game's renderer, which builds without the
// engine, names it too); the surface only carries it.
pub use troupe_seat::audience::{Audience, GM, JOIN, WATCH};

/// One line of a seat's stream. `id` orders the lines of a table: an event's sequence number
/// times [`LINES_PER_EVENT`] plus the line's place among that event's lines, so a page that
/// reconnects after line `id` gets exactly the lines it has not seen.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    pub id: u64,
    /// The page's style of the line (`gm`, `action`, `whisper`, …).
    pub kind: &'static str,
    pub text: String,
    #[serde(skip)]
    pub audience: Audience,
}

/// The most lines one event adds to the streams; any more are left out.
pub const LINES_PER_EVENT: u64 = 4;

/// A line before it is numbered: who may read it, its kind (for the page's style), its text.
pub type Rendered = (Audience, &'static str, String);

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

/// What one committed event changes at a table, in no game's terms: the game renders it.
#[derive(Debug, Default)]
pub struct Update {
    /// The lines it adds to the streams, each with its audience.
    pub lines: Vec<Line>,
    /// `Some(Some(why))`: the game ended; `Some(None)`: it goes on again (a resume).
    pub ended: Option<Option<String>>,
    /// Who holds each player's seat now (seat, a person?).
    pub holders: Vec<(String, bool)>,
    /// What a seat's page shows beside the story (its sheet, the ship, the GM's prep), built
    /// from that seat's own view.
    pub sheets: Vec<(String, Value)>,
}

/// Whether a streaming call's unchecked draft may show on the page of the seat it is for. A
/// game says [`Draft::Shown`] only where that seat's view already holds every secret the model
/// was given (an AI player's own page; a scene GM's page, which sees everything); an encounter's
/// AI GM, whose prompt holds the encounter's secrets, streams [`Draft::Unshown`]: every page
/// counts its tokens and none reads its text, the GM link's person included (a player's peer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draft {
    Shown,
    Unshown,
}

/// Seats changing hands (seat, to a person?), taken by the game before its next step.
pub type HandOvers = Arc<Mutex<Vec<(String, bool)>>>;
/// People asking to sit down, taken by the game before its next step.
pub type Joins = Arc<Mutex<Vec<JoinRequest>>>;

/// Where a game is played online: the streams it publishes to, the seats it asks, the table's
/// own commands it takes. Every call is cheap and never blocks on a page.
#[async_trait]
pub trait Surface: Send + Sync {
    /// A committed event, as the game renders it.
    fn publish(&self, update: Update);
    /// Whose model is working now (None: nobody's; the drafts go).
    fn thinking(&self, who: Option<String>);
    /// A model call for `seat` is streaming: every page counts its tokens; `seat`'s own page
    /// reads the draft only when `draft` is [`Draft::Shown`].
    fn progress(&self, seat: &str, progress: &troupe_llm::Progress, draft: Draft);
    /// Ask a seat and wait for its answer: None when the table closes.
    async fn ask_and_wait(&self, ask: Ask) -> Option<Answer>;
    /// The game has published its history: pages may read the streams.
    fn mark_ready(&self);
    /// Every waiting ask withdrawn (the game that asked them stopped).
    fn withdraw_asks(&self);
    /// The GM's `undo` goes to the table (which stops the game to take the step back), not
    /// to the game as a command.
    fn undo_by_table(&self);
    /// Resolves when the GM asks to take back a step (after [`Surface::undo_by_table`]); an
    /// undo asked while nobody waited is kept for the next wait.
    fn undo_asked(&self) -> Notified<'_>;
    /// The inbox ids of the answers the game has taken since its last commit: the game's store
    /// forgets them in that commit ([`crate::GameStore::consume_answers`]).
    fn received(&self) -> Received;
    fn hand_overs(&self) -> HandOvers;
    /// Woken by each hand-over (a scene's AI that has said all it may waits on it).
    fn handed(&self) -> Arc<Notify>;
    fn joins(&self) -> Joins;
    /// The AI at this seat could not go on (its model failed) and gave the seat back
    /// (`failed`), or was handed the seat again on purpose.
    fn ai_failed(&self, seat: &str, failed: bool);
}

/// A seat whose asks wait on the surface for a person to answer.
pub struct SurfaceSeat(pub Arc<dyn Surface>);

#[async_trait]
impl Seat for SurfaceSeat {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        // The sender goes only when the table closes: then the person has left.
        self.0
            .ask_and_wait(ask.clone())
            .await
            .unwrap_or(Answer::Leave)
    }
}

/// A game a surface can play: built by the binary, played on its own thread until it ends or
/// stops. Returns why it stopped, or the error that stopped it.
#[async_trait(?Send)]
pub trait Playable: Send {
    async fn play(self: Box<Self>, surface: Arc<dyn Surface>) -> Result<String, String>;
}

mod published;
pub use published::{GmShown, Published, SurfaceCalls};

#[cfg(feature = "testing")]
mod scripted;
#[cfg(feature = "testing")]
pub use scripted::{Asked, ScriptedSurface};
