//! PLACEHOLDER until the helper's branch `spec` merges (it replaces this file).
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    pub key: String,
    pub value: String,
    pub origin: Origin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Memory,
    Vocabulary,
    Fallback,
}

pub fn draw(
    spec: &crate::Spec,
    _seed: u64,
    memory: &mut dyn FnMut(&crate::spec::Randomizable) -> Option<String>,
) -> Vec<Drawn> {
    spec.randomizable
        .iter()
        .map(|r| match memory(r) {
            Some(v) => Drawn { key: r.key.clone(), value: v, origin: Origin::Memory },
            None => Drawn { key: r.key.clone(), value: r.fallback.clone(), origin: Origin::Fallback },
        })
        .collect()
}

pub fn fill(text: &str, drawn: &[Drawn]) -> String {
    let mut out = text.to_string();
    for d in drawn {
        out = out.replace(&format!("{{{{{}}}}}", d.key), &d.value);
    }
    out
}

pub fn npc_name(npc: &crate::spec::Npc, drawn: &[Drawn]) -> String {
    npc.name_key
        .as_ref()
        .and_then(|k| drawn.iter().find(|d| &d.key == k))
        .map_or_else(|| npc.name.clone(), |d| d.value.clone())
}
