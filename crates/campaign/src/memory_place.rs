//! Where a campaign's memory lives: its `campaign.db` (the default), or a graph server named by
//! `--memory-url` or the campaign file's `memory` block (`backend`, `url`, `graph`).
//!
//! This only says where; opening it is for the crates that speak to SQLite and graph servers
//! (the URL's grammar is `troupe_graph::Target::parse`'s, so it is checked there).

use std::path::PathBuf;

use crate::{Campaign, CampaignDir};

/// Where a campaign's memory lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryPlace {
    /// The campaign's own `campaign.db`, at this path.
    Embedded(PathBuf),
    /// A graph server.
    Server(GraphPlace),
}

/// A campaign's memory on a graph server, as the person running troupe and the campaign file
/// name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphPlace {
    /// The server's URL as given (`--memory-url`, else the file's `memory.url`), unparsed.
    pub url: String,
    /// The file's `memory.graph`: the graph (or Neo4j database) when the URL names none.
    pub graph: Option<String>,
    /// The campaign's name: every node carries it, so campaigns can share one graph.
    pub campaign: String,
}

/// The campaign file could not be read to say where the memory lives.
#[derive(Debug, thiserror::Error)]
pub enum MemoryPlaceError {
    #[error("could not read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A server's URL and graph, as the campaign file gives them.
type ServerSettings = (String, Option<String>);

impl MemoryPlace {
    /// Where the memory of the campaign in `dir` lives. `campaign` is the campaign as loaded,
    /// when the command has it; without it the directory's campaign file is read loosely.
    /// `memory_url` (`--memory-url`) beats the file's URL; the file's graph still applies.
    pub fn of(
        dir: &CampaignDir,
        campaign: Option<&Campaign>,
        memory_url: Option<&str>,
    ) -> Result<MemoryPlace, MemoryPlaceError> {
        let (name, server) = match campaign {
            Some(c) => (
                c.name.clone(),
                c.memory_server
                    .as_ref()
                    .map(|s| (s.url.clone(), s.graph.clone())),
            ),
            None => file_settings(dir)?,
        };
        let (url, graph) = match (memory_url, server) {
            (Some(url), s) => (url.to_string(), s.and_then(|(_, g)| g)),
            (None, Some((url, graph))) => (url, graph),
            (None, None) => return Ok(MemoryPlace::Embedded(dir.db())),
        };
        Ok(MemoryPlace::Server(GraphPlace {
            url,
            graph,
            campaign: name,
        }))
    }

    /// The name of the campaign in `dir` (its file's `campaign_name`, else the directory's
    /// name): what its nodes carry in a shared graph.
    pub fn campaign_name(dir: &CampaignDir) -> Result<String, MemoryPlaceError> {
        file_settings(dir).map(|(name, _)| name)
    }
}

/// The campaign's name and `memory` server settings from the directory's campaign file, read
/// loosely: commands that only read memory need nothing else from it, so a file that is not
/// JSON, or lacks a field, leaves the defaults (the directory's name, campaign.db).
fn file_settings(dir: &CampaignDir) -> Result<(String, Option<ServerSettings>), MemoryPlaceError> {
    let fallback = dir
        .path()
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "campaign".into());
    let Some(path) = dir.campaign_file() else {
        return Ok((fallback, None));
    };
    let text =
        std::fs::read_to_string(&path).map_err(|source| MemoryPlaceError::Read { path, source })?;
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok((fallback, None));
    };
    let name = text_at(&v, "campaign_name").map_or(fallback, str::to_string);
    let server = v.get("memory").and_then(server_settings);
    Ok((name, server))
}

/// The `memory` block's server, when its backend is a graph server's and it gives a URL.
fn server_settings(memory: &serde_json::Value) -> Option<ServerSettings> {
    match (text_at(memory, "backend"), text_at(memory, "url")) {
        (Some("falkordb" | "neo4j"), Some(url)) => Some((
            url.to_string(),
            text_at(memory, "graph").map(str::to_string),
        )),
        _ => None,
    }
}

