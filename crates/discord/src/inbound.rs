//! What people send: a message in a table's thread (or to the bot directly) is their seat's
//! answer, or held; a slash command seats them, opens a table, or is a table command; a button
//! answers an ask. Every id is claimed in `discord.json` before it is handed to the table, so a
//! message Discord delivers again (a resumed gateway session) is never applied twice, and a
//! person is told it was taken (✅, or the interaction's reply) only after `Hub::answer`
//! returned Ok (the answer is on disk).

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::task::JoinSet;
use troupe_seat::offer::Offer;
use troupe_seat::{Answer, Ask, form};
use troupe_serve::hub::Refused;
use twilight_model::application::interaction::{Interaction, InteractionData};
use twilight_model::channel::Message;
use twilight_model::channel::message::MessageFlags;
use twilight_model::http::interaction::{
    InteractionResponse, InteractionResponseData, InteractionResponseType,
};
use twilight_model::id::Id;
use twilight_model::id::marker::{ChannelMarker, MessageMarker};

use crate::commands::{self, get};
use crate::render::{Press, presses, read_button};
use crate::state::Held;
use crate::table::{Seated, plain};
use crate::{Bot, Out};

/// The reaction that says a message was taken as an answer (it is on disk).
pub const TAKEN: &str = "✅";
/// The reaction that says a message is held for the person's next ask.
pub const HELD: &str = "⏳";
/// The reaction that says a message was not taken (why goes to its person alone).
pub const REFUSED: &str = "❌";

pub use crate::forms::text_field;

/// A message as the answer to a form's text field (a lines field takes each line).
pub fn answer_of(field: &(String, bool), text: &str) -> Answer {
    let (name, lines) = field;
    let value = if *lines {
        Value::Array(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| Value::String(l.to_string()))
                .collect(),
        )
    } else {
        Value::String(text.to_string())
    };
    let mut values = Map::new();
    values.insert(name.clone(), value);
    Answer::Decide { values }
}

/// Why the hub did not take an answer, as its person reads it.
pub fn refusal(why: &Refused) -> String {
    match why {
        Refused::Invalid(why) | Refused::NotHere(why) => why.clone(),
        Refused::Unsaved(_) => "it could not be saved; send it again".into(),
        Refused::Stale => "the table moved on before it arrived".into(),
        Refused::TooMany => "too many at once; wait a moment".into(),
        Refused::NoSuchSeat | Refused::BadKey => "you have no such seat".into(),
    }
}

/// The ask waiting on a seat now: its id and the ask (None when nothing is asked, or only
/// the lobby's form).
fn waiting(t: &Seated, seat: &str) -> (Option<(u64, Ask)>, Value) {
    let (_, state) = t.feed(seat, u64::MAX);
    let ask = state["ask"]["id"].as_u64().and_then(|id| {
        Some((
            id,
            serde_json::from_value(state["ask"]["ask"].clone()).ok()?,
        ))
    });
    (ask, state)
}

enum Said {
    Taken,
    Held,
    Refused(String),
    NoSeat,
    Dup,
}

impl Bot {
    fn table_of_channel(&self, channel: u64) -> Option<Arc<Seated>> {
        self.tables()
            .into_iter()
            .find(|t| t.lock().thread == Some(channel))
    }

    /// The table where `user` sits with an ask waiting (a direct message's table).
    fn table_of_person(&self, user: u64) -> Option<Arc<Seated>> {
        let seated: Vec<Arc<Seated>> = self
            .tables()
            .into_iter()
            .filter(|t| t.lock().seat_of(user).is_some())
            .collect();
        seated
            .iter()
            .find(|t| {
                let seat = t.lock().seat_of(user).map(|p| p.seat.clone());
                seat.is_some_and(|s| waiting(t, &s).0.is_some_and(|(id, _)| id != 0))
            })
            .or(seated.first())
            .cloned()
    }

    pub(crate) fn on_message(self: &Arc<Self>, m: Message, sends: &mut JoinSet<()>) {
        if m.author.bot || self.is_me(m.author.id.get()) || m.content.trim().is_empty() {
            return;
        }
        let user = m.author.id.get();
        let table = match m.guild_id {
            Some(_) => self.table_of_channel(m.channel_id.get()),
            None => self.table_of_person(user),
        };
        let Some(t) = table else {
            return;
        };
        let said = say(&t, user, &m);
        let out = self.out.clone();
        let (channel, message) = (m.channel_id, m.id);
        sends.spawn(async move { acknowledge(&out, channel, message, user, said).await });
    }

