//! Party consensus: who backs which plan after a round of out-of-character talk, and whether
//! the party agrees (seed 000's rules).
//!
//! - **unanimous**: every player explicitly agrees with the leading plan;
//! - **majority**: more than half agree and nobody actively disagrees;
//! - **conflicted**: anything else. After the last round (or the time limit) the party votes.
//!
//! The seed checks the time-out before agreement, so a party that agrees in its fifth round
//! would count as timed out; here agreement is checked first, since a party that agrees has
//! nothing left to vote on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Discussion rounds before a forced vote (seed 001: 5 rounds or 2 minutes).
pub const MAX_DISCUSSION_ROUNDS: u32 = 5;
/// Seconds of discussion before a forced vote.
pub const DISCUSSION_SECONDS: u64 = 120;

/// A player's position in one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stance {
    Agree,
    Disagree,
    Neutral,
    /// Said nothing this round (no message, or the call failed and was skipped).
    Silent,
}

impl Stance {
    pub fn as_str(self) -> &'static str {
        match self {
            Stance::Agree => "agree",
            Stance::Disagree => "disagree",
            Stance::Neutral => "neutral",
            Stance::Silent => "silent",
        }
    }
}

/// How a discussion ended, or where it stands after a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Unanimous,
    Majority,
    Conflicted,
    /// Decided by a forced vote after the rounds or the time ran out.
    Vote,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Unanimous => "unanimous",
            Outcome::Majority => "majority",
            Outcome::Conflicted => "conflicted",
            Outcome::Vote => "vote",
        }
    }
}

/// The seed's rule over positions toward one plan.
pub fn detect(positions: &BTreeMap<String, Stance>) -> Outcome {
    let n = positions.len();
    let agree = positions.values().filter(|s| **s == Stance::Agree).count();
    let disagree = positions
        .values()
        .filter(|s| **s == Stance::Disagree)
        .count();
    if n > 0 && agree == n {
        Outcome::Unanimous
    } else if agree * 2 > n && disagree == 0 {
        Outcome::Majority
    } else {
        Outcome::Conflicted
    }
}

/// A plan put to the party: the proposer's latest one stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    pub proposer: String,
    pub plan: String,
    /// 0 for a proposal made with the strategic intent, else the discussion round.
    pub round: u32,
}

/// One player's message in a round, as far as the tally cares.
#[derive(Clone, Debug, PartialEq)]
pub struct Said {
    pub agent: String,
    pub stance: Stance,
    /// Whose plan the stance is about.
    pub on: Option<String>,
    /// True when the message put forward (or restated) the speaker's own plan.
    pub proposed: bool,
}

/// Where the party stands after a round.
#[derive(Clone, Debug, PartialEq)]
pub struct Tally {
    /// The plan with the most backers, if anyone proposed one.
    pub leading: Option<Proposal>,
    /// Every player's position toward the leading plan.
    pub positions: BTreeMap<String, Stance>,
    pub outcome: Outcome,
    /// Players who did not agree with the leading plan.
    pub dissent: Vec<String>,
}

/// Whose plan a message backs: its own new plan, the plan it agrees with, or — when it only
/// argues against another plan — its own standing one.
fn backing(said: &Said, standing: &[Proposal]) -> Option<String> {
    let has = |p: &str| standing.iter().any(|x| x.proposer == p);
    if said.proposed {
        return Some(said.agent.clone());
    }
    match (said.stance, &said.on) {
        (Stance::Agree, Some(p)) if has(p) => Some(p.clone()),
        (Stance::Disagree, _) if has(&said.agent) => Some(said.agent.clone()),
        _ => None,
    }
}

