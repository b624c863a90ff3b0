//! A spec whose rules are Lasers & Feelings is played as a session of the campaign: its
//! characters play it through the L&F turn cycle with an AI GM whose adventure is the spec. The
//! session is the record (resume, undo, replay, stats and report work on it as on any session);
//! the encounter adds the tally, the summary file and the NPCs' memory, written when the
//! session ends from what [`prepare`] kept in `encounter-sessions/session-N.json`.

use std::path::PathBuf;

use crate::Spec;
use crate::lasers::scenario;
use crate::names::Drawn;
use serde::{Deserialize, Serialize};
use troupe_campaign::{Campaign, CampaignDir, GmSeatKind, Scenario, SeatTaker};
use troupe_memory::MemoryStore;

use super::outcome::{self, Outcome};
use super::start::{SeatSpec, campaign_in};
use troupe_engine::Error;
use troupe_lasers::Store;

use super::EncounterError;

/// The campaign set up to play `spec`: its characters seated in file order as `players` says
/// (a person or an AI each), an AI GM whose adventure is the spec (its NPCs' names drawn with
/// `seed`, with what they remember of earlier runs, from `memory`). The tally is bumped and
/// what the session needs to write its outcome is kept until it ends. The campaign, and the
/// number of the session about to play it. The caller holds the campaign's lock.
pub fn prepare(
    dir: &CampaignDir,
    memory: &MemoryStore,
    spec: &Spec,
    seed: u64,
    players: &[SeatSpec],
) -> Result<(Campaign, u32), Error> {
    let (names, memories) = outcome::cast(memory, spec, seed)?;
    let file = dir
        .campaign_file()
        .ok_or_else(|| EncounterError::NoCampaignFile {
            dir: dir.path().display().to_string(),
        })?;
    let mut campaign = troupe_campaign::load(&file)?;
    if players.len() > campaign.seats.len() {
        return Err(EncounterError::TooManyPlayers {
            asked: players.len(),
            characters: campaign.seats.len(),
        }
        .into());
    }
    for (seat, player) in campaign.seats.iter_mut().zip(players) {
        seat.taken_by = match player {
            SeatSpec::Person { .. } => SeatTaker::Human,
            SeatSpec::Ai { .. } => SeatTaker::Ai,
        };
    }
    let (text, notes) = scenario(spec, &names, &memories);
    campaign.gm.seat = GmSeatKind::Ai;
    campaign.gm.scenario = Some(Scenario { text, notes });
    let at = super::now();
    outcome::bump_tally(dir.path(), &spec.id, &at)?;
    // Kept until the session ends, so a `troupe resume` that finishes it writes the outcome.
    let number = Store::open(dir.path())?.next_session_number()?;
    let pending = Pending {
        spec: spec.clone(),
        names,
        at,
    };
    pending.save(dir, number)?;
    Ok((campaign, number))
}

/// What a Lasers & Feelings encounter's session needs to write its outcome when it ends, in
/// `encounter-sessions/session-N.json` until it does.
#[derive(Serialize, Deserialize)]
struct Pending {
    spec: Spec,
    names: Vec<Drawn>,
    at: String,
}

impl Pending {
    fn path(dir: &CampaignDir, session: u32) -> PathBuf {
        dir.encounter_session(session)
    }

    fn save(&self, dir: &CampaignDir, session: u32) -> Result<(), Error> {
        let path = Pending::path(dir, session);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let text = serde_json::to_string(self).map_err(|e| Error::Encode(e.to_string()))?;
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
    }

    /// Session `session`'s record; None when it is not an encounter's (or was finished).
    fn load(dir: &CampaignDir, session: u32) -> Result<Option<Pending>, Error> {
        let path = Pending::path(dir, session);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let pending = serde_json::from_str(&text).map_err(|source| EncounterError::NotARecord {
            path: path.display().to_string(),
            source,
        })?;
        Ok(Some(pending))
    }
}

/// A Lasers & Feelings encounter's session that has ended (not merely stopped) and whose
/// outcome is not written yet: see [`Ended::record`].
pub struct Ended {
    session: u32,
    pending: Pending,
    outcome: Outcome,
}

/// After session `session` was played or resumed: when it belongs to a Lasers & Feelings
/// encounter and has ended, what is left to write of it. None for any other session, one still
/// going, or one whose outcome is written.
pub fn ended(dir: &CampaignDir, session: u32) -> Result<Option<Ended>, Error> {
    let Some(pending) = Pending::load(dir, session)? else {
        return Ok(None);
    };
    let Some(info) = Store::open(dir.path())?.session(session)? else {
        return Ok(None);
    };
    let Some(reason) = info.ended_reason else {
        return Ok(None);
    };
    let outcome = Outcome {
        goal: "session_ended".to_string(),
        label: reason.clone(),
        summary: format!("Session {} ended: {reason}", info.number),
        players: players(dir),
        round: info.turns,
    };
    Ok(Some(Ended {
        session: info.number,
        pending,
        outcome,
    }))
}

/// "Player (Character), …" of the campaign file; empty without one.
fn players(dir: &CampaignDir) -> String {
    let Some(campaign) = campaign_in(dir) else {
        return String::new();
    };
    let who: Vec<String> = (campaign.seats.iter())
        .map(|s| match (&s.player.name, &s.character.name) {
            (player, character) if player == character => player.clone(),
            (player, character) => format!("{player} ({character})"),
        })
        .collect();
    who.join(", ")
}

impl Ended {
    /// Write the encounter's summary file and the NPCs' memory of it (in `memory`), then drop
    /// the session's record so it is written once.
    pub fn record(self, dir: &CampaignDir, memory: &mut MemoryStore) -> Result<(), Error> {
        let Ended {
            session,
            pending: Pending { spec, names, at },
            outcome,
        } = self;
        let file = crate::turn::summary_file(&spec.id, &at);
        outcome::write_summary_of(dir.path(), &file, &spec, &outcome, &at)?;
        outcome::remember_of(memory, &spec, &names, &outcome, session, &at)?;
        let path = Pending::path(dir, session);
        std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))
    }
}
