//! The driver loop: ask `next` what the turn needs, perform it through a seat, a model or the
//! rules, append the resulting events to the log, fold them in, repeat.

use crate::SessionError;
use chrono::{DateTime, Utc};
use troupe_agents::{ActionDecl, InsightDecision, Intent, PromptSet};
use troupe_campaign::Campaign;
use troupe_engine::Watch;
use troupe_llm::Gateway;
use troupe_rules::{DiceExpr, TaskType, roll_expr, roll_seed};

use crate::asks::MAX_BAD_ANSWERS;
use crate::decision::PlayerDecision;
use crate::machine::{CallSpec, GmAsk, Step, apply_override, next};
use crate::memory::campaign::CampaignMemory;
use crate::memory::episodes::{episodes_of, unstored_turns};
use crate::memory::extraction::{extract, extraction_call};
use crate::memory::types::RecallLayer;
use crate::players::{AiPlayers, People, PlayerReply, PlayerSeats};
use crate::visibility::{character_view, gm_view, player_view};
use crate::{
    Envelope, Error, Event, FailureChoice, GmDecision, GmQuestion, GmReply, GmSeat, LayerView,
    Phase, PlayerQuestion, PlayerSeat, SeatNote, SeatView, Session, Store,
};
use troupe_agents::GmView;

/// Where time comes from: the system clock, or a fixed one in tests.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Who watches a session as it is played, as every game's table is watched (the terminal's
/// story view and spinner, the web table's streams): each committed event with the session
/// after it, and the agents' model calls (several of a step at once; the AI GM's too).
pub type Observer = dyn Watch<Session, Envelope>;

/// The AI side of the table: one gateway for every call, the prompt templates, and the
/// campaign memory the AIs recall from and store to.
pub struct Table {
    pub gateway: Gateway,
    pub prompts: PromptSet,
    pub memory: std::sync::Mutex<Box<dyn CampaignMemory>>,
    /// The model's context window: a prompt past 80% of it is trimmed (older turns first, then
    /// the weakest memories). From the model when it knows, else the campaign, else 8,192.
    pub context_tokens: u32,
    /// When the party's discussion runs out of time.
    pub discussion_limit: DiscussionLimit,
}

/// When the discussion stops before its last round: live, on the clock (seed 001: two
/// minutes) or when a round changed no one's stance; in a replay, before the rounds the
/// recorded session stopped before, so the replay takes the same path (a log written before
/// the stall rule existed has no stalls, and replays with none).
#[derive(Clone, Debug)]
pub enum DiscussionLimit {
    Clock(std::time::Duration),
    Recorded {
        /// (turn, round) pairs from the recording's `discussion_timed_out` events.
        timed_out: Vec<(u32, u32)>,
        /// (turn, round) pairs from its `discussion_stalled` events.
        stalled: Vec<(u32, u32)>,
    },
}

impl DiscussionLimit {
    pub fn recorded(events: &[Envelope]) -> Self {
        let pairs = |timeout: bool| -> Vec<(u32, u32)> {
            events
                .iter()
                .filter_map(|e| match e.event {
                    Event::DiscussionTimedOut { round, .. } if timeout => {
                        Some((e.turn_number, round))
                    }
                    Event::DiscussionStalled { round } if !timeout => Some((e.turn_number, round)),
                    _ => None,
                })
                .collect()
        };
        DiscussionLimit::Recorded {
            timed_out: pairs(true),
            stalled: pairs(false),
        }
    }
}

/// Whether the last discussion round left the leading plan and every stance as the round
/// before it did, with no word from the GM in between.
fn round_changed_nothing(t: &crate::session::Turn) -> bool {
    let [.., before, last] = t.consensus.as_slice() else {
        return false;
    };
    let gm_spoke = t
        .ooc
        .iter()
        .any(|m| m.agent.is_none() && m.round == last.round);
    !gm_spoke && before.proposer == last.proposer && before.positions == last.positions
}

/// When the model does not say and the campaign does not either.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 8192;

impl Table {
    pub fn new(gateway: Gateway, prompts: PromptSet, memory: Box<dyn CampaignMemory>) -> Self {
        Table {
            context_tokens: gateway.context_tokens().unwrap_or(DEFAULT_CONTEXT_TOKENS),
            gateway,
            prompts,
            memory: std::sync::Mutex::new(memory),
            discussion_limit: DiscussionLimit::Clock(std::time::Duration::from_secs(
                troupe_agents::consensus::DISCUSSION_SECONDS,
            )),
        }
    }

    /// Prompts fill at most this many tokens (seed 001: swap context at 80%).
    pub fn prompt_budget(&self) -> u32 {
        self.context_tokens / 5 * 4
    }
}

/// How a session starts.
pub struct SessionSetup {
    pub campaign: Campaign,
    pub session_number: u32,
    pub seed: u64,
    /// The in-game day the session begins on: where the campaign's last session left it.
    pub day: u32,
}

