//! An encounter's log: the events of one run, and their fold into the [`State`] that says what
//! happens next. Everything a later reader needs is in the log (the spec as it was, the drawn
//! names, the NPCs' memories, every model reply), so resume and replay need no other file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use troupe_rules::d20::D20Roll;

use crate::budget::{Entry, Role, ZoneTokens};
use crate::leaks::Leak;
use crate::names::Drawn;
use crate::spec::{Goal, Spec};
use crate::tools::{CheckCall, GmReply};

/// The most GM replies between two rounds of player actions (tool results and rolls each ask
/// the GM again; this bounds a GM that keeps calling tools).
pub const GM_REPLIES_PER_ROUND: u32 = 4;
/// How often a malformed GM reply is re-asked before the step fails (and the run stops saved).
pub const GM_ATTEMPTS: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatKind {
    Person,
    Ai,
}

/// Someone at the table: a person at the terminal or an AI player.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seat {
    pub id: String,
    /// The character's name (what the GM and the other players call them).
    pub character: String,
    /// Who plays: the person's or AI player's name.
    pub player: String,
    pub kind: SeatKind,
    /// A line about the character, for the GM and the AI player.
    pub about: String,
}

/// What an NPC with a memory key remembered when the run started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpcMemory {
    pub npc: String,
    pub lines: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Open,
    Active,
    Resolved,
}

/// One model call, as the log keeps it: enough to serve the same reply again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// `gm` or the seat id.
    pub agent: String,
    pub purpose: String,
    pub model: String,
    /// The reply's text as the model gave it.
    pub reply: String,
    /// The JSON object read from it (what the engine acted on).
    pub json: serde_json::Value,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub latency_ms: u64,
    /// Every attempt of the call as the model gateway records it for every game (the whole
    /// request's messages, the reply, tokens, latency, the attempt's number, errors, retries
    /// and structured-output fallbacks): what the model was shown, for the audit. Absent from
    /// logs written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<serde_json::Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event_type", rename_all = "snake_case")]
pub enum EncounterEvent {
    Started {
        spec: Box<Spec>,
        /// The scene file's text when the spec has one.
        scene: Option<String>,
        seed: u64,
        seats: Vec<Seat>,
        names: Vec<Drawn>,
        memories: Vec<NpcMemory>,
        /// The GM model's context window in tokens (the budget zones are sized from it).
        window: usize,
        at: String,
    },
    /// A GM call: the zones its prompt used and the reply.
    GmCalled {
        call: ModelCall,
        zones: ZoneTokens,
        trimmed: usize,
    },
    /// A GM reply that failed its checks: re-asked, never shown. `reply` is set when the reply
    /// was refused before the engine saw it (its shape, by the gateway), so no `gm_called`
    /// records it.
    GmRejected {
        problems: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply: Option<String>,
    },
    /// A narration that told a secret: sent back (or, the second time, withheld).
    LeakCaught {
        leaks: Vec<Leak>,
        withheld: bool,
    },
    /// What the players were told, and the facts it settled.
    Narrated {
        text: String,
        facts: Vec<(String, String)>,
    },
    PlayerCalled {
        call: ModelCall,
    },
    /// A player's action that said what happens, sent back once with the validator's feedback
    /// (the rewrite, whatever it says, is the action: the GM decides the outcome).
    ActionSentBack {
        seat: String,
        text: String,
        feedback: String,
    },
    PlayerActed {
        seat: String,
        text: String,
    },
    /// Someone took a seat at the running table: they act from their turn in the round on.
    SeatJoined {
        seat: Seat,
    },
    /// What a person said while they waited to be seated, told once they are (seed 003's held
    /// messages).
    HeldDelivered {
        seat: String,
        texts: Vec<String>,
    },
    /// A seat changed hands between decisions: a person handed it to an AI player (who plays
    /// the same character from here on), or took it back.
    SeatHanded {
        seat: String,
        person: bool,
    },
    /// A person's private word to the GM (`/whisper`): the GM hears it, nobody else does.
    Whispered {
        seat: String,
        text: String,
    },
    CheckEmitted {
        check: CheckCall,
    },
    CheckRolled {
        seat: String,
        roll: D20Roll,
    },
    Recalled {
        facts: Vec<(String, String)>,
    },
    GoalRegistered {
        goal: Goal,
        primary: bool,
    },
    /// A scene engine tool the GM called, and what the engine made of it.
    SceneActed {
        call: troupe_scene::ToolCall,
        /// Whether the engine applied it (a refused call changes nothing; only the GM hears).
        applied: bool,
        outcome: String,
    },
    Resolved {
        goal: String,
        summary: String,
        /// The summary file written, relative to the campaign directory.
        file: String,
        /// When (UTC, ISO 8601): the summary's date.
        at: String,
    },
    /// `undo`: everything from this seq on is taken back.
    Undone {
        from: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub seq: u64,
    #[serde(flatten)]
    pub event: EncounterEvent,
}

/// A player's action the overreach check sent back once, with the validator's feedback: the
/// rewrite (or, from a person, nothing: the action as it was) is the action.
#[derive(Clone, Debug, PartialEq)]
pub struct SentBack {
    pub seat: String,
    pub text: String,
    pub feedback: String,
}

/// What the fold knows: the encounter as it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub spec: Spec,
    pub scene: Option<String>,
    pub seed: u64,
    pub seats: Vec<Seat>,
    pub names: Vec<Drawn>,
    pub memories: Vec<NpcMemory>,
    pub window: usize,
    pub phase: Phase,
    /// The GM's conversation: what it said and what it was told.
    pub history: Vec<Entry>,
    /// What the players saw and heard, in order (no DCs, no recalls): their story.
    pub public: Vec<String>,
    pub facts: BTreeMap<String, String>,
    pub extra_goals: Vec<Goal>,
    pub pending: Option<CheckCall>,
    /// Full rounds of player actions begun (1-based once the first player acts).
    pub round: u32,
    /// Seats that have acted in the current round.
    pub acted: usize,
    /// GM replies since the last player action.
    pub gm_replies: u32,
    /// Rejected replies since the last accepted one.
    pub rejected: u32,
    /// A leak was sent back and its rewrite is awaited.
    pub rewriting: bool,
    /// Why the GM's last reply was sent back, for the re-ask.
    pub sent_back: Option<String>,
    /// A player's action the overreach check sent back this turn, its rewrite awaited.
    pub action_sent_back: Option<SentBack>,
    /// Dice rolled so far (the next roll's seed index).
    pub rolls: u64,
    /// The prepared checks rolled with success: their notes may now reach the players.
    pub succeeded: std::collections::BTreeSet<String>,
    pub outcome: Option<(String, String)>,
    /// The scene tools the GM called, in order (the scene is their fold, see `turn::scene`).
    pub scene_calls: Vec<troupe_scene::ToolCall>,
    pub seq: u64,
}

