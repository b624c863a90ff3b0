//! The scripted players' replies, turn by turn, in the replay provider's format. A turn's
//! calls follow the engine's order: clarifying questions, strategic intent, (with two or more
//! players) the discussion, the action (with a re-ask after an overreach or an insight), the
//! reaction. Replies are matched by agent and purpose, so the order across agents is free.

use serde_json::{Value, json};

use super::{Reply, Seat};

/// What one seat says and does in a turn.
#[derive(Clone, Debug, Default)]
pub struct Play {
    pub strategy: String,
    pub directive: String,
    /// Action attempts in order: all but the last are rejected (they narrate a result).
    pub actions: Vec<String>,
    pub dialogue: String,
    pub task: &'static str,
    /// LASER FEELINGS: the question, whether the action changes and the new action.
    pub insight: Option<(String, bool, String)>,
}

/// How a party settles a turn's plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Talk {
    /// Everyone agrees on the first seat's proposal in the first round.
    Agree,
    /// Everyone holds their own plan for two rounds (the engine then calls a vote: the talk
    /// stalled), votes for itself, and directs its character against the result.
    Deadlock,
}

fn reply(seat: &Seat, purpose: &'static str, content: Value) -> Reply {
    Reply {
        agent: seat.agent.clone(),
        purpose,
        content,
    }
}

/// Every seat's replies for one turn; `proposals[i]` is seat i's plan (parties only).
pub fn turn(seats: &[Seat], plays: &[Play], proposals: &[String], talk: Talk) -> Vec<Reply> {
    let party = seats.len() > 1;
    let mut out = Vec::new();
    for (i, (seat, play)) in seats.iter().zip(plays).enumerate() {
        out.push(reply(
            seat,
            "clarifying_questions",
            json!({"questions": []}),
        ));
        let proposal = if party {
            proposals[i].clone()
        } else {
            String::new()
        };
        out.push(reply(
            seat,
            "strategic_intent",
            json!({"strategy": play.strategy, "directive": play.directive, "proposal": proposal}),
        ));
    }
    if party {
        out.extend(discussion(seats, plays, talk));
    }
    for (seat, play) in seats.iter().zip(plays) {
        out.extend(acting(seat, play));
    }
    out
}

fn discussion(seats: &[Seat], plays: &[Play], talk: Talk) -> Vec<Reply> {
    let mut out = Vec::new();
    let rounds = if talk == Talk::Agree { 1 } else { 2 };
    for _ in 0..rounds {
        for (i, (seat, play)) in seats.iter().zip(plays).enumerate() {
            let (stance, on, message) = match talk {
                Talk::Agree => ("agree", seats[0].agent.clone(), "Agreed, let's do that."),
                Talk::Deadlock => (
                    "disagree",
                    seats[(i + 1) % seats.len()].agent.clone(),
                    play.strategy.as_str(),
                ),
            };
            out.push(reply(
                seat,
                "ooc_discussion",
                json!({"message": message, "stance": stance, "on": on, "proposal": "",
                    "directive": play.directive}),
            ));
        }
    }
    if talk == Talk::Deadlock {
        for seat in seats {
            out.push(reply(
                seat,
                "forced_vote",
                json!({"vote": seat.agent, "remark": "Mine, obviously."}),
            ));
            out.push(reply(
                seat,
                "party_directive",
                json!({"directive": "Ignore the vote and do something flashy on your own."}),
            ));
        }
    }
    out
}

fn action(seat: &Seat, text: &str, dialogue: &str, task: &str) -> Reply {
    reply(
        seat,
        "character_action",
        json!({"action": text, "dialogue": dialogue, "task_type": task, "prepared": false,
            "expert": false, "helping": "", "justification": "It fits the moment."}),
    )
}

fn acting(seat: &Seat, play: &Play) -> Vec<Reply> {
    let mut out: Vec<Reply> = play
        .actions
        .iter()
        .map(|a| action(seat, a, &play.dialogue, play.task))
        .collect();
    if let Some((question, change, new_action)) = &play.insight {
        out.push(reply(
            seat,
            "insight_question",
            json!({"question": question}),
        ));
        let reason = if *change {
            "The answer says the plan walks into danger."
        } else {
            "Whatever."
        };
        out.push(reply(
            seat,
            "insight_decision",
            json!({"change_action": change, "reason": reason}),
        ));
        if *change {
            out.push(action(seat, new_action, "", play.task));
        }
    }
    out.push(reply(
        seat,
        "character_reaction",
        json!({"reaction": format!("{} takes a slow breath and watches.", seat.character)}),
    ));
    out
}
