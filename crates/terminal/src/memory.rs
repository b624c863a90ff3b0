//! `troupe memory`: ask the campaign memory questions, import notes, export the graph.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use troupe_lasers::lines::count;

use anyhow::{Context, bail};
use clap::Subcommand;
use serde_json::json;
use troupe_campaign::{CampaignDir, MemoryPlace};
use troupe_lasers::Store;
use troupe_memory::extract;
use troupe_memory::{GameTime, Hit, MemoryStore, Query, Reader};

use crate::sessions;

#[derive(Subcommand)]
pub enum MemoryCommand {
    /// Ask what the campaign remembers: facts with confidence, when they formed, their source
    Query {
        /// The question ("What do we know about Galvin?"); omit with --stdin
        question: Option<String>,
        /// Recall as this AI's player layer (party memory, its own and its character's)
        #[arg(long = "as", value_name = "AGENT", conflicts_with = "party")]
        agent: Option<String>,
        /// With --as: recall as the AI's character layer instead (never its player's secrets)
        #[arg(long, requires = "agent")]
        character: bool,
        /// Only the shared party memory
        #[arg(long)]
        party: bool,
        /// As the memory stood at the end of session N
        #[arg(long, value_name = "N")]
        at_session: Option<u32>,
        /// How many facts to return
        #[arg(long, default_value_t = 5)]
        top_k: usize,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
        /// Answer one question per line of standard input, one JSON line each
        #[arg(long, conflicts_with = "question")]
        stdin: bool,
    },
    /// Load episodes (JSONL: id, session, timestamp, speaker, text) into the campaign memory
    Import {
        /// The JSONL file
        file: PathBuf,
    },
    /// Write the whole memory graph as JSONL: entities, episodes, facts (closed ones too),
    /// conflicts
    Export {
        /// Write here instead of standard output
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Counts, and every contradiction settled so far with both sources
    Stats,
    /// Copy the memory from campaign.db to a graph server (--to), or from one back into an
    /// empty campaign.db (--from); the copy is read back and checked row by row, and a sample
    /// of recalls asked of both
    Migrate {
        /// falkordb://HOST:PORT/GRAPH (or redis://…) or http://HOST:7474/DATABASE (Neo4j)
        #[arg(
            long,
            value_name = "URL",
            required_unless_present = "from",
            conflicts_with = "from"
        )]
        to: Option<String>,
        /// Copy back from this server into campaign.db (whose memory must be empty)
        #[arg(long, value_name = "URL")]
        from: Option<String>,
        /// With --to: delete what the graph already holds of this campaign first
        #[arg(long)]
        replace: bool,
    },
}

/// Run a `troupe memory` command; `memory_url` is `--memory-url`.
pub fn run(dir: &Path, cmd: MemoryCommand, memory_url: Option<&str>) -> anyhow::Result<ExitCode> {
    let campaign = CampaignDir::new(dir);
    match cmd {
        MemoryCommand::Query {
            question,
            agent,
            character,
            party,
            at_session,
            top_k,
            json,
            stdin,
        } => {
            let (sessions, store) = open(&campaign, memory_url)?;
            let reader = match (agent, character, party) {
                (Some(a), true, _) => Reader::Character(a),
                (Some(a), false, _) => Reader::Player(a),
                (None, _, true) => Reader::Party,
                (None, _, false) => Reader::All,
            };
            let now = now(sessions.as_ref(), &store)?;
            let ask = |text: &str| -> anyhow::Result<Vec<Hit>> {
                let mut q = Query::new(text, reader.clone(), now);
                q.top_k = top_k.max(1);
                q.at_session = at_session;
                store.search(&q).map_err(crate::graph::memory_error)
            };
            if stdin {
                return answer_lines(&reader, &ask);
            }
            answer(question, &reader, json, &ask)
        }
        MemoryCommand::Import { file } => import(dir, &campaign, &file, memory_url),
        MemoryCommand::Export { output } => export(&campaign, output, memory_url),
        MemoryCommand::Migrate { to, from, replace } => {
            migrate(&campaign, to, from, replace, memory_url)
        }
        MemoryCommand::Stats => stats(&campaign, memory_url),
    }
}

/// A question asked of the memory, answered with its hits.
type Ask<'a> = dyn Fn(&str) -> anyhow::Result<Vec<Hit>> + 'a;

