//! The nine tools: their calls (what a planner proposes), their JSON schemas, the preconditions
//! that build the menu, and the validator that checks a call again before it runs.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::model::{Entity, Kind, State};

/// The most options an `ask_clarifying` may offer, and the most asked in one turn.
pub const MAX_OPTIONS: usize = 3;
pub const MAX_CLARIFICATIONS: u32 = 3;
/// The most atoms one `apply_effects` may carry.
pub const MAX_EFFECTS: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topic {
    Look,
    Listen,
    Smell,
    Recap,
    ZoomIn,
}

/// A proposed tool call. Serialized as `{"tool": "...", "args": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "tool", content = "args", rename_all = "snake_case")]
pub enum ToolCall {
    AskRoll {
        actor: String,
        action: String,
        #[serde(default)]
        target: Option<String>,
        #[serde(default)]
        zone_target: Option<String>,
        style: String,
        domain: String,
        #[serde(default)]
        dc_hint: Option<i32>,
        #[serde(default)]
        adv_style_delta: i32,
    },
    Attack {
        actor: String,
        target: String,
        style: String,
        domain: String,
    },
    Move {
        actor: String,
        zone: String,
    },
    Talk {
        actor: String,
        target: String,
        topic: String,
        style: String,
        domain: String,
    },
    UseItem {
        actor: String,
        item: String,
        #[serde(default)]
        target: Option<String>,
    },
    GetInfo {
        actor: String,
    },
    NarrateOnly {
        actor: String,
        topic: Topic,
    },
    ApplyEffects {
        effects: Vec<crate::effects::Effect>,
    },
    AskClarifying {
        question: String,
        options: Vec<String>,
    },
}

/// The tools' names, in the seed's order.
pub const TOOL_NAMES: [&str; 9] = [
    "ask_roll",
    "attack",
    "move",
    "talk",
    "use_item",
    "get_info",
    "narrate_only",
    "apply_effects",
    "ask_clarifying",
];

impl ToolCall {
    pub fn name(&self) -> &'static str {
        match self {
            ToolCall::AskRoll { .. } => "ask_roll",
            ToolCall::Attack { .. } => "attack",
            ToolCall::Move { .. } => "move",
            ToolCall::Talk { .. } => "talk",
            ToolCall::UseItem { .. } => "use_item",
            ToolCall::GetInfo { .. } => "get_info",
            ToolCall::NarrateOnly { .. } => "narrate_only",
            ToolCall::ApplyEffects { .. } => "apply_effects",
            ToolCall::AskClarifying { .. } => "ask_clarifying",
        }
    }

    /// The acting character, for the tools that have one.
    pub fn actor(&self) -> Option<&str> {
        match self {
            ToolCall::AskRoll { actor, .. }
            | ToolCall::Attack { actor, .. }
            | ToolCall::Move { actor, .. }
            | ToolCall::Talk { actor, .. }
            | ToolCall::UseItem { actor, .. }
            | ToolCall::GetInfo { actor }
            | ToolCall::NarrateOnly { actor, .. } => Some(actor),
            ToolCall::ApplyEffects { .. } | ToolCall::AskClarifying { .. } => None,
        }
    }

    /// Whether a completed call ends the actor's turn (questions and look-ups do not).
    pub fn ends_turn(&self) -> bool {
        !matches!(
            self,
            ToolCall::AskClarifying { .. }
                | ToolCall::GetInfo { .. }
                | ToolCall::ApplyEffects { .. }
        )
    }
}

/// Who proposes a call: the player of the character whose turn it is, or the GM/system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    Player,
    Gm,
}

/// Why a call was refused. Nothing was applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{tool}: {reason}")]
pub struct Rejection {
    pub tool: String,
    pub reason: String,
}

fn reject(tool: &str, reason: impl Into<String>) -> Rejection {
    Rejection {
        tool: tool.to_string(),
        reason: reason.into(),
    }
}

/// The living entities other than `actor` that `actor` sees in its zone, filtered.
pub fn visible_here<'a>(
    state: &'a State,
    actor: &'a str,
    keep: impl Fn(&Entity) -> bool + 'a,
) -> impl Iterator<Item = &'a Entity> + 'a {
    let here = state
        .entities
        .get(actor)
        .and_then(|a| state.occupants.get(&a.zone));
    here.into_iter()
        .flatten()
        .filter_map(|id| state.entities.get(id))
        .filter(move |e| e.id != actor && state.can_see(actor, e) && keep(e))
}

fn attackable(e: &Entity) -> bool {
    e.kind != Kind::Item && e.hp > 0
}

fn talkable(e: &Entity) -> bool {
    e.kind.is_person() && e.hp > 0
}

