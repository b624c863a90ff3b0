//! `troupe replay`: run a recorded session again. The GM's inputs come from its log, the dice
//! from its seed, the AIs' replies from its recorded model calls — or, from `--from-turn N` on,
//! from a model of your choice (the same story told to a different AI). The replay runs in
//! memory and writes its log and transcript under `replays/`, never into the campaign's sessions.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use async_trait::async_trait;
use troupe_agents::PromptSet;
use troupe_campaign::GmSeatKind;
use troupe_engine::EventLog;
use troupe_engine::watch::Unwatched;
use troupe_lasers::recorded::{RecordedGm, RecordedPeople};
use troupe_lasers::{
    AiGm, Driver, Envelope, Event, GmSeat, SessionSetup, Store, SystemClock, render_markdown,
};
use troupe_llm::{
    CallTag, ChatModel, ChatReply, ChatRequest, Gateway, Message, ProviderError, ReplayEntry,
    ReplayModel,
};

use crate::sessions::open_store;
use crate::{models, play};

/// Recorded replies until they run out, then the live model (for `--from-turn`).
struct ThenLive {
    recorded: ReplayModel,
    /// The model that gave the recorded replies: an exact replay is that model's session again.
    recorded_from: String,
    live: Option<Arc<dyn ChatModel>>,
}

#[async_trait]
impl ChatModel for ThenLive {
    fn name(&self) -> String {
        match &self.live {
            Some(live) => format!("{} then {}", self.recorded_from, live.name()),
            None => self.recorded_from.clone(),
        }
    }

    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        match (self.recorded.complete(req).await, &self.live) {
            (Err(ProviderError::Replay(_)), Some(live)) => live.complete(req).await,
            (result, _) => result,
        }
    }

    fn skip_served(&self, served: &[CallTag]) {
        self.recorded.skip_served(served);
    }

    fn sent_messages(&self, messages: &[Message]) -> Vec<Message> {
        match &self.live {
            Some(live) => live.sent_messages(messages),
            None => messages.to_vec(),
        }
    }
}

/// The recorded replies of the model calls before `before_turn` (all of them when `None`).
fn recorded_replies(events: &[Envelope], before_turn: Option<u32>) -> Vec<ReplayEntry> {
    events
        .iter()
        .filter(|e| before_turn.is_none_or(|t| e.turn_number < t))
        .filter_map(|e| match &e.event {
            Event::ModelCall {
                agent,
                purpose,
                record,
                ..
            } => record.reply.as_ref().map(|reply| ReplayEntry {
                agent: agent.clone(),
                purpose: purpose.clone(),
                content: reply.clone(),
            }),
            _ => None,
        })
        .collect()
}

pub async fn replay(
    dir: &Path,
    session: u32,
    from_turn: Option<u32>,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    let store = open_store(dir)?;
    let events = store.live_events(session)?;
    let (setup, recorded_from) = recorded_setup(dir, session, &events)?;
    let live = match from_turn {
        Some(_) => Some(models::choose(
            model_args,
            setup.campaign.model.as_ref(),
            dir,
        )?),
        None => None,
    };
    let model = Arc::new(ThenLive {
        recorded: ReplayModel::from_entries(recorded_replies(&events, from_turn)),
        recorded_from,
        live,
    });
    // Recalls come from the recording: the campaign's memory has moved on since.
    let memory = Box::new(troupe_lasers::RecordedMemory::from_log(&events));
    let ai_gm_again = setup.campaign.gm.seat == GmSeatKind::Ai && from_turn.is_none();
    let mut gm = replay_gm(dir, &events, ai_gm_again, &model)?;
    let mut table = play::table(dir, model, memory)?;
    // The discussion runs out of time where it did, however fast the replay is.
    table.discussion_limit = troupe_lasers::DiscussionLimit::recorded(&events);

    let log_path = free_replay_path(dir, session, from_turn)?;
    let replayed = play_again(setup, &events, gm.as_mut(), &table, &log_path).await?;
    report(session, from_turn, &events, &replayed, &log_path)
}

/// How the recorded session began: its setup (campaign, seed, day) to begin it again, and the
/// name of the model that played it.
fn recorded_setup(
    dir: &Path,
    session: u32,
    events: &[Envelope],
) -> anyhow::Result<(SessionSetup, String)> {
    let Some((campaign, seed, recorded_from, day)) = events.iter().find_map(|e| match &e.event {
        Event::SessionStarted {
            campaign,
            seed,
            model,
            day,
            ..
        } => Some(((**campaign).clone(), *seed, model.clone(), *day)),
        _ => None,
    }) else {
        let missing = format!("there is no session {session} in {}", dir.display());
        return Err(crate::sessions::no_session(
            dir,
            missing,
            crate::sessions::Asked::Replay,
        ));
    };
    let setup = SessionSetup {
        campaign,
        session_number: session,
        seed,
        day,
    };
    Ok((setup, recorded_from))
}

