//! What `/info` shows, and short renderings shared by the seats and the story view.

use troupe_engine::Session;

pub fn info(s: &Session) -> String {
    let Some(c) = s.campaign.as_ref() else {
        return "No campaign loaded yet.".into();
    };
    let mut out = format!(
        "{} — GM {}\nShip: {} (strengths: {}; problem: {})\nTurn {}, phase: {}\n",
        c.name,
        c.gm_name,
        c.ship.name,
        c.ship
            .strengths
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        c.ship.problem,
        s.turn_number,
        s.phase.map(|p| p.title()).unwrap_or("between turns"),
    );
    for seat in &c.seats {
        let ch = &seat.character;
        out.push_str(&format!(
            "\n{} ({}) — {} {}, number {}\n  goal: {}\n  equipment: {}\n",
            ch.name,
            seat.player.name,
            ch.style,
            ch.role,
            ch.number.get(),
            ch.character_goal,
            ch.equipment.join(", "),
        ));
        if !ch.speech_patterns.is_empty() {
            out.push_str(&format!("  speech: {}\n", ch.speech_patterns.join("; ")));
        }
    }
    out
}

/// The character's display name for an agent id.
pub fn character_name(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map(|x| x.character.name.clone())
        .unwrap_or_else(|| agent.to_string())
}

pub fn player_name(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map(|x| x.player.name.clone())
        .unwrap_or_else(|| agent.to_string())
}
