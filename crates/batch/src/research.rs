//! The research instruments: `troupe log` (the events, filtered), `troupe stats` (the metrics in
//! the terminal) and `troupe report` (one self-contained HTML file). They read the log as
//! published JSON (troupe-report), read-only, so they work on a campaign another troupe is
//! playing and on logs written by other troupe versions.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::Value;
use troupe_lasers::Envelope;
use troupe_report::{Games, Known, Scope};

/// What a command looks at: a session (the latest by default) or, with --all, every session.
pub fn scope(dir: &Path, session: Option<u32>, all: bool) -> anyhow::Result<Scope> {
    // A damaged campaign.db is named as such (what to do included), not as a raw SQLite error.
    troupe_lasers::Store::check_readable(dir)?;
    if all {
        return Ok(Scope::Campaign);
    }
    match session {
        Some(n) => Ok(Scope::Session(n)),
        None => {
            let known = troupe_report::session_numbers(dir)?;
            match known.last() {
                Some(&n) => Ok(Scope::Session(n)),
                None => bail!(
                    "no sessions have been played in {} yet{}",
                    dir.display(),
                    games_hint(dir)
                ),
            }
        }
    }
}

fn load(dir: &Path, scope: Scope, include_undone: bool) -> anyhow::Result<Vec<Value>> {
    Ok(match scope {
        Scope::Session(n) => troupe_report::load_session(dir, n, include_undone)?,
        Scope::Campaign => {
            let mut all = Vec::new();
            for n in troupe_report::session_numbers(dir)? {
                all.extend(troupe_report::load_session(dir, n, include_undone)?);
            }
            all
        }
    })
}

fn title(scope: Scope, events: &[Value]) -> String {
    match scope {
        Scope::Session(n) => format!("session {n}"),
        Scope::Campaign => {
            let mut sessions: Vec<u64> = events
                .iter()
                .filter_map(|e| e.get("session_number").and_then(Value::as_u64))
                .collect();
            sessions.dedup();
            format!(
                "campaign, {} session{}",
                sessions.len(),
                if sessions.len() == 1 { "" } else { "s" }
            )
        }
    }
}

/// Write to standard output; a reader that went away (`troupe log | head`) is not an error.
fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("could not write to standard output")
        }
        _ => Ok(()),
    }
}

/// `troupe log`: the session's events as JSON lines, optionally only some types.
pub fn log(
    dir: &Path,
    session: Option<u32>,
    all: bool,
    types: &[String],
    include_undone: bool,
) -> anyhow::Result<ExitCode> {
    let scope = scope(dir, session, all)?;
    let events = load(dir, scope, include_undone)?;
    let present = troupe_report::event_types(&events);
    let mut unknown = Vec::new();
    let mut absent = Vec::new();
    for t in types {
        if present.contains(t) {
            continue;
        }
        if troupe_report::describe(t).is_some() {
            absent.push(t.as_str());
        } else {
            unknown.push(t.as_str());
        }
    }
    if !unknown.is_empty() {
        let list: Vec<String> = present
            .iter()
            .map(|t| {
                let n = events.iter().filter(|e| kind(e) == Some(t)).count();
                format!("  {t} ({n})")
            })
            .collect();
        bail!(
            "unknown event type{} {} (docs/log-schema.md lists them all); the types in {}:\n{}",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", "),
            title(scope, &events),
            list.join("\n")
        );
    }
    for t in absent {
        eprintln!(
            "note: no {t} events in {} ({})",
            title(scope, &events),
            troupe_report::describe(t).unwrap_or_default()
        );
    }
    let mut text = String::new();
    for e in events
        .iter()
        .filter(|e| types.is_empty() || kind(e).is_some_and(|t| types.iter().any(|x| x == t)))
    {
        if let Some(note) = unreadable(e) {
            eprintln!("note: {note}");
        }
        text.push_str(&serde_json::to_string(e)?);
        text.push('\n');
    }
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The kind a row is logged under, what `--type` selects: a log printer shows every row as
/// stored, a newer troupe's kind included, under the kind it was written with.
fn kind(row: &Value) -> Option<&str> {
    row.get("event_type").and_then(Value::as_str)
}

