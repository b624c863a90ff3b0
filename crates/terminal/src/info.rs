//! What `/info` shows, and short renderings shared by the seats and the story view.

use troupe_agents::GmView;
use troupe_lasers::Session;

/// `/info` at a GM prompt: the same sheets, from what the GM sees.
pub fn gm_info(v: &GmView) -> String {
    let mut out = format!(
        "{} — GM {}\nShip: {} (strengths: {}; problem: {})\nDay {}, turn {}, phase: {}\n",
        v.campaign_name,
        v.gm_name,
        v.ship.name,
        v.ship
            .strengths
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        v.ship.problem,
        v.day,
        v.turn,
        v.phase,
    );
    for seat in &v.table {
        out.push_str(&sheet(&seat.character, &seat.player_name));
    }
    out
}

/// A character sheet in a few lines, with who plays it.
pub fn sheet(ch: &troupe_campaign::CharacterSheet, player: &str) -> String {
    let mut out = format!(
        "\n{} ({}) — {} {}, number {}\n  goal: {}\n  equipment: {}\n",
        ch.name,
        player,
        ch.style,
        ch.role,
        ch.number.get(),
        ch.character_goal,
        ch.equipment.join(", "),
    );
    if !ch.speech_patterns.is_empty() {
        out.push_str(&format!("  speech: {}\n", ch.speech_patterns.join("; ")));
    }
    out
}

/// The character's display name for an agent id.
pub fn player_name(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map(|x| x.player.name.clone())
        .unwrap_or_else(|| agent.to_string())
}
