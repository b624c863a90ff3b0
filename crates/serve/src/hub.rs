//! A table's live state, shared by the game's thread and the web server: the lines of its
//! streams, the ask waiting on each seat, who is connected, who holds each seat. The game writes
//! it through the engine's [`Surface`], which the hub implements (a game's `online` module knows
//! the hub by nothing else); the server reads one seat's part of it at a time and hands answers
//! back.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::futures::Notified;
use tokio::sync::{Notify, oneshot};
use troupe_engine::store::inbox::{Inbox, Received};
use troupe_seat::{Answer, Ask, check};

use crate::feed::{GM, JOIN, Line, WATCH};
use crate::keys;
use crate::lobby::{Lobby, MAX_NAME_CHARS, held_ask, join_ask};
pub use troupe_engine::surface::{Draft, Update};
use troupe_engine::surface::{HandOvers, Joins, Surface};

/// A seat of the table as the server knows it.
#[derive(Clone, Debug)]
pub struct SeatSpec {
    /// "gm", "watch", or a player's agent id.
    pub seat: String,
    /// "Alex (Zara-7)", "GM", "Watching".
    pub label: String,
    pub key_hash: String,
}

/// The most text one field of an answer may hold.
pub const MAX_FIELD_CHARS: usize = 4000;
/// Answers (and table commands) a seat may send in [`RATE_WINDOW`].
pub const MAX_POSTS: usize = 60;
/// Stream requests a seat may make in [`RATE_WINDOW`].
pub const MAX_POLLS: usize = 600;
pub const RATE_WINDOW: Duration = Duration::from_secs(10);
/// Streaming replies wake the pages at most this often (a token every 30 ms would otherwise
/// make every page ask again 33 times a second).
const STREAM_EVERY: Duration = Duration::from_millis(100);
/// A seat seen this recently counts as connected.
const CONNECTED_FOR: Duration = Duration::from_secs(40);

/// One model call's reply as it streams in.
#[derive(Default)]
struct Streaming {
    attempt: u32,
    tokens: u32,
    /// The unchecked draft: shown on its own seat's page only, and only when the game said that
    /// seat's view holds every secret the model was given ([`Draft::Shown`]); otherwise never
    /// kept at all.
    draft: Option<String>,
}

struct Pending {
    id: u64,
    ask: Ask,
    since: Instant,
    reply: oneshot::Sender<Kept>,
}

/// An answer on its way to the game: the decision it answers and, at a table with an inbox,
/// its id there (it leaves the inbox with the commit that records it).
#[derive(Clone, Debug, PartialEq)]
struct Kept {
    answer: Answer,
    decision: String,
    id: Option<i64>,
}

#[derive(Default)]
struct SeatState {
    spec: Option<SeatSpec>,
    last_seen: Option<Instant>,
    posts: VecDeque<Instant>,
    polls: VecDeque<Instant>,
}

#[derive(Default)]
struct Inner {
    version: u64,
    next_ask: u64,
    title: String,
    lines: Vec<Line>,
    seats: BTreeMap<String, SeatState>,
    pending: BTreeMap<String, Pending>,
    /// Answers the game has not taken, oldest first: one that reached an ask the game had just
    /// stopped waiting for (another seat's answer came at the same moment), and after a restart
    /// those the inbox held. Each answers the seat's next ask of its decision, if it fits it.
    unclaimed: BTreeMap<String, VecDeque<Kept>>,
    /// Agent id → whether a person holds it.
    person_holds: BTreeMap<String, bool>,
    /// The seats a person has held at some point: only those have "its person" to give back to.
    had_person: BTreeSet<String>,
    /// Seats whose AI could not go on (its model failed): an idle person's seat is not handed
    /// to it again until someone hands it over on purpose.
    ai_failed: BTreeSet<String>,
    /// What each seat's page shows beside the story: its sheet, the ship, the GM's prep.
    sheets: BTreeMap<String, Value>,
    thinking: Option<String>,
    /// The model calls streaming now, by the seat they are for (an AI GM's: [`GM`]).
    streaming: BTreeMap<String, Streaming>,
    /// When a stream last woke the pages (streams wake them at most every [`STREAM_EVERY`]).
    streamed_at: Option<Instant>,
    ended: Option<String>,
    /// Why the table stopped, when it stopped on an error.
    stopped: Option<String>,
}

/// Why a request for a seat was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    NoSuchSeat,
    BadKey,
    TooMany,
    Stale,
    Invalid(String),
    NotHere(String),
    /// The answer could not be saved (the disk refused it): it was not taken, the page keeps it.
    Unsaved(String),
}

