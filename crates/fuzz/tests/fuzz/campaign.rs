#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzz target: the campaign file (`campaign.json`), read from disk as a user would give it:
//! the shipped examples with nasty values put in, fields removed or repeated, and bytes
//! spliced in or cut (invalid UTF-8 included).

use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use troupe_fuzz::{ByteEdit, Edit, apply, apply_bytes, byte_edits, config, edits};

/// Field names and values the campaign checker knows, so edits reach its checks.
const VOCAB: &[&str] = &[
    "campaign_name",
    "gm_name",
    "dm_name",
    "party",
    "ship_name",
    "characters",
    "player",
    "character",
    "agent_id",
    "character_id",
    "name",
    "style",
    "role",
    "number",
    "model",
    "provider",
    "replay",
    "openai",
    "anthropic",
    "local",
    "replay_file",
    "Android",
    "Engineer",
    "Pilot",
    "Alien",
    "Hot-Shot",
    "Doctor",
    "Envoy",
    "Explorer",
    "Soldier",
    "zara",
    "alex",
    "",
    " ",
    "0.5",
    "1",
    "7",
    "-1",
];

fn examples() -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    ["campaign.json", "party.json", "party4.json", "local.json"]
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            serde_json::from_str(&text).unwrap()
        })
        .collect()
}

/// Write the edited example to a file and load it; any error must name the file.
fn load_edited(which: usize, edits: &[Edit], bytes: &[ByteEdit]) -> Result<(), TestCaseError> {
    let mut docs = examples();
    let n = docs.len();
    let doc = &mut docs[which % n];
    apply(doc, edits);
    let mut text = serde_json::to_vec_pretty(doc).unwrap();
    apply_bytes(&mut text, bytes);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("campaign.json");
    std::fs::write(&path, &text).unwrap();
    match troupe_campaign::load(&path) {
        Ok(campaign) => {
            let _ = format!("{campaign:?}");
        }
        Err(e) => {
            let message = e.to_string();
            prop_assert!(message.contains("campaign.json"), "{}", message);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn campaign_file_never_panics(
        which in 0usize..4,
        edits in edits(VOCAB, 4),
        bytes in byte_edits(VOCAB),
    ) {
        load_edited(which, &edits, &bytes)?;
    }
}

#[test]
fn the_examples_load_unedited() {
    for which in 0..4 {
        load_edited(which, &[], &[]).unwrap();
    }
}
