//! The GM's tools: a registry of names, what each needs, and the checks a call must pass before
//! it runs. New tools (Foundry VTT's `foundry_lookup`, `foundry_reward`) are added here.

/// The encounter tools, always available unless the spec's `tools` leaves them out.
pub const ENCOUNTER_TOOLS: &[&str] = &[
    "skill_check_emit",
    "encounter_resolve",
    "context_recall",
    "goal_register",
];

/// The scene engine's tools (seed 004), available only when the spec has a scene.
pub const SCENE_TOOLS: &[&str] = &troupe_scene::tools::TOOL_NAMES;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use troupe_rules::Edge;

use crate::spec::{Goal, Spec};

/// The most tool calls one GM reply may carry.
pub const MAX_CALLS: usize = 3;
/// The `check` of a skill check that is none of the prepared ones (it gives its own `dc`).
pub const OTHER_CHECK: &str = "other";
/// A skill check's DC must lie in this range.
pub const DC_RANGE: std::ops::RangeInclusive<i32> = 1..=40;

/// One GM reply, checked: what the players are told, the facts it settles, the tools it calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GmReply {
    pub narration: String,
    /// Canonical facts of this encounter the reply settles (`context_recall` returns them).
    pub facts: Vec<(String, String)>,
    pub calls: Vec<Call>,
}

/// A tool call that passed its checks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool", content = "args", rename_all = "snake_case")]
pub enum Call {
    SkillCheckEmit(CheckCall),
    EncounterResolve {
        goal: String,
        summary: String,
    },
    ContextRecall {
        keys: Vec<String>,
    },
    GoalRegister {
        goal: Goal,
        primary: bool,
    },
    /// One of the scene engine's tools, checked again by the scene's router when it runs.
    Scene(troupe_scene::ToolCall),
}

/// A skill check the GM asks of one player: it waits for that player's roll.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckCall {
    /// The seat's id.
    pub player: String,
    /// What the roll is for, in the GM's words (players see it).
    pub what: String,
    /// The spec's check this is, when it is one (its DC and skill are used).
    pub check: Option<String>,
    pub dc: i32,
    pub skill: Option<String>,
    pub modifier: i32,
    pub edge: Edge,
}

/// What the checks need to know about the table and the encounter.
pub struct Table<'a> {
    pub spec: &'a Spec,
    /// Goals registered during play, beside the spec's.
    pub extra_goals: &'a [Goal],
    /// (seat id, character name) of everyone at the table.
    pub seats: &'a [(String, String)],
    pub has_scene: bool,
}

impl Table<'_> {
    /// The tools this encounter allows: the spec's list, or every tool that applies.
    pub fn allowed(&self) -> Vec<&'static str> {
        let applies = |t: &&str| self.has_scene || !SCENE_TOOLS.contains(t);
        ENCOUNTER_TOOLS
            .iter()
            .chain(SCENE_TOOLS)
            .copied()
            .filter(applies)
            .filter(|t| self.spec.tools.is_empty() || self.spec.tools.iter().any(|s| s == t))
            .collect()
    }

    fn seat(&self, who: &str) -> Option<&str> {
        let who = who.trim();
        self.seats
            .iter()
            .find(|(id, name)| id.eq_ignore_ascii_case(who) || name.eq_ignore_ascii_case(who))
            .map(|(id, _)| id.as_str())
    }

    fn goal_known(&self, id: &str) -> bool {
        self.spec
            .goals()
            .chain(self.extra_goals)
            .any(|g| g.id == id)
    }
}

/// The JSON schema every GM reply must match: each allowed tool with its own arguments, and
/// the table's players, goals and prepared checks as the only values they take. A provider
/// that constrains its output (the embedded model's grammar) cannot write an unknown tool or
/// player; the gateway checks the shape of every reply, [`read_reply`] its meaning.
pub fn reply_schema(table: &Table) -> Value {
    let calls: Vec<Value> = table
        .allowed()
        .into_iter()
        .map(|tool| {
            json!({
                "type": "object",
                "properties": {"tool": {"const": tool}, "args": args_schema(tool, table)},
                "required": ["tool", "args"]
            })
        })
        .collect();
    json!({
        "type": "object",
        "properties": {
            "narration": {"type": "string", "minLength": 1},
            "facts": {"type": "array", "items": {
                "type": "object",
                "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
                "required": ["key", "value"]
            }},
            "tools": {"type": "array", "maxItems": MAX_CALLS, "items": {"anyOf": calls}}
        },
        "required": ["narration", "tools"]
    })
}