pub struct Hub {
    inner: Mutex<Inner>,
    changed: Notify,
    /// Seats changing hands, taken by the game before its next step.
    pub hand_overs: Arc<Mutex<Vec<(String, bool)>>>,
    /// Woken by each hand-over (a scene's AI that has said all it may waits on it).
    pub handed: Arc<Notify>,
    /// People joining from the invitation link.
    pub lobby: Lobby,
    /// The GM asked to take back their last decision (the table stops the game to do it).
    pub undo: Notify,
    /// Whether the table takes the GM's `undo` (a Lasers & Feelings session); a game that
    /// takes back its own steps (a scene) gets the command like any other.
    table_undo: std::sync::atomic::AtomicBool,
    /// Whether the game has rebuilt its streams (a reopened table's history): until then a
    /// page's request waits, so it never reads a story that is not all there yet.
    ready: std::sync::atomic::AtomicBool,
    became_ready: Notify,
    /// Where people's answers are kept, on disk, before the page is told they arrived.
    inbox: std::sync::OnceLock<Inbox>,
    /// The inbox ids of the answers the game has taken since its last commit: the game's store
    /// forgets them in that commit ([`troupe_engine::store::GameStore::consume_answers`]).
    pub received: Received,
}

impl Hub {
    pub fn new(title: &str, seats: Vec<SeatSpec>) -> Hub {
        // Ask ids and stream versions start where no earlier process of this table reached (the
        // clock's microseconds): a page that reconnects after a restart never takes a new ask
        // for the old form it shows, nor waits out a poll on a version the new process also had.
        let first = process_epoch();
        let mut inner = Inner {
            title: title.to_string(),
            version: first,
            next_ask: first,
            ..Default::default()
        };
        for spec in seats {
            inner.seats.insert(
                spec.seat.clone(),
                SeatState {
                    spec: Some(spec),
                    ..Default::default()
                },
            );
        }
        Hub {
            inner: Mutex::new(inner),
            changed: Notify::new(),
            hand_overs: Arc::default(),
            handed: Arc::default(),
            lobby: Lobby::default(),
            undo: Notify::new(),
            table_undo: std::sync::atomic::AtomicBool::new(false),
            ready: std::sync::atomic::AtomicBool::new(false),
            became_ready: Notify::new(),
            inbox: std::sync::OnceLock::new(),
            received: Received::default(),
        }
    }

    /// Keep people's answers in `inbox` from now on, and take up the answers it holds (those a
    /// game had not recorded when its server stopped): each answers its seat's next ask of its
    /// decision, so what a page was told arrived is applied, once.
    pub fn keep_answers_in(&self, inbox: Inbox) -> Result<(), troupe_engine::Error> {
        let held = inbox.held()?;
        let mut inner = self.lock();
        for h in held {
            inner.unclaimed.entry(h.seat).or_default().push_back(Kept {
                answer: h.answer,
                decision: h.decision,
                id: Some(h.id),
            });
        }
        drop(inner);
        let _ = self.inbox.set(inbox);
        Ok(())
    }

