//! The games a campaign plays beside its Lasers & Feelings sessions: prepared encounters (seed
//! 003) and scenes (seed 004). Each keeps its runs in tables of its own in `campaign.db`
//! (`encounter_runs`/`encounter_events`, `scene_runs`/`scene_events`); here they are read raw,
//! as JSON, like the sessions' events, so a newer log still loads.

use std::path::Path;

use rusqlite::{Connection, params};
use serde::Serialize;
use serde_json::Value;

use crate::Error;
use crate::ev::{num, seq, ty};
use crate::source::{has_table, open_db, store_err};

/// Which game a run belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Game {
    Encounter,
    Scene,
}

impl Game {
    /// The prefix of the game's tables.
    fn table(self) -> &'static str {
        match self {
            Game::Encounter => "encounter",
            Game::Scene => "scene",
        }
    }

    /// The field of the game's `undone` event that says where the undo starts.
    fn undo_from(self) -> &'static str {
        match self {
            Game::Encounter => "from",
            Game::Scene => "from_seq",
        }
    }

    /// The anchor of one of a run's events in the report.
    pub fn anchor(self, run: u32, seq: u64) -> String {
        format!("{}{run}-ev-{seq}", self.table())
    }
}

/// One run of an encounter or a scene, its events as the log keeps them.
#[derive(Clone, Debug, Serialize)]
pub struct GameRun {
    pub game: Game,
    pub number: u32,
    /// The encounter's or scene's id.
    pub id: String,
    pub started_at: String,
    pub ended: bool,
    /// The events still standing, in order (an `undone` and what it took back left out).
    pub events: Vec<Value>,
    /// How many events an undo took back.
    pub undone: usize,
    /// The GM's scorecard of an encounter run, as troupe-encounter computes it (the caller
    /// fills it in: this crate reads the log, the game defines its scorecard).
    pub scorecard: Option<Value>,
}

/// Every encounter run and scene of a campaign.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Games {
    pub encounters: Vec<GameRun>,
    pub scenes: Vec<GameRun>,
}

impl Games {
    pub fn is_empty(&self) -> bool {
        self.encounters.is_empty() && self.scenes.is_empty()
    }

    /// "2 encounter runs, 1 scene", or "" when there are none.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (n, one, many) in [
            (self.encounters.len(), "encounter run", "encounter runs"),
            (self.scenes.len(), "scene", "scenes"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        parts.join(", ")
    }

    /// Put an encounter run's scorecard beside it (`card` names its `run`).
    pub fn attach_scorecard(&mut self, card: Value) {
        let n = num(&card, "run");
        if let Some(run) = self
            .encounters
            .iter_mut()
            .find(|r| u64::from(r.number) == n)
        {
            run.scorecard = Some(card);
        }
    }
}

/// The encounter runs and scenes in a campaign directory (none when it has no `campaign.db`
/// or the games never ran there).
pub fn load_games(dir: &Path) -> Result<Games, Error> {
    let Some(conn) = open_db(dir)? else {
        return Ok(Games::default());
    };
    let path = troupe_campaign::CampaignDir::new(dir).db();
    let mut games = Games::default();
    for (game, runs) in [
        (Game::Encounter, &mut games.encounters),
        (Game::Scene, &mut games.scenes),
    ] {
        each_run(&conn, &path, game, |run| {
            runs.push(run);
            Ok::<(), Error>(())
        })?;
    }
    Ok(games)
}

/// Each encounter run, then each scene, of a campaign directory, read one at a time and handed
/// to `f` before the next is read: what reads a campaign of many runs without holding them all
/// (`troupe export`). The same runs, in the same order, as [`load_games`].
pub fn for_each_game_run<E: From<Error>>(
    dir: &Path,
    mut f: impl FnMut(GameRun) -> Result<(), E>,
) -> Result<(), E> {
    let Some(conn) = open_db(dir)? else {
        return Ok(());
    };
    let path = troupe_campaign::CampaignDir::new(dir).db();
    for game in [Game::Encounter, Game::Scene] {
        each_run(&conn, &path, game, &mut f)?;
    }
    Ok(())
}

