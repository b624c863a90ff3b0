//! Running a table's game (a Lasers & Feelings session, an encounter run or a scene) on its own
//! thread, its browser seats and its observer speaking to the [`Hub`].

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use troupe_agents::Purpose;
use troupe_lasers::asks::AskedGm;
use troupe_lasers::visibility::{gm_view, player_view};
use troupe_lasers::{
    Driver, Envelope, Event, GmSeat, Observer, PlayerQuestion, PlayerSeat, Session, SessionSetup,
    Store, SystemClock, Table,
};
use troupe_seat::{Answer, Ask, Seat};

use crate::encounter::EncounterGame;
use crate::feed::{Audience, GM, lines, numbered};
use crate::hub::{Draft, Hub, Update};

/// A seat whose asks wait in the hub for a browser to answer.
pub struct BrowserSeat(pub Arc<Hub>);

#[async_trait]
impl Seat for BrowserSeat {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        // The sender goes only when the table closes: then the person has left.
        self.0
            .ask_and_wait(ask.clone())
            .await
            .unwrap_or(Answer::Leave)
    }
}

/// People's seats at a Lasers & Feelings table, each in its own browser: a step's decisions are
/// asked of everyone at once (nobody waits for another person's plan to write theirs).
struct BrowserPlayers {
    hub: Arc<Hub>,
}

#[async_trait]
impl PlayerSeat for BrowserPlayers {
    async fn decide(&mut self, question: &PlayerQuestion<'_>) -> Answer {
        BrowserSeat(self.hub.clone()).decide(&question.ask()).await
    }

    async fn decide_all(&mut self, questions: &[PlayerQuestion<'_>]) -> Vec<Answer> {
        let asks = questions.iter().map(|q| {
            let hub = self.hub.clone();
            let ask = q.ask();
            async move { hub.ask_and_wait(ask).await.unwrap_or(Answer::Leave) }
        });
        futures_util::future::join_all(asks).await
    }

    fn take_hand_overs(&mut self) -> Vec<(String, bool)> {
        match self.hub.hand_overs.lock() {
            Ok(mut h) => std::mem::take(&mut *h),
            Err(_) => Vec::new(),
        }
    }
}

/// Pushes every committed event, and who is thinking, to the hub.
pub struct HubObserver(pub Arc<Hub>);

impl Observer for HubObserver {
    fn on_event(&mut self, env: &Envelope, session: &Session) {
        self.0.publish(update(env, session));
    }
    fn thinking(&mut self, agent: &str, _purpose: Purpose) {
        self.0.thinking(Some(agent.to_string()));
    }
    fn progress(&mut self, agent: &str, _purpose: Purpose, progress: &troupe_llm::Progress) {
        self.0.progress(agent, progress, Draft::Shown);
    }
    fn idle(&mut self) {
        self.0.thinking(None);
    }
}

/// Who sits in the GM's chair.
pub enum GmChair {
    /// A person, at the GM's link.
    Person,
    /// The AI GM: its drafts stream to the GM's own page.
    Ai(Box<troupe_lasers::AiGm>),
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

/// A table's game, built by the binary.
pub enum Game {
    Lasers(Box<LasersGame>),
    Encounter(Box<EncounterGame>),
    Scene(Box<crate::scene::SceneGame>),
}

/// Play the game until it ends or stops: why it stopped, or the error that stopped it.
pub async fn play(game: Game, hub: Arc<Hub>) -> Result<String, String> {
    match game {
        Game::Lasers(g) => play_lasers(*g, hub)
            .await
            .map_err(troupe_engine::error_chain),
        Game::Encounter(g) => crate::encounter::play(*g, hub).await,
        Game::Scene(g) => crate::scene::play(*g, hub).await,
    }
}

/// Everything a Lasers & Feelings table needs.
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

/// Play the session until it ends or stops. Returns why. When the GM asks to take back their
/// last decision, the game is stopped where it waits (as a kill would stop it: every committed
/// step stays), the decision is marked undone, and the session resumes and asks for it again.
async fn play_lasers(game: LasersGame, hub: Arc<Hub>) -> Result<String, troupe_engine::Error> {
    let LasersGame {
        start,
        store,
        table,
        gm,
        turns,
        mut take_back,
    } = game;
    hub.undo_by_table();
    let mut gm: Box<dyn GmSeat> = match gm {
        GmChair::Person => Box::new(AskedGm {
            seat: BrowserSeat(hub.clone()),
        }),
        GmChair::Ai(ai) => {
            let hub = hub.clone();
            Box::new(ai.on_progress(Arc::new(move |_purpose, p| {
                hub.progress(GM, p, Draft::Shown)
            })))
        }
        GmChair::Seat(seat) => seat,
    };
    let mut people = BrowserPlayers { hub: hub.clone() };
    let mut observer = HubObserver(hub.clone());
    let clock = SystemClock;
    let (mut start, mut store) = (Some(start), store);
    let mut number = 0;
    loop {
        // What a person's answer decided and its leaving the inbox are one commit.
        store.consume_answers(hub.received.clone());
        let mut driver = match start.take() {
            Some(Start::New(setup)) => {
                number = setup.session_number;
                hub.mark_ready();
                Driver::start(*setup, store, gm.as_mut(), &table, &mut observer, &clock)?
            }
            Some(Start::Resume { number: n, events }) => {
                number = n;
                // The streams as they were when the table stopped: the same lines with the
                // same ids, so a browser that reconnects gets only what it has not seen.
                troupe_lasers::snapshot::fold_with(number, &events, |env, s| {
                    hub.publish(update(env, s));
                })?;
                hub.mark_ready();
                Driver::resume(number, store, gm.as_mut(), &table, &mut observer, &clock)?
            }
            // After an undo: the streams hold everything already.
            None => Driver::resume(number, store, gm.as_mut(), &table, &mut observer, &clock)?,
        };
        driver.seat_people(&mut people);
        if let Some(n) = turns {
            driver.stop_after(n);
        }
        let undo_asked = hub.undo.notified();
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
        hub.withdraw_asks();
        let taken = take_back(number).map_err(|message| troupe_engine::Error::SeatFailed {
            session: number,
            message,
        })?;
        if let Some((what, marker)) = taken.undone {
            let line = (
                Audience::Table,
                "session",
                format!("The GM took back {what}."),
            );
            hub.publish(Update {
                lines: numbered(marker.seq, vec![line]),
                ..Update::default()
            });
        }
        store = taken.store;
    }
}
/// What a committed event changes at the table: its lines, who holds each seat, each seat's
/// sheet from its own view.
fn update(env: &Envelope, session: &Session) -> Update {
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
        lines: lines(env, session),
        ended,
        holders,
        sheets,
    }
}
