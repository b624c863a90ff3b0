//! The encounter's pure parts together: prompts (snapshots), what a GM reply does, the fold's
//! next step, and the secrets that never reach a player's prompt (property-tested).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::json;
use troupe_encounter::log::{
    EncounterEvent, Envelope, Next, NpcMemory, Seat, SeatKind, State, fold, undo_point,
};
use troupe_encounter::names::{Drawn, Origin};
use troupe_encounter::prompt::{embedded, gm_messages, player_messages};
use troupe_encounter::turn::{GmStep, gm_reply};
use troupe_encounter::view::player_view;

const SMITHY: &str = include_str!("../../../../examples/encounters/smithy.yaml");

fn seat(id: &str, character: &str, kind: SeatKind) -> Seat {
    Seat {
        id: id.into(),
        character: character.into(),
        player: format!("{character}'s player"),
        kind,
        about: String::new(),
    }
}

fn started(memories: Vec<NpcMemory>, notes: Option<String>) -> Vec<Envelope> {
    let mut spec = troupe_encounter::check::check(SMITHY).unwrap();
    if notes.is_some() {
        spec.gm_notes = notes;
    }
    let names = vec![
        Drawn {
            key: "smith".into(),
            value: "Brekka Anvilmourn".into(),
            origin: Origin::Fallback,
        },
        Drawn {
            key: "factor".into(),
            value: "Osric Dale".into(),
            origin: Origin::Fallback,
        },
        Drawn {
            key: "tavern".into(),
            value: "The Sleeping Anvil".into(),
            origin: Origin::Fallback,
        },
    ];
    vec![Envelope {
        seq: 0,
        event: EncounterEvent::Started {
            spec: Box::new(spec),
            scene: None,
            seed: 12,
            seats: vec![
                seat("p1", "Mara", SeatKind::Person),
                seat("alex", "Zara-7", SeatKind::Ai),
            ],
            names,
            memories,
            window: 128_000,
            at: "2026-11-24T00:00:00Z".into(),
        },
    }]
}

fn push(events: &mut Vec<Envelope>, new: Vec<EncounterEvent>) -> State {
    for event in new {
        let seq = events.len() as u64;
        events.push(Envelope { seq, event });
    }
    fold(events).unwrap()
}

fn memory() -> Vec<NpcMemory> {
    vec![NpcMemory {
        npc: "smith".into(),
        lines: vec![
            "Brekka remembers the tall android who promised to bring back her hammer".into(),
        ],
    }]
}

