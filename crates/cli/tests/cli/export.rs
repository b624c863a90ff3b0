//! `troupe export` end to end: a recorded batch played by `troupe simulate`, exported, and read
//! back by an independent reader (Python's pyarrow, the library pandas reads Parquet with),
//! checked against what `troupe stats --json` says of the same batch. Without Python and
//! pyarrow the test says so and skips, except in CI (`CI` set), where it fails; scripts/setup
//! installs pyarrow.
//!
//! The test binary is the default build (no dev-dependency turns the Parquet writer on): a
//! default build that stopped exporting fails here, as the README's researcher would.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::report_games::{calls, play_encounter, play_scene, play_session, stats_json};
use crate::support::browser::in_ci;
use crate::support::{campaign_with, read_log, run, troupe};

const TABLES: [&str; 6] = [
    "events",
    "model_calls",
    "turns",
    "verdicts",
    "scorecards",
    "game_runs",
];

/// Reads every .parquet file of a directory with pyarrow and prints, as JSON, what the test
/// compares: rows, the schema version, column types and a few sums per table.
const READER: &str = r#"
import json, sys
import pyarrow.parquet as pq
out = {}
for name in ["events", "model_calls", "turns", "verdicts", "scorecards", "game_runs"]:
    f = pq.ParquetFile(f"{sys.argv[1]}/{name}.parquet")
    t = f.read()
    meta = f.schema_arrow.metadata or {}
    out[name] = {
        "rows": t.num_rows,
        "version": meta.get(b"troupe.export_schema_version", b"").decode(),
        "types": {c: str(t.schema.field(c).type) for c in t.column_names},
        "columns": t.to_pydict(),
    }
print(json.dumps(out, default=str))
"#;

/// python3, seeing also the pyarrow scripts/setup installs into troupe's data directory where
/// pip may not install into the system's Python.
fn python() -> std::process::Command {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            let home = std::path::PathBuf::from(std::env::var_os("HOME")?);
            Some(if cfg!(target_os = "macos") {
                home.join("Library/Application Support")
            } else {
                home.join(".local/share")
            })
        });
    let mut paths: Vec<std::path::PathBuf> =
        data.map(|d| d.join("troupe/python")).into_iter().collect();
    paths.extend(std::env::split_paths(
        &std::env::var_os("PYTHONPATH").unwrap_or_default(),
    ));
    let mut cmd = std::process::Command::new("python3");
    cmd.env("PYTHONPATH", std::env::join_paths(paths).unwrap());
    cmd
}