/// Tally one round. `agents` is the party in seat order; `standing` the proposals in the order
/// they were made (a proposer's latest replacing its earlier one); `said` this round's messages.
pub fn tally(agents: &[String], standing: &[Proposal], said: &[Said]) -> Tally {
    let backs: BTreeMap<&str, Option<String>> = said
        .iter()
        .map(|s| (s.agent.as_str(), backing(s, standing)))
        .collect();
    // Most backers wins; a tie goes to the plan made first.
    let mut leading: Option<(&Proposal, usize)> = None;
    for p in standing {
        let n = backs
            .values()
            .filter(|b| b.as_deref() == Some(p.proposer.as_str()))
            .count();
        if leading.is_none_or(|(_, best)| n > best) {
            leading = Some((p, n));
        }
    }
    let leading = leading.map(|(p, _)| p.clone());
    let positions: BTreeMap<String, Stance> = agents
        .iter()
        .map(|a| {
            let stance = match (said.iter().find(|s| &s.agent == a), &leading) {
                (None, _) => Stance::Silent,
                (Some(_), None) => Stance::Neutral,
                (Some(s), Some(l)) => match backs.get(a.as_str()).cloned().flatten() {
                    Some(b) if b == l.proposer => Stance::Agree,
                    Some(_) => Stance::Disagree,
                    None if s.stance == Stance::Disagree
                        && s.on.as_deref() == Some(l.proposer.as_str()) =>
                    {
                        Stance::Disagree
                    }
                    None if s.stance == Stance::Silent => Stance::Silent,
                    None => Stance::Neutral,
                },
            };
            (a.clone(), stance)
        })
        .collect();
    let outcome = if leading.is_some() {
        detect(&positions)
    } else {
        Outcome::Conflicted
    };
    let dissent = positions
        .iter()
        .filter(|(_, s)| **s != Stance::Agree)
        .map(|(a, _)| a.clone())
        .collect();
    Tally {
        leading,
        positions,
        outcome,
        dissent,
    }
}

/// The result of a forced vote.
#[derive(Clone, Debug, PartialEq)]
pub struct VoteResult {
    pub winner: Proposal,
    /// Votes per proposer.
    pub counts: BTreeMap<String, usize>,
    /// Players who voted for another plan (or for none).
    pub minority: Vec<String>,
}

