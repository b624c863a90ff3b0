//! The memory the driver recalls from and stores to: the [`CampaignMemory`] trait, the
//! campaign's own memory in `campaign.db` ([`StoreMemory`]) and a replay's recording
//! ([`RecordedMemory`]).

use std::collections::{HashMap, VecDeque};

use troupe_agents::KnownName;
use troupe_memory::claims::store_claims;
use troupe_memory::extract::{Moment, store_episodes};
use troupe_memory::{
    Episode, GameTime, MemoryStore, Query, Reader, RecallKey, Rememberer, Source, corrupt,
};

use super::types::{Extraction, RecallLayer, Recalled, Remembered};
use crate::events::{Envelope, Event};
use crate::session::Session;

/// The memory the driver recalls from and stores to.
pub trait CampaignMemory: Send {
    /// What `agent` recalls, for both its layers, given the question (usually the narration).
    fn recall(&mut self, s: &Session, agent: &str, query: &str) -> Result<Vec<Recalled>, String>;
    /// Store these episodes (from [`episodes_of`](super::episodes::episodes_of)), with the facts
    /// the model drew from them.
    fn remember(
        &mut self,
        s: &Session,
        items: &[(Episode, Source, Moment)],
        extraction: &Extraction,
    ) -> Result<Remembered, String>;
    /// The names memory knows, for the extraction prompt of session `s`'s storage step.
    fn known_names(&mut self, _s: &Session) -> Vec<KnownName> {
        Vec::new()
    }
    /// A short name for the log ("campaign.db", "recorded").
    fn describe(&self) -> String;
}

/// How many memories each layer gets per recall.
pub const RECALL_TOP_K: usize = 5;

/// The campaign's own memory, in `campaign.db`.
pub struct StoreMemory {
    pub store: MemoryStore,
    /// Seed 000's global corruption strength, 0 (off) to 1.
    pub corruption_strength: f64,
}

impl StoreMemory {
    pub fn new(store: MemoryStore, corruption_strength: f64) -> Self {
        StoreMemory {
            store,
            corruption_strength,
        }
    }

    /// A fresh memory in RAM, without corruption (tests, benchmarks).
    pub fn in_memory() -> Result<Box<dyn CampaignMemory>, troupe_memory::Error> {
        Ok(Box::new(StoreMemory::new(MemoryStore::in_memory()?, 0.0)))
    }
}

/// For a memory from before in-game days were tracked, a session counts as a week.
const DAYS_PER_SESSION: u32 = 7;

/// The in-game days since a memory was made: from the story's calendar when the memory has a
/// day, else a week per session.
fn days_since(now: GameTime, then: GameTime) -> u32 {
    match (now.day, then.day) {
        (Some(now), Some(then)) => now.saturating_sub(then),
        _ => now.session.saturating_sub(then.session) * DAYS_PER_SESSION,
    }
}