/// The zones `actor` can walk to now.
pub fn exits<'a>(state: &'a State, actor: &str) -> Vec<&'a str> {
    let Some(zone) = state
        .entities
        .get(actor)
        .and_then(|a| state.zones.get(&a.zone))
    else {
        return Vec::new();
    };
    zone.adjacent.iter().map(String::as_str).collect()
}

fn usable_items<'a>(state: &'a State, actor: &str) -> Vec<&'a str> {
    state.entities.get(actor).map_or_else(Vec::new, |a| {
        a.inventory
            .iter()
            .filter(|(id, n)| **n > 0 && state.items.contains_key(*id))
            .filter_map(|(id, _)| state.items.get(id).map(|i| i.id.as_str()))
            .collect()
    })
}

/// Whether a tool could be used by `actor` now at all (the menu's preconditions).
pub fn available(state: &State, actor: &str, tool: &str, caller: Caller) -> bool {
    let alive = state.entities.get(actor).is_some_and(|a| a.hp > 0);
    if state.ended {
        return false;
    }
    match tool {
        "apply_effects" => caller == Caller::Gm,
        "ask_clarifying" => state.clarifications < MAX_CLARIFICATIONS,
        "get_info" | "narrate_only" => state.entities.contains_key(actor),
        "ask_roll" => alive,
        "move" => alive && state.free_movement && !exits(state, actor).is_empty(),
        "attack" => alive && visible_here(state, actor, attackable).next().is_some(),
        "talk" => alive && visible_here(state, actor, talkable).next().is_some(),
        "use_item" => alive && !usable_items(state, actor).is_empty(),
        _ => false,
    }
}

/// The tools `actor` may use now, each with a JSON schema whose enums list only legal choices.
pub fn menu(state: &State, actor: &str, caller: Caller) -> Vec<(&'static str, Value)> {
    TOOL_NAMES
        .iter()
        .filter(|t| available(state, actor, t, caller))
        .map(|t| (*t, schema(state, actor, t)))
        .collect()
}

fn keys<'a>(m: impl Iterator<Item = &'a String>) -> Vec<&'a str> {
    m.map(String::as_str).collect()
}

/// The JSON schema of one tool's arguments for this actor now.
pub fn schema(state: &State, actor: &str, tool: &str) -> Value {
    let me = state.entities.get(actor);
    let styles = me.map_or_else(Vec::new, |a| keys(a.styles.keys()));
    let domains = me.map_or_else(Vec::new, |a| keys(a.domains.keys()));
    let ids = |keep: fn(&Entity) -> bool| -> Vec<&str> {
        visible_here(state, actor, keep)
            .map(|e| e.id.as_str())
            .collect()
    };
    let obj = |props: Value, required: &[&str]| {
        json!({"type": "object", "properties": props, "required": required,
               "additionalProperties": false})
    };
    let actor_s = json!({"const": actor});
    match tool {
        "ask_roll" => obj(
            json!({"actor": actor_s, "action": {"type": "string"},
                   "target": {"enum": ids(|_| true)}, "zone_target": {"enum": exits(state, actor)},
                   "style": {"enum": styles}, "domain": {"enum": domains},
                   "dc_hint": {"type": "integer", "minimum": 5, "maximum": 30},
                   "adv_style_delta": {"type": "integer", "minimum": -2, "maximum": 2}}),
            &["actor", "action", "style", "domain"],
        ),
        "attack" => obj(
            json!({"actor": actor_s, "target": {"enum": ids(attackable)},
                   "style": {"enum": styles}, "domain": {"enum": domains}}),
            &["actor", "target", "style", "domain"],
        ),
        "move" => obj(
            json!({"actor": actor_s, "zone": {"enum": exits(state, actor)}}),
            &["actor", "zone"],
        ),
        "talk" => obj(
            json!({"actor": actor_s, "target": {"enum": ids(talkable)}, "topic": {"type": "string"},
                   "style": {"enum": styles}, "domain": {"enum": domains}}),
            &["actor", "target", "topic", "style", "domain"],
        ),
        "use_item" => obj(
            json!({"actor": actor_s, "item": {"enum": usable_items(state, actor)},
                   "target": {"enum": ids(|_| true)}}),
            &["actor", "item"],
        ),
        "get_info" => obj(json!({"actor": actor_s}), &["actor"]),
        "narrate_only" => obj(
            json!({"actor": actor_s,
                   "topic": {"enum": ["look", "listen", "smell", "recap", "zoom_in"]}}),
            &["actor", "topic"],
        ),
        "apply_effects" => obj(
            json!({"effects": {"type": "array", "maxItems": MAX_EFFECTS,
                               "items": {"type": "object", "required": ["effect"]}}}),
            &["effects"],
        ),
        _ => obj(
            json!({"question": {"type": "string", "minLength": 1},
                   "options": {"type": "array", "items": {"type": "string"},
                               "maxItems": MAX_OPTIONS}}),
            &["question", "options"],
        ),
    }
}

