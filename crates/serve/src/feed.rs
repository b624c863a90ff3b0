//! What each seat's stream carries: the session's events as lines of text, each with the
//! audience that may read it. The rule is a whitelist: an event this file does not render
//! reaches no one (model calls, memories, verdicts and the campaign's GM notes among them), and
//! a private line (a whisper, a player's directive to their character) reaches only its seat
//! and the GM's.

use serde::Serialize;
use troupe_engine::visibility::describe_roll;
use troupe_engine::{Envelope, Event, RollOverride, Ruling, Session, WhisperScope};

/// Who may read a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Everyone at the table, watchers included.
    Table,
    /// Every seat at the table (the GM and the players), not the watchers.
    Players,
    /// The GM only.
    Gm,
    /// One player's seat, and the GM.
    Seat(String),
    /// One seat alone, not the GM's (at an encounter the GM is the model: the person at the
    /// GM's seat is not who a whisper is for).
    Own(String),
}

/// The seat that reads the whole table, and the one that only watches it.
pub const GM: &str = "gm";
pub const WATCH: &str = "watch";
/// The invitation link: it reads what a watcher reads, and asks to sit down.
pub const JOIN: &str = "join";

impl Audience {
    pub fn includes(&self, seat: &str) -> bool {
        match self {
            Audience::Table => true,
            Audience::Players => seat != WATCH && seat != JOIN,
            Audience::Gm => seat == GM,
            Audience::Seat(agent) => seat == GM || seat == agent,
            Audience::Own(agent) => seat == agent,
        }
    }
}

/// One line of a seat's stream. `id` orders the lines of a table: an event's sequence number
/// times [`LINES_PER_EVENT`] plus the line's place among that event's lines, so a browser that
/// reconnects after line `id` gets exactly the lines it has not seen.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    pub id: u64,
    pub kind: &'static str,
    pub text: String,
    #[serde(skip)]
    pub audience: Audience,
}

pub const LINES_PER_EVENT: u64 = 4;

/// The lines an event adds to the table's streams, given the session as it stands after it.
pub fn lines(env: &Envelope, s: &Session) -> Vec<Line> {
    numbered(env.seq, rendered(&env.event, s))
}

/// An event's rendered lines, numbered from its sequence number (any game's).
pub fn numbered(seq: u64, rendered: Vec<Rendered>) -> Vec<Line> {
    rendered
        .into_iter()
        .take(LINES_PER_EVENT as usize)
        .enumerate()
        .map(|(i, (audience, kind, text))| Line {
            id: seq * LINES_PER_EVENT + i as u64,
            kind,
            text,
            audience,
        })
        .collect()
}

