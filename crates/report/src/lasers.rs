//! A Lasers & Feelings session's rows read as the game's own events, for the session readers
//! (the metrics, the flags, the audit, the costs, the scorecard, the report).
//!
//! The rows are loaded as JSON (`source`), so that a log from a newer troupe still loads; they
//! are read here, once, through [`Known`]: a kind this build knows as its `Event`, a newer
//! troupe's kind as unknown (skipped by every figure), a known kind that does not read as
//! unreadable, kept with why so that a reader says so instead of counting on without it.

use serde::Serialize;
use serde_json::Value;
use troupe_lasers::{Envelope, Event};

use crate::ev::{seq, session};
use crate::known::Known;

/// One row of a session's log, read as Lasers & Feelings' event.
pub(crate) type Row = Known<Envelope>;

/// Every row, in order.
pub(crate) fn read(events: &[Value]) -> Vec<Row> {
    Known::read_all(events)
}

/// The events this build knows, in log order: a newer troupe's kinds and unreadable rows left
/// out (the latter are named by [`unreadable`]).
pub(crate) fn known(read: &[Row]) -> impl Iterator<Item = &Envelope> {
    read.iter().filter_map(Known::event)
}

/// A row of a kind this build knows that does not read as it: where it is and why, so that a
/// figure it would have counted in is not taken for the whole story.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    pub session: u32,
    pub seq: u64,
    pub event_type: String,
    pub error: String,
}

/// Every unreadable row, in log order.
pub(crate) fn unreadable(read: &[Row]) -> Vec<Unreadable> {
    read.iter()
        .filter_map(|k| match k {
            Known::Malformed {
                event_type,
                body,
                error,
            } => Some(Unreadable {
                session: session(body),
                seq: seq(body),
                event_type: event_type.clone(),
                error: error.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// The word a value is logged as (a layer, a verdict's result, a stance): what the readers
/// showed and counted by when they read the rows as JSON.
pub(crate) fn logged_word(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(word)) => word,
        _ => String::new(),
    }
}

/// The agent at the table an event names: the player (and its character) whose decision,
/// roll, call or seat it is. A model call outside the two seat layers (the memory's fact
/// extraction, the AI GM's) names no one at the table.
pub(crate) fn seat_agent(event: &Event) -> Option<&str> {
    Some(match event {
        Event::ModelCall { agent, layer, .. } => {
            let word = logged_word(layer);
            return (word == "player" || word == "character").then_some(agent.as_str());
        }
        // What happened to a seat's decision, and to the seat.
        Event::PhaseFailed { agent, .. }
        | Event::MemoryRetrieved { agent, .. }
        | Event::Validation { agent, .. }
        | Event::GmReviewedAction { agent, .. }
        | Event::GmAdjudication { agent, .. }
        | Event::DiceRolled { agent, .. }
        | Event::GmRollOverride { agent, .. }
        | Event::LaserFeelingsAnswer { agent, .. }
        | Event::GmFailureDecision { agent, .. }
        | Event::ContextTrimmed { agent, .. }
        | Event::SeatHanded { agent, .. } => agent,
        // The seat's own decisions.
        _ => return event.decision_agent(),
    })
}

/// Text a reader treats as absent when it is empty, as it did reading the JSON.
pub(crate) fn given(text: Option<&String>) -> Option<&str> {
    text.map(String::as_str).filter(|t| !t.is_empty())
}

/// A log's rows read once for every reader (`troupe stats` and `troupe report` ask several of
/// the same rows).
pub struct ReadLog<'a> {
    events: &'a [Value],
    read: Vec<Row>,
}

impl<'a> ReadLog<'a> {
    pub fn new(events: &'a [Value]) -> ReadLog<'a> {
        ReadLog {
            events,
            read: read(events),
        }
    }

    /// Every row as read, one per row of the log (for a reader of its own, the export's).
    pub fn rows(&self) -> &[Known<Envelope>] {
        &self.read
    }

    pub fn metrics(&self) -> crate::Metrics {
        crate::metrics::metrics_of(&self.read)
    }

    pub fn flags(&self) -> Vec<crate::Flag> {
        crate::flags::flags_of(&self.read)
    }

    pub fn scorecard(&self) -> Vec<crate::ModelScore> {
        crate::scorecard::scorecard_of(&self.read)
    }

    /// The scorecard of some of the rows (`rows()[range]`: one session's, say).
    pub fn scorecard_of(&self, range: std::ops::Range<usize>) -> Vec<crate::ModelScore> {
        crate::scorecard::scorecard_of(self.read.get(range).unwrap_or_default())
    }

    pub fn runs(&self) -> Vec<crate::RunRow> {
        crate::scorecard::runs_of(self.events, &self.read)
    }

    pub fn costs(&self) -> crate::Costs {
        crate::cost::costs_of(&self.read)
    }

    pub fn roster(&self) -> crate::Roster {
        crate::Roster::from_read(&self.read)
    }

    pub fn audit_with_games(&self, games: &crate::Games) -> crate::Audit {
        crate::audit::audit_with_games_of(self.events, &self.read, games)
    }

    /// The HTML report (`render_report`) on these rows.
    pub fn report(&self, title: &str, games: &crate::Games) -> String {
        crate::html::render_read(title, self.events, &self.read, games)
    }
}

#[cfg(test)]
pub(crate) mod rows {
    //! Rows for the readers' tests, built on a recorded session's rows (the fuzzer's party
    //! seed) so that they read as the game's events: the first row of a kind with the test's
    //! fields laid over it.
    #![allow(clippy::unwrap_used)]

    use serde_json::{Value, json};

    const PARTY: &str = include_str!("../../fuzz/data/party.session-1.jsonl");

    /// The recorded party session, row by row.
    pub fn party() -> Vec<Value> {
        PARTY
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The recorded party session with a row of `kind` from a newer troupe (with `fields`)
    /// in its middle.
    pub fn party_with_newer(kind: &str, fields: Value) -> Vec<Value> {
        let mut rows = party();
        let mut newer = json!({"seq": 900, "timestamp": "2026-11-24T02:00:00Z",
            "session_id": "s", "session_number": 1, "turn_number": 2, "phase": null,
            "event_type": kind});
        if let (Some(row), Some(extra)) = (newer.as_object_mut(), fields.as_object()) {
            row.extend(extra.clone());
        }
        rows.insert(rows.len() / 2, newer);
        rows
    }

    /// A row of `fields["event_type"]`: the recorded session's first of that kind (or an
    /// envelope alone for a kind it lacks) with `fields` laid over it.
    pub fn row(fields: Value) -> Value {
        let kind = fields["event_type"].as_str().unwrap().to_string();
        let mut row = party()
            .into_iter()
            .find(|r| r["event_type"] == kind.as_str())
            .unwrap_or_else(|| {
                json!({"seq": 0, "timestamp": "2026-11-24T01:59:28Z", "session_id": "s",
                    "session_number": 1, "turn_number": 1, "phase": null})
            });
        for (k, v) in fields.as_object().unwrap() {
            row[k] = v.clone();
        }
        row
    }
}
