//! What a GM sees when their campaign file is right, and when it is wrong.

// Helpers here are test code too; clippy.toml only exempts `#[test]` functions themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use serde_json::{Value, json};
use troupe_campaign::{Error, Problem, Role, ShipStrength, Style, load, parse};

fn valid() -> Value {
    json!({
        "campaign_name": "Test Run",
        "gm_name": "Ryan",
        "party": { "ship_name": "The Raptor", "ship_strengths": ["Fast", "Nimble"], "ship_problem": "Fuel Hog" },
        "characters": [ seat("alex", "zara") ]
    })
}

fn seat(agent: &str, character: &str) -> Value {
    json!({
        "player": {
            "agent_id": agent, "player_name": "Alex", "player_goal": "Have fun",
            "analytical_score": 0.7, "risk_tolerance": 0.6, "detail_oriented": 0.8,
            "emotional_memory": 0.4, "assertiveness": 0.6, "cooperativeness": 0.7,
            "openness": 0.8, "rule_adherence": 0.7, "roleplay_intensity": 0.9
        },
        "character": {
            "character_id": character, "name": "Zara-7", "style": "Android", "role": "Engineer",
            "number": 5, "character_goal": "Understand human emotions",
            "equipment": ["Multi-tool"], "speech_patterns": ["Speaks formally"],
            "mannerisms": ["Tilts head when confused"]
        }
    })
}

/// Every problem in `v`, as the lines the GM would read.
fn problems(v: &Value) -> Vec<String> {
    match parse(&v.to_string(), "campaign.json") {
        Ok(_) => panic!("expected problems, but the file was accepted"),
        Err(Error::Invalid { file, problems }) => {
            assert_eq!(file, "campaign.json");
            problems.iter().map(|p| format!("{file}: {p}")).collect()
        }
        Err(other) => panic!("expected Invalid, got {other}"),
    }
}

fn only_problem(v: &Value) -> String {
    let found = problems(v);
    assert_eq!(found.len(), 1, "{found:#?}");
    found.into_iter().next().unwrap()
}

#[test]
fn a_valid_file_becomes_a_campaign() {
    let c = parse(&valid().to_string(), "campaign.json").unwrap();
    assert_eq!(c.name, "Test Run");
    assert_eq!(c.gm_name, "Ryan");
    assert_eq!(
        c.ship.strengths,
        vec![ShipStrength::Fast, ShipStrength::Nimble]
    );
    let sheet = &c.seats[0].character;
    assert_eq!(
        (sheet.style, sheet.role, sheet.number.get()),
        (Style::Android, Role::Engineer, 5)
    );
    assert_eq!(c.seats[0].player.traits.risk_tolerance, 0.6);
    assert!(c.model.is_none());
}

#[test]
fn wrong_type_names_the_field_and_what_it_must_be() {
    let mut v = valid();
    v["characters"][0]["player"]["player_name"] = json!(42);
    assert_eq!(
        only_problem(&v),
        "campaign.json: characters[0].player.player_name = 42: must be a non-empty string"
    );
    let mut v = valid();
    v["party"] = json!("The Raptor");
    assert!(
        only_problem(&v).starts_with("campaign.json: party = \"The Raptor\": must be an object")
    );
}

#[test]
fn trait_out_of_range_is_reported() {
    let mut v = valid();
    v["characters"][0]["player"]["risk_tolerance"] = json!(1.5);
    assert_eq!(
        only_problem(&v),
        "campaign.json: characters[0].player.risk_tolerance = 1.5: must be a number from 0.0 to 1.0"
    );
    v["characters"][0]["player"]["risk_tolerance"] = json!("high");
    assert!(
        only_problem(&v).contains("risk_tolerance = \"high\": must be a number from 0.0 to 1.0")
    );
}

#[test]
fn bad_number_explains_the_range_and_what_it_means() {
    let mut v = valid();
    v["characters"][0]["character"]["number"] = json!(7);
    assert_eq!(
        only_problem(&v),
        "campaign.json: characters[0].character.number = 7: must be a whole number from 2 to 5 \
         (2–3 lean FEELINGS, 4–5 lean LASERS)"
    );
    for bad in [json!(3.5), json!(1), json!("4")] {
        v["characters"][0]["character"]["number"] = bad;
        assert!(only_problem(&v).contains("must be a whole number from 2 to 5"));
    }
}