pub struct Driver<'a> {
    session: Session,
    /// Where the session's events go: the campaign's store, which mirrors them into the
    /// session's JSONL log.
    store: Store,
    /// Events of the current step, applied but not yet committed.
    pending: Vec<Envelope>,
    next_seq: u64,
    pause: crate::pause::CrashPause,
    gm: &'a mut dyn GmSeat,
    /// The seat of every character a person plays (hot seat: one terminal for all of them).
    people: Option<&'a mut dyn PlayerSeat>,
    /// The session ends once this turn is done.
    last_turn: Option<u32>,
    table: &'a Table,
    observer: &'a mut Observer,
    clock: &'a dyn Clock,
    /// The spend limit, when there is one, and what the session has spent.
    spend: Option<crate::SpendMeter>,
    /// Set when the spend limit stopped the session (saved, not ended: resumable).
    spend_stop: Option<crate::SpendStop>,
}

impl<'a> Driver<'a> {
    /// Start a new session: record the campaign, seed and model as its first event.
    pub fn start(
        setup: SessionSetup,
        store: Store,
        gm: &'a mut dyn GmSeat,
        table: &'a Table,
        observer: &'a mut Observer,
        clock: &'a dyn Clock,
    ) -> Result<Self, Error> {
        let now = clock.now();
        let id = format!(
            "{}-s{}-{}",
            slug(&setup.campaign.name),
            setup.session_number,
            now.format("%Y%m%dT%H%M%S")
        );
        let mut driver = Driver {
            session: Session::new(id, setup.session_number),
            store,
            pending: Vec::new(),
            next_seq: 0,
            pause: crate::pause::CrashPause::default(),
            gm,
            people: None,
            last_turn: None,
            table,
            observer,
            clock,
            spend: None,
            spend_stop: None,
        };
        driver.append(Event::SessionStarted {
            campaign: Box::new(setup.campaign),
            seed: setup.seed,
            model: table.gateway.model_name(),
            troupe_version: env!("CARGO_PKG_VERSION").to_string(),
            day: setup.day.max(crate::events::FIRST_DAY),
        })?;
        // The session's row and its first event are one commit: a kill never leaves a session
        // that cannot be resumed for want of its `session_started`.
        let first = std::mem::take(&mut driver.pending);
        driver.store.begin_session(
            setup.session_number,
            &driver.session.id,
            &now.to_rfc3339(),
            &first,
        )?;
        for env in &first {
            driver.observer.on_event(&driver.session, env);
        }
        Ok(driver)
    }

    /// Pick a stored session up where its log stops: fold every event that still stands and
    /// go on from there. Whatever was in flight when it stopped is asked for again; nothing
    /// recorded is.
    pub fn resume(
        number: u32,
        store: Store,
        gm: &'a mut dyn GmSeat,
        table: &'a Table,
        observer: &'a mut Observer,
        clock: &'a dyn Clock,
    ) -> Result<Self, Error> {
        let session = crate::snapshot::fold_stored(&store, number)?;
        if session.id.is_empty() {
            return Err(SessionError::NoSuchSession(number).into());
        }
        let next_seq = store.next_seq(number)?;
        let at = match (session.in_turn, session.phase) {
            (true, Some(p)) => format!("turn {}, {}", session.turn_number, p.as_str()),
            _ => format!("after turn {}", session.turn_number),
        };
        let mut driver = Driver {
            session,
            store,
            pending: Vec::new(),
            next_seq,
            pause: crate::pause::CrashPause::default(),
            gm,
            people: None,
            last_turn: None,
            table,
            observer,
            clock,
            spend: None,
            spend_stop: None,
        };
        driver.append(Event::SessionResumed {
            troupe_version: env!("CARGO_PKG_VERSION").to_string(),
            at,
        })?;
        driver.flush()?;
        Ok(driver)
    }

    /// Where to stop and wait until the process is killed (the crash tests).
    pub fn pause_at(&mut self, pause: crate::pause::CrashPause) {
        self.pause = pause;
    }

    /// The seat that decides for the characters people play (see `Seat::taken_by`).
    pub fn seat_people(&mut self, seat: &'a mut dyn PlayerSeat) {
        self.people = Some(seat);
    }

    /// Stop the session, saved, once its model calls have spent `limit` (counting every call
    /// its log already holds, so a resumed session counts what it spent before).
    pub fn spend_limit(
        &mut self,
        limit: troupe_campaign::Limit,
        prices: troupe_campaign::PriceTable,
    ) -> Result<(), Error> {
        let mut meter = crate::SpendMeter::new(limit, prices);
        let past = self
            .store
            .live_events_of_types(self.session.number, &["model_call"])?;
        meter.count(&past);
        self.spend = Some(meter);
        Ok(())
    }

    /// Why the spend limit stopped the session, when it did.
    pub fn spend_stopped(&self) -> Option<&crate::SpendStop> {
        self.spend_stop.as_ref()
    }

