//! The scene as written (`SceneDef`, checked from the file and recorded in the log) and the
//! authoritative state folded from it (`State`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::effects::Effect;
use crate::world::World;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Pc,
    Npc,
    Object,
    Item,
}

impl Kind {
    /// People can act, talk and be talked to.
    pub fn is_person(self) -> bool {
        matches!(self, Kind::Pc | Kind::Npc)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub id: String,
    pub name: String,
    pub adjacent: BTreeSet<String>,
    pub features: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub zone: String,
    pub hp: i32,
    pub max_hp: i32,
    pub guard: i32,
    pub marks: i32,
    /// Attack DC against this entity.
    pub defense: i32,
    pub inventory: BTreeMap<String, i32>,
    /// Style ratings: how many domain dice a check adds.
    pub styles: BTreeMap<String, u32>,
    /// Domain ratings: the sides of the die.
    pub domains: BTreeMap<String, u32>,
    pub hidden: bool,
    /// Who has had a hidden entity revealed to them.
    pub revealed_to: BTreeSet<String>,
    pub tags: BTreeSet<String>,
}

impl Entity {
    pub fn alive(&self) -> bool {
        self.hp > 0 || !self.kind.is_person()
    }
}

/// What an item does when used: effects with `$actor` / `$target` standing for the user and the
/// chosen target (the user when none is chosen).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemDef {
    pub id: String,
    pub name: String,
    pub effects: Vec<Effect>,
    /// Whether using it uses it up.
    pub consumed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub id: String,
    pub name: String,
    pub size: i32,
    pub value: i32,
}

/// Lines (never in the story) and veils (happen off-screen): words and phrases.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentPrefs {
    pub lines: Vec<String>,
    pub veils: Vec<String>,
}

/// The scene exactly as the checked file describes it; the first event of a scene log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SceneDef {
    pub id: String,
    pub goal: String,
    pub tone: Vec<String>,
    pub free_movement: bool,
    pub zones: Vec<Zone>,
    pub entities: Vec<Entity>,
    pub items: Vec<ItemDef>,
    pub clocks: Vec<Clock>,
    pub tags: BTreeMap<String, String>,
    pub turn_order: Vec<String>,
    pub content: ContentPrefs,
    pub world: World,
}

/// The authoritative game state. Only [`crate::effects`] handlers write its game fields; the
/// fold in [`crate::log`] moves the turn marker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub id: String,
    pub goal: String,
    pub tone: Vec<String>,
    pub free_movement: bool,
    pub zones: BTreeMap<String, Zone>,
    pub entities: BTreeMap<String, Entity>,
    /// Who is in each zone: derived from the entities' zones and kept in step by the position
    /// handler, so a tool reads a zone's occupants without scanning the whole scene.
    pub occupants: BTreeMap<String, BTreeSet<String>>,
    pub items: BTreeMap<String, ItemDef>,
    pub clocks: BTreeMap<String, Clock>,
    pub tags: BTreeMap<String, String>,
    pub turn_order: Vec<String>,
    /// Index into `turn_order` of who acts now.
    pub current: usize,
    /// Completed turns.
    pub turn: u32,
    /// Clarifying questions asked in the current turn.
    pub clarifications: u32,
    pub content: ContentPrefs,
    pub world: World,
    pub ended: bool,
}

impl State {
    pub fn new(def: &SceneDef) -> State {
        let by_id = |v: &[Zone]| v.iter().map(|z| (z.id.clone(), z.clone())).collect();
        State {
            id: def.id.clone(),
            goal: def.goal.clone(),
            tone: def.tone.clone(),
            free_movement: def.free_movement,
            zones: by_id(&def.zones),
            entities: def
                .entities
                .iter()
                .map(|e| (e.id.clone(), e.clone()))
                .collect(),
            occupants: def.entities.iter().fold(BTreeMap::new(), |mut m, e| {
                m.entry(e.zone.clone())
                    .or_insert_with(BTreeSet::new)
                    .insert(e.id.clone());
                m
            }),
            items: def
                .items
                .iter()
                .map(|i| (i.id.clone(), i.clone()))
                .collect(),
            clocks: def
                .clocks
                .iter()
                .map(|c| (c.id.clone(), c.clone()))
                .collect(),
            tags: def.tags.clone(),
            turn_order: def.turn_order.clone(),
            current: 0,
            turn: 0,
            clarifications: 0,
            content: def.content.clone(),
            world: def.world.clone(),
            ended: false,
        }
    }

    /// Who acts now (the turn order is never empty in a checked scene).
    pub fn current_actor(&self) -> &str {
        self.turn_order
            .get(self.current)
            .map(String::as_str)
            .unwrap_or("")
    }

    /// Whether `viewer` can perceive `entity` at all (hidden ones only once revealed to them).
    pub fn can_see(&self, viewer: &str, entity: &Entity) -> bool {
        entity.id == viewer || !entity.hidden || entity.revealed_to.contains(viewer)
    }

    /// Whether `viewer` perceives the entity `id` right now: it exists, is visible to them and
    /// stands in the same zone.
    pub fn sees_here(&self, viewer: &str, id: &str) -> bool {
        match (self.entities.get(viewer), self.entities.get(id)) {
            (Some(v), Some(e)) => e.zone == v.zone && self.can_see(viewer, e),
            _ => false,
        }
    }

    /// The name to show for an id (the id itself when unknown).
    pub fn name_of<'a>(&'a self, id: &'a str) -> &'a str {
        if let Some(e) = self.entities.get(id) {
            &e.name
        } else if let Some(z) = self.zones.get(id) {
            &z.name
        } else if let Some(i) = self.items.get(id) {
            &i.name
        } else {
            id
        }
    }

    /// Move the turn marker to the next living actor in the turn order.
    pub(crate) fn advance_turn(&mut self) {
        self.turn += 1;
        self.clarifications = 0;
        let n = self.turn_order.len();
        for step in 1..=n {
            let i = (self.current + step) % n;
            let alive = self
                .turn_order
                .get(i)
                .and_then(|id| self.entities.get(id))
                .is_some_and(Entity::alive);
            if alive {
                self.current = i;
                return;
            }
        }
    }
}