    /// The GM's `undo` goes to the table (which stops the game to take the step back), not to
    /// the game.
    pub fn undo_by_table(&self) {
        self.table_undo
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The game has published its history: pages may read the streams.
    pub fn mark_ready(&self) {
        self.ready.store(true, std::sync::atomic::Ordering::SeqCst);
        self.became_ready.notify_waiters();
    }

    /// Wait until the streams hold the table's history (or `timeout` passes).
    pub async fn until_ready(&self, timeout: Duration) {
        let ready = self.became_ready.notified();
        tokio::pin!(ready);
        ready.as_mut().enable();
        if self.ready.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let _ = tokio::time::timeout(timeout, ready).await;
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves plain data behind: keep serving it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self, inner: &mut Inner) {
        inner.version += 1;
        self.changed.notify_waiters();
    }

    /// Check a seat's key, count the request against the seat's rate, and mark it connected.
    pub fn admit(&self, seat: &str, key: &str, post: bool) -> Result<(), Refused> {
        let mut inner = self.lock();
        let state = inner.seats.get_mut(seat).ok_or(Refused::NoSuchSeat)?;
        let spec = state.spec.as_ref().ok_or(Refused::NoSuchSeat)?;
        if !keys::matches(key, &spec.key_hash) {
            return Err(Refused::BadKey);
        }
        let now = Instant::now();
        let (times, max) = if post {
            (&mut state.posts, MAX_POSTS)
        } else {
            (&mut state.polls, MAX_POLLS)
        };
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) > RATE_WINDOW)
        {
            times.pop_front();
        }
        if times.len() >= max {
            return Err(Refused::TooMany);
        }
        times.push_back(now);
        let was_connected = state
            .last_seen
            .is_some_and(|t| now.duration_since(t) < CONNECTED_FOR);
        state.last_seen = Some(now);
        if !was_connected {
            self.bump(&mut inner);
        }
        Ok(())
    }

    /// The game asks a seat and waits for its answer: None when the table closes. A game that
    /// stops waiting (it took another seat's answer first) withdraws the ask: an answer sent to
    /// it later is refused as stale (the page fetches the new ask), and one that arrived just as
    /// the game stopped waiting answers the seat's next ask instead of being lost.
    pub async fn ask_and_wait(&self, ask: Ask) -> Option<Answer> {
        let seat = ask.seat.clone();
        let (id, answer) = self.ask_numbered(ask);
        let mut waiting = Withdraw {
            hub: self,
            seat,
            id,
            answer,
            answered: false,
        };
        let kept = (&mut waiting.answer).await.ok();
        waiting.answered = true;
        let kept = kept?;
        if let Some(id) = kept.id {
            self.received
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(id);
        }
        Some(kept.answer)
    }

    /// Take back a seat's ask if it is still this one; an answer it got meanwhile is kept for
    /// the seat's next ask.
    fn withdraw(&self, seat: &str, id: u64, delivered: Option<Kept>) {
        let mut inner = self.lock();
        if inner.pending.get(seat).is_some_and(|p| p.id == id) {
            inner.pending.remove(seat);
            self.bump(&mut inner);
        }
        if let Some(kept) = delivered {
            inner
                .unclaimed
                .entry(seat.to_string())
                .or_default()
                .push_back(kept);
        }
    }

    /// An answer that will never be applied leaves the inbox (a failed delete leaves it for
    /// the next ask of its seat to drop).
    fn forget(&self, kept: &Kept) {
        if let (Some(id), Some(inbox)) = (kept.id, self.inbox.get()) {
            let _ = inbox.drop_answer(id);
        }
    }

    /// The seat's oldest answer the game has not taken that fits `ask`; older ones that do
    /// not fit it are dropped (the decision they answered has passed).
    fn claim(&self, inner: &mut Inner, ask: &Ask) -> Option<Kept> {
        let queue = inner.unclaimed.get_mut(&ask.seat)?;
        while let Some(kept) = queue.pop_front() {
            if kept.decision == ask.decision && check(ask, &kept.answer).is_ok() {
                return Some(kept);
            }
            self.forget(&kept);
        }
        None
    }

    /// Register the seat's ask (or answer it at once with an answer kept for it): its id, and
    /// the channel its answer comes through.
    fn ask_numbered(&self, ask: Ask) -> (u64, oneshot::Receiver<Kept>) {
        let (reply, answer) = oneshot::channel();
        let mut inner = self.lock();
        inner.next_ask += 1;
        let id = inner.next_ask;
        let seat = ask.seat.clone();
        if let Some(kept) = self.claim(&mut inner, &ask) {
            let _ = reply.send(kept);
            return (id, answer);
        }
        inner.pending.insert(
            seat,
            Pending {
                id,
                ask,
                since: Instant::now(),
                reply,
            },
        );
        self.bump(&mut inner);
        (id, answer)
    }

    /// A seat answers the ask it was shown (by its id): checked against the ask's form, then
    /// handed to the game.
    pub fn answer(&self, seat: &str, ask_id: u64, answer: Answer) -> Result<(), Refused> {
        let mut inner = self.lock();
        let pending = inner.pending.get(seat).ok_or(Refused::Stale)?;
        if pending.id != ask_id {
            return Err(Refused::Stale);
        }
        // A person does not end the table by leaving: their seat goes to an AI (the hand-over
        // endpoint), and the GM ends the session with its command.
        if matches!(answer, Answer::Handed | Answer::Leave | Answer::Fail { .. }) {
            return Err(Refused::Invalid(
                "answer with the form's values or a table command; to leave, hand your seat to an AI"
                    .into(),
            ));
        }
        // A command typed where the answer goes is a command (or refused as one), never text.
        let answer = troupe_seat::typed(&pending.ask, answer)
            .map_err(|e| Refused::Invalid(e.to_string()))?;
        check(&pending.ask, &answer).map_err(|e| Refused::Invalid(e.to_string()))?;
        // The GM's undo goes to the table, not the game: the game is stopped to take it back.
        if self.table_undo.load(std::sync::atomic::Ordering::SeqCst)
            && matches!(&answer, Answer::Command { name, .. } if name == "undo")
        {
            self.undo.notify_one();
            return Ok(());
        }
        if let Answer::Decide { values } | Answer::Command { values, .. } = &answer
            && values.values().any(too_long)
        {
            return Err(Refused::Invalid(format!(
                "a field holds more than {MAX_FIELD_CHARS} characters"
            )));
        }
        let answer = trimmed(answer);
        let decision = pending.ask.decision.clone();
        // On disk before the page hears it arrived: a kill from here on loses nothing.
        let id = match self.inbox.get() {
            Some(inbox) => Some(
                inbox
                    .keep(seat, &decision, &answer)
                    .map_err(|e| Refused::Unsaved(troupe_engine::error_chain(&e)))?,
            ),
            None => None,
        };
        let kept = Kept {
            answer,
            decision,
            id,
        };
        if let Some(p) = inner.pending.remove(seat)
            && let Err(kept) = p.reply.send(kept)
        {
            // The game stopped waiting for it meanwhile: the page sends it again to the new ask.
            self.forget(&kept);
            self.bump(&mut inner);
            return Err(Refused::Stale);
        }
        self.bump(&mut inner);
        Ok(())
    }

    /// Hand a player's seat to an AI (`person: false`) or to its person. A person's pending
    /// ask is withdrawn at once; the log records the hand-over before the game's next step.
    pub fn hand_over(&self, agent: &str, person: bool) -> Result<(), Refused> {
        let mut inner = self.lock();
        if !inner.person_holds.contains_key(agent) {
            return Err(Refused::NoSuchSeat);
        }
        if inner.person_holds.get(agent) == Some(&person) {
            return Err(Refused::NotHere(if person {
                "a person holds this seat already".into()
            } else {
                "an AI holds this seat already".into()
            }));
        }
        if let Ok(mut h) = self.hand_overs.lock() {
            h.push((agent.to_string(), person));
        }
        // Counted as done now: the game records hand-overs in the order they were asked, so a
        // take-back asked before the game recorded the hand-over still follows it.
        inner.person_holds.insert(agent.to_string(), person);
        if person {
            inner.had_person.insert(agent.to_string());
        }
        // Handed to an AI on purpose: whoever did it expects the AI to try again.
        if !person {
            inner.ai_failed.remove(agent);
        }
        if !person && let Some(p) = inner.pending.remove(agent) {
            let _ = p.reply.send(Kept {
                answer: Answer::Handed,
                decision: p.ask.decision,
                id: None,
            });
        }
        self.handed.notify_one();
        self.bump(&mut inner);
        Ok(())
    }

    /// Someone at the invitation link asks to sit down: a new seat and its key, for the game to
    /// seat before its next step.
    pub fn join(&self, answer: &Answer) -> Result<(String, String), Refused> {
        let ask = join_ask();
        check(&ask, answer).map_err(|e| Refused::Invalid(e.to_string()))?;
        let Answer::Decide { values } = answer else {
            return Err(Refused::Invalid("answer with your name".into()));
        };
        let text = |name: &str| {
            values
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let (name, character) = (text("name"), text("character"));
        if name.chars().count() > MAX_NAME_CHARS || character.chars().count() > MAX_NAME_CHARS {
            return Err(Refused::Invalid(format!(
                "a name is at most {MAX_NAME_CHARS} characters"
            )));
        }
        let key = keys::new_key().map_err(|e| Refused::Invalid(e.to_string()))?;
        let character = if character.is_empty() {
            name.clone()
        } else {
            character
        };
        let mut inner = self.lock();
        if inner.ended.is_some() || inner.stopped.is_some() {
            return Err(Refused::NotHere("this table's game has stopped".into()));
        }
        // Counted only once the join can happen: a refused one takes no place.
        if !self.lobby.count_join() {
            return Err(Refused::NotHere("this table seats no more people".into()));
        }
        let seat = (1..)
            .map(|k| format!("p{k}"))
            .find(|s| !inner.seats.contains_key(s))
            .unwrap_or_default();
        let spec = SeatSpec {
            seat: seat.clone(),
            label: format!("{name} ({character})"),
            key_hash: keys::hash(&key),
        };
        inner.seats.insert(
            seat.clone(),
            SeatState {
                spec: Some(spec.clone()),
                ..Default::default()
            },
        );
        let request = troupe_seat::JoinRequest {
            seat: seat.clone(),
            name,
            character,
            held: Vec::new(),
        };
        self.lobby.queue_join(request, spec);
        self.bump(&mut inner);
        Ok((seat, key))
    }

    /// A person waiting to be seated says something: held for the table.
    pub fn hold(&self, seat: &str, answer: &Answer) -> Result<(), Refused> {
        check(&held_ask(seat), answer).map_err(|e| Refused::Invalid(e.to_string()))?;
        let Answer::Decide { values } = answer else {
            return Err(Refused::Invalid("say something".into()));
        };
        let text = values
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if text.chars().count() > MAX_FIELD_CHARS {
            return Err(Refused::Invalid(format!(
                "a field holds more than {MAX_FIELD_CHARS} characters"
            )));
        }
        if !self.lobby.hold(seat, text.trim().to_string()) {
            return Err(Refused::Stale);
        }
        let mut inner = self.lock();
        self.bump(&mut inner);
        Ok(())
    }

    /// People's asks that have waited longer than `limit`: their seats go to an AI.
    pub fn overdue(&self, limit: Duration) -> Vec<String> {
        let inner = self.lock();
        inner
            .pending
            .iter()
            .filter(|(seat, p)| *seat != GM && p.since.elapsed() >= limit)
            .filter(|(seat, _)| !inner.ai_failed.contains(*seat))
            .map(|(seat, _)| seat.clone())
            .collect()
    }

    /// The AI at this seat could not go on (its model failed) and gave the seat back (`failed`),
    /// or was handed the seat again on purpose: while it has failed, an idle person's seat is
    /// not handed to it (it would fail again, over and over).
    pub fn ai_failed(&self, seat: &str, failed: bool) {
        let mut inner = self.lock();
        if failed {
            inner.ai_failed.insert(seat.to_string());
        } else {
            inner.ai_failed.remove(seat);
        }
    }

    /// A committed event, as the game renders it: its lines join the streams; the seats'
    /// holders, sheets and the table's end are brought up to date.
    pub fn publish(&self, update: Update) {
        self.lobby
            .seated(update.holders.iter().map(|(seat, _)| seat));
        let mut inner = self.lock();
        // A committed event is the checked reply: the drafts that led to it are done.
        inner.streaming.clear();
        inner.lines.extend(update.lines);
        if let Some(ended) = update.ended {
            inner.ended = ended;
        }
        for (seat, person) in &update.holders {
            if *person {
                inner.had_person.insert(seat.clone());
            }
        }
        inner.person_holds.extend(update.holders);
        for (seat, sheet) in update.sheets {
            if inner.seats.contains_key(&seat) {
                inner.sheets.insert(seat, sheet);
            }
        }
        self.bump(&mut inner);
    }

    /// Every waiting ask withdrawn (the game that asked them stopped; its next asks replace them).
    pub fn withdraw_asks(&self) {
        let mut inner = self.lock();
        inner.pending.clear();
        self.bump(&mut inner);
    }

    pub fn thinking(&self, who: Option<String>) {
        let mut inner = self.lock();
        if who.is_none() {
            inner.streaming.clear();
        }
        inner.thinking = who;
        self.bump(&mut inner);
    }

    /// A model call for `seat` (an AI player's agent id or a scene's speaker seat, or [`GM`]
    /// for the AI GM's and a scene engine's own calls) is streaming: every page shows the token
    /// count; `seat`'s own page shows the draft when `draft` is [`Draft::Shown`], and no page
    /// ever does otherwise.
    pub fn progress(&self, seat: &str, progress: &troupe_llm::Progress, draft: Draft) {
        let mut inner = self.lock();
        let call = inner.streaming.entry(seat.to_string()).or_default();
        let restarted = call.attempt != progress.attempt;
        if restarted {
            *call = Streaming {
                attempt: progress.attempt,
                ..Streaming::default()
            };
        }
        call.tokens = progress.tokens;
        if draft == Draft::Shown {
            call.draft
                .get_or_insert_with(String::new)
                .push_str(&progress.text_delta);
        }
        let due = inner
            .streamed_at
            .is_none_or(|t| t.elapsed() >= STREAM_EVERY);
        if restarted || due {
            inner.streamed_at = Some(Instant::now());
            self.bump(&mut inner);
        }
    }

    /// The game stopped saved: unless it ended (which the pages show already), they say why it
    /// stopped and that starting the server again goes on.
    pub fn paused(&self, why: &str) {
        let mut inner = self.lock();
        if inner.ended.is_none() {
            inner.stopped = Some(format!(
                "{why}. Everything is saved: the table goes on when its server starts again"
            ));
            self.bump(&mut inner);
        }
    }

    pub fn stopped(&self, why: String) {
        let mut inner = self.lock();
        inner.stopped = Some(why);
        self.bump(&mut inner);
        drop(inner);
        self.mark_ready();
    }

    pub fn version(&self) -> u64 {
        self.lock().version
    }

    /// Wait until the table changes past `version`, or `timeout` passes.
    pub async fn changed_since(&self, version: u64, timeout: Duration) {
        let waiting = self.changed.notified();
        tokio::pin!(waiting);
        waiting.as_mut().enable();
        if self.version() != version {
            return;
        }
        let _ = tokio::time::timeout(timeout, waiting).await;
    }

    /// What one seat may see now: its lines after `after`, and the table's state from its
    /// chair.
    pub fn seat_feed(&self, seat: &str, after: Option<u64>) -> Value {
        let lobby = match seat {
            JOIN => Some(join_ask()),
            s if self.lobby.waiting(s) => Some(held_ask(s)),
            _ => None,
        };
        let inner = self.lock();
        // Nobody sits down at a table whose game has stopped.
        let lobby = lobby.filter(|_| inner.ended.is_none() && inner.stopped.is_none());
        let lines: Vec<&Line> = inner
            .lines
            .iter()
            .filter(|l| after.is_none_or(|a| l.id > a))
            .filter(|l| l.audience.includes(seat))
            .collect();
        json!({
            "version": inner.version,
            "lines": lines,
            "state": state(&inner, seat, lobby),
        })
    }
}

