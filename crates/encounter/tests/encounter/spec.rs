#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Encounter specs as a GM writes them: the checker's verdicts (every mistake, where it was
//! written), the examples shipped in `examples/encounters/`, and drawing randomizable names.

use std::path::PathBuf;

use proptest::prelude::*;
use troupe_encounter::check::check;
use troupe_encounter::names::{self, Drawn, Origin, draw, fill, npc_name};
use troupe_encounter::spec::{NameSource, Randomizable, RulesKind, Spec};
use troupe_scene::Problem;

fn example(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/encounters")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn checked(text: &str) -> Spec {
    check(text).unwrap_or_else(|problems| panic!("expected a valid spec, got {problems:#?}"))
}

fn problems(text: &str) -> Vec<Problem> {
    match check(text) {
        Ok(spec) => panic!("expected problems, got a spec: {spec:#?}"),
        Err(problems) => problems,
    }
}

/// The one problem at `path`, failing with the whole list when there is not exactly one.
fn at<'a>(problems: &'a [Problem], path: &str) -> &'a Problem {
    let found: Vec<&Problem> = problems.iter().filter(|p| p.path == path).collect();
    assert_eq!(found.len(), 1, "one problem at {path} in {problems:#?}");
    found[0]
}

const MINIMAL: &str = "\
encounterId: minimal
title: A Quiet Road
setting:
  location: a road
  mood: calm
  ambientNpcs: none
openingNarrative: |
  You meet {{ traveller }} on the road.
  Nothing else happens.
npcs:
  - id: walker
    name: Wren
    nameKey: traveller
    role: a traveller
    persona: chatty
goals:
  primary:
    - id: talk
      label: Someone talks to the traveller
randomizable:
  - key: traveller
    source: graphmcp
    query: a traveller the party has met
    fallback: Wren
";

/// `MINIMAL` with `tools` and `scene` appended (or replaced when given).
fn with(extra: &str) -> String {
    format!("{MINIMAL}{extra}")
}

#[test]
fn a_minimal_spec_reads_with_seed_003s_defaults_and_round_trips() {
    let spec = checked(MINIMAL);
    assert_eq!(spec.id, "minimal");
    assert_eq!(spec.rules, RulesKind::D20);
    assert!(
        spec.goals.hidden,
        "goals are hidden unless the GM says otherwise"
    );
    assert!(spec.goals.secondary.is_empty());
    assert_eq!(
        spec.randomizable[0].source,
        NameSource::Memory,
        "graphmcp is memory"
    );
    assert_eq!(
        spec.opening, "You meet {{ traveller }} on the road.\nNothing else happens.\n",
        "multi-line text keeps its lines"
    );
    assert!(spec.tools.is_empty() && spec.scene.is_none() && spec.gm_notes.is_none());
    let json = serde_json::to_string(&spec).unwrap();
    let back: Spec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, spec);
}

#[test]
fn the_smithy_example_passes_and_reads_as_written() {
    let spec = checked(&example("smithy.yaml"));
    assert_eq!(spec.rules, RulesKind::D20);
    let smith = spec.npc("smith").unwrap();
    assert_eq!(smith.memory_key.as_deref(), Some("npc.brekka-smith"));
    assert_eq!(spec.npcs.len(), 2);
    assert!(spec.goals.hidden);
    assert_eq!(
        (spec.goals.primary.len(), spec.goals.secondary.len()),
        (2, 2)
    );
    let calm = spec.check("calm_smith").unwrap();
    assert_eq!((calm.dc, calm.skill.as_deref()), (14, Some("persuasion")));
    assert!(calm.note.as_deref().unwrap().contains("bellows"));
    assert_eq!(spec.checks.len(), 3);
    let sources: Vec<NameSource> = spec.randomizable.iter().map(|r| r.source).collect();
    assert!(sources.contains(&NameSource::Memory) && sources.contains(&NameSource::Vocabulary));
    assert!(spec.gm_notes.as_deref().unwrap().starts_with("SECRET"));
    assert_eq!(spec.tools.len(), 4);
    assert_eq!(spec.sportsmanship.len(), 3);
}

#[test]
fn the_docking_example_passes_under_lasers_and_feelings() {
    let spec = checked(&example("docking.yaml"));
    assert_eq!(spec.rules, RulesKind::LasersFeelings);
    assert!(spec.setting.location.contains("station"));
    assert!(
        spec.gm_notes.as_deref().unwrap().contains("SECRET"),
        "gmNotes is dmNotes"
    );
    assert_eq!(spec.goals.primary[0].id, "dock_safely");
}

const MANY_MISTAKES: &str = r#"encounterId: broken
titel: Typo
rules: gurps
setting:
  location: A hut
  mood: 12.5
openingNarrative: "Hello {{nobody}}"
npcs:
  - id: a
    name: A
    role: r
    persona: p
    nameKey: ghost
  - id: a
    name: B
    role: r
