//! Where a campaign's memory lives: its `campaign.db` (the default), or a graph server named by
//! `--memory-url` or the campaign file's `memory` block (`backend`, `url`, `graph`).

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context;
use troupe_campaign::{Campaign, CampaignDir};
use troupe_graph::Target;
use troupe_memory::MemoryStore;

use crate::sessions;

/// `--memory-url`, for this process.
static MEMORY_URL: OnceLock<String> = OnceLock::new();

pub fn set_url(url: String) {
    let _ = MEMORY_URL.set(url);
}

/// The graph server holding this campaign's memory, if it is on one: `--memory-url` first,
/// then the campaign file (`campaign`, or the directory's campaign.json / characters.json).
pub fn server_of(dir: &Path, campaign: Option<&Campaign>) -> anyhow::Result<Option<Target>> {
    let (name, server) = match campaign {
        Some(c) => (
            c.name.clone(),
            c.memory_server
                .as_ref()
                .map(|s| (s.url.clone(), s.graph.clone())),
        ),
        None => file_settings(dir)?,
    };
    let (url, graph) = match (MEMORY_URL.get(), server) {
        (Some(url), s) => (url.clone(), s.and_then(|(_, g)| g)),
        (None, Some((url, graph))) => (url, graph),
        (None, None) => return Ok(None),
    };
    Target::parse(&url, graph.as_deref(), &name)
        .map(Some)
        .map_err(anyhow::Error::from)
}

/// The campaign's name (its file's `campaign_name`, else the directory's name): what its
/// nodes carry in a shared graph.
pub fn campaign_name(dir: &Path) -> anyhow::Result<String> {
    file_settings(dir).map(|(name, _)| name)
}

/// A server's URL and graph, as the campaign file gives them.
type ServerSettings = (String, Option<String>);

/// The campaign's name and `memory` server settings from the directory's campaign file, read
/// loosely: commands that only read memory need nothing else from it.
fn file_settings(dir: &Path) -> anyhow::Result<(String, Option<ServerSettings>)> {
    let fallback = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "campaign".into());
    let Ok((file, _)) = sessions::campaign_file(None, Some(dir)) else {
        return Ok((fallback, None));
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("could not read {}", file.display()))?;
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok((fallback, None));
    };
    let name = v["campaign_name"].as_str().map_or(fallback, str::to_string);
    let memory = &v["memory"];
    let server = match (memory["backend"].as_str(), memory["url"].as_str()) {
        (Some("falkordb" | "neo4j"), Some(url)) => Some((
            url.to_string(),
            memory["graph"].as_str().map(str::to_string),
        )),
        _ => None,
    };
    Ok((name, server))
}

/// Open the campaign's memory wherever it lives.
pub fn open_memory(dir: &Path, campaign: Option<&Campaign>) -> anyhow::Result<MemoryStore> {
    match server_of(dir, campaign)? {
        None => MemoryStore::open(&CampaignDir::new(dir).db()).map_err(sessions::memory_error),
        Some(target) => troupe_graph::open(&target).map_err(|e| graph_error(&e)),
    }
}

/// A graph server's failure, with what to do about it.
pub fn graph_error(e: &troupe_graph::Error) -> anyhow::Error {
    let hint = match e {
        troupe_graph::Error::Connect { .. } | troupe_graph::Error::Lost { .. } => {
            "\n  is the server running? (the campaign file's memory.url, or --memory-url); nothing was changed"
        }
        troupe_graph::Error::Timeout { .. } => {
            "\n  the server is slow or stuck; nothing was changed"
        }
        _ => "",
    };
    anyhow::anyhow!("campaign memory: {e}{hint}")
}
