//! Randomizable names: what a spec's `{{placeholders}}` become at the start of a run.
//!
//! Each `randomizable` entry is drawn once per run, in spec order: a memory entry asks the
//! campaign memory (through a closure, so this crate stays pure); a vocabulary entry picks from
//! troupe's built-in lists (`vocabulary.yaml`, compiled in); when either
//! has nothing the entry's `fallback` is used, so a run never stalls on a missing name.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::spec::{NameSource, Npc, Randomizable, Spec};

/// One drawn name: the placeholder key, its value and where the value came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drawn {
    pub key: String,
    pub value: String,
    pub origin: Origin,
}

/// Where a drawn value came from (kept in the log, so a replay shows why a name was chosen).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Memory,
    Vocabulary,
    Fallback,
}

const VOCABULARY_YAML: &str = include_str!("vocabulary.yaml");

/// The built-in vocabulary, category → names, read once. The file is compiled in and a unit test
/// reads it, so the empty map on a parse failure cannot ship unnoticed.
fn vocabulary() -> &'static BTreeMap<String, Vec<String>> {
    static VOCABULARY: OnceLock<BTreeMap<String, Vec<String>>> = OnceLock::new();
    VOCABULARY.get_or_init(|| serde_saphyr::from_str(VOCABULARY_YAML).unwrap_or_default())
}

/// The built-in vocabulary's categories, sorted (`names.dwarf.female`, `places.ship`, …).
pub fn categories() -> Vec<&'static str> {
    vocabulary().keys().map(String::as_str).collect()
}

/// The names in a category; empty for an unknown category.
pub fn category(name: &str) -> &'static [String] {
    vocabulary().get(name).map_or(&[], Vec::as_slice)
}

/// Draw every randomizable entry of `spec`, in order.
///
/// `memory` answers a memory entry (its `query`); `None` or blank text means it has nothing and
/// the fallback is used. A vocabulary entry picks from its category with [`pick`], which depends
/// only on `seed` and the entry's key: the same seed draws the same names, run after run.
pub fn draw(
    spec: &Spec,
    seed: u64,
    memory: &mut dyn FnMut(&Randomizable) -> Option<String>,
) -> Vec<Drawn> {
    let mut drawn: Vec<Drawn> = Vec::new();
    for entry in &spec.randomizable {
        let found = match entry.source {
            NameSource::Memory => memory(entry)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .map(|v| (v, Origin::Memory)),
            NameSource::Vocabulary => {
                let taken: Vec<&str> = drawn.iter().map(|d| d.value.as_str()).collect();
                let names = category(entry.category.as_deref().unwrap_or_default());
                pick(names, seed, &entry.key, &taken).map(|v| (v.to_string(), Origin::Vocabulary))
            }
        };
        let (value, origin) = found.unwrap_or_else(|| (entry.fallback.clone(), Origin::Fallback));
        drawn.push(Drawn {
            key: entry.key.clone(),
            value,
            origin,
        });
    }
    drawn
}

/// A name from `names`, chosen by one fair die roll ([`troupe_rules::roll_dice`]) seeded with
/// [`troupe_rules::roll_seed`]`(seed, fnv1a(key))`. Keying by the entry's key (not its position)
/// keeps every other name when a GM adds an entry. A name already `taken` this run is skipped for
/// the next one in the list, so two dwarves drawn from one category are not namesakes (unless
/// the category has run out).
pub fn pick<'a>(names: &'a [String], seed: u64, key: &str, taken: &[&str]) -> Option<&'a str> {
    let sides = u32::try_from(names.len()).ok().filter(|n| *n > 0)?;
    let roll = troupe_rules::roll_dice(troupe_rules::roll_seed(seed, fnv1a(key)), 1, sides);
    let start = roll
        .first()
        .map_or(0, |face| (*face as usize).saturating_sub(1));
    let free = (0..names.len())
        .filter_map(|i| names.get((start + i) % names.len()).map(String::as_str))
        .find(|name| !taken.contains(name));
    free.or_else(|| names.get(start).map(String::as_str))
}

/// FNV-1a, 64-bit: a fixed, documented hash, stable across Rust versions and platforms (std's
/// hasher is not promised to be), so a seed draws the same names everywhere.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The name an NPC goes by this run: the value drawn for its `nameKey`, else its written name.
pub fn npc_name(npc: &Npc, drawn: &[Drawn]) -> String {
    npc.name_key
        .as_deref()
        .and_then(|key| value(drawn, key))
        .unwrap_or(&npc.name)
        .to_string()
}