/// What the run does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// The GM opens the scene.
    Open,
    /// This seat says what its character attempts.
    Act(usize),
    /// The GM answers what just happened.
    Gm,
    /// A seat rolls for the pending check.
    Roll(CheckCall),
    Done,
}

impl State {
    fn start(event: &EncounterEvent) -> Option<State> {
        let EncounterEvent::Started {
            spec,
            scene,
            seed,
            seats,
            names,
            memories,
            window,
            ..
        } = event
        else {
            return None;
        };
        Some(State {
            spec: (**spec).clone(),
            scene: scene.clone(),
            seed: *seed,
            seats: seats.clone(),
            names: names.clone(),
            memories: memories.clone(),
            window: *window,
            phase: Phase::Open,
            history: Vec::new(),
            public: Vec::new(),
            facts: BTreeMap::new(),
            extra_goals: Vec::new(),
            pending: None,
            round: 0,
            acted: 0,
            gm_replies: 0,
            rejected: 0,
            rewriting: false,
            sent_back: None,
            action_sent_back: None,
            rolls: 0,
            succeeded: std::collections::BTreeSet::new(),
            outcome: None,
            scene_calls: Vec::new(),
            seq: 0,
        })
    }

    /// What comes next. A pending check waits for its roll; a round of actions ends with the
    /// GM's answer; the GM answers again after a roll or a recall, up to its bound a round.
    pub fn next(&self) -> Next {
        match self.phase {
            Phase::Resolved => Next::Done,
            Phase::Open => Next::Open,
            Phase::Active => {
                if let Some(p) = &self.pending {
                    return Next::Roll(p.clone());
                }
                if self.acted < self.seats.len() {
                    return Next::Act(self.acted);
                }
                if self.awaits_gm() {
                    Next::Gm
                } else {
                    Next::Act(0)
                }
            }
        }
    }

    /// The GM owes an answer: to the round's actions, a roll, a recall or its own rejected or
    /// leaking reply, within its bound.
    fn awaits_gm(&self) -> bool {
        if self.gm_replies >= GM_REPLIES_PER_ROUND {
            return false;
        }
        self.rejected > 0
            || self.rewriting
            || self
                .history
                .last()
                .is_some_and(|e| e.role != Role::Assistant)
    }

    pub fn seat(&self, id: &str) -> Option<&Seat> {
        self.seats.iter().find(|s| s.id == id)
    }

