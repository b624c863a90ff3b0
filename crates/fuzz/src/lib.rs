//! Fuzzing troupe's parsers with proptest: what they share.
//!
//! Every text troupe reads comes from a person, a model or a file, so none of it may make troupe
//! panic. The targets in `tests/` throw "nasty" input at each parser: arbitrary Unicode that
//! breaks byte-offset arithmetic (combining marks, letters whose case changes their length,
//! right-to-left text and marks, emoji joined by ZWJ, NUL and control characters) mixed with the
//! parser's own vocabulary, so the input gets past the first checks and into the code that
//! slices and indexes; files get invalid UTF-8 as well, and structured files (JSON, YAML, JSONL)
//! are real examples with nasty values put in at random places.
//!
//! Each target runs [`cases`] inputs: 512 in the normal test suite (a second or two each; 64
//! for the session logs, whose every input is a whole session), or
//! `TROUPE_FUZZ_CASES` (for example `TROUPE_FUZZ_CASES=100000 cargo test -p troupe-fuzz
//! --release`). Every input that once broke something is kept in its target as a named
//! regression test.

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;

/// Cases per target in the normal test suite.
pub const DEFAULT_CASES: u32 = 512;

/// How many inputs each target tries: `TROUPE_FUZZ_CASES`, or `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("TROUPE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The proptest configuration of a target: [`DEFAULT_CASES`] inputs (or `TROUPE_FUZZ_CASES`)
/// and no regression files (the inputs that broke something are kept as named tests, readable,
/// instead of seeds).
pub fn config() -> ProptestConfig {
    config_with(DEFAULT_CASES)
}

/// [`config`] for a target whose every input costs more (a whole session log): `default`
/// inputs in the normal suite, `TROUPE_FUZZ_CASES` still wins.
pub fn config_with(default: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Pieces of text that break code which assumes one byte per character or a stable length.
pub const NASTY: &[&str] = &[
    // Combining marks, alone and stacked (a mark with no base, "Zalgo").
    "\u{301}",
    "e\u{301}",
    "i\u{307}",
    "a\u{20DD}",
    "Z\u{334}\u{321}\u{32A}a\u{336}l\u{337}g\u{338}o",
    // Letters whose lower or upper case has a different length in bytes or characters.
    "İ",
    "ı",
    "ß",
    "ẞ",
    "ﬁ",
    "ﬃ",
    "Σ",
    "ς",
    "ǅ",
    "ŉ",
    "ΐ",
    "\u{212A}", // Kelvin sign, lowercases to ASCII k
    "\u{212B}", // Angstrom sign
    "Ⱥ",        // 2 bytes, its lowercase ⱥ is 3
    "é",
    "ÉÉ",
    // Characters whose last bytes repeat ("倀" is E5 80 80), and wide and astral ones.
    "倀",
    "ꀀ",
    "\u{10000}",
    "中文",
    "ＡＢＣ",
    "。",
    "𝔊𝔞𝔩𝔳𝔦𝔫",
    // Right-to-left text and direction marks.
    "שלום",
    "مرحبا",
    "\u{200F}",
    "\u{202E}",
    "\u{2067}",
    "\u{061C}",
    // Emoji: ZWJ sequences, skin tones, flags, keycaps.
    "👩\u{200D}👩\u{200D}👧\u{200D}👦",
    "🏳\u{FE0F}\u{200D}🌈",
    "👍🏽",
    "🇫🇷",
    "1\u{FE0F}\u{20E3}",
    "🙂",
    // NUL, controls, odd line and word breaks, invisible characters.
    "\0",
    "\u{7}",
    "\u{1b}[31m",
    "\r",
    "\r\n",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\t",
    "\u{FEFF}",
    "\u{200B}",
    "\u{AD}",
    "\u{FFFD}",
    "\u{FFFF}",
    "\u{10FFFF}",
    // Digits that are not ASCII, quotes and tag syntax.
    "٣",
    "²",
    "Ⅻ",
    "½",
    "“",
    "”",
    "«",
    "»",
    "’",
    "'",
    "`",
    "\"",
    "\\",
    "@",
    "@{",
    "{",
    "}",
];

/// What separates words in prose: spaces, punctuation, line breaks.
pub const GLUE: &[&str] = &[
    " ", " ", " ", ".", ",", "!", "?", ";", ":", "-", "—", "\n", "\"", "*", "'", "(", ")",
];

/// Byte sequences that are not UTF-8: a lone continuation byte, a truncated character, an
/// overlong encoding, an encoded surrogate (impossible in a Rust `String`), bytes never used.
pub const BAD_UTF8: &[&[u8]] = &[
    &[0x80],
    &[0xBF],
    &[0xE5, 0x80],
    &[0xF0, 0x9F, 0x99],
    &[0xC0, 0x80],
    &[0xED, 0xA0, 0x80],
    &[0xED, 0xBF, 0xBF],
    &[0xFE],
    &[0xFF],
    &[0xF8, 0x88, 0x80, 0x80, 0x80],
];

/// One piece of nasty text: a word of the domain, a nasty piece, glue, or any character.
fn piece(vocab: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        5 => select(vocab).prop_map(str::to_string),
        3 => select(NASTY).prop_map(str::to_string),
        3 => select(GLUE).prop_map(str::to_string),
        1 => any::<char>().prop_map(String::from),
        1 => "\\PC{1,6}",
    ]
    .boxed()
}