/// `--stdin`: one question per line of standard input, one JSON line of hits each.
fn answer_lines(reader: &Reader, ask: &Ask<'_>) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.context("could not read standard input")?;
        if line.trim().is_empty() {
            continue;
        }
        let hits = ask(&line)?;
        writeln!(out, "{}", answer_json(&line, reader, &hits))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One question's hits, as text or (`--json`) as JSON.
fn answer(
    question: Option<String>,
    reader: &Reader,
    json: bool,
    ask: &Ask<'_>,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let Some(question) = question.filter(|q| !q.trim().is_empty()) else {
        bail!(
            "ask a question (troupe memory query \"What do we know about Galvin?\"), or use --stdin"
        );
    };
    let hits = ask(&question)?;
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&answer_json(&question, reader, &hits))?
        )?;
    } else {
        print_hits(&mut out, &hits)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `troupe memory import`: every line checked before anything is stored.
fn import(
    dir: &Path,
    campaign: &CampaignDir,
    file: &Path,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("could not read {}", file.display()))?;
    let episodes = match extract::read_import(&text, &file.display().to_string()) {
        Ok(e) => e,
        Err(errors) => {
            for e in &errors {
                eprintln!("{e}");
            }
            bail!(
                "{} in {}; nothing was imported",
                count(errors.len(), "bad line"),
                file.display()
            );
        }
    };
    // The campaign's own store first, so a campaign started by an import can be played.
    let _lock = sessions::CampaignLock::take(dir)?;
    sessions::create_store(dir)?;
    let mut store = crate::graph::open_memory(campaign, None, memory_url)?;
    let n = extract::import(&mut store, &episodes).map_err(crate::graph::memory_error)?;
    let c = store.counts().map_err(crate::graph::memory_error)?;
    println!(
        "Imported {} of {} in {} ({}, {} in memory now).",
        count(n, "new episode"),
        episodes.len(),
        file.display(),
        count(c.facts, "fact"),
        count(c.entities, "entity")
    );
    Ok(ExitCode::SUCCESS)
}

