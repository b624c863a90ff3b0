//! `troupe scene check`: the scene file's YAML walked once, every mistake collected with its line
//! and column, and the [`SceneDef`] built when there are none.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::effects::Effect;
use crate::model::{Clock, ContentPrefs, Entity, ItemDef, Kind, SceneDef, Zone};
use crate::world::{Card, LoreFact, Relation, Truth, World};
use crate::yaml::{Loc, Node, Report, Value, join, parse};

/// One mistake in a scene file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub line: u64,
    pub column: u64,
    /// Where in the document, e.g. `entities[2].zone`.
    pub path: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.line, self.column, self.path, self.message
        )
    }
}

const ROOT: &[&str] = &[
    "scene",
    "zones",
    "entities",
    "items",
    "clocks",
    "tags",
    "turn_order",
    "content",
    "world",
];
const SCENE: &[&str] = &["id", "goal", "tone", "free_movement"];
const ZONE: &[&str] = &["id", "name", "adjacent", "features"];
const ENTITY: &[&str] = &[
    "id",
    "name",
    "kind",
    "zone",
    "hp",
    "guard",
    "marks",
    "defense",
    "inventory",
    "styles",
    "domains",
    "hidden",
    "revealed_to",
    "tags",
];
const ITEM: &[&str] = &["id", "name", "effects", "consumed"];
const CLOCK: &[&str] = &["id", "name", "size", "value"];
const CONTENT: &[&str] = &["lines", "veils"];
const WORLD: &[&str] = &["cards", "relations"];
const CARD: &[&str] = &["id", "name", "bio", "tags", "facts"];
const FACT: &[&str] = &["text", "truth"];
const RELATION: &[&str] = &["from", "relation", "to", "truth"];
const DICE: [u32; 6] = [4, 6, 8, 10, 12, 20];

/// Check a scene file's text: the scene, or every problem in it.
pub fn check(text: &str) -> Result<SceneDef, Vec<Problem>> {
    let root = parse(text).map_err(|(at, message)| {
        vec![Problem {
            line: at.line,
            column: at.column,
            path: "(file)".into(),
            message: format!("not valid YAML: {message}"),
        }]
    })?;
    let mut c = Checker::default();
    let def = c.scene(&root);
    c.cross_check(&def, &root);
    if c.problems.is_empty() {
        Ok(def)
    } else {
        c.problems.sort_by_key(|p| (p.line, p.column));
        Err(c.problems)
    }
}

#[derive(Default)]
struct Checker {
    problems: Vec<Problem>,
    /// Where each id was written, for cross-reference messages.
    refs: Vec<(String, Loc, String, RefKind)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RefKind {
    Zone,
    Entity,
    Person,
    Clock,
}

impl Report for Checker {
    fn bad(&mut self, at: Loc, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            line: at.line,
            column: at.column,
            path: path.to_string(),
            message: message.into(),
        });
    }
}

