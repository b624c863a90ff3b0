//! PLACEHOLDER until the helper's branch `checks` merges (it replaces this file).
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    Goal,
    Dc,
    GmNote,
    NpcMemory,
}

#[derive(Clone, Debug, Default)]
pub struct Secrets {
    items: Vec<(SecretKind, String)>,
}

impl Secrets {
    pub fn add_goal(&mut self, label: &str) {
        self.items.push((SecretKind::Goal, label.to_lowercase()));
    }
    pub fn add_dc(&mut self, _name: &str, dc: i32) {
        self.items.push((SecretKind::Dc, format!("dc {dc}")));
    }
    pub fn add_note(&mut self, text: &str) {
        self.items.push((SecretKind::GmNote, text.to_lowercase()));
    }
    pub fn add_npc_memory(&mut self, _npc: &str, text: &str) {
        self.items
            .push((SecretKind::NpcMemory, text.to_lowercase()));
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leak {
    pub kind: SecretKind,
    pub detail: String,
}

pub fn find_leaks(narration: &str, secrets: &Secrets, _pcs: &[String]) -> Vec<Leak> {
    let low = narration.to_lowercase();
    secrets
        .items
        .iter()
        .filter(|(_, s)| low.contains(s.as_str()))
        .map(|(k, s)| Leak {
            kind: *k,
            detail: s.clone(),
        })
        .collect()
}

pub fn withhold(narration: &str, leaks: &[Leak], _secrets: &Secrets) -> String {
    if leaks.is_empty() {
        narration.to_string()
    } else {
        "[withheld]".to_string()
    }
}
