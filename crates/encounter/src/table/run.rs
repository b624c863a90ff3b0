//! The encounter's table loop: what comes next is the fold's to say ([`State::next`]); this
//! brings the model's replies, the people's answers (through any seat that speaks the seat
//! protocol: the terminal, a browser, a test) and the dice, and commits every step's events to
//! the run's log before anyone is shown them. A killed run resumes where its log stops.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::budget::Role;
use crate::log::{
    EncounterEvent, Envelope, GM_ATTEMPTS, ModelCall, Next, Seat, SeatKind, State, fold,
};
use crate::prompt::{gm_messages, gm_schema, player_messages, player_schema};
use crate::tools::CheckCall;
use crate::turn::{GmStep, gm_reply, player_reply};
use serde_json::Value;
use troupe_llm::{CallTag, ChatRequest, Gateway, Message, ResponseSchema};
use troupe_rules::d20::{D20Check, roll_d20};
use troupe_seat::{Answer, JoinRequest, Seat as ProtocolSeat, Values, check};

use super::asks::{WHISPER, action_again_ask, action_ask, roll_ask};
use troupe_engine::{Error, Prompts};

use super::{EncounterError, EncounterStore};

/// How many answers (table commands, answers that do not fit) a person may give to one
/// question before the table moves on without them.
pub const PERSON_ANSWERS: u32 = 20;

/// Who sees the run as it is played: each committed event with the state after it, and which
/// seat's model is working.
pub trait EncounterWatch: Send {
    fn on_event(&mut self, state: &State, env: &Envelope);
    fn thinking(&mut self, _seat: Option<&str>) {}
    /// The thinking seat's reply is streaming in. The text is the model's unchecked draft:
    /// show it only to whom may see it.
    fn progress(&mut self, _seat: &str, _progress: &troupe_llm::Progress) {}
    /// The table stopped on purpose ([`EncounterTable::pause_at`]) with this many events.
    fn paused(&mut self, _events: usize) {}
}

/// Why the loop stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    Resolved,
    Rounds(u32),
    /// A person left (`/quit`, the input ended, the table closed).
    Quit,
}

