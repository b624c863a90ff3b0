#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The write hook: a mirror sees every row a write changed, ids included, and a write it
//! refuses is rolled back.

use std::sync::{Arc, Mutex};

use troupe_memory::{
    Changes, EntityKind, Error, GameTime, MemoryMirror, MemoryStore, MemoryType, NewFact, Reader,
    RecallKey, Scope, Source,
};

#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<Changes>>>,
    refuse: Arc<Mutex<bool>>,
}

impl MemoryMirror for Recorder {
    fn apply(&mut self, changes: &Changes) -> Result<(), String> {
        if *self.refuse.lock().unwrap() {
            return Err("server down".into());
        }
        self.seen.lock().unwrap().push(changes.clone());
        Ok(())
    }
    fn describe(&self) -> String {
        "the recorder".into()
    }
}

fn fact(text: &str, source: Source, turn: u32) -> NewFact {
    NewFact {
        text: text.into(),
        scope: Scope::Party,
        source,
        memory_type: MemoryType::Semantic,
        importance: 0.5,
        at: GameTime {
            session: 1,
            turn,
            day: None,
        },
        speaker: "gm".into(),
        episode_ids: vec![format!("e{turn}")],
        entities: vec![("Galvin".into(), EntityKind::Npc)],
        slot: Some("dock/location".into()),
    }
}

#[test]
fn the_mirror_gets_every_changed_row_with_its_id() {
    let mut m = MemoryStore::in_memory().unwrap();
    let rec = Recorder::default();
    m.attach_mirror(Box::new(rec.clone()));
    let first = m
        .store(&[], &[fact("The dock is at Vega.", Source::Gm, 1)])
        .unwrap();
    let second = m
        .store(&[], &[fact("The dock is at Luna.", Source::Gm, 2)])
        .unwrap();
    let seen = rec.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    // The first write: the fact, linked to its new entity.
    let u = &seen[0].upserts;
    assert_eq!(
        u.facts.iter().map(|f| f.id).collect::<Vec<_>>(),
        [first[0].id]
    );
    assert_eq!(u.entities.len(), 1);
    assert_eq!(u.facts[0].entities, [u.entities[0].id]);
    // The second closed the first: both facts are sent as they now stand, with the conflict.
    let u = &seen[1].upserts;
    let closed = u.facts.iter().find(|f| f.id == first[0].id).unwrap();
    assert_eq!(closed.invalidated_by, Some(second[0].id));
    assert_eq!(closed.invalid_turn, Some(2));
    assert_eq!(u.conflicts.len(), 1);
    // Forgetting turn 2 deletes its fact and conflict and reopens the first.
    m.forget_from(1, 2).unwrap();
    let last = rec.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last.deleted.facts, [second[0].id]);
    assert_eq!(last.deleted.conflicts.len(), 1);
    assert_eq!(last.upserts.facts[0].invalidated_by, None);
}

#[test]
fn a_write_the_mirror_refuses_is_rolled_back() {
    let mut m = MemoryStore::in_memory().unwrap();
    let rec = Recorder::default();
    m.attach_mirror(Box::new(rec.clone()));
    m.store(&[], &[fact("The dock is at Vega.", Source::Gm, 1)])
        .unwrap();
    let id = m.facts(&Reader::All, true).unwrap()[0].id;
    *rec.refuse.lock().unwrap() = true;
    let err = m
        .store(&[], &[fact("The dock is at Luna.", Source::Gm, 2)])
        .unwrap_err();
    assert!(matches!(err, Error::Mirror { .. }));
    assert_eq!(
        err.to_string(),
        "campaign memory on the recorder: server down"
    );
    let key = RecallKey {
        session: 1,
        turn: 3,
        reader: "ada",
    };
    assert!(m.rehearse_once(&[id], &key).is_err());
    // Nothing of the refused writes stayed: one fact, still valid, never rehearsed.
    let facts = m.facts(&Reader::All, true).unwrap();
    assert_eq!(facts.len(), 1);
    assert_eq!((facts[0].invalid_at, facts[0].rehearsals), (None, 0));
    assert_eq!(m.counts().unwrap().conflicts, 0);
    // Back up: the same write goes through, and the mirror hears of it once, complete.
    *rec.refuse.lock().unwrap() = false;
    m.store(&[], &[fact("The dock is at Luna.", Source::Gm, 2)])
        .unwrap();
    let last = rec.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last.upserts.facts.len(), 2);
    assert_eq!(last.upserts.conflicts.len(), 1);
}

#[test]
fn a_snapshot_restores_with_its_ids() {
    let mut m = MemoryStore::in_memory().unwrap();
    m.store(&[], &[fact("The dock is at Vega.", Source::Gm, 1)])
        .unwrap();
    m.store(&[], &[fact("The dock is at Luna.", Source::Gm, 2)])
        .unwrap();
    m.forget_from(1, 2).unwrap();
    m.store(&[], &[fact("The dock is at Mars.", Source::Gm, 3)])
        .unwrap();
    let snap = m.snapshot().unwrap();
    let mut copy = MemoryStore::in_memory().unwrap();
    copy.restore(&snap).unwrap();
    assert_eq!(copy.snapshot().unwrap(), snap);
    assert_eq!(
        copy.facts(&Reader::All, true).unwrap(),
        m.facts(&Reader::All, true).unwrap()
    );
    // Restoring into a memory that holds something would mix two memories.
    assert!(copy.restore(&snap).is_err());
}
