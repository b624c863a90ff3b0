//! The encounter's table loop: what comes next is the fold's to say ([`State::next`]); this
//! brings the model's replies, the people's answers (through any seat that speaks the seat
//! protocol: the terminal, a browser, a test) and the dice, and commits every step's events to
//! the run's log before anyone is shown them. A killed run resumes where its log stops.

use std::sync::{Arc, Mutex};

use crate::log::{
    EncounterEvent, Envelope, GM_ATTEMPTS, ModelCall, Next, Seat, SeatKind, State, fold,
};
use crate::prompt::{gm_messages, gm_schema};
use crate::tools::CheckCall;
use crate::turn::{GmStep, action_taken, gm_reply};
use troupe_llm::{CallTag, ChatRequest, Gateway, ResponseSchema};
use troupe_rules::d20::{D20Check, roll_d20};
use troupe_seat::{Answer, Ask, JoinRequest, Seat as ProtocolSeat, Values, check};

use super::ai_player::{AiPlayer, message};
use super::asks::{WHISPER, roll_ask, turn_ask};
use super::call::Caller;
use troupe_engine::{Error, Prompts, Watch};

use super::{EncounterError, EncounterStore};

/// How many answers (table commands, answers that do not fit) a person may give to one
/// question before the table moves on without them.
pub const PERSON_ANSWERS: u32 = 20;

/// Who sees the run as it is played, as every game's table is watched: each committed event
/// with the state after it, and which seat's model is working.
pub type EncounterWatch = dyn Watch<State, Envelope>;

/// Why the loop stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    Resolved,
    Rounds(u32),
    /// A person left (`/quit`, the input ended, the table closed).
    Quit,
}

/// One encounter run at its table.
pub struct EncounterTable<P> {
    store: EncounterStore,
    run: u32,
    events: Vec<Envelope>,
    state: State,
    gateway: Gateway,
    /// The campaign's prompt registry: the encounter's templates, its overrides on top.
    prompts: Prompts,
    /// Whoever answers for the people's seats.
    people: P,
    watch: Box<EncounterWatch>,
    /// Stop (saved) before this round of player actions begins.
    max_rounds: Option<u32>,
    /// Seats changing hands (seat id, to a person?), recorded before the next step.
    hand_overs: Arc<Mutex<Vec<(String, bool)>>>,
    /// People asking to sit down, seated before the next step.
    joins: Arc<Mutex<Vec<JoinRequest>>>,
    /// Seats asked for (by the table server's queue or [`EncounterTable::join`]) and not yet
    /// taken, each with what its person said while they waited: seated once a round is under
    /// way.
    waiting: Vec<(Seat, Vec<String>)>,
    pause: troupe_engine::pause::CrashPause,
}

impl<P: ProtocolSeat> EncounterTable<P> {
    /// The run in `store` at its table: the GM and AI players on `gateway` with the campaign's
    /// `prompts` (`troupe_games::campaign`), `people` answering for the people's seats.
    pub fn open(
        store: EncounterStore,
        run: u32,
        gateway: Gateway,
        prompts: Prompts,
        people: P,
        watch: Box<EncounterWatch>,
    ) -> Result<Self, Error> {
        let events = store.events(run)?;
        let state = fold(&events).ok_or(EncounterError::NotAnEncounter(run))?;
        Ok(EncounterTable {
            store,
            run,
            events,
            state,
            gateway,
            prompts,
            people,
            watch,
            max_rounds: None,
            hand_overs: Arc::default(),
            joins: Arc::default(),
            waiting: Vec::new(),
            pause: troupe_engine::pause::CrashPause::default(),
        })
    }

    pub fn stop_before_round(&mut self, round: Option<u32>) {
        self.max_rounds = round;
    }

    /// Where to stop and wait until the process is killed (the crash tests).
    pub fn pause_at(&mut self, pause: troupe_engine::pause::CrashPause) {
        self.pause = pause;
    }

    /// Where hand-overs are queued for this table (by the table server).
    pub fn hand_overs(&mut self, queue: Arc<Mutex<Vec<(String, bool)>>>) {
        self.hand_overs = queue;
    }

    /// Where people asking to sit down are queued (by the table server).
    pub fn joins(&mut self, queue: Arc<Mutex<Vec<JoinRequest>>>) {
        self.joins = queue;
    }