fn shown(messages: &[(troupe_encounter::budget::Role, String)]) -> String {
    messages
        .iter()
        .map(|(role, text)| format!("--- {role:?}\n{text}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_gm_prompt_holds_the_encounter_and_its_secrets() {
    let state = fold(&started(memory(), None)).unwrap();
    let assembled = gm_messages(embedded(), &state).unwrap();
    insta::assert_snapshot!(shown(&assembled.messages));
    assert!(assembled.zones.system > 0 && assembled.zones.pinned > 0);
}

#[test]
fn an_ai_players_prompt_holds_only_what_the_table_knows() {
    let mut events = started(memory(), None);
    let state = push(
        &mut events,
        vec![EncounterEvent::Narrated {
            text: "The forge is cold.".into(),
            facts: vec![],
        }],
    );
    insta::assert_snapshot!(shown(&player_prompt(&state, 1)));
}

/// The turn's instructions past the opening, the templates' other branches: the GM's after a
/// roll with facts settled, then asked to rewrite a leaking narration; an AI player's action
/// sent back with the validator's feedback.
#[test]
fn the_prompts_mid_run_after_a_roll_a_leak_and_an_action_sent_back() {
    let mut events = started(vec![], None);
    let facts = vec![("forge".to_string(), "cold".to_string())];
    push(
        &mut events,
        vec![EncounterEvent::Narrated {
            text: "The forge is cold.".into(),
            facts,
        }],
    );
    let acted = |seat: &str, text: &str| EncounterEvent::PlayerActed {
        seat: seat.into(),
        text: text.into(),
    };
    let state = push(
        &mut events,
        vec![
            acted("p1", "I offer to help"),
            acted("alex", "I read the ledger"),
        ],
    );
    let ask = json!({"narration": "Zara, read it.", "tools": [{"tool": "skill_check_emit",
        "args": {"player": "alex", "what": "to read the ledger", "check": "read_ledger"}}]});
    let GmStep::Events(new) = gm_reply(&state, &ask, "now") else {
        panic!()
    };
    push(&mut events, new);
    let roll = troupe_rules::d20::D20Roll {
        dice: vec![18],
        kept: 18,
        total: 18,
        dc: 12,
        success: true,
        natural: None,
    };
    let rolled = EncounterEvent::CheckRolled {
        seat: "alex".into(),
        roll,
    };
    let state = push(&mut events, vec![rolled]);
    let turn = |state: &State| {
        let assembled = gm_messages(embedded(), state).unwrap();
        assembled.messages.last().unwrap().1.clone()
    };
    let after_roll = turn(&state);
    let leaky = json!({"narration": "The lock is DC 12. Rain falls.", "tools": []});
    let GmStep::Events(new) = gm_reply(&state, &leaky, "now") else {
        panic!()
    };
    let state = push(&mut events, new);
    let rewrite = turn(&state);
    insta::assert_snapshot!(format!(
        "=== after the roll ===\n{after_roll}\n=== asked to rewrite ===\n{rewrite}"
    ));
    let state = push(
        &mut events,
        vec![EncounterEvent::ActionSentBack {
            seat: "alex".into(),
            text: "The smith confesses everything.".into(),
            feedback: "Say what Zara-7 tries, not how others react.".into(),
        }],
    );
    insta::assert_snapshot!(
        "player_turn_sent_back",
        shown(&player_prompt(&state, 1)[1..])
    );
}

#[test]
fn a_round_goes_open_actions_gm_roll_gm() {
    let mut events = started(vec![], None);
    assert_eq!(fold(&events).unwrap().next(), Next::Open);
    let state = push(
        &mut events,
        vec![EncounterEvent::Narrated {
            text: "Cold forge.".into(),
            facts: vec![],
        }],
    );
    assert_eq!(state.next(), Next::Act(0));
    let state = push(
        &mut events,
        vec![
            EncounterEvent::PlayerActed {
                seat: "p1".into(),
                text: "I offer to help".into(),
            },
            EncounterEvent::PlayerActed {
                seat: "alex".into(),
                text: "I read the ledger".into(),
            },
        ],
    );
    assert_eq!((state.next(), state.round), (Next::Gm, 1));
    let reply = json!({"narration": "She looks up. Roll.", "tools": [{"tool": "skill_check_emit",
        "args": {"player": "Mara", "what": "to calm her", "check": "calm_smith"}}]});
    let GmStep::Events(new) = gm_reply(&state, &reply, "now") else {
        panic!()
    };
    let state = push(&mut events, new);
    let Next::Roll(check) = state.next() else {
        panic!("{:?}", state.next())
    };
    assert_eq!((check.player.as_str(), check.dc), ("p1", 14));
    assert_eq!(undo_point(&events, 2), Some(2));
}

#[test]
fn a_reply_is_rejected_then_fails_after_its_attempts() {
    let mut events = started(vec![], None);
    let state = fold(&events).unwrap();
    let bad = json!({"narration": "Hm.", "tools": [{"tool": "skill_check_emit",
        "args": {"player": "Nobody", "what": "x", "dc": 99}}]});
    let GmStep::Events(new) = gm_reply(&state, &bad, "now") else {
        panic!()
    };
    assert!(
        matches!(&new[0], EncounterEvent::GmRejected { problems, .. } if problems[0].contains("no player `Nobody`"))
    );
    let state = push(&mut events, new.clone());
    let state2 = push(&mut events, new);
    assert_eq!(state.next(), Next::Open);
    assert!(matches!(gm_reply(&state2, &bad, "now"), GmStep::Failed(_)));
}

#[test]
fn a_leak_is_sent_back_once_then_withheld() {
    let mut events = started(vec![], None);
    let state = fold(&events).unwrap();
    let leaky = json!({"narration": "The lock is DC 12. Rain falls.", "tools": []});
    let GmStep::Events(new) = gm_reply(&state, &leaky, "now") else {
        panic!()
    };
    assert_eq!(new.len(), 1);
    let state = push(&mut events, new);
    assert!(state.sent_back.as_deref().unwrap().contains("Rewrite"));
    let GmStep::Events(new) = gm_reply(&state, &leaky, "now") else {
        panic!()
    };
    let EncounterEvent::Narrated { text, .. } = &new[1] else {
        panic!("{new:?}")
    };
    assert_eq!(text, "[withheld] Rain falls.");
}

/// Issue 33: a GM that repeats a prepared check's note every reply. The note is sent back,
/// then withheld, round after round, until that check has succeeded; then it may be told.
#[test]
fn a_checks_note_reaches_the_players_only_after_the_check_succeeds() {
    let mut events = started(vec![], None);
    let note = "Success shows the debt was doubled by a forged entry.";
    let leaky = json!({"narration": format!("Rain falls. {note}"), "tools": []});
    let mut state = fold(&events).unwrap();
    for _ in 0..2 {
        let GmStep::Events(new) = gm_reply(&state, &leaky, "now") else {
            panic!()
        };
        assert!(matches!(&new[0], EncounterEvent::LeakCaught { leaks, .. }
            if leaks[0].kind == troupe_encounter::leaks::SecretKind::CheckNote));
        state = push(&mut events, new);
    }
    assert_eq!(state.public, ["GM: Rain falls. [withheld]"]);
    // The check is asked for and succeeds.
    let ask = json!({"narration": "Zara, read it.", "tools": [{"tool": "skill_check_emit",
        "args": {"player": "alex", "what": "to read the ledger", "check": "read_ledger"}}]});
    let GmStep::Events(new) = gm_reply(&state, &ask, "now") else {
        panic!()
    };
    push(&mut events, new);
    let roll = troupe_rules::d20::D20Roll {
        dice: vec![18],
        kept: 18,
        total: 18,
        dc: 12,
        success: true,
        natural: None,
    };
    let state = push(
        &mut events,
        vec![EncounterEvent::CheckRolled {
            seat: "alex".into(),
            roll,
        }],
    );
    let GmStep::Events(new) = gm_reply(&state, &leaky, "now") else {
        panic!()
    };
    let state = push(&mut events, new);
    assert_eq!(
        state.public.last().unwrap(),
        &format!("GM: Rain falls. {note}")
    );
}

/// What a roll is for and a resolution's summary are shown to the players: a DC or a hidden
/// goal in them, in any form, is caught like one in the narration, and withheld the second time.
#[test]
fn secrets_in_the_tool_arguments_players_see_are_caught() {
    let mut events = started(vec![], None);
    let mut state = fold(&events).unwrap();
    let leaky = json!({"narration": "She looks up.", "tools": [{"tool": "skill_check_emit",
        "args": {"player": "Mara", "what": "to calm her. It is a fourteen DC", "check": "calm_smith"}}]});
    for round in 0..2 {
        let GmStep::Events(new) = gm_reply(&state, &leaky, "now") else {
            panic!()
        };
        let EncounterEvent::LeakCaught { leaks, withheld } = &new[0] else {
            panic!("{new:?}")
        };
        assert_eq!(leaks[0].place.as_deref(), Some("skill_check_emit.what"));
        assert_eq!(*withheld, round == 1);
        state = push(&mut events, new);
    }
    let Next::Roll(check) = state.next() else {
        panic!("{:?}", state.next())
    };
    assert_eq!(check.what, "to calm her. [withheld]");
}

/// Hidden goals by label and by id, reordered or spelled differently, are leaks.
#[test]
fn a_hidden_goal_by_id_or_in_other_words_is_a_leak() {
    let state = fold(&started(vec![], None)).unwrap();
    for narration in [
        "The crow waits. Maybe you should befriend_the_crow.",
        "BEFRIEND THE CROW, someone whispers.",
        "A name, given to the crow on the chimney, would please it.",
        "Somebody here learns it. Why did the smith let the fire die?",
    ] {
        let GmStep::Events(new) = gm_reply(&state, &json!({"narration": narration}), "now") else {
            panic!()
        };
        assert!(
            matches!(&new[0], EncounterEvent::LeakCaught { .. }),
            "{narration}: {new:?}"
        );
    }
}

/// The mill raid begun, on the mill scene, with Wren played by a person.
fn mill_raid_with_wren() -> Vec<Envelope> {
    let spec = troupe_encounter::check::check(include_str!(
        "../../../../examples/encounters/mill-raid.yaml"
    ))
    .unwrap();
    let scene = include_str!("../../../../examples/mill.scene.yaml").to_string();
    vec![Envelope {
        seq: 0,
        event: EncounterEvent::Started {
            spec: Box::new(spec),
            scene: Some(scene),
            seed: 3,
            seats: vec![seat("wren", "Wren", SeatKind::Person)],
            names: vec![],
            memories: vec![],
            window: 128_000,
            at: "2026-11-24T00:00:00Z".into(),
        },
    }]
}

/// A scene in the log that no longer checks (a file from an older troupe, a damaged log) is
/// the encounter's own error, naming each problem with its line; the GM's turn fails with it.
#[test]
fn a_scene_that_no_longer_checks_names_its_problems() {
    let mut events = mill_raid_with_wren();
    let EncounterEvent::Started { scene, .. } = &mut events[0].event else {
        panic!()
    };
    *scene = Some("scene:\n  goal: 7\n".into());
    let state = fold(&events).unwrap();
    let Err(err) = troupe_encounter::turn::scene(&state) else {
        panic!("the scene checked")
    };
    let troupe_encounter::Error::Scene { problems } = &err;
    assert!(!problems.is_empty());
    let said = err.to_string();
    assert!(
        said.starts_with("the encounter's scene no longer checks: "),
        "{said}"
    );
    for p in problems {
        assert!(said.contains(&p.to_string()), "{said}");
    }
    let calm = json!({"narration": "Rain on the road.", "tools": []});
    let GmStep::Failed(why) = gm_reply(&state, &calm, "now") else {
        panic!()
    };
    assert_eq!(why, [said]);
}

/// Issue 33: with a scene, the engine holds the truth. A narration that tells a defeat the
/// engine did not apply is sent back like a leak, and withheld if it comes back the same.
#[test]
fn a_narrated_effect_the_scene_engine_did_not_apply_is_sent_back() {
    let mut events = mill_raid_with_wren();
    let mut state = fold(&events).unwrap();
    let dead = json!({"narration": "Rain on the road. Vesk the smuggler falls dead in the yard.", "tools": []});
    for round in 0..2 {
        let GmStep::Events(new) = gm_reply(&state, &dead, "now") else {
            panic!()
        };
        let EncounterEvent::LeakCaught { leaks, withheld } = &new[0] else {
            panic!("{new:?}")
        };
        assert_eq!(
            leaks[0].kind,
            troupe_encounter::leaks::SecretKind::NotInScene
        );
        assert!(
            leaks[0].detail.contains("9/9 hit points"),
            "{}",
            leaks[0].detail
        );
        assert_eq!(*withheld, round == 1);
        state = push(&mut events, new);
    }
    assert_eq!(state.public, ["GM: Rain on the road. [withheld]"]);
    let calm = json!({"narration": "Vesk the smuggler watches the yard.", "tools": []});
    let GmStep::Events(new) = gm_reply(&state, &calm, "now") else {
        panic!()
    };
    assert!(
        matches!(&new[0], EncounterEvent::Narrated { .. }),
        "{new:?}"
    );
}

/// Issue 33: positions, items and clocks too. A narration that moves Old Tam into the loft, hands
/// him Wren's tonic, or sounds the alarm that the engine has at 0/6 is sent back.
#[test]
fn a_narrated_move_item_or_clock_the_scene_engine_did_not_make_is_sent_back() {
    let events = mill_raid_with_wren();
    let state = fold(&events).unwrap();
    for (told, detail) in [
        (
            "Rain falls. Old Tam climbs into the hay loft.",
            "has Old Tam in the mill yard",
        ),
        ("Old Tam pockets the bitter tonic.", "carries none"),
        ("The alarm sounds over the mill.", "stands at 0/6"),
    ] {
        let reply = json!({"narration": told, "tools": []});
        let GmStep::Events(new) = gm_reply(&state, &reply, "now") else {
            panic!()
        };
        let EncounterEvent::LeakCaught { leaks, .. } = &new[0] else {
            panic!("{told}: {new:?}")
        };
        assert_eq!(
            leaks[0].kind,
            troupe_encounter::leaks::SecretKind::NotInScene
        );
        assert!(
            leaks[0].detail.contains(detail),
            "{told}: {}",
            leaks[0].detail
        );
    }
}

#[test]
fn a_reply_that_resolves_a_goal_may_name_it() {
    let state = fold(&started(vec![], None)).unwrap();
    let reply = json!({"narration": "The forge burns again, with the smith's blessing.",
        "tools": [{"tool": "encounter_resolve", "args": {"goal": "relight_forge", "summary": "Lit."}}]});
    let GmStep::Events(new) = gm_reply(&state, &reply, "2026-11-24T10:00:00Z") else {
        panic!()
    };
    assert!(matches!(&new[1], EncounterEvent::Resolved { file, .. }
        if file == "summaries/smithy-of-the-cold-forge-2026-11-24T10-00-00Z.txt"));
}

proptest! {
    /// No NPC memory, GM note, hidden goal or DC ever reaches a player's prompt, whatever the
    /// secret says; and the GM's prompt carries each of them.
    #[test]
    fn secrets_never_reach_a_players_prompt(
        memory in "[A-Za-z]{4,9}( [A-Za-z]{3,9}){5,10}",
        note in "[A-Za-z]{4,9}( [A-Za-z]{3,9}){5,10}",
    ) {
        let mems = vec![NpcMemory { npc: "smith".into(), lines: vec![memory.clone()] }];
        let mut events = started(mems, Some(note.clone()));
        let state = push(&mut events, vec![
            EncounterEvent::Narrated { text: "The forge is cold.".into(), facts: vec![] },
            EncounterEvent::PlayerActed { seat: "p1".into(), text: "I wave".into() },
        ]);
        let gm = shown(&gm_messages(embedded(), &state).unwrap().messages);
        prop_assert!(gm.contains(&memory) && gm.contains(note.trim()));
        for seat in 0..state.seats.len() {
            let prompt = shown(&player_prompt(&state, seat));
            prop_assert!(!prompt.contains(&memory));
            prop_assert!(!prompt.contains(note.trim()));
            for goal in state.spec.goals() {
                prop_assert!(!prompt.contains(&goal.label));
            }
            prop_assert!(!prompt.contains("DC"));
            prop_assert!(!prompt.contains("persona"));
        }
    }
}

/// The AI player's prompt at seat `index`, made of its seat's view as the table makes it.
fn player_prompt(state: &State, index: usize) -> Vec<(troupe_encounter::budget::Role, String)> {
    let view = player_view(state, &state.seats[index].id).expect("a seat");
    player_messages(embedded(), &view).expect("the prompt renders")
}
