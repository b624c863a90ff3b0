//! What the games played in runs (`troupe encounter`, `troupe scene`) share at the terminal:
//! the run asked for or the latest, a run's events as JSON lines (`log`), and each run's figures
//! (`stats`) as a table or as one JSON object per run.

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use serde_json::Value;
use troupe_engine::{GameStore, RunLog};
use troupe_report::Known;

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

/// `troupe GAME log`: a run's events (or the latest run's), one JSON object per line, each as
/// the store holds it (an event kind a newer troupe wrote is printed as it was written).
pub fn log<E: RunLog>(
    store: &GameStore<E>,
    dir: &Path,
    run: Option<u32>,
    game: &Game,
) -> anyhow::Result<ExitCode> {
    let run = run_number(store, dir, run, game)?;
    let bodies = store.bodies(run)?;
    if bodies.is_empty() {
        bail!("there is no {} run {run} in {}", game.name, dir.display());
    }
    for body in bodies {
        println!("{body}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `troupe GAME stats`: each run's figures (`card` of its events, with `run` and `spec` added),
/// or run `run`'s alone, as `render` lays them out or as one JSON object per run.
pub fn stats<E: RunLog + Clone>(
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
    let cards = cards(store, &runs, game, card)?;
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
pub fn cards<E: RunLog + Clone>(
    store: &GameStore<E>,
    runs: &[u32],
    game: &Game,
    card: impl Fn(&[E]) -> anyhow::Result<Value>,
) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for &n in runs {
        let Some(info) = store.run(n)? else {
            continue;
        };
        let mut v = card(&known_events(store, n, game)?)?;
        v["run"] = n.into();
        v["spec"] = info.spec_id.into();
        out.push(v);
    }
    Ok(out)
}

/// Every run's figures of one game in a campaign directory (none when it has played none; nothing
/// is created), for `troupe stats` and `troupe report`: each run read as every reader reads it
/// ([`known_events`]), so a run holding an event kind a newer troupe wrote stops neither.
pub fn every_card<E: RunLog + Clone>(
    dir: &Path,
    game: &Game,
    card: impl Fn(&[E]) -> anyhow::Result<Value>,
) -> anyhow::Result<Vec<Value>> {
    let Some(store) = GameStore::<E>::open_existing(dir)? else {
        return Ok(Vec::new());
    };
    let last = store.latest()?.map_or(0, |r| r.number);
    cards(&store, &(1..=last).collect::<Vec<_>>(), game, card)
}

/// A run's events this build knows, in order: every row the store holds, read through
/// [`Known`]. A kind a newer troupe wrote is left out (the figures are of what this build
/// knows) instead of stopping the command; an event of a known kind that does not read is an
/// error that names it.
pub fn known_events<E: RunLog + Clone>(
    store: &GameStore<E>,
    run: u32,
    game: &Game,
) -> anyhow::Result<Vec<E>> {
    let rows = store
        .bodies(run)?
        .iter()
        .map(|body| serde_json::from_str(body))
        .collect::<Result<Vec<Value>, _>>()?;
    let read: Vec<Known<E>> = Known::read_all(&rows);
    match Known::all_known(&read) {
        Ok(known) => Ok(known),
        Err((event_type, error)) => bail!(
            "{} run {run}: a {event_type:?} event cannot be read ({error})",
            game.name
        ),
    }
}
