//! The games troupe plays, listed once: the one place a new game is added. What is listed today
//! is each game's offer (how every surface opens a table of it, [`OFFERS`]) and its prompt
//! templates (Lasers & Feelings' players, characters, AI GM and memory extraction; the
//! encounter's; the scene's), which make the one prompt registry of a campaign, with the files of the campaign's `prompts/` folder replacing those of the same name. Built
//! once where a game starts, and handed to it: a bad override stops the start, before anything
//! is written.

use std::path::Path;
use std::sync::LazyLock;

use troupe_prompts::{Prompts, Template};
use troupe_seat::offer::Offer;

/// Every game as the surfaces open it (Discord's start commands, the host page's form, the
/// table commands a chat surface registers), in the order they are offered.
pub const OFFERS: &[&Offer] = &[
    &troupe_lasers::offer::OFFER,
    &troupe_encounter::offer::OFFER,
    &troupe_scene::offer::OFFER,
];

/// Every game's templates. Their names are unique across games (a game's own prefix), which
/// the tests check, so one folder of overrides serves them all.
pub const GAMES: &[&[Template]] = &[
    troupe_agents::TEMPLATES,
    troupe_encounter::prompt::TEMPLATES,
    troupe_scene::prompts::TEMPLATES,
];

/// Every game's embedded templates, parsed once for the process.
pub fn embedded() -> Prompts {
    static EMBEDDED: LazyLock<Prompts> = LazyLock::new(|| Prompts::embedded(GAMES));
    EMBEDDED.clone()
}

/// The campaign in `dir`: every game's templates with the overrides in `dir/prompts/`.
pub fn campaign(dir: &Path) -> Result<Prompts, troupe_prompts::Error> {
    Prompts::with_overrides(GAMES, &folder(dir))
}

/// The files in the campaign's `prompts/` that replace no game's template (a misspelt name
/// would otherwise never be read).
pub fn unused(dir: &Path) -> Vec<std::path::PathBuf> {
    troupe_prompts::unused_files(GAMES, &folder(dir))
}

/// The campaign's folder of overrides.
pub fn folder(dir: &Path) -> std::path::PathBuf {
    troupe_campaign::CampaignDir::new(dir).prompts()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_game_is_offered_under_a_name_and_a_command_no_other_game_uses() {
        for (i, a) in OFFERS.iter().enumerate() {
            for b in &OFFERS[i + 1..] {
                assert_ne!(a.game, b.game);
                assert_ne!(a.command, b.command, "{} and {}", a.game, b.game);
            }
            // A surface adds the campaign directory itself to every start command.
            assert!(
                a.options
                    .iter()
                    .all(|o| o.name != "campaign" && o.name != a.file.name)
            );
        }
    }

    #[test]
    fn every_games_templates_compile_under_names_no_other_game_uses() {
        assert_eq!(troupe_prompts::problems(GAMES), Vec::<String>::new());
    }
}