#[test]
fn bad_style_and_role_list_the_choices() {
    let mut v = valid();
    v["characters"][0]["character"]["style"] = json!("Robot");
    v["characters"][0]["character"]["role"] = json!("Janitor");
    assert_eq!(
        problems(&v),
        vec![
            "campaign.json: characters[0].character.style = \"Robot\": not a style; allowed: \
             Alien, Android, Dangerous, Heroic, Hot-Shot, Intrepid, Savvy",
            "campaign.json: characters[0].character.role = \"Janitor\": not a role; allowed: \
             Doctor, Envoy, Engineer, Explorer, Pilot, Scientist, Soldier",
        ]
    );
}

#[test]
fn loose_spellings_of_game_words_are_accepted() {
    let mut v = valid();
    v["characters"][0]["character"]["style"] = json!("hot shot");
    v["party"]["ship_strengths"] = json!(["well armed", "POWERFUL SHIELDS"]);
    let c = parse(&v.to_string(), "campaign.json").unwrap();
    assert_eq!(c.seats[0].character.style, Style::HotShot);
    assert_eq!(
        c.ship.strengths,
        vec![ShipStrength::WellArmed, ShipStrength::PowerfulShields]
    );
}

#[test]
fn bad_ship_strength_lists_the_strengths() {
    let mut v = valid();
    v["party"]["ship_strengths"] = json!(["Fast", "Maneuverable"]);
    assert_eq!(
        only_problem(&v),
        "campaign.json: party.ship_strengths[1] = \"Maneuverable\": not a ship strength; allowed: \
         Fast, Nimble, Well-Armed, Powerful Shields, Superior Sensors, Cloaking Device, Fightercraft"
    );
}

#[test]
fn duplicate_ship_strength_is_reported() {
    let mut v = valid();
    v["party"]["ship_strengths"] = json!(["Fast", "fast"]);
    let p = only_problem(&v);
    assert!(
        p.starts_with(
            "campaign.json: party.ship_strengths[1] = \"fast\": same as ship_strengths[0]"
        ),
        "{p}"
    );
}

#[test]
fn ship_needs_exactly_two_strengths() {
    for wrong in [
        json!(["Fast"]),
        json!(["Fast", "Nimble", "Well-Armed"]),
        json!([]),
        json!("Fast"),
    ] {
        let mut v = valid();
        v["party"]["ship_strengths"] = wrong.clone();
        let p = only_problem(&v);
        assert!(
            p.starts_with(&format!("campaign.json: party.ship_strengths = {wrong}: must list exactly 2 different ship strengths")),
            "{p}"
        );
    }
}

#[test]
fn bad_ship_problem_lists_the_problems() {
    let mut v = valid();
    v["party"]["ship_problem"] = json!("Fuel cells depleting rapidly");
    assert!(only_problem(&v).ends_with(
        "not a ship problem; allowed: Fuel Hog, Only One Medical Pod, Horrible Circuit Breakers, Grim Reputation"
    ));
}

#[test]
fn unknown_field_suggests_the_near_miss_and_lists_the_fields() {
    let mut v = valid();
    let player = v["characters"][0]["player"].as_object_mut().unwrap();
    let x = player.remove("risk_tolerance").unwrap();
    player.insert("risk_tolerence".into(), x);
    let found = problems(&v);
    assert!(
        found.contains(
            &"campaign.json: characters[0].player.risk_tolerence = 0.6: unknown field \
        (did you mean \"risk_tolerance\"?); allowed fields: agent_id, player_name, player_goal, \
        analytical_score, risk_tolerance, detail_oriented, emotional_memory, assertiveness, \
        cooperativeness, openness, rule_adherence, roleplay_intensity"
                .to_string()
        ),
        "{found:#?}"
    );
    // One typo is one mistake: the real field's absence is not reported a second time.
    assert_eq!(found.len(), 1, "{found:#?}");

    let mut v = valid();
    v["weather"] = json!("rainy");
    let p = only_problem(&v);
    assert!(
        p.contains("weather = \"rainy\": unknown field; allowed fields: campaign_name"),
        "{p}"
    );
}