    /// This seat's action sent back this turn, while its rewrite is awaited.
    pub fn sent_back_to(&self, seat: &str) -> Option<&SentBack> {
        self.action_sent_back.as_ref().filter(|s| s.seat == seat)
    }

    /// Apply one event.
    pub fn apply(&mut self, env: &Envelope) {
        self.seq = env.seq;
        match &env.event {
            EncounterEvent::Started { .. } | EncounterEvent::Undone { .. } => {}
            EncounterEvent::GmCalled { .. } | EncounterEvent::PlayerCalled { .. } => {}
            EncounterEvent::GmRejected { problems, .. } => {
                self.rejected += 1;
                self.sent_back = Some(format!(
                    "Your last reply was not used: {}. Reply again, in full.",
                    problems.join("; ")
                ));
            }
            EncounterEvent::LeakCaught { leaks, withheld } => {
                self.rewriting = !withheld;
                let what: Vec<String> = leaks.iter().map(|l| l.detail.clone()).collect();
                self.sent_back = (!withheld).then(|| {
                    format!(
                        "Your narration was not shown: it tells the players what they must not \
                         know or decide for them ({}). Rewrite it without that, in full.",
                        what.join("; ")
                    )
                });
            }
            EncounterEvent::Narrated { text, facts } => self.narrated(text, facts),
            EncounterEvent::PlayerActed { seat, text } => self.acted_by(seat, text),
            EncounterEvent::SeatJoined { seat } => {
                let line = joined_line(seat);
                self.public.push(line.clone());
                self.history.push(Entry::new(Role::User, line, false));
                self.seats.push(seat.clone());
            }
            EncounterEvent::HeldDelivered { seat, texts } => {
                let who = self.seat(seat).map_or(seat.clone(), |s| s.player.clone());
                for text in texts {
                    let line = held_line(&who, text);
                    self.public.push(line.clone());
                    self.history.push(Entry::new(Role::User, line, false));
                }
            }
            EncounterEvent::SeatHanded { seat, person } => {
                if let Some(s) = self.seats.iter_mut().find(|s| &s.id == seat) {
                    s.kind = if *person {
                        SeatKind::Person
                    } else {
                        SeatKind::Ai
                    };
                }
            }
            EncounterEvent::Whispered { seat, text } => {
                let who = self
                    .seat(seat)
                    .map_or(seat.clone(), |s| s.character.clone());
                let text = format!("(whispered to you alone by {who}'s player: {text})");
                self.history.push(Entry::new(Role::User, text, false));
            }
            EncounterEvent::ActionSentBack {
                seat,
                text,
                feedback,
            } => {
                self.action_sent_back = Some(SentBack {
                    seat: seat.clone(),
                    text: text.clone(),
                    feedback: feedback.clone(),
                });
            }
            EncounterEvent::CheckEmitted { check } => self.pending = Some(check.clone()),
            EncounterEvent::CheckRolled { seat, roll } => self.rolled(seat, roll),
            EncounterEvent::Recalled { facts } => {
                let lines: Vec<String> = facts.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                let text = format!("context_recall: {}", or_none(&lines));
                self.history.push(Entry::new(Role::User, text, false));
            }
            EncounterEvent::GoalRegistered { goal, .. } => self.extra_goals.push(goal.clone()),
            EncounterEvent::SceneActed {
                outcome,
                call,
                applied,
            } => {
                self.scene_calls.push(call.clone());
                let text = format!("scene engine: {outcome}");
                self.history.push(Entry::new(Role::User, text, false));
                // A refused call changed nothing: only the GM hears of it.
                if *applied {
                    self.public.push(outcome.clone());
                }
            }
            EncounterEvent::Resolved { goal, summary, .. } => {
                self.phase = Phase::Resolved;
                self.outcome = Some((goal.clone(), summary.clone()));
            }
        }
    }

    fn narrated(&mut self, text: &str, facts: &[(String, String)]) {
        self.public.push(format!("GM: {text}"));
        self.history
            .push(Entry::new(Role::Assistant, text, self.phase == Phase::Open));
        for (k, v) in facts {
            self.facts.insert(k.clone(), v.clone());
        }
        self.phase = match self.phase {
            Phase::Open => Phase::Active,
            p => p,
        };
        self.gm_replies += 1;
        self.rejected = 0;
        self.rewriting = false;
        self.sent_back = None;
    }

    fn acted_by(&mut self, seat: &str, text: &str) {
        self.action_sent_back = None;
        if self.acted >= self.seats.len() {
            self.acted = 0;
        }
        if self.acted == 0 {
            self.round += 1;
        }
        self.acted += 1;
        self.gm_replies = 0;
        let who = self
            .seat(seat)
            .map_or(seat.to_string(), |s| s.character.clone());
        self.public.push(format!("{who}: {text}"));
        self.history.push(Entry::new(
            Role::User,
            format!("{who} ({seat}): {text}"),
            false,
        ));
    }