/// The hub is where a game is played online: the game's adapter (its crate's `online` module)
/// speaks to it through this alone.
#[async_trait::async_trait]
impl Surface for Hub {
    fn publish(&self, update: Update) {
        Hub::publish(self, update);
    }
    fn thinking(&self, who: Option<String>) {
        Hub::thinking(self, who);
    }
    fn progress(&self, seat: &str, progress: &troupe_llm::Progress, draft: Draft) {
        Hub::progress(self, seat, progress, draft);
    }
    async fn ask_and_wait(&self, ask: Ask) -> Option<Answer> {
        Hub::ask_and_wait(self, ask).await
    }
    fn mark_ready(&self) {
        Hub::mark_ready(self);
    }
    fn withdraw_asks(&self) {
        Hub::withdraw_asks(self);
    }
    fn undo_by_table(&self) {
        Hub::undo_by_table(self);
    }
    fn undo_asked(&self) -> Notified<'_> {
        self.undo.notified()
    }
    fn received(&self) -> troupe_engine::store::inbox::Received {
        self.received.clone()
    }
    fn hand_overs(&self) -> HandOvers {
        self.hand_overs.clone()
    }
    fn handed(&self) -> Arc<Notify> {
        self.handed.clone()
    }
    fn joins(&self) -> Joins {
        self.lobby.queue.clone()
    }
    fn ai_failed(&self, seat: &str, failed: bool) {
        Hub::ai_failed(self, seat, failed);
    }
}

