//! What the report's tests share: recorded logs and reading their rows.

use serde_json::Value;

/// A log's rows (JSON lines; blank lines skipped).
pub fn rows(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Lasers & Feelings sessions as the table logged them (the fuzzer's seeds and the stalled
/// party the terminal's tests resume).
pub const LASERS_LOGS: &[&str] = &[
    include_str!("../../../fuzz/data/party.session-1.jsonl"),
    include_str!("../../../fuzz/data/demo.session-1.jsonl"),
    include_str!("../../../cli/tests/data/party-before-stall.session-1.jsonl"),
];
