//! The GM's scorecard of a run, for researchers: how often its replies were refused (by the
//! reply schema or by the engine's checks), how often its narration leaked and was rewritten
//! or withheld, and what a GM turn cost in tokens and time.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::log::{EncounterEvent, Envelope, SeatKind, live};

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Scorecard {
    /// Rounds of player actions begun.
    pub rounds: u32,
    pub resolved: bool,
    /// Replies the GM gave that were shown (after any rewrite).
    pub gm_turns: u32,
    /// Model calls the engine received (refused shapes not counted).
    pub gm_calls: u32,
    /// Replies refused for their shape by the reply schema (the gateway's repair).
    pub refused_by_schema: u32,
    /// Replies that fit the schema but failed the engine's checks of their tools.
    pub refused_by_engine: u32,
    /// Narrations that told a secret or decided for a player character.
    pub leaks_caught: u32,
    /// Leaking narrations rewritten cleanly after being sent back.
    pub rewrites: u32,
    /// Rewrites that leaked again, shown with the leaking sentences withheld.
    pub withheld: u32,
    pub checks: u32,
    pub successes: u32,
    /// AI players' actions sent back for saying what happens.
    pub actions_sent_back: u32,
    /// People's actions the same check flagged (a person rephrases; not an AI player's).
    #[serde(default)]
    pub people_actions_flagged: u32,
    /// GM calls whose history was trimmed to fit the window.
    pub trimmed_calls: u32,
    pub tokens_in_per_gm_turn: f64,
    pub tokens_out_per_gm_turn: f64,
    /// Median latency of a GM call, in milliseconds.
    pub median_gm_latency_ms: u64,
}

pub fn scorecard(events: &[Envelope]) -> Scorecard {
    let mut s = Scorecard::default();
    let (mut tokens_in, mut tokens_out) = (0u64, 0u64);
    let mut latencies = Vec::new();
    let mut sent_back = false;
    let mut seats = 0usize;
    let mut acted = 0usize;
    // Who plays each seat as the run goes: a person, or an AI player (seats join and change
    // hands mid-run).
    let mut person: BTreeMap<&str, bool> = BTreeMap::new();
    for env in live(events) {
        match &env.event {
            EncounterEvent::Started { seats: all, .. } => {
                seats = all.len().max(1);
                for seat in all {
                    person.insert(&seat.id, seat.kind == SeatKind::Person);
                }
            }
            EncounterEvent::SeatJoined { seat } => {
                person.insert(&seat.id, seat.kind == SeatKind::Person);
            }
            EncounterEvent::SeatHanded {
                seat,
                person: by_person,
            } => {
                person.insert(seat, *by_person);
            }
            EncounterEvent::GmCalled { call, trimmed, .. } => {
                s.gm_calls += 1;
                // A damaged log may count anything: the sums saturate.
                tokens_in = tokens_in.saturating_add(call.tokens_in);
                tokens_out = tokens_out.saturating_add(call.tokens_out);
                latencies.push(call.latency_ms);
                s.trimmed_calls += u32::from(*trimmed > 0);
            }
            EncounterEvent::GmRejected { reply, .. } => match reply {
                Some(_) => s.refused_by_schema += 1,
                None => s.refused_by_engine += 1,
            },
            EncounterEvent::LeakCaught { withheld, .. } => {
                s.leaks_caught += 1;
                s.withheld += u32::from(*withheld);
                sent_back = !withheld;
            }
            EncounterEvent::Narrated { .. } => {
                s.gm_turns += 1;
                s.rewrites += u32::from(sent_back);
                sent_back = false;
            }
            EncounterEvent::PlayerActed { .. } => {
                s.rounds += u32::from(acted.is_multiple_of(seats));
                acted += 1;
            }
            EncounterEvent::CheckRolled { roll, .. } => {
                s.checks += 1;
                s.successes += u32::from(roll.success);
            }
            EncounterEvent::Resolved { .. } => s.resolved = true,
            EncounterEvent::ActionSentBack { seat, .. } => {
                if person.get(seat.as_str()).copied().unwrap_or(false) {
                    s.people_actions_flagged += 1;
                } else {
                    s.actions_sent_back += 1;
                }
            }
            _ => {}
        }
    }
    let turns = f64::from(s.gm_turns.max(1));
    s.tokens_in_per_gm_turn = tokens_in as f64 / turns;
    s.tokens_out_per_gm_turn = tokens_out as f64 / turns;
    latencies.sort_unstable();
    s.median_gm_latency_ms = latencies.get(latencies.len() / 2).copied().unwrap_or(0);
    s
}