/// Microseconds since 1970 when the hub is made: larger than any id or version an earlier
/// process handed out (each counts up by one from its own start, far slower than the clock),
/// and exact in a page's JavaScript numbers (below 2^53 until the year 2255).
fn process_epoch() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_micros() as u64)
}

/// A text, or a line of a list, longer than a field may hold.
/// A person's texts without the blanks around them (a typed line's trailing newline, a
/// pasted space); the game keeps a seat's texts as they come, so this is where a person's are
/// tidied.
fn trimmed(answer: Answer) -> Answer {
    let tidy = |values: Map<String, Value>| {
        values
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(t) => (k, Value::String(t.trim().into())),
                v => (k, v),
            })
            .collect()
    };
    match answer {
        Answer::Decide { values } => Answer::Decide {
            values: tidy(values),
        },
        Answer::Command { name, values } => Answer::Command {
            name,
            values: tidy(values),
        },
        other => other,
    }
}

fn too_long(v: &Value) -> bool {
    match v {
        Value::String(s) => s.chars().count() > MAX_FIELD_CHARS,
        Value::Array(lines) => lines.iter().any(too_long),
        _ => false,
    }
}

/// The table from one chair: the ask waiting on it, who the table waits for, who is here.
fn state(inner: &Inner, seat: &str, lobby: Option<Ask>) -> Value {
    let now = Instant::now();
    let label = |s: &str| {
        inner
            .seats
            .get(s)
            .and_then(|x| x.spec.as_ref())
            .map_or_else(|| s.to_string(), |x| x.label.clone())
    };
    let connected: Vec<String> = inner
        .seats
        .iter()
        .filter(|(_, s)| {
            s.last_seen
                .is_some_and(|t| now.duration_since(t) < CONNECTED_FOR)
        })
        .map(|(name, _)| label(name))
        .collect();
    // A standing ask (a GM's commands while the game plays on) is no one the table waits for.
    let waiting_on: Vec<String> = inner
        .pending
        .iter()
        .filter(|(_, p)| !standing(&p.ask))
        .map(|(s, _)| label(s))
        .collect();
    // The lobby's forms are the server's own: their id is 0, never one of the game's.
    let ask = match lobby {
        Some(ask) => Some(json!({"id": 0, "ask": ask, "standing": false})),
        None => inner
            .pending
            .get(seat)
            .map(|p| json!({"id": p.id, "ask": p.ask, "standing": standing(&p.ask)})),
    };
    let holders: Vec<Value> = inner
        .person_holds
        .iter()
        .map(|(agent, person)| {
            let had = inner.had_person.contains(agent);
            json!({"seat": agent, "label": label(agent), "person": person, "had_person": had})
        })
        .collect();
    json!({
        "seat": seat,
        "label": label(seat),
        "title": inner.title,
        "role": match seat { GM => "gm", WATCH => "watch", JOIN => "join", _ => "player" },
        "ask": ask,
        "waiting_on": waiting_on,
        "connected": connected,
        "thinking": inner.thinking.as_deref().or(inner.streaming.keys().next().map(String::as_str)).map(&label),
        "thinking_tokens": (!inner.streaming.is_empty()).then(|| inner.streaming.values().map(|c| c.tokens).sum::<u32>()),
        "draft": inner.streaming.get(seat).filter(|_| seat != WATCH && seat != JOIN).and_then(|c| c.draft.as_deref()).map(troupe_llm::readable_draft),
        "holders": if seat == WATCH || seat == JOIN { Vec::new() } else { holders },
        "person_holds": inner.person_holds.get(seat),
        "ended": inner.ended,
        "stopped": inner.stopped,
        "sheet": inner.sheets.get(seat),
    })
}

