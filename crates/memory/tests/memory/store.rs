//! The memory rules, checked through the store as the engine and the CLI use it.

use troupe_memory::extract::{self, Moment};
use troupe_memory::{
    EntityKind, Episode, GameTime, MemoryStore, MemoryType, NewFact, Query, Reader, Scope, Source,
};

fn at(session: u32, turn: u32) -> GameTime {
    GameTime {
        session,
        turn,
        day: Some(session * 5),
    }
}

fn fact(text: &str, scope: Scope, source: Source, t: GameTime, slot: Option<&str>) -> NewFact {
    NewFact {
        text: text.to_string(),
        scope,
        source,
        memory_type: MemoryType::Semantic,
        importance: 0.5,
        at: t,
        speaker: "gm".into(),
        episode_ids: vec![format!("s{}-t{}", t.session, t.turn)],
        entities: vec![("Galvin".into(), EntityKind::Npc)],
        slot: slot.map(str::to_string),
    }
}

fn ask(store: &MemoryStore, text: &str, reader: Reader, now: GameTime) -> Vec<String> {
    store
        .search(&Query::new(text, reader, now))
        .unwrap_or_default()
        .into_iter()
        .map(|h| h.fact.text)
        .collect()
}

#[test]
fn nothing_known_is_an_empty_answer_not_an_invention() {
    let mut m = MemoryStore::in_memory().unwrap();
    assert!(ask(&m, "What do we know about Galvin?", Reader::Party, at(1, 1)).is_empty());
    m.store(
        &[],
        &[fact(
            "The reactor on the Raptor is leaking.",
            Scope::Party,
            Source::Gm,
            at(1, 1),
            None,
        )],
    )
    .unwrap();
    assert!(ask(&m, "Who is Zorgon?", Reader::Party, at(2, 1)).is_empty());
}

#[test]
fn gm_contradiction_closes_the_old_fact_and_logs_both_sources() {
    let mut m = MemoryStore::in_memory().unwrap();
    let slot = Some("galvin/location");
    m.store(
        &[],
        &[fact(
            "Galvin is hiding on Port Meridian.",
            Scope::Player("alex".into()),
            Source::Player,
            at(1, 2),
            slot,
        )],
    )
    .unwrap();
    let out = m
        .store(
            &[],
            &[fact(
                "Galvin has fled to the Crimson Nebula.",
                Scope::Party,
                Source::Gm,
                at(2, 1),
                slot,
            )],
        )
        .unwrap();
    assert_eq!(out[0].conflicts.len(), 1);
    let c = &m.conflicts().unwrap()[0];
    assert_eq!((c.old_source, c.new_source), (Source::Player, Source::Gm));
    assert_eq!(c.resolution, "superseded");
    let now = ask(
        &m,
        "Where is Galvin?",
        Reader::Player("alex".into()),
        at(3, 1),
    );
    assert_eq!(now, vec!["Galvin has fled to the Crimson Nebula."]);
    // As the memory stood after session 1, the old belief was still held.
    let mut q = Query::new("Where is Galvin?", Reader::Player("alex".into()), at(3, 1));
    q.at_session = Some(1);
    let then: Vec<String> = m
        .search(&q)
        .unwrap()
        .into_iter()
        .map(|h| h.fact.text)
        .collect();
    assert_eq!(then, vec!["Galvin is hiding on Port Meridian."]);
}

