//! Campaign memory on a graph server: FalkorDB (over its Redis protocol) or Neo4j (over its
//! HTTP query API), queried with Cypher.
//!
//! The graph is the system of record; troupe ranks from a derived copy. Opening a campaign
//! reads its whole graph into an in-memory [`MemoryStore`] (ids preserved) and attaches a
//! [`GraphMirror`]: every write then runs in SQLite and in the graph, in one statement the
//! server applies atomically, and is rolled back in SQLite if the graph refuses it. Recall,
//! scopes, precedence and invalidation are the embedded store's code by construction.
//!
//! Modules: [`schema`] (nodes and relationships, the Cypher that writes and reads them),
//! [`dialect`] (where FalkorDB's Cypher and Neo4j's differ), [`falkordb`] and [`neo4j`] (the
//! clients), [`migrate`] (copying a memory between the embedded store and a server).

pub mod dialect;
pub mod falkordb;
pub mod migrate;
pub mod neo4j;
mod resp;
pub mod schema;
pub mod server;

use std::time::Duration;

use serde_json::{Map, Value};
use troupe_memory::{Changes, MemoryMirror, MemoryStore};

pub use dialect::Dialect;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{target}: cannot connect: {message}")]
    Connect { target: String, message: String },
    #[error("{target}: {message}")]
    Lost { target: String, message: String },
    #[error("{target}: no answer within {seconds} s (the server is slow or stuck)")]
    Timeout { target: String, seconds: f64 },
    #[error("{target}: the server refused the query: {message}")]
    Query { target: String, message: String },
    #[error("{target}: unexpected answer: {message}")]
    Answer { target: String, message: String },
    /// A migration that would mix two memories, or has nothing to copy.
    #[error("{target}: {message}")]
    Refused { target: String, message: String },
    #[error("memory url {url:?}: {message}")]
    Url { url: String, message: String },
    #[error(transparent)]
    Memory(#[from] troupe_memory::Error),
}

/// Which server a memory lives on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    FalkorDb,
    Neo4j,
}

/// Where a campaign's memory lives on a graph server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub backend: Backend,
    /// `host:port` for FalkorDB; the base URL (`http://host:7474`) for Neo4j.
    pub address: String,
    /// FalkorDB's graph (the key it is kept under), or Neo4j's database.
    pub graph: String,
    /// The campaign's name: every node carries it, so campaigns can share one graph.
    pub campaign: String,
}

/// Graph name when neither the URL nor the campaign file gives one.
pub const DEFAULT_GRAPH: &str = "troupe";

impl Target {
    /// `falkordb://host:port[/graph]` or `redis://host:port[/graph]` for FalkorDB,
    /// `neo4j+http://host:port[/database]`, `http://…` or `https://…` for Neo4j's query API.
    /// `graph` (the campaign file's) is used when the URL names none.
    pub fn parse(url: &str, graph: Option<&str>, campaign: &str) -> Result<Target, Error> {
        let bad = |message: &str| Error::Url {
            url: url.to_string(),
            message: message.to_string(),
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            bad("expected falkordb://host:port/graph or http://host:7474/database")
        })?;
        let (backend, base) = match scheme {
            "falkordb" | "redis" => (Backend::FalkorDb, None),
            "neo4j+http" => (Backend::Neo4j, Some("http")),
            "neo4j+https" => (Backend::Neo4j, Some("https")),
            "http" | "https" => (Backend::Neo4j, Some(scheme)),
            _ => {
                return Err(bad(
                    "unknown scheme: use falkordb:// (or redis://) for FalkorDB, http:// for Neo4j",
                ));
            }
        };
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        if host.is_empty() || host.contains('@') {
            return Err(bad(
                "give host:port only (credentials go in NEO4J_USERNAME / NEO4J_PASSWORD or FALKORDB_PASSWORD, never in a file)",
            ));
        }
        let named = path.trim_matches('/');
        let graph = match (named.is_empty(), graph) {
            (false, _) => named.to_string(),
            (true, Some(g)) if !g.is_empty() => g.to_string(),
            (true, _) if backend == Backend::Neo4j => "neo4j".to_string(),
            _ => DEFAULT_GRAPH.to_string(),
        };
        let address = match base {
            Some(s) => format!("{s}://{host}"),
            None if host.contains(':') => host.to_string(),
            None => format!("{host}:6379"),
        };
        Ok(Target {
            backend,
            address,
            graph,
            campaign: campaign.to_string(),
        })
    }

    pub fn describe(&self) -> String {
        match self.backend {
            Backend::FalkorDb => format!("FalkorDB at {}, graph {}", self.address, self.graph),
            Backend::Neo4j => format!("Neo4j at {}, database {}", self.address, self.graph),
        }
    }

    /// A client for this target (nothing is sent yet).
    pub fn connect(&self, timeout: Duration) -> Result<Box<dyn Client>, Error> {
        Ok(match self.backend {
            Backend::FalkorDb => Box::new(falkordb::FalkorDb::new(self, timeout)),
            Backend::Neo4j => Box::new(neo4j::Neo4j::new(self, timeout)?),
        })
    }
}

/// One Cypher statement and its parameters (`$name` in the text).
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    pub cypher: String,
    pub params: Map<String, Value>,
}

/// A graph server that runs Cypher: each statement atomically, rows of JSON values back.
pub trait Client: Send {
    fn run(&mut self, statement: &Statement) -> Result<Vec<Vec<Value>>, Error>;
    fn dialect(&self) -> Dialect;
    fn describe(&self) -> String;
}

/// How long one statement may take before the server counts as stuck: 10 s, or
/// `TROUPE_GRAPH_TIMEOUT_MS` (tests).
pub fn timeout() -> Duration {
    std::env::var("TROUPE_GRAPH_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(10))
}

/// Every write of a [`MemoryStore`], kept in a graph.
pub struct GraphMirror {
    client: Box<dyn Client>,
    campaign: String,
}

impl GraphMirror {
    pub fn new(client: Box<dyn Client>, campaign: &str) -> GraphMirror {
        GraphMirror {
            client,
            campaign: campaign.to_string(),
        }
    }
}

impl MemoryMirror for GraphMirror {
    fn apply(&mut self, changes: &Changes) -> Result<(), String> {
        let statement = schema::write(changes, &self.campaign);
        self.client.run(&statement).map(|_| ()).map_err(|e| {
            // The store's error names the server already.
            let e = e.to_string();
            let prefix = format!("{}: ", self.client.describe());
            let why = e.strip_prefix(&prefix).unwrap_or(&e);
            format!("{why}; the write was rolled back, nothing was kept")
        })
    }

    fn describe(&self) -> String {
        self.client.describe()
    }
}

/// Open a campaign's memory on a graph server: its indexes made sure of, the whole campaign
/// read into RAM, and every later write kept in the graph too.
pub fn open(target: &Target) -> Result<MemoryStore, Error> {
    open_with(target, timeout())
}

/// [`open`], with this long for each statement before the server counts as stuck.
pub fn open_with(target: &Target, timeout: Duration) -> Result<MemoryStore, Error> {
    let mut client = target.connect(timeout)?;
    schema::ensure_indexes(client.as_mut())?;
    let snapshot = schema::load(client.as_mut(), &target.campaign)?;
    let mut store = MemoryStore::in_memory()?;
    store.restore(&snapshot)?;
    store.attach_mirror(Box::new(GraphMirror::new(client, &target.campaign)));
    Ok(store)
}