/// The value drawn for `key`, if any.
pub fn value<'a>(drawn: &'a [Drawn], key: &str) -> Option<&'a str> {
    drawn
        .iter()
        .find(|d| d.key == key)
        .map(|d| d.value.as_str())
}

/// `text` with every `{{key}}` (spaces inside the braces allowed) replaced by its drawn value.
/// A placeholder nothing was drawn for stays as written, so a GM sees what is missing.
pub fn fill(text: &str, drawn: &[Drawn]) -> String {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Placeholder { raw, key } => out.push_str(value(drawn, key).unwrap_or(raw)),
        }
    }
    out
}

/// A `{{placeholder}}` found in a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placeholder<'a> {
    /// As written, braces and spaces included: `{{ smith }}`.
    pub raw: &'a str,
    /// The key inside, trimmed: `smith`.
    pub key: &'a str,
}

/// Every `{{placeholder}}` in `text`, in order (repeats included).
pub fn placeholders(text: &str) -> Vec<Placeholder<'_>> {
    pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Placeholder { raw, key } => Some(Placeholder { raw, key }),
            Piece::Text(_) => None,
        })
        .collect()
}

enum Piece<'a> {
    Text(&'a str),
    /// `raw` is the placeholder as written, braces included; `key` is trimmed.
    Placeholder {
        raw: &'a str,
        key: &'a str,
    },
}

/// `text` split into plain runs and placeholders. A placeholder is `{{`, a key with no braces in
/// it and not blank, then `}}`; anything else is plain text (so `{{{a}}}` is `{`, `{{a}}`, `}`).
/// Every slice is taken from `text` itself at the ASCII braces, so it is always on a char boundary.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let (before, from_open) = rest.split_at(open);
        let Some(inner_len) = from_open.get(2..).and_then(|after| after.find("}}")) else {
            break;
        };
        let inner = from_open.get(2..2 + inner_len).unwrap_or_default();
        let key = inner.trim();
        if key.is_empty() || key.contains(['{', '}']) {
            // Not a placeholder: keep the first brace as text and look again just after it.
            let (brace, after) = from_open.split_at(1);
            out.push(Piece::Text(before));
            out.push(Piece::Text(brace));
            rest = after;
            continue;
        }
        let (raw, after) = from_open.split_at(4 + inner_len);
        out.push(Piece::Text(before));
        out.push(Piece::Placeholder { raw, key });
        rest = after;
    }
    out.push(Piece::Text(rest));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUIRED: &[&str] = &[
        "names.dwarf.female",
        "names.dwarf.male",
        "names.elf.female",
        "names.elf.male",
        "names.human.female",
        "names.human.male",
        "names.spacer",
        "places.tavern",
        "places.ship",
    ];

    #[test]
    fn the_vocabulary_has_every_required_category_with_twelve_distinct_names() {
        let parsed: BTreeMap<String, Vec<String>> = serde_saphyr::from_str(VOCABULARY_YAML)
            .unwrap_or_else(|e| panic!("vocabulary.yaml: {e}"));
        for category in REQUIRED {
            let names = parsed.get(*category).map_or(&[][..], Vec::as_slice);
            assert!(names.len() >= 12, "{category}: {} names", names.len());
            let mut distinct = names.to_vec();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), names.len(), "{category} repeats a name");
            assert!(names.iter().all(|n| !n.trim().is_empty()));
        }
        assert_eq!(categories().len(), parsed.len());
    }

    #[test]
    fn pick_skips_names_already_taken() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let first = pick(&names, 7, "k", &[]).unwrap_or_default();
        let second = pick(&names, 7, "k", &[first]).unwrap_or_default();
        assert_ne!(first, second);
        let all = ["a", "b", "c"];
        assert!(
            pick(&names, 7, "k", &all).is_some(),
            "a full category still names"
        );
        assert_eq!(pick(&[], 7, "k", &[]), None);
    }

    #[test]
    fn fill_handles_spaces_repeats_and_stray_braces() {
        let drawn = vec![Drawn {
            key: "smith".into(),
            value: "Brekka".into(),
            origin: Origin::Vocabulary,
        }];
        assert_eq!(
            fill(
                "{{smith}} and {{ smith }}; {{{smith}}} {{}} {{other}} {{smith",
                &drawn
            ),
            "Brekka and Brekka; {Brekka} {{}} {{other}} {{smith"
        );
        let keys: Vec<&str> = placeholders("é{{ ä }}ß{{b}}")
            .iter()
            .map(|p| p.key)
            .collect();
        assert_eq!(keys, vec!["ä", "b"]);
    }
}
