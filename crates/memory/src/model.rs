//! What memory holds: episodes (what was said or done, verbatim), facts (what is believed, with
//! valid/invalid times), entities (who and what the facts are about), and whose memory each is.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Whose memory a fact or episode is. The party's memory is shared; an agent's player and
/// character layers each have their own, and a character never reads its player's.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Everyone at the table heard it (in character): the shared party memory.
    Party,
    /// One AI's player layer only (out of character: strategy, player-only secrets).
    Player(String),
    /// One AI's character layer (in character: its own feelings and interpretations).
    Character(String),
    /// What one non-player character (by its encounter spec's memory key) remembers of the
    /// encounters it was in: the party never reads it.
    Npc(String),
}

impl Scope {
    /// The stored form: `party`, `player:ID`, `character:ID`, `npc:KEY`.
    pub fn key(&self) -> String {
        match self {
            Scope::Party => "party".to_string(),
            Scope::Player(a) => format!("player:{a}"),
            Scope::Character(a) => format!("character:{a}"),
            Scope::Npc(k) => format!("npc:{k}"),
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        if s == "party" {
            return Some(Scope::Party);
        }
        let (kind, id) = s.split_once(':')?;
        if id.is_empty() {
            return None;
        }
        match kind {
            "player" => Some(Scope::Player(id.to_string())),
            "character" => Some(Scope::Character(id.to_string())),
            "npc" => Some(Scope::Npc(id.to_string())),
            _ => None,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

impl Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.key())
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Scope::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "scope {s:?}: expected party, player:AGENT, character:AGENT or npc:KEY"
            ))
        })
    }
}

/// Who is reading memory: which scopes they may see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reader {
    /// An AI's player layer: the party's memory, its own player memory and its character's.
    Player(String),
    /// An AI's character layer: the party's memory and its own character memory. Never the
    /// player's: player-only knowledge must not reach the character.
    Character(String),
    /// A non-player character (by memory key): what the party did in front of it (the party's
    /// memory) and its own memory of earlier encounters.
    Npc(String),
    /// The shared party memory only.
    Party,
    /// Everything (researchers, `troupe memory export`).
    All,
}

impl Reader {
    /// The scopes this reader may see, or None for all.
    pub fn scopes(&self) -> Option<Vec<Scope>> {
        match self {
            Reader::Player(a) => Some(vec![
                Scope::Party,
                Scope::Player(a.clone()),
                Scope::Character(a.clone()),
            ]),
            Reader::Character(a) => Some(vec![Scope::Party, Scope::Character(a.clone())]),
            Reader::Npc(k) => Some(vec![Scope::Party, Scope::Npc(k.clone())]),
            Reader::Party => Some(vec![Scope::Party]),
            Reader::All => None,
        }
    }

    pub fn may_see(&self, scope: &Scope) -> bool {
        self.scopes().is_none_or(|s| s.contains(scope))
    }
}

/// Where a fact came from; this sets its authority (and so its confidence and precedence).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The GM said it: canon.
    Gm,
    /// The game's mechanics recorded it (dice, outcomes): as certain as the GM.
    Game,
    /// A player layer's own observation or conclusion.
    Player,
    /// A character's in-character interpretation.
    Character,
    /// Imported notes (e.g. from an earlier campaign).
    Import,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Gm => "gm",
            Source::Game => "game",
            Source::Player => "player",
            Source::Character => "character",
            Source::Import => "import",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        Some(match s {
            "gm" => Source::Gm,
            "game" => Source::Game,
            "player" => Source::Player,
            "character" => Source::Character,
            "import" => Source::Import,
            _ => return None,
        })
    }

    /// Precedence when two facts disagree: GM narration > player memory > character memory.
    /// Game records stand with the GM; imported notes rank with a player's.
    pub fn precedence(self) -> u8 {
        match self {
            Source::Gm | Source::Game => 3,
            Source::Player | Source::Import => 2,
            Source::Character => 1,
        }
    }

    /// How sure a memory from this source is: canon, agreed but not canon, or made up in play.
    pub fn truth(self) -> TruthLevel {
        match self {
            Source::Gm | Source::Game => TruthLevel::Canon,
            Source::Player | Source::Import => TruthLevel::SoftCanon,
            Source::Character => TruthLevel::Improv,
        }
    }

    /// Words for people: "GM narration", "player observation"…
    pub fn describe(self) -> &'static str {
        match self {
            Source::Gm => "GM narration",
            Source::Game => "game record",
            Source::Player => "player observation",
            Source::Character => "character interpretation",
            Source::Import => "imported note",
        }
    }
}