/// The text at `key` of a JSON object; None for anything else.
fn text_at<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(serde_json::Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A campaign directory holding `campaign.json` with this text.
    fn campaign_dir(file: &str) -> (tempfile::TempDir, CampaignDir) {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::write(tmp.path().join("campaign.json"), file).expect("write campaign.json");
        let dir = CampaignDir::new(tmp.path());
        (tmp, dir)
    }

    const ON_A_SERVER: &str = r#"{"campaign_name": "Raptor run",
        "memory": {"backend": "falkordb", "url": "redis://files:6379", "graph": "raptor"}}"#;

    fn server(url: &str, graph: Option<&str>, campaign: &str) -> MemoryPlace {
        MemoryPlace::Server(GraphPlace {
            url: url.into(),
            graph: graph.map(str::to_string),
            campaign: campaign.into(),
        })
    }

    #[test]
    fn the_file_names_the_server_its_graph_and_the_campaign() {
        let (_tmp, dir) = campaign_dir(ON_A_SERVER);
        let place = MemoryPlace::of(&dir, None, None).expect("place");
        assert_eq!(
            place,
            server("redis://files:6379", Some("raptor"), "Raptor run")
        );
    }

    #[test]
    fn the_memory_url_beats_the_files_url_and_keeps_its_graph() {
        let (_tmp, dir) = campaign_dir(ON_A_SERVER);
        let place = MemoryPlace::of(&dir, None, Some("falkordb://flag:7000")).expect("place");
        assert_eq!(
            place,
            server("falkordb://flag:7000", Some("raptor"), "Raptor run")
        );
    }

    #[test]
    fn the_loaded_campaign_is_used_over_the_directorys_file() {
        let (_tmp, dir) = campaign_dir(ON_A_SERVER);
        let mut campaign = crate::parse(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/campaign.json"
            ))
            .expect("example campaign"),
            "campaign.json",
        )
        .expect("example campaign parses");
        campaign.memory_server = None;
        let place = MemoryPlace::of(&dir, Some(&campaign), None).expect("place");
        assert_eq!(place, MemoryPlace::Embedded(dir.db()));
        let place = MemoryPlace::of(&dir, Some(&campaign), Some("redis://flag")).expect("place");
        assert_eq!(place, server("redis://flag", None, &campaign.name));
    }

    #[test]
    fn without_memory_settings_the_memory_is_campaign_db() {
        let (_tmp, dir) =
            campaign_dir(r#"{"campaign_name": "Quiet", "memory": {"backend": "sqlite"}}"#);
        assert_eq!(
            MemoryPlace::of(&dir, None, None).expect("place"),
            MemoryPlace::Embedded(dir.db())
        );
        let empty = tempfile::tempdir().expect("temp dir");
        let bare = CampaignDir::new(empty.path());
        assert_eq!(
            MemoryPlace::of(&bare, None, None).expect("place"),
            MemoryPlace::Embedded(empty.path().join("campaign.db"))
        );
    }

    #[test]
    fn a_campaign_without_a_name_goes_by_its_directorys() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let named = tmp.path().join("Nebula");
        std::fs::create_dir(&named).expect("mkdir");
        std::fs::write(named.join("campaign.json"), "{not json").expect("write");
        let place =
            MemoryPlace::of(&CampaignDir::new(&named), None, Some("redis://h")).expect("place");
        assert_eq!(place, server("redis://h", None, "Nebula"));
    }

    #[test]
    fn an_unreadable_campaign_file_is_named_with_its_cause() {
        // Not UTF-8: the file is there, and cannot be read as text.
        let tmp = tempfile::tempdir().expect("temp dir");
        let file = tmp.path().join("campaign.json");
        std::fs::write(&file, [0xff, 0xfe, 0x00]).expect("write");
        let err = MemoryPlace::of(&CampaignDir::new(tmp.path()), None, Some("redis://h"))
            .expect_err("an unreadable file is an error");
        assert_eq!(
            err.to_string(),
            format!("could not read {}", file.display())
        );
        let cause = std::error::Error::source(&err).expect("the cause is kept");
        assert!(cause.to_string().contains("UTF-8"), "{cause}");
    }
}
