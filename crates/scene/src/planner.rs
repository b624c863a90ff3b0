//! The deterministic rules planner: the player's free text to one call from the menu. Intent it
//! cannot pin to a legal call becomes `ask_clarifying` (at most three options, three per turn).

use troupe_prompts::Prompts;

use crate::model::{Entity, State};
use crate::tools::{
    Caller, MAX_CLARIFICATIONS, MAX_OPTIONS, ToolCall, Topic, available, exits, visible_here,
};

const MOVE: &[&str] = &["go", "move", "walk", "head", "run", "enter", "return"];
const ATTACK: &[&str] = &["attack", "hit", "strike", "shoot", "stab", "fight", "punch"];
const TALK: &[&str] = &[
    "talk", "ask", "persuade", "convince", "tell", "say", "bribe",
];
const USE: &[&str] = &["use", "drink", "apply", "throw", "read", "light"];
const ROLL: &[&str] = &[
    "sneak", "hide", "climb", "pick", "try", "roll", "jump", "force", "search", "slip",
];
const INFO: &[&str] = &["status", "info", "hp", "health", "inventory"];

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn has(ws: &[String], list: &[&str]) -> bool {
    ws.iter().any(|w| list.contains(&w.as_str()))
}

/// Whether the text names `id` or any word of `name` longer than two letters.
fn names(ws: &[String], id: &str, name: &str) -> bool {
    let id = id.to_lowercase();
    ws.contains(&id)
        || words(name)
            .iter()
            .filter(|n| n.chars().count() > 2 && !["the", "and", "old"].contains(&n.as_str()))
            .any(|n| ws.contains(n))
}

/// The rating named in the text, or else the actor's highest (ties: the first by name).
fn pick(ws: &[String], ratings: &std::collections::BTreeMap<String, u32>) -> String {
    ratings
        .keys()
        .find(|k| ws.contains(&k.to_lowercase()))
        .cloned()
        .or_else(|| {
            ratings
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(k, _)| k.clone())
        })
        .unwrap_or_default()
}

fn clarify(state: &State, actor: &str, question: &str, options: Vec<String>) -> ToolCall {
    if state.clarifications >= MAX_CLARIFICATIONS {
        // Out of questions this turn: describe the scene instead of asking a fourth.
        return ToolCall::NarrateOnly {
            actor: actor.to_string(),
            topic: Topic::Look,
        };
    }
    ToolCall::AskClarifying {
        question: question.to_string(),
        options: options.into_iter().take(MAX_OPTIONS).collect(),
    }
}

/// The one call for `actor`'s free text.
pub fn plan(state: &State, actor: &str, text: &str) -> ToolCall {
    let ws = words(text);
    let Some(me) = state.entities.get(actor) else {
        return clarify(state, actor, "Who is acting?", Vec::new());
    };
    let a = actor.to_string();
    let topic = |t| ToolCall::NarrateOnly {
        actor: a.clone(),
        topic: t,
    };
    if has(&ws, INFO) {
        return ToolCall::GetInfo { actor: a };
    }
    if has(&ws, ATTACK) {
        return attack(state, me, &ws);
    }
    if has(&ws, TALK) {
        return talk(state, me, &ws, text);
    }
    if has(&ws, USE) {
        return use_item(state, me, &ws);
    }
    if has(&ws, ROLL) {
        return ask_roll(state, me, &ws, text);
    }
    if has(&ws, MOVE) {
        return move_to(state, me, &ws);
    }
    for (list, t) in [
        (&["listen", "hear"][..], Topic::Listen),
        (&["smell", "sniff"][..], Topic::Smell),
        (&["recap", "summary", "goal"][..], Topic::Recap),
        (
            &["examine", "inspect", "study", "closer"][..],
            Topic::ZoomIn,
        ),
        (&["look", "around", "describe"][..], Topic::Look),
    ] {
        if has(&ws, list) {
            return topic(t);
        }
    }
    let mut options = vec!["look around".to_string()];
    options.extend(
        exits(state, actor)
            .first()
            .map(|z| format!("go to {}", state.name_of(z))),
    );
    clarify(state, actor, "What do you do?", options)
}