/// What to say when a row is of a kind this build knows but does not read as that kind
/// (troupe_lasers' events, through [`Known`]): `troupe log` prints it as logged, like every
/// row, and names it, since such a row is damage or a writer's bug, never to pass unseen.
fn unreadable(row: &Value) -> Option<String> {
    let Known::Malformed {
        event_type, error, ..
    } = Known::<Envelope>::read(row)
    else {
        return None;
    };
    let at = |field: &str| row.get(field).map_or_else(|| "?".into(), Value::to_string);
    Some(format!(
        "session {}, event {}: a {event_type:?} event this troupe cannot read ({error}); printed as logged",
        at("session_number"),
        at("seq")
    ))
}

/// What a campaign without sessions has instead, for the error that says it has none.
fn games_hint(dir: &Path) -> String {
    match troupe_report::load_games(dir) {
        Ok(games) if !games.is_empty() => format!(
            "; it has {} (`troupe report` shows them, `troupe encounter log` lists an encounter's events)",
            games.describe()
        ),
        _ => String::new(),
    }
}

/// The campaign's encounter runs and scenes, each encounter run with its GM's scorecard.
fn games(dir: &Path) -> anyhow::Result<Games> {
    let mut games = troupe_report::load_games(dir)?;
    for card in crate::encounters::all_scorecards(dir)? {
        games.attach_scorecard(card);
    }
    Ok(games)
}

/// The events a research command reads, what to call them, and the encounter runs and scenes
/// beside them: a session (the games beside it unless a session number was asked for), a
/// campaign, a campaign that has played only encounters and scenes, or a batch of campaign
/// directories (the `--out` of `troupe simulate`), read whole.
fn read(
    dir: &Path,
    session: Option<u32>,
    all: bool,
) -> anyhow::Result<(String, Vec<Value>, Games)> {
    if troupe_report::is_batch(dir) {
        if let Some(n) = session {
            bail!(
                "{} is a batch of campaign directories (the --out of troupe simulate) and is read whole; drop the session number {n}, or point --campaign at one run's directory",
                dir.display()
            );
        }
        let events = troupe_report::load_batch(dir)?;
        let runs = troupe_report::run_count(&events);
        let title = format!(
            "batch {}, {runs} session{}",
            dir.display(),
            if runs == 1 { "" } else { "s" }
        );
        return Ok((title, events, Games::default()));
    }
    // A damaged campaign.db is named as such (what to do included), not as a raw SQLite error.
    troupe_lasers::Store::check_readable(dir)?;
    let games = match session {
        Some(_) => Games::default(),
        None => games(dir)?,
    };
    if !games.is_empty() && troupe_report::session_numbers(dir)?.is_empty() {
        return Ok((format!("campaign, {}", games.describe()), Vec::new(), games));
    }
    let scope = scope(dir, session, all)?;
    let events = load(dir, scope, false)?;
    let mut title = title(scope, &events);
    if !games.is_empty() {
        title = format!("{title}, {}", games.describe());
    }
    Ok((title, events, games))
}

