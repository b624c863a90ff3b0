//! Opening a table from a page (`troupe serve --host ROOT`): the host's link (its own key, like
//! a seat's) opens a page where a GM opens a table for a campaign directory under ROOT, and gets
//! its seats' links. The binary does the opening ([`Opener`]): the server checks the host's key,
//! the request's shape and its names, and starts the table's game beside the others.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::{Link, TableRun};

/// What a GM asks for: a table for the campaign directory `campaign` (a name under ROOT).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    pub campaign: String,
    /// `lasers`, `encounter` or `scene`.
    pub game: String,
    /// The campaign file, encounter spec or scene file, relative to the campaign directory
    /// (empty: the campaign's `campaign.json`).
    #[serde(default)]
    pub file: String,
    /// Lasers & Feelings: who runs the game, `person` or `ai`.
    #[serde(default)]
    pub gm: String,
    /// Lasers & Feelings: the characters people play (agent ids).
    #[serde(default)]
    pub persons: Vec<String>,
    /// Encounters: who sits at the table (`human:NAME`, `ai`, `ai:AGENT`).
    #[serde(default)]
    pub players: Vec<String>,
    /// Scenes: who speaks for the characters as the table opens, `person` (the default) or
    /// `ai`.
    #[serde(default)]
    pub speaker: String,
    #[serde(default)]
    pub seed: Option<u64>,
}

/// Opens a table for a request (the binary's): the table's game and its seats' links.
pub type Opener = Box<dyn Fn(&OpenRequest) -> Result<(TableRun, Vec<Link>), String> + Send + Sync>;

/// Tables a host may open in [`OPEN_WINDOW`].
pub const MAX_OPENS: usize = 10;
pub const OPEN_WINDOW: Duration = Duration::from_secs(60);

pub struct Host {
    pub key_hash: String,
    pub opener: Opener,
    opened: Mutex<VecDeque<Instant>>,
}

impl Host {
    pub fn new(key_hash: String, opener: Opener) -> Host {
        Host {
            key_hash,
            opener,
            opened: Mutex::default(),
        }
    }

    /// Count one more table opened, unless the host has opened too many lately.
    pub fn within_rate(&self) -> bool {
        let Ok(mut times) = self.opened.lock() else {
            return false;
        };
        let now = Instant::now();
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) > OPEN_WINDOW)
        {
            times.pop_front();
        }
        if times.len() >= MAX_OPENS {
            return false;
        }
        times.push_back(now);
        true
    }
}

/// Why a request names something it may not: a campaign is one plain directory name under
/// ROOT, a file a relative path that stays inside it.
pub fn check_names(r: &OpenRequest) -> Result<(), String> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !plain(&r.campaign) {
        return Err(format!(
            "\"{}\" is not a campaign directory name (letters, digits, '-', '_', '.')",
            r.campaign
        ));
    }
    if !r.file.is_empty() && !r.file.split('/').all(plain) {
        return Err(format!(
            "\"{}\" is not a file inside the campaign directory",
            r.file
        ));
    }
    if !matches!(r.speaker.as_str(), "" | "person" | "ai") {
        return Err(format!(
            "\"{}\" is not who speaks for a scene: person or ai",
            r.speaker
        ));
    }
    if !matches!(r.game.as_str(), "lasers" | "encounter" | "scene") {
        return Err(format!(
            "\"{}\" is not a game: lasers, encounter or scene",
            r.game
        ));
    }
    Ok(())
}