    pub(crate) fn on_interaction(self: &Arc<Self>, i: Interaction, sends: &mut JoinSet<()>) {
        let Some(user) = i.author_id().map(|u| u.get()) else {
            return;
        };
        let name = i
            .author()
            .map(|u| u.global_name.clone().unwrap_or_else(|| u.name.clone()))
            .unwrap_or_default();
        let channel = i.channel.as_ref().map(|c| c.id.get());
        let reply = match &i.data {
            Some(InteractionData::ApplicationCommand(data)) => {
                let (sub, options) = commands::options(data);
                let ctx = Ctx {
                    user,
                    name,
                    channel,
                    interaction: i.id.get(),
                };
                Some(self.command(&ctx, &data.name, sub.as_deref(), &options))
            }
            Some(InteractionData::MessageComponent(data)) => {
                Some(self.press(user, i.id.get(), &data.custom_id))
            }
            _ => None,
        };
        let Some(reply) = reply else {
            return;
        };
        let out = self.out.clone();
        let (id, token) = (i.id, i.token.clone());
        sends.spawn(async move {
            let response = ephemeral(&reply);
            if let Err(e) = out.rest.respond(id, &token, &response).await {
                eprintln!("troupe discord: could not answer an interaction: {e}");
            }
        });
    }

    fn command(
        &self,
        ctx: &Ctx,
        name: &str,
        sub: Option<&str>,
        options: &[(String, String)],
    ) -> String {
        match (name, sub) {
            ("character", Some("register")) => self.register(ctx, options),
            ("start", Some(game)) => self.start(ctx, game, options),
            _ => {
                let Some(t) = ctx.channel.and_then(|c| self.table_of_channel(c)) else {
                    return "This channel is no table's thread: type it in a table's thread."
                        .into();
                };
                if !claim(&t, ctx.interaction) {
                    return "(already done)".into();
                }
                match name {
                    "join" => join(&t, ctx, options),
                    "leave" => leave(&t, ctx.user),
                    "handover" => hand(&t, ctx.user, options),
                    "help" => help(&t, ctx.user),
                    "info" => info(&t, ctx.user),
                    _ => table_command(&t, ctx.user, name, get(options, "args").unwrap_or("")),
                }
            }
        }
    }

    fn register(&self, ctx: &Ctx, options: &[(String, String)]) -> String {
        let Some(name) = get(options, "name") else {
            return "A character needs a name.".into();
        };
        let character = crate::state::Character {
            name: name
                .chars()
                .take(troupe_serve::lobby::MAX_NAME_CHARS)
                .collect(),
            pronouns: get(options, "pronouns").unwrap_or("").into(),
            class: get(options, "class").unwrap_or("").into(),
            backstory: get(options, "backstory").unwrap_or("").into(),
        };
        let mut all = crate::state::load_characters(&self.config.home);
        all.insert(ctx.user.to_string(), character.clone());
        match crate::state::save_characters(&self.config.home, &all) {
            Ok(()) => format!(
                "Registered {}: `/join` at a table's thread seats you as them.",
                character.name
            ),
            Err(e) => format!("Could not keep your character: {e}"),
        }
    }

    /// `/start COMMAND …`: a table of the offered game whose command it is, in a new thread.
    fn start(&self, ctx: &Ctx, command: &str, options: &[(String, String)]) -> String {
        let Some(opener) = &self.opener else {
            return "This bot opens no tables (start it with a campaign directory or a root)."
                .into();
        };
        let Some(channel) = ctx.channel else {
            return "Type it in a channel: the table gets a thread there.".into();
        };
        let Some(offer) = Offer::by_command(&self.config.offers, command) else {
            return format!("/start {command} is no game this bot opens.");
        };
        let campaign = get(options, "campaign")
            .map(str::to_string)
            .or_else(|| self.config.campaign.clone())
            .unwrap_or_default();
        // The rest is the game's own, read against its offer as the host page's request is.
        let game_options = options
            .iter()
            .filter(|(name, _)| name != "campaign" && name != offer.file.name)
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        let request = troupe_serve::host::OpenRequest {
            campaign,
            game: offer.game.into(),
            file: get(options, offer.file.name).unwrap_or("").into(),
            seed: None,
            options: game_options,
        };
        let opening = match troupe_serve::host::read_request(&request, &self.config.offers) {
            Ok(opening) => opening,
            Err(e) => return e,
        };
        let (run, _links) = match opener(&opening) {
            Ok(opened) => opened,
            Err(e) => return format!("The table could not open: {e}"),
        };
        let title = run.title.clone();
        match self.open_in(run, Some(channel)) {
            Ok(_) => {
                format!("{title}: the table opens in a thread here. `/join` in it to sit down.")
            }
            Err(e) => format!("The table could not start: {e}"),
        }
    }

