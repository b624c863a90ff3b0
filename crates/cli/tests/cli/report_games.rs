//! `troupe report` and `troupe stats` on a campaign that plays all three games: a Lasers &
//! Feelings session, an encounter run and a scene, each with recorded replies through the real
//! binary. The report has a section per encounter run and per scene beside the sessions, the
//! GM's scorecard, and an audit of every game's model calls; a campaign with only encounter
//! runs and scenes is reported instead of failing; a person's name that is markup is shown as
//! text.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::browser::{browser_or_skip, dom, pixels_of, screenshot};
use support::{copy_examples, examples, run, run_with, troupe};

/// A name that runs a script if a page ever takes it for markup.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";
/// Mara's lines in the smithy encounter: her first action, Enter for her roll, her second.
/// The first carries markup that changes the page if a browser ever runs it.
const MARA: &str = "I offer to work the <b>bellows</b> myself <img src=x onerror=document.body.setAttribute('data-pwned',1)>\n\nI keep pumping the bellows\n";

/// The encounter of `tests/encounter.rs`, with an AI player named `HOSTILE`.
pub fn play_encounter(d: &Path) {
    let party = std::fs::read_to_string(examples().join("party.json")).unwrap();
    let renamed = party.replace(
        "\"player_name\": \"Alex\"",
        &format!("\"player_name\": \"{HOSTILE}\""),
    );
    assert_ne!(party, renamed);
    std::fs::write(d.join("campaign.json"), renamed).unwrap();
    std::fs::create_dir_all(d.join("encounters")).unwrap();
    for f in ["smithy.yaml", "smithy.replay.jsonl"] {
        std::fs::copy(
            examples().join("encounters").join(f),
            d.join("encounters").join(f),
        )
        .unwrap();
    }
    let args = [
        "encounter",
        "run",
        "encounters/smithy.yaml",
        "--players",
        "human:Mara,ai,ai",
        "--seed",
        "12",
        "--replay",
        "encounters/smithy.replay.jsonl",
    ];
    let out = run_with(d, &args, MARA);
    assert!(out.contains("The encounter is over."), "{out}");
}

/// A scene with an AI at the player's seat (two recorded lines).
pub fn play_scene(d: &Path) {
    copy_examples(d, &["mill.scene.yaml"]);
    std::fs::write(
        d.join("ai.replay.jsonl"),
        concat!(
            r#"{"agent": "*", "purpose": "scene_player", "content": "I head into the mill yard."}"#,
            "\n",
            r#"{"agent": "*", "purpose": "scene_player", "content": "I talk to Old Tam about the ledger."}"#,
            "\n"
        ),
    )
    .unwrap();
    run(
        d,
        &[
            "scene",
            "play",
            "mill.scene.yaml",
            "--seed",
            "2",
            "--player",
            "ai",
            "--ai-lines",
            "2",
            "--replay",
            "ai.replay.jsonl",
        ],
    );
}

pub fn play_session(d: &Path) {
    copy_examples(
        d,
        &["party.json", "research.gm.yaml", "research.replay.jsonl"],
    );
    run(
        d,
        &[
            "play",
            "party.json",
            "--gm-script",
            "research.gm.yaml",
            "--replay",
            "research.replay.jsonl",
            "--seed",
            "11",
        ],
    );
}