    /// End the session once turn `turns` is done.
    pub fn stop_after(&mut self, turns: u32) {
        self.last_turn = Some(turns);
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Where the session's JSONL mirror is written, if anywhere.
    pub fn mirror_path(&self) -> Option<std::path::PathBuf> {
        self.store.mirror_file(self.session.number)
    }

    /// Play until the GM quits or the script runs out. Returns why the session ended.
    pub async fn run(&mut self) -> Result<String, Error> {
        loop {
            // Checked before every step: the session stops saved, as after a crash, and
            // resumes where it stopped. Not ended, so no end-of-session memory write spends more.
            if let Some(stop) = self.spend.as_ref().and_then(crate::SpendMeter::reached) {
                let why = stop.describe();
                self.spend_stop = Some(stop);
                return Ok(why);
            }
            self.record_hand_overs()?;
            let step = crate::guard::guard(|| next(&self.session)).map_err(|message| {
                SessionError::Poisoned {
                    session: self.session.number,
                    what: format!("the turn after event {}", self.next_seq.saturating_sub(1)),
                    message,
                    saved: "Every event is saved.",
                }
            })?;
            match step {
                Step::Done => break,
                Step::Begin => {
                    if let Some(last) = self.last_turn.filter(|&n| self.session.turn_number >= n) {
                        let turns = if last == 1 { "turn" } else { "turns" };
                        self.end(&format!("played the {last} {turns} asked for"))
                            .await?;
                        continue;
                    }
                    let turn = self.session.turn_number + 1;
                    self.append_at(Event::TurnStarted, turn, None)?;
                    self.append_at(Event::PhaseStarted, turn, Some(Phase::GmNarration))?;
                }
                Step::Advance(phase) => {
                    self.append(Event::PhaseCompleted)?;
                    let turn = self.session.turn_number;
                    self.append_at(Event::PhaseStarted, turn, Some(phase))?;
                }
                Step::FinishTurn => {
                    self.append(Event::PhaseCompleted)?;
                    self.append(Event::TurnCompleted)?;
                }
                Step::Emit(event) => self.append(event)?,
                Step::Recall { agent, query } => self.recall(agent, query)?,
                Step::Remember { trigger } => self.remember(trigger).await?,
                Step::Ask(ask) => {
                    if let Some(why) = self.ask_gm(ask).await? {
                        self.end(&why).await?;
                    }
                }
                Step::Call(spec) => self.calls(vec![spec]).await?,
                Step::Calls(specs) => self.calls(specs).await?,
            }
            // One step, one commit: a crash keeps whole steps or nothing.
            self.flush()?;
            self.maybe_pause().await;
        }
        Ok(self.session.ended.clone().unwrap_or_default())
    }

    /// End the session (once), recording why.
    pub async fn end(&mut self, reason: &str) -> Result<(), Error> {
        // A step cut short (Ctrl-C mid-call) is dropped: its events were never committed.
        self.pending.clear();
        if self.session.ended.is_none() {
            // Session end is a storage trigger: what was played goes into memory first.
            let unstored = !unstored_turns(&self.session).is_empty();
            let in_flight = self.session.in_turn && self.session.turn.narration.is_some();
            if unstored || in_flight {
                self.remember(Some("session end".into())).await?;
                self.flush()?;
            }
            self.append(Event::SessionEnded {
                reason: reason.to_string(),
            })?;
            self.flush()?;
        }
        Ok(())
    }

    /// Recall for one agent; a memory that fails is said loudly and the turn goes on without.
    fn recall(&mut self, agent: String, query: String) -> Result<(), Error> {
        let got = match self.table.memory.lock() {
            Ok(mut m) => m.recall(&self.session, &agent, &query),
            Err(_) => Err("the memory lock was poisoned by an earlier crash".into()),
        };
        let (recalled, status) = match got {
            Ok(r) => {
                let n = r.len();
                let status = if n == 0 {
                    "nothing known".to_string()
                } else {
                    format!("recalled {n}")
                };
                (r, status)
            }
            Err(e) => (
                Vec::new(),
                format!("memory unavailable, nothing recalled: {e}"),
            ),
        };
        let results = recalled
            .iter()
            .filter(|r| r.layer == RecallLayer::Player)
            .map(|r| r.line())
            .collect();
        self.append(Event::MemoryRetrieved {
            agent,
            query,
            results,
            recalled,
            status,
        })
    }

    /// Store the turns not yet in memory when a trigger fires; otherwise record that they wait.
    async fn remember(&mut self, trigger: Option<String>) -> Result<(), Error> {
        let Some(trigger) = trigger else {
            return self.append(Event::MemoryStorage {
                status: "held for the next trigger (every 10 turns, a critical event, session end)"
                    .into(),
                trigger: None,
                turns: Vec::new(),
                stored: None,
                extraction: None,
                known_names: None,
            });
        };
        let mut turns = unstored_turns(&self.session);
        // The turn in flight is stored whole at its own storage step, even if a session end
        // stored part of it before a resume: ids are stable, so nothing doubles.
        if self.session.in_turn && !turns.contains(&self.session.turn_number) {
            turns.push(self.session.turn_number);
        }
        // Only the turns being stored are read back, not the whole session: a storage step
        // costs the same at turn 1,000 as at turn 10.
        let from = turns
            .iter()
            .min()
            .copied()
            .unwrap_or(self.session.turn_number);
        let mut events = self
            .store
            .state_events_from_turn(self.session.number, from)?;
        events.extend(self.pending.iter().cloned());
        let items = episodes_of(&self.session, &events, &turns);
        // Facts from free text, by the model, logged like every call (replay serves them).
        let drawn = extract(
            &self.table.gateway,
            &self.table.prompts,
            &self.table.memory,
            &self.session,
            &items,
        )
        .await;
        for record in drawn.calls {
            self.append(extraction_call(record))?;
        }
        let got = match self.table.memory.lock() {
            Ok(mut m) => m.remember(&self.session, &items, &drawn.extraction),
            Err(_) => Err("the memory lock was poisoned by an earlier crash".into()),
        };
        let (status, mut stored, turns) = match got {
            Ok(r) => (
                format!(
                    "stored {} new facts from turn{} {} ({trigger}){}",
                    r.facts,
                    if turns.len() == 1 { "" } else { "s" },
                    turns
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    if r.conflicts.is_empty() {
                        String::new()
                    } else {
                        format!("; {} conflicts settled", r.conflicts.len())
                    }
                ),
                Some(r),
                turns,
            ),
            // Not stored: the turns stay pending and go in at the next trigger.
            Err(e) => (
                format!("memory unavailable, nothing stored: {e}"),
                None,
                Vec::new(),
            ),
        };
        let extraction = stored.as_mut().and_then(|r| r.extraction.take());
        self.append(Event::MemoryStorage {
            status,
            trigger: Some(trigger),
            turns,
            stored,
            extraction,
            known_names: drawn.known,
        })
    }

    fn append(&mut self, event: Event) -> Result<(), Error> {
        let (turn, phase) = (self.session.turn_number, self.session.phase);
        self.append_at(event, turn, phase)
    }

    fn append_at(&mut self, event: Event, turn: u32, phase: Option<Phase>) -> Result<(), Error> {
        let env = Envelope {
            seq: self.next_seq,
            timestamp: self.clock.now(),
            session_id: self.session.id.clone(),
            session_number: self.session.number,
            turn_number: turn,
            phase,
            event,
        };
        self.next_seq += 1;
        let number = self.session.number;
        crate::guard::guard(|| self.session.apply(&env)).map_err(|message| {
            SessionError::Poisoned {
                session: number,
                what: crate::snapshot::describe(&env),
                message,
                saved: "It was not saved, and nothing before it was lost.",
            }
        })?;
        self.pending.push(env);
        Ok(())
    }

    /// Commit the pending events, the database first (the record), then the mirror (the store
    /// writes both); then tell the observer: what the GM sees printed is already saved.
    fn flush(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.pause.before(self.pending.iter().map(|e| e.seq)) {
            self.observer
                .paused(self.pending.first().map_or(0, |e| e.seq));
            crate::pause::hold();
        }
        let events = std::mem::take(&mut self.pending);
        if let Some(meter) = &mut self.spend {
            meter.count(&events);
        }
        // A step that ends a turn also caches the fold, so a resume reads one turn, not all.
        let snapshot = if events
            .iter()
            .any(|e| matches!(e.event, Event::TurnCompleted))
        {
            Some(crate::snapshot::encode(&self.session)?)
        } else {
            None
        };
        let snapshot = snapshot
            .as_deref()
            .map(|body| (crate::snapshot::SNAPSHOT_FORMAT, body));
        self.store
            .append_step(self.session.number, &events, snapshot)?;
        for env in &events {
            self.observer.on_event(&self.session, env);
        }
        Ok(())
    }

    async fn maybe_pause(&mut self) {
        if self.pause.after(self.next_seq) {
            self.observer.paused(self.next_seq);
            crate::pause::hold_async().await;
        }
    }

    /// Ask the GM; perform table commands (/roll, /success, /fail) and ask again. Returns why
    /// the session ends when the GM ends it.
    async fn ask_gm(&mut self, ask: GmAsk) -> Result<Option<String>, Error> {
        loop {
            let mut view =
                gm_view(&self.session).ok_or(SessionError::NoSuchSession(self.session.number))?;
            view.last_turn = self.last_turn;
            let reply = self.gm_decision(&ask, &view).await;
            // What the seat did to decide (an AI's calls, its checks) comes before the decision,
            // what it marked in the story with the decision (a scene's end) after it.
            let (marks, notes): (Vec<_>, Vec<_>) = self
                .gm
                .take_notes()
                .into_iter()
                .partition(|n| matches!(n, SeatNote::Mark(_)));
            for note in notes {
                self.append(seat_note_event(note))?;
            }
            let mut after: Vec<Event> = marks.into_iter().map(seat_note_event).collect();
            if !matches!(reply, GmReply::Answer(_)) {
                for e in std::mem::take(&mut after) {
                    self.append(e)?;
                }
            }
            match reply {
                GmReply::Answer(events) => {
                    for e in events.into_iter().chain(after) {
                        self.append(e)?;
                    }
                    return Ok(None);
                }
                GmReply::Mark(mark) => {
                    self.append(mark.event())?;
                    self.flush()?;
                }
                GmReply::Roll(expr) => {
                    self.gm_roll(&expr)?;
                    self.flush()?;
                }
                GmReply::Force(success) => {
                    self.append(Event::GmForcedResult { success })?;
                    self.flush()?;
                }
                GmReply::Whisper { to, scope, text } => {
                    // Seats check the name; one that slipped through is not recorded.
                    if to.as_deref().is_none_or(|a| self.session.seat(a).is_some()) {
                        self.append(Event::Whisper { to, scope, text })?;
                        self.flush()?;
                    }
                }
                // The GM's chair does not change hands mid-session; a hand-over of a player's
                // seat is recorded before the GM is asked again.
                GmReply::Handed => self.record_hand_overs()?,
                GmReply::Quit => return Ok(Some("the GM ended the session".into())),
                GmReply::End(why) => return Ok(Some(why)),
                GmReply::Fail(message) => {
                    self.flush()?;
                    return Err(SessionError::SeatFailed {
                        session: self.session.number,
                        message,
                    }
                    .into());
                }
            }
        }
    }

    /// One GM decision, as the events that record it. The seat is asked through the seat
    /// protocol; an answer that does not fit is sent back, with why, a few times.
    async fn gm_decision(&mut self, ask: &GmAsk, v: &GmView) -> GmReply<Vec<Event>> {
        let mut error: Option<String> = None;
        for _ in 0..MAX_BAD_ANSWERS {
            let question = GmQuestion {
                decision: ask,
                view: v,
                error: error.as_deref(),
                seeds: self.session.call_seeds(troupe_agents::GM_AGENT),
            };
            let answer = self.gm.decide(&question, &mut *self.observer).await;
            match question.read(answer) {
                Ok(reply) => return reply.map(|d| decision_events(&self.session, ask, d)),
                Err(why) => error = Some(why),
            }
        }
        GmReply::Fail(format!(
            "the GM's seat answered {MAX_BAD_ANSWERS} times with answers that do not fit: {}",
            error.unwrap_or_default()
        ))
    }

    fn gm_roll(&mut self, expr: &DiceExpr) -> Result<(), Error> {
        let roll_index = self.session.rolls_made;
        let seed = roll_seed(self.session.seed, roll_index);
        let roll = roll_expr(expr, seed);
        self.append(Event::GmRoll {
            expression: expr.to_string(),
            roll_index,
            seed,
            faces: roll.faces.clone(),
            total: roll.total,
        })
    }

    /// Build each agent's call from its view, run them through the gateway at once, and record,
    /// in the order asked, every attempt and then the decision, or the failure (the phase's
    /// state is untouched: rolled back). People's seats are asked first.
    async fn calls(&mut self, specs: Vec<CallSpec>) -> Result<(), Error> {
        if let Some(CallSpec::Discussion { round, .. }) = specs.first()
            && let Some(elapsed_ms) = self.discussion_overtime(*round)
        {
            return self.append(Event::DiscussionTimedOut {
                round: *round,
                elapsed_ms,
            });
        }
        if let Some(CallSpec::Discussion { round, .. }) = specs.first()
            && self.discussion_stalled(*round)
        {
            return self.append(Event::DiscussionStalled { round: *round });
        }
        let (people, ais): (Vec<CallSpec>, Vec<CallSpec>) = specs
            .into_iter()
            .partition(|c| self.played_by_person(c.agent()));
        if self.ask_seats(&people, true).await? {
            self.ask_seats(&ais, false).await?;
        }
        Ok(())
    }

    /// A step's decisions asked of whoever holds the seats, the people's (`person`) or the AI
    /// players', all at once, each seat shown its view ([`PlayerSeats`]); then recorded by one
    /// rule: the events the seats' work left (an AI's trimmed prompts, then each of its calls'
    /// attempts before its decision), and each decision with the game's rules applied once for
    /// either ([`decide`]). False when the step stops here: someone left (the session has
    /// ended) or a seat changed hands while asked (the rest of the step is asked again, and
    /// `next` routes it to the new holder).
    async fn ask_seats(&mut self, specs: &[CallSpec], person: bool) -> Result<bool, Error> {
        if specs.is_empty() {
            return Ok(true);
        }
        let views = specs
            .iter()
            .map(|spec| self.seat_view(spec))
            .collect::<Result<Vec<_>, _>>()?;
        let questions: Vec<PlayerQuestion> = specs
            .iter()
            .zip(&views)
            .map(|(call, view)| PlayerQuestion {
                call,
                view,
                error: None,
                again: asked_again(&self.session, call),
            })
            .collect();
        let session = &self.session;
        let step = match (person, self.people.as_deref_mut()) {
            (true, Some(seat)) => People { seat, session }.decide_step(&questions).await,
            (true, None) => return Ok(true),
            (false, _) => {
                let observer = &mut *self.observer;
                let table = self.table;
                let mut ais = AiPlayers {
                    table,
                    session,
                    observer,
                };
                ais.decide_step(&questions).await
            }
        };
        for event in step.before {
            self.append(event)?;
        }
        for (spec, (events, reply)) in specs.iter().zip(step.replies) {
            for event in events {
                self.append(event)?;
            }
            if !self.take_reply(spec, reply, person).await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Record a seat's reply: its decision's events, or the phase's failure for an AI that could
    /// not decide. False when the step stops here. A person's decision that breaks the game's
    /// rules, or a person's seat that failed, stops the session (saved) with why.
    async fn take_reply(
        &mut self,
        spec: &CallSpec,
        reply: PlayerReply,
        person: bool,
    ) -> Result<bool, Error> {
        let seat_failed = |session: u32, message: String| -> Error {
            SessionError::SeatFailed { session, message }.into()
        };
        let failure = match reply {
            PlayerReply::Decided(decision) => match decide(&self.session, spec, decision) {
                Ok(events) => {
                    for e in events {
                        self.append(e)?;
                    }
                    return Ok(true);
                }
                Err(message) if person => return Err(seat_failed(self.session.number, message)),
                Err(message) => message,
            },
            PlayerReply::Failed(message) => message,
            PlayerReply::SeatFailed(message) => {
                return Err(seat_failed(self.session.number, message));
            }
            PlayerReply::Handed => {
                self.record_hand_overs()?;
                return Ok(false);
            }
            PlayerReply::Left(why) => {
                self.end(&why).await?;
                return Ok(false);
            }
        };
        let agent = spec.agent().to_string();
        let failures = self
            .session
            .failures(self.session.phase.unwrap_or(Phase::GmNarration), &agent)
            .0
            + 1;
        self.append(Event::PhaseFailed {
            agent,
            error: failure,
            failures,
        })?;
        Ok(true)
    }

    /// A person plays this agent's character, and there is a seat to ask them.
    fn played_by_person(&self, agent: &str) -> bool {
        self.people.is_some()
            && self
                .session
                .seat(agent)
                .is_some_and(|x| x.taken_by == troupe_campaign::SeatTaker::Human)
    }

    /// Record the seats that changed hands since the last step (see
    /// [`PlayerSeat::take_hand_overs`]); a hand-over to whoever holds the seat already is
    /// not recorded.
    fn record_hand_overs(&mut self) -> Result<(), Error> {
        let Some(people) = self.people.as_deref_mut() else {
            return Ok(());
        };
        for (agent, person) in people.take_hand_overs() {
            let held_by_person = match self.session.seat(&agent) {
                Some(x) => x.taken_by == troupe_campaign::SeatTaker::Human,
                None => continue,
            };
            if held_by_person != person {
                self.append(Event::SeatHanded { agent, person })?;
                self.flush()?;
            }
        }
        Ok(())
    }

    /// What a person sees when asked for this decision: their player's view, or their
    /// character's for what the character does.
    fn seat_view(&self, spec: &CallSpec) -> Result<SeatView, Error> {
        let agent = spec.agent();
        let missing = || SessionError::UnknownAgent(agent.to_string());
        let layer = match spec {
            CallSpec::Action { .. }
            | CallSpec::InsightQuestion { .. }
            | CallSpec::Reaction { .. } => {
                LayerView::Character(character_view(&self.session, agent).ok_or_else(missing)?)
            }
            _ => LayerView::Player(player_view(&self.session, agent).ok_or_else(missing)?),
        };
        Ok(SeatView {
            turn: self.session.turn_number,
            layer,
        })
    }

    /// Before a later discussion round: how long the discussion has run, when that is past
    /// its limit.
    fn discussion_overtime(&self, round: u32) -> Option<u64> {
        if round < 2 {
            return None;
        }
        let t = &self.session.turn;
        match &self.table.discussion_limit {
            DiscussionLimit::Clock(limit) => {
                let started = t.discussion_started?;
                let elapsed = (self.clock.now() - started).to_std().ok()?;
                (elapsed >= *limit).then_some(elapsed.as_millis() as u64)
            }
            DiscussionLimit::Recorded { timed_out, .. } => timed_out
                .contains(&(self.session.turn_number, round))
                .then_some(0),
        }
    }

    /// Before a round from the third on: whether the round before changed nothing (the same
    /// leading plan, every stance as it was, and the GM said nothing in between), so that
    /// more rounds would only repeat themselves.
    fn discussion_stalled(&self, round: u32) -> bool {
        match &self.table.discussion_limit {
            DiscussionLimit::Clock(_) => round >= 3 && round_changed_nothing(&self.session.turn),
            DiscussionLimit::Recorded { stalled, .. } => {
                stalled.contains(&(self.session.turn_number, round))
            }
        }
    }
}

/// The events a player's decision records, whoever made it (an AI or a person: one type,
/// [`PlayerDecision`]), with the game's rules for it applied here, once for both.
fn decide(s: &Session, spec: &CallSpec, decision: PlayerDecision) -> Result<Vec<Event>, String> {
    let agent = spec.agent().to_string();
    Ok(match (spec, decision) {
        (CallSpec::Questions { round, .. }, PlayerDecision::Questions(mut questions)) => {
            questions.truncate(crate::machine::MAX_QUESTIONS as usize);
            vec![Event::ClarifyingQuestions {
                agent,
                round: *round,
                questions,
            }]
        }
        (CallSpec::Intent { .. }, PlayerDecision::Intent(intent)) => {
            vec![Event::StrategicIntent { agent, intent }]
        }
        (CallSpec::Action { attempt, .. }, PlayerDecision::Action(action)) => {
            vec![Event::CharacterAction {
                action: no_stranger_helped(s, &agent, action),
                agent,
                attempt: *attempt,
            }]
        }
        (CallSpec::InsightQuestion { .. }, PlayerDecision::InsightQuestion(question)) => {
            vec![Event::LaserFeelingsQuestion { agent, question }]
        }
        (CallSpec::InsightDecision { .. }, PlayerDecision::InsightDecision(decision)) => {
            vec![Event::InsightDecision { agent, decision }]
        }
        (CallSpec::Reaction { .. }, PlayerDecision::Reaction(text)) => {
            vec![Event::CharacterReaction { agent, text }]
        }
        (CallSpec::Discussion { round, .. }, PlayerDecision::Discussion(r)) => {
            vec![discussed(s, agent, *round, r)]
        }
        (CallSpec::Vote { .. }, PlayerDecision::Vote(r)) => vec![Event::VoteCast {
            agent,
            vote: r.vote,
            remark: r.remark,
        }],
        (CallSpec::PartyDirective { .. }, PlayerDecision::PartyDirective(text)) => {
            vec![Event::Directive {
                character: s
                    .seat(&agent)
                    .map(|x| x.character.character_id.clone())
                    .unwrap_or_default(),
                agent,
                text,
            }]
        }
        (_, other) => {
            return Err(format!(
                "{agent}'s seat answered with a {} decision where another was asked",
                other.kind()
            ));
        }
    })
}

/// Helping yourself or a stranger is no help: the help is dropped rather than the phase failed.
fn no_stranger_helped(s: &Session, agent: &str, mut action: ActionDecl) -> ActionDecl {
    if let Some(target) = &action.helping {
        let own = s.seat(agent).map(|x| &x.character.character_id);
        if s.agent_of_character(target).is_none() || own == Some(target) {
            action.helping = None;
        }
    }
    action
}

/// A message to the party's talk: `on` must name a plan on the table; a plan of one's own
/// restated is no new plan.
fn discussed(s: &Session, agent: String, round: u32, r: troupe_agents::OocReply) -> Event {
    let on =
        r.on.filter(|p| s.proposals().iter().any(|x| &x.proposer == p));
    let own = s
        .proposals()
        .into_iter()
        .find(|p| p.proposer == agent)
        .map(|p| p.plan);
    let proposal = r.proposal.filter(|p| Some(p) != own.as_ref());
    Event::OocMessage {
        agent,
        round,
        message: r.message,
        stance: r.stance,
        on,
        proposal,
        directive: r.directive,
    }
}

/// The attempt an action call asks again: the character's last one this turn, which the
/// overreach check sent back (a first attempt asks nothing again).
pub(crate) fn asked_again<'a>(
    s: &'a Session,
    call: &CallSpec,
) -> Option<&'a troupe_agents::ActionDecl> {
    let CallSpec::Action { agent, attempt, .. } = call else {
        return None;
    };
    if *attempt < 2 {
        return None;
    }
    s.turn.actions.get(agent)?.attempts.last()
}

/// The events that record a GM decision. The answer was read as the decision asked
/// ([`GmQuestion::read`]), so each decision comes with its own kind.
fn decision_events(s: &Session, ask: &GmAsk, decision: GmDecision) -> Vec<Event> {
    match (ask, decision) {
        (GmAsk::Narration, GmDecision::Text(text)) => vec![Event::GmNarration { text }],
        (GmAsk::Answers { round, questions }, GmDecision::Answers(a)) => {
            let (answers, finished) = a.resized(questions.len(), "").into_parts();
            vec![Event::GmAnswers {
                round: *round,
                answers,
                finished,
            }]
        }
        (GmAsk::Review { agent, .. }, GmDecision::Text(action)) => vec![Event::GmReviewedAction {
            agent: agent.clone(),
            action,
        }],
        (GmAsk::Adjudicate { agent, .. }, GmDecision::Ruling(ruling)) => {
            vec![Event::GmAdjudication {
                agent: agent.clone(),
                ruling,
            }]
        }
        (GmAsk::Override { agent, roll }, GmDecision::Override(change)) => {
            vec![Event::GmRollOverride {
                agent: agent.clone(),
                result: apply_override(roll, &change),
                change,
            }]
        }
        (GmAsk::Insight { agent, .. }, GmDecision::Text(answer)) => {
            vec![Event::LaserFeelingsAnswer {
                agent: agent.clone(),
                answer,
            }]
        }
        (GmAsk::Outcome, GmDecision::Text(text)) => vec![Event::GmOutcome { text }],
        (GmAsk::Interject { round }, GmDecision::Interjection(text)) => vec![Event::GmOoc {
            round: *round,
            text: text.unwrap_or_default(),
        }],
        (GmAsk::Failure { phase, agent, .. }, GmDecision::Failure(choice)) => {
            take_over(s, *phase, agent, choice)
        }
        (ask, decision) => {
            unreachable!("{decision:?} read as the answer to {ask:?}: each is read as its own kind")
        }
    }
}

/// The GM's decision after an AI failed a phase, and, when the GM typed the AI's part, that
/// part as the events the AI's own answer would have made in this phase.
fn take_over(s: &Session, phase: Phase, agent: &str, choice: FailureChoice) -> Vec<Event> {
    let mut events = vec![Event::GmFailureDecision {
        agent: agent.to_string(),
        choice: choice.clone(),
    }];
    let FailureChoice::TakeOver { text } = choice else {
        return events;
    };
    let agent = agent.to_string();
    match phase {
        Phase::Clarification => events.push(Event::ClarifyingQuestions {
            agent,
            round: s.turn.clarification_round.max(1),
            questions: vec![text],
        }),
        Phase::StrategicIntent => events.push(Event::StrategicIntent {
            agent,
            intent: Intent {
                strategy: "(typed by the GM)".into(),
                directive: text,
                proposal: None,
            },
        }),
        Phase::Discussion => events.push(typed_discussion(s, agent, text)),
        Phase::Directive => events.push(Event::Directive {
            character: s
                .seat(&agent)
                .map(|x| x.character.character_id.clone())
                .unwrap_or_default(),
            agent,
            text,
        }),
        Phase::CharacterAction | Phase::Validation => events.extend(typed_action(s, agent, text)),
        Phase::LaserFeelings => events.push(typed_insight(s, agent, text)),
        Phase::CharacterReaction => events.push(Event::CharacterReaction { agent, text }),
        _ => {}
    }
    events
}

/// The GM's words in the party's discussion: a message, or, once talk is over, a vote.
fn typed_discussion(s: &Session, agent: String, text: String) -> Event {
    let t = &s.turn;
    if t.timed_out.is_some()
        || t.stalled.is_some()
        || t.consensus.len() as u32 >= troupe_agents::consensus::MAX_DISCUSSION_ROUNDS
    {
        // The GM casts the vote: for the plan named, else the one leading.
        let vote = s
            .proposals()
            .into_iter()
            .map(|p| p.proposer)
            .find(|p| text.contains(p.as_str()))
            .or_else(|| t.consensus.last().and_then(|c| c.proposer.clone()))
            .unwrap_or_default();
        return Event::VoteCast {
            agent,
            vote,
            remark: None,
        };
    }
    Event::OocMessage {
        agent,
        round: t.consensus.len() as u32 + 1,
        message: text,
        stance: troupe_agents::Stance::Neutral,
        on: None,
        proposal: None,
        directive: None,
    }
}

/// The GM's words as the character's next attempt, already reviewed: the GM's own words need
/// no overreach check.
fn typed_action(s: &Session, agent: String, text: String) -> [Event; 2] {
    let attempt = s.turn.actions.get(&agent).map_or(0, |t| t.attempts.len()) as u32 + 1;
    [
        Event::CharacterAction {
            agent: agent.clone(),
            attempt,
            action: troupe_agents::ActionDecl {
                action: text.clone(),
                dialogue: String::new(),
                task_type: TaskType::Lasers,
                prepared: false,
                expert: false,
                helping: None,
                justification: "typed by the GM".into(),
            },
        },
        Event::GmReviewedAction {
            agent,
            action: text,
        },
    ]
}

/// The GM's words in a LASER FEELINGS moment: the question, or, once asked, the decision
/// (keeping the action, for this reason).
fn typed_insight(s: &Session, agent: String, text: String) -> Event {
    let asked = s
        .turn
        .insights
        .get(&agent)
        .is_some_and(|i| i.question.is_some());
    if asked {
        Event::InsightDecision {
            agent,
            decision: InsightDecision {
                change_action: false,
                reason: text,
            },
        }
    } else {
        Event::LaserFeelingsQuestion {
            agent,
            question: text,
        }
    }
}

fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let s = s
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if s.is_empty() { "campaign".into() } else { s }
}