/// `troupe stats`: the metrics, the log audit, the flags and the scorecard per model, as text
/// or JSON. Each game shows its own figures: a campaign that has played only encounters and
/// scenes gets theirs (their calls, their scorecard per model, the encounters' GM scorecards),
/// not the Lasers & Feelings sessions' figures as zeros (`metrics` and `cost` are null in the
/// JSON then).
pub fn stats(dir: &Path, session: Option<u32>, all: bool, json: bool) -> anyhow::Result<ExitCode> {
    let (title, events, games) = read(dir, session, all)?;
    // Every row read as its event once, for every figure.
    let log = troupe_report::ReadLog::new(&events);
    let audit = log.audit_with_games(&games);
    let flags = log.flags();
    let scorecard = log.scorecard();
    let game_scorecard = troupe_report::game_scorecard(&games);
    let runs = log.runs();
    let only_games = events.is_empty() && !games.is_empty();
    if json {
        let value = serde_json::json!({
            "scope": title,
            "metrics": (!only_games).then(|| log.metrics()),
            "audit": audit,
            "flags": flags,
            "scorecard": scorecard,
            "game_scorecard": game_scorecard,
            "cost": (!only_games).then(|| log.costs()),
            "runs": runs,
            "encounters": crate::encounters::all_scorecards(dir)?,
            "scenes": crate::scenes::all_figures(dir)?,
        });
        emit(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
    } else if only_games {
        let mut text = troupe_report::render_games_stats(&title, &audit);
        text.push_str(&troupe_report::render_game_scorecard(&game_scorecard));
        text.push_str(&games_figures(dir)?);
        emit(&text)?;
    } else {
        let roster = log.roster();
        let metrics = log.metrics();
        let mut text = troupe_report::render_stats(&title, &metrics, &audit, &flags, &roster);
        text.push_str(&troupe_report::render_scorecard(&scorecard, &runs));
        text.push_str(&troupe_report::render_game_scorecard(&game_scorecard));
        text.push_str(&troupe_report::render_costs(&log.costs()));
        text.push_str(&games_figures(dir)?);
        emit(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Each game's own figures of its runs, as tables, after the sessions' (none for a game the
/// campaign has not played): the encounters' GM scorecards, the scenes' figures.
fn games_figures(dir: &Path) -> anyhow::Result<String> {
    let mut text = String::new();
    let encounters = crate::encounters::all_scorecards(dir)?;
    if !encounters.is_empty() {
        text.push('\n');
        text.push_str(&crate::encounters::render_scorecards(&encounters));
    }
    let scenes = crate::scenes::all_figures(dir)?;
    if !scenes.is_empty() {
        text.push('\n');
        text.push_str(&crate::scenes::render_figures(&scenes));
    }
    Ok(text)
}

/// `troupe report`: the HTML report, written to `output`.
pub fn report(
    dir: &Path,
    session: Option<u32>,
    all: bool,
    output: &Path,
) -> anyhow::Result<ExitCode> {
    let (title, events, games) = read(dir, session, all)?;
    // Every row read as its event once, for the report and the summary printed after it.
    let log = troupe_report::ReadLog::new(&events);
    let html = log.report(&title, &games);
    std::fs::write(output, &html)
        .with_context(|| format!("could not write the report to {}", output.display()))?;
    let flags = log.flags();
    let audit = log.audit_with_games(&games);
    let run_events: usize = games
        .encounters
        .iter()
        .chain(&games.scenes)
        .map(|r| r.events.len())
        .sum();
    println!(
        "Report on {title}: {} ({} KB, {} events, {} flagged for review, log {})",
        output.display(),
        html.len().div_ceil(1024),
        events.len() + run_events,
        flags.len(),
        if audit.complete() {
            "complete".to_string()
        } else {
            format!("has {} gaps", audit.gaps.len() + audit.run_gaps.len())
        }
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A recorded session's rows read, a newer troupe's kind printed without a word; a known
    /// kind that does not read is named with where it is and why.
    #[test]
    fn the_log_names_a_known_kind_that_does_not_read_and_no_other() {
        let log: Vec<Value> = include_str!("../../fuzz/data/demo.session-1.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(log.iter().all(|row| unreadable(row).is_none()));
        let mut newer = log[5].clone();
        newer["event_type"] = "weather_changed".into();
        assert_eq!(unreadable(&newer), None);
        let mut call = log
            .iter()
            .find(|row| kind(row) == Some("model_call"))
            .unwrap()
            .clone();
        call["usage"] = "lots".into();
        let note = unreadable(&call).unwrap();
        assert!(
            note.starts_with(&format!(
                "session 1, event {}: a \"model_call\" event this troupe cannot read (",
                call["seq"]
            )),
            "{note}"
        );
        assert!(note.contains("lots"), "{note}");
    }
}
