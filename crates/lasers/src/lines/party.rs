//! The players out of character: questions for the GM, private plans, the party's discussion
//! and where it lands, and each player's directive to its character.

use troupe_agents::{Outcome, Stance};

use super::{Audience, Kind, Line, character, player};
use crate::{Event, Session};

pub(super) fn lines(event: &Event, s: &Session) -> Option<Vec<Line>> {
    let one = |line: Line| Some(vec![line]);
    match event {
        Event::ClarifyingQuestions {
            agent, questions, ..
        } => Some(
            questions
                .iter()
                .map(|q| Line::table(Kind::Question, format!("{} asks: {q}", character(s, agent))))
                .collect(),
        ),
        Event::StrategicIntent { agent, intent } => {
            let mut out = vec![Line::new(
                Kind::Plan,
                Audience::Seat(agent.clone()),
                format!("{}'s plan: {}", player(s, agent), intent.strategy),
            )];
            if let Some(p) = &intent.proposal {
                out.push(Line::table(
                    Kind::Ooc,
                    format!("{} proposes: {p}", player(s, agent)),
                ));
            }
            Some(out)
        }
        Event::OocMessage {
            agent,
            round,
            message,
            stance,
            on,
            proposal,
            ..
        } => one(said(
            s,
            agent,
            message,
            *round,
            *stance,
            on.as_deref(),
            proposal.as_deref(),
        )),
        Event::GmOoc { text, .. } if !text.is_empty() => {
            one(Line::table(Kind::Ooc, format!("GM: {text}")))
        }
        // The plan is named by its proposer's player, as in the transcript (the web table
        // named it by the agent id before the renderers were one).
        Event::VoteCast { agent, vote, .. } => one(Line::table(
            Kind::Ooc,
            format!("{} votes for {}'s plan.", player(s, agent), player(s, vote)),
        )),
        Event::Directive { agent, text, .. } => one(Line::new(
            Kind::Directive,
            Audience::Seat(agent.clone()),
            format!("To {}: {text}", character(s, agent)),
        )),
        Event::DiscussionStalled { round } => {
            one(Line::gm(Kind::Notice, discussion_stalled(*round)))
        }
        Event::DiscussionTimedOut { round, elapsed_ms } => one(Line::gm(
            Kind::Notice,
            discussion_timed_out(*round, *elapsed_ms),
        )),
        Event::Consensus {
            round,
            outcome,
            plan,
            proposer,
            dissent,
            ..
        } => Some(consensus(
            s,
            *round,
            *outcome,
            plan.as_deref(),
            proposer.as_deref(),
            dissent,
        )),
        _ => None,
    }
}

/// One message of the discussion; where its speaker stands goes aside.
fn said(
    s: &Session,
    agent: &str,
    message: &str,
    round: u32,
    stance: Stance,
    on: Option<&str>,
    proposal: Option<&str>,
) -> Line {
    let with = on.map(|o| player(s, o));
    let mut aside = ooc_position(round, stance, with.as_deref());
    if let Some(p) = proposal {
        aside.push_str(&format!("; proposes: {p}"));
    }
    Line::table(Kind::Ooc, format!("{}: {message}", player(s, agent))).with_aside(aside)
}

/// "round 2; agree with Alex": where a speaker stands in a round of the discussion.
pub(crate) fn ooc_position(round: u32, stance: Stance, with: Option<&str>) -> String {
    let with = with.map(|name| format!(" with {name}")).unwrap_or_default();
    format!("round {round}; {}{with}", stance.as_str())
}

pub(crate) fn discussion_stalled(round: u32) -> String {
    format!(
        "Round {} changed no one's stance: the party votes instead of a round {round}.",
        round.saturating_sub(1)
    )
}

pub(crate) fn discussion_timed_out(round: u32, elapsed_ms: u64) -> String {
    format!(
        "The discussion ran out of time before round {round} ({:.0} s): the party votes.",
        elapsed_ms as f64 / 1000.0
    )
}

/// Where the discussion landed; after a vote, what each outvoted player said they would do.
fn consensus(
    s: &Session,
    round: u32,
    outcome: Outcome,
    plan: Option<&str>,
    proposer: Option<&str>,
    dissent: &[String],
) -> Vec<Line> {
    // Where the party landed is out of character, as its discussion is: the table reads it.
    let line = |text: String| Line::table(Kind::Consensus, text);
    if outcome == Outcome::Conflicted {
        return vec![line(format!("after round {round}: no agreement yet"))];
    }
    let (Some(plan), Some(proposer)) = (plan, proposer) else {
        return vec![line(
            "no plan was put forward: each player follows their own".into(),
        )];
    };
    let mut head = format!(
        "consensus ({}): {}'s plan — {plan}",
        outcome.as_str(),
        player(s, proposer)
    );
    if !dissent.is_empty() {
        let names: Vec<String> = dissent.iter().map(|a| player(s, a)).collect();
        head.push_str(&format!(" (not with it: {})", names.join(", ")));
    }
    let mut out = vec![line(head)];
    if outcome == Outcome::Vote {
        for a in dissent {
            if let Some((_, Some(remark))) = s.turn.votes.get(a) {
                out.push(line(format!("{}: {remark}", player(s, a))));
            }
        }
    }
    out
}
