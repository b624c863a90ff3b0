//! Research instruments over the session log: metrics, flags for review, a log audit, and a
//! self-contained HTML report.
//!
//! The log is a published format: new event types appear as the games grow, and an older
//! analysis must keep reading a newer log. The rows are loaded as JSON values (`source`, the
//! games' runs), and every reader reads a game's events as that game's own types through
//! [`Known`]: a kind this build does not know reads as unknown, never as an error, and counts
//! in no figure (the report lists it as logged); a known kind that does not read is named with
//! why (the metrics' `unreadable`, an audit gap, an unreadable row in the report), never
//! counted half-read. Only what every row has whatever its kind (its seq and session, the
//! envelope the audit checks) and the other games' call attempts the call audit counts are
//! read by field name.

mod audit;
mod calls;
mod cost;
mod ev;
mod flags;
mod game_score;
mod games;
mod games_html;
mod html;
mod known;
mod lasers;
mod metrics;
mod schema;
mod scorecard;
mod source;
mod svg;
mod text;

pub use audit::{Audit, Gap, PHASE_EDGES, audit, audit_with_games};
pub use calls::{GameCalls, RunGap};
pub use cost::{Costs, Spend, TurnSpend, costs, render_costs, token_counts, usd};
pub use ev::{Roster, event_types};
pub use flags::{Flag, FlagKind, content_words, flags};
pub use game_score::{GameModelScore, game_scorecard};
pub use games::{Game, GameRun, Games, for_each_game_run, load_games};
pub use html::{render_html, render_report};
pub use known::Known;
pub use lasers::{ReadLog, Unreadable};
pub use metrics::{
    ConsensusCount, DiceStats, Discussion, Latency, Metrics, PairStats, TurnStats, ValidationStats,
    metrics,
};
pub use schema::{EVENT_TYPES, describe};
pub use scorecard::{ModelScore, RunRow, UNKNOWN_MODEL, run_count, runs, scorecard};
pub use source::{
    BatchRun, Scope, batch_runs, is_batch, load_batch, load_campaign, load_session, session_numbers,
};
pub use text::{render_game_scorecard, render_games_stats, render_scorecard, render_stats};

/// Everything that can go wrong reading a campaign's log.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {message}")]
    Store { path: String, message: String },
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}, line {line}: not a JSON event ({message}); the log is damaged there")]
    CorruptLine {
        path: String,
        line: usize,
        message: String,
    },
    #[error(
        "{path}: session {session}, event {seq} is not valid JSON ({message}); the database is damaged there"
    )]
    CorruptRow {
        path: String,
        session: u32,
        seq: u64,
        message: String,
    },
    #[error(
        "{path}: {game} run {run}, event {seq} is not valid JSON ({message}); the database is damaged there"
    )]
    CorruptRunRow {
        path: String,
        game: &'static str,
        run: u32,
        seq: u64,
        message: String,
    },
    #[error(
        "no sessions have been played in {0} (no campaign.db and no logs/session-N.jsonl); point --campaign at the campaign's directory"
    )]
    NoCampaign(String),
    #[error("there is no session {session} in {dir} (sessions: {known})")]
    NoSuchSession {
        session: u32,
        dir: String,
        known: String,
    },
}
