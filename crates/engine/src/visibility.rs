//! Views: the only way session state reaches a prompt. Each view is built for one layer of one
//! agent by the channel rules: a character sees the fiction, its own sheet and its own player's
//! directive (P2C); the player sees the fiction, its own profile, and its questions and answers.

use troupe_agents::{CharacterView, PlayerView, TurnRecap};
use troupe_rules::RollResult;

use crate::Session;
use crate::memory::RecallLayer;

/// How many earlier turns a prompt recalls.
pub const RECENT_TURNS: usize = 3;

fn recent(s: &Session) -> Vec<TurnRecap> {
    let skip = s.history.len().saturating_sub(RECENT_TURNS);
    s.history[skip..].to_vec()
}

/// What this layer of `agent` recalled this turn. A character gets only what its own layer
/// recalled (party and character memory), never its player's.
fn memories(s: &Session, agent: &str, layer: RecallLayer) -> Vec<String> {
    s.turn
        .recalled
        .get(agent)
        .map(|r| {
            r.iter()
                .filter(|m| m.layer == layer)
                .map(|m| m.line())
                .collect()
        })
        .unwrap_or_default()
}

/// The player layer's view for `agent`, or None for an agent not at the table.
pub fn player_view(s: &Session, agent: &str) -> Option<PlayerView> {
    let campaign = s.campaign.as_ref()?;
    let seat = s.seat(agent)?;
    Some(PlayerView {
        agent_id: agent.to_string(),
        gm_name: campaign.gm_name.clone(),
        ship: campaign.ship.clone(),
        player: seat.player.clone(),
        character: seat.character.clone(),
        recent: recent(s),
        narration: s.turn.narration.clone().unwrap_or_default(),
        clarifications: s.turn.clarifications.clone(),
        memories: memories(s, agent, RecallLayer::Player),
        insight: s.insight(agent),
    })
}

/// The character layer's view for `agent`'s character.
pub fn character_view(s: &Session, agent: &str) -> Option<CharacterView> {
    let campaign = s.campaign.as_ref()?;
    let seat = s.seat(agent)?;
    let track = s.turn.actions.get(agent);
    Some(CharacterView {
        agent_id: agent.to_string(),
        ship: campaign.ship.clone(),
        character: seat.character.clone(),
        recent: recent(s),
        narration: s.turn.narration.clone().unwrap_or_default(),
        clarifications: s.turn.clarifications.clone(),
        memories: memories(s, agent, RecallLayer::Character),
        directive: s.turn.directives.get(agent).cloned().unwrap_or_default(),
        others: s
            .seats()
            .iter()
            .filter(|x| x.player.agent_id != agent)
            .map(|x| x.character.character_id.clone())
            .collect(),
        gm_note: track.and_then(|t| t.gm_note.clone()),
        insight: s.insight(agent),
        action: track.and_then(|t| {
            t.final_text
                .clone()
                .or_else(|| t.attempts.last().map(|a| a.action.clone()))
        }),
        roll: s.turn.rolls.get(agent).map(describe_roll),
        outcome: s.turn.outcome.clone(),
    })
}

/// One line a person (or a model) can read: "lasers, number 4: [2, 6] → 1 success (complication)".
pub fn describe_roll(r: &RollResult) -> String {
    let faces: Vec<String> = r
        .dice
        .iter()
        .map(|d| {
            if d.laser_feelings {
                format!("{}!", d.face)
            } else {
                d.face.to_string()
            }
        })
        .collect();
    let plural = if r.successes == 1 { "" } else { "es" };
    format!(
        "{}, number {}: [{}] → {} success{} ({}){}",
        r.task,
        r.number.get(),
        faces.join(", "),
        r.successes,
        plural,
        r.outcome.describe(),
        if r.laser_feelings() {
            " — LASER FEELINGS"
        } else {
            ""
        }
    )
}
