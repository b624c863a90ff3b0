//! A Lasers & Feelings session played online (on a [`Surface`]: the web table, Discord): people's
//! seats ask the surface, the GM's chair is a person there, the AI GM or any seat the binary
//! brings, and each committed event goes to the surface as this game's lines ([`crate::lines`])
//! with their audiences, who holds each seat and each seat's sheet from its own view.
//!
//! The rule is a whitelist twice over: the renderer writes for the table only the events the
//! table may read (the rest, model calls, memories, verdicts and the GM's decisions among them,
//! only for the GM), a private line (a whisper, a player's plan or directive to their character)
//! reaches only its seat and the GM's, and only the kinds of line a page has a style for are
//! published: any other kind reaches no one.

use crate::SessionError;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use troupe_engine::surface::{
    Audience, Draft, GM, GmShown, Line, Playable, Published, Rendered, Surface, SurfaceSeat,
    Update, numbered,
};
use troupe_seat::{Answer, Seat};

use crate::asks::AskedGm;
use crate::lines::{self, Kind};
use crate::visibility::{gm_view, player_view};
use crate::{
    AiGm, Driver, Envelope, Event, GmSeat, PlayerQuestion, PlayerSeat, Session, SessionSetup,
    Store, SystemClock, Table,
};

/// People's seats at a Lasers & Feelings table, each on its own page: a step's decisions are
/// asked of everyone at once (nobody waits for another person's plan to write theirs).
struct SurfacePlayers {
    surface: Arc<dyn Surface>,
}

#[async_trait]
impl PlayerSeat for SurfacePlayers {
    async fn decide(&mut self, question: &PlayerQuestion<'_>) -> Answer {
        SurfaceSeat(self.surface.clone())
            .decide(&question.ask())
            .await
    }

