//! An encounter's decisions for a person as seat-protocol asks: what their character attempts,
//! the same again after the overreach check sent it back, and a d20 roll. The seat's view is
//! what `/info` shows (their character, the place, who is here, the story lately), never the
//! encounter's state: the GM's secrets are not in it.

use crate::log::{Seat, State};
use crate::tools::CheckCall;
use serde_json::json;
use troupe_seat::{Ask, Command, form};

/// The decisions, by name.
pub const ACTION: &str = "action";
pub const ACTION_AGAIN: &str = "action_again";
pub const ROLL: &str = "roll";
/// The table command that sends the GM a private word.
pub const WHISPER: &str = "whisper";

/// What the seat may see when asked: what `/info` shows, and the view an AI at the seat makes
/// its prompt of (a person's page gets the same).
fn view(state: &State, seat: &Seat) -> serde_json::Value {
    json!({
        "info": crate::view::seat_info(state, &seat.id),
        "round": state.round.max(1),
        "player": crate::view::player_view(state, &seat.id),
    })
}

/// The seat's turn to act: what does its character attempt, or, its action sent back this turn,
/// the rewrite. Asked alike of a person and of an AI.
pub fn turn_ask(state: &State, seat: &Seat) -> Ask {
    match state.sent_back_to(&seat.id) {
        Some(sent) => action_again_ask(state, seat, &sent.text, &sent.feedback),
        None => action_ask(state, seat),
    }
}

fn whisper() -> Command {
    Command {
        name: WHISPER.into(),
        label: "Whisper to the GM".into(),
        fields: vec![form::line("text", "What only the GM hears")],
    }
}

/// What does your character attempt? (Empty: they wait.)
pub fn action_ask(state: &State, seat: &Seat) -> Ask {
    Ask {
        seat: seat.id.clone(),
        decision: ACTION.into(),
        prompt: format!("{}, what do you attempt?", who(seat)),
        shown: Vec::new(),
        view: view(state, seat),
        fields: vec![form::optional(
            "action",
            "What your character attempts (the GM decides what happens; empty: you wait)",
        )],
        commands: vec![whisper()],
        error: None,
        prefill: Default::default(),
    }
}

/// The action came back from the overreach check: rephrase it, or send nothing to have it go
/// to the GM as it was.
pub fn action_again_ask(state: &State, seat: &Seat, sent: &str, feedback: &str) -> Ask {
    Ask {
        seat: seat.id.clone(),
        decision: ACTION_AGAIN.into(),
        prompt: "Rephrase it, or press Enter to send it as it is for the GM to rule on: ".into(),
        shown: vec![format!("You wrote: {sent}")],
        view: view(state, seat),
        fields: vec![form::optional(
            "action",
            "Your action, rephrased (empty: send it as it is)",
        )],
        commands: vec![whisper()],
        error: Some(feedback.to_string()),
        prefill: Default::default(),
    }
}

/// Roll the d20 the GM asked for.
pub fn roll_ask(state: &State, seat: &Seat, check: &CheckCall) -> Ask {
    Ask {
        seat: seat.id.clone(),
        decision: ROLL.into(),
        prompt: format!(
            "{}, roll a d20{}: {}",
            who(seat),
            super::edge_words(check),
            check.what,
        ),
        shown: Vec::new(),
        view: view(state, seat),
        fields: Vec::new(),
        commands: Vec::new(),
        error: None,
        prefill: Default::default(),
    }
}

/// The seat of the person who runs the table beside its AI GM (at the web table).
pub const GM: &str = "gm";
/// The GM's table command that takes back the last round.
pub const UNDO: &str = "undo";

/// The GM's standing ask while the AI GM runs the encounter: the table's commands, which act at
/// once (the game does not wait on it), and what the last one answered (`shown`).
pub fn gm_ask(shown: Vec<String>) -> Ask {
    Ask {
        seat: GM.into(),
        decision: troupe_seat::STANDING.into(),
        prompt: "The AI GM runs the encounter. Your commands act at once.".into(),
        shown,
        view: serde_json::Value::Null,
        fields: Vec::new(),
        commands: vec![Command {
            name: UNDO.into(),
            label: "Take back the last round".into(),
            fields: Vec::new(),
        }],
        error: None,
        prefill: Default::default(),
    }
}

/// A person's name at the prompt, with their character's when it is another.
pub fn who(seat: &Seat) -> String {
    if seat.player == seat.character {
        seat.player.clone()
    } else {
        format!("{} ({})", seat.player, seat.character)
    }
}

#[cfg(test)]
mod tests {
    /// What a chat surface registers up front is the game's offer: the table commands an
    /// encounter's asks offer (a player's whisper, the GM's undo) are in it.
    #[test]
    fn every_command_an_ask_offers_is_in_the_games_offer() {
        let offered: Vec<String> = std::iter::once(super::whisper())
            .chain(super::gm_ask(Vec::new()).commands)
            .map(|c| c.name)
            .collect();
        for name in offered {
            assert!(
                crate::offer::OFFER
                    .table_commands
                    .iter()
                    .any(|(n, _)| *n == name),
                "/{name} is offered and not in the encounter's offer"
            );
        }
    }
}
