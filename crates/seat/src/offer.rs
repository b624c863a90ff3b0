//! What a game offers every surface: how a table of it is opened (its start command and the
//! options a GM gives) and the table commands its asks may offer. A surface builds its own
//! controls from these (Discord's slash commands, the host page's form) and reads what a GM gave
//! back through [`Offer::read`], so no surface names a game or an option of one: a game added
//! is one offer more in the list the binary hands the surfaces (`troupe_games::OFFERS`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// One game, as the surfaces open it.
/// Serialized for a page that builds its form from it (the host's page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Offer {
    /// The game's name in a table's `table.json` and in a host page's request (`lasers`).
    pub game: &'static str,
    /// The word a chat surface opens it with (`/start session`).
    pub command: &'static str,
    /// What it is, in a few words ("Lasers & Feelings sessions").
    pub title: &'static str,
    /// The file a table of it plays, in the campaign directory.
    pub file: FileOption,
    /// What else a GM may say when opening one.
    pub options: &'static [StartOption],
    /// Every table command any of its asks may offer: (name, what it does). The asks offer
    /// them where they apply; a chat surface that must register its commands up front
    /// registers these.
    pub table_commands: &'static [(&'static str, &'static str)],
}

/// The file option of a start command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FileOption {
    /// Its name in a chat command (`spec`, `file`).
    pub name: &'static str,
    pub help: &'static str,
    pub required: bool,
}

/// One option of a start command besides the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StartOption {
    pub name: &'static str,
    pub help: &'static str,
    #[serde(flatten)]
    pub kind: OptionKind,
    /// Its value when a GM gives none ("" for none).
    pub default: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "choices", rename_all = "lowercase")]
pub enum OptionKind {
    /// One line of text.
    Text,
    /// Several names, comma-separated where typed.
    List,
    /// One of these values: (value, label).
    Choice(&'static [(&'static str, &'static str)]),
}

/// A start option's value, as read by [`Offer::read`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Text(String),
    List(Vec<String>),
}

/// What a GM gave when opening a table, read against the game's offer: every option of the
/// offer present (its default where none was given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StartValues(BTreeMap<String, OptionValue>);

impl StartValues {
    /// A text or choice option ("" when the offer has none of that name).
    pub fn text(&self, name: &str) -> &str {
        match self.0.get(name) {
            Some(OptionValue::Text(t)) => t,
            _ => "",
        }
    }

    /// A list option (empty when the offer has none of that name).
    pub fn list(&self, name: &str) -> &[String] {
        match self.0.get(name) {
            Some(OptionValue::List(l)) => l,
            _ => &[],
        }
    }
}

