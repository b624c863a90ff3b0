//! `troupe encounter`: seed 003's encounter game master. A spec written once (checked with
//! `check`), run by an AI game master for people and AI players (`run`), resumed after a crash
//! or a stop (`resume`), taken back a round (`undo`), re-derived from its log (`replay`), and
//! counted (`list`).

pub mod lasers;
mod replay;
mod run;
pub mod serve;
mod start;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use troupe_encounter::log::{EncounterEvent, undo_event};
use troupe_encounter::table::EncounterStore;
use troupe_encounter::table::start::SeatSpec;
use troupe_lasers::lines::count;

#[derive(Debug, clap::Subcommand)]
pub enum EncounterCommand {
    /// Check an encounter spec (YAML) and report every mistake in it, with line and column
    Check { spec: PathBuf },
    /// Run an encounter: the AI GM opens the scene, voices the NPCs and calls for rolls
    Run {
        spec: PathBuf,
        #[command(flatten)]
        table: start::TableArgs,
        #[command(flatten)]
        model: crate::models::ModelArgs,
    },
    /// Continue the campaign's latest encounter run (or --run N) where its log stops
    Resume {
        #[arg(long)]
        run: Option<u32>,
        /// Stop (saved) once this many rounds of player actions are played
        #[arg(long = "turns", alias = "max-turns", value_name = "N")]
        max_turns: Option<u32>,
        /// Someone joins the running encounter: `human:NAME` (a person at this terminal) or
        /// `ai` / `ai:AGENT` (the campaign's next AI player); repeat for several. They act
        /// from their turn in the current round on.
        #[arg(long = "join", value_name = "SEAT")]
        join: Vec<String>,
        #[command(flatten)]
        model: crate::models::ModelArgs,
    },
    /// Take back the last round of player actions and everything after it
    Undo {
        #[arg(long)]
        run: Option<u32>,
    },
    /// Re-derive every event of a run (or the latest) from its recorded inputs and check each
    /// comes out byte for byte the same; prints what the players saw
    Replay {
        #[arg(long)]
        run: Option<u32>,
    },
    /// A run's events as JSON lines (for analysis): every model call, rejection, leak and roll
    Log {
        #[arg(long)]
        run: Option<u32>,
    },
    /// The GM's scorecard of each run (or --run N): replies refused, leaks caught, rewrites,
    /// tokens and latency per GM turn
    Stats {
        #[arg(long)]
        run: Option<u32>,
        /// One JSON object per run instead of the table
        #[arg(long)]
        json: bool,
    },
    /// The specs in a directory (default: the campaign's `encounters/`) with their tally
    List {
        #[arg(long)]
        specs: Option<PathBuf>,
    },
}

/// Run a `troupe encounter` command; `memory_url` is `--memory-url`.
pub fn run(
    dir: Option<&Path>,
    command: EncounterCommand,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let dir = crate::sessions::dir_of(dir.map(Path::to_path_buf));
    match command {
        EncounterCommand::Check { spec } => check(&spec),
        EncounterCommand::Run { spec, table, model } => {
            crate::block_on(run_spec(&dir, &spec, &table, &model, memory_url))
        }
        EncounterCommand::Resume {
            run,
            max_turns,
            join,
            model,
        } => crate::block_on(start::resume(
            &dir, run, max_turns, &join, &model, memory_url,
        )),
        EncounterCommand::Undo { run } => undo(&dir, run),
        EncounterCommand::Replay { run } => replay::replay(&dir, run),
        EncounterCommand::List { specs } => list(&dir, specs.as_deref()),
        EncounterCommand::Log { run } => log(&dir, run),
        EncounterCommand::Stats { run, json } => stats(&dir, run, json),
    }
}

/// `encounter run`: a Lasers & Feelings spec is played as a session of the campaign's
/// characters, any other at the encounter table.
async fn run_spec(
    dir: &Path,
    spec_path: &Path,
    table: &start::TableArgs,
    model: &crate::models::ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let spec = load_spec(spec_path)?;
    let scene = load_scene(spec_path, &spec)?;
    let players = seat_specs("--players", &table.players)?;
    if spec.rules == troupe_encounter::spec::RulesKind::LasersFeelings {
        return lasers::run(dir, &spec, &players, table, model, memory_url).await;
    }
    start::start(dir, &spec, scene, &players, table, model, memory_url).await
}

/// The seats a flag's entries ask for: `human` or `person` (`human:NAME` names them), `ai`
/// (`ai:AGENT` picks the campaign file's AI player).
pub fn seat_specs(flag: &str, entries: &[String]) -> anyhow::Result<Vec<SeatSpec>> {
    let spec = |entry: &String| {
        let (kind, arg) = entry.trim().split_once(':').unwrap_or((entry.trim(), ""));
        let arg = (!arg.is_empty()).then(|| arg.to_string());
        match kind {
            "human" | "person" => Ok(SeatSpec::Person { name: arg }),
            "ai" => Ok(SeatSpec::Ai { agent: arg }),
            other => bail!(
                "{flag}: `{other}` is neither `human` nor `ai` (e.g. human, human:NAME, ai, ai:AGENT)"
            ),
        }
    };
    entries.iter().map(spec).collect()
}

