//! Reading one logged row (a JSON object) by field name, for what every row has whatever its
//! kind (its place in the log) and for the logs read as logged; and who sits at the table.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use troupe_lasers::Event;

use crate::lasers;

/// Text that says something, owned.
fn nonempty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

pub fn ty(e: &Value) -> &str {
    e.get("event_type").and_then(Value::as_str).unwrap_or("")
}

pub fn num(e: &Value, field: &str) -> u64 {
    e.get(field).and_then(Value::as_u64).unwrap_or(0)
}

pub fn session(e: &Value) -> u32 {
    u32::try_from(num(e, "session_number")).unwrap_or(u32::MAX)
}

pub fn seq(e: &Value) -> u64 {
    num(e, "seq")
}

/// A string field, or "" when absent or not a string.
pub fn s<'a>(e: &'a Value, field: &str) -> &'a str {
    e.get(field).and_then(Value::as_str).unwrap_or("")
}

/// A string field that may be null or absent.
pub fn opt<'a>(e: &'a Value, field: &str) -> Option<&'a str> {
    e.get(field)
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
}

/// The anchor of a turn in the report's transcript.
pub fn turn_anchor(session: u32, turn: u32) -> String {
    format!("s{session}-turn-{turn}")
}

/// The anchor of one event in the report's transcript.
pub fn event_anchor(session: u32, seq: u64) -> String {
    format!("s{session}-ev-{seq}")
}

/// Every `event_type` in these events, sorted.
pub fn event_types(events: &[Value]) -> BTreeSet<String> {
    events.iter().map(|e| ty(e).to_string()).collect()
}

/// One seat: the AI player and the character it plays.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeatInfo {
    pub agent: String,
    pub player: String,
    pub character_id: String,
    pub character: String,
}

/// The seats named in the logs' `session_started` events (the latest wins), plus any agent
/// seen in events without one, so nobody drops out of a chart.
#[derive(Clone, Debug, Default)]
pub struct Roster {
    pub seats: Vec<SeatInfo>,
    pub campaign: Option<String>,
    pub gm: Option<String>,
}

impl Roster {
    /// The roster of these rows, read as Lasers & Feelings' events (a newer troupe's kinds and
    /// rows that do not read name no one).
    pub fn from_events(events: &[Value]) -> Roster {
        Roster::from_read(&lasers::read(events))
    }

    /// The roster of rows already read.
    pub(crate) fn from_read(read: &[lasers::Row]) -> Roster {
        let mut by_agent: BTreeMap<String, SeatInfo> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut roster = Roster::default();
        for env in lasers::known(read) {
            let Event::SessionStarted { campaign: c, .. } = &env.event else {
                continue;
            };
            roster.campaign = nonempty(&c.name).or(roster.campaign);
            roster.gm = nonempty(&c.gm_name).or(roster.gm);
            for seat in &c.seats {
                let (p, ch) = (&seat.player, &seat.character);
                let id = p.agent_id.clone();
                if id.is_empty() {
                    continue;
                }
                if !order.contains(&id) {
                    order.push(id.clone());
                }
                by_agent.insert(
                    id.clone(),
                    SeatInfo {
                        agent: id.clone(),
                        player: nonempty(&p.name).unwrap_or_else(|| id.clone()),
                        character_id: ch.character_id.clone(),
                        character: nonempty(&ch.name).unwrap_or_else(|| id.clone()),
                    },
                );
            }
        }
        for a in lasers::known(read).filter_map(|env| lasers::seat_agent(&env.event)) {
            if !a.is_empty() && !by_agent.contains_key(a) {
                order.push(a.to_string());
                by_agent.insert(
                    a.to_string(),
                    SeatInfo {
                        agent: a.to_string(),
                        player: a.to_string(),
                        character_id: String::new(),
                        character: a.to_string(),
                    },
                );
            }
        }
        roster.seats = order
            .iter()
            .filter_map(|a| by_agent.get(a).cloned())
            .collect();
        roster
    }

    pub fn seat(&self, agent: &str) -> Option<&SeatInfo> {
        self.seats.iter().find(|s| s.agent == agent)
    }

    /// The player's name for an agent id.
    pub fn player(&self, agent: &str) -> String {
        self.seat(agent)
            .map_or_else(|| agent.to_string(), |s| s.player.clone())
    }

    /// The character's name for an agent id.
    pub fn character(&self, agent: &str) -> String {
        self.seat(agent)
            .map_or_else(|| agent.to_string(), |s| s.character.clone())
    }

    /// The agent behind an id that may name an agent or a character (a helper's target is a
    /// character id in the log).
    pub fn agent_of(&self, id: &str) -> String {
        self.seats
            .iter()
            .find(|s| s.agent == id || s.character_id == id)
            .map_or_else(|| id.to_string(), |s| s.agent.clone())
    }

    pub fn agents(&self) -> Vec<String> {
        self.seats.iter().map(|s| s.agent.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::lasers::rows::row;
    use serde_json::json;

    #[test]
    fn the_roster_comes_from_session_started_and_fills_in_strangers() {
        let mut start = row(json!({"event_type": "session_started"}));
        start["campaign"]["name"] = json!("V");
        start["campaign"]["gm_name"] = json!("Ryan");
        start["campaign"]["seats"] = json!([start["campaign"]["seats"][0]]);
        let events = vec![
            start,
            row(json!({"event_type": "directive", "agent": "sam"})),
            row(json!({"event_type": "model_call", "agent": "memory", "layer": "memory"})),
            // A newer troupe's kind names no one.
            json!({"seq": 9, "event_type": "weather_changed", "agent": "jo"}),
        ];
        let r = Roster::from_events(&events);
        assert_eq!(r.agents(), ["alex", "sam"]);
        assert_eq!(r.character("alex"), "Zara-7");
        assert_eq!(r.agent_of("zara"), "alex");
        assert_eq!(r.player("sam"), "sam");
        assert_eq!(r.gm.as_deref(), Some("Ryan"));
    }
}
