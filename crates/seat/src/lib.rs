//! The seat protocol. Every decision a game asks of anyone, GM or player, is one [`Ask`]: whose
//! seat, which decision, what that seat is shown (its view, serialized), the form of the answer
//! (fields, from which its JSON schema follows) and the table commands allowed there. The seat
//! replies with one [`Answer`]. A seat that speaks this protocol (a browser, a chat service, a
//! test) needs nothing game-specific: it renders the fields and sends back their values.
//!
//! The protocol is pure data. The games turn their own decisions into asks and read the answers
//! back (for Lasers & Feelings: `troupe_lasers::asks`); [`check`] is the one reading of an answer
//! against its ask, so a seat cannot send a value the form did not offer.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The decision of a standing ask: a seat's table commands, offered while the game plays on
/// (the GM's at a scene or an encounter). The game does not wait on it.
pub const STANDING: &str = "run";

/// One decision asked of one seat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ask {
    /// Whose seat: "gm", or the agent id of a player's seat.
    pub seat: String,
    /// Which decision, in the game's words ("narration", "adjudicate", "action", …).
    pub decision: String,
    /// The question, as a person reads it.
    pub prompt: String,
    /// What this decision is about, line by line ("Nova attempts: …"), beside the seat's view.
    #[serde(default)]
    pub shown: Vec<String>,
    /// The seat's view when asked: what this seat may see, never the game's state.
    #[serde(default)]
    pub view: Value,
    /// The answer's form.
    pub fields: Vec<Field>,
    /// The table commands allowed while this ask waits.
    #[serde(default)]
    pub commands: Vec<Command>,
    /// Why the last answer was not taken, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the form holds when it is shown, by field: the seat's own last answer when the same
    /// decision is asked again (an action the overreach check sent back), so the person changes
    /// what was wrong instead of filling the whole form again.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub prefill: Map<String, Value>,
}

/// One field of an answer's form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Field {
    pub name: String,
    pub label: String,
    #[serde(flatten)]
    pub kind: FieldKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldKind {
    /// Free text; `required` means it may not be blank.
    Text { multiline: bool, required: bool },
    /// One of these values.
    Choice { options: Vec<Choice> },
    /// Yes or no.
    Flag,
    /// Up to `max` lines of text (questions, one answer per question…).
    Lines { max: u32 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// A table command (`/roll`, `/whisper`, `/end`…) and the fields it takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub name: String,
    pub label: String,
    #[serde(default)]
    pub fields: Vec<Field>,
}

/// A seat's reply to an ask.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    /// The decision: one value per field of the ask.
    Decide { values: Map<String, Value> },
    /// A table command, performed before the seat is asked again.
    Command {
        name: String,
        #[serde(default)]
        values: Map<String, Value>,
    },
    /// The seat's holder changed while it was asked (a person handed it to an AI, or took it
    /// back): ask whoever holds it now.
    Handed,
    /// The person left the table: save and stop.
    Leave,
    /// The seat cannot decide (its model failed past its retries): save and stop, saying why.
    /// Only a seat inside the game's process answers this; a browser cannot.
    Fail { reason: String },
}

/// A person asking to sit down at a running table: the seat they will hold, who they are, and
/// what they said while they waited (held until they are seated, then told to the table).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinRequest {
    pub seat: String,
    pub name: String,
    /// Their character's name (their own name when they give none).
    pub character: String,
    pub held: Vec<String>,
}

/// Whoever sits in a seat: a person's browser, a script, a test.
#[async_trait]
pub trait Seat: Send {
    async fn decide(&mut self, ask: &Ask) -> Answer;
}

/// Why an answer does not fit its ask.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AnswerError {
    #[error("\"{0}\" is not a field of this form")]
    UnknownField(String),
    #[error("{0} may not be empty")]
    Missing(String),
    #[error("{field}: {value} is not one of {allowed}")]
    NotAChoice {
        field: String,
        value: String,
        allowed: String,
    },
    #[error("{field}: expected {expected}")]
    WrongType {
        field: String,
        expected: &'static str,
    },
    #[error("{field}: at most {max} lines")]
    TooManyLines { field: String, max: u32 },
    #[error("/{0} is not a command allowed here")]
    UnknownCommand(String),
    /// A command typed into the answer that this ask does not offer (`/help` included, when
    /// the ask has no help of its own: the list is its help).
    #[error("{}", not_here(name, here))]
    NotHere { name: String, here: String },
}

fn not_here(name: &str, here: &str) -> String {
    if name == "help" {
        format!("Commands: {here}. Anything else you type is your answer.")
    } else {
        format!("/{name} is not a command here. Commands: {here}.")
    }
}

