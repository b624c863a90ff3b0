//! An encounter spec (seed 003): what a GM writes once and the AI game master runs as often as
//! they like. Read from YAML by [`crate::check::check`], which reports every mistake at once.

use serde::{Deserialize, Serialize};

/// A checked encounter spec. Field names follow seed 003's YAML keys (camelCase there).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// `encounterId`: the spec's stable id (summary file names, tally, memory).
    pub id: String,
    pub title: String,
    pub tone: Option<String>,
    /// `rules`: `d20` (the default) or `lasers-feelings`.
    pub rules: RulesKind,
    pub setting: Setting,
    /// `openingNarrative`, with `{{nameKey}}` placeholders not yet filled.
    pub opening: String,
    /// 1–5 NPCs.
    pub npcs: Vec<Npc>,
    pub goals: Goals,
    /// `sportsmanshipRules`.
    pub sportsmanship: Vec<String>,
    /// `skillChecks`, grouped by name from `<name>_dc`, `<name>_skill`, `<name>_note`.
    pub checks: Vec<SkillCheck>,
    pub randomizable: Vec<Randomizable>,
    /// `dmNotes` (or `gmNotes`): private to the GM.
    pub gm_notes: Option<String>,
    /// `tools`: the tools the GM may use; empty means all that apply.
    pub tools: Vec<String>,
    /// `scene`: a seed-004 scene file, relative to the spec's directory.
    pub scene: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RulesKind {
    #[default]
    D20,
    LasersFeelings,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    pub location: String,
    pub mood: String,
    /// `ambientNpcs`.
    pub ambient_npcs: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Npc {
    pub id: String,
    pub name: String,
    /// `nameKey`: when set, the name is drawn like a randomizable name with this key.
    pub name_key: Option<String>,
    pub role: String,
    pub persona: String,
    /// `memoryKey`: when set, the NPC remembers earlier encounters through campaign memory.
    pub memory_key: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Goals {
    /// Default true: players never see the goals.
    pub hidden: bool,
    pub primary: Vec<Goal>,
    pub secondary: Vec<Goal>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    pub id: String,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillCheck {
    pub name: String,
    pub dc: i32,
    pub skill: Option<String>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Randomizable {
    pub key: String,
    pub source: NameSource,
    /// For the vocabulary: a category such as `names.dwarf.female`.
    pub category: Option<String>,
    pub query: String,
    /// Always available: used when the source has nothing.
    pub fallback: String,
}

/// Where a randomizable name is drawn from. `graphmcp` in seed 003's files means the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameSource {
    Memory,
    Vocabulary,
}

impl Spec {
    pub fn npc(&self, id: &str) -> Option<&Npc> {
        self.npcs.iter().find(|n| n.id == id)
    }

    /// Every goal, primary first.
    pub fn goals(&self) -> impl Iterator<Item = &Goal> {
        self.goals.primary.iter().chain(&self.goals.secondary)
    }

    pub fn check(&self, name: &str) -> Option<&SkillCheck> {
        self.checks.iter().find(|c| c.name == name)
    }
}
