//! Every game's recorded logs read through `Known` as their own typed events, from the games'
//! pure cores alone; a kind a newer troupe writes in the middle reads as unknown and the rows
//! around it read as before.

use serde_json::{Value, json};

use crate::support::{LASERS_LOGS, rows};
use troupe_report::Known;

const ENCOUNTER_LOG: &str =
    include_str!("../../../export/tests/data/encounter-two-ai-rounds.jsonl");

fn newer_kind() -> Value {
    json!({"seq": 999, "timestamp": "2026-11-24T02:00:00Z", "session_id": "s", "session_number": 1,
        "turn_number": 1, "phase": null, "event_type": "weather_changed", "sky": "red"})
}

#[test]
fn recorded_lasers_sessions_read_whole_as_typed_events() {
    for log in LASERS_LOGS {
        for row in rows(log) {
            match Known::<troupe_lasers::Envelope>::read(&row) {
                Known::Event(env) => assert_eq!(env.seq, row["seq"].as_u64().unwrap()),
                other => panic!("{row}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_newer_kind_in_a_lasers_session_reads_as_unknown_and_the_rest_as_before() {
    let mut log = rows(LASERS_LOGS[0]);
    let middle = log.len() / 2;
    log.insert(middle, newer_kind());
    let read: Vec<Known<troupe_lasers::Envelope>> = Known::read_all(&log);
    match &read[middle] {
        Known::Unknown { event_type, body } => {
            assert_eq!(
                (event_type.as_str(), body),
                ("weather_changed", &newer_kind())
            );
        }
        other => panic!("{other:?}"),
    }
    let known = read.iter().filter(|k| k.event().is_some()).count();
    assert_eq!(known, log.len() - 1);
}

/// A known kind with a field this build cannot read is malformed (with serde's reason), not
/// unknown: a reader must not count on without it unseen.
#[test]
fn a_damaged_known_kind_in_a_lasers_session_is_malformed() {
    let mut row = rows(LASERS_LOGS[0])
        .into_iter()
        .find(|r| r["event_type"] == "whisper")
        .unwrap();
    row["scope"] = json!("everyone_at_once");
    match Known::<troupe_lasers::Envelope>::read(&row) {
        Known::Malformed {
            event_type, error, ..
        } => {
            assert_eq!(event_type, "whisper");
            assert!(error.contains("everyone_at_once"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_recorded_encounter_reads_as_typed_events_and_a_newer_kind_as_unknown() {
    let mut log = rows(ENCOUNTER_LOG);
    log.insert(3, json!({"seq": 99, "event_type": "weather_changed"}));
    let read: Vec<Known<troupe_encounter::log::Envelope>> = Known::read_all(&log);
    assert!(matches!(read[3], Known::Unknown { .. }));
    assert!(
        read.iter()
            .enumerate()
            .all(|(i, k)| i == 3 || k.event().is_some())
    );
}