#[test]
fn corruption_strength_is_optional_and_between_0_and_1() {
    let v = valid();
    assert_eq!(
        parse(&v.to_string(), "campaign.json")
            .unwrap()
            .corruption_strength,
        0.0
    );
    let mut v = valid();
    v["corruption_strength"] = json!(0.3);
    assert_eq!(
        parse(&v.to_string(), "campaign.json")
            .unwrap()
            .corruption_strength,
        0.3
    );
    v["corruption_strength"] = json!(1.5);
    let p = only_problem(&v);
    assert!(
        p.contains("corruption_strength = 1.5: must be a number from 0.0"),
        "{p}"
    );
}

#[test]
fn duplicate_ids_point_at_the_first_use() {
    let mut v = valid();
    v["characters"] = json!([seat("alex", "zara"), seat("alex", "zara")]);
    assert_eq!(
        problems(&v),
        vec![
            "campaign.json: characters[1].player.agent_id = \"alex\": already used by \
             characters[0].player.agent_id; each agent_id must be unique",
            "campaign.json: characters[1].character.character_id = \"zara\": already used by \
             characters[0].character.character_id; each character_id must be unique",
        ]
    );
}

#[test]
fn ids_must_be_usable_in_file_names() {
    let mut v = valid();
    v["characters"][0]["player"]["agent_id"] = json!("Alex Smith");
    assert!(
        only_problem(&v)
            .contains("agent_id = \"Alex Smith\": must be a non-empty id of lowercase letters")
    );
}

#[test]
fn between_one_and_four_characters() {
    let mut v = valid();
    v["characters"] = json!([]);
    assert!(
        only_problem(&v).starts_with("campaign.json: characters = []: must list 1 to 4 entries")
    );

    let five: Vec<Value> = (0..5)
        .map(|i| seat(&format!("p{i}"), &format!("c{i}")))
        .collect();
    v["characters"] = json!(five);
    let p = only_problem(&v);
    assert!(p.starts_with("campaign.json: characters = [{"), "{p}");
    assert!(p.contains("must list 1 to 4 entries"), "{p}");
}

#[test]
fn missing_required_fields_are_named() {
    let mut v = valid();
    v["characters"][0]["character"]
        .as_object_mut()
        .unwrap()
        .remove("number");
    v.as_object_mut().unwrap().remove("gm_name");
    assert_eq!(
        problems(&v),
        vec![
            "campaign.json: gm_name is missing: must be a non-empty string: the GM's name (dm_name is accepted too)",
            "campaign.json: characters[0].character.number is missing: must be a whole number from 2 to 5 \
             (2–3 lean FEELINGS, 4–5 lean LASERS)",
        ]
    );
}

#[test]
fn dm_name_is_accepted_for_gm_name_but_not_both() {
    let mut v = valid();
    let gm = v.as_object_mut().unwrap().remove("gm_name").unwrap();
    v["dm_name"] = gm;
    assert_eq!(parse(&v.to_string(), "c.json").unwrap().gm_name, "Ryan");
    v["gm_name"] = json!("Sam");
    assert!(only_problem(&v).contains("dm_name = \"Ryan\": dm_name is another name for gm_name"));
}

#[test]
fn absent_optional_fields_take_the_rulebook_defaults() {
    let mut v = valid();
    v["party"].as_object_mut().unwrap().remove("ship_name");
    let ch = v["characters"][0]["character"].as_object_mut().unwrap();
    ch.remove("equipment");
    ch.remove("mannerisms");
    v["characters"][0]["player"]
        .as_object_mut()
        .unwrap()
        .remove("player_goal");
    let c = parse(&v.to_string(), "c.json").unwrap();
    assert_eq!(c.ship.name, "The Raptor");
    let kit = c.seats[0].character.equipment.join(" | ");
    assert!(
        kit.contains("vacc-suit")
            && kit.contains("universal translator")
            && kit.contains("phase pistol"),
        "{kit}"
    );
    assert!(c.seats[0].character.mannerisms.is_empty());
    assert!(
        c.seats[0]
            .player
            .player_goal
            .contains("crazy space adventures")
    );
}

