//! The table server (`troupe serve`): people take seats at a troupe table from their own
//! browsers, with an AI in any empty chair.
//!
//! A table is one session's log in its campaign directory, like any session: the server is
//! only its writer while it runs. Each seat has a link holding an unguessable key (128 bits,
//! stored only as a hash in the campaign's `table.json`). A seat's page streams what that seat
//! may see ([`feed`]), and the decision waiting on it as a form built from its seat-protocol
//! ask ([`troupe_seat::Ask`]). Kill the server at any moment and start it again: the session
//! resumes from its log and the pages reconnect on their own.
//!
//! It names no game: a table's game is any [`Playable`] the binary builds (each game's crate
//! adapts its own table in its `online` module: Lasers & Feelings sessions, encounter runs,
//! scenes), played on its own thread against the table's [`Hub`], the [`Surface`] every page
//! and the Discord bot read and answer. It serves as many tables in one process as it is given,
//! and with `--host` a page that opens more ([`host`]).

pub mod feed;
pub mod host;
mod http;
pub mod hub;
pub mod keys;
pub mod lobby;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use hub::{Hub, SeatSpec};
pub use troupe_engine::surface::{Playable, Surface};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a table file troupe can read: {message}")]
    BadTableFile { path: PathBuf, message: String },
    #[error("the operating system gave no random bytes for a seat key: {0}")]
    NoRandomness(String),
    #[error("cannot listen on {addr}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the table's game could not start: {0}")]
    Game(String),
    #[error("this table has no seat \"{seat}\"; its seats: {seats}")]
    NoSuchSeat { seat: String, seats: String },
}

/// Which session (or encounter run) a table plays and its seats (keys kept only as hashes).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableFile {
    pub id: String,
    /// The game it plays, as its offer names it (`troupe_seat::offer::Offer::game`); empty in a
    /// table written before tables named their game (a Lasers & Feelings session's). The
    /// server reads no game from it: the binary reopens the table with that game.
    #[serde(default)]
    pub game: String,
    /// The session's number, or the encounter run's.
    pub session: u32,
    pub seats: Vec<StoredSeat>,
    /// The turn the session ends after, when it was opened with a limit: a reopened table
    /// keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredSeat {
    pub seat: String,
    pub label: String,
    pub key_sha256: String,
}

/// A seat's link, as printed once when the table opens.
pub struct Link {
    pub label: String,
    pub path: String,
}

/// The table file of a campaign, if it has one.
pub fn load_table(dir: &Path) -> Result<Option<TableFile>, Error> {
    let path = troupe_campaign::CampaignDir::new(dir).table();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Io { path, source }),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| Error::BadTableFile {
            path,
            message: e.to_string(),
        })
}

/// A new table for this session, with a fresh key per seat: (seat, label) pairs in, the table
/// file and each seat's link out. The keys are in the links only.
pub fn new_table(
    game: &str,
    session: u32,
    seats: &[(String, String)],
    last_turn: Option<u32>,
) -> Result<(TableFile, Vec<Link>), Error> {
    let key = || keys::new_key().map_err(|e| Error::NoRandomness(e.to_string()));
    let id = key()?.chars().take(12).collect::<String>();
    let mut stored = Vec::new();
    let mut links = Vec::new();
    for (seat, label) in seats {
        let k = key()?;
        stored.push(StoredSeat {
            seat: seat.clone(),
            label: label.clone(),
            key_sha256: keys::hash(&k),
        });
        links.push(Link {
            label: label.clone(),
            path: format!("/t/{id}/{seat}#key={k}"),
        });
    }
    Ok((
        TableFile {
            id,
            game: game.to_string(),
            session,
            seats: stored,
            last_turn,
        },
        links,
    ))
}

/// A new key for one seat of the table (its old link stops working), and the seat's new link.
pub fn new_link(table: &mut TableFile, seat: &str) -> Result<Link, Error> {
    let key = keys::new_key().map_err(|e| Error::NoRandomness(e.to_string()))?;
    let id = table.id.clone();
    let seats = table
        .seats
        .iter()
        .map(|s| s.seat.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let stored = table
        .seats
        .iter_mut()
        .find(|s| s.seat == seat)
        .ok_or_else(|| Error::NoSuchSeat {
            seat: seat.to_string(),
            seats,
        })?;
    stored.key_sha256 = keys::hash(&key);
    Ok(Link {
        label: stored.label.clone(),
        path: format!("/t/{id}/{seat}#key={key}"),
    })
}

/// Write the table file (atomically: a crash leaves the old one or the new one).
pub fn save_table(dir: &Path, table: &TableFile) -> Result<(), Error> {
    let path = troupe_campaign::CampaignDir::new(dir).table();
    let tmp = path.with_extension("json.tmp");
    let io = |source, path: &Path| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let body = serde_json::to_string_pretty(table).map_err(|e| Error::BadTableFile {
        path: path.clone(),
        message: e.to_string(),
    })?;
    std::fs::write(&tmp, body).map_err(|e| io(e, &tmp))?;
    std::fs::rename(&tmp, &path).map_err(|e| io(e, &path))
}

/// A listening socket, bound before the links are printed (so they name the real port).
pub struct Bound {
    listener: tokio::net::TcpListener,
    pub addr: SocketAddr,
}

pub async fn bind(addr: SocketAddr) -> Result<Bound, Error> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Listen { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| Error::Listen { addr, source })?;
    Ok(Bound { listener, addr })
}