    async fn decide_all(&mut self, questions: &[PlayerQuestion<'_>]) -> Vec<Answer> {
        let asks = questions.iter().map(|q| {
            let surface = self.surface.clone();
            let ask = q.ask();
            async move { surface.ask_and_wait(ask).await.unwrap_or(Answer::Leave) }
        });
        futures_util::future::join_all(asks).await
    }

    fn take_hand_overs(&mut self) -> Vec<(String, bool)> {
        match self.surface.hand_overs().lock() {
            Ok(mut h) => std::mem::take(&mut *h),
            Err(_) => Vec::new(),
        }
    }
}

/// The AI GM's prompt holds the scenario's secret notes, and a table whose GM is an AI has no
/// GM's page: its draft reaches no page, only its tokens.
const GM_SHOWN: GmShown = GmShown {
    name: "The GM",
    draft: Draft::Unshown,
};

/// Who sits in the GM's chair.
pub enum GmChair {
    /// A person, at the GM's link.
    Person,
    /// The AI GM: its drafts stream to the GM's own page.
    Ai(Box<AiGm>),
    /// Any other seat the binary brings.
    Seat(Box<dyn GmSeat>),
}

/// How the session starts: a new one, or the table's session continued after a restart.
pub enum Start {
    New(Box<SessionSetup>),
    /// Continue this session; its events so far, to rebuild the streams.
    Resume {
        number: u32,
        events: Vec<Envelope>,
    },
}

/// Everything a Lasers & Feelings table needs, built by the binary.
pub struct LasersGame {
    pub start: Start,
    /// Where the session is written (its store, which mirrors it).
    pub store: Store,
    pub table: Table,
    pub gm: GmChair,
    pub turns: Option<u32>,
    /// Takes back the session's last GM decision when the GM asks (the binary's: it keeps the
    /// mirror and the memory in step), with the store to resume on.
    pub take_back: TakeBack,
}

/// What taking back the last GM decision of a session did: what it took back and the recorded
/// undo (None when there was nothing to take back), and the session's store, reopened.
pub struct TakenBack {
    pub undone: Option<(String, Envelope)>,
    pub store: Store,
}

pub type TakeBack = Box<dyn FnMut(u32) -> Result<TakenBack, String> + Send>;

#[async_trait(?Send)]
impl Playable for LasersGame {
    async fn play(self: Box<Self>, surface: Arc<dyn Surface>) -> Result<String, String> {
        play(*self, surface)
            .await
            .map_err(troupe_engine::error_chain)
    }
}

/// Play the session until it ends or stops. Returns why. When the GM asks to take back their
/// last decision, the game is stopped where it waits (as a kill would stop it: every committed
/// step stays), the decision is marked undone, and the session resumes and asks for it again.
async fn play(game: LasersGame, surface: Arc<dyn Surface>) -> Result<String, troupe_engine::Error> {
    let LasersGame {
        start,
        store,
        table,
        gm,
        turns,
        mut take_back,
    } = game;
    surface.undo_by_table();
    let mut gm = gm_seat(gm, &surface);
    let mut people = SurfacePlayers {
        surface: surface.clone(),
    };
    let mut observer = Published::new(surface.clone(), GM_SHOWN, |s: &Session, e: &Envelope| {
        update(e, s)
    });
    let clock = SystemClock;
    let (mut start, mut store) = (Some(start), store);
    let mut number = 0;
    loop {
        // What a person's answer decided and its leaving the inbox are one commit.
        store.consume_answers(surface.received());
        let mut driver = match start.take() {
            Some(Start::New(setup)) => {
                number = setup.session_number;
                surface.mark_ready();
                Driver::start(*setup, store, gm.as_mut(), &table, &mut observer, &clock)?
            }
            Some(Start::Resume { number: n, events }) => {
                number = n;
                // The streams as they were when the table stopped: the same lines with the
                // same ids, so a page that reconnects gets only what it has not seen.
                crate::snapshot::fold_with(number, &events, |env, s| {
                    surface.publish(update(env, s));
                })?;
                surface.mark_ready();
                Driver::resume(number, store, gm.as_mut(), &table, &mut observer, &clock)?
            }
            // After an undo: the streams hold everything already.
            None => Driver::resume(number, store, gm.as_mut(), &table, &mut observer, &clock)?,
        };
        driver.seat_people(&mut people);
        if let Some(n) = turns {
            driver.stop_after(n);
        }
        let undo_asked = surface.undo_asked();
        // A session that stops unended (a spend limit) stays resumable: the next start reopens
        // it.
        let ran = tokio::select! {
            r = driver.run() => Some(r),
            () = undo_asked => None,
        };
        if let Some(r) = ran {
            return r;
        }
        drop(driver);
        surface.withdraw_asks();
        let taken = take_back(number).map_err(|message| SessionError::SeatFailed {
            session: number,
            message,
        })?;
        if let Some((what, marker)) = taken.undone {
            let line = (
                Audience::Table,
                "session",
                format!("The GM took back {what}."),
            );
            surface.publish(Update {
                lines: numbered(marker.seq, vec![line]),
                ..Update::default()
            });
        }
        store = taken.store;
    }
}

/// The GM's chair as a seat: a person's asks wait on the surface; the AI GM's drafts stream to
/// the GM's page.
fn gm_seat(gm: GmChair, surface: &Arc<dyn Surface>) -> Box<dyn GmSeat> {
    match gm {
        GmChair::Person => Box::new(AskedGm {
            seat: SurfaceSeat(surface.clone()),
        }),
        GmChair::Ai(ai) => ai,
        GmChair::Seat(seat) => seat,
    }
}

/// What a committed event changes at the table: its lines, who holds each seat, each seat's
/// sheet from its own view.
pub fn update(env: &Envelope, session: &Session) -> Update {
    let ended = match &env.event {
        Event::SessionEnded { reason } => Some(Some(reason.clone())),
        Event::SessionResumed { .. } => Some(None),
        _ => None,
    };
    let holders = session
        .seats()
        .iter()
        .map(|seat| {
            let person = seat.taken_by == troupe_campaign::SeatTaker::Human;
            (seat.player.agent_id.clone(), person)
        })
        .collect();
    let mut sheets: Vec<_> = session
        .seats()
        .iter()
        .filter_map(|seat| {
            let agent = &seat.player.agent_id;
            let v = player_view(session, agent)?;
            Some((
                agent.clone(),
                json!({"character": v.character, "ship": v.ship}),
            ))
        })
        .collect();
    sheets.extend(gm_view(session).map(|v| {
        (
            GM.to_string(),
            json!({"ship": v.ship, "scenario": v.scenario}),
        )
    }));
    Update {
        lines: feed_lines(env, session),
        ended,
        holders,
        sheets,
    }
}

/// The lines an event adds to the table's streams, given the session as it stands after it.
pub fn feed_lines(env: &Envelope, s: &Session) -> Vec<Line> {
    numbered(env.seq, rendered(env, s))
}

/// The renderer's lines of an event, in the pages' kinds; a line of a kind no page shows (how
/// the session was set up, overreach checks, memory, model calls, the GM's own notices and
/// decisions) is left out, whoever may read it.
fn rendered(env: &Envelope, s: &Session) -> Vec<Rendered> {
    lines::render(env, s)
        .into_iter()
        .filter_map(|line| Some((line.audience, page_kind(line.kind)?, line.text)))
        .collect()
}

/// The page's style of each kind of line it shows; None for a kind it does not.
fn page_kind(kind: Kind) -> Option<&'static str> {
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