/// The replay's GM seat.
///
/// In an exact replay an AI GM plays again as an AI GM, on its recorded replies (they are
/// among the session's model calls, as agent `gm`), so its model calls, its checks' findings
/// and its decisions are the session's again. A person's or a script's decisions are read
/// from the log, and so are an AI GM's from `--from-turn` on (only the players get the new
/// model): `ai_gm_again` says which.
fn replay_gm(
    dir: &Path,
    events: &[Envelope],
    ai_gm_again: bool,
    model: &Arc<ThenLive>,
) -> anyhow::Result<Box<dyn GmSeat>> {
    Ok(if ai_gm_again {
        Box::new(AiGm::new(
            Gateway::new(model.clone(), play::retry_policy(), play::sleeper()),
            PromptSet::from(play::prompts(dir)?),
        ))
    } else {
        Box::new(RecordedGm::new(events))
    })
}

/// The first name under the campaign's `replays/` not taken yet for this session (and turn):
/// a replay never overwrites an earlier one.
fn free_replay_path(dir: &Path, session: u32, from_turn: Option<u32>) -> anyhow::Result<PathBuf> {
    let replays = troupe_campaign::CampaignDir::new(dir).replays();
    let stem = match from_turn {
        Some(t) => format!("session-{session}-from-turn-{t}"),
        None => format!("session-{session}"),
    };
    (1..)
        .map(|k| replays.join(format!("{stem}-replay-{k}.jsonl")))
        .find(|p| !p.exists())
        .context("no free replay file name")
}

/// Plays the session again in memory, its events mirrored to `log_path`, and reads back the
/// events that log holds.
async fn play_again(
    setup: SessionSetup,
    events: &[Envelope],
    gm: &mut dyn GmSeat,
    table: &troupe_lasers::Table,
    log_path: &Path,
) -> anyhow::Result<Vec<Envelope>> {
    let mut people = RecordedPeople::from_log(events);
    let mut store = Store::in_memory()?;
    store.mirror_into(setup.session_number, EventLog::create(log_path)?);
    let clock = SystemClock;
    let mut quiet = Unwatched;
    let mut driver = Driver::start(setup, store, gm, table, &mut quiet, &clock)?;
    if let Some(p) = people.as_mut() {
        driver.seat_people(p);
    }
    // A session that stopped at its turn limit stops there again.
    if let Some(turns) = turn_limit(events) {
        driver.stop_after(turns);
    }
    driver.run().await?;
    Ok(troupe_lasers::read_log(log_path)?)
}

/// Writes the replay's transcript beside its log and says where both are. An exact replay is
/// then judged: success when its transcript is the session's, failure (with the first line
/// that differs) when not; a `--from-turn` replay is meant to differ.
fn report(
    session: u32,
    from_turn: Option<u32>,
    events: &[Envelope],
    replayed: &[Envelope],
    log_path: &Path,
) -> anyhow::Result<ExitCode> {
    let original = render_markdown(events);
    let again = render_markdown(replayed);
    let md_path = log_path.with_extension("md");
    std::fs::write(&md_path, &again)
        .with_context(|| format!("could not write {}", md_path.display()))?;
    println!("Replay log: {}", log_path.display());
    println!("Transcript: {}", md_path.display());
    if from_turn.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    if original == again {
        println!("The replay's transcript is identical to session {session}'s.");
        events_note(session, events, replayed)?;
        Ok(ExitCode::SUCCESS)
    } else {
        let line = original
            .lines()
            .zip(again.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| original.lines().count().min(again.lines().count()));
        eprintln!(
            "The replay differs from session {session} (first at transcript line {}): the log \
             does not hold everything the session depended on.",
            line + 1
        );
        Ok(ExitCode::FAILURE)
    }
}

/// Fields of a session's events that differ between two runs of the same story: when each
/// event happened, the session's id (it carries its start) and how long the model took.
const NOT_REPLAYED: [&str; 4] = ["timestamp", "session_id", "latency_ms", "first_token_ms"];

/// Whether the replay's events are the log's too (but for [`NOT_REPLAYED`]), said after the
/// transcript's verdict. A difference is a note, not a failure: the transcript is what a replay
/// promises; provider errors are not re-enacted (a retried call replays as one attempt), and
/// logs written before the extraction prompt's known names were recorded differ in that prompt.
fn events_note(session: u32, events: &[Envelope], replayed: &[Envelope]) -> anyhow::Result<()> {
    // A resume's marker is the one event an uninterrupted replay cannot have.
    let logged: Vec<&Envelope> = events
        .iter()
        .filter(|e| !matches!(e.event, Event::SessionResumed { .. }))
        .collect();
    let replayed: Vec<&Envelope> = replayed.iter().collect();
    match troupe_engine::replay::first_difference(&logged, &replayed, &NOT_REPLAYED)? {
        None => println!(
            "Its events are session {session}'s too, one for one (all but when each happened \
             and how long each model took)."
        ),
        Some(d) => println!(
            "Note: its events are not all session {session}'s (a call that needed retries \
             replays as one attempt; a log from an older troupe lacks the names memory knew for \
             its extraction prompts): {d}"
        ),
    }
    Ok(())
}

/// The turns a session was limited to (`--turns`), read from how it ended.
fn turn_limit(events: &[Envelope]) -> Option<u32> {
    events.iter().rev().find_map(|e| match &e.event {
        Event::SessionEnded { reason } if reason.starts_with("played the ") => Some(e.turn_number),
        _ => None,
    })
}
