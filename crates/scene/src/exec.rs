//! The executors: a validated call and a roll seed in, facts and effects out. Executors read the
//! state and never write it; [`crate::router`] applies their effects atomically.

use serde::{Deserialize, Serialize};
use troupe_rules::{Band, Check, CheckRoll, Edge, roll_check, roll_expr, roll_seed};

use crate::effects::Effect;
use crate::model::State;
use crate::tables::{self, Row, Table};
use crate::tools::{Rejection, ToolCall, Topic, visible_here};

/// The DC of a roll without a hint, and a talk's base DC before the target's guard.
pub const DEFAULT_DC: i32 = 12;
pub const TALK_DC: i32 = 10;
/// How many names a description lists before "and N more".
const LIST_NAMES: usize = 6;

/// What happened, in display names: the narrator's only input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fact", rename_all = "snake_case")]
pub enum Fact {
    Moved {
        who: String,
        from: String,
        to: String,
    },
    Rolled {
        who: String,
        action: String,
        dc: i32,
        roll: CheckRoll,
    },
    Hit {
        attacker: String,
        target: String,
        damage: i32,
        down: bool,
    },
    Missed {
        attacker: String,
        target: String,
    },
    Talked {
        who: String,
        target: String,
        topic: String,
        band: Band,
    },
    UsedItem {
        who: String,
        item: String,
        target: String,
    },
    Status {
        who: String,
        hp: i32,
        max_hp: i32,
        guard: i32,
        marks: i32,
        zone: String,
        clocks: Vec<String>,
        here: Vec<String>,
    },
    Sensed {
        who: String,
        topic: Topic,
        zone: String,
        features: Vec<String>,
        here: Vec<String>,
        exits: Vec<String>,
        lore: Vec<String>,
    },
    Recap {
        goal: String,
        clocks: Vec<String>,
    },
    EffectsApplied {
        kinds: Vec<String>,
    },
    Question {
        question: String,
        options: Vec<String>,
    },
}

/// An executor's result, before its effects are applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub facts: Vec<Fact>,
    pub effects: Vec<Effect>,
    pub roll: Option<CheckRoll>,
}

fn no_tables(tool: &str) -> Rejection {
    Rejection {
        tool: tool.into(),
        reason: "the outcome tables are missing".into(),
    }
}

/// Run a validated call.
pub fn execute(state: &State, call: &ToolCall, seed: u64) -> Result<Outcome, Rejection> {
    let t = tables::tables().ok_or_else(|| no_tables(call.name()))?;
    Ok(match call {
        ToolCall::AskRoll { .. } => ask_roll(state, call, seed, t)?,
        ToolCall::Attack {
            actor,
            target,
            style,
            domain,
        } => attack(state, [actor, target, style, domain], seed, &t.combat),
        ToolCall::Move { actor, zone } => move_to(state, actor, zone),
        ToolCall::Talk {
            actor,
            target,
            topic,
            style,
            domain,
        } => talk(
            state,
            [actor, target, topic, style, domain],
            seed,
            &t.social,
        ),
        ToolCall::UseItem {
            actor,
            item,
            target,
        } => use_item(state, actor, item, target.as_deref()),
        ToolCall::GetInfo { actor } => only(status(state, actor)),
        ToolCall::NarrateOnly { actor, topic } => only(sense(state, actor, *topic)),
        ToolCall::ApplyEffects { effects } => Outcome {
            facts: vec![Fact::EffectsApplied {
                kinds: effects.iter().map(|e| e.kind().to_string()).collect(),
            }],
            effects: effects.clone(),
            roll: None,
        },
        ToolCall::AskClarifying { question, options } => only(Fact::Question {
            question: question.clone(),
            options: options.clone(),
        }),
    })
}

fn only(fact: Fact) -> Outcome {
    Outcome {
        facts: vec![fact],
        effects: Vec::new(),
        roll: None,
    }
}

fn name(state: &State, id: &str) -> String {
    state.name_of(id).to_string()
}

fn pressure(state: &State) -> Option<&str> {
    state.clocks.keys().next().map(String::as_str)
}

