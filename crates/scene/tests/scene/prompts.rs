//! The scene's prompts, whole (a change to a template shows here as a diff to review): the AI
//! speaker's system message (with a campaign player's name, and without) and its turn, and the
//! polish's. The planner's is snapshotted beside `model_ask`.
//!
//!     INSTA_UPDATE=always cargo test -p troupe-scene --test scene prompts   # then read the diff

use troupe_prompts::Prompts;
use troupe_scene::prompts::TEMPLATES;

fn prompts() -> Prompts {
    Prompts::embedded(&[TEMPLATES])
}

#[test]
fn scene_prompts() {
    let prompts = prompts();
    let speaker = |name: Option<&str>| {
        let ctx = serde_json::json!({
            "name": name,
            "character": "Wren",
            "goal": "Solve the puzzle",
            "scene_goal": "Find the smuggler's ledger before the alarm is raised",
        });
        prompts.render("scene_player.md", ctx).unwrap()
    };
    insta::assert_snapshot!("scene_player", speaker(Some("Alex")));
    insta::assert_snapshot!("scene_player_unnamed", speaker(None));
    let polish = serde_json::json!({"tone": ["tense", "wry"]});
    insta::assert_snapshot!(
        "scene_polish",
        prompts.render("scene_polish.md", polish).unwrap()
    );
}

/// The speaker's turn is the character's view and the last narration, byte for byte as the
/// engine wrote it inline before it was a template (the view's indent, its trailing spaces and
/// its closing newline kept).
#[test]
fn the_speakers_turn_keeps_the_view_as_it_is() {
    let view = "Wren — 12/12 hp, guard 0, marks 0 — in the mill road\n  here: Old Tam (6/6 hp)\nclocks: \ntags: \n";
    let last = "Wren moves from the mill road to the mill yard.  ";
    let ctx = serde_json::json!({"view": view, "last": last});
    let turn = prompts().render_exact("scene_player_turn.md", ctx).unwrap();
    assert_eq!(turn, format!("{view}\nLast: {last}"));
}
