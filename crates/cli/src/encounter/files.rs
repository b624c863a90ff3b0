//! What an encounter leaves outside its log: `summaries/{encounterId}-{timestamp}.txt`
//! (append-only), `tally.json` (runs and last run per spec, rewritten atomically at each start),
//! and the campaign memory (what the NPCs with a memory key remember next time).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use troupe_encounter::log::{NpcMemory, State};
use troupe_encounter::names::npc_name;
use troupe_encounter::spec::Randomizable;
use troupe_memory::{
    EntityKind, Episode, GameTime, MemoryStore, MemoryType, NewFact, Query, Reader, Scope, Source,
};

/// How many memories of earlier encounters an NPC brings to a run.
pub const NPC_MEMORIES: usize = 6;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TallyEntry {
    pub runs: u64,
    #[serde(rename = "lastRun")]
    pub last_run: String,
}

pub type Tally = BTreeMap<String, TallyEntry>;

pub fn read_tally(dir: &Path) -> anyhow::Result<Tally> {
    let path = dir.join("tally.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a tally (runs per spec)", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tally::new()),
        Err(e) => Err(e).with_context(|| format!("could not read {}", path.display())),
    }
}

/// Count a run of `spec` started `now`: written to a temporary file and renamed over the old one,
/// so a crash leaves the old tally or the new, never half of one.
pub fn bump_tally(dir: &Path, spec: &str, now: &str) -> anyhow::Result<()> {
    let mut tally = read_tally(dir)?;
    let entry = tally.entry(spec.to_string()).or_default();
    entry.runs += 1;
    entry.last_run = now.to_string();
    let path = dir.join("tally.json");
    let tmp = dir.join("tally.json.tmp");
    let text = serde_json::to_string_pretty(&tally)?;
    std::fs::write(&tmp, text + "\n")
        .with_context(|| format!("could not write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("could not replace {}", path.display()))
}

/// The outcome's goal label (or its id when it is not known).
fn outcome_label(state: &State, goal: &str) -> String {
    state
        .spec
        .goals()
        .chain(&state.extra_goals)
        .find(|g| g.id == goal)
        .map_or_else(|| goal.to_string(), |g| g.label.clone())
}

fn players(state: &State) -> String {
    let who: Vec<String> = state
        .seats
        .iter()
        .map(|s| format!("{} ({})", s.player, s.character))
        .collect();
    who.join(", ")
}

/// How an encounter ended, for its summary and its memory.
pub struct Outcome {
    pub goal: String,
    pub label: String,
    pub summary: String,
    /// "Player (Character), …".
    pub players: String,
    pub round: u32,
}

impl Outcome {
    /// A resolved run's outcome; None while it is unresolved.
    pub fn of(state: &State) -> Option<Outcome> {
        let (goal, summary) = state.outcome.as_ref()?;
        Some(Outcome {
            goal: goal.clone(),
            label: outcome_label(state, goal),
            summary: summary.clone(),
            players: players(state),
            round: state.round,
        })
    }
}

/// Write the summary file of a resolved run; a file already there (a resumed run that had
/// written it) is left as it is: summaries are append-only.
pub fn write_summary(dir: &Path, file: &str, state: &State, at: &str) -> anyhow::Result<()> {
    match Outcome::of(state) {
        Some(outcome) => write_summary_of(dir, file, &state.spec, &outcome, at),
        None => Ok(()),
    }
}

pub fn write_summary_of(
    dir: &Path,
    file: &str,
    spec: &troupe_encounter::Spec,
    outcome: &Outcome,
    at: &str,
) -> anyhow::Result<()> {
    let path = dir.join(file);
    if path.exists() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("could not create {}", parent.display()))?;
    }
    let text = format!(
        "Encounter: {}\nID: {}\nDate: {at}\nOutcome: {} ({})\nPlayers: {}\n\nSummary:\n{}\n",
        spec.title, spec.id, outcome.goal, outcome.label, outcome.players, outcome.summary,
    );
    let mut f = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("could not create {}", path.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes())
        .with_context(|| format!("could not write {}", path.display()))
}

fn open_memory(dir: &Path) -> anyhow::Result<MemoryStore> {
    crate::graph::open_memory(dir, None)
}