/// Text made of up to `max` pieces: the domain's words glued with punctuation, nasty Unicode
/// in between and inside.
pub fn nasty_text(vocab: &'static [&'static str], max: usize) -> BoxedStrategy<String> {
    proptest::collection::vec(piece(vocab), 0..max)
        .prop_map(|pieces| pieces.concat())
        .boxed()
}

/// Bytes of a file: nasty text with invalid UTF-8 and arbitrary bytes mixed in.
pub fn nasty_bytes(vocab: &'static [&'static str], max: usize) -> BoxedStrategy<Vec<u8>> {
    let chunk = prop_oneof![
        6 => piece(vocab).prop_map(String::into_bytes),
        1 => select(BAD_UTF8).prop_map(<[u8]>::to_vec),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ];
    proptest::collection::vec(chunk, 0..max)
        .prop_map(|chunks| chunks.concat())
        .boxed()
}

/// A JSON value to put where a parser expects something else: nasty strings, extreme and
/// fractional numbers, the wrong type, empty and deeply nested containers.
pub fn nasty_json(vocab: &'static [&'static str]) -> BoxedStrategy<Value> {
    let numbers: &[Value] = &[
        Value::from(0),
        Value::from(-1),
        Value::from(1),
        Value::from(2),
        Value::from(7),
        Value::from(255),
        Value::from(256),
        Value::from(65_536),
        Value::from(u64::from(u32::MAX)),
        Value::from(u64::MAX),
        Value::from(i64::MIN),
        Value::from(0.5),
        Value::from(-0.0),
        Value::from(1e308),
    ];
    let deep = (0..64).fold(Value::Null, |v, _| Value::Array(vec![v]));
    prop_oneof![
        6 => nasty_text(vocab, 12).prop_map(Value::String),
        3 => select(vocab).prop_map(Value::from),
        3 => select(numbers.to_vec()),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Array(Vec::new())),
        1 => Just(Value::Object(serde_json::Map::new())),
        1 => Just(deep),
        1 => proptest::collection::vec(nasty_text(vocab, 6).prop_map(Value::String), 1..4)
            .prop_map(Value::Array),
    ]
    .boxed()
}

/// A change to a JSON document; `at` picks a node (modulo the number of nodes, in document
/// order), so any sequence of edits applies to any document.
#[derive(Clone, Debug)]
pub enum Edit {
    /// Put a nasty value in place of the node.
    Replace { at: usize, with: Value },
    /// Remove the node from its object or array.
    Remove { at: usize },
    /// Repeat the node inside its array, or copy it under a new key.
    Duplicate { at: usize },
}

fn edit(vocab: &'static [&'static str]) -> BoxedStrategy<Edit> {
    prop_oneof![
        6 => (any::<usize>(), nasty_json(vocab)).prop_map(|(at, with)| Edit::Replace { at, with }),
        2 => any::<usize>().prop_map(|at| Edit::Remove { at }),
        1 => any::<usize>().prop_map(|at| Edit::Duplicate { at }),
    ]
    .boxed()
}

/// Up to `max` edits of a JSON document.
pub fn edits(vocab: &'static [&'static str], max: usize) -> BoxedStrategy<Vec<Edit>> {
    proptest::collection::vec(edit(vocab), 1..=max).boxed()
}

/// How many nodes `v` has, itself included.
fn node_count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(node_count).sum(),
        Value::Object(o) => o.values().map(node_count).sum(),
        _ => 0,
    }
}

/// Apply the edits in order. The root itself is only ever replaced.
pub fn apply(doc: &mut Value, edits: &[Edit]) {
    for e in edits {
        let n = node_count(doc);
        match e {
            Edit::Replace { at, with } => {
                if let Some(node) = nth(doc, at % n) {
                    *node = with.clone();
                }
            }
            Edit::Remove { at } => remove_child(doc, at % n),
            Edit::Duplicate { at } => duplicate_child(doc, at % n),
        }
    }
}

