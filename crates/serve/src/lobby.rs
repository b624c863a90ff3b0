//! People who join a running table from its invitation link (the `join` seat): who asked to sit
//! down and what they said while they waited (seed 003's held messages), until the game seats
//! them; and the forms the lobby shows, which are the server's, not the game's.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use troupe_seat::{Ask, JoinRequest, form};

use crate::hub::SeatSpec;

/// The most people one table seats from its invitation link.
pub const MAX_JOINS: usize = 8;
/// The most messages a person may leave while they wait to be seated.
pub const MAX_HELD: usize = 20;
/// The longest name or character name taken.
pub const MAX_NAME_CHARS: usize = 80;

/// Keeps a seat's key hash (in the table's file) once the game has seated its person.
pub type Persist = Box<dyn Fn(&SeatSpec) -> Result<(), String> + Send + Sync>;

#[derive(Default)]
pub struct Lobby {
    /// People asking to sit down, drained by the game before its next step.
    pub queue: Arc<Mutex<Vec<JoinRequest>>>,
    /// Seats given out and not yet in the table's file (the game has not seated them yet).
    unsaved: Mutex<BTreeMap<String, SeatSpec>>,
    joined: Mutex<usize>,
    persist: Mutex<Option<Persist>>,
}

impl Lobby {
    pub fn persist_with(&self, persist: Persist) {
        if let Ok(mut p) = self.persist.lock() {
            *p = Some(persist);
        }
    }

    /// Count one more person joining, unless the table has seated as many as it takes.
    pub fn count_join(&self) -> bool {
        let Ok(mut n) = self.joined.lock() else {
            return false;
        };
        if *n >= MAX_JOINS {
            return false;
        }
        *n += 1;
        true
    }

    pub fn queue_join(&self, request: JoinRequest, spec: SeatSpec) {
        if let Ok(mut u) = self.unsaved.lock() {
            u.insert(spec.seat.clone(), spec);
        }
        if let Ok(mut q) = self.queue.lock() {
            q.push(request);
        }
    }

    /// Whether this seat's person waits to be seated.
    pub fn waiting(&self, seat: &str) -> bool {
        self.queue
            .lock()
            .is_ok_and(|q| q.iter().any(|j| j.seat == seat))
    }

    /// Hold a message until the person is seated; false when they no longer wait (or said too
    /// much).
    pub fn hold(&self, seat: &str, text: String) -> bool {
        let Ok(mut q) = self.queue.lock() else {
            return false;
        };
        match q.iter_mut().find(|j| j.seat == seat) {
            Some(j) if j.held.len() < MAX_HELD => {
                j.held.push(text);
                true
            }
            _ => false,
        }
    }

    /// The game has seated these seats' people: their keys go into the table's file.
    pub fn seated<'a>(&self, seats: impl Iterator<Item = &'a String>) {
        let Ok(mut unsaved) = self.unsaved.lock() else {
            return;
        };
        for seat in seats {
            let Some(spec) = unsaved.remove(seat) else {
                continue;
            };
            if let Ok(p) = self.persist.lock()
                && let Some(persist) = p.as_ref()
                && let Err(e) = persist(&spec)
            {
                // The seat works until the server stops; after a restart its link is refused.
                eprintln!(
                    "troupe: could not keep {}'s seat in the table's file: {e}",
                    spec.label
                );
            }
        }
    }
}

/// The invitation link's form: who are you?
pub fn join_ask() -> Ask {
    Ask {
        seat: crate::feed::JOIN.into(),
        decision: "join".into(),
        prompt: "Join the table: you will be seated from your turn in the current round on.".into(),
        shown: Vec::new(),
        view: serde_json::Value::Null,
        fields: vec![
            form::line("name", "Your name"),
            form::optional("character", "Your character's name (empty: your own)"),
        ],
        commands: Vec::new(),
        error: None,
        prefill: Default::default(),
    }
}

/// While a person waits to be seated: anything they say is held for the table.
pub fn held_ask(seat: &str) -> Ask {
    Ask {
        seat: seat.into(),
        decision: "held".into(),
        prompt: "You will be seated when the table finishes its current step. Anything you say \
                 now is told to the table then."
            .into(),
        shown: Vec::new(),
        view: serde_json::Value::Null,
        fields: vec![form::line("text", "Say something")],
        commands: Vec::new(),
        error: None,
        prefill: Default::default(),
    }
}
