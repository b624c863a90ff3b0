//! Effect atoms and their handlers: the only code that writes the game state.
//!
//! Each kind of effect is one handler in a [`Registry`]; a handler checks its atom against the
//! state, applies it and returns how to take it back. [`Registry::apply_all`] applies a list
//! all or nothing: on the first atom that does not fit, every earlier one is taken back, so a
//! failed tool call leaves the state exactly as it found it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::State;

/// One change to the state. `entity` fields name an entity id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Hit points up or down (clamped to 0..=max).
    Hp { entity: String, delta: i32 },
    /// Put an entity in a zone.
    Position { entity: String, zone: String },
    /// Advance (or wind back) a clock, clamped to 0..=size.
    Clock { clock: String, delta: i32 },
    /// Guard up or down (never below 0).
    Guard { entity: String, delta: i32 },
    /// Marks up or down (never below 0).
    Mark { entity: String, delta: i32 },
    /// Items in an inventory up or down (never below 0: taking what is not there fails).
    Inventory {
        entity: String,
        item: String,
        delta: i32,
    },
    /// Set a scene tag (lighting, alert, noise…).
    Tag { key: String, value: String },
    /// Reveal a hidden entity to some characters (`to`), or to everyone (`to` empty).
    Reveal { entity: String, to: Vec<String> },
}

impl Effect {
    /// The handler's name in the registry.
    pub fn kind(&self) -> &'static str {
        match self {
            Effect::Hp { .. } => "hp",
            Effect::Position { .. } => "position",
            Effect::Clock { .. } => "clock",
            Effect::Guard { .. } => "guard",
            Effect::Mark { .. } => "mark",
            Effect::Inventory { .. } => "inventory",
            Effect::Tag { .. } => "tag",
            Effect::Reveal { .. } => "reveal",
        }
    }

    /// The same atom with `$actor` and `$target` replaced (item scripts, outcome tables).
    pub fn bind(&self, actor: &str, target: &str) -> Effect {
        let b = |s: &String| match s.as_str() {
            "$actor" => actor.to_string(),
            "$target" => target.to_string(),
            _ => s.clone(),
        };
        let mut e = self.clone();
        match &mut e {
            Effect::Hp { entity, .. }
            | Effect::Position { entity, .. }
            | Effect::Guard { entity, .. }
            | Effect::Mark { entity, .. }
            | Effect::Inventory { entity, .. } => *entity = b(entity),
            Effect::Reveal { entity, to } => {
                *entity = b(entity);
                *to = to.iter().map(b).collect();
            }
            Effect::Clock { .. } | Effect::Tag { .. } => {}
        }
        e
    }
}

/// Why an effect could not be applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum EffectError {
    #[error("no entity '{0}' in this scene")]
    NoEntity(String),
    #[error("no zone '{0}' in this scene")]
    NoZone(String),
    #[error("no clock '{0}' in this scene")]
    NoClock(String),
    #[error("{entity} has {has} of '{item}', cannot take {take}")]
    NotEnough {
        entity: String,
        item: String,
        has: i32,
        take: i32,
    },
    #[error("no handler for effect '{0}'")]
    NoHandler(String),
    #[error("{0} is not a character")]
    NotACharacter(String),
}

/// Takes one applied effect back.
pub type Undo = Box<dyn FnOnce(&mut State)>;
/// Checks an atom, applies it, and says how to take it back.
pub type Handler = fn(&mut State, &Effect) -> Result<Undo, EffectError>;

/// The effect handlers by kind. Adding an effect is adding a handler; tools do not change.
pub struct Registry {
    handlers: BTreeMap<&'static str, Handler>,
}

impl Default for Registry {
    fn default() -> Self {
        let mut handlers: BTreeMap<&'static str, Handler> = BTreeMap::new();
        handlers.insert("hp", hp);
        handlers.insert("position", position);
        handlers.insert("clock", clock);
        handlers.insert("guard", guard);
        handlers.insert("mark", mark);
        handlers.insert("inventory", inventory);
        handlers.insert("tag", tag);
        handlers.insert("reveal", reveal);
        Registry { handlers }
    }
}