#[test]
fn list_items_must_be_non_empty_strings() {
    let mut v = valid();
    v["characters"][0]["character"]["equipment"] = json!(["Multi-tool", ""]);
    v["characters"][0]["character"]["mannerisms"] = json!("Tilts head");
    assert_eq!(
        problems(&v),
        vec![
            "campaign.json: characters[0].character.equipment[1] = \"\": must be a non-empty string",
            "campaign.json: characters[0].character.mannerisms = \"Tilts head\": must be a list of non-empty strings, e.g. [\"Multi-tool\"]",
        ]
    );
}

#[test]
fn model_block_is_checked() {
    let mut v = valid();
    v["model"] = json!({ "provider": "OpenAI", "model": "gpt-4o-mini", "context_tokens": 8192 });
    let m = parse(&v.to_string(), "c.json").unwrap().model.unwrap();
    assert_eq!(
        (m.provider.as_str(), m.context_tokens),
        ("openai", Some(8192))
    );

    v["model"] = json!({ "provider": "skynet", "context_tokens": 0, "api_key": "sk-..." });
    let found = problems(&v);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0]
            .contains("model.api_key = \"sk-...\": unknown field (did you mean \"api_key_env\"?)"),
        "{found:#?}"
    );
    assert!(found[1].contains("model.provider = \"skynet\": not a provider; allowed: openai, anthropic, ollama, openai-compatible, replay, local"));
    assert!(found[2].contains("model.context_tokens = 0: must be a positive whole number"));
}

#[test]
fn syntax_error_gives_line_and_column() {
    let text = "{\n  \"campaign_name\": \"x\",\n  \"gm_name\": \"y\"\n  \"party\": {}\n}";
    match parse(text, "campaign.json") {
        Err(e @ Error::Syntax { line, column, .. }) => {
            assert_eq!((line, column), (4, 3));
            assert_eq!(
                e.to_string(),
                "campaign.json:4:3: not valid JSON: expected `,` or `}`"
            );
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn five_mistakes_give_five_problems_and_a_counted_header() {
    let mut v = valid();
    let name = v.as_object_mut().unwrap().remove("campaign_name").unwrap();
    v["campain_name"] = name;
    v["party"]["ship_strengths"] = json!(["Fast", "Maneuverable"]);
    v["characters"][0]["player"]["openness"] = json!(-0.2);
    v["characters"][0]["character"]["number"] = json!(7);
    v["characters"][0]["character"]["role"] = json!("Captain");
    let err = parse(&v.to_string(), "campaign.json").unwrap_err();
    let Error::Invalid { problems, .. } = &err else {
        panic!("{err}")
    };
    let paths: Vec<&str> = problems.iter().map(|p: &Problem| p.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "campain_name",
            "party.ship_strengths[1]",
            "characters[0].player.openness",
            "characters[0].character.role",
            "characters[0].character.number",
        ]
    );
    assert!(
        problems[0]
            .allowed
            .contains("did you mean \"campaign_name\"?")
    );
    let text = err.to_string();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("campaign.json has 5 problems:"));
    let rest: Vec<&str> = lines.collect();
    assert_eq!(rest.len(), 5, "{text}");
    assert!(
        rest.iter().all(|l| l.starts_with("campaign.json: ")),
        "{text}"
    );
}

#[test]
fn one_problem_is_counted_in_the_singular() {
    let mut v = valid();
    v["characters"][0]["character"]["number"] = json!(6);
    let err = parse(&v.to_string(), "campaign.json").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("campaign.json has 1 problem:\n"),
        "{err}"
    );
}

#[test]
fn unreadable_file_names_the_path() {
    let err = load(Path::new("/no/such/dir/campaign.json")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("could not read campaign file /no/such/dir/campaign.json"),
        "{msg}"
    );
}