    fn press(&self, user: u64, interaction: u64, custom_id: &str) -> String {
        let Some((table, ask_id, n)) = read_button(custom_id) else {
            return "That button belongs to nothing here.".into();
        };
        let Some(t) = self.table(&table) else {
            return "That table is not served here now.".into();
        };
        let Some(seat) = t.lock().seat_of(user).map(|p| p.seat.clone()) else {
            return "You have no seat at that table.".into();
        };
        let (ask, _) = waiting(&t, &seat);
        let Some((id, ask)) = ask.filter(|(id, _)| *id == ask_id) else {
            return "That question has passed.".into();
        };
        let Some((_, press)) = presses(&ask).into_iter().nth(n) else {
            return "That button belongs to nothing here.".into();
        };
        if !claim(&t, interaction) {
            return "(already done)".into();
        }
        let mut values = Map::new();
        match press {
            Press::Go => {}
            Press::Choose { field, value } => {
                values.insert(field, Value::String(value));
            }
            Press::Flag { field, value } => {
                values.insert(field, Value::Bool(value));
            }
        }
        match t.hub.answer(&seat, id, Answer::Decide { values }) {
            Ok(()) => "Done.".into(),
            Err(why) => format!("Not taken: {}", refusal(&why)),
        }
    }
}

struct Ctx {
    user: u64,
    name: String,
    channel: Option<u64>,
    interaction: u64,
}

/// Claim an id in the binding (on disk): false when it was taken before, or cannot be kept.
fn claim(t: &Seated, id: u64) -> bool {
    t.update(|b| b.claim(id)).unwrap_or(false)
}

/// A message from a person at table `t`: their answer, held, or refused.
fn say(t: &Seated, user: u64, m: &Message) -> Said {
    let Some(seat) = t.lock().seat_of(user).map(|p| p.seat.clone()) else {
        return Said::NoSeat;
    };
    if !claim(t, m.id.get()) {
        return Said::Dup;
    }
    let text = m.content.trim().to_string();
    let (ask, _) = waiting(t, &seat);
    match ask {
        // Waiting to be seated (the lobby's form): held for the table (seed 003).
        Some((0, _)) => {
            let mut values = Map::new();
            values.insert("text".into(), Value::String(text));
            match t.hub.hold(&seat, &Answer::Decide { values }) {
                Ok(()) => Said::Held,
                Err(why) => Said::Refused(refusal(&why)),
            }
        }
        Some((id, ask)) if ask.decision != troupe_seat::STANDING || text.starts_with('/') => {
            let answer = if text.starts_with('/') && text_field(&ask).is_none() {
                // A form without text (a roll) takes a typed command.
                typed_command(&ask, answer_of(&("text".into(), false), &text))
            } else if crate::forms::takes_messages(&ask) {
                // The whole form, its fields set by `name: value` lines.
                crate::forms::fill(&ask, &text)
            } else {
                // A form answered by a button only: the message waits for the next ask.
                return hold(t, &seat, user, m, text);
            };
            let answer = match answer {
                Ok(a) => a,
                Err(why) => return Said::Refused(why),
            };
            match t.hub.answer(&seat, id, answer) {
                Ok(()) => Said::Taken,
                Err(Refused::Stale) => hold(t, &seat, user, m, text),
                Err(why) => Said::Refused(refusal(&why)),
            }
        }
        _ => hold(t, &seat, user, m, text),
    }
}

/// Keep a message for the seat's next ask that takes text.
fn hold(t: &Seated, seat: &str, user: u64, m: &Message, text: String) -> Said {
    let held = Held {
        seat: seat.to_string(),
        user: user.to_string(),
        channel: m.channel_id.get(),
        message: m.id.get(),
        text,
    };
    match t.update(|b| b.held.push(held)) {
        Ok(()) => Said::Held,
        Err(e) => Said::Refused(format!("it could not be kept: {e}")),
    }
}

/// A typed `/command words` read against an ask's commands, as the seat protocol reads one
/// typed into a text field.
fn typed_command(ask: &Ask, typed: Answer) -> Result<Answer, String> {
    let mut with_text = ask.clone();
    with_text.fields = vec![form::line("text", "text")];
    match troupe_seat::typed(&with_text, typed) {
        Ok(a @ Answer::Command { .. }) => Ok(a),
        Ok(_) => Err("type a command (`/help` lists them)".into()),
        Err(e) => Err(e.to_string()),
    }
}