#[test]
fn a_character_cannot_overrule_the_gm() {
    let mut m = MemoryStore::in_memory().unwrap();
    let slot = Some("galvin/attitude");
    m.store(
        &[],
        &[fact(
            "Galvin is loyal to the Consortium.",
            Scope::Party,
            Source::Gm,
            at(1, 1),
            slot,
        )],
    )
    .unwrap();
    let out = m
        .store(
            &[],
            &[fact(
                "Galvin secretly works for Zorgon.",
                Scope::Character("alex".into()),
                Source::Character,
                at(1, 2),
                slot,
            )],
        )
        .unwrap();
    assert_eq!(out[0].conflicts[0].resolution, "kept_old");
    let seen = ask(
        &m,
        "Galvin loyal Zorgon",
        Reader::Character("alex".into()),
        at(1, 3),
    );
    assert_eq!(seen, vec!["Galvin is loyal to the Consortium."]);
    // Player memory beats character memory the same way.
    let slot = Some("vault/code");
    m.store(
        &[],
        &[fact(
            "The vault code is 4471.",
            Scope::Player("bea".into()),
            Source::Player,
            at(2, 1),
            slot,
        )],
    )
    .unwrap();
    let out = m
        .store(
            &[],
            &[fact(
                "The vault code is 1174.",
                Scope::Player("bea".into()),
                Source::Character,
                at(2, 2),
                slot,
            )],
        )
        .unwrap();
    assert_eq!(out[0].conflicts[0].resolution, "kept_old");
}

#[test]
fn player_only_knowledge_never_reaches_a_character_or_another_agent() {
    let mut m = MemoryStore::in_memory().unwrap();
    m.store(
        &[],
        &[
            fact(
                "Galvin is a Zorgon spy.",
                Scope::Player("alex".into()),
                Source::Player,
                at(1, 1),
                None,
            ),
            fact(
                "Galvin sold us fuel.",
                Scope::Party,
                Source::Gm,
                at(1, 1),
                None,
            ),
            fact(
                "Galvin frightens me.",
                Scope::Character("bea".into()),
                Source::Character,
                at(1, 1),
                None,
            ),
        ],
    )
    .unwrap();
    let q = "What about Galvin?";
    let alex_player = ask(&m, q, Reader::Player("alex".into()), at(1, 2));
    assert!(alex_player.contains(&"Galvin is a Zorgon spy.".to_string()));
    assert!(!alex_player.contains(&"Galvin frightens me.".to_string()));
    for reader in [
        Reader::Character("alex".into()),
        Reader::Player("bea".into()),
        Reader::Character("bea".into()),
        Reader::Party,
    ] {
        let seen = ask(&m, q, reader.clone(), at(1, 2));
        assert!(
            !seen.iter().any(|t| t.contains("spy")),
            "{reader:?}: {seen:?}"
        );
        assert!(
            seen.contains(&"Galvin sold us fuel.".to_string()),
            "{reader:?}"
        );
    }
    assert!(
        ask(&m, q, Reader::Character("bea".into()), at(1, 2))
            .contains(&"Galvin frightens me.".to_string())
    );
}

#[test]
fn hits_carry_confidence_time_source_and_episodes() {
    let mut m = MemoryStore::in_memory().unwrap();
    m.store(
        &[],
        &[
            fact(
                "Galvin owes us a favour.",
                Scope::Party,
                Source::Gm,
                at(2, 4),
                None,
            ),
            fact(
                "Galvin seemed nervous.",
                Scope::Player("alex".into()),
                Source::Player,
                at(2, 5),
                None,
            ),
        ],
    )
    .unwrap();
    let hits = m
        .search(&Query::new(
            "Galvin",
            Reader::Player("alex".into()),
            at(5, 1),
        ))
        .unwrap();
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert_eq!(
            h.formed_at,
            format!(
                "3 sessions ago (session 2), turn {}, day 10",
                h.fact.at.turn
            )
        );
        assert!(!h.fact.episode_ids.is_empty());
        match h.fact.source {
            Source::Gm => {
                assert_eq!(h.confidence, 1.0);
                assert_eq!(h.source, "session 2 GM narration");
            }
            _ => assert!(h.confidence > 0.7 && h.confidence < 0.9, "{}", h.confidence),
        }
    }
}