fn standing(ask: &Ask) -> bool {
    ask.decision == troupe_seat::STANDING
}

/// An ask the game waits on; dropped unanswered, it is withdrawn from the seat.
struct Withdraw<'a> {
    hub: &'a Hub,
    seat: String,
    id: u64,
    answer: oneshot::Receiver<Kept>,
    answered: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.answer.close();
            let delivered = self.answer.try_recv().ok();
            self.hub.withdraw(&self.seat, self.id, delivered);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;
    use troupe_seat::form;

    fn hub() -> Hub {
        let spec = |seat: &str| SeatSpec {
            seat: seat.into(),
            label: seat.into(),
            key_hash: keys::hash(&format!("key-{seat}")),
        };
        Hub::new("t", vec![spec("gm"), spec("alex")])
    }

    fn ask() -> Ask {
        Ask {
            seat: "alex".into(),
            decision: "questions".into(),
            prompt: "?".into(),
            shown: vec![],
            view: Value::Null,
            fields: vec![form::lines("questions", "Questions", 2)],
            commands: vec![],
            error: None,
            prefill: Default::default(),
        }
    }

    fn decide(v: Value) -> Answer {
        Answer::Decide {
            values: v.as_object().cloned().unwrap_or_else(Map::new),
        }
    }

    #[test]
    fn only_a_fitting_answer_to_the_waiting_ask_reaches_the_game() {
        let hub = hub();
        let (id, mut reply) = hub.ask_numbered(ask());
        let long = "x".repeat(MAX_FIELD_CHARS + 1);
        let refusals = [
            (id + 1, decide(json!({"questions": []}))),
            (id, Answer::Leave),
            (id, Answer::Handed),
            (id, decide(json!({"questions": [long]}))),
            (id, decide(json!({"questions": "not a list"}))),
        ];
        for (id, answer) in refusals {
            assert!(hub.answer("alex", id, answer).is_err());
        }
        assert!(reply.try_recv().is_err(), "nothing reached the game");
        let fine = decide(json!({"questions": ["Who is there?"]}));
        assert_eq!(hub.answer("alex", id, fine.clone()), Ok(()));
        assert_eq!(reply.try_recv().ok().map(|k| k.answer), Some(fine));
        assert_eq!(
            hub.answer("alex", id, decide(json!({}))),
            Err(Refused::Stale)
        );
    }

    /// The id of the ask waiting on `seat`, as its page reads it.
    fn asked(hub: &Hub, seat: &str) -> u64 {
        hub.seat_feed(seat, None)["state"]["ask"]["id"]
            .as_u64()
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn an_ask_the_game_stopped_waiting_for_refuses_a_late_answer() {
        let hub = hub();
        let first = hub.lock().next_ask + 1;
        let waited = tokio::time::timeout(
            std::time::Duration::from_millis(10),
            hub.ask_and_wait(ask()),
        )
        .await;
        assert!(waited.is_err(), "nobody answered");
        let fine = decide(json!({"questions": []}));
        assert_eq!(hub.answer("alex", first, fine), Err(Refused::Stale));
    }

    #[tokio::test]
    async fn an_answer_that_came_as_the_game_stopped_waiting_answers_the_next_ask() {
        let hub = hub();
        let fine = decide(json!({"questions": ["Who is there?"]}));
        {
            let waiting = hub.ask_and_wait(ask());
            tokio::pin!(waiting);
            // Asked, then answered before the game looks at it again, then dropped.
            assert!(futures_poll_once(waiting.as_mut()).await.is_none());
            let id = asked(&hub, "alex");
            assert_eq!(hub.answer("alex", id, fine.clone()), Ok(()));
        }
        let next = hub.ask_and_wait(ask()).await;
        assert_eq!(next, Some(fine));
    }

    /// Issue 45: a page that reconnects after a restart must not take the new process's ask
    /// for the old form it shows, nor its stream version for the one it last read.
    #[test]
    fn ask_ids_and_versions_never_repeat_across_processes() {
        let before = hub();
        let (old_ask, _reply) = before.ask_numbered(ask());
        let old_version = before.version();
        drop(before);
        let after = hub();
        let (new_ask, _reply) = after.ask_numbered(ask());
        assert!(new_ask > old_ask, "{new_ask} after {old_ask}");
        assert!(after.version() > old_version);
    }

    /// What a restart finds in the inbox answers the seat's next ask of that decision, once;
    /// an answer to a decision that has passed is dropped from the inbox.
    #[tokio::test]
    async fn the_inbox_answers_the_next_ask_after_a_restart_and_forgets_what_no_longer_fits() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::open(dir.path(), "t").unwrap();
        let fine = decide(json!({"questions": ["Who is there?"]}));
        let kept = inbox.keep("alex", "questions", &fine).unwrap();
        let stale = inbox.keep("gm", "narration", &fine).unwrap();
        let hub = hub();
        hub.keep_answers_in(Inbox::open(dir.path(), "t").unwrap())
            .unwrap();
        assert_eq!(hub.ask_and_wait(ask()).await, Some(fine));
        assert_eq!(*hub.received.lock().unwrap(), [kept], "for the next commit");
        let gm_ask = Ask {
            seat: "gm".into(),
            decision: "answers".into(),
            ..ask()
        };
        let _waiting = hub.ask_numbered(gm_ask);
        assert!(
            !inbox.holds(stale).unwrap(),
            "the gm's old answer fits no ask now"
        );
        assert!(
            inbox.holds(kept).unwrap(),
            "gone only with the game's commit"
        );
    }

    /// Poll a future once: its output if it is ready.
    async fn futures_poll_once<F: std::future::Future + Unpin>(f: F) -> Option<F::Output> {
        let mut f = f;
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }

    /// The GM's standing ask (their commands while the game plays on) is offered on their page
    /// but is no one the table waits for; a real ask is.
    #[test]
    fn a_standing_ask_is_offered_but_not_waited_for() {
        let hub = hub();
        let standing = Ask {
            seat: "gm".into(),
            decision: troupe_seat::STANDING.into(),
            fields: vec![],
            ..ask()
        };
        let _gm = hub.ask_numbered(standing);
        let gm = &hub.seat_feed("gm", None)["state"];
        assert_eq!(gm["ask"]["standing"], true, "{gm}");
        assert_eq!(gm["waiting_on"], json!([]), "{gm}");
        let _alex = hub.ask_numbered(ask());
        let alex = &hub.seat_feed("alex", None)["state"];
        assert_eq!(alex["ask"]["standing"], false, "{alex}");
        assert_eq!(alex["waiting_on"], json!(["alex"]), "{alex}");
    }

    /// "Give back to its person" only for a seat a person has held (issue 46): an AI's seat
    /// from the start has no person to give it back to.
    #[test]
    fn a_seat_has_its_person_only_once_a_person_held_it() {
        let hub = hub();
        hub.publish(Update {
            holders: vec![("alex".into(), false)],
            ..Update::default()
        });
        let had =
            |hub: &Hub| hub.seat_feed("gm", None)["state"]["holders"][0]["had_person"].clone();
        assert_eq!(had(&hub), json!(false));
        hub.hand_over("alex", true).unwrap();
        hub.hand_over("alex", false).unwrap();
        assert_eq!(had(&hub), json!(true));
    }

    #[test]
    fn keys_open_only_their_own_seat() {
        let hub = hub();
        assert_eq!(hub.admit("alex", "key-alex", false), Ok(()));
        assert_eq!(hub.admit("alex", "key-gm", false), Err(Refused::BadKey));
        assert_eq!(
            hub.admit("nobody", "key-gm", false),
            Err(Refused::NoSuchSeat)
        );
    }
}

