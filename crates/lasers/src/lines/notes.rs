//! What only the GM reads about how the session runs: phases that failed, campaign memory,
//! model calls that failed or changed how the session asks.

use troupe_llm::AttemptRecord;

use super::{Kind, Line, character, player};
use crate::{Envelope, Event, FAILURES_BEFORE_GM, Phase, Session};

pub(super) fn lines(env: &Envelope, s: &Session) -> Option<Vec<Line>> {
    match &env.event {
        Event::PhaseFailed {
            agent,
            error,
            failures,
        } => {
            let phase = env.phase.map_or("A phase", |p| p.title());
            // The player layer's phases are the player's decisions; the rest, the character's.
            let who = match env.phase {
                Some(
                    Phase::Clarification
                    | Phase::StrategicIntent
                    | Phase::Discussion
                    | Phase::Directive,
                ) => player(s, agent),
                _ => character(s, agent),
            };
            let line = Line::gm(Kind::Problem, format!("{who} could not decide: {error}"));
            Some(vec![line.with_aside(format!(
                "{phase} failed (failure {failures}) — {}",
                failure_then(*failures)
            ))])
        }
        Event::MemoryRetrieved {
            agent,
            status,
            results,
            ..
        } => {
            let head = format!("(memory, {}: {status})", character(s, agent));
            let recalled = results.iter().map(|r| Line::gm(Kind::Recalled, r.clone()));
            Some(
                std::iter::once(Line::gm(Kind::Memory, head))
                    .chain(recalled)
                    .collect(),
            )
        }
        Event::MemoryStorage {
            status, extraction, ..
        } => Some(vec![Line::gm(
            Kind::Memory,
            stored(status, extraction.as_deref()),
        )]),
        Event::ModelCall { record, .. } => Some(model_call(record).into_iter().collect()),
        _ => None,
    }
}

/// What the session does after a phase failed this many times.
pub(crate) fn failure_then(failures: u32) -> &'static str {
    if failures < FAILURES_BEFORE_GM {
        "rolled back; retrying once"
    } else {
        "rolled back; the GM decides"
    }
}

/// A storage step as the GM reads it. The status is the log's ("stored 19 new facts from
/// turns 1, 2 (session end)"), its counts made to agree with their nouns; when the model drew
/// no facts, what was stored is said to be the turns as they were told.
fn stored(status: &str, extraction: Option<&str>) -> String {
    let status = status
        .replacen("stored 1 new facts", "stored 1 new fact", 1)
        .replacen("; 1 conflicts settled", "; 1 conflict settled", 1);
    let fallback = extraction.and_then(|x| x.strip_prefix("fallback: "));
    if let Some(why) = fallback {
        return format!(
            "(memory: {status}, as the turns were told, not as facts drawn by the model: {why})"
        );
    }
    match extraction {
        Some("off") => format!("(memory: {status}; fact extraction is off)"),
        Some(x) if x != "model" => format!("(memory: {status}; fact extraction: {x})"),
        _ => format!("(memory: {status})"),
    }
}

/// A call worth a line: one that fell back to the schema in the prompt, or failed and is tried
/// again. Every other call says nothing.
fn model_call(record: &AttemptRecord) -> Option<Line> {
    let text = match (&record.error, record.retry_in_ms) {
        _ if record.fell_back_to.is_some() => format!(
            "note: the model server refused {} output; asking for {} (the schema in the prompt) for the rest of the session",
            record
                .structured_output
                .map_or("structured", |s| s.as_str()),
            record.fell_back_to.map_or("", |s| s.as_str()),
        ),
        (Some(e), Some(ms)) => format!(
            "model call failed (attempt {}): {e}; retrying in {:.0} s",
            record.attempt,
            ms as f64 / 1000.0
        ),
        _ => return None,
    };
    Some(Line::gm(Kind::Model, text))
}

#[cfg(test)]
mod tests {
    use super::stored;

    #[test]
    fn a_storage_line_agrees_with_itself() {
        assert_eq!(
            stored(
                "stored 1 new facts from turn 1 (session end)",
                Some("model")
            ),
            "(memory: stored 1 new fact from turn 1 (session end))"
        );
        let fallback = stored(
            "stored 19 new facts from turns 1, 2 (session end)",
            Some("fallback: the model found no facts"),
        );
        assert_eq!(
            fallback,
            "(memory: stored 19 new facts from turns 1, 2 (session end), as the turns were \
             told, not as facts drawn by the model: the model found no facts)"
        );
    }
}