#[test]
fn questions_about_a_time_find_that_time() {
    let mut m = MemoryStore::in_memory().unwrap();
    let eps: Vec<(Episode, Source, Moment)> = (1..=6)
        .map(|s| {
            (
                Episode {
                    id: format!("s{s}"),
                    session: s,
                    turn: 1,
                    day: Some(s * 10),
                    timestamp: String::new(),
                    speaker: "gm".into(),
                    text: format!("The crew repaired hull section {s} while drifting."),
                    scope: Scope::Party,
                },
                Source::Gm,
                Moment::Narration,
            )
        })
        .collect();
    extract::store_episodes(&mut m, &eps).unwrap();
    let hits = m
        .search(&Query::new(
            "What did we repair last session?",
            Reader::Party,
            at(6, 2),
        ))
        .unwrap();
    assert_eq!(hits[0].fact.episode_ids, vec!["s5"]);
    let hits = m
        .search(&Query::new(
            "What was repaired on day 30?",
            Reader::Party,
            at(6, 2),
        ))
        .unwrap();
    assert_eq!(hits[0].fact.episode_ids, vec!["s3"]);
}

#[test]
fn aliases_resolve_descriptions_to_one_entity() {
    let mut m = MemoryStore::in_memory().unwrap();
    let ep = |id: &str, turn, text: &str| {
        (
            Episode {
                id: id.into(),
                session: 1,
                turn,
                day: None,
                timestamp: String::new(),
                speaker: "gm".into(),
                text: text.into(),
                scope: Scope::Party,
            },
            Source::Gm,
            Moment::Narration,
        )
    };
    extract::store_episodes(
        &mut m,
        &[
            ep(
                "e1",
                1,
                "At the dock you meet @Galvin, the old merchant, who eyes your ship.",
            ),
            ep(
                "e2",
                2,
                "Later the crew buys rations at a different stall from Pell.",
            ),
        ],
    )
    .unwrap();
    let ents = m.entities().unwrap();
    let galvin = ents.iter().find(|e| e.name == "Galvin").unwrap();
    assert!(
        galvin.aliases.contains(&"old merchant".to_string()),
        "{galvin:?}"
    );
    assert_eq!(galvin.kind, EntityKind::Npc);
    let hits = m
        .search(&Query::new("the old merchant", Reader::Party, at(2, 1)))
        .unwrap();
    assert_eq!(hits[0].fact.episode_ids, vec!["e1"]);
}

#[test]
fn storing_again_changes_nothing() {
    let mut m = MemoryStore::in_memory().unwrap();
    let f = fact(
        "Galvin sold us fuel.",
        Scope::Party,
        Source::Gm,
        at(1, 1),
        None,
    );
    assert!(m.store(&[], std::slice::from_ref(&f)).unwrap()[0].inserted);
    assert!(!m.store(&[], &[f]).unwrap()[0].inserted);
    assert_eq!(m.counts().unwrap().facts, 1);
}

#[test]
fn import_then_export_round_trips_every_episode() {
    let dir = tempfile::tempdir().unwrap();
    let text = (1..=50)
        .map(|i| {
            format!(
                "{{\"id\":\"n{i}\",\"session\":{},\"timestamp\":\"2026-01-0{}T10:00:00Z\",\"speaker\":\"{}\",\"text\":\"Note {i}: Captain Rhee traded {i} crates with @Galvin.\"}}",
                i / 10 + 1,
                i % 9 + 1,
                if i % 2 == 0 { "gm" } else { "alex" }
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let eps = extract::read_import(&text, "notes.jsonl").unwrap();
    let db = dir.path().join("campaign.db");
    {
        let mut m = MemoryStore::open(&db).unwrap();
        assert_eq!(extract::import(&mut m, &eps).unwrap(), 50);
        // Importing the same file twice adds nothing.
        assert_eq!(extract::import(&mut m, &eps).unwrap(), 0);
    }
    let m = MemoryStore::open(&db).unwrap();
    let lines = extract::export(&m).unwrap();
    let episodes: Vec<Episode> = lines
        .iter()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["type"] == "episode").then(|| serde_json::from_value(v).ok())?
        })
        .collect();
    assert_eq!(episodes, eps);
    let facts = lines
        .iter()
        .filter(|l| l.contains("\"type\":\"fact\""))
        .count();
    assert_eq!(facts, 50);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"type\":\"entity\"") && l.contains("Galvin"))
    );
    // A second store importing the export's episodes holds the same graph.
    let mut again = MemoryStore::in_memory().unwrap();
    extract::import(&mut again, &episodes).unwrap();
    assert_eq!(again.counts().unwrap(), m.counts().unwrap());
}

