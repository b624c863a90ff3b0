//! Answering from recorded replies, so sessions can be replayed and demos run offline.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CallTag, ChatModel, ChatReply, ChatRequest, ProviderError, Usage};

/// One recorded reply: which agent got it, for what purpose, and the text.
///
/// In a JSONL file `content` may also be written as a JSON object, which stands for its
/// serialised text — handy for hand-written replies to schema calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayEntry {
    /// The agent the reply is for, or `*` for any agent.
    pub agent: String,
    pub purpose: String,
    pub content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryLine {
    agent: String,
    purpose: String,
    content: Value,
}

/// A [`ChatModel`] that answers each request with the next unused recorded reply for its tag.
///
/// Replies are queued per (agent, purpose) in file order, so agents calling in a different
/// interleaving than when recorded still get their own replies. Running out is an error, not a
/// silent default, because a replay that diverges must be noticed.
#[derive(Debug)]
pub struct ReplayModel {
    source: String,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    entries: Vec<ReplayEntry>,
    used: Vec<bool>,
    /// Entry indices by purpose, in file order.
    by_purpose: HashMap<String, Vec<usize>>,
    /// Replies served so far per (agent, purpose), for the exhaustion message.
    served: HashMap<(String, String), usize>,
}

impl State {
    /// The first unused entry for this agent (or any agent) and purpose, in file order.
    fn next_for(&self, agent: &str, purpose: &str) -> Option<usize> {
        self.by_purpose.get(purpose).and_then(|indices| {
            indices.iter().copied().find(|&i| {
                !self.used[i] && (self.entries[i].agent == agent || self.entries[i].agent == "*")
            })
        })
    }
}

impl ReplayModel {
    /// Reads a JSONL file of [`ReplayEntry`] lines; blank lines and lines starting with `//`
    /// are skipped. A bad line is reported as `file:line`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ProviderError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ProviderError::Replay(format!("could not read replay file {shown}: {e}"))
        })?;
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            let parsed: EntryLine = serde_json::from_str(line).map_err(|e| {
                ProviderError::Replay(format!(
                    "{shown}:{}: not a replay entry ({e}); each line must be a JSON object like \
                     {{\"agent\": \"...\", \"purpose\": \"...\", \"content\": \"...\"}}",
                    index + 1
                ))
            })?;
            let content = match parsed.content {
                Value::String(s) => s,
                other => other.to_string(),
            };
            entries.push(ReplayEntry {
                agent: parsed.agent,
                purpose: parsed.purpose,
                content,
            });
        }
        Ok(Self::build(shown, entries))
    }

    /// A replay model over entries built in code (tests, benchmarks).
    pub fn from_entries(entries: Vec<ReplayEntry>) -> Self {
        Self::build("(in memory)".to_string(), entries)
    }

    fn build(source: String, entries: Vec<ReplayEntry>) -> Self {
        let mut by_purpose: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            by_purpose.entry(e.purpose.clone()).or_default().push(i);
        }
        let used = vec![false; entries.len()];
        Self {
            source,
            state: Mutex::new(State {
                entries,
                used,
                by_purpose,
                served: HashMap::new(),
            }),
        }
    }

    /// How many recorded replies have not been used yet.
    pub fn remaining(&self) -> usize {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.used.iter().filter(|u| !**u).count()
    }
}

#[async_trait]
impl ChatModel for ReplayModel {
    fn name(&self) -> String {
        format!("replay:{}", self.source)
    }

    fn replays_served(&self) -> bool {
        true
    }

    fn timed(&self) -> bool {
        false
    }

    fn skip_served(&self, served: &[CallTag]) {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        for tag in served {
            if let Some(index) = guard.next_for(&tag.agent, &tag.purpose) {
                guard.used[index] = true;
                *guard
                    .served
                    .entry((tag.agent.clone(), tag.purpose.clone()))
                    .or_insert(0) += 1;
            }
        }
    }

    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        let (agent, purpose) = (&req.tag.agent, &req.tag.purpose);
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let found = guard.next_for(agent, purpose);
        let state = &mut *guard;
        let served = state
            .served
            .entry((agent.clone(), purpose.clone()))
            .or_insert(0);
        let Some(index) = found else {
            return Err(ProviderError::Replay(format!(
                "replay file {} has no more replies for agent {agent}, purpose {purpose} (used {served})",
                self.source
            )));
        };
        *served += 1;
        state.used[index] = true;
        let content = state.entries[index].content.clone();
        Ok(ChatReply {
            usage: Usage::estimate(&req.messages, &content),
            content,
            model: "replay".to_string(),
        })
    }
}