/// Read and check a spec file: the spec, or every problem (as `file:line:col: path: message`).
pub fn load_spec(path: &Path) -> anyhow::Result<troupe_encounter::Spec> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read the encounter spec {}", path.display()))?;
    troupe_encounter::check::check(&text).map_err(|problems| {
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}:{p}", path.display()))
            .collect();
        anyhow::anyhow!(
            "{} has {}:\n{}",
            path.display(),
            count(problems.len(), "mistake"),
            lines.join("\n")
        )
    })
}

/// The spec's scene file, checked, as text (it goes into the log).
pub fn load_scene(
    spec_path: &Path,
    spec: &troupe_encounter::Spec,
) -> anyhow::Result<Option<String>> {
    let Some(rel) = &spec.scene else {
        return Ok(None);
    };
    let path = spec_path.parent().unwrap_or(Path::new(".")).join(rel);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("could not read the encounter's scene {}", path.display()))?;
    if let Err(problems) = troupe_scene::check(&text) {
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}:{p}", path.display()))
            .collect();
        bail!("the encounter's scene has mistakes:\n{}", lines.join("\n"));
    }
    Ok(Some(text))
}

fn check(path: &Path) -> anyhow::Result<ExitCode> {
    let spec = load_spec(path)?;
    load_scene(path, &spec)?;
    println!(
        "{}: ok: \"{}\" ({}), {}, {}, {}",
        path.display(),
        spec.title,
        spec.id,
        count(spec.npcs.len(), "NPC"),
        count(spec.goals().count(), "goal"),
        count(spec.checks.len(), "check"),
    );
    Ok(ExitCode::SUCCESS)
}

/// The campaign memory an encounter reads its cast from and writes its outcome to.
fn memory(dir: &Path, memory_url: Option<&str>) -> anyhow::Result<troupe_memory::MemoryStore> {
    crate::graph::open_memory(&troupe_campaign::CampaignDir::new(dir), None, memory_url)
}

pub fn open_store(dir: &Path) -> anyhow::Result<EncounterStore> {
    EncounterStore::open(dir).map_err(anyhow::Error::from)
}

/// The encounter runs, as the commands shared with the scene's speak of them.
pub const GAME: crate::runs::Game = troupe_batch::encounters::GAME;

/// The run asked for, or the latest.
pub fn run_number(store: &EncounterStore, dir: &Path, run: Option<u32>) -> anyhow::Result<u32> {
    crate::runs::run_number(store, dir, run, &GAME)
}

fn undo(dir: &Path, run: Option<u32>) -> anyhow::Result<ExitCode> {
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    let mut store = open_store(dir)?;
    let run = run_number(&store, dir, run)?;
    let undone = crate::sessions::undo_run(&mut store, run, (GAME.name, GAME.starts), |events| {
        undo_event(&events).context(format!(
            "run {run} has no round of player actions to take back"
        ))
    })?;
    if let EncounterEvent::Undone { from } = undone.event {
        println!(
            "run {run}: the last round (from event {from}) is taken back; {} plays it again",
            crate::sessions::command(dir, "troupe encounter resume")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn log(dir: &Path, run: Option<u32>) -> anyhow::Result<ExitCode> {
    crate::runs::log(&open_store(dir)?, dir, run, &GAME)
}

fn stats(dir: &Path, run: Option<u32>, json: bool) -> anyhow::Result<ExitCode> {
    let store = open_store(dir)?;
    crate::runs::stats(
        &store,
        dir,
        (run, json),
        &GAME,
        troupe_batch::encounters::scorecard,
        troupe_batch::encounters::render_scorecards,
    )
}

fn list(dir: &Path, specs: Option<&Path>) -> anyhow::Result<ExitCode> {
    let specs_dir = specs.map_or_else(
        || troupe_campaign::CampaignDir::new(dir).encounter_specs(),
        Path::to_path_buf,
    );
    if !specs_dir.is_dir() {
        let (what, add) = match specs {
            Some(_) => (
                "there is no directory",
                "name a directory of specs with --specs DIR",
            ),
            None => (
                "this campaign has no encounters/ folder of specs:",
                "add one and put encounter specs (YAML) in it (examples/encounters/ has some), \
                 or name another directory with --specs DIR",
            ),
        };
        bail!("{what} {}; {add}", specs_dir.display());
    }
    let tally = troupe_encounter::table::outcome::read_tally(dir)?;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&specs_dir)
        .with_context(|| format!("could not list {}", specs_dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        println!(
            "No encounter specs (.yaml) in {}; put some there (examples/encounters/ has some).",
            specs_dir.display()
        );
    }
    for path in paths {
        match load_spec(&path) {
            Ok(spec) => {
                let t = tally.get(&spec.id);
                println!(
                    "{:<28} {:<36} runs {:>3}  last {}",
                    spec.id,
                    spec.title,
                    t.map_or(0, |t| t.runs),
                    t.map_or("never", |t| t.last_run.as_str())
                );
            }
            Err(_) => println!(
                "{:<28} (has mistakes: `troupe encounter check {}`)",
                path.display(),
                path.display()
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}