/// The one entity among `candidates` the text names (or the only candidate when none is named).
fn choose<'a>(ws: &[String], candidates: &[&'a Entity]) -> Result<&'a Entity, Vec<String>> {
    let named: Vec<&&Entity> = candidates
        .iter()
        .filter(|e| names(ws, &e.id, &e.name))
        .collect();
    match (named.as_slice(), candidates) {
        ([one], _) => Ok(one),
        ([], [only]) => Ok(only),
        _ => Err(candidates.iter().map(|e| e.name.clone()).collect()),
    }
}

fn attack(state: &State, me: &Entity, ws: &[String]) -> ToolCall {
    let targets: Vec<&Entity> = visible_here(state, &me.id, |e| {
        e.kind != crate::model::Kind::Item && e.hp > 0
    })
    .collect();
    if !available(state, &me.id, "attack", Caller::Player) {
        return clarify(
            state,
            &me.id,
            "There is nothing here to attack. What do you do?",
            vec![],
        );
    }
    match choose(ws, &targets) {
        Ok(t) => ToolCall::Attack {
            actor: me.id.clone(),
            target: t.id.clone(),
            style: pick(ws, &me.styles),
            domain: pick(ws, &me.domains),
        },
        Err(options) => clarify(state, &me.id, "Attack whom?", options),
    }
}

fn talk(state: &State, me: &Entity, ws: &[String], text: &str) -> ToolCall {
    let people: Vec<&Entity> =
        visible_here(state, &me.id, |e| e.kind.is_person() && e.hp > 0).collect();
    if people.is_empty() {
        return clarify(
            state,
            &me.id,
            "There is no one here to talk to. What do you do?",
            vec![],
        );
    }
    match choose(ws, &people) {
        Ok(t) => ToolCall::Talk {
            actor: me.id.clone(),
            target: t.id.clone(),
            // "talk to Tam about the ledger" is about the ledger.
            topic: text
                .split_once(" about ")
                .map_or(text, |(_, topic)| topic)
                .trim()
                .to_string(),
            style: pick(ws, &me.styles),
            domain: pick(ws, &me.domains),
        },
        Err(options) => clarify(state, &me.id, "Talk to whom?", options),
    }
}

fn use_item(state: &State, me: &Entity, ws: &[String]) -> ToolCall {
    let usable: Vec<&str> = me
        .inventory
        .keys()
        .filter(|i| state.items.contains_key(*i))
        .map(String::as_str)
        .collect();
    let named: Vec<&str> = usable
        .iter()
        .copied()
        .filter(|i| names(ws, i, state.name_of(i)))
        .collect();
    let item = match (named.as_slice(), usable.as_slice()) {
        ([one], _) | ([], [one]) => *one,
        _ => {
            let options = usable
                .iter()
                .map(|i| state.name_of(i).to_string())
                .collect();
            return clarify(state, &me.id, "Use what?", options);
        }
    };
    let others: Vec<&Entity> = visible_here(state, &me.id, |_| true).collect();
    let target = others
        .iter()
        .find(|e| names(ws, &e.id, &e.name))
        .map(|e| e.id.clone());
    ToolCall::UseItem {
        actor: me.id.clone(),
        item: item.to_string(),
        target,
    }
}

fn named_exit(state: &State, me: &Entity, ws: &[String]) -> Option<String> {
    exits(state, &me.id)
        .into_iter()
        .find(|z| names(ws, z, state.name_of(z)))
        .map(str::to_string)
}

fn move_to(state: &State, me: &Entity, ws: &[String]) -> ToolCall {
    match named_exit(state, me, ws) {
        Some(zone) if state.free_movement => ToolCall::Move {
            actor: me.id.clone(),
            zone,
        },
        _ => {
            let options = exits(state, &me.id)
                .into_iter()
                .map(|z| state.name_of(z).to_string())
                .collect();
            clarify(state, &me.id, "Where to?", options)
        }
    }
}

fn ask_roll(state: &State, me: &Entity, ws: &[String], text: &str) -> ToolCall {
    let others: Vec<&Entity> = visible_here(state, &me.id, |_| true).collect();
    ToolCall::AskRoll {
        actor: me.id.clone(),
        action: text.trim().to_string(),
        target: others
            .iter()
            .find(|e| names(ws, &e.id, &e.name))
            .map(|e| e.id.clone()),
        zone_target: named_exit(state, me, ws),
        style: pick(ws, &me.styles),
        domain: pick(ws, &me.domains),
        dc_hint: None,
        adv_style_delta: 0,
    }
}