    pub fn run(&self) -> u32 {
        self.run
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    pub fn events(&self) -> &[Envelope] {
        &self.events
    }

    /// Take back the run's last round of player actions, as `troupe encounter undo` does (the
    /// same `undone` event, committed before anyone is shown it): the round is played again
    /// from its first action. The table must be stopped where it waited (its `play` dropped);
    /// `play` again goes on from there. Which seq it took back from; None when there was no
    /// round to take back.
    pub fn take_back_round(&mut self) -> Result<Option<u64>, Error> {
        let Some(undone) = crate::log::undo_event(&self.events) else {
            return Ok(None);
        };
        self.store
            .append(self.run, std::slice::from_ref(&undone), 0)?;
        self.events.push(undone.clone());
        self.state = fold(&self.events).ok_or(EncounterError::NotAnEncounter(self.run))?;
        self.watch.on_event(&self.state, &undone);
        Ok(match undone.event {
            EncounterEvent::Undone { from } => Some(from),
            _ => None,
        })
    }

    /// Someone takes a seat at the running table (`troupe encounter resume --join`): the same
    /// way in as a person arriving by invitation, seated before the next step, or, when the
    /// round's actions are all in, once the next round has begun.
    pub fn join(&mut self, seat: Seat) {
        self.waiting.push((seat, Vec::new()));
    }

    /// Seats asked for and not taken: the table stopped (a round limit, a person leaving)
    /// before the round they would join began.
    pub fn unseated(&self) -> Vec<&Seat> {
        self.waiting.iter().map(|(seat, _)| seat).collect()
    }

    pub async fn play(&mut self) -> Result<Stop, Error> {
        loop {
            self.record_hand_overs()?;
            self.record_joins()?;
            match self.state.next() {
                Next::Done => return Ok(Stop::Resolved),
                Next::Open | Next::Gm => self.gm_turn().await?,
                Next::Roll(check) => {
                    if !self.roll(check).await? {
                        return Ok(Stop::Quit);
                    }
                }
                Next::Act(seat) => {
                    let new_round = seat == 0;
                    if new_round && self.max_rounds.is_some_and(|m| self.state.round >= m) {
                        return Ok(Stop::Rounds(self.state.round));
                    }
                    if !self.act(seat).await? {
                        return Ok(Stop::Quit);
                    }
                }
            }
        }
    }

    /// Commit events (one transaction), then fold them in and show them.
    fn record(&mut self, new: Vec<EncounterEvent>) -> Result<(), Error> {
        let mut next = self.events.last().map_or(0, |e| e.seq + 1);
        let envs: Vec<Envelope> = new
            .into_iter()
            .map(|event| {
                let env = Envelope { seq: next, event };
                next += 1;
                env
            })
            .collect();
        if self.pause.before(envs.iter().map(|e| e.seq)) {
            self.watch.paused(self.events.len() as u64);
            troupe_engine::pause::hold();
        }
        self.store.append(self.run, &envs, 0)?;
        for env in envs {
            self.state.apply(&env);
            self.watch.on_event(&self.state, &env);
            self.events.push(env);
        }
        if self.pause.after(self.events.len() as u64) {
            self.watch.paused(self.events.len() as u64);
            troupe_engine::pause::hold();
        }
        Ok(())
    }

    /// The hand-overs asked since the last step, each recorded when it changes who holds the
    /// seat.
    fn record_hand_overs(&mut self) -> Result<(), Error> {
        let asked: Vec<(String, bool)> = match self.hand_overs.lock() {
            Ok(mut queue) => queue.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        for (seat, person) in asked {
            let held_by_person = self.state.seat(&seat).map(|s| s.kind == SeatKind::Person);
            if held_by_person.is_some_and(|p| p != person) {
                self.record(vec![EncounterEvent::SeatHanded { seat, person }])?;
            }
        }
        Ok(())
    }

    /// Seat the people who asked to sit down (since the last step, or before the table
    /// played), each with what they said while they waited. They act from their turn in the
    /// current round on; when the round's actions are all in (the GM may still answer them),
    /// they sit down once the next round has begun, so that nobody acts alone after a
    /// finished round.
    fn record_joins(&mut self) -> Result<(), Error> {
        let asked: Vec<JoinRequest> = match self.joins.lock() {
            Ok(mut queue) => queue.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        for join in asked {
            let seat = Seat {
                id: join.seat,
                character: join.character,
                player: join.name,
                kind: SeatKind::Person,
                about: String::new(),
            };
            self.waiting.push((seat, join.held));
        }
        let state = &self.state;
        let round_done = !state.seats.is_empty() && state.acted >= state.seats.len();
        if self.waiting.is_empty() || round_done {
            return Ok(());
        }
        for (seat, held) in std::mem::take(&mut self.waiting) {
            if self.state.seat(&seat.id).is_some() {
                continue;
            }
            let id = seat.id.clone();
            let mut events = vec![EncounterEvent::SeatJoined { seat }];
            if !held.is_empty() {
                events.push(EncounterEvent::HeldDelivered {
                    seat: id,
                    texts: held,
                });
            }
            self.record(events)?;
        }
        Ok(())
    }

    async fn gm_turn(&mut self) -> Result<(), Error> {
        let assembled = gm_messages(&self.prompts, &self.state)?;
        let messages = assembled
            .messages
            .iter()
            .map(|(role, text)| message(*role, text))
            .collect();
        let mut req = ChatRequest::new(CallTag::new("gm", "encounter_gm"), messages);
        req.schema = Some(ResponseSchema {
            name: "encounter_gm_reply".to_string(),
            schema: gm_schema(&self.state),
        });
        req.max_tokens = 700;
        let mut caller = Caller::at(&self.gateway, &mut self.watch, &self.state);
        let (called, refused) = caller.call(req, "gm").await;
        let mut events: Vec<EncounterEvent> = refused
            .into_iter()
            .map(|(reply, problems)| EncounterEvent::GmRejected {
                problems,
                reply: Some(reply),
            })
            .collect();
        let (call, json) = match called {
            Ok(c) => c,
            Err(mut e) => {
                // The shapes the gateway refused are kept: they were model replies.
                let refused = events.len();
                self.record(events)?;
                if let EncounterError::Model { refused: why, .. } = &mut e
                    && refused > 0
                {
                    *why =
                        format!(" (the GM's last {refused} replies did not fit the reply schema)");
                }
                return Err(e.into());
            }
        };
        events.push(EncounterEvent::GmCalled {
            call,
            zones: assembled.zones,
            trimmed: assembled.trimmed,
        });
        match gm_reply(&self.state, &json, &super::now()) {
            GmStep::Events(more) => {
                events.extend(more);
                self.record(events)
            }
            GmStep::Failed(problems) => {
                events.push(EncounterEvent::GmRejected {
                    problems: problems.clone(),
                    reply: None,
                });
                self.record(events)?;
                Err(EncounterError::GmFailed {
                    attempts: GM_ATTEMPTS,
                    problems: problems.join("; "),
                }
                .into())
            }
        }
    }

    /// One seat's action, asked of whoever holds the seat (a person or an AI: the same ask) and
    /// taken by one rule ([`action_taken`]); false when a person left. A whisper is recorded
    /// and the seat asked again; a seat handed over while it was asked is asked again of whoever
    /// holds it now. After [`PERSON_ANSWERS`] answers that were not an action, the seat waits
    /// (or its action sent back goes as it was).
    async fn act(&mut self, index: usize) -> Result<bool, Error> {
        let mut error: Option<String> = None;
        let mut answers = 0;
        while answers < PERSON_ANSWERS {
            let Some(seat) = self.state.seats.get(index).cloned() else {
                return Err(EncounterError::UnknownSeat(format!("seat {index}")).into());
            };
            let mut ask = turn_ask(&self.state, &seat);
            if error.is_some() {
                ask.error = error.take();
            }
            let (answer, call) = self.ask_seat(&seat, &ask).await?;
            if !matches!(answer, Answer::Handed) {
                answers += 1;
            }
            if let Err(e) = check(&ask, &answer) {
                error = Some(e.to_string());
                continue;
            }
            match answer {
                Answer::Leave | Answer::Fail { .. } => return Ok(false),
                Answer::Handed => self.record_hand_overs()?,
                Answer::Command { name, values } if name == WHISPER => {
                    self.record(vec![EncounterEvent::Whispered {
                        seat: seat.id,
                        text: values.text("text"),
                    }])?;
                }
                Answer::Command { .. } => {}
                Answer::Decide { values } => {
                    let taken = action_taken(&self.state, &seat.id, &values.text("action"));
                    let acted = matches!(taken, EncounterEvent::PlayerActed { .. });
                    let called = call.map(|call| EncounterEvent::PlayerCalled { call });
                    self.record(called.into_iter().chain([taken]).collect())?;
                    if acted {
                        return Ok(true);
                    }
                }
            }
        }
        let seat = self.state.seats.get(index).map(|s| s.id.clone());
        let seat = seat.unwrap_or_default();
        self.record(vec![action_taken(&self.state, &seat, "")])?;
        Ok(true)
    }

    /// Ask whoever holds the seat: the people's seat, or the AI at it, whose answer comes with
    /// the model call it made (the table stops, saved, when that model failed).
    async fn ask_seat(
        &mut self,
        seat: &Seat,
        ask: &Ask,
    ) -> Result<(Answer, Option<ModelCall>), Error> {
        if seat.kind == SeatKind::Person {
            return Ok((self.people.decide(ask).await, None));
        }
        let caller = Caller::at(&self.gateway, &mut self.watch, &self.state);
        let mut ai = AiPlayer::new(caller, &self.prompts);
        let answer = ai.decide(ask).await;
        match ai.failure {
            Some(e) => Err(e),
            None => Ok((answer, ai.call)),
        }
    }

    /// Roll the pending check: whoever holds the seat is asked to roll (an AI's dice are rolled
    /// for it at once).
    /// False when a person left.
    async fn roll(&mut self, check: CheckCall) -> Result<bool, Error> {
        let Some(seat) = self.state.seat(&check.player).cloned() else {
            return Err(EncounterError::UnknownSeat(check.player.clone()).into());
        };
        let ask = roll_ask(&self.state, &seat, &check);
        // Whatever else comes (a hand-over), the dice are rolled: a roll has no choices.
        let (answer, _) = self.ask_seat(&seat, &ask).await?;
        if matches!(answer, Answer::Leave | Answer::Fail { .. }) {
            return Ok(false);
        }
        let d20 = D20Check {
            dc: check.dc,
            modifier: check.modifier,
            edge: check.edge,
        };
        let roll = roll_d20(
            &d20,
            troupe_rules::roll_seed(self.state.seed, self.state.rolls),
        );
        self.record(vec![EncounterEvent::CheckRolled {
            seat: seat.id,
            roll,
        }])?;
        Ok(true)
    }
}
