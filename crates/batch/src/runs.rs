//! What the games played in runs (`troupe encounter`, `troupe scene`) share at the terminal:
//! the run asked for or the latest, a run's events as JSON lines (`log`), and each run's figures
//! (`stats`) as a table or as one JSON object per run.

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use serde_json::Value;
use troupe_engine::{GameStore, RunLog};

/// One game's runs, as its commands speak of them.
pub struct Game {
    /// The command's word: `encounter`, `scene`.
    pub name: &'static str,
    /// What starts a run: "`troupe encounter run SPEC`".
    pub starts: &'static str,
}

/// The run asked for, or the latest; a campaign without runs of this game is told what starts
/// one.
pub fn run_number<E: RunLog>(
    store: &GameStore<E>,
    dir: &Path,
    run: Option<u32>,
    game: &Game,
) -> anyhow::Result<u32> {
    match run {
        Some(n) => Ok(n),
        None => match store.latest()? {
            Some(r) => Ok(r.number),
            None => bail!(
                "{} has no {} runs yet; {} starts one",
                dir.display(),
                game.name,
                game.starts
            ),
        },
    }
}

/// `troupe GAME log`: a run's events (or the latest run's), one JSON object per line.
pub fn log<E: RunLog>(
    store: &GameStore<E>,
    dir: &Path,
    run: Option<u32>,
    game: &Game,
) -> anyhow::Result<ExitCode> {
    let run = run_number(store, dir, run, game)?;
    let events = store.events(run)?;
    if events.is_empty() {
        bail!("there is no {} run {run} in {}", game.name, dir.display());
    }
    for env in events {
        println!("{}", serde_json::to_string(&env)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// `troupe GAME stats`: each run's figures (`card` of its events, with `run` and `spec` added),
/// or run `run`'s alone, as `render` lays them out or as one JSON object per run.
pub fn stats<E: RunLog>(
    store: &GameStore<E>,
    dir: &Path,
    (run, json): (Option<u32>, bool),
    game: &Game,
    card: impl Fn(&[E]) -> anyhow::Result<Value>,
    render: impl Fn(&[Value]) -> String,
) -> anyhow::Result<ExitCode> {
    let last = run_number(store, dir, None, game)?;
    let runs: Vec<u32> = match run {
        Some(n) => vec![n],
        None => (1..=last).collect(),
    };
    let cards = cards(store, &runs, card)?;
    if run.is_some() && cards.is_empty() {
        bail!(
            "there is no {} run {} in {}",
            game.name,
            runs[0],
            dir.display()
        );
    }
    if json {
        for card in cards {
            println!("{card}");
        }
    } else {
        print!("{}", render(&cards));
    }
    Ok(ExitCode::SUCCESS)
}

/// Each of these runs' figures, as JSON objects with the run's number and what it played.
pub fn cards<E: RunLog>(
    store: &GameStore<E>,
    runs: &[u32],
    card: impl Fn(&[E]) -> anyhow::Result<Value>,
) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for &n in runs {
        let Some(info) = store.run(n)? else {
            continue;
        };
        let mut v = card(&store.events(n)?)?;
        v["run"] = n.into();
        v["spec"] = info.scene_id.into();
        out.push(v);
    }
    Ok(out)
}
