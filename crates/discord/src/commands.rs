//! The bot's slash commands (twilight-model's `Command`s), and reading an invoked one's options.
//! The games' table commands are here by name, each with one optional `args` text: the bot
//! turns `/whisper args:Hush` into the typed line `/whisper Hush` and the seat protocol reads
//! it as every surface does ([`troupe_seat::typed`]), so no game's commands are parsed here.

use twilight_model::application::command::{
    Command, CommandOption, CommandOptionType, CommandType,
};
use twilight_model::application::interaction::application_command::{
    CommandData, CommandDataOption, CommandOptionValue,
};
use twilight_model::id::Id;

/// The games' table commands, as slash commands (those a seat's ask does not offer are refused
/// there with the list it does).
pub const TABLE_COMMANDS: [(&str, &str); 16] = [
    (
        "whisper",
        "Whisper (to the GM, or as the GM: `to scope text`)",
    ),
    ("roll", "Roll dice (the GM: e.g. 2d6+1)"),
    ("success", "The next roll succeeds (the GM)"),
    ("fail", "The next roll fails (the GM)"),
    ("scene", "End the scene (the GM)"),
    ("time", "Let days pass (the GM)"),
    ("undo", "Take back the last decision or round (the GM)"),
    ("end", "End the session (the GM)"),
    ("gm", "The GM's view of a scene (the GM)"),
    ("effects", "A scene's effects as JSON (the GM)"),
    ("note", "A note on a scene's card (the GM)"),
    ("promote", "Promote a scene's card (the GM)"),
    ("state", "What your character perceives (a scene)"),
    ("quit", "Stop the scene, saved"),
    ("hint", "Ask for a hint, where the game offers one"),
    ("say", "Say something, where the game offers it"),
];

fn option(name: &str, description: &str, kind: CommandOptionType, required: bool) -> CommandOption {
    CommandOption {
        autocomplete: None,
        channel_types: None,
        choices: None,
        description: description.into(),
        description_localizations: None,
        kind,
        max_length: None,
        max_value: None,
        min_length: None,
        min_value: None,
        name: name.into(),
        name_localizations: None,
        options: None,
        file_types: None,
        required: Some(required),
    }
}

fn text(name: &str, description: &str, required: bool) -> CommandOption {
    option(name, description, CommandOptionType::String, required)
}

fn sub(name: &str, description: &str, options: Vec<CommandOption>) -> CommandOption {
    CommandOption {
        options: Some(options),
        required: None,
        ..option(name, description, CommandOptionType::SubCommand, false)
    }
}

#[allow(deprecated)]
fn command(name: &str, description: &str, options: Vec<CommandOption>) -> Command {
    Command {
        application_id: None,
        contexts: None,
        default_member_permissions: None,
        description: description.into(),
        description_localizations: None,
        dm_permission: None,
        guild_id: None,
        id: None,
        integration_types: None,
        kind: CommandType::ChatInput,
        name: name.into(),
        name_localizations: None,
        nsfw: None,
        options,
        version: Id::new(1),
    }
}

/// Every command the bot offers.
#[expect(
    clippy::too_many_lines,
    reason = "the bot's commands as data, one definition each; split, they would be listed in two places"
)]
pub fn all() -> Vec<Command> {
    let mut out = vec![
        command(
            "join",
            "Sit down at this thread's table (a seat, or a new one)",
            vec![
                text(
                    "seat",
                    "A seat of the table (its id, e.g. p1, alex, gm)",
                    false,
                ),
                text("character", "Your character's name", false),
            ],
        ),
        command("leave", "Leave your seat to an AI", Vec::new()),
        command(
            "handover",
            "The GM: hand a player's seat to an AI, or back to its person",
            vec![
                text("seat", "The seat (its id, e.g. alex, p2)", true),
                text("to", "ai (the default) or person", false),
            ],
        ),
        command("help", "What you can do now", Vec::new()),
        command(
            "info",
            "Your seat: your character, the place, the story lately",
            Vec::new(),
        ),
        command(
            "character",
            "Your character, kept for every table",
            vec![sub(
                "register",
                "Register your character",
                vec![
                    text("name", "The character's name", true),
                    text("pronouns", "Pronouns", false),
                    text("class", "Class", false),
                    text("backstory", "Backstory", false),
                ],
            )],
        ),
        command(
            "encounter",
            "Encounters (seed 003)",
            vec![sub(
                "start",
                "Open an encounter table in a new thread",
                vec![
                    text(
                        "spec",
                        "The encounter spec, a file in the campaign directory",
                        true,
                    ),
                    text(
                        "players",
                        "Who sits: human:NAME, ai, ai:AGENT, comma-separated",
                        false,
                    ),
                    text(
                        "campaign",
                        "The campaign directory (under the bot's root)",
                        false,
                    ),
                ],
            )],
        ),
        command(
            "session",
            "Lasers & Feelings sessions",
            vec![sub(
                "start",
                "Open a session table in a new thread",
                vec![
                    text(
                        "gm",
                        "Who runs it: ai (the default) or person (who then takes /join seat:gm)",
                        false,
                    ),
                    text(
                        "persons",
                        "Characters people play (agent ids, comma-separated)",
                        false,
                    ),
                    text(
                        "campaign",
                        "The campaign directory (under the bot's root)",
                        false,
                    ),
                ],
            )],
        ),
        command(
            "scene",
            "Scenes (seed 004)",
            vec![sub(
                "start",
                "Open a scene table in a new thread",
                vec![
                    text("file", "The scene file, in the campaign directory", true),
                    text("speaker", "Who speaks first: person or ai", false),
                    text(
                        "campaign",
                        "The campaign directory (under the bot's root)",
                        false,
                    ),
                ],
            )],
        ),
    ];
    for (name, description) in TABLE_COMMANDS {
        out.push(command(
            name,
            description,
            vec![text(
                "args",
                "The command's words, as typed after /name",
                false,
            )],
        ));
    }
    out
}

/// An invoked command's string options (a subcommand's, when it has one): its subcommand's
/// name and (name, value) pairs.
pub fn options(data: &CommandData) -> (Option<String>, Vec<(String, String)>) {
    let mut sub = None;
    let mut out = Vec::new();
    let take = |opts: &[CommandDataOption], out: &mut Vec<(String, String)>| {
        for o in opts {
            if let CommandOptionValue::String(s) = &o.value {
                out.push((o.name.clone(), s.clone()));
            }
        }
    };
    for o in &data.options {
        match &o.value {
            CommandOptionValue::SubCommand(inner) => {
                sub = Some(o.name.clone());
                take(inner, &mut out);
            }
            _ => take(std::slice::from_ref(o), &mut out),
        }
    }
    (sub, out)
}

pub fn get<'a>(options: &'a [(String, String)], name: &str) -> Option<&'a str> {
    options
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_command_fits_discords_rules() {
        let all = super::all();
        assert!(all.len() <= 100);
        for c in &all {
            assert!(!c.name.is_empty() && c.name.len() <= 32, "{}", c.name);
            assert!(
                c.name
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch == '-' || ch == '_')
            );
            assert!(
                !c.description.is_empty() && c.description.chars().count() <= 100,
                "{}",
                c.name
            );
        }
    }
}