impl CampaignMemory for StoreMemory {
    fn recall(&mut self, s: &Session, agent: &str, query: &str) -> Result<Vec<Recalled>, String> {
        let now = GameTime {
            session: s.number,
            turn: s.turn_number,
            day: Some(s.day()),
        };
        // This agent's recall at this turn counts once. Should it have run before (the step
        // recalled, then the process died before the session saved it), what that run counted
        // is taken back first, so it sees the memory as the first run did and recalls the same.
        let key = RecallKey {
            session: s.number,
            turn: s.turn_number,
            reader: agent,
        };
        self.store.unrehearse(&key).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        let mut recalled_ids = Vec::new();
        let who = s.seat(agent).map(|seat| Rememberer {
            detail_oriented: seat.player.traits.detail_oriented,
            emotional_memory: seat.player.traits.emotional_memory,
            base_decay_rate: 0.5,
        });
        for (layer, reader) in [
            (RecallLayer::Player, Reader::Player(agent.to_string())),
            (RecallLayer::Character, Reader::Character(agent.to_string())),
        ] {
            let mut q = Query::new(query, reader.clone(), now);
            // Turns still in the prompt's recent window are not memories yet: leave them out
            // (asking for more first, so the window does not crowd out older memories).
            q.top_k = RECALL_TOP_K * 3;
            let recent_from = s
                .turn_number
                .saturating_sub(crate::visibility::RECENT_TURNS as u32);
            let mut hits = self.store.search(&q).map_err(|e| e.to_string())?;
            hits.retain(|h| h.fact.at.session != s.number || h.fact.at.turn < recent_from);
            // One memory per episode: a fact drawn from a line and the line itself say the
            // same thing, and the prompt has room for five.
            let mut seen = std::collections::HashSet::new();
            hits.retain(|h| {
                h.fact
                    .episode_ids
                    .first()
                    .is_none_or(|e| seen.insert(e.clone()))
            });
            hits.truncate(RECALL_TOP_K);
            // At a session's start, what happened last time comes to mind too.
            if s.turn_number <= 1 && s.number > 1 {
                let mut recap = Query::new("What happened last session?", reader, now);
                recap.top_k = 3;
                for h in self.store.search(&recap).map_err(|e| e.to_string())? {
                    if !hits.iter().any(|x| x.fact.id == h.fact.id) {
                        hits.push(h);
                    }
                }
            }
            let texts: Vec<String> = hits.iter().map(|h| h.fact.text.clone()).collect();
            for (i, h) in hits.into_iter().enumerate() {
                let days = days_since(now, h.fact.at);
                let other = texts
                    .get((i + 1) % texts.len().max(1))
                    .filter(|_| texts.len() > 1);
                let corrupted = match (&who, self.corruption_strength > 0.0) {
                    (Some(who), true) => corrupt(
                        &h.fact,
                        who,
                        days,
                        self.corruption_strength,
                        s.seed ^ u64::from(s.turn_number),
                        other.map(String::as_str),
                    ),
                    _ => None,
                };
                recalled_ids.push(h.fact.id);
                out.push(Recalled {
                    layer,
                    fact_id: h.fact.id,
                    text: corrupted
                        .as_ref()
                        .map_or_else(|| h.fact.text.clone(), |c| c.text.clone()),
                    score: h.score,
                    confidence: match &corrupted {
                        // A corrupted recall feels a little less sure, never more.
                        Some(c) => h.confidence * (1.0 - c.probability / 2.0),
                        None => h.confidence,
                    },
                    formed_at: h.formed_at,
                    source: h.source,
                    episode_ids: h.fact.episode_ids.clone(),
                    original: corrupted.as_ref().map(|_| h.fact.text.clone()),
                    corruption: corrupted.map(|c| c.kind),
                });
            }
        }
        recalled_ids.sort_unstable();
        recalled_ids.dedup();
        self.store
            .rehearse_once(&recalled_ids, &key)
            .map_err(|e| e.to_string())?;
        Ok(out)
    }

    fn remember(
        &mut self,
        _s: &Session,
        items: &[(Episode, Source, Moment)],
        extraction: &Extraction,
    ) -> Result<Remembered, String> {
        let before = self.store.marks().map_err(|e| e.to_string())?;
        let (mut status, mut extracted, mut dropped) = (extraction.status(), 0, Vec::new());
        match extraction {
            Extraction::Claims(claims) if !claims.is_empty() => {
                let got =
                    store_claims(&mut self.store, items, claims).map_err(|e| e.to_string())?;
                if got.accepted == 0 {
                    // Every fact was dropped: the raw episodes went in, as for a failed call.
                    status = Some(format!(
                        "fallback: no fact the model gave is in the text ({} dropped)",
                        got.dropped.len()
                    ));
                }
                extracted = got.accepted as u64;
                dropped = got.dropped;
            }
            _ => {
                store_episodes(&mut self.store, items).map_err(|e| e.to_string())?;
            }
        }
        let (episodes, facts) = self.store.added_since(&before).map_err(|e| e.to_string())?;
        let conflicts = self
            .store
            .conflicts_after(&before)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|c| {
                format!(
                    "{}: \"{}\" ({}) → \"{}\" ({}), {}",
                    c.slot,
                    c.old_text,
                    c.old_source.describe(),
                    c.new_text,
                    c.new_source.describe(),
                    c.resolution
                )
            })
            .collect();
        Ok(Remembered {
            episodes,
            facts,
            conflicts,
            extracted,
            dropped,
            extraction: status,
        })
    }

    fn known_names(&mut self, _s: &Session) -> Vec<KnownName> {
        let mut entities = self.store.entities().unwrap_or_default();
        // The most recently seen first; a long campaign's prompt names only the latest.
        entities.sort_by(|a, b| b.last_session.cmp(&a.last_session).then(b.id.cmp(&a.id)));
        entities
            .into_iter()
            .take(KNOWN_NAMES)
            .map(|e| {
                let own = troupe_memory::text::normalise_name(&e.name);
                KnownName {
                    aliases: e.aliases.into_iter().filter(|a| *a != own).collect(),
                    name: e.name,
                }
            })
            .collect()
    }

    fn describe(&self) -> String {
        format!("campaign memory in {}", self.store.path().display())
    }
}

