//! What a person at the encounter's table may look up (`/info`): their character, the place,
//! who is there and the story so far. Built from the state for one seat, from what the table
//! knows only: the GM's secrets are never in it.

use serde::{Deserialize, Serialize};

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

/// How many lines of the table's story a player's seat is shown when asked what it attempts
/// (newest last): an AI player's prompt carries them.
pub const PLAYER_STORY_LINES: usize = 30;

/// What a player's seat is shown when asked what its character attempts, whoever holds it: an
/// AI player's prompt is made of it alone, and a person's page gets the same. Built from the
/// state for one seat, from what the players know: the NPCs as they are introduced, the goals
/// unless they are hidden, the table's sportsmanship rules, the public story, and why this
/// seat's last action was sent back. The GM's secrets are never in it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlayerView {
    pub player: String,
    pub character: String,
    pub about: String,
    pub title: String,
    pub location: String,
    pub mood: String,
    pub npcs: Vec<PublicNpc>,
    pub goals: Vec<String>,
    pub sportsmanship: Vec<String>,
    /// The story's last lines, oldest first.
    pub story: Vec<String>,
    /// Why the overreach check sent this seat's action back, while its rewrite is awaited.
    pub feedback: Option<String>,
}

/// An NPC as the players know them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PublicNpc {
    pub name: String,
    pub role: String,
}

/// The seat's view when asked for an action, or None when there is no such seat.
pub fn player_view(state: &State, seat_id: &str) -> Option<PlayerView> {
    let seat = state.seat(seat_id)?;
    let spec = &state.spec;
    let goals = if spec.goals.hidden {
        Vec::new()
    } else {
        spec.goals().map(|g| g.label.clone()).collect()
    };
    let start = state.public.len().saturating_sub(PLAYER_STORY_LINES);
    Some(PlayerView {
        player: seat.player.clone(),
        character: seat.character.clone(),
        about: seat.about.clone(),
        title: spec.title.clone(),
        location: spec.setting.location.clone(),
        mood: spec.setting.mood.clone(),
        npcs: spec
            .npcs
            .iter()
            .map(|n| PublicNpc {
                name: npc_name(n, &state.names),
                role: n.role.clone(),
            })
            .collect(),
        goals,
        sportsmanship: spec.sportsmanship.clone(),
        story: state.public.get(start..).unwrap_or_default().to_vec(),
        feedback: state.sent_back_to(seat_id).map(|s| s.feedback.clone()),
    })
}
