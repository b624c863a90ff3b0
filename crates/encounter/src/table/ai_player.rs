//! The AI at a player's seat, asked as a person is: the same ask (what does your character
//! attempt? roll the d20), answered with the same answer (the form's values), which the table
//! takes by the same rule (`turn::action_taken`). Its prompt is made of the ask's view alone,
//! what a person at that seat is shown; what the model said beyond the form (its reply as a
//! whole, with its dialogue and every attempt) travels with the answer as the call the log
//! keeps before it.

use async_trait::async_trait;
use serde_json::{Map, Value};
use troupe_llm::{CallTag, ChatRequest, Message, ResponseSchema};
use troupe_seat::{Answer, Ask, Seat};

use super::EncounterError;
use super::asks::{ACTION, ACTION_AGAIN, ROLL};
use super::call::Caller;
use crate::budget::Role;
use crate::log::ModelCall;
use crate::prompt::{player_messages, player_schema};
use crate::turn::action_text;
use crate::view::PlayerView;
use troupe_engine::{Error, Prompts};

/// An AI player for one ask: its model (through the table's caller) and the campaign's prompts.
pub struct AiPlayer<'a> {
    pub caller: Caller<'a>,
    pub prompts: &'a Prompts,
    /// The call its answer came from, for the log.
    pub call: Option<ModelCall>,
    /// Why it could not answer (its model failed past the gateway's retries, a prompt would not
    /// render): the table stops on it, saved, as it always has.
    pub failure: Option<Error>,
}

impl<'a> AiPlayer<'a> {
    pub fn new(caller: Caller<'a>, prompts: &'a Prompts) -> Self {
        AiPlayer {
            caller,
            prompts,
            call: None,
            failure: None,
        }
    }

    /// What its character attempts: the model's reply to the player's prompt, as the table
    /// hears it (the attempt, and the words in quotes).
    async fn action(&mut self, ask: &Ask) -> Result<String, Error> {
        let view: PlayerView = serde_json::from_value(ask.view["player"].clone())
            .map_err(|e| cannot(ask, format!("its view does not read ({e})")))?;
        let messages = player_messages(self.prompts, &view)?
            .iter()
            .map(|(role, text)| message(*role, text))
            .collect();
        let mut req = ChatRequest::new(CallTag::new(&ask.seat, "encounter_action"), messages);
        req.schema = Some(ResponseSchema {
            name: "encounter_action".to_string(),
            schema: player_schema(),
        });
        req.max_tokens = 200;
        // A reply refused for its shape is repaired by the gateway; only the final one is the
        // player's action.
        let (call, json) = self.caller.call(req, &ask.seat).await.0?;
        self.call = Some(call);
        Ok(action_text(&json))
    }
}

#[async_trait]
impl Seat for AiPlayer<'_> {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        let decided = match ask.decision.as_str() {
            ACTION | ACTION_AGAIN => self
                .action(ask)
                .await
                .map(|text| Map::from_iter([("action".to_string(), Value::String(text))])),
            // Its dice are rolled for it: a roll has no choices.
            ROLL => Ok(Map::new()),
            other => Err(cannot(ask, format!("it is not asked {other:?}"))),
        };
        match decided {
            Ok(values) => Answer::Decide { values },
            Err(e) => {
                let reason = e.to_string();
                self.failure = Some(e);
                Answer::Fail { reason }
            }
        }
    }
}

fn cannot(ask: &Ask, why: String) -> Error {
    EncounterError::AiCannotAnswer {
        seat: ask.seat.clone(),
        why,
    }
    .into()
}

pub(super) fn message(role: Role, text: &str) -> Message {
    match role {
        Role::System => Message::system(text),
        Role::User => Message::user(text),
        Role::Assistant => Message::assistant(text),
    }
}
