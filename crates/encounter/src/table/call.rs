//! One model call at the encounter's table, made the same way for every seat a model holds (the
//! GM's, an AI player's), and as a scene's are ([`troupe_engine::attempts::call`]: seeded by
//! its place in the log, shown on the watch while it thinks and streams, every attempt kept),
//! kept as the encounter's log keeps it, with the replies the gateway refused for their shape.

use std::time::Instant;

use serde_json::Value;
use troupe_engine::attempts::{self, For};
use troupe_llm::{ChatRequest, Gateway};

use super::EncounterError;
use super::run::EncounterWatch;
use crate::log::{ModelCall, State};

/// The model's reply as the log keeps it and its JSON, or why the call failed.
pub type Called = Result<(ModelCall, Value), EncounterError>;
/// A reply the gateway refused for its shape, with the problems.
pub type Refused = (String, Vec<String>);

/// What a call needs of the table: its gateway, its watch, and where in the log it is made.
pub struct Caller<'a> {
    pub gateway: &'a Gateway,
    pub watch: &'a mut Box<EncounterWatch>,
    /// The run's seed and the log's next position: every call records an event before the next
    /// is made, so the two name the call for its seed.
    pub seed: u64,
    pub seq: u64,
}

impl<'a> Caller<'a> {
    pub fn at(gateway: &'a Gateway, watch: &'a mut Box<EncounterWatch>, state: &State) -> Self {
        Caller {
            gateway,
            watch,
            seed: state.seed,
            seq: state.seq,
        }
    }

    /// One model call for `agent` through the gateway: the call (or why it failed), and each
    /// reply the gateway refused for its shape, in order.
    pub async fn call(&mut self, mut req: ChatRequest, agent: &str) -> (Called, Vec<Refused>) {
        let identity = format!("{agent} at {}", self.seq);
        let started = Instant::now();
        let seeded = (self.seed, identity.as_str());
        let whose = For {
            seat: agent,
            doing: "thinking",
        };
        let made = attempts::call(self.gateway, &mut req, seeded, whose, &mut **self.watch).await;
        let attempts = made.logged();
        let refused = made
            .refused
            .into_iter()
            .map(|(reply, error)| (reply, vec![error]))
            .collect();
        let result = made.reply;
        let reply = match result {
            Ok(r) => r,
            Err(e) => {
                let e = EncounterError::Model {
                    agent: agent.to_string(),
                    message: e.to_string(),
                    refused: String::new(),
                };
                return (Err(e), refused);
            }
        };
        let json = reply
            .json
            .clone()
            .or_else(|| serde_json::from_str(&reply.content).ok())
            .unwrap_or(Value::Null);
        let call = ModelCall {
            agent: agent.to_string(),
            purpose: req.tag.purpose.clone(),
            model: self.gateway.model_name(),
            reply: reply.content,
            json: json.clone(),
            tokens_in: u64::from(reply.usage.input_tokens),
            tokens_out: u64::from(reply.usage.output_tokens),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            attempts,
        };
        (Ok((call, json)), refused)
    }
}
