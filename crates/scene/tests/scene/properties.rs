#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Properties over random play (legal and illegal calls, GM effects, undos) of the example
//! scene: effects are the only way state changes, a failed call changes nothing, preconditions
//! never admit an illegal move or an attack on an unseen target, the log's fold and replay
//! reproduce the state exactly, and hidden entities never reach a character's view, menu or
//! narration before they are revealed to it.

use proptest::prelude::*;
use troupe_scene::tools::{Caller, menu};
use troupe_scene::view::character_view;
use troupe_scene::{
    Effect, Registry, Scene, SceneEvent, State, ToolCall, Topic, check, fold, replay,
};

fn def() -> troupe_scene::SceneDef {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mill.scene.yaml"
    ))
    .unwrap();
    let mut def = check(&text).unwrap();
    // The hidden ones stand right beside Wren: every view and menu has a chance to leak them.
    for e in &mut def.entities {
        if e.id == "smuggler" || e.id == "ledger" {
            e.zone = "road".into();
        }
    }
    def
}

const ACTORS: &[&str] = &["wren", "tam", "ghost"];
const TARGETS: &[&str] = &["tam", "hound", "smuggler", "ledger", "wren", "nobody"];
const ZONES: &[&str] = &["road", "yard", "storehouse", "loft", "moon"];
const ITEMS: &[&str] = &["tonic", "lockpick", "rope"];
const STYLES: &[&str] = &["bold", "sly", "steady", "x"];
const DOMAINS: &[&str] = &["fight", "talk", "sneak", "y"];
const CLOCKS: &[&str] = &["alarm", "nope"];

fn pick(list: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(list).prop_map(str::to_string)
}

fn effect() -> impl Strategy<Value = Effect> {
    prop_oneof![
        (pick(TARGETS), -6..6i32).prop_map(|(entity, delta)| Effect::Hp { entity, delta }),
        (pick(TARGETS), pick(ZONES)).prop_map(|(entity, zone)| Effect::Position { entity, zone }),
        (pick(CLOCKS), -3..4i32).prop_map(|(clock, delta)| Effect::Clock { clock, delta }),
        (pick(TARGETS), -2..3i32).prop_map(|(entity, delta)| Effect::Guard { entity, delta }),
        (pick(TARGETS), -2..3i32).prop_map(|(entity, delta)| Effect::Mark { entity, delta }),
        (pick(TARGETS), pick(ITEMS), -2..2i32).prop_map(|(entity, item, delta)| {
            Effect::Inventory {
                entity,
                item,
                delta,
            }
        }),
        (pick(&["alert", "noise"]), pick(&["calm", "alarmed"]))
            .prop_map(|(key, value)| Effect::Tag { key, value }),
        (pick(TARGETS), prop::collection::vec(pick(ACTORS), 0..2))
            .prop_map(|(entity, to)| Effect::Reveal { entity, to }),
    ]
}

#[derive(Clone, Debug)]
enum Step {
    Call(ToolCall, Caller),
    Undo,
}

