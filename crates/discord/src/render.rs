//! A table's lines as Discord messages: each line an embed (a speaker's line under their name,
//! the AI GM's and AI players' alike), as many embeds to a message as Discord takes, a line too
//! long for one embed split over several. A batch is always one stream's lines (the thread's,
//! or one person's): splitting never moves a line to another place.

use troupe_seat::{Ask, FieldKind};
use twilight_model::channel::message::component::{ActionRow, Button, ButtonStyle};
use twilight_model::channel::message::embed::EmbedAuthor;
use twilight_model::channel::message::{AllowedMentions, Component, Embed};

use crate::rest::NewMessage;

/// Discord's limits: an embed's description, the embeds of one message, their characters in all.
pub const MAX_DESCRIPTION: usize = 4096;
pub const MAX_EMBEDS: usize = 10;
pub const MAX_EMBED_TOTAL: usize = 6000;
/// A button's custom id.
pub const MAX_CUSTOM_ID: usize = 100;
const MAX_AUTHOR: usize = 64;
/// The name the GM's lines are posted under.
const GM: &str = "GM";

/// One line of a stream, as the hub serves it.
#[derive(Clone, Debug)]
pub struct Shown {
    pub id: u64,
    pub kind: String,
    pub text: String,
}

/// The lines as messages, in order.
pub fn messages(lines: &[Shown]) -> Vec<NewMessage> {
    let mut out: Vec<NewMessage> = Vec::new();
    let mut current = NewMessage::default();
    let mut total = 0;
    for line in lines {
        for embed in embeds(line) {
            let size = embed_size(&embed);
            if current.embeds.len() == MAX_EMBEDS || total + size > MAX_EMBED_TOTAL {
                out.push(std::mem::take(&mut current));
                total = 0;
            }
            total += size;
            current.embeds.push(embed);
        }
    }
    if !current.embeds.is_empty() {
        out.push(current);
    }
    out
}

fn embed_size(e: &Embed) -> usize {
    e.description.as_deref().map_or(0, |d| d.chars().count())
        + e.author.as_ref().map_or(0, |a| a.name.chars().count())
        + e.title.as_deref().map_or(0, |t| t.chars().count())
}

/// A line's embeds: its speaker as the author (a "Name: words" line of a speaking kind), its
/// text cut into pieces Discord takes.
fn embeds(line: &Shown) -> Vec<Embed> {
    let (author, text) = speaker(line);
    pieces(text, MAX_DESCRIPTION)
        .into_iter()
        .map(|piece| Embed {
            author: author.map(|name| EmbedAuthor {
                icon_url: None,
                name: name.to_string(),
                proxy_icon_url: None,
                url: None,
            }),
            color: Some(color(&line.kind)),
            description: Some(piece),
            fields: Vec::new(),
            flags: None,
            footer: None,
            image: None,
            kind: "rich".into(),
            provider: None,
            thumbnail: None,
            timestamp: None,
            title: None,
            url: None,
            video: None,
        })
        .collect()
}

/// "Name: words" of a line whose kind is someone speaking or acting.
fn speaker(line: &Shown) -> (Option<&str>, &str) {
    // The GM's line is the GM's, whatever its words hold ("Warning: the hull…" names no one).
    if line.kind == "gm" {
        return (
            Some(GM),
            line.text.strip_prefix("GM: ").unwrap_or(&line.text),
        );
    }
    if !matches!(line.kind.as_str(), "action" | "say" | "question" | "ooc") {
        return (None, &line.text);
    }
    match line.text.split_once(": ") {
        Some((name, rest))
            if !name.is_empty()
                && name.chars().count() <= MAX_AUTHOR
                && !name.contains('\n')
                && !rest.trim().is_empty() =>
        {
            (Some(name), rest)
        }
        _ => (None, &line.text),
    }
}