/// Count a forced vote: most votes wins; a tie goes to the plan leading after the last round,
/// then to the plan made first. A vote for a plan nobody proposed counts for none.
pub fn count_votes(
    standing: &[Proposal],
    votes: &[(String, String)],
    last_leading: Option<&str>,
) -> Option<VoteResult> {
    let mut counts: BTreeMap<String, usize> =
        standing.iter().map(|p| (p.proposer.clone(), 0)).collect();
    for (_, v) in votes {
        if let Some(n) = counts.get_mut(v) {
            *n += 1;
        }
    }
    let best = counts.values().copied().max()?;
    let tied: Vec<&Proposal> = standing
        .iter()
        .filter(|p| counts.get(&p.proposer) == Some(&best))
        .collect();
    let winner = tied
        .iter()
        .find(|p| Some(p.proposer.as_str()) == last_leading)
        .or_else(|| tied.first())
        .map(|p| (*p).clone())?;
    let minority = votes
        .iter()
        .filter(|(_, v)| *v != winner.proposer)
        .map(|(a, _)| a.clone())
        .collect();
    Some(VoteResult {
        winner,
        counts,
        minority,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Stance::*;

    fn pos(v: &[Stance]) -> BTreeMap<String, Stance> {
        v.iter()
            .enumerate()
            .map(|(i, s)| (format!("agent_{}", i + 1), *s))
            .collect()
    }

    #[test]
    fn the_seeds_examples() {
        assert_eq!(detect(&pos(&[Agree, Agree, Agree])), Outcome::Unanimous);
        assert_eq!(detect(&pos(&[Agree, Agree, Neutral])), Outcome::Majority);
        assert_eq!(
            detect(&pos(&[Agree, Disagree, Neutral])),
            Outcome::Conflicted
        );
        assert_eq!(
            detect(&pos(&[Neutral, Neutral, Neutral])),
            Outcome::Conflicted
        );
    }

    #[test]
    fn majority_needs_more_than_half_and_no_disagreement() {
        // Exactly half is not a majority.
        assert_eq!(
            detect(&pos(&[Agree, Agree, Neutral, Silent])),
            Outcome::Conflicted
        );
        assert_eq!(
            detect(&pos(&[Agree, Agree, Agree, Silent])),
            Outcome::Majority
        );
        // One active dissenter spoils a 3-of-4 majority.
        assert_eq!(
            detect(&pos(&[Agree, Agree, Agree, Disagree])),
            Outcome::Conflicted
        );
        // Silence is not agreement.
        assert_eq!(detect(&pos(&[Agree, Silent])), Outcome::Conflicted);
        assert_eq!(detect(&BTreeMap::new()), Outcome::Conflicted);
    }

    fn agents(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("a{i}")).collect()
    }
    fn prop(p: &str, round: u32) -> Proposal {
        Proposal {
            proposer: p.into(),
            plan: format!("{p}'s plan"),
            round,
        }
    }
    fn said(agent: &str, stance: Stance, on: Option<&str>, proposed: bool) -> Said {
        Said {
            agent: agent.into(),
            stance,
            on: on.map(str::to_string),
            proposed,
        }
    }

    #[test]
    fn everyone_backing_one_plan_is_unanimous() {
        let standing = [prop("a1", 0), prop("a2", 0)];
        let t = tally(
            &agents(3),
            &standing,
            &[
                said("a1", Agree, Some("a1"), false),
                said("a2", Agree, Some("a1"), false),
                said("a3", Agree, Some("a1"), false),
            ],
        );
        assert_eq!(t.outcome, Outcome::Unanimous);
        assert_eq!(t.leading.unwrap().proposer, "a1");
        assert!(t.dissent.is_empty());
    }

    #[test]
    fn backing_a_rival_plan_is_active_disagreement() {
        let standing = [prop("a1", 0), prop("a2", 0)];
        let t = tally(
            &agents(4),
            &standing,
            &[
                said("a1", Agree, Some("a1"), false),
                said("a2", Disagree, Some("a1"), false), // still backs its own
                said("a3", Agree, Some("a1"), false),
                said("a4", Agree, Some("a1"), false),
            ],
        );
        assert_eq!(t.leading.as_ref().unwrap().proposer, "a1");
        assert_eq!(t.positions["a2"], Disagree);
        assert_eq!(t.outcome, Outcome::Conflicted);
        assert_eq!(t.dissent, vec!["a2".to_string()]);
    }

    #[test]
    fn a_neutral_or_silent_minority_allows_a_majority() {
        let standing = [prop("a2", 0)];
        let t = tally(
            &agents(4),
            &standing,
            &[
                said("a1", Agree, Some("a2"), false),
                said("a2", Neutral, None, true),
                said("a3", Neutral, None, false),
            ],
        );
        assert_eq!(t.positions["a2"], Agree, "proposing is backing");
        assert_eq!(t.positions["a3"], Neutral);
        assert_eq!(t.positions["a4"], Silent);
        assert_eq!(
            t.outcome,
            Outcome::Conflicted,
            "2 of 4 is not more than half"
        );
        let t = tally(
            &agents(3),
            &standing,
            &[
                said("a1", Agree, Some("a2"), false),
                said("a2", Agree, Some("a2"), false),
            ],
        );
        assert_eq!(t.outcome, Outcome::Majority);
        assert_eq!(t.dissent, vec!["a3".to_string()]);
    }

    #[test]
    fn ties_go_to_the_earlier_plan_and_no_plan_is_conflicted() {
        let standing = [prop("a2", 0), prop("a1", 1)];
        let t = tally(
            &agents(2),
            &standing,
            &[
                said("a1", Agree, Some("a1"), false),
                said("a2", Agree, Some("a2"), false),
            ],
        );
        assert_eq!(t.leading.unwrap().proposer, "a2");
        assert_eq!(t.outcome, Outcome::Conflicted);
        let t = tally(&agents(2), &[], &[said("a1", Agree, Some("a9"), false)]);
        assert!(t.leading.is_none());
        assert_eq!(t.outcome, Outcome::Conflicted);
        assert_eq!(
            t.positions["a1"], Neutral,
            "agreeing with a plan nobody made"
        );
    }

    #[test]
    fn votes_count_with_ties_to_the_last_leader() {
        let standing = [prop("a1", 0), prop("a2", 0)];
        let v = |a: &str, b: &str| (a.to_string(), b.to_string());
        let r = count_votes(
            &standing,
            &[v("a1", "a1"), v("a2", "a2"), v("a3", "a2"), v("a4", "zz")],
            None,
        )
        .unwrap();
        assert_eq!(r.winner.proposer, "a2");
        assert_eq!(r.counts["a2"], 2);
        assert_eq!(r.minority, vec!["a1".to_string(), "a4".to_string()]);
        let r = count_votes(&standing, &[v("a1", "a1"), v("a2", "a2")], Some("a2")).unwrap();
        assert_eq!(
            r.winner.proposer, "a2",
            "a tie goes to the plan leading last"
        );
        let r = count_votes(&standing, &[v("a1", "a1"), v("a2", "a2")], None).unwrap();
        assert_eq!(r.winner.proposer, "a1", "then to the plan made first");
        assert!(count_votes(&[], &[v("a1", "a1")], None).is_none());
    }
}
