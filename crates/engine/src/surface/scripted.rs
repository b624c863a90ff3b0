//! A surface with no pages, for the games' tests (feature `testing`): people's answers come from
//! a script, in its order, and everything the game sent is kept to be read back.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;
use troupe_seat::{Answer, Ask};

use super::{Draft, GM, HandOvers, Joins, Surface, Update};
use crate::store::inbox::Received;

/// An ask the game made, and whether the game had published its history (marked ready) by then.
#[derive(Clone, Debug)]
pub struct Asked {
    pub ask: Ask,
    pub ready: bool,
}

/// Answers seats from a script of (seat, answer), strictly in its order: a seat's ask waits
/// until the script's next answer is that seat's. Once the script is spent, the GM's seat waits
/// forever (its standing ask is no one the game waits for) and any other seat's page has closed
/// (None: its person left). Every update, ask and draft the game sent is kept.
#[derive(Default)]
pub struct ScriptedSurface {
    script: Mutex<VecDeque<(String, Answer)>>,
    turn: Notify,
    updates: Mutex<Vec<Update>>,
    asked: Mutex<Vec<Asked>>,
    drafts: Mutex<Vec<(String, String, Draft)>>,
    ready: AtomicBool,
    undo: Notify,
    received: Received,
    hand_overs: HandOvers,
    handed: Arc<Notify>,
    joins: Joins,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ScriptedSurface {
    pub fn new(script: impl IntoIterator<Item = (String, Answer)>) -> ScriptedSurface {
        ScriptedSurface {
            script: Mutex::new(script.into_iter().collect()),
            ..ScriptedSurface::default()
        }
    }

    /// Every update published so far, in order.
    pub fn updates(&self) -> MutexGuard<'_, Vec<Update>> {
        lock(&self.updates)
    }

    /// Every ask made so far, in order.
    pub fn asked(&self) -> Vec<Asked> {
        lock(&self.asked).clone()
    }

    /// Every streamed piece so far: (seat, text, whether its draft may show).
    pub fn drafts(&self) -> Vec<(String, String, Draft)> {
        lock(&self.drafts).clone()
    }

    /// The script's answers not yet given.
    pub fn unanswered(&self) -> usize {
        lock(&self.script).len()
    }
}

#[async_trait]
impl Surface for ScriptedSurface {
    fn publish(&self, update: Update) {
        lock(&self.updates).push(update);
    }
    fn thinking(&self, _who: Option<String>) {}
    fn progress(&self, seat: &str, progress: &troupe_llm::Progress, draft: Draft) {
        let piece = (seat.to_string(), progress.text_delta.clone(), draft);
        lock(&self.drafts).push(piece);
    }
    async fn ask_and_wait(&self, ask: Ask) -> Option<Answer> {
        let ready = self.ready.load(Ordering::SeqCst);
        lock(&self.asked).push(Asked {
            ask: ask.clone(),
            ready,
        });
        loop {
            // Made before the script is read: an answer given meanwhile still wakes it.
            let turn = self.turn.notified();
            {
                let mut script = lock(&self.script);
                match script.front() {
                    Some((seat, _)) if *seat == ask.seat => {
                        let answer = script.pop_front().map(|(_, a)| a);
                        self.turn.notify_waiters();
                        return answer;
                    }
                    None if ask.seat != GM => return None,
                    _ => {}
                }
            }
            turn.await;
        }
    }
    fn mark_ready(&self) {
        self.ready.store(true, Ordering::SeqCst);
    }
    fn withdraw_asks(&self) {}
    fn undo_by_table(&self) {}
    fn undo_asked(&self) -> Notified<'_> {
        self.undo.notified()
    }
    fn received(&self) -> Received {
        self.received.clone()
    }
    fn hand_overs(&self) -> HandOvers {
        self.hand_overs.clone()
    }
    fn handed(&self) -> Arc<Notify> {
        self.handed.clone()
    }
    fn joins(&self) -> Joins {
        self.joins.clone()
    }
    fn ai_failed(&self, _seat: &str, _failed: bool) {}
}