/// The encounter's events as `troupe encounter log` prints them.
fn encounter_log(d: &Path) -> Vec<Value> {
    run(d, &["encounter", "log", "--run", "1"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn stats_json(d: &Path, args: &[&str]) -> Value {
    let mut all = vec!["stats", "--json"];
    all.extend(args);
    serde_json::from_str(&run(d, &all)).unwrap()
}

/// The audit's row for a game.
pub fn calls<'a>(stats: &'a Value, game: &str) -> &'a Value {
    stats["audit"]["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["game"] == game)
        .unwrap_or_else(|| panic!("no {game} row in {}", stats["audit"]))
}

/// What a report section holds: from its heading to the next section's.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let (_, rest) = html
        .split_once(&format!("<h2 id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    rest.split("<h2 ").next().unwrap()
}

fn assert_escaped(html: &str) {
    assert!(
        !html.contains("<img"),
        "markup from the log reached the page"
    );
    assert!(
        !html.contains("<b>bellows"),
        "a person's markup reached the page"
    );
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("&lt;b&gt;bellows&lt;/b&gt;"));
}

#[test]
fn a_campaign_of_all_three_games_is_reported_in_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    play_session(d);
    play_encounter(d);
    play_scene(d);

    let out = run(d, &["report", "-o", "report.html"]);
    assert!(out.contains("session 1, 1 encounter run, 1 scene"), "{out}");
    assert!(out.contains("log complete"), "{out}");
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert_escaped(&html);
    // The sessions' sections and the games' sections, in one page.
    for id in [
        "summary",
        "consensus",
        "dice",
        "encounters",
        "scenes",
        "transcript",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no section {id}");
    }

    // The encounter: the story as the players saw it, what was caught behind the screen, the
    // rolls and the GM's scorecard, from the same log `troupe encounter log` prints.
    let log = encounter_log(d);
    let enc = section(&html, "encounters");
    assert!(enc.contains("Encounter run 1: The Cold Forge"), "{enc}");
    assert!(enc.contains("Rain needles the shutters"));
    assert!(enc.contains("Leak caught"));
    assert!(enc.contains("GM reply refused") && enc.contains("fireball"));
    assert!(enc.contains("rolls for") && enc.contains("against DC"));
    assert!(enc.contains("The GM&#39;s scorecard") || enc.contains("The GM's scorecard"));
    assert!(enc.contains("narrations caught leaking"));
    assert!(enc.contains("Resolved"));
    for e in &log {
        let anchor = format!("id=\"encounter1-ev-{}\"", e["seq"]);
        if e["event_type"] != "started" {
            assert!(
                enc.contains(&anchor),
                "{} is not in the report",
                e["event_type"]
            );
        }
    }
    // What each model was shown: the GM's request is in the page.
    let gm_calls: Vec<&Value> = log
        .iter()
        .filter(|e| e["event_type"] == "gm_called")
        .collect();
    let shown = gm_calls[0]["call"]["attempts"][0]["messages"][0]["content"]
        .as_str()
        .unwrap();
    let first_line = shown.lines().next().unwrap();
    assert!(enc.contains(&first_line.replace('\'', "&#39;").replace('"', "&quot;")));

    // The scene: the AI player's lines, the engine's narration, its model calls.
    let scene = section(&html, "scenes");
    assert!(scene.contains("Scene 1: mill-night"), "{scene}");
    assert!(scene.contains("I head into the mill yard."));
    assert!(scene.contains("moves from the mill road to the mill yard"));
    assert!(scene.contains("model call: scene_player"));

    // The audit covers every game's model calls, each keeping what the model was shown.
    let stats = stats_json(d, &[]);
    let enc_calls = calls(&stats, "encounter");
    let logged = log
        .iter()
        .filter(|e| {
            matches!(
                e["event_type"].as_str(),
                Some("gm_called" | "player_called")
            )
        })
        .count();
    assert_eq!(enc_calls["calls"], logged);
    assert!(enc_calls["attempts"].as_u64().unwrap() >= logged as u64);
    assert_eq!(enc_calls["with_request"], enc_calls["attempts"]);
    let scene_calls = calls(&stats, "scene");
    assert_eq!(scene_calls["calls"], 2);
    assert_eq!(scene_calls["with_request"], scene_calls["attempts"]);
    let lf = calls(&stats, "lasers_and_feelings");
    assert!(lf["calls"].as_u64().unwrap() > 0, "{lf}");
    assert!(stats["audit"]["run_gaps"].as_array().unwrap().is_empty());
    let table = section(&html, "summary");
    assert!(table.contains("Model calls audited, per game"));
    assert!(table.contains("encounter runs") && table.contains("scenes"));

    // --all: the same games beside every session.
    let out = run(d, &["report", "--all", "-o", "all.html"]);
    assert!(
        out.contains("campaign, 1 session, 1 encounter run, 1 scene"),
        "{out}"
    );
    let all = std::fs::read_to_string(d.join("all.html")).unwrap();
    assert!(all.contains("id=\"encounters\"") && all.contains("id=\"scenes\""));
    // A session asked for by number is that session alone.
    run(d, &["report", "1", "-o", "one.html"]);
    let one = std::fs::read_to_string(d.join("one.html")).unwrap();
    assert!(!one.contains("id=\"encounters\""));
}

#[test]
fn a_campaign_of_only_encounters_and_scenes_is_reported_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    play_encounter(d);

    let out = run(d, &["report", "-o", "report.html"]);
    assert!(out.contains("campaign, 1 encounter run"), "{out}");
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert_escaped(&html);
    assert!(html.contains("id=\"encounters\""));
    assert!(html.contains("No Lasers &amp; Feelings sessions in this campaign yet"));
    assert!(
        !html.contains("id=\"consensus\""),
        "no empty session sections"
    );

    play_scene(d);
    for args in [
        &["report", "-o", "r.html"][..],
        &["report", "--all", "-o", "r.html"],
    ] {
        let out = run(d, args);
        assert!(out.contains("1 encounter run, 1 scene"), "{args:?}: {out}");
    }
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.contains("id=\"scenes\"") && html.contains("id=\"encounters\""));

    // stats reads the same campaign; log says what there is instead of a SQLite error.
    let stats = stats_json(d, &[]);
    assert_eq!(calls(&stats, "scene")["calls"], 2);
    let text = run(d, &["stats"]);
    assert!(
        text.contains("encounter calls / attempts / with request"),
        "{text}"
    );
    let out = troupe().current_dir(d).args(["log"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("no such table"), "{err}");
    assert!(err.contains("1 encounter run, 1 scene"), "{err}");
}