/// How many known names the extraction prompt lists at most.
const KNOWN_NAMES: usize = 40;

/// A replay's memory: each recall answers what the recording says was recalled, each storage
/// step what the recording says was stored, and nothing is stored (the campaign's memory is not
/// the replay's to change).
pub struct RecordedMemory {
    recalls: HashMap<(u32, String), Vec<Vec<Recalled>>>,
    served: HashMap<(u32, String), usize>,
    stored: HashMap<u32, VecDeque<Remembered>>,
    /// The names each turn's extraction prompts listed, in order.
    known: HashMap<u32, VecDeque<Vec<KnownName>>>,
}

impl RecordedMemory {
    pub fn from_log(events: &[Envelope]) -> Self {
        let mut recalls: HashMap<(u32, String), Vec<Vec<Recalled>>> = HashMap::new();
        for e in events {
            if let Event::MemoryRetrieved {
                agent, recalled, ..
            } = &e.event
            {
                recalls
                    .entry((e.turn_number, agent.clone()))
                    .or_default()
                    .push(recalled.clone());
            }
        }
        let mut stored: HashMap<u32, VecDeque<Remembered>> = HashMap::new();
        let mut known: HashMap<u32, VecDeque<Vec<KnownName>>> = HashMap::new();
        for e in events {
            let Event::MemoryStorage {
                stored: step,
                extraction,
                known_names,
                ..
            } = &e.event
            else {
                continue;
            };
            if let Some(r) = step {
                let mut r = r.clone();
                r.extraction = extraction.clone();
                stored.entry(e.turn_number).or_default().push_back(r);
            }
            if let Some(names) = known_names {
                known
                    .entry(e.turn_number)
                    .or_default()
                    .push_back(names.clone());
            }
        }
        RecordedMemory {
            recalls,
            served: HashMap::new(),
            stored,
            known,
        }
    }
}

impl CampaignMemory for RecordedMemory {
    fn recall(&mut self, s: &Session, agent: &str, _query: &str) -> Result<Vec<Recalled>, String> {
        let key = (s.turn_number, agent.to_string());
        let n = self.served.entry(key.clone()).or_default();
        let got = self
            .recalls
            .get(&key)
            .and_then(|v| v.get(*n))
            .cloned()
            .unwrap_or_default();
        *n += 1;
        Ok(got)
    }

    fn remember(
        &mut self,
        s: &Session,
        items: &[(Episode, Source, Moment)],
        extraction: &Extraction,
    ) -> Result<Remembered, String> {
        if let Some(r) = self
            .stored
            .get_mut(&s.turn_number)
            .and_then(VecDeque::pop_front)
        {
            return Ok(r);
        }
        // Past the recording (a replay from a turn on, with another model): what would be
        // stored, without storing it.
        Ok(Remembered {
            episodes: items.len() as u64,
            facts: items.len() as u64,
            extraction: extraction.status(),
            ..Remembered::default()
        })
    }

    /// The names the recording's prompt listed at this step; none past the recording or in a
    /// log from before they were recorded.
    fn known_names(&mut self, s: &Session) -> Vec<KnownName> {
        self.known
            .get_mut(&s.turn_number)
            .and_then(VecDeque::pop_front)
            .unwrap_or_default()
    }

    fn describe(&self) -> String {
        "recorded memory (replay)".to_string()
    }
}