    fn rolled(&mut self, seat: &str, roll: &D20Roll) {
        self.rolls += 1;
        let pending = self.pending.take();
        if let Some(check) = pending.as_ref().and_then(|p| p.check.clone())
            && roll.success
        {
            self.succeeded.insert(check);
        }
        let what = pending.map(|p| p.what).unwrap_or_default();
        let who = self
            .seat(seat)
            .map_or(seat.to_string(), |s| s.character.clone());
        let dice: Vec<String> = roll.dice.iter().map(u32::to_string).collect();
        let text = format!(
            "roll: {who} for {what}: d20 [{}] kept {}, total {} against DC {}: {}",
            dice.join(", "),
            roll.kept,
            roll.total,
            roll.dc,
            if roll.success { "success" } else { "failure" }
        );
        self.history.push(Entry::new(Role::User, text, false));
        let result = if roll.success { "success" } else { "failure" };
        self.public
            .push(format!("{who} rolls for {what}: {} ({result})", roll.total));
    }
}

/// The facts the GM asked for (all when `keys` is empty), in key order.
pub fn recall(facts: &BTreeMap<String, String>, keys: &[String]) -> Vec<(String, String)> {
    facts
        .iter()
        .filter(|(k, _)| keys.is_empty() || keys.iter().any(|q| q.eq_ignore_ascii_case(k)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn or_none(lines: &[String]) -> String {
    if lines.is_empty() {
        "(nothing settled yet)".to_string()
    } else {
        lines.join("; ")
    }
}

/// The events still in force: those not taken back by an `undone`.
pub fn live(events: &[Envelope]) -> Vec<&Envelope> {
    let mut out: Vec<&Envelope> = Vec::new();
    for env in events {
        if let EncounterEvent::Undone { from } = env.event {
            out.retain(|e| e.seq < from);
        } else {
            out.push(env);
        }
    }
    out
}

/// What the table hears when someone sits down at a running table.
pub fn joined_line(seat: &Seat) -> String {
    format!(
        "{} joins the table, playing {}.",
        seat.player, seat.character
    )
}

/// What the table hears of something a person said while they waited to be seated.
pub fn held_line(who: &str, text: &str) -> String {
    format!("{who} (before sitting down): {text}")
}

/// Fold a run's events into its state; None when the log does not start the encounter.
pub fn fold(events: &[Envelope]) -> Option<State> {
    fold_with(events, |_, _| {})
}

/// Fold a run's events, handing each live event after the first to `each` with the state
/// after it (how a table rebuilds what its seats were shown).
pub fn fold_with(events: &[Envelope], mut each: impl FnMut(&State, &Envelope)) -> Option<State> {
    let live = live(events);
    let mut state = State::start(&live.first()?.event)?;
    for env in live.iter().skip(1) {
        state.apply(env);
        each(&state, env);
    }
    state.seq = events.last().map_or(0, |e| e.seq);
    Some(state)
}

/// Where `undo` takes the run back to: the start of the last round of player actions (or of
/// the GM's answer to it when nothing followed it yet), or None when there is nothing to undo.
pub fn undo_point(events: &[Envelope], seats: usize) -> Option<u64> {
    let live = live(events);
    let acts: Vec<u64> = live
        .iter()
        .filter(|e| matches!(e.event, EncounterEvent::PlayerActed { .. }))
        .map(|e| e.seq)
        .collect();
    let n = acts.len();
    if n == 0 || seats == 0 {
        return None;
    }
    let round_start = (n - 1) / seats * seats;
    acts.get(round_start).copied()
}

/// The `undone` event that takes back the run's last round ([`undo_point`]), numbered after
/// the log's last event: what `troupe encounter undo` and a table's GM page record, alike.
/// None when there is no round of player actions to take back.
pub fn undo_event(events: &[Envelope]) -> Option<Envelope> {
    let seats = fold(events).map_or(0, |s| s.seats.len());
    let from = undo_point(events, seats)?;
    Some(Envelope {
        seq: events.last().map_or(0, |e| e.seq + 1),
        event: EncounterEvent::Undone { from },
    })
}

/// Accepted GM reply: the events it makes, in order (tools after the narration).
pub fn reply_events(reply: &GmReply) -> Vec<EncounterEvent> {
    vec![EncounterEvent::Narrated {
        text: reply.narration.clone(),
        facts: reply.facts.clone(),
    }]
}
