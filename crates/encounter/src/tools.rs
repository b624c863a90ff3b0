//! The GM's tools: a registry of names, what each needs, and the checks a call must pass before
//! it runs. New tools (Foundry VTT's `foundry_lookup`, `foundry_reward`) are added here.

/// The encounter tools, always available unless the spec's `tools` leaves them out.
pub const ENCOUNTER_TOOLS: &[&str] = &[
    "skill_check_emit",
    "encounter_resolve",
    "context_recall",
    "goal_register",
];

/// The scene engine's tools (seed 004), available only when the spec has a scene.
pub const SCENE_TOOLS: &[&str] = &[
    "ask_roll",
    "attack",
    "move",
    "talk",
    "use_item",
    "get_info",
    "narrate_only",
    "apply_effects",
    "ask_clarifying",
];