fn call() -> impl Strategy<Value = ToolCall> {
    let topic = prop::sample::select(vec![
        Topic::Look,
        Topic::Listen,
        Topic::Smell,
        Topic::Recap,
        Topic::ZoomIn,
    ]);
    prop_oneof![
        (pick(ACTORS), pick(ZONES)).prop_map(|(actor, zone)| ToolCall::Move { actor, zone }),
        (pick(ACTORS), pick(TARGETS), pick(STYLES), pick(DOMAINS)).prop_map(
            |(actor, target, style, domain)| ToolCall::Attack {
                actor,
                target,
                style,
                domain
            }
        ),
        (pick(ACTORS), pick(TARGETS), pick(STYLES), pick(DOMAINS)).prop_map(
            |(actor, target, style, domain)| ToolCall::Talk {
                actor,
                target,
                topic: "the grain".into(),
                style,
                domain
            }
        ),
        (pick(ACTORS), pick(ITEMS), prop::option::of(pick(TARGETS))).prop_map(
            |(actor, item, target)| ToolCall::UseItem {
                actor,
                item,
                target
            }
        ),
        (
            pick(ACTORS),
            prop::option::of(pick(ZONES)),
            pick(STYLES),
            pick(DOMAINS),
            prop::option::of(3..33i32)
        )
            .prop_map(|(actor, zone_target, style, domain, dc_hint)| {
                ToolCall::AskRoll {
                    actor,
                    action: "sneak past".into(),
                    target: None,
                    zone_target,
                    style,
                    domain,
                    dc_hint,
                    adv_style_delta: 0,
                }
            }),
        pick(ACTORS).prop_map(|actor| ToolCall::GetInfo { actor }),
        (pick(ACTORS), topic).prop_map(|(actor, topic)| ToolCall::NarrateOnly { actor, topic }),
        prop::collection::vec(effect(), 0..4)
            .prop_map(|effects| ToolCall::ApplyEffects { effects }),
        prop::collection::vec(pick(ZONES), 0..5).prop_map(|options| ToolCall::AskClarifying {
            question: "Where?".into(),
            options
        }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (call(), prop::bool::weighted(0.2))
            .prop_map(|(c, gm)| Step::Call(c, if gm { Caller::Gm } else { Caller::Player })),
        1 => Just(Step::Undo),
    ]
}

/// The state with the turn marker (moved by the fold, not by effects) taken out.
fn game(s: &State) -> State {
    let mut s = s.clone();
    s.turn = 0;
    s.current = 0;
    s.clarifications = 0;
    s
}

/// Whether `text` mentions the hidden smuggler or ledger while `viewer` cannot see it.
fn leaks(state: &State, viewer: &str, text: &str) -> Option<String> {
    for id in ["smuggler", "ledger"] {
        let e = &state.entities[id];
        // The rule itself, not the engine's `can_see`: hidden until revealed to the viewer.
        if !e.hidden || e.revealed_to.contains(viewer) {
            continue;
        }
        // The name anywhere, or the id as a JSON string (menus list ids).
        let lower = text.to_lowercase();
        if lower.contains(&e.name.to_lowercase()) || text.contains(&format!("\"{id}\"")) {
            return Some(format!("{id} leaked into: {text}"));
        }
    }
    None
}

fn check_call(before: &State, after: &State, event: &SceneEvent) -> Result<(), TestCaseError> {
    match event {
        SceneEvent::Rejected { .. } => {
            prop_assert_eq!(before, after, "a refused call changed state")
        }
        SceneEvent::ToolApplied {
            call,
            effects,
            narration,
            actor,
            ..
        } => {
            let mut expected = game(before);
            Registry::default()
                .apply_all(&mut expected, effects)
                .unwrap();
            prop_assert_eq!(game(after), expected, "state changed beyond the effects");
            match call {
                ToolCall::Move { actor, zone } => {
                    let from = &before.entities[actor].zone;
                    prop_assert!(before.zones[from].adjacent.contains(zone), "illegal move");
                }
                ToolCall::Attack { actor, target, .. } => {
                    prop_assert!(
                        before.sees_here(actor, target),
                        "attack on an unseen target"
                    );
                }
                _ => {}
            }
            if let Some(leak) = leaks(after, actor, narration) {
                prop_assert!(false, "{}", leak);
            }
        }
        _ => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_play_keeps_every_promise(steps in prop::collection::vec(step(), 1..40)) {
        let mut scene = Scene::start(def(), 42);
        for step in steps {
            let before = scene.state.clone();
            match step {
                Step::Call(call, caller) => {
                    let event = scene.act("…", call, caller).event.clone();
                    check_call(&before, &scene.state, &event)?;
                }
                Step::Undo => {
                    let _ = scene.undo();
                }
            }
            let view = character_view(&scene.state, "wren");
            if let Some(leak) = leaks(&scene.state, "wren", &view) {
                prop_assert!(false, "{}", leak);
            }
            let menu_text = serde_json::to_string(&menu(&scene.state, "wren", Caller::Player)).unwrap();
            if let Some(leak) = leaks(&scene.state, "wren", &menu_text) {
                prop_assert!(false, "menu: {}", leak);
            }
        }
        prop_assert_eq!(&fold(&scene.events).unwrap(), &scene.state);
        prop_assert_eq!(&Scene::resume(scene.events.clone()).unwrap().state, &scene.state);
        let replayed = replay(&scene.events).unwrap();
        prop_assert_eq!(
            serde_json::to_string(&replayed.events).unwrap(),
            serde_json::to_string(&scene.events).unwrap()
        );
    }
}