fn args_schema(tool: &str, table: &Table) -> Value {
    match tool {
        "skill_check_emit" => {
            let players: Vec<&str> = table
                .seats
                .iter()
                .flat_map(|(id, name)| [id.as_str(), name.as_str()])
                .collect();
            let mut props = json!({
                "player": {"enum": players},
                "what": {"type": "string", "minLength": 1},
                "dc": {"type": "integer", "minimum": DC_RANGE.start(), "maximum": DC_RANGE.end()},
                "skill": {"type": "string"},
                "modifier": {"type": "integer", "minimum": -10, "maximum": 10},
                "advantage": {"type": "boolean"},
                "disadvantage": {"type": "boolean"}
            });
            // With prepared checks the GM names one (or `other`, with a DC of its own);
            // without, it gives the DC.
            let required = if table.spec.checks.is_empty() {
                json!(["player", "what", "dc"])
            } else {
                let mut names: Vec<&str> =
                    table.spec.checks.iter().map(|c| c.name.as_str()).collect();
                names.push(OTHER_CHECK);
                props["check"] = json!({"enum": names});
                json!(["player", "what", "check"])
            };
            json!({"type": "object", "properties": props, "required": required})
        }
        "encounter_resolve" => {
            let goals: Vec<&str> = table
                .spec
                .goals()
                .chain(table.extra_goals)
                .map(|g| g.id.as_str())
                .collect();
            json!({"type": "object", "properties": {
                "goal": {"enum": goals}, "summary": {"type": "string", "minLength": 1}
            }, "required": ["goal", "summary"]})
        }
        "context_recall" => json!({"type": "object", "properties": {
            "keys": {"type": "array", "items": {"type": "string"}}
        }}),
        "goal_register" => json!({"type": "object", "properties": {
            "id": {"type": "string", "minLength": 1},
            "label": {"type": "string", "minLength": 1},
            "primary": {"type": "boolean"}
        }, "required": ["id", "label"]}),
        _ => json!({"type": "object"}),
    }
}

/// What each tool takes, for the GM's prompt: one line per allowed tool.
pub fn describe(tool: &str) -> &'static str {
    match tool {
        "skill_check_emit" => {
            "skill_check_emit {player, what, check?, dc?, skill?, modifier?, advantage?, disadvantage?}: ask one player for a d20 roll; give `check` (a prepared check's name) or `dc` (and `check`: other, when the encounter has prepared checks). The roll comes back to you to narrate."
        }
        "encounter_resolve" => {
            "encounter_resolve {goal, summary}: the encounter ends with this goal's outcome; summary is what happened, for the record."
        }
        "context_recall" => {
            "context_recall {keys?}: the facts settled earlier in this encounter (all, or these keys)."
        }
        "goal_register" => "goal_register {id, label, primary?}: a new goal that arose in play.",
        _ => "a scene engine tool (see the scene's menu): {actor, ...}",
    }
}

