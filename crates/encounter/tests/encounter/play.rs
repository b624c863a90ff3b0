//! The encounter's pure parts together: prompts (snapshots), what a GM reply does, the fold's
//! next step, and the secrets that never reach a player's prompt (property-tested).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::json;
use troupe_encounter::log::{
    EncounterEvent, Envelope, Next, NpcMemory, Seat, SeatKind, State, fold, undo_point,
};
use troupe_encounter::names::{Drawn, Origin};
use troupe_encounter::prompt::{gm_messages, player_messages};
use troupe_encounter::turn::{GmStep, gm_reply};

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
    let assembled = gm_messages(&state).unwrap();
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
    insta::assert_snapshot!(shown(&player_messages(&state, 1).unwrap()));
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
        let gm = shown(&gm_messages(&state).unwrap().messages);
        prop_assert!(gm.contains(&memory) && gm.contains(note.trim()));
        for seat in 0..state.seats.len() {
            let prompt = shown(&player_messages(&state, seat).unwrap());
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