#[test]
fn forgetting_undone_turns_reopens_what_they_closed() {
    let mut m = MemoryStore::in_memory().unwrap();
    let slot = Some("galvin/location");
    m.store(
        &[],
        &[fact(
            "Galvin is on Port Meridian.",
            Scope::Party,
            Source::Gm,
            at(1, 1),
            slot,
        )],
    )
    .unwrap();
    m.store(
        &[],
        &[fact(
            "Galvin left for the Nebula.",
            Scope::Party,
            Source::Gm,
            at(1, 4),
            slot,
        )],
    )
    .unwrap();
    assert_eq!(m.counts().unwrap().valid_facts, 1);
    assert_eq!(m.forget_from(1, 3).unwrap(), 1);
    let c = m.counts().unwrap();
    assert_eq!((c.facts, c.valid_facts, c.conflicts), (1, 1, 0));
    assert_eq!(
        ask(&m, "Where is Galvin?", Reader::Party, at(1, 5)),
        vec!["Galvin is on Port Meridian."]
    );
    assert!(ask(&m, "Nebula", Reader::Party, at(1, 5)).is_empty());
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use troupe_memory::{Rememberer, corruption_probability};

    fn scope_of(i: u8) -> Scope {
        let agents = ["alex", "bea", "cy"];
        match i % 7 {
            0 => Scope::Party,
            n if n <= 3 => Scope::Player(agents[(n - 1) as usize].into()),
            n => Scope::Character(agents[(n - 4) as usize].into()),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever is stored, a reader gets back only its own scopes: no player-only fact
        /// reaches any character, and no agent's memory reaches another agent.
        #[test]
        fn readers_see_only_their_scopes(scopes in proptest::collection::vec(any::<u8>(), 1..30), who in 0u8..7) {
            let mut m = MemoryStore::in_memory().unwrap();
            let facts: Vec<NewFact> = scopes.iter().enumerate().map(|(i, s)| {
                fact(&format!("Galvin secret number {i} about the reactor."), scope_of(*s), Source::Player, at(1, i as u32 + 1), None)
            }).collect();
            m.store(&[], &facts).unwrap();
            let reader = match who {
                0 => Reader::Party,
                1 => Reader::Player("alex".into()),
                2 => Reader::Player("bea".into()),
                3 => Reader::Character("alex".into()),
                4 => Reader::Character("bea".into()),
                5 => Reader::Character("cy".into()),
                _ => Reader::Player("cy".into()),
            };
            let mut q = Query::new("Galvin reactor secret", reader.clone(), at(2, 1));
            q.top_k = 100;
            for h in m.search(&q).unwrap() {
                prop_assert!(reader.may_see(&h.fact.scope), "{reader:?} saw {:?}", h.fact.scope);
                if let Reader::Character(_) = reader {
                    prop_assert!(!matches!(h.fact.scope, Scope::Player(_)));
                }
            }
        }

        #[test]
        fn corruption_probability_stays_within_0_and_095(
            detail in 0.0f64..=1.0, emo in 0.0f64..=1.0, base in 0.0f64..=1.0,
            days in 0u32..100_000, importance in -1.0f64..2.0, rehearsals in 0u32..100, strength in -1.0f64..2.0,
        ) {
            let who = Rememberer { detail_oriented: detail, emotional_memory: emo, base_decay_rate: base };
            let p = corruption_probability(&who, days, importance, rehearsals, strength);
            prop_assert!((0.0..=0.95).contains(&p), "{p}");
        }
    }
}