/// `troupe memory export`: the whole memory as JSONL, to a file or standard output.
fn export(
    campaign: &CampaignDir,
    output: Option<PathBuf>,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let (_sessions, store) = open(campaign, memory_url)?;
    let lines = extract::export(&store).map_err(crate::graph::memory_error)?;
    let mut text = lines.join("\n");
    text.push('\n');
    match output {
        Some(path) => {
            std::fs::write(&path, text)
                .with_context(|| format!("could not write {}", path.display()))?;
            eprintln!("Wrote {} lines to {}", lines.len(), path.display());
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `troupe memory stats`: the counts, and every contradiction settled with both sources.
fn stats(campaign: &CampaignDir, memory_url: Option<&str>) -> anyhow::Result<ExitCode> {
    let (_sessions, store) = open(campaign, memory_url)?;
    let c = store.counts().map_err(crate::graph::memory_error)?;
    println!(
        "{}, {} ({} still true), {}, {}",
        count(c.episodes, "episode"),
        count(c.facts, "fact"),
        c.valid_facts,
        count(c.entities, "entity"),
        count(c.conflicts, "conflict")
    );
    for k in store.conflicts().map_err(crate::graph::memory_error)? {
        println!(
            "- session {} turn {}, {}: \"{}\" ({}) vs \"{}\" ({}): {}",
            k.at.session,
            k.at.turn,
            k.slot,
            k.old_text,
            k.old_source.describe(),
            k.new_text,
            k.new_source.describe(),
            k.resolution
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A campaign's memory, with its session store when it has one (a memory on a graph server may
/// have no campaign.db beside it). Both stay open for the whole command: campaign.db is a WAL
/// database, and each time its last connection closes SQLite checkpoints it and deletes the
/// `-wal` and `-shm` files that the next open makes again (opening it three times in turn cost
/// 6–9% of a question's CPU at 100k facts: BENCHMARKS.md, "A question's cost").
fn open(
    campaign: &CampaignDir,
    memory_url: Option<&str>,
) -> anyhow::Result<(Option<Store>, MemoryStore)> {
    let (dir, db) = (campaign.path(), campaign.db());
    let place = crate::graph::place(campaign, None, memory_url)?;
    if let MemoryPlace::Server(_) = place {
        let sessions = if db.is_file() {
            Some(sessions::create_store(dir)?)
        } else {
            None
        };
        return Ok((sessions, crate::graph::open(&place)?));
    }
    if !db.is_file() {
        bail!(
            "there is no campaign memory in {} (no campaign.db): play a session there, or `troupe memory import NOTES.jsonl --campaign {}`",
            dir.display(),
            dir.display()
        );
    }
    // The session store first: a damaged or locked campaign.db is named with what to do.
    let sessions = sessions::create_store(dir)?;
    let memory = MemoryStore::open(&db).map_err(crate::graph::memory_error)?;
    Ok((Some(sessions), memory))
}

/// "Now" for ages and "last session": the session being played, or the next one.
fn now(sessions: Option<&Store>, store: &MemoryStore) -> anyhow::Result<GameTime> {
    let latest = match sessions {
        Some(s) => s.latest_session()?,
        None => None,
    };
    let latest_played = latest.is_some();
    let from_sessions = match latest {
        Some(s) if s.ended_reason.is_none() => s.number,
        Some(s) => s.number + 1,
        None => 1,
    };
    let (session, day) = store.latest().map_err(crate::graph::memory_error)?;
    let from_facts = session.map_or(1, |s| s + 1);
    // The story's calendar, where the sessions track it; else the latest day memory holds.
    let played_day = match (sessions, latest_played) {
        (Some(s), true) => Some(s.campaign_day()?),
        _ => None,
    };
    Ok(GameTime {
        session: from_sessions.max(from_facts),
        turn: 0,
        day: played_day.max(day),
    })
}

fn answer_json(question: &str, reader: &Reader, hits: &[Hit]) -> serde_json::Value {
    json!({
        "question": question,
        "reader": format!("{reader:?}"),
        "nothing_known": hits.is_empty(),
        "results": hits.iter().map(|h| json!({
            "fact": h.fact.text,
            "fact_id": h.fact.id,
            "confidence": round(h.confidence),
            "score": round(h.score),
            "source": h.source,
            "speaker": h.fact.speaker,
            "scope": h.fact.scope,
            "truth": h.fact.truth,
            "memory_type": h.fact.memory_type,
            "formed_at": h.formed_at,
            "session": h.fact.at.session,
            "turn": h.fact.at.turn,
            "day": h.fact.at.day,
            "episode_ids": h.fact.episode_ids,
            "entities": h.fact.entities,
        })).collect::<Vec<_>>(),
    })
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn print_hits(out: &mut impl Write, hits: &[Hit]) -> std::io::Result<()> {
    if hits.is_empty() {
        return writeln!(out, "Nothing known.");
    }
    for (i, h) in hits.iter().enumerate() {
        writeln!(out, "{}. {}", i + 1, h.fact.text)?;
        writeln!(
            out,
            "   confidence {:.2} · {} · formed {} · episodes {}",
            h.confidence,
            h.source,
            h.formed_at,
            h.fact.episode_ids.join(", ")
        )?;
    }
    Ok(())
}

/// `troupe memory migrate`: campaign.db to a graph server, or back. `--to` copies the memory
/// from where it lives now (`memory_url` is `--memory-url`).
fn migrate(
    campaign: &CampaignDir,
    to: Option<String>,
    from: Option<String>,
    replace: bool,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let dir = campaign.path();
    let _lock = sessions::CampaignLock::take(dir)?;
    let name = MemoryPlace::campaign_name(campaign)?;
    let target =
        |url: &str| troupe_graph::Target::parse(url, None, &name).map_err(anyhow::Error::from);
    let (report, wrote) = match (to, from) {
        (Some(url), _) => {
            let (_sessions, store) = open(campaign, memory_url)?;
            let t = target(&url)?;
            let r = troupe_graph::migrate::to_graph(&store, &t, replace)
                .map_err(|e| crate::graph::graph_error(&e))?;
            (r, t.describe())
        }
        (None, Some(url)) => {
            sessions::create_store(dir)?;
            let db = campaign.db();
            let mut store = MemoryStore::open(&db).map_err(crate::graph::memory_error)?;
            let r = troupe_graph::migrate::from_graph(&target(&url)?, &mut store)
                .map_err(|e| crate::graph::graph_error(&e))?;
            (r, db.display().to_string())
        }
        (None, None) => bail!("say where to: --to URL, or --from URL to copy back"),
    };
    let counts: Vec<String> = report
        .counts
        .iter()
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    println!(
        "Copied campaign {name:?} to {wrote}: {}. Checked: every row read back equal, {} sample recalls answered the same.",
        counts.join(", "),
        report.recalls_compared
    );
    Ok(ExitCode::SUCCESS)
}