fn color(kind: &str) -> u32 {
    match kind {
        "gm" => 0x8e_44_ad,
        "action" | "say" => 0x27_ae_60,
        "dice" | "ruling" => 0xe6_7e_22,
        "whisper" | "private" => 0x7f_8c_8d,
        "problem" => 0xc0_39_2b,
        _ => 0x34_98_db,
    }
}

/// Text cut into pieces of at most `max` characters, at a line break or a space when one is near.
pub fn pieces(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest: Vec<char> = text.chars().collect();
    while rest.len() > max {
        let window = rest.get(..max).unwrap_or_default();
        let cut = window
            .iter()
            .rposition(|c| *c == '\n')
            .or_else(|| window.iter().rposition(|c| *c == ' '))
            .filter(|i| *i > max / 2)
            .map_or(max, |i| i + 1);
        let tail = rest.split_off(cut);
        out.push(rest.into_iter().collect());
        rest = tail;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest.into_iter().collect());
    }
    out
}

/// What answering an ask by a button sends: the values of a form with no text in it.
#[derive(Clone, Debug, PartialEq)]
pub enum Press {
    /// A form without fields (a roll): "go".
    Go,
    /// One choice field: this option.
    Choose {
        field: String,
        value: String,
    },
    Flag {
        field: String,
        value: bool,
    },
}