/// What each NPC with a memory key remembers of earlier encounters: its own memories first,
/// then what the party's memory says of it, newest first.
pub fn npc_memories(
    dir: &Path,
    spec: &troupe_encounter::Spec,
    drawn: &[troupe_encounter::names::Drawn],
) -> anyhow::Result<Vec<NpcMemory>> {
    let store = open_memory(dir)?;
    let mut out = Vec::new();
    for npc in &spec.npcs {
        let Some(key) = &npc.memory_key else {
            continue;
        };
        let name = npc_name(npc, drawn).to_lowercase();
        let mut facts = store
            .facts(&Reader::Npc(key.clone()), false)
            .context("campaign memory")?;
        facts.retain(|f| {
            f.scope == Scope::Npc(key.clone()) || f.text.to_lowercase().contains(&name)
        });
        facts.sort_by_key(|f| (f.scope != Scope::Npc(key.clone()), std::cmp::Reverse(f.id)));
        let lines: Vec<String> = facts
            .into_iter()
            .take(NPC_MEMORIES)
            .map(|f| f.text)
            .collect();
        if !lines.is_empty() {
            out.push(NpcMemory {
                npc: npc.id.clone(),
                lines,
            });
        }
    }
    Ok(out)
}

/// A randomizable name from the campaign memory: the first non-player character named by the
/// best facts for its query, or None (the fallback is used) when memory has none.
pub fn name_from_memory(dir: &Path, r: &Randomizable) -> Option<String> {
    let store = open_memory(dir).ok()?;
    let now = GameTime {
        session: u32::MAX,
        turn: 0,
        day: None,
    };
    let npcs: Vec<String> = store
        .entities()
        .ok()?
        .into_iter()
        .filter(|e| e.kind == EntityKind::Npc)
        .map(|e| e.name)
        .collect();
    let hits = store
        .search(&Query::new(r.query.clone(), Reader::Party, now))
        .ok()?;
    hits.into_iter()
        .flat_map(|h| h.fact.entities)
        .find(|name| npcs.iter().any(|n| n.eq_ignore_ascii_case(name)))
}

/// Remember a resolved run (see [`remember_of`]).
pub fn remember(dir: &Path, state: &State, run: u32, at: &str) -> anyhow::Result<()> {
    match Outcome::of(state) {
        Some(outcome) => remember_of(dir, &state.spec, &state.names, &outcome, run, at),
        None => Ok(()),
    }
}

/// Remember an encounter: one episode, and a fact for the party and one for each NPC with a
/// memory key (what it saw the party do). The episode id makes a second write (a resume after a
/// crash) a no-op.
pub fn remember_of(
    dir: &Path,
    spec: &troupe_encounter::Spec,
    names: &[troupe_encounter::names::Drawn],
    outcome: &Outcome,
    run: u32,
    at: &str,
) -> anyhow::Result<()> {
    let mut store = open_memory(dir)?;
    let episode_id = format!("encounter-{}-{}", spec.id, at.replace(':', "-"));
    let known = store
        .episodes()
        .context("campaign memory")?
        .iter()
        .any(|e| e.id == episode_id);
    if known {
        return Ok(());
    }
    let text = format!(
        "In the encounter \"{}\" ({at}), {} took part. Outcome: {}. {}",
        spec.title, outcome.players, outcome.label, outcome.summary
    );
    let at_time = GameTime {
        session: run,
        turn: outcome.round,
        day: None,
    };
    let episode = Episode {
        id: episode_id.clone(),
        session: run,
        turn: outcome.round,
        day: None,
        timestamp: at.to_string(),
        speaker: "gm".to_string(),
        text: text.clone(),
        scope: Scope::Party,
    };
    let remembering: Vec<(String, String)> = spec
        .npcs
        .iter()
        .filter_map(|n| Some((n.memory_key.clone()?, npc_name(n, names))))
        .collect();
    let entities: Vec<(String, EntityKind)> = remembering
        .iter()
        .map(|(_, name)| (name.clone(), EntityKind::Npc))
        .collect();
    let fact = |scope: Scope, text: String| NewFact {
        text,
        scope,
        source: Source::Game,
        memory_type: MemoryType::Episodic,
        importance: 0.8,
        at: at_time,
        speaker: "gm".to_string(),
        episode_ids: vec![episode_id.clone()],
        entities: entities.clone(),
        slot: None,
    };
    let mut facts = vec![fact(Scope::Party, text.clone())];
    for (key, name) in &remembering {
        facts.push(fact(
            Scope::Npc(key.clone()),
            format!("{name} remembers: {text}"),
        ));
    }
    store.store(&[episode], &facts).context("campaign memory")?;
    Ok(())
}
