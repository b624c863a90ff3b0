//! The prompts of an encounter, from the files in `prompts/`: the GM's (its secrets included,
//! assembled within the budget zones) and each AI player's (only what the table knows). They
//! are templates of the one prompt registry ([`troupe_prompts::Prompts`]): a campaign's
//! `prompts/` folder overrides them by name, like every game's.

use std::sync::LazyLock;

use minijinja::context;
use serde::Serialize;
use troupe_prompts::{Prompts, Template};

use crate::budget::{Assembled, Budget, Entry, Role, assemble};
use crate::log::State;
use crate::names::npc_name;
use crate::spec::RulesKind;
use crate::tools::{Table, describe, reply_schema};
use crate::view::PlayerView;

/// The embedded templates, by file name (`encounter_` first: one folder overrides every game's).
pub const TEMPLATES: &[Template] = &[
    (
        "encounter_gm_system.md",
        include_str!("../prompts/encounter_gm_system.md"),
    ),
    (
        "encounter_gm_turn.md",
        include_str!("../prompts/encounter_gm_turn.md"),
    ),
    (
        "encounter_player_system.md",
        include_str!("../prompts/encounter_player_system.md"),
    ),
    (
        "encounter_player_turn.md",
        include_str!("../prompts/encounter_player_turn.md"),
    ),
];

/// The embedded templates alone, parsed once for the process (every GM turn renders two of
/// them): for a table without a campaign's overrides, the tests and the benchmarks.
pub fn embedded() -> &'static Prompts {
    static EMBEDDED: LazyLock<Prompts> = LazyLock::new(|| Prompts::embedded(&[TEMPLATES]));
    &EMBEDDED
}

#[derive(Serialize)]
struct NpcCtx {
    name: String,
    role: String,
    persona: String,
    memories: Vec<String>,
}

/// The table as the GM's tool checks see it.
pub fn table(state: &State) -> (Vec<(String, String)>, bool) {
    let seats = state
        .seats
        .iter()
        .map(|s| (s.id.clone(), s.character.clone()))
        .collect();
    (seats, state.scene.is_some())
}

fn npcs(state: &State) -> Vec<NpcCtx> {
    state
        .spec
        .npcs
        .iter()
        .map(|n| NpcCtx {
            name: npc_name(n, &state.names),
            role: n.role.clone(),
            persona: n.persona.clone(),
            memories: state
                .memories
                .iter()
                .filter(|m| m.npc == n.id)
                .flat_map(|m| m.lines.clone())
                .collect(),
        })
        .collect()
}

/// The GM's system prompt: the whole encounter, secrets included.
pub fn gm_system(
    prompts: &Prompts,
    state: &State,
    seats: &[(String, String)],
) -> Result<String, troupe_prompts::Error> {
    let spec = &state.spec;
    let (_, has_scene) = table(state);
    let t = Table {
        spec,
        extra_goals: &state.extra_goals,
        seats,
        has_scene,
    };
    let tools: Vec<String> = t
        .allowed()
        .iter()
        .map(|name| describe(name).to_string())
        .collect();
    let goals: Vec<_> = spec.goals().chain(&state.extra_goals).collect();
    let ambient = crate::names::fill(&spec.setting.ambient_npcs, &state.names);
    prompts.render(
        "encounter_gm_system.md",
        context! {
            title => spec.title, tone => spec.tone,
            lasers => spec.rules == RulesKind::LasersFeelings,
            location => spec.setting.location, mood => spec.setting.mood, ambient,
            npcs => npcs(state), seats => state.seats, hidden => spec.goals.hidden,
            goals, checks => spec.checks, notes => spec.gm_notes,
            sportsmanship => spec.sportsmanship, tools,
        },
    )
}

/// The GM's messages for its next reply, within the budget zones of its window.
pub fn gm_messages(prompts: &Prompts, state: &State) -> Result<Assembled, troupe_prompts::Error> {
    let (seats, _) = table(state);
    let system = gm_system(prompts, state, &seats)?;
    let facts: Vec<String> = state
        .facts
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let roll = state
        .history
        .last()
        .is_some_and(|e| e.role == Role::User && e.text.starts_with("roll: "));
    let turn = prompts.render(
        "encounter_gm_turn.md",
        context! {
            open => state.history.is_empty(),
            opening => crate::names::fill(&state.spec.opening, &state.names),
            roll, facts => facts.join("; "), sent_back => state.sent_back,
        },
    )?;
    // The turn's instruction is pinned and comes last. It is added after the assembly, with
    // its tokens taken from the window first, so the history is not copied to append it.
    let turn = Entry::new(Role::User, turn, true);
    let mut budget = Budget::for_window(state.window);
    budget.window = budget.window.saturating_sub(turn.tokens);
    let mut assembled = assemble(&system, &state.history, &budget);
    assembled.zones.pinned += turn.tokens;
    assembled.messages.push((turn.role, turn.text));
    Ok(assembled)
}

/// The schema of the GM's reply at this table.
pub fn gm_schema(state: &State) -> serde_json::Value {
    let (seats, has_scene) = table(state);
    reply_schema(&Table {
        spec: &state.spec,
        extra_goals: &state.extra_goals,
        seats: &seats,
        has_scene,
    })
}

/// An AI player's system prompt and its turn, made of its seat's view alone.
pub fn player_messages(
    prompts: &Prompts,
    view: &PlayerView,
) -> Result<Vec<(Role, String)>, troupe_prompts::Error> {
    let npcs: Vec<_> = view
        .npcs
        .iter()
        .map(|n| context! { name => n.name, role => n.role })
        .collect();
    let system = prompts.render(
        "encounter_player_system.md",
        context! {
            player => view.player, character => view.character, about => view.about,
            title => view.title, location => view.location, mood => view.mood,
            npcs, goals => view.goals, sportsmanship => view.sportsmanship,
        },
    )?;
    let turn = prompts.render(
        "encounter_player_turn.md",
        context! {
            story => view.story.join("\n"), character => view.character,
            feedback => view.feedback,
        },
    )?;
    Ok(vec![(Role::System, system), (Role::User, turn)])
}

/// The schema of an AI player's reply.
pub fn player_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {"action": {"type": "string"}, "dialogue": {"type": "string"}},
        "required": ["action", "dialogue"]
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_embedded_template_compiles() {
        assert_eq!(
            troupe_prompts::problems(&[super::TEMPLATES]),
            Vec::<String>::new()
        );
    }
}
