//! troupe-scene: seed 004's deterministic scene engine. The model proposes, the engine decides.
//!
//! A scene file ([`check`]) becomes a [`SceneDef`]; play is a log of [`SceneEvent`]s whose fold
//! is the [`State`]. Each turn a planner ([`planner`]) turns the player's words into one
//! [`ToolCall`] from the menu of tools whose preconditions hold; the router validates it again,
//! executes it into facts and effects, applies the effects all or nothing ([`effects`]) and
//! the narrator ([`narrator`]) renders the facts. All of that is pure: no I/O, no models, no
//! clock (the prompts a model is asked with are templates in [`prompts`], rendered by the
//! caller's registry). Its table ([`table`]) plays it on troupe's engine: the store, the seats,
//! the models.

pub mod effects;
pub mod exec;
mod file;
pub mod log;
pub mod model;
pub mod narrator;
pub mod offer;
pub mod planner;
pub mod prompts;
pub mod router;
#[cfg(feature = "table")]
pub mod table;
mod tables;
pub mod tools;
pub mod view;
pub mod world;
pub mod yaml;

pub use effects::{Effect, EffectError, Registry};
pub use exec::{Fact, Outcome};
pub use file::{Problem, check};
pub use log::{Envelope, Scene, SceneEvent, fold, held_by_person, live, replay};
pub use model::{Entity, Kind, SceneDef, State};
pub use tools::{Caller, Rejection, ToolCall, Topic};
pub use world::{Truth, World, WorldDelta};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the log does not start with a scene")]
    NotStarted,
    #[error("event {seq} does not fit the scene: {message}")]
    Corrupt { seq: u64, message: String },
    #[error("replay diverged from the log at event {seq}")]
    Diverged { seq: u64 },
    #[error("there is no turn to take back")]
    NothingToUndo,
    #[error("the scene has already ended")]
    Ended,
    #[error(transparent)]
    World(#[from] world::WorldError),
}

/// What a scene hands back to the world when it ends: what happened to the people in it
/// (soft-canon: a later scene may retcon it), the clocks that filled, and the improv notes.
pub fn deltas(def: &SceneDef, state: &State) -> Vec<WorldDelta> {
    let mut out = Vec::new();
    for start in def.entities.iter().filter(|e| e.kind == Kind::Npc) {
        let Some(now) = state.entities.get(&start.id) else {
            continue;
        };
        let text = if now.hp <= 0 && start.hp > 0 {
            format!("was defeated in scene {}", def.id)
        } else if now.guard < start.guard {
            format!("lowered their guard to the party in scene {}", def.id)
        } else if now.marks > start.marks {
            format!("was marked by the party in scene {}", def.id)
        } else {
            continue;
        };
        out.push(WorldDelta {
            card: start.id.clone(),
            text,
            truth: Truth::SoftCanon,
        });
    }
    for clock in state.clocks.values().filter(|c| c.value >= c.size) {
        out.push(WorldDelta {
            card: def.id.clone(),
            text: format!("{} ran out", clock.name),
            truth: Truth::SoftCanon,
        });
    }
    for card in &state.world.cards {
        let before = def.world.card(&card.id).map_or(0, |c| c.facts.len());
        for fact in card.facts.iter().skip(before) {
            out.push(WorldDelta {
                card: card.id.clone(),
                text: fact.text.clone(),
                truth: fact.truth,
            });
        }
    }
    out
}
