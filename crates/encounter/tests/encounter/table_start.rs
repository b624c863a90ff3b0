//! An encounter started in-process on a real campaign directory (issue 29: no `troupe` binary):
//! a d20 run's seats, drawn names, memories and seed in its `started` event, the run in the
//! store; and a Lasers & Feelings spec prepared as a session of the campaign's characters, its
//! outcome written once the session ends.

use std::path::Path;

use troupe_campaign::{CampaignDir, GmSeatKind, SeatTaker};
use troupe_encounter::Spec;
use troupe_encounter::log::{EncounterEvent, SeatKind};
use troupe_encounter::names::Origin;
use troupe_encounter::table::lasers::{ended, prepare};
use troupe_encounter::table::outcome::{Outcome, cast, read_tally, remember_of};
use troupe_encounter::table::start::{
    Begun, Opening, SeatSpec, begin, campaign_in, joining, seats,
};
use troupe_encounter::table::{EncounterError, EncounterStore};
use troupe_engine::Error;
use troupe_lasers::{Envelope, Event, Store};
use troupe_memory::MemoryStore;

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn spec(file: &str) -> Spec {
    let text = std::fs::read_to_string(examples().join("encounters").join(file)).unwrap();
    troupe_encounter::check::check(&text).unwrap()
}

/// A campaign directory holding `file` of the examples as its campaign.json.
fn campaign_dir(file: &str) -> (tempfile::TempDir, CampaignDir) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(examples().join(file), tmp.path().join("campaign.json")).unwrap();
    let dir = CampaignDir::new(tmp.path());
    (tmp, dir)
}

fn mara_and_an_ai() -> Vec<SeatSpec> {
    vec![
        SeatSpec::Person {
            name: Some("Mara".into()),
        },
        SeatSpec::Ai { agent: None },
    ]
}

/// The smith met the party before: what she remembers comes to the next run.
fn a_first_run_remembered(memory: &mut MemoryStore, spec: &Spec) {
    let (names, _) = cast(memory, spec, 1).unwrap();
    let outcome = Outcome {
        goal: "forge_relit".into(),
        label: "The forge burns again".into(),
        summary: "Mara worked the bellows.".into(),
        players: "Mara (Mara)".into(),
        round: 3,
    };
    remember_of(memory, spec, &names, &outcome, 1, "2026-11-26T10:00:00Z").unwrap();
}

#[test]
fn a_run_begins_with_its_seats_names_memories_and_seed_in_the_log() {
    let (_tmp, dir) = campaign_dir("party.json");
    let spec = spec("smithy.yaml");
    let mut memory = MemoryStore::open(&dir.db()).unwrap();
    a_first_run_remembered(&mut memory, &spec);
    let players = mara_and_an_ai();
    let campaign = campaign_in(&dir);
    let opening = |seed| Opening {
        spec: &spec,
        scene: None,
        players: &players,
        seed,
        window: 32_000,
        campaign: campaign.as_ref(),
    };
    let Begun {
        store,
        run,
        unfinished,
    } = begin(&dir, &memory, opening(12)).unwrap();
    assert_eq!((run, unfinished.is_none()), (1, true));

    let events = store.events(run).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let EncounterEvent::Started {
        seed,
        seats,
        names,
        memories,
        window,
        ..
    } = &events[0].event
    else {
        panic!("the first event is not `started`: {:?}", events[0]);
    };
    assert_eq!((*seed, *window), (12, 32_000));
    let who: Vec<(&str, &str, &str, SeatKind)> = (seats.iter())
        .map(|s| {
            (
                s.id.as_str(),
                s.player.as_str(),
                s.character.as_str(),
                s.kind,
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            ("p1", "Mara", "Mara", SeatKind::Person),
            ("alex", "Alex", "Zara-7", SeatKind::Ai),
        ],
        "the person by name, then the campaign file's first AI player"
    );
    assert_eq!(names, &cast(&memory, &spec, 12).unwrap().0);
    let keys: Vec<(&str, Origin)> = names.iter().map(|d| (d.key.as_str(), d.origin)).collect();
    assert_eq!(
        keys,
        [
            ("smith", Origin::Fallback),
            ("factor", Origin::Vocabulary),
            ("tavern", Origin::Vocabulary),
        ]
    );
    let smith = memories.iter().find(|m| m.npc == "smith").unwrap();
    assert!(
        smith
            .lines
            .iter()
            .any(|l| l.contains("The forge burns again")),
        "{memories:?}"
    );

    let reopened = EncounterStore::open(dir.path()).unwrap();
    let stored = reopened.run(run).unwrap().unwrap();
    assert_eq!(
        (stored.spec_id.as_str(), stored.ended),
        (spec.id.as_str(), false)
    );
    assert_eq!(reopened.events(run).unwrap().len(), 1);

    // A second run beside the first, which did not finish: it is named, and both are counted.
    let second = begin(&dir, &memory, opening(13)).unwrap();
    assert_eq!(second.run, 2);
    assert_eq!(second.unfinished.map(|r| r.number), Some(1));
    assert_eq!(read_tally(dir.path()).unwrap()[&spec.id].runs, 2);
}

#[test]
fn an_ai_player_asked_for_by_id_is_seated_once_and_stand_ins_fill_a_table_without_a_file() {
    let (_tmp, dir) = campaign_dir("party.json");
    let campaign = campaign_in(&dir).unwrap();
    let asked = [
        SeatSpec::Ai {
            agent: Some("sam".into()),
        },
        SeatSpec::Ai { agent: None },
    ];
    let seated = seats(&asked, Some(&campaign)).unwrap();
    let ids: Vec<&str> = seated.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["sam", "alex"]);

    let again = joining(
        &[SeatSpec::Ai {
            agent: Some("sam".into()),
        }],
        &seated,
        Some(&campaign),
    );
    assert!(
        matches!(again, Err(EncounterError::AlreadySeated { ref player, .. }) if player == "Sam"),
        "{again:?}"
    );
    let next = joining(&[SeatSpec::Ai { agent: None }], &seated, Some(&campaign)).unwrap();
    assert_eq!(next[0].id, "priya", "the next AI player nobody plays");

    let unknown = [SeatSpec::Ai {
        agent: Some("zed".into()),
    }];
    let err = seats(&unknown, Some(&campaign)).unwrap_err();
    assert!(
        matches!(err, EncounterError::NoSuchAiPlayer(ref a) if a == "zed"),
        "{err:?}"
    );

    let stand_ins = seats(&mara_and_an_ai(), None).unwrap();
    assert_eq!(
        (stand_ins[1].id.as_str(), stand_ins[1].character.as_str()),
        ("ai2", "Ash")
    );
    assert!(matches!(seats(&[], None), Err(EncounterError::NoPlayers)));
}