/// The games' report as a reader's browser shows it: markup from the log is text on the page,
/// no script runs, and the encounter's and scene's rows are painted (their tags' colours).
#[test]
fn the_games_report_in_a_real_browser_shows_markup_as_text() {
    let Some(browser) = browser_or_skip("the games report's browser test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    play_encounter(d);
    play_scene(d);
    run(d, &["report", "-o", "games.html"]);
    let page = d.join("games.html");

    let dom = dom(&browser, &page);
    assert!(
        dom.contains("Encounter run 1"),
        "the page did not load:\n{dom}"
    );
    assert!(
        !dom.contains("<img"),
        "the browser made an element of text from the log"
    );
    assert!(
        !dom.contains("data-pwned=\"1\""),
        "a script from the log ran"
    );
    assert!(
        dom.contains("setAttribute('data-pwned',1)"),
        "the action is shown as text"
    );
    assert!(dom.contains("&lt;img src=x onerror=alert(1)&gt;"));

    let png = d.join("games.png");
    let rgb = screenshot(&browser, &page, &png, (1280, 4000));
    if let Ok(keep) = std::env::var("TROUPE_REPORT_PNG") {
        std::fs::copy(&png, keep).unwrap();
    }
    for (tag, colour) in [
        ("GM narration", [0x55, 0x55, 0x55]),
        ("a character's action", [0x3b, 0x6f, 0xd8]),
        ("a roll", [0xc9, 0xa2, 0x27]),
        ("a leak caught", [0xb3, 0x26, 0x1e]),
        ("the scene engine", [0x3a, 0x7d, 0x5c]),
    ] {
        let n = pixels_of(&rgb, colour);
        assert!(
            n >= 300,
            "{tag}: {n} pixels of its tag's colour in the screenshot"
        );
    }
}

/// Issue 46: `troupe stats` on a campaign of only encounters and scenes printed a Lasers &
/// Feelings block of zeros (turns, validation, dice…) and an empty scorecard per model although
/// the encounter made model calls. It shows the games' own figures, and only those: their
/// calls, a scorecard per model counting every call, the encounter GM's scorecard, the scenes'
/// figures.
#[test]
fn stats_of_only_encounters_and_scenes_show_their_own_figures_and_only_those() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    play_encounter(d);
    play_scene(d);
    let log = encounter_log(d);
    let enc_calls = log
        .iter()
        .filter(|e| {
            matches!(
                e["event_type"].as_str(),
                Some("gm_called" | "player_called")
            )
        })
        .count() as u64;
    assert!(enc_calls > 0);

    let text = run(d, &["stats"]);
    for lf in [
        "Validation (overreach check)",
        "Dice (d6",
        "turns completed",
        "LASER FEELINGS",
        "\nScorecard per model\n",
    ] {
        assert!(!text.contains(lf), "{lf:?} is a session's figure:\n{text}");
    }
    assert!(
        text.contains("Scorecard per model: encounter runs and scenes"),
        "{text}"
    );
    let row = |game: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.trim_start().starts_with(game) && l.contains("replay:"))
            .unwrap_or_else(|| panic!("no {game} row:\n{text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // game, model, runs, calls, …
    let enc = row("encounter");
    assert_eq!(enc[2], "1", "{enc:?}");
    assert_eq!(enc[3], enc_calls.to_string(), "{enc:?}");
    assert_eq!(row("scene")[3], "2");
    assert!(
        text.contains("Encounter runs: the GM's scorecard"),
        "{text}"
    );
    // The scenes' own figures, the table `troupe scene stats` prints.
    let scene_table = run(d, &["scene", "stats"]);
    assert!(scene_table.starts_with("Scene runs\n"), "{scene_table}");
    assert!(text.contains(&scene_table), "{text}");

    let stats = stats_json(d, &[]);
    let scene_cards: Vec<Value> = run(d, &["scene", "stats", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(stats["scenes"], Value::Array(scene_cards));
    assert_eq!(stats["scenes"][0]["model_calls"], 2, "{}", stats["scenes"]);
    assert!(stats["metrics"].is_null(), "{}", stats["metrics"]);
    assert!(stats["cost"].is_null());
    let card = stats["game_scorecard"].as_array().unwrap();
    let calls_of = |game: &str| -> u64 {
        card.iter()
            .filter(|r| r["game"] == game)
            .map(|r| r["calls"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(calls_of("encounter"), enc_calls);
    assert_eq!(calls_of("encounter"), calls(&stats, "encounter")["calls"]);
    assert_eq!(calls_of("scene"), 2);
    let tokens: u64 = card
        .iter()
        .filter(|r| r["game"] == "encounter")
        .map(|r| r["tokens_in"].as_u64().unwrap())
        .sum();
    assert_eq!(
        Some(tokens),
        calls(&stats, "encounter")["tokens_in"].as_u64()
    );

    // The report has the same scorecard, and no session's.
    run(d, &["report", "-o", "report.html"]);
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert!(!html.contains("id=\"scorecard\""), "a sessions' scorecard");
    let table = html
        .split("Scorecard per model: encounter runs and scenes")
        .nth(1)
        .unwrap_or_else(|| panic!("no game scorecard in the report"))
        .split("</table>")
        .next()
        .unwrap();
    let model = html_escaped(&enc[1]);
    assert!(
        table.contains(&format!(
            "<td>encounter</td><td>{model}</td><td>1</td><td>{enc_calls}</td>"
        )),
        "{table}"
    );
}

fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Issue 46: a seat that joined mid-run (`seat_joined`) was missing from the report's seat
/// table; and a person's action the overreach check flagged was counted in the GM's scorecard
/// as an AI player's action sent back.
#[test]
fn the_report_seats_a_joined_seat_and_scores_a_persons_flagged_action_as_theirs() {
    use crate::encounter::{RUN, campaign, log as enc_log, of};
    let dir = campaign();
    let d = dir.path();
    // Mara (a person) first says what happens; asked again, she rephrases. Then she stops.
    let out = run_with(
        d,
        &RUN,
        "I slip past the smith unseen\nI offer to work the bellows myself\n\n/quit\n",
    );
    assert!(!out.contains("The encounter is over."), "{out}");
    let before = enc_log(d, 1);
    let flagged = of(&before, "action_sent_back");
    assert_eq!(flagged.len(), 1, "Mara's first action is flagged: {out}");
    assert_eq!(flagged[0]["seat"], "p1");
    run_with(
        d,
        &[
            "encounter",
            "resume",
            "--join",
            "human:Kit",
            "--replay",
            "encounters/smithy.replay.jsonl",
        ],
        "I hold the lantern up for the smith\nI keep pumping the bellows\n",
    );
    let after = enc_log(d, 1);
    assert_eq!(of(&after, "seat_joined").len(), 1);

    run(d, &["report", "-o", "report.html"]);
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    let enc = section(&html, "encounters");
    let table = enc
        .split("<th>seat</th></tr>")
        .nth(1)
        .unwrap()
        .split("</table>")
        .next()
        .unwrap();
    let kit = table
        .split("<tr>")
        .find(|r| r.contains("<td>Kit</td>"))
        .unwrap_or_else(|| panic!("Kit is not in the seat table: {table}"));
    assert!(kit.contains("a person, joined mid-run"), "{kit}");

    let stats = stats_json(d, &[]);
    let card = &stats["encounters"][0];
    let ai_sent_back = of(&after, "action_sent_back")
        .iter()
        .filter(|e| e["seat"] != "p1" && e["seat"] != "p4")
        .count();
    assert_eq!(card["actions_sent_back"], ai_sent_back as u64, "{card}");
    assert!(
        card["people_actions_flagged"].as_u64().unwrap() >= 1,
        "{card}"
    );
    assert!(
        enc.contains("people&#39;s actions flagged") || enc.contains("people's actions flagged")
    );
}

/// Issue 48: an encounter run holding an event kind a newer troupe wrote stopped `troupe stats`
/// and `troupe report` ("unknown variant …"), and `troupe encounter stats` and `log`: each read
/// the run strictly. Every reader reads it now, the kind left out of the figures (the GM's
/// scorecard is the one the run had without it), the log printing it as written, the report
/// written. A damaged event of a known kind is still named.
#[test]
fn an_encounter_event_from_a_newer_troupe_is_read_as_unknown_by_stats_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    play_encounter(d);
    let before = stats_json(d, &[])["encounters"].clone();
    assert_eq!(before.as_array().map(Vec::len), Some(1), "{before}");
    let card_before = run(d, &["encounter", "stats", "--json"]);

    let db = rusqlite::Connection::open(d.join("campaign.db")).unwrap();
    let middle: u64 = db
        .query_row(
            "SELECT seq FROM encounter_events WHERE run = 1 ORDER BY seq LIMIT 1 OFFSET 3",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // The events after the middle move up one seq, in the row and in the body (the key is
    // (run, seq): through negatives, so no two rows meet).
    db.execute_batch(
        &"UPDATE encounter_events SET seq = -(seq + 1), body = json_set(body, '$.seq', seq + 1)
            WHERE run = 1 AND seq > MIDDLE;
          UPDATE encounter_events SET seq = -seq WHERE run = 1 AND seq < 0;"
            .replace("MIDDLE", &middle.to_string()),
    )
    .unwrap();
    let future = serde_json::json!({"seq": middle + 1, "event_type": "weather_changed",
        "at": "2031-01-01T00:00:00Z", "sky": "violet"});
    db.execute(
        "INSERT INTO encounter_events (run, seq, event_type, body) VALUES (1, ?1, ?2, ?3)",
        rusqlite::params![middle + 1, "weather_changed", future.to_string()],
    )
    .unwrap();
    drop(db);

    assert_eq!(stats_json(d, &[])["encounters"], before);
    assert_eq!(run(d, &["encounter", "stats", "--json"]), card_before);
    // The log prints the newer event as it was written, in its place.
    let log = encounter_log(d);
    assert_eq!(log[middle as usize + 1], future, "{log:?}");
    let out = run(d, &["report", "-o", "report.html"]);
    assert!(d.join("report.html").is_file(), "{out}");

    let db = rusqlite::Connection::open(d.join("campaign.db")).unwrap();
    db.execute(
        "UPDATE encounter_events SET body = json_set(body, '$.text', json('[1]')) \
         WHERE run = 1 AND event_type = 'player_acted'",
        [],
    )
    .unwrap();
    drop(db);
    let err = troupe().current_dir(d).args(["stats"]).output().unwrap();
    assert!(!err.status.success());
    let said = String::from_utf8_lossy(&err.stderr);
    assert!(
        said.contains("\"player_acted\" event cannot be read"),
        "{said}"
    );
}
