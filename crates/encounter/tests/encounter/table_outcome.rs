//! What an encounter run leaves outside its log, in-process on a real `campaign.db`: the NPC
//! with a memory key remembers the run next time, a second write (a resume after a crash) adds
//! nothing, the summary file is written once, the tally counts every start.

use troupe_encounter::Spec;
use troupe_encounter::table::outcome::{
    Outcome, bump_tally, cast, read_tally, remember_of, write_summary_of,
};
use troupe_memory::MemoryStore;

fn smithy() -> Spec {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/encounters/smithy.yaml"),
    )
    .unwrap();
    troupe_encounter::check::check(&text).unwrap()
}

fn outcome() -> Outcome {
    Outcome {
        goal: "forge_relit".into(),
        label: "The forge burns again".into(),
        summary: "Mara worked the bellows until the coals caught.".into(),
        players: "Mara (Wren)".into(),
        round: 4,
    }
}

#[test]
fn the_smith_remembers_a_run_once_and_its_summary_and_tally_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let spec = smithy();
    let mut memory = MemoryStore::open(&dir.path().join("campaign.db")).unwrap();
    let (names, before) = cast(&memory, &spec, 7).unwrap();
    assert!(before.is_empty(), "{before:?}");

    let at = "2026-11-26T10:00:00Z";
    remember_of(&mut memory, &spec, &names, &outcome(), 1, at).unwrap();
    remember_of(&mut memory, &spec, &names, &outcome(), 1, at).unwrap();
    assert_eq!(
        memory.episodes().unwrap().len(),
        1,
        "a second write adds nothing"
    );

    let reopened = MemoryStore::open(&dir.path().join("campaign.db")).unwrap();
    let (_, after) = cast(&reopened, &spec, 8).unwrap();
    let smith: Vec<&String> = after
        .iter()
        .filter(|m| m.npc == "smith")
        .flat_map(|m| &m.lines)
        .collect();
    assert!(
        smith.iter().any(|l| l.contains("The forge burns again")),
        "{after:?}"
    );
    assert!(
        after.iter().all(|m| m.npc == "smith"),
        "only the NPC with a memory key remembers: {after:?}"
    );

    let file = "summaries/smithy-1.txt";
    write_summary_of(dir.path(), file, &spec, &outcome(), at).unwrap();
    let written = std::fs::read_to_string(dir.path().join(file)).unwrap();
    assert!(
        written.contains("Outcome: forge_relit (The forge burns again)"),
        "{written}"
    );
    let mut other = outcome();
    other.summary = "something else".into();
    write_summary_of(dir.path(), file, &spec, &other, at).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(file)).unwrap(),
        written
    );

    bump_tally(dir.path(), &spec.id, at).unwrap();
    bump_tally(dir.path(), &spec.id, "2026-11-26T11:00:00Z").unwrap();
    let tally = read_tally(dir.path()).unwrap();
    assert_eq!(tally[&spec.id].runs, 2);
    assert_eq!(tally[&spec.id].last_run, "2026-11-26T11:00:00Z");
}