impl Registry {
    /// Apply every effect or none: on the first failure the earlier ones are undone in reverse.
    pub fn apply_all(&self, state: &mut State, effects: &[Effect]) -> Result<(), EffectError> {
        let mut undos: Vec<Undo> = Vec::with_capacity(effects.len());
        for effect in effects {
            let result = match self.handlers.get(effect.kind()) {
                Some(handler) => handler(state, effect),
                None => Err(EffectError::NoHandler(effect.kind().to_string())),
            };
            match result {
                Ok(undo) => undos.push(undo),
                Err(e) => {
                    for undo in undos.into_iter().rev() {
                        undo(state);
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Whether the effects would apply, without changing `state`.
    pub fn check_all(&self, state: &mut State, effects: &[Effect]) -> Result<(), EffectError> {
        let mut undos: Vec<Undo> = Vec::with_capacity(effects.len());
        let mut outcome = Ok(());
        for effect in effects {
            match self.handlers.get(effect.kind()) {
                Some(handler) => match handler(state, effect) {
                    Ok(undo) => undos.push(undo),
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                },
                None => {
                    outcome = Err(EffectError::NoHandler(effect.kind().to_string()));
                    break;
                }
            }
        }
        for undo in undos.into_iter().rev() {
            undo(state);
        }
        outcome
    }
}

fn entity_mut<'a>(
    state: &'a mut State,
    id: &str,
) -> Result<&'a mut crate::model::Entity, EffectError> {
    state
        .entities
        .get_mut(id)
        .ok_or_else(|| EffectError::NoEntity(id.to_string()))
}

/// Restores one integer field of an entity.
fn restore_field(id: String, field: fn(&mut crate::model::Entity) -> &mut i32, old: i32) -> Undo {
    Box::new(move |s: &mut State| {
        if let Some(e) = s.entities.get_mut(&id) {
            *field(e) = old;
        }
    })
}

fn hp(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Hp { entity, delta } = effect else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    let e = entity_mut(state, entity)?;
    let old = e.hp;
    e.hp = old.saturating_add(*delta).clamp(0, e.max_hp.max(0));
    Ok(restore_field(entity.clone(), |e| &mut e.hp, old))
}

fn guard(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Guard { entity, delta } = effect else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    let e = entity_mut(state, entity)?;
    let old = e.guard;
    e.guard = old.saturating_add(*delta).max(0);
    Ok(restore_field(entity.clone(), |e| &mut e.guard, old))
}

fn mark(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Mark { entity, delta } = effect else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    let e = entity_mut(state, entity)?;
    let old = e.marks;
    e.marks = old.saturating_add(*delta).max(0);
    Ok(restore_field(entity.clone(), |e| &mut e.marks, old))
}

fn position(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Position { entity, zone } = effect else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    if !state.zones.contains_key(zone) {
        return Err(EffectError::NoZone(zone.clone()));
    }
    let e = entity_mut(state, entity)?;
    let old = std::mem::replace(&mut e.zone, zone.clone());
    relocate(state, entity, &old, zone);
    let (id, to) = (entity.clone(), zone.clone());
    Ok(Box::new(move |s: &mut State| {
        if let Some(e) = s.entities.get_mut(&id) {
            e.zone = old.clone();
        }
        relocate(s, &id, &to, &old);
    }))
}

/// Keep the zone index in step with an entity's move.
fn relocate(state: &mut State, id: &str, from: &str, to: &str) {
    if let Some(set) = state.occupants.get_mut(from) {
        set.remove(id);
        // An empty zone has no entry, as in a freshly folded state.
        if set.is_empty() {
            state.occupants.remove(from);
        }
    }
    state
        .occupants
        .entry(to.to_string())
        .or_default()
        .insert(id.to_string());
}

fn clock(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Clock { clock, delta } = effect else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    let c = state
        .clocks
        .get_mut(clock)
        .ok_or_else(|| EffectError::NoClock(clock.clone()))?;
    let old = c.value;
    c.value = old.saturating_add(*delta).clamp(0, c.size);
    let id = clock.clone();
    Ok(Box::new(move |s: &mut State| {
        if let Some(c) = s.clocks.get_mut(&id) {
            c.value = old;
        }
    }))
}

fn inventory(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Inventory {
        entity,
        item,
        delta,
    } = effect
    else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    let e = entity_mut(state, entity)?;
    let old = e.inventory.get(item).copied();
    let has = old.unwrap_or(0);
    let new = has.saturating_add(*delta);
    if new < 0 {
        return Err(EffectError::NotEnough {
            entity: entity.clone(),
            item: item.clone(),
            has,
            take: -delta,
        });
    }
    if new == 0 {
        e.inventory.remove(item);
    } else {
        e.inventory.insert(item.clone(), new);
    }
    let (id, item) = (entity.clone(), item.clone());
    Ok(Box::new(move |s: &mut State| {
        if let Some(e) = s.entities.get_mut(&id) {
            match old {
                Some(n) => e.inventory.insert(item, n),
                None => e.inventory.remove(&item),
            };
        }
    }))
}

fn tag(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Tag { key, value } = effect else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    let old = state.tags.insert(key.clone(), value.clone());
    let key = key.clone();
    Ok(Box::new(move |s: &mut State| match old {
        Some(v) => {
            s.tags.insert(key, v);
        }
        None => {
            s.tags.remove(&key);
        }
    }))
}

fn reveal(state: &mut State, effect: &Effect) -> Result<Undo, EffectError> {
    let Effect::Reveal { entity, to } = effect else {
        return Err(EffectError::NoHandler(effect.kind().into()));
    };
    for viewer in to {
        if !state.entities.contains_key(viewer) {
            return Err(EffectError::NoEntity(viewer.clone()));
        }
    }
    let e = entity_mut(state, entity)?;
    let (old_hidden, old_to) = (e.hidden, e.revealed_to.clone());
    if to.is_empty() {
        e.hidden = false;
    } else {
        e.revealed_to.extend(to.iter().cloned());
    }
    let id = entity.clone();
    Ok(Box::new(move |s: &mut State| {
        if let Some(e) = s.entities.get_mut(&id) {
            e.hidden = old_hidden;
            e.revealed_to = old_to;
        }
    }))
}