/// The buttons an ask is answered with, when its form has no text to type: each with what it
/// sends. An ask with text is answered by a message in the thread (or typed in a direct message).
pub fn presses(ask: &Ask) -> Vec<(String, Press)> {
    match ask.fields.as_slice() {
        [] => vec![(
            if ask.prompt.to_lowercase().contains("roll") {
                "Roll".to_string()
            } else {
                "Go".to_string()
            },
            Press::Go,
        )],
        [field] => match &field.kind {
            FieldKind::Choice { options } => options
                .iter()
                .take(25)
                .map(|o| {
                    let press = Press::Choose {
                        field: field.name.clone(),
                        value: o.value.clone(),
                    };
                    (o.label.clone(), press)
                })
                .collect(),
            FieldKind::Flag => [("Yes", true), ("No", false)]
                .into_iter()
                .map(|(label, value)| {
                    let press = Press::Flag {
                        field: field.name.clone(),
                        value,
                    };
                    (label.to_string(), press)
                })
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A table's first message in its new thread: what the thread is and how to sit down. It is
/// posted once the bot knows the thread is the table's, so a `/join` typed on seeing it is taken.
pub fn opening(title: &str) -> NewMessage {
    NewMessage {
        content: format!(
            "**{title}**: the table is open. `/join` here to sit down; `/help` lists the \
             commands you have."
        ),
        allowed_mentions: AllowedMentions::default(),
        ..NewMessage::default()
    }
}

/// The ask as a person's direct messages: what it asks and what it is about, and its buttons
/// (their ids: `a|TABLE|ASK|N`, N the press's place) on the last message.
pub fn ask_messages(title: &str, table: &str, ask_id: u64, ask: &Ask) -> Vec<NewMessage> {
    let mut text = format!("**{title}**: {}", ask.prompt);
    for line in &ask.shown {
        text.push_str("\n> ");
        text.push_str(line);
    }
    if let Some(error) = &ask.error {
        text.push_str("\n(Not taken: ");
        text.push_str(error);
        text.push(')');
    }
    let presses = presses(ask);
    if let Some(how) = crate::forms::instructions(ask) {
        text.push('\n');
        text.push_str(&how);
        text.push_str("\n`/help` lists the commands you have now.");
    } else if presses.is_empty() {
        text.push_str(
            "\nAnswer with your next message in the table's thread (or here). `/help` lists \
             the commands you have now.",
        );
        let optional = ask.fields.iter().any(|f| {
            matches!(
                f.kind,
                FieldKind::Lines { .. }
                    | FieldKind::Text {
                        required: false,
                        ..
                    }
            )
        });
        if optional {
            text.push_str(" A message of `-` alone leaves it blank.");
        }
    }
    let mut out: Vec<NewMessage> = pieces(&text, 1900)
        .into_iter()
        .map(|content| NewMessage {
            content,
            allowed_mentions: AllowedMentions::default(),
            ..NewMessage::default()
        })
        .collect();
    let buttons: Vec<Component> = presses
        .iter()
        .enumerate()
        .map(|(i, (label, _))| {
            Component::Button(Button {
                custom_id: Some(button_id(table, ask_id, i)),
                disabled: false,
                emoji: None,
                id: None,
                label: Some(label.chars().take(80).collect()),
                sku_id: None,
                style: ButtonStyle::Primary,
                url: None,
            })
        })
        .collect();
    if let Some(last) = out.last_mut() {
        last.components = buttons
            .chunks(5)
            .map(|row| {
                Component::ActionRow(ActionRow {
                    components: row.to_vec(),
                    id: None,
                })
            })
            .collect();
    }
    out
}

pub fn button_id(table: &str, ask_id: u64, press: usize) -> String {
    let id = format!("a|{table}|{ask_id}|{press}");
    id.chars().take(MAX_CUSTOM_ID).collect()
}

/// A button's id read back: the table, the ask, which press.
pub fn read_button(id: &str) -> Option<(String, u64, usize)> {
    let mut parts = id.split('|');
    if parts.next()? != "a" {
        return None;
    }
    let table = parts.next()?.to_string();
    let ask = parts.next()?.parse().ok()?;
    let press = parts.next()?.parse().ok()?;
    Some((table, ask, press))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: u64, kind: &str, text: &str) -> Shown {
        Shown {
            id,
            kind: kind.into(),
            text: text.into(),
        }
    }

    #[test]
    fn a_speakers_line_is_under_their_name_and_long_lines_split_within_limits() {
        let long = "word ".repeat(3000);
        let lines = vec![
            line(1, "gm", "GM: Rain needles the forge."),
            line(2, "dice", "Mara rolls d20: 15"),
            line(3, "action", &format!("Alex: {long}")),
        ];
        let msgs = messages(&lines);
        let all: Vec<&Embed> = msgs.iter().flat_map(|m| &m.embeds).collect();
        assert_eq!(all[0].author.as_ref().map(|a| a.name.as_str()), Some("GM"));
        assert_eq!(
            all[0].description.as_deref(),
            Some("Rain needles the forge.")
        );
        assert!(all[1].author.is_none());
        // A GM's line without a speaker's tag (a Lasers & Feelings narration) is the GM's too.
        let narration = messages(&[line(4, "gm", "Warning: the hull groans.")]);
        let e = &narration[0].embeds[0];
        assert_eq!(e.author.as_ref().map(|a| a.name.as_str()), Some("GM"));
        assert_eq!(e.description.as_deref(), Some("Warning: the hull groans."));
        for m in &msgs {
            assert!(m.embeds.len() <= MAX_EMBEDS);
            assert!(m.embeds.iter().map(embed_size).sum::<usize>() <= MAX_EMBED_TOTAL);
            for e in &m.embeds {
                assert!(e.description.as_deref().unwrap_or("").chars().count() <= MAX_DESCRIPTION);
            }
        }
        let rejoined: String = all[2..]
            .iter()
            .filter_map(|e| e.description.clone())
            .collect();
        assert_eq!(rejoined, long);
    }

    #[test]
    fn pieces_keep_every_character() {
        let text = "é".repeat(10_001);
        let p = pieces(&text, 4096);
        assert!(p.iter().all(|x| x.chars().count() <= 4096));
        assert_eq!(p.concat(), text);
    }

    #[test]
    fn a_button_id_reads_back() {
        let id = button_id("abcdefabcdef", 1_764_000_000_000_123, 3);
        assert!(id.len() <= MAX_CUSTOM_ID);
        assert_eq!(
            read_button(&id),
            Some(("abcdefabcdef".into(), 1_764_000_000_000_123, 3))
        );
    }
}