/// The model calls of a log that got a reply, in order: what a resumed replay provider skips.
pub fn served_calls(events: &[Envelope]) -> Vec<troupe_llm::CallTag> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ModelCall {
                agent,
                purpose,
                record,
                ..
            } if record.reply.is_some() => Some(troupe_llm::CallTag::new(agent, purpose)),
            _ => None,
        })
        .collect()
}

/// The event that records what a seat did on the way to a decision.
fn seat_note_event(note: SeatNote) -> Event {
    match note {
        SeatNote::Call { purpose, record } => Event::ModelCall {
            agent: troupe_agents::GM_AGENT.to_string(),
            layer: troupe_agents::Layer::Gm,
            purpose,
            record,
        },
        SeatNote::Flag {
            check,
            detail,
            text,
            sent_back,
            kept,
        } => Event::GmFlagged {
            check,
            detail,
            text,
            sent_back,
            kept,
        },
        SeatNote::Mark(mark) => mark.event(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use troupe_agents::{Outcome, Stance};

    use super::round_changed_nothing;
    use crate::session::{ConsensusRecord, OocEntry, Turn};

    fn round(n: u32, proposer: &str, stances: &[(&str, Stance)]) -> ConsensusRecord {
        let positions: BTreeMap<String, Stance> =
            stances.iter().map(|(a, s)| (a.to_string(), *s)).collect();
        ConsensusRecord {
            round: n,
            outcome: Outcome::Conflicted,
            plan: Some(format!("{proposer}'s plan")),
            proposer: Some(proposer.into()),
            positions,
            dissent: Vec::new(),
        }
    }

    #[test]
    fn a_round_that_changes_no_stance_stalls_the_discussion() {
        use Stance::{Agree, Disagree, Neutral};
        let split = [("alex", Agree), ("sam", Disagree)];
        let mut t = Turn::default();
        t.consensus.push(round(1, "alex", &split));
        assert!(
            !round_changed_nothing(&t),
            "one round has nothing to compare"
        );
        t.consensus.push(round(2, "alex", &split));
        assert!(round_changed_nothing(&t));
        // The GM spoke after round 2: the party hears it out.
        t.ooc.push(OocEntry {
            round: 2,
            agent: None,
            message: "Air is running out".into(),
            stance: None,
            on: None,
            proposal: None,
            directive: None,
        });
        assert!(!round_changed_nothing(&t));
        t.ooc.clear();
        // A stance moved, or the leading plan changed hands: the talk goes on.
        t.consensus
            .push(round(3, "alex", &[("alex", Agree), ("sam", Neutral)]));
        assert!(!round_changed_nothing(&t));
        t.consensus
            .push(round(4, "sam", &[("alex", Agree), ("sam", Neutral)]));
        assert!(!round_changed_nothing(&t));
    }
}
