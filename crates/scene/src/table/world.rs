//! What an ended scene leaves the campaign, at every surface alike: its world deltas merged into
//! the campaign's world knowledge (`world.json`) and remembered as facts in the campaign memory
//! (`troupe memory query` recalls them), each with the memory source that carries its truth
//! level: canon as the GM's word, soft-canon as imported notes, improv as a character's
//! interpretation.

use std::path::PathBuf;

use troupe_campaign::CampaignDir;
use troupe_engine::Error;
use troupe_memory::{
    EntityKind, Episode, GameTime, MemoryStore, MemoryType, NewFact, Scope, Source,
};

use super::SceneTableError;
use crate::{State, Truth, World, WorldDelta};

/// Where the scene's changes were kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    /// The campaign's world knowledge file.
    pub world: PathBuf,
    /// How many facts the campaign memory took.
    pub facts: usize,
}

/// Keep what run `run` of the scene in `state` changed in the world: `deltas` merged into the
/// campaign's `world.json` (written whole, then renamed over the old one) and stored in `memory`
/// as of `session` (the campaign's latest session: the memory's clock).
pub fn keep_world(
    dir: &CampaignDir,
    run: u32,
    session: u32,
    state: &State,
    deltas: &[WorldDelta],
    memory: &mut MemoryStore,
) -> Result<Kept, Error> {
    let path = dir.world();
    let mut world: World = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| SceneTableError::WorldFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })?,
        Err(_) => state.world.clone(),
    };
    world.merge(deltas);
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(&world).map_err(|e| SceneTableError::WorldFile {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    let (episodes, facts) = remembered(run, session, state, deltas);
    memory.store(&episodes, &facts).map_err(Error::Memory)?;
    Ok(Kept {
        world: path,
        facts: facts.len(),
    })
}

/// Each delta as an episode the GM told and the fact it carries, named by its card.
fn remembered(
    run: u32,
    session: u32,
    state: &State,
    deltas: &[WorldDelta],
) -> (Vec<Episode>, Vec<NewFact>) {
    let at = GameTime {
        session,
        turn: state.turn,
        day: None,
    };
    let now = chrono::Utc::now().to_rfc3339();
    let mut episodes = Vec::new();
    let mut facts = Vec::new();
    for (i, d) in deltas.iter().enumerate() {
        let name = state
            .world
            .card(&d.card)
            .map_or_else(|| state.name_of(&d.card).to_string(), |c| c.name.clone());
        let text = format!("{name} {}", d.text);
        let id = format!("scene-{}-run-{run}-{i}", state.id);
        episodes.push(Episode {
            id: id.clone(),
            session,
            turn: state.turn,
            day: None,
            timestamp: now.clone(),
            speaker: "gm".into(),
            text: text.clone(),
            scope: Scope::Party,
        });
        facts.push(NewFact {
            text,
            scope: Scope::Party,
            source: match d.truth {
                Truth::Canon => Source::Gm,
                Truth::SoftCanon => Source::Import,
                Truth::Improv => Source::Character,
            },
            memory_type: MemoryType::Semantic,
            importance: 0.6,
            at,
            speaker: "gm".into(),
            episode_ids: vec![id],
            entities: vec![(name, EntityKind::Npc)],
            slot: None,
        });
    }
    (episodes, facts)
}