#[cfg(test)]
mod streaming_tests {
    use super::*;
    use troupe_llm::Progress;

    fn hub() -> Hub {
        let spec = |seat: &str| SeatSpec {
            seat: seat.into(),
            label: seat.into(),
            key_hash: keys::hash(&format!("key-{seat}")),
        };
        Hub::new("t", vec![spec(GM), spec("alex"), spec("bo"), spec(WATCH)])
    }

    fn piece(attempt: u32, tokens: u32, text: &str) -> Progress {
        Progress {
            attempt,
            tokens,
            text_delta: text.into(),
        }
    }

    /// Every string of a seat's stream, as the page receives it.
    fn feed_text(hub: &Hub, seat: &str) -> String {
        hub.seat_feed(seat, None).to_string()
    }

    #[test]
    fn every_seat_sees_the_token_count_and_only_its_own_seat_the_draft() {
        let hub = hub();
        hub.thinking(Some("alex".into()));
        hub.progress(
            "alex",
            &piece(1, 3, r#"{"action": "I hack the "#),
            Draft::Shown,
        );
        hub.progress("alex", &piece(1, 5, r#"secret door"#), Draft::Shown);
        for seat in [GM, "alex", "bo", WATCH] {
            let state = &hub.seat_feed(seat, None)["state"];
            assert_eq!(state["thinking_tokens"], 5, "{seat}: {state}");
            assert_eq!(state["thinking"], "alex", "{seat}");
        }
        assert_eq!(
            hub.seat_feed("alex", None)["state"]["draft"],
            "I hack the secret door"
        );
        for other in [GM, "bo", WATCH] {
            let text = feed_text(&hub, other);
            assert!(!text.contains("secret"), "{other} saw alex's draft: {text}");
            assert!(!text.contains("hack"), "{other} saw alex's draft: {text}");
        }
    }

    #[test]
    fn the_ai_gms_draft_reaches_the_gm_seat_only_and_a_retry_starts_it_over() {
        let hub = hub();
        hub.progress(GM, &piece(1, 2, "The hull "), Draft::Shown);
        hub.progress(GM, &piece(2, 1, "Alarms"), Draft::Shown);
        assert_eq!(hub.seat_feed(GM, None)["state"]["draft"], "Alarms");
        for other in ["alex", "bo", WATCH] {
            assert!(!feed_text(&hub, other).contains("Alarms"), "{other}");
            assert_eq!(hub.seat_feed(other, None)["state"]["thinking_tokens"], 1);
        }
        // The checked reply lands: the draft and the count go.
        hub.publish(Update::default());
        let state = &hub.seat_feed(GM, None)["state"];
        assert!(state["draft"].is_null() && state["thinking_tokens"].is_null());
    }

    /// An encounter's AI GM writes with the encounter's secrets in its prompt: no page, the GM
    /// link's included, reads a byte of its draft; every page still counts its tokens.
    #[test]
    fn an_unshown_draft_reaches_no_page_not_even_its_own_seats() {
        let hub = hub();
        hub.progress(
            GM,
            &piece(1, 4, r#"{"narration": "DC 17 SECRET-GOAL"#),
            Draft::Unshown,
        );
        for seat in [GM, "alex", "bo", WATCH] {
            let text = feed_text(&hub, seat);
            for marker in ["SECRET", "DC 17", "narration"] {
                assert!(!text.contains(marker), "{seat} read the draft: {text}");
            }
            assert_eq!(hub.seat_feed(seat, None)["state"]["thinking_tokens"], 4);
        }
        assert!(hub.lock().streaming.values().all(|c| c.draft.is_none()));
    }

    #[test]
    fn streaming_wakes_the_pages_at_most_every_tenth_of_a_second() {
        let hub = hub();
        let before = hub.version();
        for n in 1..=50 {
            hub.progress("alex", &piece(1, n, "x"), Draft::Shown);
        }
        assert!(hub.version() - before <= 2, "{}", hub.version() - before);
        assert_eq!(hub.seat_feed("alex", None)["state"]["thinking_tokens"], 50);
    }
}
