#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzz target: session logs (`logs/session-N.jsonl`) as the engine reads them back (resume,
//! replay, transcript) and as the research report reads them (stats, flags, audit, HTML).
//! Real logs of the demo and the party example, with events edited, removed or repeated and
//! bytes spliced in or cut.

use std::path::Path;
use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::Value;
use troupe_fuzz::{ByteEdit, Edit, apply, apply_bytes, byte_edits, config_with, edits};
use troupe_lasers::{Session, next, read_log, render_markdown};
use troupe_report::{Roster, audit, flags, load_session, metrics, render_html, render_stats};

/// Event types and fields of the log, so edits make events the readers still look into.
const VOCAB: &[&str] = &[
    "event_type",
    "gm_narration",
    "character_action",
    "dice_roll",
    "verdict",
    "model_call",
    "phase_started",
    "phase_completed",
    "session_started",
    "agent",
    "turn",
    "seq",
    "session",
    "phase",
    "text",
    "faces",
    "successes",
    "alex",
    "zara",
    "gm",
    "*",
    "lasers",
    "feelings",
];

/// The logs of `troupe play` on the shipped demo and party examples (see data/README.md).
static LOGS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    ["demo.session-1.jsonl", "party.session-1.jsonl"]
        .iter()
        .map(|f| {
            let lines = std::fs::read_to_string(dir.join(f)).unwrap();
            Value::Array(
                lines
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect(),
            )
        })
        .collect()
});

/// Write the edited log into a campaign directory and read it both ways.
fn read_edited(which: usize, edits: &[Edit], bytes: &[ByteEdit]) -> Result<(), TestCaseError> {
    let mut log = LOGS[which % LOGS.len()].clone();
    let log = &mut log;
    apply(log, edits);
    let mut text: Vec<u8> = match log {
        Value::Array(events) => events
            .iter()
            .flat_map(|e| format!("{e}\n").into_bytes())
            .collect(),
        other => format!("{other}\n").into_bytes(),
    };
    apply_bytes(&mut text, bytes);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    let path = dir.path().join("logs").join("session-1.jsonl");
    std::fs::write(&path, &text).unwrap();

    // The engine: resume folds the events, the machine says what comes next, the transcript.
    if let Ok(events) = read_log(&path) {
        let mut session = Session::new("fuzz", 1);
        for e in &events {
            session.apply(e);
            let _ = next(&session);
        }
        let _ = render_markdown(&events);
    }
    // The report: every instrument over the same events.
    match load_session(dir.path(), 1, true) {
        Ok(events) => {
            let m = metrics(&events);
            let a = audit(&events);
            let f = flags(&events);
            let roster = Roster::from_events(&events);
            let _ = render_stats("session 1", &m, &a, &f, &roster);
            let _ = serde_json::to_string(&m);
            let _ = render_html("session 1", &events);
        }
        Err(e) => {
            let message = e.to_string();
            prop_assert!(message.contains("session-1.jsonl"), "{}", message);
        }
    }
    Ok(())
}

proptest! {
    // Each input is a whole session read, folded, measured and rendered: 64 in the normal suite.
    #![proptest_config(config_with(64))]

    #[test]
    fn session_log_never_panics(which in 0usize..2, edits in edits(VOCAB, 4), bytes in byte_edits(VOCAB)) {
        read_edited(which, &edits, &bytes)?;
    }
}

#[test]
fn the_recorded_logs_read_unedited() {
    for which in 0..2 {
        read_edited(which, &[], &[]).unwrap();
    }
}
