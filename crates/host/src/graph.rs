//! Opening a campaign's memory where it lives ([`MemoryPlace`]: its `campaign.db`, or a graph
//! server named by `--memory-url` or the campaign file's `memory` block).

use troupe_campaign::{Campaign, CampaignDir, GraphPlace, MemoryPlace};
use troupe_graph::Target;
use troupe_memory::MemoryStore;

/// Where the campaign in `dir` keeps its memory: `memory_url` (`--memory-url`) first, then
/// `campaign` (as loaded) or the directory's campaign file.
pub fn place(
    dir: &CampaignDir,
    campaign: Option<&Campaign>,
    memory_url: Option<&str>,
) -> anyhow::Result<MemoryPlace> {
    MemoryPlace::of(dir, campaign, memory_url).map_err(anyhow::Error::from)
}

/// Open the campaign's memory wherever it lives.
pub fn open_memory(
    dir: &CampaignDir,
    campaign: Option<&Campaign>,
    memory_url: Option<&str>,
) -> anyhow::Result<MemoryStore> {
    open(&place(dir, campaign, memory_url)?)
}

/// Open the memory at `place`.
pub fn open(place: &MemoryPlace) -> anyhow::Result<MemoryStore> {
    match place {
        MemoryPlace::Embedded(db) => MemoryStore::open(db).map_err(memory_error),
        MemoryPlace::Server(server) => {
            troupe_graph::open(&target(server)?).map_err(|e| graph_error(&e))
        }
    }
}

/// The graph server's address, graph and campaign, from its URL: a URL troupe cannot read is
/// an error naming it.
pub fn target(server: &GraphPlace) -> anyhow::Result<Target> {
    Target::parse(&server.url, server.graph.as_deref(), &server.campaign)
        .map_err(anyhow::Error::from)
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

/// A campaign-memory error as the user should read it: the memory lives in campaign.db too,
/// so its faults (damaged, full, locked) get the same words as the sessions'.
pub fn memory_error(e: troupe_memory::Error) -> anyhow::Error {
    match (&e, troupe_engine::Fault::of_memory(&e)) {
        (troupe_memory::Error::Db { path, .. }, Some(fault)) => anyhow::anyhow!("{path}: {fault}"),
        _ => anyhow::Error::from(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_url_troupe_cannot_read_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = CampaignDir::new(tmp.path());
        for url in ["localhost:6379", "mongodb://db:27017/raptor"] {
            let Err(err) = open_memory(&dir, None, Some(url)) else {
                panic!("{url} opened");
            };
            let message = format!("{err:#}");
            assert!(
                message.contains(&format!("memory url {url:?}")),
                "{message}"
            );
            assert!(
                err.downcast_ref::<troupe_graph::Error>().is_some(),
                "the graph crate's error is kept: {message}"
            );
        }
        assert!(!dir.db().exists(), "nothing was written for a bad URL");
    }

    #[test]
    fn without_a_server_the_memory_opens_in_campaign_db() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = CampaignDir::new(tmp.path());
        open_memory(&dir, None, None).expect("campaign.db opens");
        assert!(dir.db().is_file());
    }
}
