//! PLACEHOLDER until the helper's branch `checks` merges (it replaces this file).
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub system: usize,
    pub pinned: usize,
    pub history: usize,
    pub safety: usize,
    pub window: usize,
}

impl Budget {
    pub fn for_window(window: usize) -> Budget {
        Budget {
            system: window * 4000 / 128_000,
            pinned: window * 2000 / 128_000,
            history: window * 118_000 / 128_000,
            safety: window * 3500 / 128_000,
            window,
        }
    }
}

pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub role: Role,
    pub text: String,
    pub pinned: bool,
    pub tokens: usize,
}

impl Entry {
    pub fn new(role: Role, text: impl Into<String>, pinned: bool) -> Entry {
        let text = text.into();
        Entry {
            role,
            tokens: estimate_tokens(&text),
            text,
            pinned,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneTokens {
    pub system: usize,
    pub pinned: usize,
    pub history: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub messages: Vec<(Role, String)>,
    pub zones: ZoneTokens,
    pub trimmed: usize,
    pub over: Vec<&'static str>,
}

pub fn assemble(system: &str, entries: &[Entry], budget: &Budget) -> Assembled {
    let mut messages = vec![(Role::System, system.to_string())];
    let mut zones = ZoneTokens {
        system: estimate_tokens(system),
        ..ZoneTokens::default()
    };
    let mut trimmed = 0;
    for e in entries {
        if e.pinned {
            zones.pinned += e.tokens;
        } else if zones.history + e.tokens <= budget.history {
            zones.history += e.tokens;
        } else {
            trimmed += 1;
            continue;
        }
        messages.push((e.role, e.text.clone()));
    }
    Assembled {
        messages,
        zones,
        trimmed,
        over: Vec::new(),
    }
}
