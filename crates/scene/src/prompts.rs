//! The scene's prompt templates (seed 004): the AI speaker's (its system message and its
//! turn), the polish's, and the model planner's. Markdown files under `crates/scene/prompts/`,
//! embedded at build, in the one prompt registry ([`troupe_prompts::Prompts`]) where a
//! campaign's `prompts/` folder overrides them by name. The engine renders the speaker's and
//! the polish's; [`crate::planner::model_ask`] the planner's.

use troupe_prompts::Template;

/// The embedded templates, by file name (`scene_` first: one folder overrides every game's).
pub const TEMPLATES: &[Template] = &[
    (
        "scene_player.md",
        include_str!("../prompts/scene_player.md"),
    ),
    (
        "scene_player_turn.md",
        include_str!("../prompts/scene_player_turn.md"),
    ),
    (
        "scene_polish.md",
        include_str!("../prompts/scene_polish.md"),
    ),
    (
        "scene_planner_system.md",
        include_str!("../prompts/scene_planner_system.md"),
    ),
    (
        "scene_planner_ask.md",
        include_str!("../prompts/scene_planner_ask.md"),
    ),
];

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
