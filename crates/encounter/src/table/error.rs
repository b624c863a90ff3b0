//! What goes wrong at an encounter's table beside the engine's own errors (the store, files):
//! the encounter's, named here so the engine names no game. Each reaches the caller as the
//! engine's [`troupe_engine::Error::Game`], with the same words.

/// An encounter table's own failure.
#[derive(Debug, thiserror::Error)]
pub enum EncounterError {
    #[error("encounter run {0}: its log does not start an encounter")]
    NotAnEncounter(u32),
    #[error("the model failed ({agent}): {message}; the run is saved{refused}")]
    Model {
        agent: String,
        message: String,
        /// Why the last replies were refused, when they were: ", and …" or empty.
        refused: String,
    },
    #[error(
        "the GM's reply failed its checks {attempts} times in a row ({problems}); the run is \
         saved: `troupe encounter resume` asks again"
    )]
    GmFailed { attempts: u32, problems: String },
    #[error("encounter run {run}: {message}")]
    Replay { run: u32, message: String },
    #[error(
        "a Lasers & Feelings encounter is played by a campaign's characters: {dir} needs a campaign.json"
    )]
    NoCampaignFile { dir: String },
    #[error("{asked} seats asked for; the campaign has {characters} characters")]
    TooManyPlayers { asked: usize, characters: usize },
    #[error("nobody sits at the table: it needs at least one player")]
    NoPlayers,
    #[error("the campaign file has no AI player `{0}`")]
    NoSuchAiPlayer(String),
    #[error("{player} ({character}) is already at this table")]
    AlreadySeated { player: String, character: String },
    /// An ask the AI at a player's seat cannot answer (a decision it is not given, a view that
    /// does not read): a defect of the table's, never the model's.
    #[error("the AI at seat {seat} cannot answer: {why}")]
    AiCannotAnswer { seat: String, why: String },
    #[error("no agent {0} at this table")]
    UnknownSeat(String),
    #[error("{path} is not an encounter's record")]
    NotARecord {
        path: String,
        #[source]
        source: serde_json::Error,
    },
}

impl From<EncounterError> for troupe_engine::Error {
    fn from(e: EncounterError) -> Self {
        troupe_engine::Error::game(e)
    }
}
