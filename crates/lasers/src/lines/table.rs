//! The table's frame and the GM's words: the session, turns, story marks, seats, narration,
//! answers and outcomes, whispers.

use super::{Audience, Kind, Line, character, player};
use crate::{Envelope, Event, Session, WhisperScope};

pub(super) fn lines(env: &Envelope, s: &Session) -> Option<Vec<Line>> {
    let one = |kind, text: String| Some(vec![Line::table(kind, text)]);
    match &env.event {
        Event::SessionStarted {
            campaign,
            model,
            seed,
            ..
        } => Some(started(s, &campaign.name, model, *seed)),
        Event::SessionResumed { .. } => one(Kind::Session, "The session resumes.".into()),
        Event::SessionEnded { reason } => {
            one(Kind::Session, format!("The session ends: {reason}."))
        }
        Event::TurnStarted => one(Kind::Turn, format!("Turn {}", s.turn_number)),
        Event::SceneEnded { .. } | Event::TimePassed { .. } => Some(
            env.event
                .story_mark_line(s.day())
                .map(|l| Line::table(Kind::Mark, l))
                .into_iter()
                .collect(),
        ),
        Event::SeatHanded { agent, person } => one(Kind::Seat, handed(s, agent, *person)),
        Event::GmNarration { text } | Event::GmOutcome { text } => one(Kind::Gm, untagged(text)),
        Event::LaserFeelingsAnswer { answer, .. } => one(Kind::Gm, untagged(answer)),
        Event::GmAnswers {
            answers, finished, ..
        } => Some(answered(answers, *finished)),
        Event::Whisper { to, scope, text } => Some(vec![whisper(to.as_deref(), *scope, text)]),
        _ => None,
    }
}

/// The session's title for the table; who runs it (model, seed) for the GM; who plays whom.
fn started(s: &Session, campaign: &str, model: &str, seed: u64) -> Vec<Line> {
    let mut out = vec![
        Line::table(
            Kind::Session,
            format!("Session {} of {campaign} begins.", s.number),
        ),
        Line::gm(Kind::Setup, format!("Model: {model}   Dice seed: {seed}")),
    ];
    out.extend(s.seats().iter().map(|seat| {
        Line::table(
            Kind::Setup,
            format!(
                "{} plays {} ({} {}, number {})",
                seat.player.name,
                seat.character.name,
                seat.character.style,
                seat.character.role,
                seat.character.number.get()
            ),
        )
    }));
    out
}

/// The GM's words as the table reads them: an NPC introduced as `@Captain Morrow` (the tag
/// that tells memory someone new is in the story) is shown by name.
pub(crate) fn untagged(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let starts_word = prev.is_none_or(|p| !p.is_alphanumeric());
        let named = chars.peek().is_some_and(|n| n.is_alphabetic());
        if c == '@' && starts_word && named {
            prev = Some(c);
            continue;
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

fn handed(s: &Session, agent: &str, person: bool) -> String {
    if person {
        format!(
            "{} takes their seat ({}).",
            player(s, agent),
            character(s, agent)
        )
    } else {
        format!("An AI now plays {}.", character(s, agent))
    }
}

/// The GM's answers to the table's questions (an empty answer says nothing).
fn answered(answers: &[String], finished: bool) -> Vec<Line> {
    let mut out: Vec<Line> = answers
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| Line::table(Kind::Gm, untagged(a)))
        .collect();
    if finished {
        out.push(Line::table(Kind::Notice, "The GM takes no more questions."));
    }
    out
}

/// A whisper reaches the GM and its seat (a person holds both layers of their seat, so every
/// scope reaches them); one to the whole table reaches every seat but the watchers'.
fn whisper(to: Option<&str>, scope: WhisperScope, text: &str) -> Line {
    let scope = match scope {
        WhisperScope::PlayerOnly => " (for the player only)",
        WhisperScope::CharacterOnly => " (for the character only)",
        WhisperScope::Both => "",
    };
    match to {
        Some(agent) => Line::new(
            Kind::Whisper,
            Audience::Seat(agent.to_string()),
            format!("The GM whispers{scope}: {text}"),
        ),
        // Said to everyone seated; a watcher is not seated.
        None => Line::new(
            Kind::Whisper,
            Audience::Players,
            format!("The GM tells the table{scope}: {text}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::untagged;

    #[test]
    fn an_npc_tag_is_shown_as_the_name() {
        assert_eq!(
            untagged("@Captain Morrow hails you."),
            "Captain Morrow hails you."
        );
        assert_eq!(untagged("(@Vex) waits"), "(Vex) waits");
        assert_eq!(untagged("mail me at a@b.c"), "mail me at a@b.c");
        assert_eq!(untagged("@ noon"), "@ noon");
    }
}
