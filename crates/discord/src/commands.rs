//! The bot's slash commands (twilight-model's `Command`s), and reading an invoked one's options.
//! A game's are built from its offer ([`troupe_seat::offer`]): its start command with the
//! options it takes, and the table commands its asks offer, each with one optional `args` text:
//! the bot turns `/whisper args:Hush` into the typed line `/whisper Hush` and the seat protocol
//! reads it as every surface does ([`troupe_seat::typed`]), so no game is named or parsed here.

use twilight_model::application::command::{
    Command, CommandOption, CommandOptionType, CommandType,
};
use twilight_model::application::interaction::application_command::{
    CommandData, CommandDataOption, CommandOptionValue,
};
use twilight_model::id::Id;

use troupe_seat::offer::{Offer, OptionKind, StartOption};

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

/// Every command the bot offers: its own (seats, characters) and each offered game's.
pub fn all(offers: &[&Offer]) -> Vec<Command> {
    let mut out = own();
    out.push(command(
        "start",
        "Open a table in a new thread here",
        offers.iter().map(|o| start(o)).collect(),
    ));
    for (name, description) in troupe_seat::offer::table_commands(offers) {
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

/// The bot's own commands, the same at every game's table.
fn own() -> Vec<Command> {
    vec![
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
    ]
}

/// A game's `/start COMMAND` (one `/start` for every game, so that no game's start can take
/// the name of another game's table command: Lasers & Feelings' `/scene` ends a scene): its
/// file (first, when required: Discord lists required options first), its options, and the
/// campaign directory every start takes.
fn start(offer: &Offer) -> CommandOption {
    let mut options = vec![text(offer.file.name, offer.file.help, offer.file.required)];
    options.extend(offer.options.iter().map(start_option));
    options.push(text(
        "campaign",
        "The campaign directory (under the bot's root)",
        false,
    ));
    options.sort_by_key(|o| !o.required.unwrap_or(false));
    sub(offer.command, offer.title, options)
}

/// A start option as text: a choice says its values (a typed value not among them is refused
/// when the table opens, with the list).
fn start_option(o: &StartOption) -> CommandOption {
    match o.kind {
        OptionKind::Choice(choices) => {
            let values: Vec<&str> = choices.iter().map(|(v, _)| *v).collect();
            let help = format!("{} ({})", o.help, values.join(" or "));
            text(o.name, &help, false)
        }
        OptionKind::Text | OptionKind::List => text(o.name, o.help, false),
    }
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
    fn descriptions(options: &[super::CommandOption]) -> Vec<(&str, &str)> {
        options
            .iter()
            .flat_map(|o| {
                let mut all = vec![(o.name.as_str(), o.description.as_str())];
                all.extend(descriptions(o.options.as_deref().unwrap_or_default()));
                all
            })
            .collect()
    }

    /// Discord refuses the whole list (and the bot then has no slash commands at all) when a
    /// name is taken twice or a name or a description is too long.
    #[test]
    fn every_command_fits_discords_rules() {
        let all = super::all(troupe_games::OFFERS);
        assert!(all.len() <= 100);
        let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a command name taken twice: {names:?}");
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
            for (name, description) in descriptions(&c.options) {
                assert!(name.len() <= 32, "{name}");
                assert!(
                    !description.is_empty() && description.chars().count() <= 100,
                    "{}: {name}: {description}",
                    c.name
                );
            }
        }
    }

    #[test]
    fn every_offered_game_has_its_start_and_every_table_command_its_command() {
        let all = super::all(troupe_games::OFFERS);
        let start = all.iter().find(|c| c.name == "start").unwrap();
        for offer in troupe_games::OFFERS {
            assert!(start.options.iter().any(|o| o.name == offer.command));
            for (name, _) in offer.table_commands {
                assert!(all.iter().any(|c| c.name == *name), "/{name}");
            }
        }
    }
}