goals:
  primary: []
  secondary:
    - id: g1
      label: x
    - id: g1
skillChecks:
  haggle_dc: 99
  haggle_bonus: 2
  sneak_skill: stealth
randomizable:
  - key: who
    source: vocabulary
    category: names.orc.male
    fallback: ""
tools: [foo, attack]
"#;

#[test]
fn every_mistake_is_reported_at_once_where_it_was_written() {
    let found = problems(MANY_MISTAKES);
    let places: Vec<(u64, u64, &str)> = found
        .iter()
        .map(|p| (p.line, p.column, p.path.as_str()))
        .collect();
    assert_eq!(
        places,
        vec![
            (1, 1, "title"),
            (2, 1, "titel"),
            (3, 8, "rules"),
            (5, 3, "setting.ambientNpcs"),
            (6, 9, "setting.mood"),
            (7, 26, "openingNarrative"),
            (13, 14, "npcs[0].nameKey"),
            (14, 5, "npcs[1].persona"),
            (14, 9, "npcs[1].id"),
            (18, 12, "goals.primary"),
            (22, 7, "goals.secondary[1].label"),
            (22, 11, "goals.secondary[1].id"),
            (24, 14, "skillChecks.haggle_dc"),
            (25, 3, "skillChecks.haggle_bonus"),
            (26, 3, "skillChecks.sneak_dc"),
            (30, 15, "randomizable[0].category"),
            (31, 15, "randomizable[0].fallback"),
            (32, 9, "tools[0]"),
            (32, 14, "tools[1]"),
        ],
        "{found:#?}"
    );
    let message = |path| at(&found, path).message.clone();
    assert!(message("titel").starts_with("unknown key `titel`; expected one of `encounterId`"));
    assert!(message("rules").contains("`gurps`"));
    assert!(message("npcs[1].id").contains("`a` is already used at npcs[0].id"));
    assert!(message("goals.secondary[1].id").contains("goals.secondary[0].id"));
    assert!(message("npcs[0].nameKey").contains("`ghost` has no randomizable entry"));
    assert!(message("skillChecks.haggle_bonus").contains("_dc, <name>_skill or <name>_note"));
    assert!(message("skillChecks.sneak_dc").contains("`sneak` has no `sneak_dc`"));
    assert!(message("randomizable[0].category").contains("`names.orc.male`; known: "));
    assert!(message("randomizable[0].category").contains("`names.dwarf.female`"));
}

#[test]
fn an_unknown_key_deep_inside_is_named_on_its_own_line() {
    let text = MINIMAL.replace(
        "  mood: calm\n",
        "  mood: calm\n  weather:\n    rain: true\n",
    );
    let found = problems(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let p = &found[0];
    assert_eq!(
        (p.line, p.column, p.path.as_str()),
        (6, 3, "setting.weather")
    );
    assert_eq!(
        p.message,
        "unknown key `weather`; expected one of `location`, `mood`, `ambientNpcs`"
    );
}

#[test]
fn an_unknown_tool_is_named_with_the_known_ones() {
    let found = problems(&with("tools:\n  - skill_check_emit\n  - summon_dragon\n"));
    let p = at(&found, "tools[1]");
    assert!(
        p.message
            .starts_with("unknown tool `summon_dragon`; known: "),
        "{p:?}"
    );
    assert!(p.message.contains("`goal_register`") && p.message.contains("`ask_roll`"));
    assert_eq!(found.len(), 1);
}

#[test]
fn a_scene_tool_needs_a_scene_file() {
    let found = problems(&with("tools: [encounter_resolve, ask_roll]\n"));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0]
            .message
            .contains("`ask_roll` is a scene tool; it needs a `scene:` file")
    );
    let spec = checked(&with(
        "tools: [encounter_resolve, ask_roll]\nscene: mill.scene.yaml\n",
    ));
    assert_eq!(spec.scene.as_deref(), Some("mill.scene.yaml"));
    assert_eq!(spec.tools, vec!["encounter_resolve", "ask_roll"]);
}

#[test]
fn a_dc_is_a_whole_number_from_1_to_40() {
    let spec = checked(&with(
        "skillChecks:\n  climb_dc: 40\n  climb_skill: athletics\n",
    ));
    assert_eq!(spec.check("climb").unwrap().dc, 40);
    for bad in ["0", "41", "hard", "12.5", "-3"] {
        let found = problems(&with(&format!("skillChecks:\n  climb_dc: {bad}\n")));
        let p = at(&found, "skillChecks.climb_dc");
        assert!(
            p.message
                .starts_with("a DC must be a whole number from 1 to 40"),
            "{bad}: {p:?}"
        );
        assert_eq!(found.len(), 1, "{bad}: {found:#?}");
    }
}