impl Checker {
    /// The entries of a mapping, reporting keys outside `allowed`.
    fn map<'a>(&mut self, node: &'a Node, path: &str, allowed: &[&str]) -> &'a [(String, Node)] {
        match &node.value {
            Value::Map(entries) => {
                for (k, v) in entries {
                    if !allowed.contains(&k.as_str()) {
                        self.bad(
                            v.at,
                            &join(path, k),
                            format!("unknown field; allowed: {}", allowed.join(", ")),
                        );
                    }
                }
                entries
            }
            Value::Null => &[],
            other => {
                self.bad(
                    node.at,
                    path,
                    format!("must be a mapping, not {}", other.describe()),
                );
                &[]
            }
        }
    }

    fn text(&mut self, node: Option<&Node>, parent: Loc, path: &str, required: bool) -> String {
        match node.map(|n| (&n.value, n.at)) {
            Some((Value::Str(s), at)) if s.trim().is_empty() => {
                self.bad(at, path, "must not be empty");
                String::new()
            }
            Some((Value::Str(s), _)) => s.clone(),
            Some((Value::Int(i), _)) => i.to_string(),
            None | Some((Value::Null, _)) => {
                if required {
                    self.bad(parent, path, "is missing");
                }
                String::new()
            }
            Some((other, at)) => {
                self.bad(at, path, format!("must be text, not {}", other.describe()));
                String::new()
            }
        }
    }

    fn id(&mut self, node: &Node, path: &str) -> String {
        let id = self.text(node.get("id"), node.at, &join(path, "id"), true);
        let ok = id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !ok {
            let at = node.get("id").map_or(node.at, |n| n.at);
            self.bad(
                at,
                &join(path, "id"),
                "must be lowercase letters, digits, '_' or '-'",
            );
        }
        id
    }

    fn int(&mut self, node: Option<&Node>, path: &str, range: (i64, i64), default: i64) -> i64 {
        match node.map(|n| (&n.value, n.at)) {
            None | Some((Value::Null, _)) => default,
            Some((Value::Int(i), _)) if (range.0..=range.1).contains(i) => *i,
            Some((other, at)) => {
                self.bad(
                    at,
                    path,
                    format!(
                        "must be a whole number from {} to {}, not {}",
                        range.0,
                        range.1,
                        other.describe()
                    ),
                );
                default
            }
        }
    }

    fn texts(&mut self, node: Option<&Node>, path: &str) -> Vec<String> {
        let items = self.list(node, path);
        items
            .iter()
            .enumerate()
            .map(|(i, n)| self.text(Some(n), n.at, &format!("{path}[{i}]"), true))
            .collect()
    }

    /// A list of ids that must name things of `kind`; checked once every id is known.
    fn refs(&mut self, node: Option<&Node>, path: &str, kind: RefKind) -> Vec<String> {
        let items = self.list(node, path);
        let mut out = Vec::new();
        for (i, n) in items.iter().enumerate() {
            let p = format!("{path}[{i}]");
            let id = self.text(Some(n), n.at, &p, true);
            self.refs.push((id.clone(), n.at, p, kind));
            out.push(id);
        }
        out
    }

    fn reference(&mut self, node: Option<&Node>, parent: Loc, path: &str, kind: RefKind) -> String {
        let id = self.text(node, parent, path, true);
        self.refs.push((
            id.clone(),
            node.map_or(parent, |n| n.at),
            path.to_string(),
            kind,
        ));
        id
    }

    fn scene(&mut self, root: &Node) -> SceneDef {
        self.map(root, "", ROOT);
        let head = root.get("scene");
        let (id, goal, tone, free_movement) = match head {
            Some(s) => {
                self.map(s, "scene", SCENE);
                (
                    self.id(s, "scene"),
                    self.text(s.get("goal"), s.at, "scene.goal", true),
                    self.texts(s.get("tone"), "scene.tone"),
                    self.flag(s.get("free_movement"), "scene.free_movement", true),
                )
            }
            None => {
                self.bad(root.at, "scene", "is missing (id and goal)");
                Default::default()
            }
        };
        let zones = self.zones(root.get("zones"));
        let entities = self.entities(root.get("entities"));
        SceneDef {
            id,
            goal,
            tone,
            free_movement,
            zones,
            entities,
            items: self.items(root.get("items")),
            clocks: self.clocks(root.get("clocks")),
            tags: self.tags(root.get("tags")),
            turn_order: self.refs(root.get("turn_order"), "turn_order", RefKind::Person),
            content: self.content(root.get("content")),
            world: self.world(root.get("world")),
        }
    }

    fn zones(&mut self, node: Option<&Node>) -> Vec<Zone> {
        let items = self.list(node, "zones");
        let mut zones: Vec<Zone> = Vec::new();
        for (i, z) in items.iter().enumerate() {
            let p = format!("zones[{i}]");
            self.map(z, &p, ZONE);
            let id = self.id(z, &p);
            let name = self.text(z.get("name"), z.at, &join(&p, "name"), false);
            zones.push(Zone {
                name: if name.is_empty() { id.clone() } else { name },
                adjacent: self
                    .refs(z.get("adjacent"), &join(&p, "adjacent"), RefKind::Zone)
                    .into_iter()
                    .collect(),
                features: self.texts(z.get("features"), &join(&p, "features")),
                id,
            });
        }
        // Adjacency goes both ways: a door from the yard into the mill leads back out.
        let links: Vec<(String, String)> = zones
            .iter()
            .flat_map(|z| z.adjacent.iter().map(|a| (a.clone(), z.id.clone())))
            .collect();
        for (to, from) in links {
            if let Some(z) = zones.iter_mut().find(|z| z.id == to) {
                z.adjacent.insert(from);
            }
        }
        zones
    }

    fn ratings(&mut self, node: Option<&Node>, path: &str, dice: bool) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        let Some(node) = node else { return out };
        let Value::Map(entries) = &node.value else {
            let example = if dice { "{fight: d6}" } else { "{bold: 2}" };
            self.bad(node.at, path, format!("must be a mapping, e.g. {example}"));
            return out;
        };
        for (k, v) in entries {
            let p = join(path, k);
            let value = match (&v.value, dice) {
                (Value::Str(s), true) => s.strip_prefix('d').and_then(|n| n.parse::<u32>().ok()),
                (Value::Int(i), true) => u32::try_from(*i).ok(),
                (Value::Int(i), false) => u32::try_from(*i).ok().filter(|n| *n <= 5),
                _ => None,
            };
            match value {
                Some(n) if !dice || DICE.contains(&n) => {
                    out.insert(k.clone(), n);
                }
                _ if dice => self.bad(v.at, &p, "must be a die: d4, d6, d8, d10, d12 or d20"),
                _ => self.bad(v.at, &p, "must be a whole number from 0 to 5"),
            }
        }
        out
    }

    fn entities(&mut self, node: Option<&Node>) -> Vec<Entity> {
        let items = self.list(node, "entities");
        let mut out = Vec::new();
        for (i, e) in items.iter().enumerate() {
            let p = format!("entities[{i}]");
            self.map(e, &p, ENTITY);
            out.push(self.entity(e, &p));
        }
        out
    }

    fn entity(&mut self, e: &Node, p: &str) -> Entity {
        let id = self.id(e, p);
        let name = self.text(e.get("name"), e.at, &join(p, "name"), false);
        let kind_text = self.text(e.get("kind"), e.at, &join(p, "kind"), true);
        let kind = match kind_text.as_str() {
            "pc" => Kind::Pc,
            "npc" => Kind::Npc,
            "object" => Kind::Object,
            "item" => Kind::Item,
            _ => {
                if !kind_text.is_empty() {
                    let at = e.get("kind").map_or(e.at, |n| n.at);
                    self.bad(at, &join(p, "kind"), "must be pc, npc, object or item");
                }
                Kind::Object
            }
        };
        let hp = self.int(e.get("hp"), &join(p, "hp"), (0, 1000), 10) as i32;
        let mut inventory = BTreeMap::new();
        if let Some(inv) = e.get("inventory") {
            let path = join(p, "inventory");
            if let Value::Map(entries) = &inv.value {
                for (item, n) in entries {
                    let count = self.int(Some(n), &join(&path, item), (1, 999), 1) as i32;
                    inventory.insert(item.clone(), count);
                }
            } else {
                self.bad(
                    inv.at,
                    &path,
                    "must be a mapping of item to count, e.g. {rope: 1}",
                );
            }
        }
        Entity {
            zone: self.reference(e.get("zone"), e.at, &join(p, "zone"), RefKind::Zone),
            name: if name.is_empty() { id.clone() } else { name },
            kind,
            hp,
            max_hp: hp,
            guard: self.int(e.get("guard"), &join(p, "guard"), (0, 20), 0) as i32,
            marks: self.int(e.get("marks"), &join(p, "marks"), (0, 20), 0) as i32,
            defense: self.int(e.get("defense"), &join(p, "defense"), (1, 30), 12) as i32,
            inventory,
            styles: self.ratings(e.get("styles"), &join(p, "styles"), false),
            domains: self.ratings(e.get("domains"), &join(p, "domains"), true),
            hidden: self.flag(e.get("hidden"), &join(p, "hidden"), false),
            revealed_to: self
                .refs(
                    e.get("revealed_to"),
                    &join(p, "revealed_to"),
                    RefKind::Entity,
                )
                .into_iter()
                .collect(),
            tags: self
                .texts(e.get("tags"), &join(p, "tags"))
                .into_iter()
                .collect(),
            id,
        }
    }

    fn items(&mut self, node: Option<&Node>) -> Vec<ItemDef> {
        let items = self.list(node, "items");
        let mut out = Vec::new();
        for (i, it) in items.iter().enumerate() {
            let p = format!("items[{i}]");
            self.map(it, &p, ITEM);
            let id = self.id(it, &p);
            let name = self.text(it.get("name"), it.at, &join(&p, "name"), false);
            let list = self.list(it.get("effects"), &join(&p, "effects"));
            let effects = list
                .iter()
                .enumerate()
                .filter_map(|(j, n)| self.effect(n, &format!("{p}.effects[{j}]")))
                .collect();
            out.push(ItemDef {
                name: if name.is_empty() { id.clone() } else { name },
                effects,
                consumed: self.flag(it.get("consumed"), &join(&p, "consumed"), true),
                id,
            });
        }
        out
    }

    /// An effect atom, read by serde from the node's JSON; references checked later.
    fn effect(&mut self, node: &Node, path: &str) -> Option<Effect> {
        match serde_json::from_value::<Effect>(to_json(node)) {
            Ok(effect) => {
                let mut check = |id: &str, kind| {
                    if !id.starts_with('$') {
                        self.refs
                            .push((id.to_string(), node.at, path.to_string(), kind));
                    }
                };
                match &effect {
                    Effect::Hp { entity, .. }
                    | Effect::Guard { entity, .. }
                    | Effect::Mark { entity, .. }
                    | Effect::Inventory { entity, .. }
                    | Effect::Reveal { entity, .. } => check(entity, RefKind::Entity),
                    Effect::Position { entity, zone } => {
                        check(entity, RefKind::Entity);
                        check(zone, RefKind::Zone);
                    }
                    Effect::Clock { clock, .. } => check(clock, RefKind::Clock),
                    Effect::Tag { .. } => {}
                }
                Some(effect)
            }
            Err(e) => {
                self.bad(
                    node.at,
                    path,
                    format!("not an effect ({e}); effects: hp, position, clock, guard, mark, inventory, tag, reveal"),
                );
                None
            }
        }
    }

    fn clocks(&mut self, node: Option<&Node>) -> Vec<Clock> {
        let items = self.list(node, "clocks");
        let mut out = Vec::new();
        for (i, c) in items.iter().enumerate() {
            let p = format!("clocks[{i}]");
            self.map(c, &p, CLOCK);
            let id = self.id(c, &p);
            let name = self.text(c.get("name"), c.at, &join(&p, "name"), false);
            let size = self.int(c.get("size"), &join(&p, "size"), (1, 12), 4);
            if c.get("size").is_none() {
                self.bad(
                    c.at,
                    &join(&p, "size"),
                    "is missing (a clock has 1 to 12 segments)",
                );
            }
            let value = self.int(c.get("value"), &join(&p, "value"), (0, size), 0);
            out.push(Clock {
                name: if name.is_empty() { id.clone() } else { name },
                id,
                size: size as i32,
                value: value as i32,
            });
        }
        out
    }

    fn tags(&mut self, node: Option<&Node>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(node) = node else { return out };
        match &node.value {
            Value::Map(entries) => {
                for (k, v) in entries {
                    let value = self.text(Some(v), v.at, &join("tags", k), true);
                    out.insert(k.clone(), value);
                }
            }
            other => self.bad(
                node.at,
                "tags",
                format!(
                    "must be a mapping like {{lighting: dim}}, not {}",
                    other.describe()
                ),
            ),
        }
        out
    }

    fn content(&mut self, node: Option<&Node>) -> ContentPrefs {
        let Some(node) = node else {
            return ContentPrefs::default();
        };
        self.map(node, "content", CONTENT);
        ContentPrefs {
            lines: self.texts(node.get("lines"), "content.lines"),
            veils: self.texts(node.get("veils"), "content.veils"),
        }
    }

    fn truth(&mut self, node: Option<&Node>, path: &str) -> Truth {
        let at = node.map(|n| n.at).unwrap_or_default();
        match self.text(node, at, path, false).as_str() {
            "" | "canon" => Truth::Canon,
            "soft-canon" => Truth::SoftCanon,
            "improv" => Truth::Improv,
            _ => {
                self.bad(at, path, "must be canon, soft-canon or improv");
                Truth::Canon
            }
        }
    }

    fn world(&mut self, node: Option<&Node>) -> World {
        let Some(node) = node else {
            return World::default();
        };
        self.map(node, "world", WORLD);
        let list = self.list(node.get("cards"), "world.cards");
        let mut cards = Vec::new();
        for (i, c) in list.iter().enumerate() {
            let p = format!("world.cards[{i}]");
            self.map(c, &p, CARD);
            let id = self.id(c, &p);
            let name = self.text(c.get("name"), c.at, &join(&p, "name"), false);
            let facts_node = self.list(c.get("facts"), &join(&p, "facts"));
            if !(1..=3).contains(&facts_node.len()) {
                self.bad(c.at, &join(&p, "facts"), "a card has 1 to 3 facts");
            }
            let mut facts = Vec::new();
            for (j, f) in facts_node.iter().enumerate() {
                let fp = format!("{p}.facts[{j}]");
                facts.push(match &f.value {
                    Value::Str(s) => LoreFact {
                        text: s.clone(),
                        truth: Truth::Canon,
                    },
                    _ => {
                        self.map(f, &fp, FACT);
                        LoreFact {
                            text: self.text(f.get("text"), f.at, &join(&fp, "text"), true),
                            truth: self.truth(f.get("truth"), &join(&fp, "truth")),
                        }
                    }
                });
            }
            cards.push(Card {
                name: if name.is_empty() { id.clone() } else { name },
                bio: self.text(c.get("bio"), c.at, &join(&p, "bio"), false),
                tags: self.texts(c.get("tags"), &join(&p, "tags")),
                facts,
                id,
            });
        }
        let list = self.list(node.get("relations"), "world.relations");
        let mut relations = Vec::new();
        for (i, r) in list.iter().enumerate() {
            let p = format!("world.relations[{i}]");
            self.map(r, &p, RELATION);
            relations.push(Relation {
                from: self.text(r.get("from"), r.at, &join(&p, "from"), true),
                relation: self.text(r.get("relation"), r.at, &join(&p, "relation"), true),
                to: self.text(r.get("to"), r.at, &join(&p, "to"), true),
                truth: self.truth(r.get("truth"), &join(&p, "truth")),
            });
        }
        World { cards, relations }
    }

    /// Duplicate ids, references to nothing, a turn order of no one.
    fn cross_check(&mut self, def: &SceneDef, root: &Node) {
        let zones: BTreeSet<&str> = def.zones.iter().map(|z| z.id.as_str()).collect();
        let entities: BTreeMap<&str, Kind> = def
            .entities
            .iter()
            .map(|e| (e.id.as_str(), e.kind))
            .collect();
        let clocks: BTreeSet<&str> = def.clocks.iter().map(|c| c.id.as_str()).collect();
        self.duplicates(root, "zones", def.zones.iter().map(|z| z.id.as_str()));
        self.duplicates(root, "entities", def.entities.iter().map(|e| e.id.as_str()));
        self.duplicates(root, "items", def.items.iter().map(|i| i.id.as_str()));
        self.duplicates(root, "clocks", def.clocks.iter().map(|c| c.id.as_str()));
        let refs = std::mem::take(&mut self.refs);
        for (id, at, path, kind) in refs {
            if id.is_empty() {
                continue;
            }
            let problem = match kind {
                RefKind::Zone if !zones.contains(id.as_str()) => Some("no zone with this id"),
                RefKind::Entity if !entities.contains_key(id.as_str()) => {
                    Some("no entity with this id")
                }
                RefKind::Person => match entities.get(id.as_str()) {
                    None => Some("no entity with this id"),
                    Some(k) if !k.is_person() => Some("only pcs and npcs take turns"),
                    _ => None,
                },
                RefKind::Clock if !clocks.contains(id.as_str()) => Some("no clock with this id"),
                _ => None,
            };
            if let Some(message) = problem {
                self.bad(at, &path, format!("'{id}': {message}"));
            }
        }
        if def.turn_order.is_empty() {
            let at = root.get("turn_order").map_or(root.at, |n| n.at);
            self.bad(at, "turn_order", "must list at least one pc or npc");
        }
    }

    fn duplicates<'a>(&mut self, root: &Node, list: &str, ids: impl Iterator<Item = &'a str>) {
        let mut seen = BTreeSet::new();
        let nodes: Vec<Loc> = match root.get(list).map(|n| &n.value) {
            Some(Value::Seq(items)) => items.iter().map(|n| n.at).collect(),
            _ => Vec::new(),
        };
        for (i, id) in ids.enumerate() {
            if !id.is_empty() && !seen.insert(id) {
                let at = nodes.get(i).copied().unwrap_or_default();
                self.bad(
                    at,
                    &format!("{list}[{i}].id"),
                    format!("'{id}' is used twice"),
                );
            }
        }
    }
}

/// A located node as plain JSON (for the serde-typed parts such as effects).
fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => J::from(*f),
        Value::Str(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
    }
}
