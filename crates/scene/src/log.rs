//! The scene as a log: every change is a [`SceneEvent`]; the state is their fold. The event kinds
//! are the closed set of causes: a tool call (by the player or the GM), a GM command on world
//! knowledge, an undo, the scene's start and end. Nothing else changes the state.

use serde::{Deserialize, Serialize};
use troupe_rules::roll_seed;

use crate::Error;
use crate::effects::{Effect, Registry};
use crate::exec::Fact;
use crate::model::{SceneDef, State};
use crate::narrator::narrate;
use crate::router::run_tool;
use crate::tools::{Caller, ToolCall};
use crate::world::{Truth, WorldDelta};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event_type", rename_all = "snake_case")]
pub enum SceneEvent {
    SceneStarted {
        scene: Box<SceneDef>,
        seed: u64,
    },
    /// A tool ran and its effects were applied. `seed` is the roll seed it was given.
    ToolApplied {
        turn: u32,
        actor: String,
        caller: Caller,
        input: String,
        call: ToolCall,
        seed: u64,
        effects: Vec<Effect>,
        facts: Vec<Fact>,
        narration: String,
    },
    /// A call that was refused: recorded, changes nothing.
    Rejected {
        turn: u32,
        actor: String,
        caller: Caller,
        input: String,
        call: ToolCall,
        reason: String,
    },
    /// What a model planner answered for the player's words (the call it led to follows as
    /// `ToolApplied` or `Rejected`). Kept so the log holds every model output; the fold and the
    /// replay never ask the model again.
    PlannerReplied {
        actor: String,
        input: String,
        model: String,
        reply: serde_json::Value,
    },
    /// A model call made for the scene (the AI player's line, the planner, the polish): every
    /// attempt as the model gateway records it for every game (the request's messages, the
    /// reply, tokens, latency, errors), so the log shows what each model was shown.
    ModelCalled {
        agent: String,
        purpose: String,
        attempts: Vec<serde_json::Value>,
    },
    /// A model's rewrite of the narration of event `of`, and whether it kept to the facts
    /// (`refused` says why not; the template stands then).
    NarrationPolished {
        of: u64,
        model: String,
        text: String,
        refused: Option<String>,
    },
    /// A GM's improv note on a card.
    Noted {
        card: String,
        text: String,
    },
    /// A fact's truth level changed (promoting improv to canon is this, explicitly).
    TruthChanged {
        card: String,
        index: usize,
        from: Truth,
        to: Truth,
    },
    /// The events from `from_seq` on (before this one) no longer stand.
    Undone {
        from_seq: u64,
    },
    SceneEnded {
        deltas: Vec<WorldDelta>,
    },
    /// The seat changed hands (at a served table): `person` true, a person speaks for it from
    /// here on; false, an AI does. Not part of the story: an undo never takes it back, and the
    /// state does not fold it ([`held_by_person`] reads it from the whole log).
    SeatHanded {
        seat: String,
        person: bool,
        /// Why the table handed it over on its own (the AI's model failed), when it did: a
        /// hand-over someone asked for has none, and its event reads as it always has.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// An event and its place in the log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub seq: u64,
    #[serde(flatten)]
    pub event: SceneEvent,
}

/// Who holds `seat` by the log's last hand-over of it (true: a person), over every event, undone
/// or not: taking back a turn does not take back who plays. None when it never changed hands.
pub fn held_by_person(events: &[Envelope], seat: &str) -> Option<bool> {
    events.iter().rev().find_map(|e| match &e.event {
        SceneEvent::SeatHanded {
            seat: s, person, ..
        } if s == seat => Some(*person),
        _ => None,
    })
}

/// The events that still stand: those not taken back by a later `Undone`.
pub fn live(events: &[Envelope]) -> Vec<&Envelope> {
    let mut out: Vec<&Envelope> = Vec::with_capacity(events.len());
    for env in events {
        if let SceneEvent::Undone { from_seq } = env.event {
            out.retain(|e| e.seq < from_seq);
        } else {
            out.push(env);
        }
    }
    out
}

/// Fold standing events into the state. Fails on a log that does not start a scene or whose
/// effects do not apply (a corrupt or hand-edited log).
pub fn fold(events: &[Envelope]) -> Result<State, Error> {
    let registry = Registry::default();
    let mut state: Option<State> = None;
    for env in live(events) {
        match (&env.event, state.as_mut()) {
            (SceneEvent::SceneStarted { scene, .. }, None) => state = Some(State::new(scene)),
            (_, Some(s)) => apply(s, &registry, env)?,
            (_, None) => return Err(Error::NotStarted),
        }
    }
    state.ok_or(Error::NotStarted)
}

/// Apply one standing event to the state.
fn apply(state: &mut State, registry: &Registry, env: &Envelope) -> Result<(), Error> {
    let corrupt = |message: String| Error::Corrupt {
        seq: env.seq,
        message,
    };
    match &env.event {
        SceneEvent::SceneStarted { .. } => return Err(corrupt("a second scene start".into())),
        SceneEvent::ToolApplied { effects, call, .. } => {
            registry
                .apply_all(state, effects)
                .map_err(|e| corrupt(e.to_string()))?;
            finish_call(state, call);
        }
        SceneEvent::Rejected { .. }
        | SceneEvent::Undone { .. }
        | SceneEvent::PlannerReplied { .. }
        | SceneEvent::ModelCalled { .. }
        | SceneEvent::NarrationPolished { .. }
        | SceneEvent::SeatHanded { .. } => {}
        SceneEvent::Noted { card, text } => state.world.note(card, text),
        SceneEvent::TruthChanged {
            card, index, to, ..
        } => {
            state
                .world
                .set_truth(card, *index, *to)
                .map_err(|e| corrupt(e.to_string()))?;
        }
        SceneEvent::SceneEnded { .. } => state.ended = true,
    }
    Ok(())
}

/// The turn marker after a call: questions count against the turn's three, turn-ending tools
/// pass the turn on.
fn finish_call(state: &mut State, call: &ToolCall) {
    if matches!(call, ToolCall::AskClarifying { .. }) {
        state.clarifications += 1;
    } else if call.ends_turn() {
        state.advance_turn();
    }
}

/// A scene being played: its log and the state folded from it. Every command returns the event
/// it appended, for the caller to persist.
///
/// No per-turn snapshot is kept: cloning the state every turn cost more than it saved (a
/// 1,000-turn replay spent most of its time cloning), while folding a whole 1,000-turn log
/// takes well under a millisecond (BENCHMARKS.md), so undo folds the standing events again.
pub struct Scene {
    pub seed: u64,
    pub events: Vec<Envelope>,
    pub state: State,
    registry: Registry,
}

impl Scene {
    pub fn start(def: SceneDef, seed: u64) -> Scene {
        let state = State::new(&def);
        Scene {
            seed,
            events: vec![Envelope {
                seq: 0,
                event: SceneEvent::SceneStarted {
                    scene: Box::new(def),
                    seed,
                },
            }],
            state,
            registry: Registry::default(),
        }
    }