/// A command typed where an answer goes (`/help`, `/whisper all --both Hush`, typed into an
/// action's or a line's text box) is a command, at every seat of every surface: the answer it
/// was sent as becomes [`Answer::Command`], with its words spread over the command's fields (the
/// last field takes the rest of the line; a choice takes `--player-only` as `player_only`). A
/// command the ask does not offer is refused with the commands it does offer, never taken as
/// the answer's text; `/help` where the ask has no help command is answered with that list.
/// Any other answer comes back as it was.
pub fn typed(ask: &Ask, answer: Answer) -> Result<Answer, AnswerError> {
    let Answer::Decide { values } = &answer else {
        return Ok(answer);
    };
    let typed = ask
        .fields
        .iter()
        .find_map(|f| match (&f.kind, values.get(&f.name)) {
            (FieldKind::Text { .. }, Some(Value::String(text))) => command_in(ask, text),
            _ => None,
        });
    typed.unwrap_or(Ok(answer))
}

/// The command a line of text is, read against the commands `ask` offers (the terminal's
/// prompts read every line this way; [`typed`] reads a form's text fields so): None when the
/// line is no command (no slash, then a letter).
pub fn command_in(ask: &Ask, text: &str) -> Option<Result<Answer, AnswerError>> {
    let (name, args) = slash_command(text)?;
    Some(match ask.commands.iter().find(|c| c.name == name) {
        Some(command) => Ok(Answer::Command {
            name,
            values: spread(&command.fields, args),
        }),
        None => Err(AnswerError::NotHere {
            name,
            here: commands_here(ask),
        }),
    })
}

/// `/name rest`, when a text is one: a slash, then a letter.
fn slash_command(text: &str) -> Option<(String, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    if !rest.chars().next()?.is_alphabetic() {
        return None;
    }
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some((name.to_lowercase(), args.trim()))
}

/// A command's words over its fields: one word each, the last field the rest.
fn spread(fields: &[Field], args: &str) -> Map<String, Value> {
    let mut values = Map::new();
    let mut rest = args.trim();
    for (i, field) in fields.iter().enumerate() {
        let word = if i + 1 == fields.len() {
            std::mem::take(&mut rest)
        } else {
            let (word, more) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            rest = more.trim_start();
            word
        };
        let value = match field.kind {
            FieldKind::Choice { .. } => word.trim_start_matches("--").replace('-', "_"),
            _ => word.to_string(),
        };
        if !value.is_empty() {
            values.insert(field.name.clone(), Value::String(value));
        }
    }
    values
}