fn rating(state: &State, actor: &str, style: &str, domain: &str) -> (u32, u32) {
    state.entities.get(actor).map_or((0, 0), |a| {
        (
            a.styles.get(style).copied().unwrap_or(0),
            a.domains.get(domain).copied().unwrap_or(0),
        )
    })
}

fn ask_roll(
    state: &State,
    call: &ToolCall,
    seed: u64,
    t: &tables::Tables,
) -> Result<Outcome, Rejection> {
    let ToolCall::AskRoll {
        actor,
        action,
        target,
        zone_target,
        style,
        domain,
        dc_hint,
        adv_style_delta,
    } = call
    else {
        return Err(no_tables("ask_roll"));
    };
    let (s, d) = rating(state, actor, style, domain);
    let style_eff = (i64::from(s) + i64::from(*adv_style_delta)).clamp(0, 10);
    let check = Check {
        style: u32::try_from(style_eff).unwrap_or(0),
        domain: d,
        dc: dc_hint.unwrap_or(DEFAULT_DC),
        edge: Edge::Normal,
    };
    let roll = roll_check(seed, &check);
    let stealthy = ["sneak", "hide", "stealth", "slip"]
        .iter()
        .any(|w| action.to_lowercase().contains(w));
    let table: &Table = if stealthy { &t.stealth } else { &t.action };
    let row = table.row(roll.band);
    let target_id = target.as_deref().unwrap_or(actor);
    let mut effects = tables::bind(row, actor, target_id, pressure(state));
    let mut facts = vec![Fact::Rolled {
        who: name(state, actor),
        action: action.clone(),
        dc: check.dc,
        roll: roll.clone(),
    }];
    if let (Some(zone), true) = (zone_target, row.moves) {
        effects.push(Effect::Position {
            entity: actor.clone(),
            zone: zone.clone(),
        });
        facts.push(moved(state, actor, zone));
    }
    Ok(Outcome {
        facts,
        effects,
        roll: Some(roll),
    })
}

fn moved(state: &State, actor: &str, zone: &str) -> Fact {
    let from = state.entities.get(actor).map_or("", |a| a.zone.as_str());
    Fact::Moved {
        who: name(state, actor),
        from: name(state, from),
        to: name(state, zone),
    }
}

fn move_to(state: &State, actor: &str, zone: &str) -> Outcome {
    Outcome {
        facts: vec![moved(state, actor, zone)],
        effects: vec![Effect::Position {
            entity: actor.to_string(),
            zone: zone.to_string(),
        }],
        roll: None,
    }
}

fn attack(
    state: &State,
    [actor, target, style, domain]: [&String; 4],
    seed: u64,
    table: &Table,
) -> Outcome {
    let (s, d) = rating(state, actor, style, domain);
    let (defense, marked, hp) = state
        .entities
        .get(target.as_str())
        .map_or((DEFAULT_DC, false, 0), |t| {
            (t.defense + t.guard, t.marks > 0, t.hp)
        });
    // A mark on the target gives the attack advantage and is used up by it.
    let edge = if marked {
        Edge::Advantage
    } else {
        Edge::Normal
    };
    let check = Check {
        style: s,
        domain: d,
        dc: defense,
        edge,
    };
    let roll = roll_check(seed, &check);
    let row: &Row = table.row(roll.band);
    let mut effects = tables::bind(row, actor, target, pressure(state));
    let mut facts = vec![Fact::Rolled {
        who: name(state, actor),
        action: format!("attack {}", name(state, target)),
        dc: defense,
        roll: roll.clone(),
    }];
    if marked {
        effects.push(Effect::Mark {
            entity: target.to_string(),
            delta: -1,
        });
    }
    match tables::damage(row) {
        Some(dice) => {
            let damage = i32::try_from(roll_expr(&dice, roll_seed(seed, 1)).total.max(0))
                .unwrap_or(i32::MAX);
            effects.push(Effect::Hp {
                entity: target.to_string(),
                delta: -damage,
            });
            facts.push(Fact::Hit {
                attacker: name(state, actor),
                target: name(state, target),
                damage,
                down: damage >= hp,
            });
        }
        None => facts.push(Fact::Missed {
            attacker: name(state, actor),
            target: name(state, target),
        }),
    }
    Outcome {
        facts,
        effects,
        roll: Some(roll),
    }
}