#[test]
fn an_unknown_placeholder_is_named_where_it_was_written() {
    let text = MINIMAL.replace(
        "  Nothing else happens.",
        "  Nothing else, says {{ innkeep }}.",
    );
    let found = problems(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let p = &found[0];
    assert_eq!((p.line, p.column), (9, 22));
    assert_eq!(
        p.message,
        "unknown placeholder `{{innkeep}}`; known: `traveller`"
    );
}

#[test]
fn places_count_characters_not_bytes() {
    let text = MINIMAL
        .replace("title: A Quiet Road", "title: Über den Pass\nmöod: ☂☂☂")
        .replace(
            "  Nothing else happens.",
            "  Ça va, «{{ ghost }}» — {{ ghost }}?",
        );
    let found = problems(&text);
    let places: Vec<(u64, u64, &str)> = found
        .iter()
        .map(|p| (p.line, p.column, p.path.as_str()))
        .collect();
    assert_eq!(
        places,
        vec![
            (3, 1, "möod"),
            (10, 11, "openingNarrative"),
            (10, 26, "openingNarrative"),
        ],
        "{found:#?}"
    );
}

#[test]
fn a_name_key_needs_a_randomizable_entry() {
    let text = MINIMAL.replace("    nameKey: traveller\n", "    nameKey: wanderer\n");
    let found = problems(&text);
    let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, vec!["npcs[0].nameKey"], "{found:#?}");
    assert_eq!(
        found[0].message,
        "nameKey `wanderer` has no randomizable entry (add one with `key: wanderer`)"
    );
}

#[test]
fn an_empty_file_names_every_required_key() {
    let found = problems("");
    let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "encounterId",
            "title",
            "setting",
            "openingNarrative",
            "npcs",
            "goals"
        ]
    );
    assert!(found.iter().all(|p| (p.line, p.column) == (1, 1)));
}

#[test]
fn broken_yaml_and_a_bare_word_are_one_problem_each() {
    let found = problems("encounterId: x\ntitle: [unclosed\n");
    assert_eq!(found.len(), 1);
    assert!(found[0].message.starts_with("not valid YAML"), "{found:?}");
    assert_eq!(found[0].line, 2);
    let found = problems("hello");
    assert_eq!(found.len(), 1);
    assert!(
        found[0]
            .message
            .starts_with("an encounter spec is a mapping of keys")
    );
}

#[test]
fn npcs_are_one_to_five_and_gm_notes_have_one_name() {
    let npc = "  - {id: n, name: N, role: r, persona: p}\n";
    let six = MINIMAL.replace("npcs:\n", &format!("npcs:\n{}", npc.repeat(5)));
    let found = problems(&six);
    assert!(
        found
            .iter()
            .any(|p| p.path == "npcs[5]" && p.message.contains("at most 5"))
    );
    let both = with("dmNotes: a\ngmNotes: b\n");
    let found = problems(&both);
    let p = at(&found, "gmNotes");
    assert_eq!((p.line, p.column), (26, 1));
}

fn spec_with(entries: Vec<Randomizable>) -> Spec {
    let mut spec = checked(MINIMAL);
    spec.randomizable = entries;
    spec
}

fn entry(key: &str, source: NameSource, category: Option<&str>) -> Randomizable {
    Randomizable {
        key: key.into(),
        source,
        category: category.map(String::from),
        query: format!("who is {key}"),
        fallback: format!("fallback-{key}"),
    }
}

#[test]
fn draw_asks_memory_and_falls_back_when_it_has_nothing() {
    let spec = spec_with(vec![
        entry("known", NameSource::Memory, None),
        entry("forgotten", NameSource::Memory, None),
        entry("blank", NameSource::Memory, None),
    ]);
    let mut asked = Vec::new();
    let drawn = draw(&spec, 1, &mut |r: &Randomizable| {
        asked.push(r.query.clone());
        match r.key.as_str() {
            "known" => Some("  Thyrra  ".into()),
            "blank" => Some("   ".into()),
            _ => None,
        }
    });
    assert_eq!(
        asked,
        vec!["who is known", "who is forgotten", "who is blank"]
    );
    let got: Vec<(&str, &str, Origin)> = drawn
        .iter()
        .map(|d| (d.key.as_str(), d.value.as_str(), d.origin))
        .collect();
    assert_eq!(
        got,
        vec![
            ("known", "Thyrra", Origin::Memory),
            ("forgotten", "fallback-forgotten", Origin::Fallback),
            ("blank", "fallback-blank", Origin::Fallback),
        ]
    );
}

