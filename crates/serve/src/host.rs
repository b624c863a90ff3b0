//! Opening a table from a page (`troupe serve --host ROOT`): the host's link (its own key, like
//! a seat's) opens a page where a GM opens a table for a campaign directory under ROOT, and gets
//! its seats' links. The binary does the opening ([`Opener`]): the server checks the host's key,
//! the request's names and the game's options against the game's offer, and starts the table's
//! game beside the others.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};
use troupe_seat::offer::{Offer, StartValues};

use crate::{Link, TableRun};

/// What a GM asks for: a table of `game` for the campaign directory `campaign` (a name under
/// ROOT). What else it says is the game's own ([`Offer::read`] reads it against the game's
/// offer), so the server names no game and no game's option.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct OpenRequest {
    pub campaign: String,
    /// An offered game's name (`troupe_games::OFFERS`).
    pub game: String,
    /// The file its table plays, relative to the campaign directory (empty: the game's own
    /// default, the campaign's `campaign.json` for Lasers & Feelings).
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub seed: Option<u64>,
    /// The game's options, by name.
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// A request read against the games offered: the table the binary opens.
#[derive(Clone, Debug)]
pub struct Opening {
    pub campaign: String,
    /// The offered game's name.
    pub game: &'static str,
    pub file: String,
    pub seed: Option<u64>,
    pub values: StartValues,
}

/// Opens a table (the binary's): the table's game and its seats' links.
pub type Opener = Box<dyn Fn(&Opening) -> Result<(TableRun, Vec<Link>), String> + Send + Sync>;

/// Tables a host may open in [`OPEN_WINDOW`].
pub const MAX_OPENS: usize = 10;
pub const OPEN_WINDOW: Duration = Duration::from_secs(60);

pub struct Host {
    pub key_hash: String,
    pub opener: Opener,
    /// The games a host may open, as the host's page lists them.
    pub offers: Vec<&'static Offer>,
    opened: Mutex<VecDeque<Instant>>,
}

impl Host {
    pub fn new(key_hash: String, opener: Opener, offers: &[&'static Offer]) -> Host {
        Host {
            key_hash,
            opener,
            offers: offers.to_vec(),
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

/// Read a request against the games offered, or say why it does not fit: a campaign is one
/// plain directory name under ROOT, a file a relative path that stays inside it, the game one
/// offered, its options the game's own ([`Offer::read`]).
pub fn read_request(r: &OpenRequest, offers: &[&'static Offer]) -> Result<Opening, String> {
    check_names(r)?;
    let Some(offer) = offers.iter().copied().find(|o| o.game == r.game) else {
        let games: Vec<&str> = offers.iter().map(|o| o.game).collect();
        return Err(format!(
            "\"{}\" is not a game: {}",
            r.game,
            games.join(", ")
        ));
    };
    if offer.file.required && r.file.is_empty() {
        return Err(format!("{} need a file: {}", offer.title, offer.file.help));
    }
    Ok(Opening {
        campaign: r.campaign.clone(),
        game: offer.game,
        file: r.file.clone(),
        seed: r.seed,
        values: offer.read(&r.options)?,
    })
}

/// Why a request names a directory or a file it may not.
fn check_names(r: &OpenRequest) -> Result<(), String> {
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
    Ok(())
}
