#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzz target: what a model's reply and a replay file can hold: the JSON finder every reply
//! goes through, and `*.replay.jsonl` files (the shipped ones, edited, with bytes spliced in).

use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use troupe_fuzz::{ByteEdit, Edit, apply, apply_bytes, byte_edits, config, edits, nasty_text};
use troupe_llm::{ReplayModel, extract_json};

/// What wraps JSON in a small model's reply, and the replay file's own words.
const VOCAB: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "```",
    "```json\n",
    "\n```",
    "{\"action\": \"",
    "{\"questions\": []}",
    "null",
    "true",
    "1e999",
    "-",
    "\\u0000",
    "\\ud800",
    "\\",
    "//",
    "agent",
    "purpose",
    "content",
    "*",
    "character_action",
    "clarifying_questions",
];

fn replay_files() -> Vec<Vec<Value>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    [
        "campaign.replay.jsonl",
        "party.replay.jsonl",
        "research.replay.jsonl",
    ]
    .iter()
    .map(|f| {
        std::fs::read_to_string(dir.join(f))
            .unwrap()
            .lines()
            .filter(|l| l.trim_start().starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    })
    .collect()
}

/// Edit one line of a shipped replay file, write it out and read it back.
fn read_edited(
    which: usize,
    line: usize,
    edits: &[Edit],
    bytes: &[ByteEdit],
) -> Result<(), TestCaseError> {
    let mut files = replay_files();
    let n = files.len();
    let lines = &mut files[which % n];
    let count = lines.len();
    apply(&mut lines[line % count], edits);
    let mut text: Vec<u8> = lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    apply_bytes(&mut text, bytes);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.replay.jsonl");
    std::fs::write(&path, &text).unwrap();
    match ReplayModel::from_file(&path) {
        Ok(model) => prop_assert!(
            model.remaining() <= count + 16,
            "{} replies from {} lines",
            model.remaining(),
            count
        ),
        Err(e) => {
            let message = e.to_string();
            prop_assert!(message.contains("edited.replay.jsonl"), "{}", message);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn model_reply_json_finder_never_panics(text in nasty_text(VOCAB, 40)) {
        if let Some(Value::Object(_)) = extract_json(&text) {
            prop_assert!(text.contains('{'), "an object from text with no brace: {:?}", text);
        }
    }

    #[test]
    fn replay_file_never_panics(
        which in 0usize..3,
        line in any::<usize>(),
        edits in edits(VOCAB, 3),
        bytes in byte_edits(VOCAB),
    ) {
        read_edited(which, line, &edits, &bytes)?;
    }
}

#[test]
fn the_shipped_replay_files_read_unedited() {
    for which in 0..3 {
        read_edited(which, 0, &[], &[]).unwrap();
    }
}
