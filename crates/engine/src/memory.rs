//! The campaign memory at the table: what each AI recalls before it decides, and what the turn
//! leaves behind in memory.
//!
//! Recall and storage are effects, like model calls: the driver performs them through
//! [`CampaignMemory`] and records what came back as events, so views are built from the log and
//! a replay answers from the recording ([`RecordedMemory`]) instead of today's memory.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use troupe_agents::{
    EXTRACT_AGENT, EXTRACT_PURPOSE, ExtractedFact, ExtractionLine, KnownName, Layer, read_extracted,
};
use troupe_llm::AttemptRecord;
use troupe_memory::claims::{Claim, store_claims};
use troupe_memory::extract::{Moment, store_episodes};
use troupe_memory::{
    CorruptionType, Episode, GameTime, MemoryStore, Query, Reader, RecallKey, Rememberer, Scope,
    Source, corrupt,
};

use crate::driver::Table;
use crate::{Envelope, Event, Session};

/// Which layer of an AI a recalled memory is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecallLayer {
    Player,
    Character,
}

/// One memory as an AI got it back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recalled {
    pub layer: RecallLayer,
    pub fact_id: i64,
    /// What the AI remembers (corrupted, when it was).
    pub text: String,
    /// How well it matched the query: the retrieval's ranking score (relevance, not truth).
    #[serde(default)]
    pub score: f64,
    pub confidence: f64,
    pub formed_at: String,
    pub source: String,
    pub episode_ids: Vec<String>,
    /// The stored fact, when this recall came back corrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corruption: Option<CorruptionType>,
}

impl Recalled {
    /// The line a prompt shows.
    pub fn line(&self) -> String {
        format!(
            "{} ({}, {}; confidence {:.2})",
            self.text, self.source, self.formed_at, self.confidence
        )
    }
}

/// What a storage step wrote.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Remembered {
    pub episodes: u64,
    pub facts: u64,
    /// Contradictions settled by precedence, for researchers: "slot: old (source) → new (source)".
    pub conflicts: Vec<String>,
    /// Facts the model drew from free text that passed the checks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extracted: u64,
    /// Facts the model gave that were dropped, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// How facts were drawn from free text (`model`, `fallback: …`, `off`); the driver logs it
    /// as the `memory_storage` event's own `extraction` field.
    #[serde(skip)]
    pub extraction: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What became of a storage step's extraction call.
#[derive(Clone, Debug, PartialEq)]
pub enum Extraction {
    /// The campaign turned extraction off (`memory.extraction: false`).
    Off,
    /// The turns held no free text to extract from.
    Nothing,
    /// The model's facts, each tied to its episode and the memory it goes to.
    Claims(Vec<Claim>),
    /// The call failed or its reply could not be used: the raw episodes are stored.
    Failed(String),
}

impl Extraction {
    /// The log's word for it, when there was anything to extract from.
    fn status(&self) -> Option<String> {
        match self {
            Extraction::Off => Some("off".into()),
            Extraction::Nothing => None,
            Extraction::Claims(c) if c.is_empty() => {
                Some("fallback: the model found no facts".into())
            }
            Extraction::Claims(_) => Some("model".into()),
            Extraction::Failed(why) => Some(format!("fallback: {why}")),
        }
    }
}