/// What a person answered to "what do you attempt?".
enum Reply {
    Action(String),
    Leave,
    /// The seat went to an AI while it was asked.
    Handed,
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
    watch: Box<dyn EncounterWatch>,
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
        watch: Box<dyn EncounterWatch>,
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
            self.watch.paused(self.events.len());
            troupe_engine::pause::hold();
        }
        self.store.append(self.run, &envs, 0)?;
        for env in envs {
            self.state.apply(&env);
            self.watch.on_event(&self.state, &env);
            self.events.push(env);
        }
        if self.pause.after(self.events.len() as u64) {
            self.watch.paused(self.events.len());
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
        let (called, refused) = self.call(req, "gm").await;
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

    /// One model call through the gateway: the call as the log keeps it (or why it failed),
    /// and each reply the gateway refused for its shape, with the problems, in order.
    async fn call(
        &mut self,
        mut req: ChatRequest,
        agent: &str,
    ) -> (
        Result<(ModelCall, Value), EncounterError>,
        Vec<(String, Vec<String>)>,
    ) {
        // Every call records an event before the next is made: the log's position numbers it.
        let identity = format!("{agent} at {}", self.state.seq);
        troupe_engine::call_seed::seed_request(&mut req, self.state.seed, &identity);
        self.watch.thinking(Some(agent));
        let started = Instant::now();
        let mut refused = Vec::new();
        let mut attempts = Vec::new();
        let watch = std::sync::Mutex::new(&mut self.watch);
        let progress = |p: troupe_llm::Progress| {
            let mut watch = watch.lock().unwrap_or_else(|e| e.into_inner());
            watch.progress(agent, &p);
        };
        let result = self
            .gateway
            .call_with_progress(
                &req,
                &mut |a| {
                    if let (Some(reply), Some(error)) = (&a.reply, &a.error) {
                        refused.push((reply.clone(), vec![error.clone()]));
                    }
                    attempts.push(troupe_engine::attempts::logged(&a));
                },
                &progress,
            )
            .await;
        self.watch.thinking(None);
        let reply = match result {
            Ok(r) => r,
            Err(e) => {
                let e = EncounterError::Model {
                    agent: agent.to_string(),
                    message: e.to_string(),
                    refused: String::new(),
                };
                return (Err(e), refused);
            }
        };
        let json = reply
            .json
            .clone()
            .or_else(|| serde_json::from_str(&reply.content).ok())
            .unwrap_or(Value::Null);
        let call = ModelCall {
            agent: agent.to_string(),
            purpose: req.tag.purpose.clone(),
            model: self.gateway.model_name(),
            reply: reply.content,
            json: json.clone(),
            tokens_in: u64::from(reply.usage.input_tokens),
            tokens_out: u64::from(reply.usage.output_tokens),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            attempts,
        };
        (Ok((call, json)), refused)
    }

    /// One seat's action; false when a person left. A seat handed over while it was asked is
    /// asked again of whoever holds it now.
    async fn act(&mut self, index: usize) -> Result<bool, Error> {
        loop {
            let Some(seat) = self.state.seats.get(index).cloned() else {
                return Err(EncounterError::UnknownSeat(format!("seat {index}")).into());
            };
            if seat.kind == SeatKind::Ai {
                self.ai_action(index, &seat.id).await?;
                return Ok(true);
            }
            match self.person_action(&seat).await? {
                Reply::Action(text) => {
                    let text = if text.is_empty() {
                        "(waits)".to_string()
                    } else {
                        text
                    };
                    self.record(vec![EncounterEvent::PlayerActed {
                        seat: seat.id,
                        text,
                    }])?;
                    return Ok(true);
                }
                Reply::Leave => return Ok(false),
                Reply::Handed => self.record_hand_overs()?,
            }
        }
    }

    async fn ai_action(&mut self, index: usize, seat: &str) -> Result<(), Error> {
        let messages = player_messages(&self.prompts, &self.state, index)?
            .iter()
            .map(|(role, text)| message(*role, text))
            .collect();
        let mut req = ChatRequest::new(CallTag::new(seat, "encounter_action"), messages);
        req.schema = Some(ResponseSchema {
            name: "encounter_action".to_string(),
            schema: player_schema(),
        });
        req.max_tokens = 200;
        // A player's reply refused for its shape is repaired by the gateway; only the final one
        // is the player's action.
        let (call, json) = self.call(req, seat).await.0?;
        let reply = player_reply(&self.state, seat, &json);
        self.record(vec![EncounterEvent::PlayerCalled { call }, reply])
    }

    /// A person's action: a whisper is recorded and the question asked again; an action that
    /// says what happens is explained, and the person rephrases it or sends it as it is for the
    /// GM to rule on (never rewritten for them).
    async fn person_action(&mut self, seat: &Seat) -> Result<Reply, Error> {
        let mut ask = action_ask(&self.state, seat);
        let mut sent_back: Option<String> = None;
        for _ in 0..PERSON_ANSWERS {
            let answer = self.people.decide(&ask).await;
            if let Err(e) = check(&ask, &answer) {
                ask.error = Some(e.to_string());
                continue;
            }
            let values = match answer {
                Answer::Leave | Answer::Fail { .. } => return Ok(Reply::Leave),
                Answer::Handed => return Ok(Reply::Handed),
                Answer::Command { name, values } if name == WHISPER => {
                    self.record(vec![EncounterEvent::Whispered {
                        seat: seat.id.clone(),
                        text: values.text("text"),
                    }])?;
                    continue;
                }
                Answer::Command { .. } => continue,
                Answer::Decide { values } => values,
            };
            let line = values.text("action");
            if let Some(original) = sent_back {
                return Ok(Reply::Action(if line.is_empty() { original } else { line }));
            }
            let verdict = troupe_validator::check(&line);
            if line.is_empty() || !verdict.flagged {
                return Ok(Reply::Action(line));
            }
            let feedback = troupe_validator::feedback(&verdict);
            self.record(vec![EncounterEvent::ActionSentBack {
                seat: seat.id.clone(),
                text: line.clone(),
                feedback: feedback.clone(),
            }])?;
            ask = action_again_ask(&self.state, seat, &line, &feedback);
            sent_back = Some(line);
        }
        Ok(Reply::Action(sent_back.unwrap_or_default()))
    }

    /// Roll the pending check: a person rolls when asked; an AI player's is rolled for it.
    /// False when a person left.
    async fn roll(&mut self, check: CheckCall) -> Result<bool, Error> {
        let Some(seat) = self.state.seat(&check.player).cloned() else {
            return Err(EncounterError::UnknownSeat(check.player.clone()).into());
        };
        if seat.kind == SeatKind::Person {
            let ask = roll_ask(&self.state, &seat, &check);
            // Whatever else comes (a hand-over), the dice are rolled: a roll has no choices.
            if matches!(
                self.people.decide(&ask).await,
                Answer::Leave | Answer::Fail { .. }
            ) {
                return Ok(false);
            }
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

fn message(role: Role, text: &str) -> Message {
    match role {
        Role::System => Message::system(text),
        Role::User => Message::user(text),
        Role::Assistant => Message::assistant(text),
    }
}