/// Read a game's runs in order, each handed to `f` as soon as it is read.
fn each_run<E: From<Error>>(
    conn: &Connection,
    path: &Path,
    game: Game,
    mut f: impl FnMut(GameRun) -> Result<(), E>,
) -> Result<(), E> {
    let t = game.table();
    if !has_table(conn, path, &format!("{t}_runs"))? {
        return Ok(());
    }
    let sql = format!("SELECT number, scene_id, started_at, ended FROM {t}_runs ORDER BY number");
    let mut stmt = conn.prepare(&sql).map_err(|e| store_err(path, e))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, bool>(3)?,
            ))
        })
        .map_err(|e| store_err(path, e))?;
    // The run list is small (numbers and names); the events are read run by run.
    let list = rows
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| store_err(path, e))?;
    for (number, id, started_at, ended) in list {
        let all = events(conn, path, game, number)?;
        let standing = live(&all, game);
        f(GameRun {
            game,
            number,
            id,
            started_at,
            ended,
            undone: all.len() - standing.len(),
            events: standing,
            scorecard: None,
        })?;
    }
    Ok(())
}

fn events(conn: &Connection, path: &Path, game: Game, run: u32) -> Result<Vec<Value>, Error> {
    let sql = format!(
        "SELECT seq, body FROM {}_events WHERE run = ?1 ORDER BY seq",
        game.table()
    );
    let mut stmt = conn.prepare(&sql).map_err(|e| store_err(path, e))?;
    let rows = stmt
        .query_map(params![run], |r| {
            Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
        })
        .map_err(|e| store_err(path, e))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, body) = row.map_err(|e| store_err(path, e))?;
        out.push(
            serde_json::from_str(&body).map_err(|e| Error::CorruptRunRow {
                path: path.display().to_string(),
                game: game.table(),
                run,
                seq,
                message: e.to_string(),
            })?,
        );
    }
    Ok(out)
}

/// The events an `undone` left standing, as the games' own folds see them.
fn live(events: &[Value], game: Game) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in events {
        if ty(e) == "undone" {
            let from = num(e, game.undo_from());
            out.retain(|kept| seq(kept) < from);
        } else {
            out.push(e.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn an_undo_takes_back_its_events_and_itself() {
        let events = vec![
            json!({"seq": 0, "event_type": "started"}),
            json!({"seq": 1, "event_type": "player_acted"}),
            json!({"seq": 2, "event_type": "narrated"}),
            json!({"seq": 3, "event_type": "undone", "from": 1}),
            json!({"seq": 4, "event_type": "player_acted"}),
        ];
        let seqs: Vec<u64> = live(&events, Game::Encounter).iter().map(seq).collect();
        assert_eq!(seqs, [0, 4]);
        let scene = vec![
            json!({"seq": 0, "event_type": "scene_started"}),
            json!({"seq": 1, "event_type": "tool_applied"}),
            json!({"seq": 2, "event_type": "undone", "from_seq": 1}),
        ];
        assert_eq!(live(&scene, Game::Scene).len(), 1);
    }

    #[test]
    fn a_campaign_without_a_database_has_no_games() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load_games(dir.path()).unwrap().is_empty());
        assert!(!dir.path().join("campaign.db").exists());
    }

    #[test]
    fn runs_are_read_from_their_tables_and_a_damaged_row_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("campaign.db")).unwrap();
        conn.execute_batch(
            "CREATE TABLE scene_runs (number INTEGER PRIMARY KEY, scene_id TEXT, started_at TEXT,
                 inputs INTEGER, ended INTEGER);
             CREATE TABLE scene_events (run INTEGER, seq INTEGER, event_type TEXT, body TEXT);
             INSERT INTO scene_runs VALUES (1, 'mill-night', 'today', 0, 1);
             INSERT INTO scene_events VALUES (1, 0, 'scene_started', '{\"seq\":0,\"event_type\":\"scene_started\"}');",
        )
        .unwrap();
        let games = load_games(dir.path()).unwrap();
        assert!(games.encounters.is_empty());
        assert_eq!(games.scenes[0].id, "mill-night");
        assert!(games.scenes[0].ended);
        assert_eq!(games.describe(), "1 scene");
        conn.execute_batch("INSERT INTO scene_events VALUES (1, 1, 'x', 'not json');")
            .unwrap();
        let err = load_games(dir.path()).unwrap_err().to_string();
        assert!(err.contains("scene run 1, event 1"), "{err}");
    }
}
