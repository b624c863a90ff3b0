//! Planner-free tool calls (validate + execute + apply effects) for every tool, with 1, 50 and
//! 500 NPCs in the zone; and folding / re-running a 1,000-turn scene log.
//!
//! `cargo bench -p troupe-scene --bench tools`

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use troupe_scene::effects::Registry;
use troupe_scene::model::{Clock, ContentPrefs, ItemDef, Zone};
use troupe_scene::router::run_tool;
use troupe_scene::{
    Caller, Effect, Entity, Kind, Scene, SceneDef, State, ToolCall, Topic, World, fold, replay,
};

fn person(id: &str, kind: Kind, zone: &str) -> Entity {
    Entity {
        id: id.into(),
        name: format!("{id} the guard"),
        kind,
        zone: zone.into(),
        hp: 1000,
        max_hp: 1000,
        guard: 0,
        marks: 0,
        defense: 12,
        inventory: BTreeMap::from([("tonic".to_string(), 1_000_000)]),
        styles: BTreeMap::from([("bold".to_string(), 2)]),
        domains: BTreeMap::from([("fight".to_string(), 6)]),
        hidden: false,
        revealed_to: BTreeSet::new(),
        tags: BTreeSet::new(),
    }
}

/// Wren in zone `a` with `npcs` NPCs; zone `b` next door holds `npcs` more.
fn def(npcs: usize) -> SceneDef {
    let zone = |id: &str, other: &str| Zone {
        id: id.into(),
        name: format!("zone {id}"),
        adjacent: BTreeSet::from([other.to_string()]),
        features: vec!["a lantern".into()],
    };
    let mut entities = vec![person("wren", Kind::Pc, "a")];
    for i in 0..npcs {
        entities.push(person(&format!("npc{i:03}"), Kind::Npc, "a"));
        entities.push(person(&format!("far{i:03}"), Kind::Npc, "b"));
    }
    SceneDef {
        id: "bench".into(),
        goal: "measure".into(),
        tone: vec![],
        free_movement: true,
        zones: vec![zone("a", "b"), zone("b", "a")],
        entities,
        items: vec![ItemDef {
            id: "tonic".into(),
            name: "tonic".into(),
            effects: vec![Effect::Hp {
                entity: "$actor".into(),
                delta: 1,
            }],
            consumed: true,
        }],
        clocks: vec![Clock {
            id: "alarm".into(),
            name: "Alarm".into(),
            size: 1_000_000,
            value: 0,
        }],
        tags: BTreeMap::new(),
        turn_order: vec!["wren".into()],
        content: ContentPrefs::default(),
        world: World::default(),
    }
}

fn calls() -> Vec<(&'static str, ToolCall, Caller)> {
    let w = || "wren".to_string();
    vec![
        (
            "ask_roll",
            ToolCall::AskRoll {
                actor: w(),
                action: "sneak across".into(),
                target: None,
                zone_target: Some("b".into()),
                style: "bold".into(),
                domain: "fight".into(),
                dc_hint: Some(12),
                adv_style_delta: 0,
            },
            Caller::Player,
        ),
        (
            "attack",
            ToolCall::Attack {
                actor: w(),
                target: "npc000".into(),
                style: "bold".into(),
                domain: "fight".into(),
            },
            Caller::Player,
        ),
        (
            "move",
            ToolCall::Move {
                actor: w(),
                zone: "b".into(),
            },
            Caller::Player,
        ),
        (
            "talk",
            ToolCall::Talk {
                actor: w(),
                target: "npc000".into(),
                topic: "the ledger".into(),
                style: "bold".into(),
                domain: "fight".into(),
            },
            Caller::Player,
        ),
        (
            "use_item",
            ToolCall::UseItem {
                actor: w(),
                item: "tonic".into(),
                target: None,
            },
            Caller::Player,
        ),
        ("get_info", ToolCall::GetInfo { actor: w() }, Caller::Player),
        (
            "narrate_only",
            ToolCall::NarrateOnly {
                actor: w(),
                topic: Topic::Look,
            },
            Caller::Player,
        ),
        (
            "apply_effects",
            ToolCall::ApplyEffects {
                effects: vec![
                    Effect::Clock {
                        clock: "alarm".into(),
                        delta: 1,
                    },
                    Effect::Guard {
                        entity: "npc000".into(),
                        delta: 1,
                    },
                ],
            },
            Caller::Gm,
        ),
        (
            "ask_clarifying",
            ToolCall::AskClarifying {
                question: "Where to?".into(),
                options: vec!["zone b".into()],
            },
            Caller::Player,
        ),
    ]
}

fn tool_calls(c: &mut Criterion) {
    let registry = Registry::default();
    for npcs in [1usize, 50, 500] {
        let state = State::new(&def(npcs));
        let mut group = c.benchmark_group(format!("tool_call/{npcs}_npcs_per_zone"));
        // Each timed call needs its own copy of the state, cloned untimed; a big scene's clone
        // dwarfs the call, so fewer samples keep the run short.
        group.sample_size(20);
        group.measurement_time(Duration::from_millis(500));
        for (name, call, caller) in calls() {
            // Each call must succeed, or the figure would time a rejection.
            let mut probe = state.clone();
            if let Err(e) = run_tool(&mut probe, &registry, &call, caller, 1) {
                eprintln!("{name} was rejected: {e}");
                std::process::exit(1);
            }
            // A fresh copy of the state for each call (a call changes it), cloned outside the
            // timed region; only validate + execute + apply is timed.
            group.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for seed in 0..iters {
                        let mut s = state.clone();
                        let start = Instant::now();
                        let out = run_tool(&mut s, &registry, &call, caller, seed);
                        total += start.elapsed();
                        black_box(out).ok();
                    }
                    total
                })
            });
        }
        group.finish();
    }
}

/// A 1,000-turn log: Wren walks, looks, talks and fights among 50 NPCs.
fn long_scene() -> Scene {
    let mut scene = Scene::start(def(50), 9);
    let all = calls();
    for turn in 0..1000usize {
        let (_, call, caller) = &all[turn % all.len()];
        let call = match call {
            // Walk back and forth so every move is legal.
            ToolCall::Move { actor, .. } => ToolCall::Move {
                actor: actor.clone(),
                zone: if scene.state.entities["wren"].zone == "a" {
                    "b"
                } else {
                    "a"
                }
                .into(),
            },
            ToolCall::AskRoll { .. } | ToolCall::Attack { .. } | ToolCall::Talk { .. }
                if scene.state.entities["wren"].zone != "a" =>
            {
                ToolCall::NarrateOnly {
                    actor: "wren".into(),
                    topic: Topic::Listen,
                }
            }
            other => other.clone(),
        };
        scene.act("bench", call, *caller);
    }
    scene
}

fn replays(c: &mut Criterion) {
    let scene = long_scene();
    let applied = scene
        .events
        .iter()
        .filter(|e| matches!(e.event, troupe_scene::SceneEvent::ToolApplied { .. }))
        .count();
    assert!(applied > 900, "only {applied} of 1,000 calls applied");
    let mut group = c.benchmark_group("scene_1000_turns");
    group.sample_size(20);
    group.bench_function("fold", |b| b.iter(|| black_box(fold(&scene.events))));
    group.bench_function("replay_reexecuting_every_call", |b| {
        b.iter(|| black_box(replay(&scene.events).map(|s| s.state.turn)))
    });
    group.finish();
}

criterion_group!(benches, tool_calls, replays);
criterion_main!(benches);
