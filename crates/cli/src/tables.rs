//! What a table at the server is opened with (`troupe serve`'s arguments) and opened into (its
//! game, its links, the campaign's lock), for every game: `serve.rs` opens Lasers & Feelings
//! sessions and hosts, `encounter/serve.rs` encounters, `scene.rs` scenes. A leaf: it imports
//! none of them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use troupe_serve::{Link, TableRun};

use crate::play::GmChoice;
use crate::sessions::CampaignLock;

#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// Where to listen. Loopback by default; to let others in, listen on a public address
    /// behind a TLS reverse proxy (see the README)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Who runs the game: a person (at the GM's link) or ai
    #[arg(long, value_name = "person|ai", default_value = "person")]
    pub gm: GmChoice,
    /// A person plays this character from their browser (its agent id; repeat). The other
    /// characters start with an AI; anyone with a seat's link can claim it
    #[arg(long = "person", value_name = "AGENT")]
    pub persons: Vec<String>,
    /// Dice seed (recorded in the log)
    #[arg(long)]
    pub seed: Option<u64>,
    /// End the session once this turn is played (an encounter: stop, saved, after this many
    /// rounds)
    #[arg(long)]
    pub turns: Option<u32>,
    /// When a person has not answered for this many seconds, an AI plays their seat until
    /// they take it back
    #[arg(long, value_name = "SECONDS")]
    pub hand_over_after: Option<u64>,
    /// Serve an encounter run of this spec (YAML) instead of a Lasers & Feelings session: the
    /// AI GM runs it; `--players` seats the table
    #[arg(long, value_name = "SPEC")]
    pub encounter: Option<PathBuf>,
    /// With --encounter: who sits at the table, in turn order: `human:NAME` for a person at
    /// their own link, `ai` (or `ai:AGENT`) for an AI player. Every seat gets a link: a person
    /// can claim a seat an AI holds
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "human",
        requires = "encounter"
    )]
    pub players: Vec<String>,
    /// Serve a scene of this file (YAML, seed 004) instead: one person speaks for the
    /// character whose turn it is, a GM may run it from a link of their own (the GM's view and
    /// commands), the engine decides; others watch
    #[arg(long, value_name = "FILE", conflicts_with = "encounter")]
    pub scene: Option<PathBuf>,
    /// With --scene: who turns the speaker's words into a tool call: rules, or a model choosing
    /// from the menu (its reply checked like any other call)
    #[arg(long, value_enum, default_value = "rules", requires = "scene")]
    pub scene_planner: PlannerKind,
    /// With --scene: who speaks for the characters as the table opens, a person (at the
    /// player's link) or an AI. The GM can hand the seat to an AI and back, and a person can
    /// claim it from the player's link, when the table has a model (--provider, --replay, a
    /// hosted model's key, or an AI speaker)
    #[arg(long, value_enum, default_value = "person", requires = "scene")]
    pub speaker: SpeakerKind,
    /// With --scene: how many lines an AI says each time it is given the speaker's seat (then
    /// it waits for a person to claim the seat)
    #[arg(long, value_name = "N", default_value_t = 12, requires = "scene")]
    pub ai_lines: u32,
    /// With --scene: a model rewrites each narration; a rewrite that adds or contradicts a fact
    /// is refused (and logged) and the template stands
    #[arg(long, requires = "scene")]
    pub polish: bool,
    /// Give this seat a new link (a new key) as the table opens: its old link stops working
    /// (a leaked link, a person replaced). Repeat for several seats
    #[arg(long = "new-link", value_name = "SEAT")]
    pub new_link: Vec<String>,
    /// Serve every open table found in the campaign directories under ROOT, in one process
    /// (after a restart, or to host many tables): each reopens where it stopped, with its
    /// links. Prints the host's link, whose page opens new tables there
    #[arg(long, value_name = "ROOT", conflicts_with_all = ["encounter", "scene", "persons", "new_link"])]
    pub host: Option<PathBuf>,
    /// `--memory-url` (an option of every command, so not parsed here): set by `main`, read
    /// where a table opens the campaign's memory.
    #[arg(skip)]
    pub memory_url: Option<String>,
}

/// Who turns a scene's words into a tool call (`troupe scene --planner`, `troupe serve
/// --scene-planner`): the rules, or a model choosing from the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PlannerKind {
    Rules,
    Model,
}

/// Who speaks for a served scene's characters as its table opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SpeakerKind {
    Person,
    Ai,
}

/// A table ready to serve: its game, the links printed once (none when reopened), and the
/// campaign's lock, held while it is served.
pub struct Opened {
    pub run: TableRun,
    pub links: Vec<Link>,
    pub lock: CampaignLock,
}

/// What the terminal is told when a table's game stops.
pub fn on_end(dir: &Path) -> Box<dyn FnOnce(Result<String, String>) + Send> {
    let dir = dir.display().to_string();
    Box::new(move |ended| match ended {
        Ok(why) => println!(
            "The table in {dir} stopped: {why}. The pages stay up; Ctrl-C closes the server."
        ),
        Err(e) => eprintln!(
            "troupe: the table in {dir} stopped: {e}. Everything so far is saved; `troupe \
             serve` again continues it."
        ),
    })
}
