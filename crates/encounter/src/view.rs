//! What a person at the encounter's table may look up (`/info`): their character, the place,
//! who is there and the story so far. Built from the state for one seat, from what the table
//! knows only: the GM's secrets are never in it.

use crate::log::State;
use crate::names::{fill, npc_name};

/// How many lines of the story `/info` repeats (newest last).
const STORY_LINES: usize = 5;

/// The seat's view as lines of text, or None when there is no such seat.
pub fn seat_info(state: &State, seat_id: &str) -> Option<String> {
    let seat = state.seat(seat_id)?;
    let spec = &state.spec;
    let mut out = vec![format!("You play {}.", seat.character)];
    if !seat.about.trim().is_empty() {
        out.push(format!("  {}", seat.about.trim()));
    }
    out.push(format!(
        "Where: {} ({})",
        spec.title,
        fill(spec.setting.location.trim(), &state.names)
    ));
    let npcs: Vec<String> = spec
        .npcs
        .iter()
        .map(|n| format!("{} ({})", npc_name(n, &state.names), n.role))
        .collect();
    if !npcs.is_empty() {
        out.push(format!("Here: {}", npcs.join("; ")));
    }
    let others: Vec<String> = state
        .seats
        .iter()
        .filter(|s| s.id != seat.id)
        .map(|s| format!("{} (played by {})", s.character, s.player))
        .collect();
    if !others.is_empty() {
        out.push(format!("At the table: {}", others.join("; ")));
    }
    if !spec.goals.hidden {
        let goals: Vec<&str> = spec.goals().map(|g| g.label.as_str()).collect();
        out.push(format!("Goals: {}", goals.join("; ")));
    }
    out.push(format!("Round {}.", state.round.max(1)));
    let start = state.public.len().saturating_sub(STORY_LINES);
    let story = state.public.get(start..).unwrap_or_default();
    if !story.is_empty() {
        out.push("Lately:".to_string());
        out.extend(story.iter().map(|l| format!("  {l}")));
    }
    Some(out.join("\n"))
}
