//! Reading one logged event (a JSON object) by field name, and who sits at the table.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

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

pub fn agent(e: &Value) -> &str {
    s(e, "agent")
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
    pub fn from_events(events: &[Value]) -> Roster {
        let mut by_agent: BTreeMap<String, SeatInfo> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut roster = Roster::default();
        for e in events.iter().filter(|e| ty(e) == "session_started") {
            let Some(c) = e.get("campaign") else { continue };
            roster.campaign = opt(c, "name").map(String::from).or(roster.campaign);
            roster.gm = opt(c, "gm_name").map(String::from).or(roster.gm);
            for seat in c
                .get("seats")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let p = seat.get("player").unwrap_or(&Value::Null);
                let ch = seat.get("character").unwrap_or(&Value::Null);
                let id = s(p, "agent_id").to_string();
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
                        player: opt(p, "name").unwrap_or(&id).to_string(),
                        character_id: s(ch, "character_id").to_string(),
                        character: opt(ch, "name").unwrap_or(&id).to_string(),
                    },
                );
            }
        }
        for e in events {
            let a = agent(e);
            // A model call outside the two seat layers (the memory's fact extraction) is not
            // someone at the table.
            let seat_layer =
                ty(e) != "model_call" || matches!(s(e, "layer"), "player" | "character");
            if !a.is_empty() && seat_layer && !by_agent.contains_key(a) {
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
    use super::*;
    use serde_json::json;

    #[test]
    fn the_roster_comes_from_session_started_and_fills_in_strangers() {
        let events = vec![
            json!({"event_type": "session_started", "campaign": {"name": "V", "gm_name": "Ryan",
                "seats": [{"player": {"agent_id": "alex", "name": "Alex"},
                           "character": {"character_id": "zara", "name": "Zara-7"}}]}}),
            json!({"event_type": "directive", "agent": "sam"}),
            json!({"event_type": "model_call", "agent": "memory", "layer": "memory"}),
        ];
        let r = Roster::from_events(&events);
        assert_eq!(r.agents(), ["alex", "sam"]);
        assert_eq!(r.character("alex"), "Zara-7");
        assert_eq!(r.agent_of("zara"), "alex");
        assert_eq!(r.player("sam"), "sam");
        assert_eq!(r.gm.as_deref(), Some("Ryan"));
    }
}