/// The node at `index` in document order (0 is the root).
fn nth(v: &mut Value, index: usize) -> Option<&mut Value> {
    if index == 0 {
        return Some(v);
    }
    let mut rest = index - 1;
    let children: Vec<&mut Value> = match v {
        Value::Array(a) => a.iter_mut().collect(),
        Value::Object(o) => o.values_mut().collect(),
        _ => return None,
    };
    for child in children {
        let size = node_count(child);
        if rest < size {
            return nth(child, rest);
        }
        rest -= size;
    }
    None
}

/// Remove the child of a container that is node `index` (counted from `v`).
fn remove_child(v: &mut Value, index: usize) {
    change_child(v, index, &mut |parent, slot| match parent {
        Value::Array(a) if slot < a.len() => {
            a.remove(slot);
        }
        Value::Object(o) => {
            if let Some(key) = o.keys().nth(slot).cloned() {
                o.remove(&key);
            }
        }
        _ => {}
    });
}

fn duplicate_child(v: &mut Value, index: usize) {
    change_child(v, index, &mut |parent, slot| match parent {
        Value::Array(a) => {
            if let Some(x) = a.get(slot).cloned() {
                a.insert(slot, x);
            }
        }
        Value::Object(o) => {
            if let Some((k, x)) = o.iter().nth(slot).map(|(k, x)| (k.clone(), x.clone())) {
                o.insert(format!("{k}\u{301}"), x);
            }
        }
        _ => {}
    });
}

/// Find the container holding node `index` and call `f(container, position of the child)`.
fn change_child(v: &mut Value, index: usize, f: &mut dyn FnMut(&mut Value, usize)) {
    if index == 0 {
        return;
    }
    let mut rest = index - 1;
    let sizes: Vec<usize> = match &*v {
        Value::Array(a) => a.iter().map(node_count).collect(),
        Value::Object(o) => o.values().map(node_count).collect(),
        _ => return,
    };
    for (slot, size) in sizes.into_iter().enumerate() {
        if rest == 0 {
            f(v, slot);
            return;
        }
        if rest < size {
            let child = match v {
                Value::Array(a) => a.get_mut(slot),
                Value::Object(o) => o.values_mut().nth(slot),
                _ => None,
            };
            if let Some(child) = child {
                change_child(child, rest, f);
            }
            return;
        }
        rest -= size;
    }
}

/// A byte-level change to a file's text: cut it at `cut` (a fraction of its length, in
/// thousandths, so that it may land inside a character) or splice bytes in at `at`.
#[derive(Clone, Debug)]
pub enum ByteEdit {
    Truncate { cut: u16 },
    Insert { at: u16, bytes: Vec<u8> },
}

pub fn byte_edits(vocab: &'static [&'static str]) -> BoxedStrategy<Vec<ByteEdit>> {
    let one = prop_oneof![
        1 => (0u16..1000).prop_map(|cut| ByteEdit::Truncate { cut }),
        3 => (0u16..1000, nasty_bytes(vocab, 4)).prop_map(|(at, bytes)| ByteEdit::Insert { at, bytes }),
    ];
    proptest::collection::vec(one, 0..3).boxed()
}

/// Apply byte edits to a file's bytes.
pub fn apply_bytes(bytes: &mut Vec<u8>, edits: &[ByteEdit]) {
    for e in edits {
        match e {
            ByteEdit::Truncate { cut } => {
                bytes.truncate(bytes.len() * usize::from(*cut) / 1000);
            }
            ByteEdit::Insert { at, bytes: new } => {
                let at = bytes.len() * usize::from(*at) / 1000;
                let tail = bytes.split_off(at.min(bytes.len()));
                bytes.extend_from_slice(new);
                bytes.extend_from_slice(&tail);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_reach_every_node() {
        let doc = json!({"a": [1, {"b": 2}], "c": "x"});
        assert_eq!(node_count(&doc), 6);
        for at in 1..6 {
            let mut d = doc.clone();
            apply(
                &mut d,
                &[Edit::Replace {
                    at,
                    with: json!("N"),
                }],
            );
            assert_ne!(d, doc, "node {at}");
            assert!(d.to_string().contains("\"N\""));
        }
        let mut d = doc.clone();
        apply(&mut d, &[Edit::Remove { at: 4 }]);
        assert_eq!(d, json!({"a": [1, {}], "c": "x"}));
        let mut d = doc.clone();
        apply(&mut d, &[Edit::Duplicate { at: 2 }]);
        assert_eq!(d, json!({"a": [1, 1, {"b": 2}], "c": "x"}));
    }

    #[test]
    fn byte_edits_can_cut_inside_a_character() {
        let mut b = "é".as_bytes().to_vec();
        apply_bytes(&mut b, &[ByteEdit::Truncate { cut: 500 }]);
        assert_eq!(b, vec![0xC3]);
        assert!(String::from_utf8(b).is_err());
    }
}
