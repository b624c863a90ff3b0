//! What an encounter leaves outside its log: `summaries/{encounterId}-{timestamp}.txt`
//! (append-only), `tally.json` (runs and last run per spec, rewritten atomically at each start),
//! and the campaign memory (what the NPCs with a memory key remember next time, and the names
//! a spec draws from it). The caller opens the memory (on `campaign.db` or a graph server).

use std::collections::BTreeMap;
use std::path::Path;

use crate::log::{NpcMemory, State};
use crate::names::{Drawn, draw, npc_name};
use crate::spec::Randomizable;
use serde::{Deserialize, Serialize};
use troupe_memory::{
    EntityKind, Episode, GameTime, MemoryStore, MemoryType, NewFact, Query, Reader, Scope, Source,
};

use troupe_campaign::CampaignDir;

use troupe_engine::Error;

/// How many memories of earlier encounters an NPC brings to a run.
pub const NPC_MEMORIES: usize = 6;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TallyEntry {
    pub runs: u64,
    #[serde(rename = "lastRun")]
    pub last_run: String,
}

pub type Tally = BTreeMap<String, TallyEntry>;

pub fn read_tally(dir: &Path) -> Result<Tally, Error> {
    let path = CampaignDir::new(dir).tally();
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| Error::Store {
            path: path.display().to_string(),
            message: format!("not a tally (runs per spec): {e}"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tally::new()),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// Count a run of `spec` started `now`: written to a temporary file and renamed over the old one,
/// so a crash leaves the old tally or the new, never half of one.
pub fn bump_tally(dir: &Path, spec: &str, now: &str) -> Result<(), Error> {
    let mut tally = read_tally(dir)?;
    let entry = tally.entry(spec.to_string()).or_default();
    entry.runs += 1;
    entry.last_run = now.to_string();
    let path = CampaignDir::new(dir).tally();
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(&tally).map_err(|e| Error::Encode(e.to_string()))?;
    std::fs::write(&tmp, text + "\n").map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
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
    let who: Vec<String> = state.seats.iter().map(super::asks::who).collect();
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
pub fn write_summary(dir: &Path, file: &str, state: &State, at: &str) -> Result<(), Error> {
    match Outcome::of(state) {
        Some(outcome) => write_summary_of(dir, file, &state.spec, &outcome, at),
        None => Ok(()),
    }
}

pub fn write_summary_of(
    dir: &Path,
    file: &str,
    spec: &crate::Spec,
    outcome: &Outcome,
    at: &str,
) -> Result<(), Error> {
    let path = dir.join(file);
    if path.exists() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let text = format!(
        "Encounter: {}\nID: {}\nDate: {at}\nOutcome: {} ({})\nPlayers: {}\n\nSummary:\n{}\n",
        spec.title, spec.id, outcome.goal, outcome.label, outcome.players, outcome.summary,
    );
    let mut f = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    std::io::Write::write_all(&mut f, text.as_bytes()).map_err(|e| Error::io(&path, e))
}

/// A run's cast: the names its spec draws (from the campaign memory where the spec asks it)
/// and what its NPCs remember of earlier encounters.
pub fn cast(
    store: &MemoryStore,
    spec: &crate::Spec,
    seed: u64,
) -> Result<(Vec<Drawn>, Vec<NpcMemory>), Error> {
    let names = draw(spec, seed, &mut |r| name_from_memory(store, r));
    let memories = npc_memories(store, spec, &names)?;
    Ok((names, memories))
}

/// What each NPC with a memory key remembers of earlier encounters: its own memories first,
/// then what the party's memory says of it, newest first.
pub fn npc_memories(
    store: &MemoryStore,
    spec: &crate::Spec,
    drawn: &[Drawn],
) -> Result<Vec<NpcMemory>, Error> {
    let mut out = Vec::new();
    for npc in &spec.npcs {
        let Some(key) = &npc.memory_key else {
            continue;
        };
        let name = npc_name(npc, drawn).to_lowercase();
        let mut facts = store
            .facts(&Reader::Npc(key.clone()), false)
            .map_err(Error::Memory)?;
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
pub fn name_from_memory(store: &MemoryStore, r: &Randomizable) -> Option<String> {
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
pub fn remember(store: &mut MemoryStore, state: &State, run: u32, at: &str) -> Result<(), Error> {
    match Outcome::of(state) {
        Some(outcome) => remember_of(store, &state.spec, &state.names, &outcome, run, at),
        None => Ok(()),
    }
}

/// Remember an encounter: one episode, and a fact for the party and one for each NPC with a
/// memory key (what it saw the party do). The episode id makes a second write (a resume after a
/// crash) a no-op.
pub fn remember_of(
    store: &mut MemoryStore,
    spec: &crate::Spec,
    names: &[Drawn],
    outcome: &Outcome,
    run: u32,
    at: &str,
) -> Result<(), Error> {
    let episode_id = format!("encounter-{}-{}", spec.id, at.replace(':', "-"));
    let known = store
        .episodes()
        .map_err(Error::Memory)?
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
    store.store(&[episode], &facts).map_err(Error::Memory)?;
    Ok(())
}