    /// Rebuild a scene from its log (resume after a crash): the fold.
    pub fn resume(events: Vec<Envelope>) -> Result<Scene, Error> {
        let seed = match events.first().map(|e| &e.event) {
            Some(SceneEvent::SceneStarted { seed, .. }) => *seed,
            _ => return Err(Error::NotStarted),
        };
        Ok(Scene {
            seed,
            state: fold(&events)?,
            events,
            registry: Registry::default(),
        })
    }

    fn push(&mut self, event: SceneEvent) -> &Envelope {
        let seq = self.events.last().map_or(0, |e| e.seq + 1);
        self.events.push(Envelope { seq, event });
        &self.events[self.events.len() - 1]
    }

    fn next_seq(&self) -> u64 {
        self.events.last().map_or(0, |e| e.seq + 1)
    }

    /// The roll seed of the next event: the session's roll stream at the event's position.
    pub fn next_seed(&self) -> u64 {
        roll_seed(self.seed, self.next_seq())
    }

    /// Run a call through the router, recording it as applied or rejected.
    pub fn act(&mut self, input: &str, call: ToolCall, caller: Caller) -> &Envelope {
        let seed = self.next_seed();
        let actor = call
            .actor()
            .unwrap_or(self.state.current_actor())
            .to_string();
        let turn = self.state.turn;
        let event = match run_tool(&mut self.state, &self.registry, &call, caller, seed) {
            Ok(outcome) => {
                finish_call(&mut self.state, &call);
                SceneEvent::ToolApplied {
                    turn,
                    actor,
                    caller,
                    input: input.to_string(),
                    narration: narrate(&outcome.facts, &self.state.content),
                    call,
                    seed,
                    effects: outcome.effects,
                    facts: outcome.facts,
                }
            }
            Err(r) => SceneEvent::Rejected {
                turn,
                actor,
                caller,
                input: input.to_string(),
                call,
                reason: r.reason,
            },
        };
        self.push(event)
    }

    /// Take back the last turn: the last standing turn-ending call and everything after it.
    pub fn undo(&mut self) -> Result<&Envelope, Error> {
        let from_seq = live(&self.events)
            .into_iter()
            .rev()
            .find_map(|e| match &e.event {
                SceneEvent::ToolApplied { call, .. } if call.ends_turn() => Some(e.seq),
                _ => None,
            })
            .ok_or(Error::NothingToUndo)?;
        self.push(SceneEvent::Undone { from_seq });
        self.state = fold(&self.events)?;
        self.events.last().ok_or(Error::NotStarted)
    }

    /// Record a model call (its attempts) before what it led to.
    pub fn model_called(
        &mut self,
        agent: &str,
        purpose: &str,
        attempts: Vec<serde_json::Value>,
    ) -> &Envelope {
        self.push(SceneEvent::ModelCalled {
            agent: agent.to_string(),
            purpose: purpose.to_string(),
            attempts,
        })
    }