#[test]
fn vocabulary_draws_are_fixed_by_the_seed_and_vary_across_seeds() {
    let spec = spec_with(vec![
        entry("a", NameSource::Vocabulary, Some("names.dwarf.female")),
        entry("b", NameSource::Vocabulary, Some("names.dwarf.female")),
        entry("ship", NameSource::Vocabulary, Some("places.ship")),
        entry("nowhere", NameSource::Vocabulary, Some("names.nowhere")),
    ]);
    let mut no_memory = |_: &Randomizable| -> Option<String> { panic!("vocabulary only") };
    let first = draw(&spec, 42, &mut no_memory);
    assert_eq!(
        first,
        draw(&spec, 42, &mut no_memory),
        "same seed, same names"
    );
    assert_ne!(first[0].value, first[1].value, "one category, no namesakes");
    assert!(names::category("names.dwarf.female").contains(&first[0].value));
    assert!(names::category("places.ship").contains(&first[2].value));
    assert_eq!(first[3].origin, Origin::Fallback);
    assert_eq!(first[3].value, "fallback-nowhere");
    let values: std::collections::BTreeSet<String> = (0..50)
        .map(|seed| draw(&spec, seed, &mut no_memory)[0].value.clone())
        .collect();
    assert!(values.len() >= 6, "50 seeds drew only {values:?}");
}

#[test]
fn names_fill_the_opening_and_name_the_npcs() {
    let spec = checked(&example("smithy.yaml"));
    let drawn = draw(&spec, 7, &mut |_| None);
    let opening = fill(&spec.opening, &drawn);
    assert!(!opening.contains("{{"), "{opening}");
    assert!(opening.contains(&npc_name(spec.npc("smith").unwrap(), &drawn)));
    assert_eq!(
        npc_name(spec.npc("smith").unwrap(), &drawn),
        "Brekka Anvilmourn"
    );
    let factor = npc_name(spec.npc("factor").unwrap(), &drawn);
    assert!(
        names::category("names.human.male").contains(&factor),
        "{factor}"
    );
    let origin = serde_json::to_string(&Origin::Fallback).unwrap();
    assert_eq!(origin, "\"fallback\"");
}

/// A valid spec with one line-level mutation: dropped, doubled, or spliced with random text.
fn mutated() -> impl Strategy<Value = String> {
    let lines: Vec<String> = example("smithy.yaml").lines().map(String::from).collect();
    let n = lines.len();
    (0..n, 0..3u8, ".{0,12}", 0..80usize).prop_map(move |(i, how, junk, at)| {
        let mut lines = lines.clone();
        match how {
            0 => {
                lines.remove(i);
            }
            1 => lines.insert(i, lines[i].clone()),
            _ => {
                let line: Vec<char> = lines[i].chars().collect();
                let cut = at.min(line.len());
                let spliced: String = line[..cut].iter().collect::<String>() + &junk;
                lines[i] = spliced + &line[cut..].iter().collect::<String>();
            }
        }
        lines.join("\n")
    })
}

proptest! {
    #[test]
    fn check_never_panics_on_any_text(text in "\\PC{0,200}") {
        let _ = check(&text);
    }

    #[test]
    fn check_never_panics_on_yaml_like_text(text in "([a-zA-Z_{}: \\-\\[\\]'\"|>#é]{0,12}\n){0,20}") {
        let _ = check(&text);
    }

    #[test]
    fn check_never_panics_on_a_mutated_spec(text in mutated()) {
        if let Err(problems) = check(&text) {
            prop_assert!(!problems.is_empty());
            prop_assert!(problems.iter().all(|p| p.line >= 1 && p.column >= 1));
        }
    }

    #[test]
    fn fill_never_panics_and_without_names_changes_nothing(
        text in "\\PC{0,80}",
        keys in proptest::collection::vec(("\\PC{0,6}", "\\PC{0,6}"), 0..4),
    ) {
        let drawn: Vec<Drawn> = keys
            .into_iter()
            .map(|(key, value)| Drawn { key, value, origin: Origin::Vocabulary })
            .collect();
        let _ = fill(&text, &drawn);
        prop_assert_eq!(fill(&text, &[]), text);
    }

    #[test]
    fn fill_replaces_a_placeholder_between_any_plain_text(
        before in "[^{}]{0,20}",
        after in "[^{}]{0,20}",
        key in "[^{}\\s]{1,8}",
        value in "\\PC{0,10}",
        pad in " {0,2}",
    ) {
        let drawn = [Drawn { key: key.clone(), value: value.clone(), origin: Origin::Memory }];
        let text = format!("{before}{{{{{pad}{key}{pad}}}}}{after}");
        prop_assert_eq!(fill(&text, &drawn), format!("{before}{value}{after}"));
    }

    #[test]
    fn draw_is_deterministic_per_seed(seed in any::<u64>()) {
        let spec = checked(&example("smithy.yaml"));
        let first = draw(&spec, seed, &mut |_| None);
        prop_assert_eq!(&first, &draw(&spec, seed, &mut |_| None));
        prop_assert_eq!(first.len(), spec.randomizable.len());
    }
}
