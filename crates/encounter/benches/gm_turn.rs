//! The engine's own work for one GM turn with a replayed reply: assemble the GM's prompt within
//! its zones, read and check the reply (tools, secrets) and fold the events it makes. Measured
//! at round 10, 100 and 1,000 of an encounter, so a cost that grows with the session shows.
//! Bar (issue 17): under 1 ms a GM turn; and the whole GM prompt over a 100,000-token history
//! under 5 ms.
//!
//! `cargo bench -p troupe-encounter --bench gm_turn`

#![allow(clippy::panic)]

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use troupe_encounter::log::{EncounterEvent, Envelope, Seat, SeatKind, State, fold};
use troupe_encounter::prompt::{embedded, gm_messages};
use troupe_encounter::turn::{GmStep, gm_reply};

const SMITHY: &str = include_str!("../../../examples/encounters/smithy.yaml");

fn seat(id: &str, name: &str, kind: SeatKind) -> Seat {
    Seat {
        id: id.into(),
        character: name.into(),
        player: name.into(),
        kind,
        about: String::new(),
    }
}

/// An encounter after `rounds` rounds: two players act, the GM answers with ~80 words.
fn state_after(rounds: usize) -> State {
    let spec = troupe_encounter::check::check(SMITHY).unwrap_or_else(|p| panic!("{p:?}"));
    let mut events = vec![EncounterEvent::Started {
        spec: Box::new(spec),
        scene: None,
        seed: 1,
        seats: vec![
            seat("p1", "Mara", SeatKind::Person),
            seat("alex", "Zara-7", SeatKind::Ai),
        ],
        names: Vec::new(),
        memories: Vec::new(),
        window: 128_000,
        at: "2026-11-24T00:00:00Z".into(),
    }];
    let narration = "The smith squints at the ledger, then at the door, where rain drums on \
                     the shutters. The factor coughs and reaches for his hat; the crow on the \
                     chimney shifts its weight. Somewhere a cart wheel creaks in the lane. "
        .repeat(2);
    events.push(EncounterEvent::Narrated {
        text: narration.clone(),
        facts: vec![],
    });
    for r in 0..rounds {
        for who in ["p1", "alex"] {
            events.push(EncounterEvent::PlayerActed {
                seat: who.into(),
                text: format!("round {r}: I look at the ledger's third page and ask about the ink"),
            });
        }
        events.push(EncounterEvent::Narrated {
            text: narration.clone(),
            facts: vec![],
        });
    }
    let envs: Vec<Envelope> = events
        .into_iter()
        .enumerate()
        .map(|(i, event)| Envelope {
            seq: i as u64,
            event,
        })
        .collect();
    fold(&envs).unwrap_or_else(|| panic!("no state"))
}

/// One GM turn on `state` (a copy made outside the timing: the runner folds into its own).
fn gm_turn(mut state: State) -> usize {
    let assembled = gm_messages(embedded(), &state).unwrap_or_else(|e| panic!("{e}"));
    let reply = json!({
        "narration": "The smith sets down her hammer and looks you over. \"Work, then,\" she says.",
        "facts": [{"key": "deal", "value": "work for the forge"}],
        "tools": [{"tool": "skill_check_emit",
                   "args": {"player": "Mara", "what": "to work the bellows", "check": "relight"}}]
    });
    let GmStep::Events(events) = gm_reply(&state, &reply, "2026-11-24T00:00:00Z") else {
        panic!("rejected")
    };
    let seq = state.seq;
    for (i, event) in events.into_iter().enumerate() {
        state.apply(&Envelope {
            seq: seq + 1 + i as u64,
            event,
        });
    }
    assembled.messages.len() + state.history.len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("gm_turn");
    for rounds in [10, 100, 1000] {
        let state = state_after(rounds);
        group.bench_with_input(BenchmarkId::from_parameter(rounds), &state, |b, s| {
            b.iter_batched(
                || s.clone(),
                |s| gm_turn(black_box(s)),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
    // About 100,000 tokens of history: ~560 rounds of ~180 tokens each.
    let big = state_after(560);
    let tokens: usize = big.history.iter().map(|e| e.tokens).sum();
    println!("gm_prompt history: {tokens} tokens");
    c.bench_function("gm_prompt_100k_history", |b| {
        b.iter(|| gm_messages(embedded(), black_box(&big)).map(|a| a.zones.history))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