/// The commands an ask offers, as a person reads them.
fn commands_here(ask: &Ask) -> String {
    if ask.commands.is_empty() {
        return "none here; anything you type is your answer".into();
    }
    ask.commands
        .iter()
        .map(|c| format!("/{} ({})", c.name, c.label))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Check an answer against its ask: every value fits its field, every required field is there,
/// a command is one the ask allows.
pub fn check(ask: &Ask, answer: &Answer) -> Result<(), AnswerError> {
    match answer {
        Answer::Decide { values } => check_values(&ask.fields, values),
        Answer::Command { name, values } => {
            let command = ask
                .commands
                .iter()
                .find(|c| &c.name == name)
                .ok_or_else(|| AnswerError::UnknownCommand(name.clone()))?;
            check_values(&command.fields, values)
        }
        Answer::Handed | Answer::Leave | Answer::Fail { .. } => Ok(()),
    }
}

fn check_values(fields: &[Field], values: &Map<String, Value>) -> Result<(), AnswerError> {
    if let Some(name) = values
        .keys()
        .find(|k| !fields.iter().any(|f| &f.name == *k))
    {
        return Err(AnswerError::UnknownField(name.clone()));
    }
    for field in fields {
        check_value(field, values.get(&field.name))?;
    }
    Ok(())
}

fn check_value(field: &Field, value: Option<&Value>) -> Result<(), AnswerError> {
    let wrong = |expected| AnswerError::WrongType {
        field: field.label.clone(),
        expected,
    };
    match (&field.kind, value) {
        (FieldKind::Text { required, .. }, v) => {
            let text = match v {
                None | Some(Value::Null) => "",
                Some(Value::String(s)) => s,
                Some(_) => return Err(wrong("text")),
            };
            if *required && text.trim().is_empty() {
                return Err(AnswerError::Missing(field.label.clone()));
            }
        }
        (FieldKind::Choice { options }, v) => {
            let chosen = match v {
                Some(Value::String(s)) => s.as_str(),
                None | Some(Value::Null) => "",
                Some(_) => return Err(wrong("one of the choices")),
            };
            if !options.iter().any(|o| o.value == chosen) {
                return Err(AnswerError::NotAChoice {
                    field: field.label.clone(),
                    value: format!("\"{chosen}\""),
                    allowed: options
                        .iter()
                        .map(|o| format!("\"{}\"", o.value))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        (FieldKind::Flag, None | Some(Value::Bool(_) | Value::Null)) => {}
        (FieldKind::Flag, Some(_)) => return Err(wrong("true or false")),
        (FieldKind::Lines { max }, v) => {
            let lines = match v {
                None | Some(Value::Null) => return Ok(()),
                Some(Value::Array(lines)) => lines,
                Some(_) => return Err(wrong("a list of lines")),
            };
            if lines.len() > *max as usize {
                return Err(AnswerError::TooManyLines {
                    field: field.label.clone(),
                    max: *max,
                });
            }
            if lines.iter().any(|l| !l.is_string()) {
                return Err(wrong("a list of lines"));
            }
        }
    }
    Ok(())
}

/// The JSON schema of the answer to a form: what a model or a program must send.
pub fn schema(fields: &[Field]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for f in fields {
        let property = match &f.kind {
            FieldKind::Text { required: r, .. } => {
                if *r {
                    required.push(f.name.clone());
                    json!({"type": "string", "minLength": 1})
                } else {
                    json!({"type": "string"})
                }
            }
            FieldKind::Choice { options } => {
                required.push(f.name.clone());
                json!({"enum": options.iter().map(|o| o.value.clone()).collect::<Vec<_>>()})
            }
            FieldKind::Flag => json!({"type": "boolean"}),
            FieldKind::Lines { max } => {
                json!({"type": "array", "items": {"type": "string"}, "maxItems": max})
            }
        };
        properties.insert(f.name.clone(), property);
    }
    json!({"type": "object", "properties": properties, "required": required,
           "additionalProperties": false})
}

/// Building forms, tersely.
pub mod audience;
pub mod offer;

pub mod form {
    use super::{Choice, Field, FieldKind};

    pub fn text(name: &str, label: &str) -> Field {
        field(
            name,
            label,
            FieldKind::Text {
                multiline: true,
                required: true,
            },
        )
    }

    /// One line of text (a dice expression, a name).
    pub fn line(name: &str, label: &str) -> Field {
        field(
            name,
            label,
            FieldKind::Text {
                multiline: false,
                required: true,
            },
        )
    }

    /// Text that may be left blank.
    pub fn optional(name: &str, label: &str) -> Field {
        field(
            name,
            label,
            FieldKind::Text {
                multiline: false,
                required: false,
            },
        )
    }

    pub fn flag(name: &str, label: &str) -> Field {
        field(name, label, FieldKind::Flag)
    }

    pub fn lines(name: &str, label: &str, max: u32) -> Field {
        field(name, label, FieldKind::Lines { max })
    }

    /// One of (value, label) pairs.
    pub fn choice(name: &str, label: &str, options: &[(&str, &str)]) -> Field {
        let options = options
            .iter()
            .map(|(value, label)| Choice {
                value: value.to_string(),
                label: label.to_string(),
            })
            .collect();
        field(name, label, FieldKind::Choice { options })
    }

    fn field(name: &str, label: &str, kind: FieldKind) -> Field {
        Field {
            name: name.to_string(),
            label: label.to_string(),
            kind,
        }
    }
}

/// Reading an answer's values, with blanks for what is missing.
pub trait Values {
    fn text(&self, name: &str) -> String;
    fn flag(&self, name: &str) -> bool;
    fn lines(&self, name: &str) -> Vec<String>;
}

impl Values for Map<String, Value> {
    fn text(&self, name: &str) -> String {
        self.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    fn flag(&self, name: &str) -> bool {
        self.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    fn lines(&self, name: &str) -> Vec<String> {
        self.get(name)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> Ask {
        Ask {
            seat: "gm".into(),
            decision: "adjudicate".into(),
            prompt: "Ruling?".into(),
            shown: vec![],
            view: Value::Null,
            fields: vec![
                form::choice(
                    "ruling",
                    "Ruling",
                    &[("roll", "Roll"), ("no_roll", "No roll")],
                ),
                form::text("note", "Note"),
                form::flag("prepared", "Prepared"),
                form::lines("questions", "Questions", 2),
            ],
            commands: vec![Command {
                name: "roll".into(),
                label: "Roll dice".into(),
                fields: vec![form::text("dice", "Dice")],
            }],
            error: None,
            prefill: Default::default(),
        }
    }

    fn decide(v: Value) -> Answer {
        let Value::Object(values) = v else {
            return Answer::Leave;
        };
        Answer::Decide { values }
    }

    #[test]
    fn an_answer_that_fits_its_form_passes() {
        let a = decide(json!({"ruling": "roll", "note": "tense", "prepared": true,
                              "questions": ["why?"]}));
        assert_eq!(check(&ask(), &a), Ok(()));
    }

    #[test]
    fn every_misfit_is_named() {
        let cases = [
            (
                json!({"ruling": "dance", "note": "x"}),
                "Ruling: \"dance\" is not one of \"roll\", \"no_roll\"",
            ),
            (
                json!({"ruling": "roll", "note": "  "}),
                "Note may not be empty",
            ),
            (
                json!({"ruling": "roll", "note": "x", "prepared": "yes"}),
                "Prepared: expected true or false",
            ),
            (
                json!({"ruling": "roll", "note": "x", "questions": ["a", "b", "c"]}),
                "Questions: at most 2 lines",
            ),
            (
                json!({"ruling": "roll", "note": "x", "admin": true}),
                "\"admin\" is not a field of this form",
            ),
        ];
        for (v, said) in cases {
            let err = check(&ask(), &decide(v)).err().map(|e| e.to_string());
            assert_eq!(err.as_deref(), Some(said));
        }
    }

    #[test]
    fn only_the_commands_the_ask_allows() {
        let roll = Answer::Command {
            name: "roll".into(),
            values: Map::from_iter([("dice".into(), json!("2d6"))]),
        };
        assert_eq!(check(&ask(), &roll), Ok(()));
        let undo = Answer::Command {
            name: "undo".into(),
            values: Map::new(),
        };
        assert_eq!(
            check(&ask(), &undo),
            Err(AnswerError::UnknownCommand("undo".into()))
        );
    }

    /// A command typed into an answer's text box is that command, its words on its fields;
    /// one the ask does not offer is refused (listing those it does), never taken as text.
    #[test]
    fn a_command_typed_as_an_answer_is_a_command() {
        let typed_roll = decide(json!({"ruling": "roll", "note": " /Roll 2d6+1"}));
        assert_eq!(
            typed(&ask(), typed_roll),
            Ok(Answer::Command {
                name: "roll".into(),
                values: Map::from_iter([("dice".into(), json!("2d6+1"))]),
            })
        );
        let help = typed(&ask(), decide(json!({"note": "/help"}))).unwrap_err();
        assert_eq!(
            help.to_string(),
            "Commands: /roll (Roll dice). Anything else you type is your answer."
        );
        let undo = typed(&ask(), decide(json!({"note": "/undo now"}))).unwrap_err();
        assert!(undo.to_string().starts_with("/undo is not a command here"));
        for plain in ["I look / listen", "/ 2 of them", "1/2 the crew"] {
            let a = decide(json!({"note": plain}));
            assert_eq!(typed(&ask(), a.clone()), Ok(a), "{plain}");
        }
        let whisper = Command {
            name: "whisper".into(),
            label: "Whisper".into(),
            fields: vec![
                form::choice("to", "To", &[("all", "All")]),
                form::choice("scope", "Scope", &[("player_only", "Player")]),
                form::text("text", "Text"),
            ],
        };
        let mut with_whisper = ask();
        with_whisper.commands.push(whisper);
        let typed_whisper = decide(json!({"note": "/whisper all --player-only The code is 4471"}));
        let Ok(Answer::Command { values, .. }) = typed(&with_whisper, typed_whisper) else {
            panic!("not a command");
        };
        assert_eq!(
            Value::Object(values),
            json!({"to": "all", "scope": "player_only", "text": "The code is 4471"})
        );
    }

    #[test]
    fn asks_and_answers_survive_the_wire() {
        let a = ask();
        let back: Ask = serde_json::from_str(&serde_json::to_string(&a).unwrap_or_default())
            .unwrap_or_else(|_| ask_with_error());
        assert_eq!(back, a);
        let answer: Answer =
            serde_json::from_value(json!({"answer": "decide", "values": {"note": "x"}}))
                .unwrap_or(Answer::Leave);
        assert!(matches!(answer, Answer::Decide { .. }));
    }

    fn ask_with_error() -> Ask {
        Ask {
            error: Some("did not parse".into()),
            ..ask()
        }
    }

    #[test]
    fn the_schema_requires_what_the_form_requires() {
        let s = schema(&ask().fields);
        assert_eq!(s["required"], json!(["ruling", "note"]));
        assert_eq!(
            s["properties"]["ruling"]["enum"],
            json!(["roll", "no_roll"])
        );
        assert_eq!(s["properties"]["questions"]["maxItems"], json!(2));
    }
}