impl Offer {
    /// The offer of `game` among `offers`.
    pub fn find<'a>(offers: &'a [&'a Offer], game: &str) -> Option<&'a Offer> {
        offers.iter().copied().find(|o| o.game == game)
    }

    /// The offer a chat surface's start command names (`session`).
    pub fn by_command<'a>(offers: &'a [&'a Offer], command: &str) -> Option<&'a Offer> {
        offers.iter().copied().find(|o| o.command == command)
    }

    /// Read the options a GM gave (a JSON object: a list as an array of strings or one
    /// comma-separated string; a text as a string), or why they do not fit: an option this
    /// game does not take given a value, a value not among a choice's, a wrong type. An empty
    /// value counts as none given (a form sends every field it has).
    pub fn read(&self, given: &serde_json::Map<String, Value>) -> Result<StartValues, String> {
        for (name, value) in given {
            if !is_empty(value) && !self.options.iter().any(|o| o.name == name) {
                return Err(format!(
                    "{} takes no option \"{name}\"; it takes: {}",
                    self.title,
                    self.option_names()
                ));
            }
        }
        let mut values = BTreeMap::new();
        for option in self.options {
            let value = given.get(option.name).filter(|v| !is_empty(v));
            values.insert(option.name.to_string(), option.read(value)?);
        }
        Ok(StartValues(values))
    }

    fn option_names(&self) -> String {
        let names: Vec<&str> = self.options.iter().map(|o| o.name).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }
}

impl StartOption {
    fn read(&self, value: Option<&Value>) -> Result<OptionValue, String> {
        let name = self.name;
        let text = |v: Option<&Value>| match v {
            None => Ok(self.default.to_string()),
            Some(Value::String(s)) => Ok(s.trim().to_string()),
            Some(_) => Err(format!("{name}: expected text")),
        };
        match self.kind {
            OptionKind::Text => text(value).map(OptionValue::Text),
            OptionKind::Choice(choices) => {
                let t = text(value)?;
                if t.is_empty() || choices.iter().any(|(v, _)| *v == t) {
                    Ok(OptionValue::Text(t))
                } else {
                    let allowed: Vec<&str> = choices.iter().map(|(v, _)| *v).collect();
                    Err(format!(
                        "{name}: \"{t}\" is not one of {}",
                        allowed.join(", ")
                    ))
                }
            }
            OptionKind::List => match value {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => Ok(s.trim().to_string()),
                        _ => Err(format!("{name}: expected a list of names")),
                    })
                    .filter(|s| s.as_ref().map_or(true, |s| !s.is_empty()))
                    .collect::<Result<_, _>>()
                    .map(OptionValue::List),
                other => Ok(OptionValue::List(split_list(&text(other)?))),
            },
        }
    }
}

/// Names typed comma-separated, trimmed, empty ones left out.
pub fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Every table command the offers name, each once (the first offer's words for a name two
/// games share), in the offers' order.
pub fn table_commands(offers: &[&Offer]) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for offer in offers {
        for (name, help) in offer.table_commands {
            if !out.iter().any(|(n, _)| n == name) {
                out.push((name, help));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OFFER: Offer = Offer {
        game: "toy",
        command: "toy",
        title: "Toy tables",
        file: FileOption {
            name: "file",
            help: "The toy file",
            required: true,
        },
        options: &[
            StartOption {
                name: "gm",
                help: "Who runs it",
                kind: OptionKind::Choice(&[("ai", "an AI"), ("person", "a person")]),
                default: "ai",
            },
            StartOption {
                name: "players",
                help: "Who plays",
                kind: OptionKind::List,
                default: "",
            },
        ],
        table_commands: &[("roll", "Roll"), ("undo", "Undo")],
    };

    fn given(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn options_are_read_with_their_defaults_and_lists_either_way() {
        let v = OFFER.read(&given(json!({"players": "a, b,,c"}))).unwrap();
        assert_eq!(v.text("gm"), "ai");
        assert_eq!(v.list("players"), ["a", "b", "c"]);
        let v = OFFER
            .read(&given(json!({"gm": "person", "players": ["x", " "]})))
            .unwrap();
        assert_eq!(v.text("gm"), "person");
        assert_eq!(v.list("players"), ["x"]);
    }

    #[test]
    fn what_the_game_does_not_take_is_refused_saying_what_it_does() {
        let e = OFFER.read(&given(json!({"speaker": "ai"}))).unwrap_err();
        assert_eq!(
            e,
            "Toy tables takes no option \"speaker\"; it takes: gm, players"
        );
        // A form sends every field it has: empty ones are none given.
        assert!(OFFER.read(&given(json!({"speaker": "", "x": []}))).is_ok());
        let e = OFFER.read(&given(json!({"gm": "dog"}))).unwrap_err();
        assert_eq!(e, "gm: \"dog\" is not one of ai, person");
        assert!(OFFER.read(&given(json!({"players": 3}))).is_err());
    }

    #[test]
    fn shared_table_commands_are_listed_once() {
        const OTHER: Offer = Offer {
            game: "other",
            command: "other",
            table_commands: &[("undo", "Take back"), ("say", "Say")],
            ..OFFER
        };
        assert_eq!(
            table_commands(&[&OFFER, &OTHER]),
            [("roll", "Roll"), ("undo", "Undo"), ("say", "Say")]
        );
    }
}
