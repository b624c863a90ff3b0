//! A whole form answered by one message. Discord has no form to fill (a modal takes text
//! only), so an ask with more than one field (a Lasers & Feelings action: its text, the roll,
//! prepared, expert, who helps; a GM's ruling: the ruling, prepared, expert, a note) is answered
//! by a message whose `name: value` lines set those fields and whose other lines are the form's
//! main text. The form's own fields say what the lines may be: nothing here knows a game. What
//! a line sets is checked by the seat protocol as every surface's answer is (`Hub::answer`:
//! [`troupe_seat::typed`], then [`troupe_seat::check`]), so a value the form does not offer is
//! refused with the values it does.

use serde_json::{Map, Value};
use troupe_seat::{Answer, Ask, Field, FieldKind};

/// A message's text that stands for a blank one (a field that may be left empty).
pub const BLANK: &str = "-";

/// The text field a message's free lines fill: the form's first required text (or lines)
/// field, else its first; and whether it takes lines.
pub fn text_field(ask: &Ask) -> Option<(String, bool)> {
    let texts: Vec<(&Field, bool, bool)> = ask
        .fields
        .iter()
        .filter_map(|f| match f.kind {
            FieldKind::Text { required, .. } => Some((f, required, false)),
            FieldKind::Lines { .. } => Some((f, true, true)),
            _ => None,
        })
        .collect();
    texts
        .iter()
        .find(|(_, required, _)| *required)
        .or(texts.first())
        .map(|(f, _, lines)| (f.name.clone(), *lines))
}

/// The field a `key: value` line names: by its name or its label (any case), or the label's
/// first word (`roll: lasers` for a field labelled "Roll").
fn named<'a>(ask: &'a Ask, key: &str) -> Option<&'a Field> {
    let key = key.trim().to_lowercase();
    if key.is_empty() {
        return None;
    }
    let first_word = |label: &str| {
        label
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap_or_default()
            .to_lowercase()
    };
    ask.fields
        .iter()
        .find(|f| f.name.to_lowercase() == key || f.name.replace('_', " ") == key)
        .or_else(|| ask.fields.iter().find(|f| f.label.to_lowercase() == key))
        .or_else(|| ask.fields.iter().find(|f| first_word(&f.label) == key))
}

/// A `key: value` line that names one of the form's fields.
fn field_line<'a, 'b>(ask: &'a Ask, line: &'b str) -> Option<(&'a Field, &'b str)> {
    let (key, value) = line.split_once(':')?;
    // `**Action**: …` as the ask showed it, or `task_type: lasers`.
    let key = key.trim().trim_matches('*').trim_matches('`');
    if key.chars().count() > 40 {
        return None;
    }
    Some((named(ask, key)?, value.trim()))
}

/// A choice's value from what a person typed: the option's value or its label, any case.
fn choice_value(options: &[troupe_seat::Choice], typed: &str) -> String {
    let t = typed.trim().trim_start_matches("--").trim();
    let lower = t.to_lowercase();
    options
        .iter()
        .find(|o| o.value.to_lowercase() == lower)
        .or_else(|| options.iter().find(|o| o.label.to_lowercase() == lower))
        .or_else(|| {
            options
                .iter()
                .find(|o| o.value.to_lowercase() == lower.replace([' ', '-'], "_"))
        })
        .map_or_else(|| t.to_string(), |o| o.value.clone())
}

fn flag_value(label: &str, typed: &str) -> Result<bool, String> {
    match typed.trim().to_lowercase().as_str() {
        "yes" | "y" | "true" | "on" | "1" | "x" => Ok(true),
        "no" | "n" | "false" | "off" | "0" | "" => Ok(false),
        other => Err(format!("{label}: \"{other}\" is not yes or no")),
    }
}

/// The value a form shows before anyone fills it (a browser's form the same): what the seat
/// answered last time (the ask's prefill), else a choice's first option, a flag's no.
fn default_value(ask: &Ask, field: &Field) -> Option<Value> {
    if let Some(v) = ask.prefill.get(&field.name) {
        return Some(v.clone());
    }
    match &field.kind {
        FieldKind::Choice { options } => options.first().map(|o| Value::String(o.value.clone())),
        FieldKind::Flag => Some(Value::Bool(false)),
        _ => None,
    }
}

