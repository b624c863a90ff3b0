//! A Lasers & Feelings encounter: the spec becomes the AI GM's adventure (its public premise and
//! its private notes), and the session runs through troupe's Lasers & Feelings turn cycle, where
//! the GM calls for L&F rolls and the AI players question, plan, discuss and act.

use crate::log::NpcMemory;
use crate::names::{Drawn, fill, npc_name};
use crate::spec::Spec;

/// The adventure for the AI GM: the premise it may tell (the place, the opening, who is there)
/// and the notes it must keep (the goals when hidden, the GM notes, the NPCs' personas and
/// memories, which the GM's output checks watch for).
pub fn scenario(spec: &Spec, names: &[Drawn], memories: &[NpcMemory]) -> (String, Vec<String>) {
    let who: Vec<String> = spec
        .npcs
        .iter()
        .map(|n| format!("{} ({})", npc_name(n, names), n.role))
        .collect();
    let mut text = format!(
        "{}. {} {} Around: {} Opening: {} People here: {}.",
        spec.title,
        spec.setting.location.trim(),
        spec.setting.mood.trim(),
        fill(spec.setting.ambient_npcs.trim(), names),
        fill(spec.opening.trim(), names),
        who.join(", ")
    );
    if !spec.sportsmanship.is_empty() {
        text.push_str(&format!(" Table rules: {}", spec.sportsmanship.join(" ")));
    }
    if !spec.goals.hidden {
        let goals: Vec<&str> = spec.goals().map(|g| g.label.as_str()).collect();
        text.push_str(&format!(" The party's goals: {}.", goals.join("; ")));
    }
    (text, notes(spec, names, memories))
}

fn notes(spec: &Spec, names: &[Drawn], memories: &[NpcMemory]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    if spec.goals.hidden {
        for g in spec.goals() {
            notes.push(format!("Hidden goal {}: {}", g.id, g.label));
        }
    }
    for n in &spec.npcs {
        notes.push(format!(
            "{} plays as: {}",
            npc_name(n, names),
            n.persona.trim()
        ));
    }
    for m in memories {
        let name = spec
            .npc(&m.npc)
            .map_or(m.npc.clone(), |n| npc_name(n, names));
        for line in &m.lines {
            notes.push(format!("{name} remembers: {line}"));
        }
    }
    if let Some(gm) = &spec.gm_notes {
        notes.push(gm.trim().to_string());
    }
    notes
}
