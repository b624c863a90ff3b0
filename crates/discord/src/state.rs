//! What the bot keeps of a table, in the campaign directory beside `table.json`: `discord.json`
//! (never a token). Its thread, who sits where, how far each stream was posted, which asks were
//! sent, the messages and interactions already taken (so none is applied twice after a restart),
//! and the messages held for a seat's next ask. Written atomically (a temporary file renamed).

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name in the campaign directory.
pub const FILE: &str = "discord.json";
/// How many taken message and interaction ids are remembered (Discord replays at most a
/// session's missed events on a resume).
const TAKEN_KEPT: usize = 2000;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Binding {
    /// The table these belong to (a new table in the directory starts them afresh).
    pub table: String,
    /// The table's thread, and the channel it was opened in.
    pub thread: Option<u64>,
    pub channel: Option<u64>,
    /// Discord user id → the seat they hold.
    pub people: BTreeMap<String, Person>,
    /// The last line posted to the thread.
    pub posted: u64,
    /// The last of a person's own lines sent to them (user id → line id).
    pub private_posted: BTreeMap<String, u64>,
    /// The last ask sent to a person (user id → ask id).
    pub asked: BTreeMap<String, u64>,
    /// Message and interaction ids already taken (claimed before they are handed to the table).
    pub taken: VecDeque<u64>,
    /// Messages a seated person sent while nothing was asked of them: the next ask with text
    /// takes the oldest.
    pub held: Vec<Held>,
    /// Whether the thread was told the table stopped or ended.
    #[serde(default)]
    pub told_end: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Person {
    pub seat: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Held {
    pub seat: String,
    pub user: String,
    pub channel: u64,
    pub message: u64,
    pub text: String,
}

impl Binding {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(FILE)
    }

    /// The directory's binding for `table`: a new one when it has none, or one of another table.
    pub fn load(dir: &Path, table: &str) -> Result<Binding, String> {
        let path = Binding::path(dir);
        let fresh = Binding {
            table: table.to_string(),
            ..Binding::default()
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(fresh),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let b: Binding = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a binding troupe can read: {e}", path.display()))?;
        Ok(if b.table == table { b } else { fresh })
    }

    pub fn save(&self, dir: &Path) -> Result<(), String> {
        let path = Binding::path(dir);
        let tmp = path.with_extension("json.tmp");
        let body = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(body.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Claim an id (a message's, an interaction's): false when it was taken before.
    pub fn claim(&mut self, id: u64) -> bool {
        if self.taken.contains(&id) {
            return false;
        }
        self.taken.push_back(id);
        while self.taken.len() > TAKEN_KEPT {
            self.taken.pop_front();
        }
        true
    }

    pub fn seat_of(&self, user: u64) -> Option<&Person> {
        self.people.get(&user.to_string())
    }

    /// Who holds `seat`.
    pub fn user_at(&self, seat: &str) -> Option<u64> {
        self.people
            .iter()
            .find(|(_, p)| p.seat == seat)
            .and_then(|(u, _)| u.parse().ok())
    }
}

/// A person's character, registered once (seed 003's registry), in the bot's home directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Character {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pronouns: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub backstory: String,
}

pub const CHARACTERS: &str = "discord-characters.json";

pub fn load_characters(home: &Path) -> BTreeMap<String, Character> {
    std::fs::read_to_string(home.join(CHARACTERS))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

pub fn save_characters(home: &Path, all: &BTreeMap<String, Character>) -> Result<(), String> {
    let path = home.join(CHARACTERS);
    let tmp = path.with_extension("json.tmp");
    let body = serde_json::to_string_pretty(all).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, body)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The gateway session, kept so a bot started again resumes it (Discord then replays what was
/// said while it was down; the ids already taken keep any of it from being applied twice). Not
/// a credential: resuming needs the token too.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GatewaySession {
    pub id: String,
    pub sequence: u64,
    pub resume_url: String,
}

pub const GATEWAY: &str = "discord-gateway.json";

pub fn load_gateway(home: &Path) -> Option<GatewaySession> {
    std::fs::read_to_string(home.join(GATEWAY))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
}

pub fn save_gateway(home: &Path, session: &GatewaySession) -> Result<(), String> {
    let path = home.join(GATEWAY);
    let tmp = path.with_extension("json.tmp");
    let body = serde_json::to_string(session).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, body)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("{}: {e}", path.display()))
}