async fn acknowledge(
    out: &Out,
    channel: Id<ChannelMarker>,
    message: Id<MessageMarker>,
    user: u64,
    said: Said,
) {
    let (emoji, note) = match said {
        Said::Taken => (Some(TAKEN), None),
        Said::Held => (Some(HELD), None),
        Said::Refused(why) => (
            Some(REFUSED),
            Some(format!("Your message was not taken: {why}")),
        ),
        Said::NoSeat => (
            None,
            Some("You have no seat at this table: `/join` in its thread sits you down.".into()),
        ),
        Said::Dup => (None, None),
    };
    if let Some(emoji) = emoji
        && let Err(e) = out.rest.react(channel, message, emoji).await
    {
        eprintln!("troupe discord: could not react to a message: {e}");
    }
    if let Some(note) = note {
        let sent = async {
            let dm = out.dm(user).await?;
            for m in plain(&note) {
                out.rest.send(dm, &m).await?;
            }
            Ok::<(), crate::RestError>(())
        };
        if let Err(e) = sent.await {
            eprintln!("troupe discord: could not tell a person why: {e}");
        }
    }
}

/// `/join [seat] [character]`: a seat of the table (an AI's is handed to the person), or a new
/// one from the table's invitation (seated at the table's next step).
fn join(t: &Seated, ctx: &Ctx, options: &[(String, String)]) -> String {
    let bound = t.lock().seat_of(ctx.user).map(|p| p.seat.clone());
    if let Some(seat) = bound {
        // Theirs, handed to an AI (they left it idle, or the GM handed it over): taken back.
        return match t.hub.hand_over(&seat, true) {
            Ok(()) => format!("You take seat {seat} back."),
            Err(_) => format!("You sit at seat {seat} already."),
        };
    }
    // Registered in the campaign directory (a bot for one campaign) or the root above it.
    let key = ctx.user.to_string();
    let registered = crate::state::load_characters(&t.dir)
        .remove(&key)
        .or_else(|| crate::state::load_characters(&t.dir.join("..")).remove(&key));
    let character = get(options, "character")
        .map(str::to_string)
        .or_else(|| registered.map(|c| c.name))
        .unwrap_or_default();
    let (seat, label) = match get(options, "seat") {
        Some(seat) => {
            let Some((_, label)) = t.seats.iter().find(|(s, _)| s == seat) else {
                let seats: Vec<&str> = t.seats.iter().map(|(s, _)| s.as_str()).collect();
                return format!(
                    "This table has no seat {seat}; its seats: {}",
                    seats.join(", ")
                );
            };
            if matches!(seat, "watch" | "join") {
                return "That is no seat to sit in: the thread is where watchers read.".into();
            }
            if t.lock().user_at(seat).is_some() {
                return format!("Someone sits at seat {seat} already.");
            }
            // An AI's seat is handed to the person (a seat_handed event); a person's is theirs.
            match t.hub.hand_over(seat, true) {
                Ok(()) | Err(Refused::NotHere(_)) | Err(Refused::NoSuchSeat) => {}
                Err(why) => return format!("Not seated: {}", refusal(&why)),
            }
            (seat.to_string(), label.clone())
        }
        // Only a table with an invitation (a d20 encounter's) seats newcomers.
        None if !t.seats.iter().any(|(s, _)| s == "join") => {
            let seats: Vec<&str> = t
                .seats
                .iter()
                .map(|(s, _)| s.as_str())
                .filter(|s| !matches!(*s, "watch" | "join"))
                .collect();
            return format!(
                "This table takes no newcomers: `/join seat:…` one of its seats: {}",
                seats.join(", ")
            );
        }
        None => {
            let mut values = Map::new();
            values.insert("name".into(), Value::String(ctx.name.clone()));
            values.insert("character".into(), Value::String(character.clone()));
            match t.hub.join(&Answer::Decide { values }) {
                Ok((seat, _key)) => (seat, format!("{} ({character})", ctx.name)),
                Err(why) => return format!("Not seated: {}", refusal(&why)),
            }
        }
    };
    let person = crate::state::Person {
        seat: seat.clone(),
        name: ctx.name.clone(),
    };
    match t.update(|b| {
        b.people.insert(ctx.user.to_string(), person);
    }) {
        Ok(()) => format!(
            "You sit at seat {seat}: {label}. What only you may read comes to you here and by \
             direct message; your messages in this thread are your answers."
        ),
        Err(e) => format!("Seated, but it could not be kept: {e}"),
    }
}