fn python_with_pyarrow() -> bool {
    python()
        .args(["-c", "import pyarrow.parquet"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The tables of `dir` as pyarrow read them, or None after saying why the test is skipped.
fn read_back(dir: &Path) -> Option<Value> {
    if !python_with_pyarrow() {
        let msg = "python3 with pyarrow is not installed: the export cannot be read back (scripts/setup installs it: pip install pyarrow)";
        assert!(!in_ci(), "{msg}");
        eprintln!("\n*** SKIPPED: {msg} ***\n");
        return None;
    }
    let out = python().arg("-c").arg(READER).arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "pyarrow could not read {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn export(dir: &Path, args: &[&str]) -> Output {
    troupe()
        .current_dir(dir)
        .arg("export")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// A column's values.
fn col<'a>(tables: &'a Value, table: &str, column: &str) -> &'a Vec<Value> {
    tables[table]["columns"][column]
        .as_array()
        .unwrap_or_else(|| panic!("{table}.{column} is missing"))
}

fn sum(tables: &Value, table: &str, column: &str) -> u64 {
    col(tables, table, column)
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

fn count_true(tables: &Value, table: &str, column: &str) -> usize {
    col(tables, table, column)
        .iter()
        .filter(|v| v.as_bool() == Some(true))
        .count()
}

/// A batch of three recorded party sessions (three players, three turns each).
fn batch() -> tempfile::TempDir {
    let dir = campaign_with(&["party.json", "research.gm.yaml", "research.replay.jsonl"]);
    run(
        dir.path(),
        &[
            "simulate",
            "party.json",
            "--seeds",
            "1..=3",
            "--model",
            "replay:research.replay.jsonl",
            "--jobs",
            "2",
            "--out",
            "runs",
            "--",
            "--gm-script",
            "research.gm.yaml",
        ],
    );
    dir
}

/// Issue 46: the binary the README's quick start builds (`cargo build --release`, default
/// features) refused to export and named a rebuild with `--features export`. The default build
/// exports: six Parquet files (the format's magic at both ends), no Python needed to see it.
#[test]
fn the_default_build_exports_without_a_rebuild() {
    let dir = campaign_with(&["party.json", "research.gm.yaml", "research.replay.jsonl"]);
    run(
        dir.path(),
        &[
            "play",
            "party.json",
            "--seed",
            "3",
            "--replay",
            "research.replay.jsonl",
            "--gm-script",
            "research.gm.yaml",
        ],
    );
    let out = export(dir.path(), &[".", "-o", "tables"]);
    let err = stderr(&out);
    assert!(
        out.status.success(),
        "the default build must export:\n{err}"
    );
    assert!(!err.contains("--features export"), "{err}");
    for name in TABLES {
        let bytes = std::fs::read(dir.path().join(format!("tables/{name}.parquet"))).unwrap();
        assert!(
            bytes.len() > 8 && bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
            "{name}.parquet is not a Parquet file"
        );
    }
}

/// The build the README's quick start makes (`cargo build --release`, default features) has
/// the Parquet writer, and nothing but the default features gives it to the tests' binary (a
/// dev-dependency turning it on hid that the default build could not export): as cargo itself
/// resolves troupe-cli's manifest.
#[test]
fn the_default_features_have_the_parquet_writer_and_the_tests_use_them() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cli = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "troupe-cli")
        .unwrap();
    let default: Vec<&str> = cli["features"]["default"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(default.contains(&"export"), "default features: {default:?}");
    assert_eq!(
        cli["features"]["export"],
        serde_json::json!(["troupe-export/parquet"])
    );
    for dep in cli["dependencies"].as_array().unwrap() {
        if dep["name"] == "troupe-export" {
            assert!(
                dep["features"].as_array().unwrap().is_empty(),
                "a {} dependency turns troupe-export's features on: {dep}",
                dep["kind"].as_str().unwrap_or("normal")
            );
        }
    }
}

#[test]
fn a_batch_exported_reads_back_in_pyarrow_as_troupe_stats_counts_it() {
    let dir = batch();
    let said = run(dir.path(), &["export", "runs", "-o", "tables"]);
    assert!(
        said.contains("3 sessions") && said.contains("model_calls.parquet"),
        "{said}"
    );
    let Some(tables) = read_back(&dir.path().join("tables")) else {
        return;
    };
    let stats: Value =
        serde_json::from_str(&run(dir.path(), &["stats", "--json", "--campaign", "runs"])).unwrap();
    let metrics = &stats["metrics"];
    for name in TABLES {
        assert_eq!(tables[name]["version"], "2", "{name} has no schema version");
    }
    assert!(
        col(&tables, "events", "game")
            .iter()
            .all(|g| g == "lasers_and_feelings")
    );
    assert_eq!(tables["game_runs"]["rows"], 0);

    // Every event of every run's log, each with its run and its own session number.
    let runs: Vec<String> = stats["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(runs.len(), 3);
    let logged: usize = runs
        .iter()
        .map(|r| read_log(&dir.path().join("runs").join(r).join("logs/session-1.jsonl")).len())
        .sum();
    assert!(logged > 100, "{logged}");
    assert_eq!(tables["events"]["rows"], logged);
    let ev_runs = col(&tables, "events", "run");
    for r in &runs {
        assert!(ev_runs.iter().any(|v| v == r.as_str()), "no event of {r}");
    }
    let payload: Value =
        serde_json::from_str(col(&tables, "events", "payload")[0].as_str().unwrap()).unwrap();
    assert_eq!(payload["event_type"], "session_started");
    assert_eq!(payload["session_number"], 1);
    assert!(payload.get("run").is_none(), "{payload}");
    assert_eq!(
        tables["events"]["types"]["timestamp"],
        "timestamp[us, tz=UTC]"
    );

    // The model calls: one row per attempt, their tokens and the answered ones as stats counts.
    let model = &metrics["model"];
    assert_eq!(tables["model_calls"]["rows"], model["attempts"]);
    assert_eq!(
        sum(&tables, "model_calls", "input_tokens"),
        model["tokens"]["input"].as_u64().unwrap()
    );
    assert_eq!(
        sum(&tables, "model_calls", "output_tokens"),
        model["tokens"]["output"].as_u64().unwrap()
    );
    assert!(sum(&tables, "model_calls", "input_tokens") > 0);
    assert_eq!(
        count_true(&tables, "model_calls", "ok") as u64,
        model["attempts"].as_u64().unwrap()
            - stats["scorecard"][0]["failed_calls"].as_u64().unwrap()
    );
    assert_eq!(tables["model_calls"]["types"]["input_tokens"], "int64");
    assert!(
        col(&tables, "model_calls", "model")
            .iter()
            .all(|m| m == "replay:research.replay.jsonl")
    );

    // The turns: one row per turn started (the script ends each session as its fourth begins),
    // the completed ones as stats counts them.
    assert_eq!(tables["turns"]["rows"], metrics["turns_started"]);
    assert_eq!(metrics["turns"], 9);
    assert_eq!(
        count_true(&tables, "turns", "completed") as u64,
        metrics["turns"].as_u64().unwrap()
    );
    assert_eq!(
        sum(&tables, "turns", "model_calls"),
        model["attempts"].as_u64().unwrap()
    );

    // The verdicts: every overreach check, and the ones sent back.
    let validation = &metrics["validation"];
    assert_eq!(tables["verdicts"]["rows"], validation["verdicts"]);
    let not_passed = col(&tables, "verdicts", "result")
        .iter()
        .filter(|r| *r != "passed")
        .count() as u64;
    assert!(
        not_passed >= 3,
        "the research script sends an action back in every session"
    );
    assert_eq!(
        Some(not_passed),
        stats["scorecard"][0]["overreach"].as_u64()
    );

    // The scorecards: one row per session, summing to the batch's row per model.
    let card = &stats["scorecard"][0];
    assert_eq!(tables["scorecards"]["rows"], 3);
    for field in ["turns", "actions", "calls", "tokens", "review_flags"] {
        assert_eq!(
            Some(sum(&tables, "scorecards", field)),
            card[field].as_u64(),
            "{field}"
        );
    }
}

#[test]
fn export_refuses_a_full_directory_and_a_path_that_is_nothing_to_export() {
    let dir = batch();
    let run_dir = format!("runs/{}", "party-seed2-replay-research");
    // One run's session, by its log file: only its own rows.
    run(
        dir.path(),
        &[
            "export",
            &format!("{run_dir}/logs/session-1.jsonl"),
            "-o",
            "one",
        ],
    );
    if let Some(tables) = read_back(&dir.path().join("one")) {
        assert_eq!(tables["scorecards"]["rows"], 1);
        assert!(col(&tables, "events", "run").iter().all(Value::is_null));
    }
    let refused = export(dir.path(), &["runs", "-o", "one"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("one already holds files")
            && stderr(&refused).contains("--force"),
        "{}",
        stderr(&refused)
    );
    run(dir.path(), &["export", "runs", "-o", "one", "--force"]);
    if let Some(tables) = read_back(&dir.path().join("one")) {
        assert_eq!(
            tables["scorecards"]["rows"], 3,
            "--force replaced the one-session export"
        );
    }
    let entries: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(
        entries.is_empty(),
        "temporary directories left: {entries:?}"
    );

    std::fs::write(dir.path().join("notes.txt"), "not a log").unwrap();
    for bad in ["notes.txt", "nowhere", "."] {
        let out = export(dir.path(), &[bad, "-o", "t"]);
        assert!(!out.status.success(), "{bad}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("{bad} is not a session, a campaign or a batch")),
            "{err}"
        );
        assert!(!dir.path().join("t").exists(), "{bad} left an output");
    }
}

/// The values of `column` in the rows of `table` whose `game` is `game`.
fn of_game<'a>(tables: &'a Value, table: &str, column: &str, game: &str) -> Vec<&'a Value> {
    col(tables, table, "game")
        .iter()
        .zip(col(tables, table, column))
        .filter(|(g, _)| *g == game)
        .map(|(_, v)| v)
        .collect()
}

fn sum_of_game(tables: &Value, table: &str, column: &str, game: &str) -> u64 {
    of_game(tables, table, column, game)
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// Events of a game's run as its own table in campaign.db holds them (no undo in these runs).
fn stored_events(d: &Path, game: &str) -> usize {
    let db = rusqlite::Connection::open(d.join("campaign.db")).unwrap();
    let undone: usize = db
        .query_row(
            &format!("SELECT count(*) FROM {game}_events WHERE event_type = 'undone'"),
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(undone, 0, "the test's {game} has no undo");
    db.query_row(
        &format!("SELECT count(*) FROM {game}_events WHERE run = 1"),
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// What the games' logs hold reaches their rows: each event's turn (an encounter's round, a
/// scene's turn), each model call's time, every request's seed.
fn every_row_has_its_turn_time_and_seed(tables: &Value) {
    for game in ["encounter", "scene"] {
        for table in ["events", "model_calls", "verdicts"] {
            let turns = of_game(tables, table, "turn", game);
            assert!(
                turns.iter().all(|t| t.is_u64()),
                "{game} {table}: {turns:?}"
            );
        }
        let times = of_game(tables, "model_calls", "timestamp", game);
        assert!(times.iter().all(|t| t.is_string()), "{game}: {times:?}");
    }
    // An encounter's rounds: 0 until the first player acts, 1 from its action on, never back.
    let kinds = of_game(tables, "events", "event_type", "encounter");
    let rounds: Vec<u64> = of_game(tables, "events", "turn", "encounter")
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    let first = kinds.iter().position(|k| *k == "player_acted").unwrap();
    assert!(rounds[..first].iter().all(|r| *r <= 1), "{rounds:?}");
    assert_eq!(rounds[first], 1, "{kinds:?} {rounds:?}");
    assert!(rounds.windows(2).all(|w| w[0] <= w[1]), "{rounds:?}");
    assert!(rounds.last() > Some(&1), "{rounds:?}");
    // An AI player's call is in the round of the action it led to.
    for (i, _) in kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "player_called")
    {
        let acted = i + kinds[i..]
            .iter()
            .position(|k| *k == "player_acted")
            .unwrap();
        assert_eq!(rounds[i], rounds[acted], "{kinds:?} {rounds:?}");
    }
    // A model call's event says when; the GM's opening call comes before any action.
    let opening = kinds.iter().position(|k| *k == "gm_called").unwrap();
    assert!(opening < first && rounds[opening] == 0);
    assert!(of_game(tables, "events", "timestamp", "encounter")[opening].is_string());
    for game in ["lasers_and_feelings", "encounter", "scene"] {
        let seeds = of_game(tables, "model_calls", "seed", game);
        assert!(seeds.iter().all(|s| s.is_u64()), "{game}: {seeds:?}");
    }
}

/// A campaign that played all three games (the recorded session, encounter and scene of
/// `troupe report`'s test) exports every game's events and model calls, told apart by `game`,
/// with each game's tokens as `troupe stats` audits them, and a row per encounter run and scene.
#[test]
fn a_campaign_of_all_three_games_exports_every_games_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    play_session(d);
    play_encounter(d);
    play_scene(d);
    let said = run(d, &["export", ".", "-o", "tables"]);
    assert!(
        said.contains("1 session, 1 encounter run, 1 scene") && said.contains("game_runs.parquet"),
        "{said}"
    );
    let Some(tables) = read_back(&d.join("tables")) else {
        return;
    };
    for name in TABLES {
        assert_eq!(tables[name]["version"], "2", "{name} has no schema version");
    }
    let stats = stats_json(d, &[]);

    // The events: every game's, as many as each game's log holds.
    let session_log = read_log(&d.join("logs/session-1.jsonl")).len();
    let per_game = [
        ("lasers_and_feelings", session_log),
        ("encounter", stored_events(d, "encounter")),
        ("scene", stored_events(d, "scene")),
    ];
    for (game, logged) in per_game {
        assert!(logged > 3, "{game}: {logged}");
        assert_eq!(
            of_game(&tables, "events", "seq", game).len(),
            logged,
            "{game}'s events"
        );
    }
    assert_eq!(
        tables["events"]["rows"],
        per_game.iter().map(|(_, n)| n).sum::<usize>()
    );
    let enc_types = of_game(&tables, "events", "event_type", "encounter");
    assert!(enc_types.iter().any(|t| *t == "gm_called"));
    assert!(enc_types.iter().any(|t| *t == "leak_caught"));
    let game_runs = of_game(&tables, "events", "game_run", "scene");
    assert!(game_runs.iter().all(|n| *n == 1));
    assert!(
        of_game(&tables, "events", "session", "encounter")
            .iter()
            .all(|s| s.is_null())
    );

    // The model calls: one row per attempt, each game's tokens as the audit counts them.
    for game in ["lasers_and_feelings", "encounter", "scene"] {
        let audit = calls(&stats, game);
        assert_eq!(
            of_game(&tables, "model_calls", "attempt", game).len() as u64,
            audit["attempts"].as_u64().unwrap(),
            "{game}'s attempts"
        );
        let input = sum_of_game(&tables, "model_calls", "input_tokens", game);
        assert!(input > 0, "{game}: no input tokens");
        assert_eq!(input, audit["tokens_in"].as_u64().unwrap(), "{game}");
        assert_eq!(
            sum_of_game(&tables, "model_calls", "output_tokens", game),
            audit["tokens_out"].as_u64().unwrap(),
            "{game}"
        );
        let answered = of_game(&tables, "model_calls", "ok", game)
            .iter()
            .filter(|v| v.as_bool() == Some(true))
            .count() as u64;
        assert_eq!(answered, audit["answered"].as_u64().unwrap(), "{game}");
    }
    assert_eq!(
        sum_of_game(
            &tables,
            "model_calls",
            "input_tokens",
            "lasers_and_feelings"
        ),
        stats["metrics"]["model"]["tokens"]["input"]
            .as_u64()
            .unwrap()
    );
    let layers = of_game(&tables, "model_calls", "layer", "encounter");
    assert!(layers.iter().any(|l| *l == "gm") && layers.iter().any(|l| *l == "player"));
    assert!(
        of_game(&tables, "model_calls", "purpose", "scene")
            .iter()
            .all(|p| *p == "scene_player")
    );
    assert!(
        of_game(&tables, "model_calls", "latency_ms", "encounter")
            .iter()
            .all(|l| l.is_u64())
    );

    every_row_has_its_turn_time_and_seed(&tables);

    // A row per encounter run and scene: the encounter's is the GM's scorecard stats gives.
    assert_eq!(tables["game_runs"]["rows"], 2);
    let card = &stats["encounters"][0];
    let enc = |column: &str| of_game(&tables, "game_runs", column, "encounter")[0].clone();
    assert_eq!(enc("id"), card["spec"]);
    for field in ["gm_turns", "leaks_caught", "checks", "resolved"] {
        assert_eq!(enc(field), card[field], "{field}");
    }
    assert_eq!(enc("turns"), card["rounds"]);
    assert_eq!(enc("attempts"), calls(&stats, "encounter")["attempts"]);
    assert_eq!(enc("input_tokens"), calls(&stats, "encounter")["tokens_in"]);
    assert_eq!(
        of_game(&tables, "game_runs", "id", "scene")[0],
        "mill-night"
    );
    assert!(
        of_game(&tables, "game_runs", "resolved", "scene")[0].is_null(),
        "a scene has no encounter scorecard"
    );
    assert_eq!(
        tables["game_runs"]["types"]["started_at"],
        "timestamp[us, tz=UTC]"
    );
    // The encounter's checks are verdicts, as many as its scorecard counts.
    let checked: u64 = [
        "leaks_caught",
        "actions_sent_back",
        "refused_by_schema",
        "refused_by_engine",
    ]
    .iter()
    .map(|f| card[*f].as_u64().unwrap())
    .sum();
    assert!(checked >= 3, "{card}");
    let sources = of_game(&tables, "verdicts", "source", "encounter");
    assert_eq!(sources.len() as u64, checked);
    for source in ["leak_caught", "action_sent_back", "gm_rejected"] {
        assert!(sources.iter().any(|s| *s == source), "no {source} verdict");
    }
    assert!(of_game(&tables, "verdicts", "seq", "scene").is_empty());
    // The session's own tables are the session's alone.
    for name in ["turns", "scorecards"] {
        assert!(
            col(&tables, name, "game")
                .iter()
                .all(|g| g == "lasers_and_feelings"),
            "{name}"
        );
    }
    assert_eq!(tables["scorecards"]["rows"], 1);

    // A campaign that has played only a scene is exported too (no sessions is not an error).
    let only = tempfile::tempdir().unwrap();
    play_scene(only.path());
    let said = run(only.path(), &["export", ".", "-o", "t"]);
    assert!(said.contains("(1 scene)"), "{said}");
    let tables = read_back(&only.path().join("t")).unwrap();
    assert_eq!(tables["game_runs"]["rows"], 1);
    assert_eq!(tables["scorecards"]["rows"], 0);
    assert_eq!(
        tables["events"]["rows"],
        stored_events(only.path(), "scene")
    );
}