fn talk(
    state: &State,
    [actor, target, topic, style, domain]: [&String; 5],
    seed: u64,
    table: &Table,
) -> Outcome {
    let (s, d) = rating(state, actor, style, domain);
    let guard = state.entities.get(target.as_str()).map_or(0, |t| t.guard);
    let check = Check {
        style: s,
        domain: d,
        dc: TALK_DC + guard,
        edge: Edge::Normal,
    };
    let roll = roll_check(seed, &check);
    let effects = tables::bind(table.row(roll.band), actor, target, pressure(state));
    Outcome {
        facts: vec![
            Fact::Rolled {
                who: name(state, actor),
                action: format!("talk to {}", name(state, target)),
                dc: check.dc,
                roll: roll.clone(),
            },
            Fact::Talked {
                who: name(state, actor),
                target: name(state, target),
                topic: topic.to_string(),
                band: roll.band,
            },
        ],
        effects,
        roll: Some(roll),
    }
}

fn use_item(state: &State, actor: &str, item: &str, target: Option<&str>) -> Outcome {
    let target = target.unwrap_or(actor);
    let mut effects = Vec::new();
    let mut consumed = false;
    let mut item_name = item.to_string();
    if let Some(def) = state.items.get(item) {
        effects.extend(def.effects.iter().map(|e| e.bind(actor, target)));
        consumed = def.consumed;
        item_name = def.name.clone();
    }
    if consumed {
        effects.push(Effect::Inventory {
            entity: actor.to_string(),
            item: item.to_string(),
            delta: -1,
        });
    }
    Outcome {
        facts: vec![Fact::UsedItem {
            who: name(state, actor),
            item: item_name,
            target: name(state, target),
        }],
        effects,
        roll: None,
    }
}

/// Names of what `actor` sees in its zone: the first few and "others" for the rest (a crowd is
/// described without walking all of it, so a tool's cost does not grow with the zone).
fn names_here(state: &State, actor: &str) -> Vec<String> {
    let mut names: Vec<String> = visible_here(state, actor, |_| true)
        .take(LIST_NAMES + 1)
        .map(|e| {
            let down = if e.kind.is_person() && e.hp <= 0 {
                " (down)"
            } else {
                ""
            };
            format!("{}{down}", e.name)
        })
        .collect();
    if names.len() > LIST_NAMES {
        names.truncate(LIST_NAMES);
        names.push("others".into());
    }
    names
}

fn clock_lines(state: &State) -> Vec<String> {
    state
        .clocks
        .values()
        .map(|c| format!("{} {}/{}", c.name, c.value, c.size))
        .collect()
}

fn status(state: &State, actor: &str) -> Fact {
    let a = state.entities.get(actor);
    Fact::Status {
        who: name(state, actor),
        hp: a.map_or(0, |a| a.hp),
        max_hp: a.map_or(0, |a| a.max_hp),
        guard: a.map_or(0, |a| a.guard),
        marks: a.map_or(0, |a| a.marks),
        zone: a.map_or_else(String::new, |a| name(state, &a.zone)),
        clocks: clock_lines(state),
        here: names_here(state, actor),
    }
}

fn sense(state: &State, actor: &str, topic: Topic) -> Fact {
    if topic == Topic::Recap {
        return Fact::Recap {
            goal: state.goal.clone(),
            clocks: clock_lines(state),
        };
    }
    let zone = state
        .entities
        .get(actor)
        .and_then(|a| state.zones.get(&a.zone));
    // Lore only about what this character can see: the narrator never learns of the hidden.
    let seen: Vec<&str> = visible_here(state, actor, |_| true)
        .take(LIST_NAMES)
        .map(|e| e.id.as_str())
        .collect();
    Fact::Sensed {
        who: name(state, actor),
        topic,
        zone: zone.map_or_else(String::new, |z| z.name.clone()),
        features: zone.map_or_else(Vec::new, |z| z.features.clone()),
        here: names_here(state, actor),
        exits: zone.map_or_else(Vec::new, |z| {
            z.adjacent.iter().map(|id| name(state, id)).collect()
        }),
        lore: if topic == Topic::ZoomIn {
            state.world.lore_snippet(&seen, 2)
        } else {
            Vec::new()
        },
    }
}