#[test]
fn example_files_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let one = load(&root.join("campaign.json")).unwrap();
    assert_eq!(one.seats.len(), 1);
    // A logical android engineer leans LASERS, which is a HIGH number.
    assert!(one.seats[0].character.number.get() >= 4);
    assert_eq!(
        one.model.as_ref().unwrap().replay_file.as_deref(),
        Some("campaign.replay.jsonl")
    );

    let party = load(&root.join("party.json")).unwrap();
    assert_eq!(party.seats.len(), 3);
    assert_eq!(party.model.unwrap().provider, "replay");
}

#[test]
fn campaign_round_trips_through_json_for_the_session_log() {
    let c = parse(&valid().to_string(), "c.json").unwrap();
    let back: troupe_campaign::Campaign =
        serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
}

#[test]
fn memory_extraction_is_on_unless_the_file_turns_it_off() {
    let v = valid();
    assert!(
        parse(&v.to_string(), "campaign.json")
            .unwrap()
            .memory_extraction
    );
    let mut v = valid();
    v["memory"] = json!({"extraction": false});
    assert!(
        !parse(&v.to_string(), "campaign.json")
            .unwrap()
            .memory_extraction
    );
    v["memory"] = json!({"extraction": "no"});
    let p = only_problem(&v);
    assert!(
        p.contains("memory.extraction = \"no\": must be true"),
        "{p}"
    );
    v["memory"] = json!({"extract": true});
    let p = only_problem(&v);
    assert!(p.contains("did you mean \"extraction\"?"), "{p}");
}

#[test]
fn memory_can_live_on_a_graph_server_named_by_backend_and_url() {
    let mut v = valid();
    assert_eq!(
        parse(&v.to_string(), "campaign.json")
            .unwrap()
            .memory_server,
        None
    );
    v["memory"] =
        json!({"backend": "falkordb", "url": "redis://localhost:6379", "graph": "raptor"});
    let c = parse(&v.to_string(), "campaign.json").unwrap();
    let server = c.memory_server.unwrap();
    assert_eq!(
        (
            server.backend.as_str(),
            server.url.as_str(),
            server.graph.as_deref()
        ),
        ("falkordb", "redis://localhost:6379", Some("raptor"))
    );
    assert!(c.memory_extraction);
    v["memory"] = json!({"backend": "sqlite"});
    assert_eq!(
        parse(&v.to_string(), "campaign.json")
            .unwrap()
            .memory_server,
        None
    );
    v["memory"] = json!({"backend": "neo4j"});
    let p = only_problem(&v);
    assert!(
        p.contains("memory.url") && p.contains("is required with backend falkordb or neo4j"),
        "{p}"
    );
    v["memory"] = json!({"backend": "mongo", "url": "x"});
    let p = only_problem(&v);
    assert!(
        p.contains("memory.backend = \"mongo\": must be sqlite"),
        "{p}"
    );
}

/// Seed 003's character registry: a profile per character, every field optional; a bad one
/// names the field and what it must be.
#[test]
fn profiles_are_optional_and_each_mistake_is_named() {
    let mut v = valid();
    v["profiles"] = json!({
        "Zara-7": {"pronouns": "she/her", "class": "engineer", "level": 3},
        "Mara": {"pronouns": "they/them", "ancestry": "half-elf", "backstory": "Raised by smugglers."}
    });
    let c = parse(&v.to_string(), "campaign.json").unwrap();
    assert_eq!(
        c.profiles["Zara-7"].describe(),
        "she/her; engineer, level 3"
    );
    assert_eq!(
        c.profiles["Mara"].describe(),
        "they/them; half-elf. Raised by smugglers."
    );
    v["profiles"] = json!({"Mara": {"pronoun": "they", "level": 99}});
    let found = problems(&v);
    assert!(
        found.iter().any(|p| p.contains("profiles.Mara.pronoun")
            && p.contains("did you mean \"pronouns\"")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.contains("profiles.Mara.level") && p.contains("1 to 30")),
        "{found:#?}"
    );
    v["profiles"] = json!(["Mara"]);
    assert!(only_problem(&v).contains("character name → profile"));
}