#[test]
fn a_lasers_and_feelings_spec_is_prepared_as_a_session_and_its_outcome_written_once_it_ends() {
    let (_tmp, dir) = campaign_dir("aigm.json");
    let spec = spec("docking.yaml");
    let mut memory = MemoryStore::open(&dir.db()).unwrap();
    let (campaign, number) = prepare(&dir, &memory, &spec, 7, &mara_and_an_ai()).unwrap();
    assert_eq!(number, 1);
    assert_eq!(campaign.gm.seat, GmSeatKind::Ai);
    let scenario = campaign.gm.scenario.as_ref().unwrap();
    assert!(
        scenario
            .text
            .starts_with("Docking Trouble at Halcyon Ring."),
        "{}",
        scenario.text
    );
    assert!(
        scenario.notes.iter().any(|n| n.contains("Hidden goal")),
        "{:?}",
        scenario.notes
    );
    let taken: Vec<SeatTaker> = campaign.seats.iter().map(|s| s.taken_by).collect();
    assert_eq!(taken, [SeatTaker::Human, SeatTaker::Ai, SeatTaker::Ai]);
    assert_eq!(read_tally(dir.path()).unwrap()[&spec.id].runs, 1);
    let record = dir.path().join("encounter-sessions/session-1.json");
    assert!(record.is_file());

    // Not played yet: nothing to write. Once the session has ended: the summary, the memory.
    assert!(ended(&dir, 1).unwrap().is_none());
    session_ended(dir.path(), 1, "the GM ended the session");
    ended(&dir, 1)
        .unwrap()
        .unwrap()
        .record(&dir, &mut memory)
        .unwrap();
    let summaries: Vec<_> = std::fs::read_dir(dir.path().join("summaries"))
        .unwrap()
        .collect();
    assert_eq!(summaries.len(), 1);
    let text = std::fs::read_to_string(summaries[0].as_ref().unwrap().path()).unwrap();
    assert!(
        text.contains("Session 1 ended: the GM ended the session"),
        "{text}"
    );
    assert_eq!(memory.episodes().unwrap().len(), 1);
    assert!(!record.exists());
    assert!(ended(&dir, 1).unwrap().is_none(), "written once");
}

#[test]
fn a_lasers_and_feelings_spec_needs_the_campaigns_characters() {
    let spec = spec("docking.yaml");
    let empty = tempfile::tempdir().unwrap();
    let dir = CampaignDir::new(empty.path());
    let memory = MemoryStore::open(&dir.db()).unwrap();
    let err = prepare(&dir, &memory, &spec, 7, &mara_and_an_ai()).unwrap_err();
    assert!(
        matches!(
            encounter_error(&err),
            Some(EncounterError::NoCampaignFile { .. })
        ),
        "{err:?}"
    );

    let (_tmp, dir) = campaign_dir("aigm.json");
    let four = vec![SeatSpec::Ai { agent: None }; 4];
    let err = prepare(&dir, &memory, &spec, 7, &four).unwrap_err();
    assert!(
        matches!(
            encounter_error(&err),
            Some(EncounterError::TooManyPlayers {
                asked: 4,
                characters: 3
            })
        ),
        "{err:?}"
    );
    assert!(
        read_tally(dir.path()).unwrap().is_empty(),
        "nothing counted"
    );
}

/// Session `number` in the campaign's store, begun and ended.
fn session_ended(dir: &Path, number: u32, reason: &str) {
    let mut store = Store::open(dir).unwrap();
    store
        .begin_session(number, "s1", "2026-11-26T10:00:00Z", &[])
        .unwrap();
    let end = Envelope {
        seq: 0,
        timestamp: chrono::Utc::now(),
        session_id: "s1".into(),
        session_number: number,
        turn_number: 0,
        phase: None,
        event: Event::SessionEnded {
            reason: reason.into(),
        },
    };
    store.append(number, &[end]).unwrap();
}

/// The encounter's own error inside the engine's, if that is what it is.
fn encounter_error(err: &Error) -> Option<&EncounterError> {
    match err {
        Error::Game(e) => e.downcast_ref::<EncounterError>(),
        _ => None,
    }
}
