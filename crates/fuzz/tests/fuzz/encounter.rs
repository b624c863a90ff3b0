#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzz target: the encounter GM (seed 003): the spec file as a GM writes it (the shipped
//! examples with nasty text spliced in), and the GM's reply as a model writes it (a valid reply
//! with nasty values put in, fields removed or repeated) read against a table and checked for
//! secrets. Neither may panic; a bad spec gets problems with places inside the text.

use proptest::prelude::*;
use serde_json::{Value, json};
use troupe_encounter::log::{EncounterEvent, Envelope, Seat, SeatKind, fold};
use troupe_fuzz::{Edit, apply, config, edits, nasty_text};

const SMITHY: &str = include_str!("../../../../examples/encounters/smithy.yaml");
const DOCKING: &str = include_str!("../../../../examples/encounters/docking.yaml");

/// Words the spec checker and the reply reader know, so edits reach their checks.
const VOCAB: &[&str] = &[
    "encounterId",
    "title",
    "setting",
    "npcs",
    "goals",
    "skillChecks",
    "randomizable",
    "calm_smith_dc",
    "_dc",
    "_skill",
    "{{smith}}",
    "{{",
    "}}",
    "nameKey",
    "memoryKey",
    "hidden",
    "primary",
    "tools",
    "scene",
    "narration",
    "facts",
    "skill_check_emit",
    "encounter_resolve",
    "context_recall",
    "goal_register",
    "player",
    "what",
    "check",
    "dc",
    "advantage",
    "Mara",
    "p1",
    "relight_forge",
    "summary",
    "DC 14",
    "14",
    "-1",
    "",
    ": ",
    "\n  - ",
    "\n",
];

/// A text with nasty pieces put in at character boundaries chosen by `at`.
fn spliced(text: &str, inserts: &[(usize, String)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for (at, piece) in inserts {
        let i = at % (chars.len() + 1);
        chars.splice(i..i, piece.chars());
    }
    chars.into_iter().collect()
}

fn state() -> troupe_encounter::log::State {
    let spec = troupe_encounter::check::check(SMITHY).unwrap();
    let seat = |id: &str, name: &str| Seat {
        id: id.into(),
        character: name.into(),
        player: name.into(),
        kind: SeatKind::Ai,
        about: String::new(),
    };
    let started = EncounterEvent::Started {
        spec: Box::new(spec),
        scene: None,
        seed: 1,
        seats: vec![seat("p1", "Mara"), seat("alex", "Zara-7")],
        names: Vec::new(),
        memories: Vec::new(),
        window: 4_000,
        at: String::new(),
    };
    fold(&[Envelope {
        seq: 0,
        event: started,
    }])
    .unwrap()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn an_edited_spec_never_panics(
        which in 0usize..2,
        inserts in proptest::collection::vec((any::<usize>(), nasty_text(VOCAB, 6)), 0..6),
    ) {
        let text = spliced([SMITHY, DOCKING][which], &inserts);
        if let Err(problems) = troupe_encounter::check::check(&text) {
            prop_assert!(!problems.is_empty());
            let lines = text.lines().count() as u64 + 1;
            for p in &problems {
                prop_assert!(p.line >= 1 && p.line <= lines, "{p} of {lines} lines");
            }
        }
    }

    #[test]
    fn an_edited_gm_reply_never_panics(edits in edits(VOCAB, 5), text in nasty_text(VOCAB, 12)) {
        let mut reply = json!({
            "narration": text,
            "facts": [{"key": "deal", "value": "work"}],
            "tools": [{"tool": "skill_check_emit",
                       "args": {"player": "Mara", "what": "to calm her", "check": "calm_smith",
                                "advantage": true}}]
        });
        apply(&mut reply, &edits as &[Edit]);
        let state = state();
        let _ = troupe_encounter::turn::gm_reply(&state, &reply, "2026-11-24T00:00:00Z");
        let _ = troupe_encounter::turn::gm_reply(&state, &Value::Null, "");
    }

    #[test]
    fn filling_names_never_panics(text in nasty_text(VOCAB, 20), value in nasty_text(VOCAB, 4)) {
        let drawn = vec![troupe_encounter::names::Drawn {
            key: "smith".into(),
            value,
            origin: troupe_encounter::names::Origin::Fallback,
        }];
        let _ = troupe_encounter::names::fill(&text, &drawn);
    }
}