/// Read a GM reply against the tools' schemas and the table: the checked reply, or every
/// problem found (for the re-ask; nothing of a rejected reply reaches the players).
pub fn read_reply(json: &Value, table: &Table) -> Result<GmReply, Vec<String>> {
    let mut problems = Vec::new();
    let narration = json["narration"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_string();
    if narration.is_empty() {
        problems.push("`narration` is empty: say what the players see and hear".to_string());
    }
    let facts = read_facts(&json["facts"], &mut problems);
    let mut calls = Vec::new();
    let raw = json["tools"].as_array().cloned().unwrap_or_default();
    if raw.len() > MAX_CALLS {
        problems.push(format!("{} tool calls; at most {MAX_CALLS}", raw.len()));
    }
    for (i, call) in raw.iter().take(MAX_CALLS).enumerate() {
        match read_call(call, table) {
            Ok(c) => calls.push(c),
            Err(p) => problems.push(format!("tools[{i}]: {p}")),
        }
    }
    check_combination(&calls, &mut problems);
    if problems.is_empty() {
        Ok(GmReply {
            narration,
            facts,
            calls,
        })
    } else {
        Err(problems)
    }
}

fn read_facts(value: &Value, problems: &mut Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, f) in value.as_array().into_iter().flatten().enumerate() {
        match (f["key"].as_str(), f["value"].as_str()) {
            (Some(k), Some(v)) if !k.trim().is_empty() => {
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
            _ => problems.push(format!("facts[{i}] needs a `key` and a `value`, both text")),
        }
    }
    out
}

/// At most one skill check a reply (a check waits for its roll), and no check beside the end.
fn check_combination(calls: &[Call], problems: &mut Vec<String>) {
    let checks = calls
        .iter()
        .filter(|c| matches!(c, Call::SkillCheckEmit(_)))
        .count();
    if checks > 1 {
        problems.push("one skill_check_emit per reply: the check waits for its roll".into());
    }
    let resolves = calls
        .iter()
        .any(|c| matches!(c, Call::EncounterResolve { .. }));
    if resolves && checks > 0 {
        problems.push("encounter_resolve ends the encounter: no skill check beside it".into());
    }
}

fn read_call(call: &Value, table: &Table) -> Result<Call, String> {
    let name = call["tool"].as_str().unwrap_or_default();
    let args = &call["args"];
    let allowed = table.allowed();
    if !allowed.contains(&name) {
        return Err(
            if ENCOUNTER_TOOLS.contains(&name) || SCENE_TOOLS.contains(&name) {
                format!(
                    "`{name}` is not allowed in this encounter; allowed: {}",
                    allowed.join(", ")
                )
            } else {
                format!("unknown tool `{name}`; allowed: {}", allowed.join(", "))
            },
        );
    }
    if !args.is_object() {
        return Err(format!("`{name}` needs `args` as an object"));
    }
    match name {
        "skill_check_emit" => read_check(args, table).map(Call::SkillCheckEmit),
        "encounter_resolve" => read_resolve(args, table),
        "context_recall" => read_recall(args),
        "goal_register" => read_goal(args, table),
        _ => read_scene(name, args),
    }
}

fn text(args: &Value, key: &str) -> Option<String> {
    args[key]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn int(args: &Value, key: &str) -> Result<Option<i32>, String> {
    match &args[key] {
        Value::Null => Ok(None),
        v => v
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a whole number, not {v}")),
    }
}

fn flag(args: &Value, key: &str) -> Result<bool, String> {
    match &args[key] {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        v => Err(format!("`{key}` must be true or false, not {v}")),
    }
}

fn read_check(args: &Value, table: &Table) -> Result<CheckCall, String> {
    let who = text(args, "player").ok_or("`player` (who rolls) is missing")?;
    let player = table.seat(&who).ok_or_else(|| {
        let names: Vec<String> = table
            .seats
            .iter()
            .map(|(id, n)| format!("{id} ({n})"))
            .collect();
        format!(
            "no player `{who}` at this table; players: {}",
            names.join(", ")
        )
    })?;
    let what = text(args, "what").ok_or("`what` (what the roll is for) is missing")?;
    let named = text(args, "check").filter(|c| c != OTHER_CHECK);
    let prepared = match &named {
        Some(n) => Some(table.spec.check(n).ok_or_else(|| {
            let known: Vec<&str> = table.spec.checks.iter().map(|c| c.name.as_str()).collect();
            format!("no prepared check `{n}`; prepared: {}", known.join(", "))
        })?),
        None => None,
    };
    let dc = match (int(args, "dc")?, prepared) {
        (_, Some(p)) => p.dc,
        (Some(dc), None) => dc,
        (None, None) => {
            return Err(format!(
                "give `check` (a prepared check) or `dc` (with `check`: \"{OTHER_CHECK}\")"
            ));
        }
    };
    if !DC_RANGE.contains(&dc) {
        return Err(format!(
            "`dc` {dc} is outside {}..={}",
            DC_RANGE.start(),
            DC_RANGE.end()
        ));
    }
    let edge = match (flag(args, "advantage")?, flag(args, "disadvantage")?) {
        (true, true) | (false, false) => Edge::Normal,
        (true, false) => Edge::Advantage,
        (false, true) => Edge::Disadvantage,
    };
    Ok(CheckCall {
        player: player.to_string(),
        what,
        check: prepared.map(|p| p.name.clone()),
        dc,
        skill: text(args, "skill").or_else(|| prepared.and_then(|p| p.skill.clone())),
        modifier: int(args, "modifier")?.unwrap_or(0).clamp(-10, 10),
        edge,
    })
}

fn read_resolve(args: &Value, table: &Table) -> Result<Call, String> {
    let goal = text(args, "goal").ok_or("`goal` (the goal id reached or lost) is missing")?;
    if !table.goal_known(&goal) {
        let ids: Vec<&str> = table
            .spec
            .goals()
            .chain(table.extra_goals)
            .map(|g| g.id.as_str())
            .collect();
        return Err(format!("no goal `{goal}`; goals: {}", ids.join(", ")));
    }
    let summary = text(args, "summary").ok_or("`summary` (what happened) is missing")?;
    Ok(Call::EncounterResolve { goal, summary })
}

fn read_recall(args: &Value) -> Result<Call, String> {
    let keys = match &args["keys"] {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .iter()
            .map(|k| {
                k.as_str()
                    .map(str::to_string)
                    .ok_or("`keys` must be a list of text")
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("`keys` must be a list of text".into()),
    };
    Ok(Call::ContextRecall { keys })
}

fn read_goal(args: &Value, table: &Table) -> Result<Call, String> {
    let id = text(args, "id").ok_or("`id` is missing")?;
    if table.goal_known(&id) {
        return Err(format!("goal `{id}` already exists"));
    }
    let label = text(args, "label").ok_or("`label` is missing")?;
    Ok(Call::GoalRegister {
        goal: Goal { id, label },
        primary: flag(args, "primary")?,
    })
}

fn read_scene(name: &str, args: &Value) -> Result<Call, String> {
    let call = json!({"tool": name, "args": args});
    serde_json::from_value(call)
        .map(Call::Scene)
        .map_err(|e| format!("`{name}`: {e}"))
}