/// Seed 004's truth levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruthLevel {
    Canon,
    SoftCanon,
    Improv,
}

/// Seed 000's memory types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryType {
    /// What happened, when (a turn's events).
    Episodic,
    /// What is true of the world (NPCs, places, quests).
    Semantic,
    /// How to do things (strategies that worked).
    Procedural,
}

impl MemoryType {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Episodic => "episodic",
            MemoryType::Semantic => "semantic",
            MemoryType::Procedural => "procedural",
        }
    }

    pub fn parse(s: &str) -> Option<MemoryType> {
        Some(match s {
            "episodic" => MemoryType::Episodic,
            "semantic" => MemoryType::Semantic,
            "procedural" => MemoryType::Procedural,
            _ => return None,
        })
    }
}

/// What kind of thing an entity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    Npc,
    Character,
    Location,
    Item,
    Quest,
    Faction,
    Ship,
    Unknown,
}

impl EntityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Npc => "npc",
            EntityKind::Character => "character",
            EntityKind::Location => "location",
            EntityKind::Item => "item",
            EntityKind::Quest => "quest",
            EntityKind::Faction => "faction",
            EntityKind::Ship => "ship",
            EntityKind::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> EntityKind {
        match s {
            "npc" => EntityKind::Npc,
            "character" => EntityKind::Character,
            "location" => EntityKind::Location,
            "item" => EntityKind::Item,
            "quest" => EntityKind::Quest,
            "faction" => EntityKind::Faction,
            "ship" => EntityKind::Ship,
            _ => EntityKind::Unknown,
        }
    }
}

/// When something happened in the campaign: the session, the turn, and the in-game day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GameTime {
    pub session: u32,
    pub turn: u32,
    /// In-game days elapsed since the campaign began, when the GM tracks them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<u32>,
}

/// One thing said or done, verbatim: the raw material facts are extracted from, and what a
/// fact points back to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub id: String,
    pub session: u32,
    #[serde(default)]
    pub turn: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<u32>,
    /// Wall-clock time, ISO 8601.
    #[serde(default)]
    pub timestamp: String,
    /// `gm`, an agent id, or a character id.
    pub speaker: String,
    pub text: String,
    #[serde(default = "party")]
    pub scope: Scope,
}

impl Episode {
    /// When it happened: its session, turn and day.
    pub fn at(&self) -> GameTime {
        GameTime {
            session: self.session,
            turn: self.turn,
            day: self.day,
        }
    }
}

fn party() -> Scope {
    Scope::Party
}

/// A fact to remember.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewFact {
    pub text: String,
    pub scope: Scope,
    pub source: Source,
    pub memory_type: MemoryType,
    /// 0–1: how much this matters (slows decay and corruption).
    pub importance: f64,
    pub at: GameTime,
    /// Who said or did it.
    pub speaker: String,
    pub episode_ids: Vec<String>,
    /// Names of what it is about; the store resolves each to one entity.
    pub entities: Vec<(String, EntityKind)>,
    /// What it states, as `subject/attribute`, when known: a later fact on the same slot from
    /// an equal or stronger source closes this one (a contradiction).
    pub slot: Option<String>,
}

/// A stored fact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    pub id: i64,
    pub text: String,
    pub scope: Scope,
    pub source: Source,
    pub memory_type: MemoryType,
    pub truth: TruthLevel,
    pub importance: f64,
    pub rehearsals: u32,
    pub at: GameTime,
    pub speaker: String,
    pub episode_ids: Vec<String>,
    pub entities: Vec<String>,
    pub slot: Option<String>,
    /// When it stopped being true (closed by a contradiction), if it did.
    pub invalid_at: Option<GameTime>,
    pub invalidated_by: Option<i64>,
}

/// A conflict between two facts, and how precedence settled it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conflict {
    pub slot: String,
    pub old_fact: i64,
    pub old_text: String,
    pub old_source: Source,
    pub new_fact: i64,
    pub new_text: String,
    pub new_source: Source,
    /// `superseded` (the old fact was closed) or `kept_old` (the new one ranks lower and is
    /// stored, but the old one stays true).
    pub resolution: String,
    pub at: GameTime,
}

/// A recall, as the memory counts rehearsals: one reader's recall at one turn of one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecallKey<'a> {
    pub session: u32,
    pub turn: u32,
    pub reader: &'a str,
}