fn leave(t: &Seated, user: u64) -> String {
    let Some(seat) = t.lock().seat_of(user).map(|p| p.seat.clone()) else {
        return "You have no seat here.".into();
    };
    let handed = match t.hub.hand_over(&seat, false) {
        Ok(()) => "an AI plays it now",
        Err(_) => "it waits for you",
    };
    match t.update(|b| {
        b.people.remove(&user.to_string());
        b.held.retain(|h| h.user != user.to_string());
    }) {
        Ok(()) => format!("You left seat {seat}: {handed}."),
        Err(e) => format!("Could not keep that you left: {e}"),
    }
}

/// `/handover seat:… to:ai|person`: whoever sits in the GM's seat hands a player's seat to an
/// AI or back to its person, as the GM's page does at the web table (the same `Hub::hand_over`,
/// so the same `seat_handed` event). Its person, if one is bound on Discord, keeps the seat's
/// binding: `/join` takes it back.
fn hand(t: &Seated, user: u64, options: &[(String, String)]) -> String {
    let Some(mine) = t.lock().seat_of(user).map(|p| p.seat.clone()) else {
        return "You have no seat here.".into();
    };
    if mine != troupe_serve::feed::GM {
        return "Only whoever sits in the GM's seat hands another seat over; `/leave` gives \
                your own to an AI."
            .into();
    }
    let Some(seat) = get(options, "seat") else {
        return "Name the seat: `/handover seat:alex to:ai`.".into();
    };
    let person = match get(options, "to").unwrap_or("ai") {
        "ai" => false,
        "person" => true,
        other => return format!("\"{other}\" is not who takes a seat: ai or person"),
    };
    if matches!(seat, "watch" | "join") || seat == mine {
        return "That is no player's seat to hand over.".into();
    }
    match t.hub.hand_over(seat, person) {
        Ok(()) if person => format!("Seat {seat} goes back to its person."),
        Ok(()) => format!("Seat {seat}: an AI plays it now."),
        Err(why) => format!("Not handed over: {}", refusal(&why)),
    }
}

fn help(t: &Seated, user: u64) -> String {
    let mut text = "`/join [seat] [character]` sits you down; `/leave` gives your seat to an \
                    AI; `/info` shows your seat; `/character register` keeps your character."
        .to_string();
    if let Some(seat) = t.lock().seat_of(user).map(|p| p.seat.clone()) {
        let (ask, _) = waiting(t, &seat);
        match ask {
            Some((id, ask)) if id != 0 => {
                text.push_str(&format!("\nAsked of you now: {}", ask.prompt));
                if ask.commands.is_empty() {
                    text.push_str("\nNo table commands here.");
                }
                for c in &ask.commands {
                    text.push_str(&format!("\n`/{}`: {}", c.name, c.label));
                }
            }
            _ => text.push_str("\nNothing is asked of you now."),
        }
    }
    text
}

fn info(t: &Seated, user: u64) -> String {
    let Some(seat) = t.lock().seat_of(user).map(|p| p.seat.clone()) else {
        return "You have no seat here: `/join`.".into();
    };
    let (_, state) = t.feed(&seat, u64::MAX);
    match &state["sheet"] {
        Value::Null => format!("Seat {seat}: nothing to show yet."),
        Value::Object(o) => o
            .values()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// A game's table command, as if typed at the seat: through the seat protocol to the hub.
fn table_command(t: &Seated, user: u64, name: &str, args: &str) -> String {
    let Some(seat) = t.lock().seat_of(user).map(|p| p.seat.clone()) else {
        return "You have no seat here: `/join`.".into();
    };
    let (ask, _) = waiting(t, &seat);
    let Some((id, ask)) = ask.filter(|(id, _)| *id != 0) else {
        return "Nothing is asked of you now: a command works while the table waits on you.".into();
    };
    let typed = answer_of(&("text".into(), false), format!("/{name} {args}").trim());
    let command = match typed_command(&ask, typed) {
        Ok(c) => c,
        Err(why) => return why,
    };
    match t.hub.answer(&seat, id, command) {
        Ok(()) => format!("/{name}: done."),
        Err(why) => format!("/{name} was not taken: {}", refusal(&why)),
    }
}

/// An interaction's reply that only its person sees.
pub fn ephemeral(text: &str) -> InteractionResponse {
    let content: String = text.chars().take(1900).collect();
    InteractionResponse {
        kind: InteractionResponseType::ChannelMessageWithSource,
        data: Some(InteractionResponseData {
            content: Some(content),
            flags: Some(MessageFlags::EPHEMERAL),
            ..InteractionResponseData::default()
        }),
    }
}