fn lines_value(text: &str) -> Value {
    Value::Array(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

/// Whether a message can answer this form (it has text to fill, or more than one field to
/// set by lines). A form with no text and one field (a roll, a vote) is answered by a button.
pub fn takes_messages(ask: &Ask) -> bool {
    text_field(ask).is_some() || ask.fields.len() > 1
}

/// A person's message as the answer to the whole form: `name: value` lines set the fields they
/// name; the other lines are the main text field's; a field no line sets keeps the value the
/// form shows first. A typed `/command` is left as text, for the seat protocol to read.
pub fn fill(ask: &Ask, text: &str) -> Result<Answer, String> {
    let main = text_field(ask);
    let mut values = Map::new();
    if ask.fields.len() == 1
        && let Some((name, lines)) = &main
    {
        // The whole message is the one field's text, colons and all.
        let text = text.trim();
        let text = if text == BLANK { "" } else { text };
        let v = if *lines {
            lines_value(text)
        } else {
            Value::String(text.to_string())
        };
        values.insert(name.clone(), v);
        return Ok(Answer::Decide { values });
    }
    if text.trim_start().starts_with('/') {
        let name = main.as_ref().map_or("text", |(n, _)| n.as_str());
        values.insert(name.to_string(), Value::String(text.trim().to_string()));
        return Ok(Answer::Decide { values });
    }
    let mut free: Vec<&str> = Vec::new();
    for line in text.lines() {
        match field_line(ask, line) {
            Some((field, value)) if main.as_ref().is_none_or(|(m, _)| *m != field.name) => {
                let v = match &field.kind {
                    FieldKind::Text { .. } => Value::String(value.to_string()),
                    FieldKind::Lines { .. } => lines_value(value),
                    FieldKind::Choice { options } => Value::String(choice_value(options, value)),
                    FieldKind::Flag => Value::Bool(flag_value(&field.label, value)?),
                };
                values.insert(field.name.clone(), v);
            }
            // The main field named on its own line: the rest of the line is its text.
            Some((_, value)) => free.push(value),
            None => free.push(line),
        }
    }
    let free = free.join("\n").trim().to_string();
    // Discord sends no empty message: `-` alone is a blank text (no questions, nothing to say).
    let free = if free == BLANK { String::new() } else { free };
    match &main {
        Some((name, lines)) => {
            if !free.is_empty() || !values.contains_key(name) {
                let v = if *lines {
                    lines_value(&free)
                } else {
                    Value::String(free)
                };
                values.insert(name.clone(), v);
            }
        }
        None if free.is_empty() => {}
        // No text in the form: a bare word is the first unset choice's option.
        None => {
            let choice = ask.fields.iter().find_map(|f| match &f.kind {
                FieldKind::Choice { options } if !values.contains_key(&f.name) => {
                    Some((f, options))
                }
                _ => None,
            });
            let Some((field, options)) = choice else {
                return Err(format!(
                    "this question has no text to fill: answer with lines like {}",
                    example_lines(ask)
                ));
            };
            values.insert(
                field.name.clone(),
                Value::String(choice_value(options, &free)),
            );
        }
    }
    for field in &ask.fields {
        if !values.contains_key(&field.name)
            && let Some(v) = default_value(ask, field)
        {
            values.insert(field.name.clone(), v);
        }
    }
    Ok(Answer::Decide { values })
}

fn example_lines(ask: &Ask) -> String {
    ask.fields
        .iter()
        .map(|f| format!("`{}: …`", f.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How to answer a form of more than one field, for the ask's message: each field, what it
/// takes, and what it holds when no line sets it.
pub fn instructions(ask: &Ask) -> Option<String> {
    if ask.fields.len() < 2 {
        return None;
    }
    let main = text_field(ask).map(|(n, _)| n);
    let mut out = String::from("Answer with one message (in the table's thread or here)");
    if let Some(main) = &main
        && let Some(f) = ask.fields.iter().find(|f| &f.name == main)
    {
        out.push_str(&format!(
            ": your {} as its text (`-` alone: none), and any of these lines to set the rest:",
            f.label
        ));
    } else {
        out.push_str(", of these lines:");
    }
    for f in &ask.fields {
        if main.as_ref() == Some(&f.name) {
            continue;
        }
        let default = default_value(ask, f);
        let takes = match &f.kind {
            FieldKind::Text { .. } => "text".to_string(),
            FieldKind::Lines { max } => format!("up to {max} lines"),
            FieldKind::Flag => "yes or no".to_string(),
            FieldKind::Choice { options } => options
                .iter()
                .map(|o| {
                    if o.value.is_empty() {
                        format!("`none` ({})", o.label)
                    } else {
                        format!("`{}` ({})", o.value, o.label)
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        out.push_str(&format!("\n• `{}:` {}: {takes}", f.name, f.label));
        match default {
            Some(Value::String(s)) if !s.is_empty() => out.push_str(&format!(" (else `{s}`)")),
            Some(Value::Bool(b)) => out.push_str(if b { " (else yes)" } else { " (else no)" }),
            _ => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use troupe_seat::form;

    fn ask(fields: Vec<Field>) -> Ask {
        Ask {
            seat: "alex".into(),
            decision: "action".into(),
            prompt: "What do you try?".into(),
            shown: Vec::new(),
            view: Value::Null,
            fields,
            commands: Vec::new(),
            error: None,
            prefill: Map::new(),
        }
    }

    fn action() -> Ask {
        ask(vec![
            form::text("action", "Action"),
            form::optional("dialogue", "Said aloud"),
            form::choice(
                "task_type",
                "Roll",
                &[("lasers", "LASERS (tech)"), ("feelings", "FEELINGS")],
            ),
            form::flag("prepared", "Prepared (set up earlier)"),
            form::flag("expert", "Expert (your role fits)"),
            form::choice("helping", "Helping", &[("", "Nobody"), ("sam", "sam")]),
        ])
    }

    fn values(a: Answer) -> Value {
        let Answer::Decide { values } = a else {
            panic!("not a decision")
        };
        Value::Object(values)
    }

    #[test]
    fn lines_set_fields_and_the_rest_is_the_main_text() {
        let a = action();
        let got = values(
            fill(
                &a,
                "I reroute the shields\nthrough the nav core\nRoll: feelings\nprepared: yes\nSaid aloud: Hold on!",
            )
            .unwrap(),
        );
        assert_eq!(
            got,
            json!({"action": "I reroute the shields\nthrough the nav core", "task_type": "feelings",
                   "prepared": true, "dialogue": "Hold on!", "expert": false, "helping": ""})
        );
        troupe_seat::check(
            &a,
            &Answer::Decide {
                values: got.as_object().unwrap().clone(),
            },
        )
        .unwrap();
    }

    #[test]
    fn a_form_without_text_takes_a_bare_choice_and_refuses_a_bad_value_through_check() {
        let a = ask(vec![
            form::choice(
                "ruling",
                "Ruling",
                &[("accept", "Roll as suggested"), ("lasers", "Roll LASERS")],
            ),
            form::flag("prepared", "Prepared"),
        ]);
        assert_eq!(values(fill(&a, "roll lasers").unwrap())["ruling"], "lasers");
        let bad = fill(&a, "ruling: maybe").unwrap();
        assert!(troupe_seat::check(&a, &bad).is_err());
        assert!(fill(&a, "prepared: perhaps").is_err());
    }

    #[test]
    fn a_one_field_form_keeps_colons_and_a_command_stays_text() {
        let a = ask(vec![form::text("action", "Action")]);
        assert_eq!(
            values(fill(&a, "Mara: action: go").unwrap())["action"],
            "Mara: action: go"
        );
        assert_eq!(
            values(fill(&action(), "/whisper hi").unwrap())["action"],
            "/whisper hi"
        );
        assert!(instructions(&action()).unwrap().contains("`task_type:`"));
        let questions = ask(vec![form::lines("questions", "Questions", 3)]);
        assert_eq!(
            values(fill(&questions, "-").unwrap())["questions"],
            json!([])
        );
        assert_eq!(
            values(fill(&questions, "Who?\nWhy?").unwrap())["questions"],
            json!(["Who?", "Why?"])
        );
    }
}