/// One table to serve: its game, and what to do when the game stops (told why, or the error
/// that stopped it; the pages stay up so everyone sees the end).
pub struct TableRun {
    /// The campaign directory: where the table's file keeps the seats of people who join.
    pub dir: PathBuf,
    pub title: String,
    pub table: TableFile,
    /// The game the table plays (the binary builds it: serve knows none by name).
    pub game: Box<dyn Playable>,
    pub on_end: Box<dyn FnOnce(Result<String, String>) + Send>,
}

/// Serve these tables until the process is stopped: each table's game on its own thread, every
/// page from here, routed by the table's id. With a host, its page opens more.
pub async fn run(
    bound: Bound,
    tables: Vec<TableRun>,
    host: Option<host::Host>,
    hand_over_after: Option<Duration>,
) -> Result<(), Error> {
    let mut hubs = BTreeMap::new();
    for t in tables {
        let id = t.table.id.clone();
        hubs.insert(id, serve_table(t, hand_over_after)?);
    }
    let app = http::router(http::Served {
        tables: Arc::new(std::sync::RwLock::new(hubs)),
        host: host.map(Arc::new),
        hand_over_after,
    });
    let addr = bound.addr;
    axum::serve(bound.listener, app)
        .await
        .map_err(|source| Error::Listen { addr, source })
}

/// One table's hub, its game started (and seats handed to an AI when their people are idle):
/// what every surface of the table reads and answers (the web server's pages, the Discord bot).
pub fn serve_table(t: TableRun, hand_over_after: Option<Duration>) -> Result<Arc<Hub>, Error> {
    let hub = Arc::new(Hub::new(&t.title, seat_specs(&t.table)));
    hub.lobby.persist_with(keep_seat(t.dir.clone()));
    // People's answers are on disk before their pages are told they arrived.
    troupe_engine::store::inbox::Inbox::open(&t.dir, &t.table.id)
        .and_then(|inbox| hub.keep_answers_in(inbox))
        .map_err(|e| Error::Game(troupe_engine::error_chain(&e)))?;
    start_game(t.game, hub.clone(), t.on_end)?;
    if let Some(limit) = hand_over_after {
        hand_over_when_idle(hub.clone(), limit);
    }
    Ok(hub)
}

/// A joined seat's key hash, added to the table's file in `dir`.
fn keep_seat(dir: PathBuf) -> lobby::Persist {
    Box::new(move |spec| {
        let mut table = load_table(&dir)
            .map_err(troupe_engine::error_chain)?
            .ok_or("the table's file is gone")?;
        if !table.seats.iter().any(|s| s.seat == spec.seat) {
            table.seats.push(StoredSeat {
                seat: spec.seat.clone(),
                label: spec.label.clone(),
                key_sha256: spec.key_hash.clone(),
            });
        }
        save_table(&dir, &table).map_err(troupe_engine::error_chain)
    })
}

fn seat_specs(table: &TableFile) -> Vec<SeatSpec> {
    table
        .seats
        .iter()
        .map(|s| SeatSpec {
            seat: s.seat.clone(),
            label: s.label.clone(),
            key_hash: s.key_sha256.clone(),
        })
        .collect()
}

/// The game on a thread of its own (its own single-threaded runtime): a model call that blocks
/// a core stalls its table only, never the pages.
fn start_game(
    game: Box<dyn Playable>,
    hub: Arc<Hub>,
    on_end: Box<dyn FnOnce(Result<String, String>) + Send>,
) -> Result<(), Error> {
    std::thread::Builder::new()
        .name("table".into())
        .spawn(move || {
            let ended = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt.block_on(game.play(hub.clone())),
                Err(e) => Err(e.to_string()),
            };
            match &ended {
                Err(why) => hub.stopped(why.clone()),
                // Stopped without ending (a round limit, a spend limit, the speaker's /quit):
                // the pages say so instead of waiting for a game that is not playing.
                Ok(why) => hub.paused(why),
            }
            on_end(ended);
        })
        .map(|_| ())
        .map_err(|e| Error::Game(e.to_string()))
}

/// A person's seat that has waited longer than `limit` goes to an AI until they take it back.
fn hand_over_when_idle(hub: Arc<Hub>, limit: Duration) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            for seat in hub.overdue(limit) {
                let _ = hub.hand_over(&seat, false);
            }
        }
    });
}