    /// Record a model planner's reply before the call it led to.
    pub fn planner_replied(
        &mut self,
        input: &str,
        model: &str,
        reply: serde_json::Value,
    ) -> &Envelope {
        let actor = self.state.current_actor().to_string();
        self.push(SceneEvent::PlannerReplied {
            actor,
            input: input.to_string(),
            model: model.to_string(),
            reply,
        })
    }

    /// Offer a model's rewrite of the last event's narration (model calls aside): checked
    /// against that event's facts and recorded, used or refused.
    pub fn polish(&mut self, model: &str, text: &str) -> Option<&Envelope> {
        // The polish's own model call is recorded before it: look past it.
        let last = self
            .events
            .iter()
            .rev()
            .find(|e| !matches!(e.event, SceneEvent::ModelCalled { .. }))?;
        let SceneEvent::ToolApplied {
            facts, narration, ..
        } = &last.event
        else {
            return None;
        };
        let names: Vec<&str> = self
            .state
            .entities
            .values()
            .map(|e| e.name.as_str())
            .collect();
        let checked =
            crate::narrator::check_polish(facts, narration, text, &names, &self.state.content);
        let event = SceneEvent::NarrationPolished {
            of: last.seq,
            model: model.to_string(),
            text: text.trim().to_string(),
            refused: checked.err().map(|e| e.to_string()),
        };
        Some(self.push(event))
    }

    /// A GM's improv note on a world card.
    pub fn note(&mut self, card: &str, text: &str) -> &Envelope {
        self.state.world.note(card, text);
        self.push(SceneEvent::Noted {
            card: card.to_string(),
            text: text.to_string(),
        })
    }

    /// Change a fact's truth level (canon is locked).
    pub fn set_truth(&mut self, card: &str, index: usize, to: Truth) -> Result<&Envelope, Error> {
        let from = self.state.world.set_truth(card, index, to)?;
        Ok(self.push(SceneEvent::TruthChanged {
            card: card.to_string(),
            index,
            from,
            to,
        }))
    }

    /// The seat changes hands: a person (`person`) or an AI speaks for it from here on.
    pub fn hand_over(&mut self, seat: &str, person: bool) -> &Envelope {
        self.hand_over_because(seat, person, None)
    }

    /// The seat changes hands for a reason the table gives (None: someone asked for it).
    pub fn hand_over_because(
        &mut self,
        seat: &str,
        person: bool,
        reason: Option<String>,
    ) -> &Envelope {
        self.push(SceneEvent::SeatHanded {
            seat: seat.to_string(),
            person,
            reason,
        })
    }

    /// End the scene, handing its deltas to the campaign's world knowledge.
    pub fn end(&mut self) -> Result<&Envelope, Error> {
        if self.state.ended {
            return Err(Error::Ended);
        }
        let deltas = match self.events.first().map(|e| &e.event) {
            Some(SceneEvent::SceneStarted { scene, .. }) => crate::deltas(scene, &self.state),
            _ => return Err(Error::NotStarted),
        };
        self.state.ended = true;
        Ok(self.push(SceneEvent::SceneEnded { deltas }))
    }
}

/// Re-run a scene from its log: every call again through the router with its recorded seed,
/// every command again; each event must come out identical to the recorded one.
pub fn replay(events: &[Envelope]) -> Result<Scene, Error> {
    let (seed, def) = match events.first().map(|e| &e.event) {
        Some(SceneEvent::SceneStarted { seed, scene }) => (*seed, scene.as_ref().clone()),
        _ => return Err(Error::NotStarted),
    };
    let mut scene = Scene::start(def, seed);
    for recorded in events.iter().skip(1) {
        let produced = rerun(&mut scene, &recorded.event)?;
        if produced != recorded {
            return Err(Error::Diverged { seq: recorded.seq });
        }
    }
    Ok(scene)
}

fn rerun<'a>(scene: &'a mut Scene, event: &SceneEvent) -> Result<&'a Envelope, Error> {
    Ok(match event {
        SceneEvent::ToolApplied {
            input,
            call,
            caller,
            ..
        } => scene.act(input, call.clone(), *caller),
        SceneEvent::Rejected {
            input,
            call,
            caller,
            ..
        } => scene.act(input, call.clone(), *caller),
        SceneEvent::Undone { .. } => scene.undo()?,
        SceneEvent::PlannerReplied {
            input,
            model,
            reply,
            ..
        } => scene.planner_replied(input, model, reply.clone()),
        SceneEvent::NarrationPolished { model, text, .. } => {
            scene.polish(model, text).ok_or(Error::NotStarted)?
        }
        SceneEvent::ModelCalled {
            agent,
            purpose,
            attempts,
        } => scene.model_called(agent, purpose, attempts.clone()),
        SceneEvent::Noted { card, text } => scene.note(card, text),
        SceneEvent::TruthChanged {
            card, index, to, ..
        } => scene.set_truth(card, *index, *to)?,
        SceneEvent::SceneEnded { .. } => scene.end()?,
        SceneEvent::SeatHanded {
            seat,
            person,
            reason,
        } => scene.hand_over_because(seat, *person, reason.clone()),
        SceneEvent::SceneStarted { .. } => return Err(Error::NotStarted),
    })
}
