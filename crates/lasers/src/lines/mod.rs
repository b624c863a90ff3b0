//! One renderer of a Lasers & Feelings session's events into lines, shared by every medium that
//! shows the story: the terminal's live display and the web table's feed style the lines their
//! own way, and the Markdown transcript words the same facts with the phrases kept here.
//!
//! Each line says what kind of line it is, its text (names resolved, people's and models' words
//! kept as text) and who may read it. The audience rule is a whitelist: an event the table may
//! read is rendered for it on purpose below; every other event (model calls, memories, verdicts,
//! the GM's notes and decisions) renders only for the GM, and a private line (a whisper, a
//! player's plan, its directive to its character) reaches only its seat and the GM.

mod notes;
mod party;
mod play;
mod table;

pub(crate) use notes::failure_then;
pub(crate) use party::{discussion_stalled, discussion_timed_out, ooc_position};
pub(crate) use play::{forced_result, insight_choice};

use crate::{Envelope, Session};

// Who may read a line, and the readers that are no player's seat: the engine's, as every game's
// lines online are (kept here too, where this game's code and its readers have always found them).
pub use troupe_seat::audience::{Audience, GM, JOIN, WATCH};

/// What a line tells, so each medium can style it (and leave out kinds it does not show).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The session begins, resumes or ends.
    Session,
    /// How the session was set up: the model and the dice seed, who plays whom.
    Setup,
    Turn,
    /// The GM's words to the table: narration, answers, outcomes.
    Gm,
    Question,
    /// A procedural notice: no more questions, the discussion stalled or ran out of time.
    Notice,
    /// A player's private plan.
    Plan,
    /// Out-of-character talk: messages, proposals, votes.
    Ooc,
    /// Where the party's discussion landed.
    Consensus,
    /// A player's words to its own character.
    Directive,
    Attempt,
    Speech,
    /// The overreach check on an attempt.
    Check,
    Ruling,
    Roll,
    /// A LASER FEELINGS question.
    Insight,
    /// A decision that changes what follows: the GM forcing a roll, a player keeping or
    /// changing an action after an insight.
    Decision,
    Seat,
    Whisper,
    /// A story mark: a scene ends, days pass.
    Mark,
    /// A phase could not be decided.
    Problem,
    /// Campaign memory: recalled or stored.
    Memory,
    /// One memory recalled, under its [`Kind::Memory`] line.
    Recalled,
    /// A model call that failed or changed how the session asks.
    Model,
}

/// One line of the story.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub kind: Kind,
    pub audience: Audience,
    pub text: String,
    /// A detail a medium with room shows after the text (the terminal does; the feed keeps to
    /// the text).
    pub aside: Option<String>,
}

impl Line {
    pub fn new(kind: Kind, audience: Audience, text: impl Into<String>) -> Self {
        Line {
            kind,
            audience,
            text: text.into(),
            aside: None,
        }
    }

    fn table(kind: Kind, text: impl Into<String>) -> Self {
        Line::new(kind, Audience::Table, text)
    }

    fn gm(kind: Kind, text: impl Into<String>) -> Self {
        Line::new(kind, Audience::Gm, text)
    }

    fn with_aside(mut self, aside: impl Into<String>) -> Self {
        self.aside = Some(aside.into());
        self
    }
}

/// The lines an event adds to the story, given the session as it stands after it. An event no
/// family renders gives none.
pub fn render(env: &Envelope, s: &Session) -> Vec<Line> {
    table::lines(env, s)
        .or_else(|| party::lines(&env.event, s))
        .or_else(|| play::lines(&env.event, s))
        .or_else(|| notes::lines(env, s))
        .unwrap_or_default()
}

/// A count with its noun, agreeing: "1 fact", "19 facts", "1 party", "3 parties". The one
/// plural rule every line of troupe uses, so that no count reads "1 facts".
pub fn count<N: TryInto<u64> + Copy + std::fmt::Display>(n: N, noun: &str) -> String {
    format!("{n} {}", noun_for(n, noun))
}

/// The noun as a count of `n` takes it: "fact" for 1, "facts" otherwise.
pub fn noun_for<N: TryInto<u64> + Copy>(n: N, noun: &str) -> String {
    if n.try_into().ok() == Some(1) {
        noun.to_string()
    } else {
        plural(noun)
    }
}

/// The plural of an English noun by the regular rules (a few troupe uses are irregular).
pub fn plural(noun: &str) -> String {
    let irregular = [
        ("person", "people"),
        ("was", "were"),
        ("is", "are"),
        ("has", "have"),
    ];
    if let Some((_, many)) = irregular.iter().find(|(one, _)| *one == noun) {
        return many.to_string();
    }
    let consonant_y = noun.strip_suffix('y').filter(|stem| {
        stem.chars()
            .last()
            .is_some_and(|c| !"aeiou".contains(c.to_ascii_lowercase()))
    });
    if let Some(stem) = consonant_y {
        return format!("{stem}ies");
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| noun.ends_with(e))
    {
        return format!("{noun}es");
    }
    format!("{noun}s")
}

/// The character an agent plays, or the agent id when the session does not know it.
fn character(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map_or_else(|| agent.to_string(), |x| x.character.name.clone())
}

/// The player at an agent's seat, or the agent id.
fn player(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map_or_else(|| agent.to_string(), |x| x.player.name.clone())
}

#[cfg(test)]
mod tests {
    use super::{count, noun_for};

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(count(1, "fact"), "1 fact");
        assert_eq!(count(19u64, "fact"), "19 facts");
        assert_eq!(count(0usize, "clock"), "0 clocks");
        assert_eq!(count(2, "party"), "2 parties");
        assert_eq!(count(1, "party"), "1 party");
        assert_eq!(count(3, "day"), "3 days");
        assert_eq!(count(2, "match"), "2 matches");
        assert_eq!(count(2, "person"), "2 people");
        assert_eq!(noun_for(2, "was"), "were");
    }
}