/// A line before it is numbered: who may read it, its kind (for the page's style), its text.
pub type Rendered = (Audience, &'static str, String);

fn rendered(event: &Event, s: &Session) -> Vec<Rendered> {
    let character = |agent: &str| {
        s.seat(agent)
            .map_or_else(|| agent.to_string(), |x| x.character.name.clone())
    };
    let player = |agent: &str| {
        s.seat(agent)
            .map_or_else(|| agent.to_string(), |x| x.player.name.clone())
    };
    let table = |kind, text: String| vec![(Audience::Table, kind, text)];
    match event {
        Event::SessionStarted { campaign, .. } => table(
            "session",
            format!("Session {} of {} begins.", s.number, campaign.name),
        ),
        Event::SessionResumed { .. } => table("session", "The session resumes.".into()),
        Event::SessionEnded { reason } => table("session", format!("The session ends: {reason}.")),
        Event::TurnStarted => table("turn", format!("Turn {}", s.turn_number)),
        Event::GmNarration { text } => table("gm", text.clone()),
        Event::ClarifyingQuestions {
            agent, questions, ..
        } => questions
            .iter()
            .map(|q| {
                (
                    Audience::Table,
                    "question",
                    format!("{} asks: {q}", character(agent)),
                )
            })
            .collect(),
        Event::GmAnswers { answers, .. } => answers
            .iter()
            .filter(|a| !a.is_empty())
            .map(|a| (Audience::Table, "gm", a.clone()))
            .collect(),
        Event::StrategicIntent { agent, intent } => {
            let mut out = vec![(
                Audience::Seat(agent.clone()),
                "private",
                format!("Your plan: {}", intent.strategy),
            )];
            if let Some(p) = &intent.proposal {
                out.push((
                    Audience::Table,
                    "ooc",
                    format!("{} proposes: {p}", player(agent)),
                ));
            }
            out
        }
        Event::OocMessage { agent, message, .. } => {
            table("ooc", format!("{}: {message}", player(agent)))
        }
        Event::GmOoc { text, .. } if !text.is_empty() => table("ooc", format!("GM: {text}")),
        Event::VoteCast { agent, vote, .. } => {
            table("ooc", format!("{} votes for {vote}'s plan.", player(agent)))
        }
        Event::Directive { agent, text, .. } => vec![(
            Audience::Seat(agent.clone()),
            "private",
            format!("To {}: {text}", character(agent)),
        )],
        Event::CharacterAction { agent, action, .. } => {
            let mut out = vec![(
                Audience::Table,
                "action",
                format!("{} attempts: {}", character(agent), action.action),
            )];
            if !action.dialogue.is_empty() {
                out.push((
                    Audience::Table,
                    "say",
                    format!("{}: \"{}\"", character(agent), action.dialogue),
                ));
            }
            out
        }
        Event::GmReviewedAction { agent, action } => {
            table("action", format!("{} attempts: {action}", character(agent)))
        }
        Event::GmAdjudication { agent, ruling } => {
            table("ruling", ruling_line(&character(agent), ruling))
        }
        Event::DiceRolled { agent, result, .. } => table(
            "dice",
            format!("{} rolls {}", character(agent), describe_roll(result)),
        ),
        // Kept dice change nothing: only an override the GM made is told.
        Event::GmRollOverride {
            change: RollOverride::Keep,
            ..
        } => Vec::new(),
        Event::GmRollOverride { agent, result, .. } => table(
            "dice",
            format!(
                "The GM sets {}'s dice: {}",
                character(agent),
                describe_roll(result)
            ),
        ),
        Event::GmRoll {
            expression,
            faces,
            total,
            ..
        } => table(
            "dice",
            format!("The GM rolls {expression}: {faces:?} = {total}"),
        ),
        Event::LaserFeelingsQuestion { agent, question } => table(
            "insight",
            format!("LASER FEELINGS! {} asks: {question}", character(agent)),
        ),
        Event::LaserFeelingsAnswer { answer, .. } => table("gm", answer.clone()),
        Event::GmOutcome { text } => table("gm", text.clone()),
        Event::CharacterReaction { agent, text } => {
            table("say", format!("{}: {text}", character(agent)))
        }
        Event::SeatHanded { agent, person } => table(
            "seat",
            if *person {
                format!("{} takes their seat ({}).", player(agent), character(agent))
            } else {
                format!("An AI now plays {}.", character(agent))
            },
        ),
        Event::Whisper { to, scope, text } => whisper(to.as_deref(), *scope, text),
        Event::SceneEnded { .. } | Event::TimePassed { .. } => event
            .story_mark_line(s.day())
            .map(|l| table("story", l))
            .unwrap_or_default(),
        Event::PhaseFailed { agent, error, .. } => vec![(
            Audience::Gm,
            "problem",
            format!("{} could not decide: {error}", character(agent)),
        )],
        _ => Vec::new(),
    }
}

fn ruling_line(character: &str, ruling: &Ruling) -> String {
    match ruling {
        Ruling::Roll {
            task,
            prepared,
            expert,
        } => format!(
            "The GM calls for a {task} roll from {character}{}{}.",
            if *prepared { ", prepared" } else { "" },
            if *expert { ", expert" } else { "" }
        ),
        Ruling::Revise { note } => format!("The GM asks {character} to revise: {note}"),
        Ruling::NoRoll { note } => format!("No roll for {character}: {note}"),
    }
}

/// A whisper reaches the GM and its seat (a person holds both layers of their seat, so every
/// scope reaches them); one to the whole table reaches every seat but the watchers'.
fn whisper(to: Option<&str>, scope: WhisperScope, text: &str) -> Vec<Rendered> {
    let scope = match scope {
        WhisperScope::PlayerOnly => " (for the player only)",
        WhisperScope::CharacterOnly => " (for the character only)",
        WhisperScope::Both => "",
    };
    match to {
        Some(agent) => vec![(
            Audience::Seat(agent.to_string()),
            "whisper",
            format!("The GM whispers{scope}: {text}"),
        )],
        // Said to everyone seated; a watcher is not seated.
        None => vec![(
            Audience::Players,
            "whisper",
            format!("The GM tells the table{scope}: {text}"),
        )],
    }
}