/// What a model planner is asked: the system text, the user text and the reply's JSON schema
/// (one object per tool on the menu, each with its legal arguments).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelAsk {
    pub system: String,
    pub user: String,
    pub schema: serde_json::Value,
}

/// The model planner's question for `actor`'s free text, from the templates
/// `scene_planner_system.md` and `scene_planner_ask.md`. The prompt names only what the actor
/// perceives (the menu's enums are built from visible entities), never hidden entities.
pub fn model_ask(
    prompts: &Prompts,
    state: &State,
    actor: &str,
    text: &str,
) -> Result<ModelAsk, troupe_prompts::Error> {
    let options: Vec<serde_json::Value> = crate::tools::menu(state, actor, Caller::Player)
        .into_iter()
        .map(|(tool, args)| {
            serde_json::json!({"type": "object", "additionalProperties": false,
                "required": ["tool", "args"],
                "properties": {"tool": {"const": tool}, "args": args}})
        })
        .collect();
    let system = prompts.render_exact(
        "scene_planner_system.md",
        serde_json::json!({"max_options": MAX_OPTIONS, "goal": state.goal, "tone": state.tone}),
    )?;
    let user = prompts.render_exact(
        "scene_planner_ask.md",
        serde_json::json!({
            "view": crate::view::character_view(state, actor),
            "name": state.name_of(actor),
            "text": text,
        }),
    )?;
    Ok(ModelAsk {
        system,
        user,
        schema: serde_json::json!({"oneOf": options}),
    })
}

/// Read a model planner's reply. A reply that is not one of the menu's calls becomes a
/// clarifying question; the validator checks whatever comes out again before it runs.
pub fn read_reply(state: &State, actor: &str, reply: &serde_json::Value) -> ToolCall {
    match serde_json::from_value::<ToolCall>(reply.clone()) {
        Ok(call) if crate::tools::available(state, actor, call.name(), Caller::Player) => call,
        _ => clarify(
            state,
            actor,
            "I did not follow. What do you do?",
            Vec::new(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded() -> Prompts {
        Prompts::embedded(&[crate::prompts::TEMPLATES])
    }

    fn state() -> State {
        let text = "scene: {id: s, goal: find it}\n\
                    zones: [{id: a, adjacent: [b]}, {id: b}]\n\
                    entities:\n  - {id: p, kind: pc, zone: a, styles: {bold: 1}, domains: {fight: d6}}\n  \
                    - {id: spy, kind: npc, name: The Spy, zone: a, hidden: true}\n\
                    turn_order: [p]\n";
        State::new(&crate::check(text).unwrap())
    }

    #[test]
    fn the_model_is_asked_with_the_menu_and_never_told_of_the_hidden() {
        let s = state();
        let ask = model_ask(&embedded(), &s, "p", "go to b").unwrap();
        let all = format!("{}{}{}", ask.system, ask.user, ask.schema);
        assert!(!all.contains("spy") && !all.contains("Spy"), "{all}");
        assert!(all.contains("\"move\""), "{all}");
    }

    /// The model planner's prompt, whole: a change to its template shows here as a diff. The
    /// player's words (blank lines and trailing spaces too) reach the model as they were said.
    #[test]
    fn the_model_planners_prompt() {
        let s = state();
        let ask = model_ask(&embedded(), &s, "p", "go to b,   \n\n\n  quietly").unwrap();
        insta::assert_snapshot!(format!(
            "=== system ===\n{}\n=== user ===\n{}\n=== end ===",
            ask.system, ask.user
        ));
    }

    #[test]
    fn a_reply_off_the_menu_becomes_a_question() {
        let s = state();
        let good = serde_json::json!({"tool": "move", "args": {"actor": "p", "zone": "b"}});
        assert_eq!(read_reply(&s, "p", &good).name(), "move");
        let gm_only = serde_json::json!({"tool": "apply_effects", "args": {"effects": []}});
        assert_eq!(read_reply(&s, "p", &gm_only).name(), "ask_clarifying");
        let junk = serde_json::json!({"tool": "fly"});
        assert_eq!(read_reply(&s, "p", &junk).name(), "ask_clarifying");
    }
}
