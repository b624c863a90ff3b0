//! The characters in play: attempts and their checks, what they say, the GM's rulings, the
//! dice, LASER FEELINGS, the decisions that change what follows.

use troupe_validator::Verdict;

use super::{Kind, Line, character, player};
use crate::visibility::describe_roll;
use crate::{Event, RollOverride, Ruling, Session, VerdictResult};

/// An event of play as the table's lines (none for an event of another kind).
pub(super) fn lines(event: &Event, s: &Session) -> Option<Vec<Line>> {
    let ch = |agent: &str| character(s, agent);
    let one = |line: Line| Some(vec![line]);
    match event {
        Event::CharacterAction {
            agent,
            attempt,
            action,
        } => Some(attempted(&ch(agent), *attempt, action)),
        Event::GmReviewedAction { agent, action } => one(Line::table(
            Kind::Attempt,
            format!("{} attempts: {action}", ch(agent)),
        )
        .with_aside("as the GM set it")),
        Event::Validation {
            agent,
            verdict,
            result,
            corrected,
            ..
        } => one(check_line(s, agent, verdict, *result, corrected.as_deref())),
        Event::GmAdjudication { agent, ruling } => {
            one(Line::table(Kind::Ruling, ruled(&ch(agent), ruling)))
        }
        Event::DiceRolled {
            agent,
            result,
            helping,
            ..
        } => {
            let line = Line::table(
                Kind::Roll,
                format!("{} rolls {}", ch(agent), describe_roll(result)),
            );
            one(match helping {
                Some(target) => line.with_aside(format!("helping {}", ch(target))),
                None => line,
            })
        }
        // Kept dice change nothing: only an override the GM made is told.
        Event::GmRollOverride {
            change: RollOverride::Keep,
            ..
        } => Some(Vec::new()),
        Event::GmRollOverride { agent, result, .. } => one(Line::table(
            Kind::Roll,
            format!(
                "The GM sets {}'s dice: {}",
                ch(agent),
                describe_roll(result)
            ),
        )),
        Event::GmRoll {
            expression,
            faces,
            total,
            ..
        } => one(Line::table(
            Kind::Roll,
            format!("The GM rolls {expression}: {faces:?} = {total}"),
        )),
        Event::GmForcedResult { success } => one(Line::gm(
            Kind::Decision,
            format!("The GM decides: {}", forced_result(*success)),
        )),
        Event::LaserFeelingsQuestion { agent, question } => one(Line::table(
            Kind::Insight,
            format!("LASER FEELINGS! {} asks: {question}", ch(agent)),
        )),
        Event::InsightDecision { agent, decision } => one(Line::gm(
            Kind::Decision,
            format!(
                "{} decides to {}: {}",
                player(s, agent),
                insight_choice(decision.change_action),
                decision.reason
            ),
        )),
        Event::CharacterReaction { agent, text } => {
            one(Line::table(Kind::Speech, format!("{}: {text}", ch(agent))))
        }
        _ => None,
    }
}

/// An attempt, and what the character says with it.
fn attempted(character: &str, attempt: u32, action: &troupe_agents::ActionDecl) -> Vec<Line> {
    let mut out = vec![
        Line::table(
            Kind::Attempt,
            format!("{character} attempts: {}", action.action),
        )
        .with_aside(format!("attempt {attempt}")),
    ];
    if !action.dialogue.is_empty() {
        out.push(Line::table(
            Kind::Speech,
            format!("{character}: {}", quoted(&action.dialogue)),
        ));
    }
    out
}

/// The overreach check's verdict as the GM's line (a person is asked to rephrase, a model again).
fn check_line(
    s: &Session,
    agent: &str,
    verdict: &Verdict,
    result: VerdictResult,
    corrected: Option<&str>,
) -> Line {
    let person = s
        .seat(agent)
        .is_some_and(|x| x.taken_by == troupe_campaign::SeatTaker::Human);
    let whose = Whose {
        character: character(s, agent),
        player: player(s, agent),
        person,
    };
    Line::gm(Kind::Check, checked(&whose, verdict, result, corrected))
}

fn ruled(character: &str, ruling: &Ruling) -> String {
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

/// Whose attempt the overreach check judged: the character, its player, and whether a person
/// plays it (a person is asked to rephrase; a model is asked again, more strictly).
struct Whose {
    character: String,
    player: String,
    person: bool,
}

/// The overreach check's verdict on an attempt, whose it is, with the words it flagged.
fn checked(
    whose: &Whose,
    verdict: &Verdict,
    result: VerdictResult,
    corrected: Option<&str>,
) -> String {
    let flagged = verdict
        .violations
        .iter()
        .map(|x| format!("\"{}\"", x.excerpt))
        .collect::<Vec<_>>()
        .join(", ");
    let name = &whose.character;
    match result {
        VerdictResult::Passed => format!("✓ {name}'s attempt states intent only"),
        VerdictResult::Retry if whose.person => format!(
            "✗ {name}'s attempt narrates a result ({flagged}) — {} is asked to rephrase it",
            whose.player
        ),
        VerdictResult::Retry => format!(
            "✗ {name}'s attempt narrates a result ({flagged}) — asking again, more strictly"
        ),
        VerdictResult::AutoCorrected => format!(
            "✗ {name}'s attempt still narrates a result ({flagged}) — auto-corrected to: {}",
            corrected.unwrap_or_default()
        ),
        VerdictResult::FlaggedForGm => {
            format!("✗ {name}'s attempt still narrates a result ({flagged}) — flagged for the GM")
        }
    }
}

/// What `/success` or `/fail` does to the next roll.
pub(crate) fn forced_result(success: bool) -> &'static str {
    if success {
        "the next roll succeeds, whatever the dice say."
    } else {
        "the next roll fails, whatever the dice say."
    }
}

/// What a player chose after a LASER FEELINGS answer.
pub(crate) fn insight_choice(change_action: bool) -> &'static str {
    if change_action {
        "change the action and roll again"
    } else {
        "keep the action"
    }
}

/// Spoken words in quotes, once: a model that quoted its own dialogue is not quoted twice.
fn quoted(words: &str) -> String {
    let words = words.trim();
    let pairs = [('"', '"'), ('\u{201c}', '\u{201d}')];
    let already = pairs
        .iter()
        .any(|&(open, close)| words.len() > 1 && words.starts_with(open) && words.ends_with(close));
    if already {
        words.to_string()
    } else {
        format!("\"{words}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn dialogue_is_quoted_once() {
        assert_eq!(quoted("Hold the door"), "\"Hold the door\"");
        assert_eq!(quoted(" \"Hold the door\" "), "\"Hold the door\"");
        assert_eq!(quoted("“Hold the door”"), "“Hold the door”");
        assert_eq!(quoted("\""), "\"\"\"");
        assert_eq!(quoted("\"Hold\" she says"), "\"\"Hold\" she says\"");
    }
}