/// The memory the driver recalls from and stores to.
pub trait CampaignMemory: Send {
    /// What `agent` recalls, for both its layers, given the question (usually the narration).
    fn recall(&mut self, s: &Session, agent: &str, query: &str) -> Result<Vec<Recalled>, String>;
    /// Store these episodes (from [`episodes_of`]), with the facts the model drew from them.
    fn remember(
        &mut self,
        s: &Session,
        items: &[(Episode, Source, Moment)],
        extraction: &Extraction,
    ) -> Result<Remembered, String>;
    /// The names memory knows, for the extraction prompt.
    fn known_names(&self) -> Vec<KnownName> {
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

/// In-game days are not tracked yet: for corruption's time factor a session counts as a week.
const DAYS_PER_SESSION: u32 = 7;

impl CampaignMemory for StoreMemory {
    fn recall(&mut self, s: &Session, agent: &str, query: &str) -> Result<Vec<Recalled>, String> {
        let now = GameTime {
            session: s.number,
            turn: s.turn_number,
            day: None,
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
                let days = now.session.saturating_sub(h.fact.at.session) * DAYS_PER_SESSION;
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

    fn known_names(&self) -> Vec<KnownName> {
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
        for e in events {
            if let Event::MemoryStorage {
                stored: Some(r),
                extraction,
                ..
            } = &e.event
            {
                let mut r = r.clone();
                r.extraction = extraction.clone();
                stored.entry(e.turn_number).or_default().push_back(r);
            }
        }
        RecordedMemory {
            recalls,
            served: HashMap::new(),
            stored,
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

    fn describe(&self) -> String {
        "recorded memory (replay)".to_string()
    }
}

/// The episodes of the given turns, from the session's standing events: what was said and done
/// at the table, each in the memory it belongs to.
///
/// - GM narration, answers, outcomes and LASER FEELINGS answers: the party's, canon.
/// - Each character's accepted action and dialogue: the party's (everyone heard it).
/// - Dice: the party's, a game record.
/// - A player's strategy: that player's alone (never its character's).
/// - A character's reaction (its feelings): that character's alone.
pub fn episodes_of(
    s: &Session,
    events: &[Envelope],
    turns: &[u32],
) -> Vec<(Episode, Source, Moment)> {
    let mut scratch = Session::new(s.id.clone(), s.number);
    // The events may start mid-session: what came before them and the episodes need (the seats,
    // the whispers told earlier) comes from the session itself.
    scratch.campaign = s.campaign.clone();
    let told_in_range = events
        .iter()
        .filter(|e| matches!(e.event, Event::Whisper { .. }))
        .count();
    scratch.whispers = s
        .whispers
        .iter()
        .take(s.whispers.len().saturating_sub(told_in_range))
        .cloned()
        .collect();
    let mut out = Vec::new();
    for env in events {
        let completing = matches!(env.event, Event::TurnCompleted);
        if completing && turns.contains(&env.turn_number) {
            out.extend(turn_episodes(&scratch));
        }
        if let Event::Whisper { to, scope, text } = &env.event
            && turns.contains(&env.turn_number)
        {
            out.extend(whisper_episodes(s, env, to.as_deref(), *scope, text));
        }
        scratch.apply(env);
    }
    // The turn in progress (storage runs before the turn completes).
    if scratch.in_turn && turns.contains(&scratch.turn_number) {
        out.extend(turn_episodes(&scratch));
    }
    out
}

/// A whisper goes into the memory of exactly the layers it was told to: player-only into the
/// player's, character-only into the character's, both into both.
fn whisper_episodes(
    s: &Session,
    env: &Envelope,
    to: Option<&str>,
    scope: crate::WhisperScope,
    text: &str,
) -> Vec<(Episode, Source, Moment)> {
    use troupe_agents::Layer;
    let agents = match to {
        Some(a) => vec![a.to_string()],
        None => s.agent_ids(),
    };
    let mut out = Vec::new();
    for agent in agents {
        for (layer, memory_scope) in [
            (Layer::Player, Scope::Player(agent.clone())),
            (Layer::Character, Scope::Character(agent.clone())),
        ] {
            if !scope.reaches(layer) {
                continue;
            }
            let layer_key = if layer == Layer::Player { "p" } else { "c" };
            out.push((
                Episode {
                    id: format!(
                        "s{}-t{}-whisper{}-{agent}-{layer_key}",
                        s.number, env.turn_number, env.seq
                    ),
                    session: s.number,
                    turn: env.turn_number,
                    day: None,
                    timestamp: String::new(),
                    speaker: "gm".into(),
                    text: format!("The GM told me in private: {text}"),
                    scope: memory_scope,
                },
                Source::Gm,
                Moment::Answer,
            ));
        }
    }
    out
}

fn turn_episodes(s: &Session) -> Vec<(Episode, Source, Moment)> {
    use crate::secrets::{kept_from, withhold};
    use troupe_agents::Layer;
    let t = &s.turn;
    let n = s.turn_number;
    let mut out = Vec::new();
    // What the AIs wrote goes into memory with every whisper its readers may not know
    // withheld: shared memory is read by every player and character.
    let all: Vec<&str> = s
        .whispers
        .iter()
        .filter(|w| w.to.is_some() || w.scope != crate::WhisperScope::Both)
        .map(|w| w.text.as_str())
        .collect();
    let scrub = |scope: &Scope, text: &str| -> String {
        match scope {
            Scope::Player(a) => withhold(text, &kept_from(&s.whispers, a, Layer::Player)),
            Scope::Character(a) => withhold(text, &kept_from(&s.whispers, a, Layer::Character)),
            _ => withhold(text, &all),
        }
    };
    let mut push = |key: String, speaker: &str, scope: Scope, text: String, source, moment| {
        if text.trim().is_empty() {
            return;
        }
        // The GM's own words are the GM's to share.
        let text = if speaker == "gm" || speaker == "game" {
            text
        } else {
            scrub(&scope, &text)
        };
        out.push((
            Episode {
                id: format!("s{}-t{}-{}", s.number, n, key),
                session: s.number,
                turn: n,
                day: None,
                timestamp: String::new(),
                speaker: speaker.to_string(),
                text,
                scope,
            },
            source,
            moment,
        ));
    };
    if let Some(text) = &t.narration {
        push(
            "narration".into(),
            "gm",
            Scope::Party,
            text.clone(),
            Source::Gm,
            Moment::Narration,
        );
    }
    for (i, qa) in t.clarifications.iter().enumerate() {
        if qa.answer.trim().is_empty() {
            continue;
        }
        let name = character_name(s, &qa.asked_by);
        push(
            format!("answer{}", i + 1),
            "gm",
            Scope::Party,
            format!(
                "Asked by {name}: {} The GM answered: {}",
                qa.question, qa.answer
            ),
            Source::Gm,
            Moment::Answer,
        );
    }
    for seat in s.seats() {
        let agent = &seat.player.agent_id;
        let name = &seat.character.name;
        if let Some(intent) = t.intents.get(agent) {
            push(
                format!("strategy-{agent}"),
                agent,
                Scope::Player(agent.clone()),
                format!(
                    "My plan: {} I told {name}: {}",
                    intent.strategy, intent.directive
                ),
                Source::Player,
                Moment::Strategy,
            );
        }
        if let Some(action) = t.actions.get(agent).and_then(|a| a.final_action()) {
            let said = if action.dialogue.trim().is_empty() {
                String::new()
            } else {
                format!(" {name} said: \"{}\"", action.dialogue.trim())
            };
            push(
                format!("action-{agent}"),
                &seat.character.character_id,
                Scope::Party,
                format!("{name} attempted: \"{}\"{said}", action.action.trim()),
                Source::Character,
                Moment::Action,
            );
        }
        if let Some(roll) = t.rolls.get(agent) {
            let faces: Vec<String> = roll.dice.iter().map(|d| d.face.to_string()).collect();
            push(
                format!("dice-{agent}"),
                "game",
                Scope::Party,
                format!(
                    "{name} rolled {} for a {:?} task against {}: {} {}, {:?}.",
                    faces.join(", "),
                    roll.task,
                    roll.number.get(),
                    roll.successes,
                    if roll.successes == 1 {
                        "success"
                    } else {
                        "successes"
                    },
                    roll.outcome
                )
                .to_lowercase()
                .replacen(&name.to_lowercase(), name, 1),
                Source::Game,
                Moment::Dice,
            );
        }
        if let Some(i) = s.insight(agent) {
            push(
                format!("insight-{agent}"),
                "gm",
                Scope::Party,
                format!(
                    "LASER FEELINGS: {name} asked: {} The GM answered: {}",
                    i.question, i.answer
                ),
                Source::Gm,
                Moment::Answer,
            );
        }
        if let Some(text) = t.reactions.get(agent) {
            push(
                format!("reaction-{agent}"),
                &seat.character.character_id,
                Scope::Character(agent.clone()),
                text.clone(),
                Source::Character,
                Moment::Reaction,
            );
        }
    }
    if let Some(c) = s.settled()
        && let (Some(plan), Some(proposer)) = (&c.plan, &c.proposer)
    {
        let how = match c.outcome {
            troupe_agents::Outcome::Unanimous => "all agreed",
            troupe_agents::Outcome::Majority => "most agreed",
            _ => "put it to a vote",
        };
        let dissent: Vec<String> = c.dissent.iter().map(|a| character_name(s, a)).collect();
        let dissent = if dissent.is_empty() {
            String::new()
        } else {
            format!(" Not with it: {}.", dissent.join(", "))
        };
        // Each player remembers what the party settled on; characters never hear OOC talk,
        // so it stays out of the memory they read.
        for a in s.agent_ids() {
            push(
                format!("consensus-{a}"),
                proposer,
                Scope::Player(a.clone()),
                format!(
                    "The party {how} on {}'s plan (player {proposer}): {plan}{dissent}",
                    character_name(s, proposer)
                ),
                Source::Player,
                Moment::Strategy,
            );
        }
    }
    if let Some(text) = &t.outcome {
        push(
            "outcome".into(),
            "gm",
            Scope::Party,
            text.clone(),
            Source::Gm,
            Moment::Outcome,
        );
    }
    out
}

fn character_name(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map(|x| x.character.name.clone())
        .unwrap_or_else(|| agent.to_string())
}

/// Why this turn's memory is stored now, or None to hold it for the next trigger
/// (seed 001 FR-005: every 10 turns, critical events, scene and session end).
pub fn storage_trigger(s: &Session) -> Option<String> {
    let t = &s.turn;
    if s.turn_number > 0 && s.turn_number.is_multiple_of(10) {
        return Some("every 10 turns".into());
    }
    let texts = [t.narration.as_deref(), t.outcome.as_deref()];
    if texts.iter().flatten().any(|x| x.contains('@')) {
        return Some("critical event: an NPC was introduced".into());
    }
    if !t.rolls.is_empty() {
        return Some("critical event: a risky action was resolved".into());
    }
    let quest = |x: &&str| {
        let l = x.to_lowercase();
        l.contains("quest") || l.contains("mission")
    };
    if texts.iter().flatten().any(quest) {
        return Some("critical event: the quest changed".into());
    }
    let decision = t.intents.values().any(|i| {
        let l = i.strategy.to_lowercase();
        l.contains("decide") || l.contains("commit")
    });
    if decision {
        return Some("critical event: a major decision".into());
    }
    None
}

/// Completed turns of this session not yet in memory (the turn in flight is not counted).
pub fn unstored_turns(s: &Session) -> Vec<u32> {
    let last = if s.in_turn {
        s.turn_number.saturating_sub(1)
    } else {
        s.turn_number
    };
    (s.memory_through + 1..=last).collect()
}

/// The storage step's free text offered to the model: numbered lines, and for each line the
/// episode it is and the memory its facts go to.
pub struct ExtractionOffer {
    pub lines: Vec<ExtractionLine>,
    pub targets: Vec<(String, Scope)>,
}

impl ExtractionOffer {
    /// The model's facts as claims on their episodes; a line number the offer does not have
    /// names no episode, and the memory drops it.
    pub fn claims(&self, facts: Vec<ExtractedFact>) -> Vec<Claim> {
        facts
            .into_iter()
            .map(|f| {
                let (episode_id, scope) = f
                    .episode
                    .checked_sub(1)
                    .and_then(|i| self.targets.get(i))
                    .cloned()
                    .unwrap_or_else(|| (format!("line {}", f.episode), Scope::Party));
                Claim {
                    episode_id,
                    subject: f.subject,
                    attribute: f.attribute,
                    value: f.value,
                    statement: f.statement,
                    scope,
                }
            })
            .collect()
    }
}

/// The free text of these turns worth extracting facts from, and where the facts go:
///
/// - the GM's narration, answers and outcomes: the party's memory, canon;
/// - a character's action and dialogue: that character's own memory (everyone heard it, but a
///   character's claim is its belief, not the world's);
/// - a character's reaction: that character's own memory, as its episode is.
///
/// Dice are structured (stored as they are); a player's strategy and the GM's whispers are never
/// offered: private knowledge stays out of the prompt, so no fact drawn from it can reach a
/// memory that should not hold it.
pub fn extraction_offer(
    s: &Session,
    items: &[(Episode, Source, Moment)],
) -> Option<ExtractionOffer> {
    let mut offer = ExtractionOffer {
        lines: Vec::new(),
        targets: Vec::new(),
    };
    for (ep, _, moment) in items {
        let (speaker, scope) = match moment {
            // A whisper is the GM's too, but only its listeners' memory holds it: it stays
            // out of this shared prompt (its raw episode is already in the right memories).
            Moment::Narration | Moment::Answer | Moment::Outcome if ep.scope == Scope::Party => {
                ("GM".to_string(), Scope::Party)
            }
            Moment::Narration | Moment::Answer | Moment::Outcome => continue,
            Moment::Action | Moment::Reaction => {
                let Some(agent) = s.agent_of_character(&ep.speaker) else {
                    continue;
                };
                let name = s
                    .seat(&agent)
                    .map_or_else(|| ep.speaker.clone(), |x| x.character.name.clone());
                (name, Scope::Character(agent))
            }
            Moment::Dice | Moment::Strategy | Moment::Note => continue,
        };
        offer.lines.push(ExtractionLine {
            number: offer.lines.len() + 1,
            speaker,
            text: ep.text.clone(),
        });
        offer.targets.push((ep.id.clone(), scope));
    }
    (!offer.lines.is_empty()).then_some(offer)
}

/// Draw facts from the free text of these turns with the model, through the gateway like every
/// call. Returns what came of it and the call's attempts, for the log. Extraction is off when
/// the campaign says so; a failed call or an unusable reply is a fallback, never an error.
pub async fn extract(
    table: &Table,
    s: &Session,
    items: &[(Episode, Source, Moment)],
) -> (Extraction, Vec<AttemptRecord>) {
    if s.campaign.as_ref().is_some_and(|c| !c.memory_extraction) {
        return (Extraction::Off, Vec::new());
    }
    let Some(offer) = extraction_offer(s, items) else {
        return (Extraction::Nothing, Vec::new());
    };
    let known = match table.memory.lock() {
        Ok(m) => m.known_names(),
        Err(_) => Vec::new(),
    };
    let request = match table.prompts.extract_facts(&offer.lines, &known) {
        Ok(r) => r,
        Err(e) => return (Extraction::Failed(e.to_string()), Vec::new()),
    };
    let mut records = Vec::new();
    let result = table.gateway.call(&request, &mut |r| records.push(r)).await;
    let extraction = match result {
        Err(e) => Extraction::Failed(e.to_string()),
        Ok(reply) => match reply.json.as_ref().map(read_extracted) {
            Some(Ok(facts)) => Extraction::Claims(offer.claims(facts)),
            Some(Err(e)) => Extraction::Failed(e.to_string()),
            None => Extraction::Failed("the reply was not JSON".into()),
        },
    };
    (extraction, records)
}

/// The log event for one attempt of an extraction call.
pub fn extraction_call(record: AttemptRecord) -> Event {
    Event::ModelCall {
        agent: EXTRACT_AGENT.to_string(),
        layer: Layer::Memory,
        purpose: EXTRACT_PURPOSE.to_string(),
        record,
    }
}