/// Check a call against the state: the tool is on the menu and every argument is legal now.
pub fn validate(state: &State, call: &ToolCall, caller: Caller) -> Result<(), Rejection> {
    let tool = call.name();
    if state.ended {
        return Err(reject(tool, "the scene has ended"));
    }
    if let Some(actor) = call.actor() {
        if caller == Caller::Player && actor != state.current_actor() {
            return Err(reject(
                tool,
                format!("it is {}'s turn", state.name_of(state.current_actor())),
            ));
        }
        if !state.entities.contains_key(actor) {
            return Err(reject(tool, format!("no character '{actor}'")));
        }
    }
    let actor = call.actor().unwrap_or("");
    if !available(state, actor, tool, caller) {
        return Err(reject(tool, "not possible right now"));
    }
    validate_args(state, call)
}

fn has_ratings(state: &State, actor: &str, style: &str, domain: &str) -> Result<(), String> {
    let a = state.entities.get(actor).ok_or("no such actor")?;
    if !a.styles.contains_key(style) {
        return Err(format!("{} has no style '{style}'", a.name));
    }
    if !a.domains.contains_key(domain) {
        return Err(format!("{} has no domain '{domain}'", a.name));
    }
    Ok(())
}

fn target_here(state: &State, actor: &str, target: &str) -> Result<(), String> {
    if state.sees_here(actor, target) {
        Ok(())
    } else {
        Err("there is no such target here".into())
    }
}

fn validate_args(state: &State, call: &ToolCall) -> Result<(), Rejection> {
    let tool = call.name();
    let checked: Result<(), String> = match call {
        ToolCall::AskRoll {
            actor,
            target,
            zone_target,
            style,
            domain,
            dc_hint,
            adv_style_delta,
            ..
        } => has_ratings(state, actor, style, domain)
            .and_then(|()| match target {
                Some(t) => target_here(state, actor, t),
                None => Ok(()),
            })
            .and_then(|()| match zone_target {
                Some(z) if !exits(state, actor).contains(&z.as_str()) => {
                    Err(format!("'{z}' is not next to where you are"))
                }
                _ => Ok(()),
            })
            .and_then(|()| match dc_hint {
                Some(dc) if !(5..=30).contains(dc) => Err("dc_hint must be 5 to 30".into()),
                _ if !(-2..=2).contains(adv_style_delta) => {
                    Err("adv_style_delta must be -2 to 2".into())
                }
                _ => Ok(()),
            }),
        ToolCall::Attack {
            actor,
            target,
            style,
            domain,
        } => has_ratings(state, actor, style, domain)
            .and_then(|()| target_here(state, actor, target))
            .and_then(|()| match state.entities.get(target) {
                Some(t) if attackable(t) => Ok(()),
                _ => Err("that cannot be attacked".into()),
            }),
        ToolCall::Move { actor, zone } => {
            if exits(state, actor).contains(&zone.as_str()) {
                Ok(())
            } else {
                Err(format!("'{zone}' is not next to where you are"))
            }
        }
        ToolCall::Talk {
            actor,
            target,
            style,
            domain,
            ..
        } => has_ratings(state, actor, style, domain)
            .and_then(|()| target_here(state, actor, target))
            .and_then(|()| match state.entities.get(target) {
                Some(t) if talkable(t) => Ok(()),
                _ => Err("no one to talk to there".into()),
            }),
        ToolCall::UseItem {
            actor,
            item,
            target,
        } => {
            if !usable_items(state, actor).contains(&item.as_str()) {
                Err(format!("you have no usable '{item}'"))
            } else if let Some(t) = target {
                target_here(state, actor, t)
            } else {
                Ok(())
            }
        }
        ToolCall::GetInfo { .. } | ToolCall::NarrateOnly { .. } => Ok(()),
        ToolCall::ApplyEffects { effects } => match effects.len() {
            0 => Err("no effects to apply".into()),
            n if n > MAX_EFFECTS => Err(format!("at most {MAX_EFFECTS} effects at once")),
            _ => Ok(()),
        },
        ToolCall::AskClarifying { question, options } => {
            if question.trim().is_empty() {
                Err("the question is empty".into())
            } else if options.len() > MAX_OPTIONS {
                Err(format!("at most {MAX_OPTIONS} options"))
            } else {
                Ok(())
            }
        }
    };
    checked.map_err(|reason| reject(tool, reason))
}
