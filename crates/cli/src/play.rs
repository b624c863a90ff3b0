//! `troupe play` and `troupe resume`: a session at the table, saved step by step in the
//! campaign's `campaign.db` (mirrored to `logs/session-N.jsonl`).

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use troupe_agents::PromptSet;
use troupe_campaign::Campaign;
use troupe_engine::{CampaignMemory, StoreMemory};
use troupe_engine::{
    Driver, Envelope, EventLog, GmSeat, Record, SessionSetup, SystemClock, Table, served_calls,
    session_log_path,
};
use troupe_llm::{ChatModel, Gateway, RetryPolicy, ScaledSleeper, Sleeper, TokioSleeper};
use troupe_memory::MemoryStore;

use crate::sessions::{self, CampaignLock};
use crate::{display, models, script, terminal};

/// Backoff waits are scaled by TROUPE_RETRY_SCALE (tests use a tiny factor; default 1).
pub fn sleeper() -> Arc<dyn Sleeper> {
    match std::env::var("TROUPE_RETRY_SCALE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
    {
        Some(factor) => Arc::new(ScaledSleeper { factor }),
        None => Arc::new(TokioSleeper),
    }
}

/// The retry policy, with the per-call timeout taken from TROUPE_TEST_CALL_TIMEOUT_MS when set.
/// Test-only: fault-injection tests hold connections past the timeout and cannot wait the real
/// 120 s (TROUPE_RETRY_SCALE shortens the backoff waits the same way).
pub fn retry_policy() -> RetryPolicy {
    let mut policy = RetryPolicy::default();
    if let Some(ms) = std::env::var("TROUPE_TEST_CALL_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        policy.call_timeout = Duration::from_millis(ms);
    }
    policy
}

/// The AI side of the table for a campaign: its prompts, the model, and its memory.
pub fn table(
    dir: &Path,
    model: Arc<dyn ChatModel>,
    memory: Box<dyn CampaignMemory>,
) -> anyhow::Result<Table> {
    let prompts =
        PromptSet::with_overrides(&dir.join("prompts")).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Table::new(
        Gateway::new(model, retry_policy(), sleeper()),
        prompts,
        memory,
    ))
}

/// The campaign's memory, in its `campaign.db`.
pub fn campaign_memory(dir: &Path, campaign: &Campaign) -> anyhow::Result<Box<dyn CampaignMemory>> {
    let db = dir.join("campaign.db");
    let store = MemoryStore::open(&db).map_err(sessions::memory_error)?;
    Ok(Box::new(StoreMemory::new(
        store,
        campaign.corruption_strength,
    )))
}

fn gm_seat(gm_script: Option<&Path>, resumed: &[Envelope]) -> anyhow::Result<Box<dyn GmSeat>> {
    Ok(match gm_script {
        Some(path) => {
            let mut gm = script::ScriptGm::new(script::Script::load(path)?);
            gm.fast_forward(resumed);
            Box::new(gm)
        }
        None => {
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "note: standard input is not a terminal; reading GM input from it line by line"
                );
            }
            Box::new(terminal::TerminalGm::new())
        }
    })
}

pub async fn play(
    file: Option<&Path>,
    dir: Option<&Path>,
    gm_script: Option<&Path>,
    seed: Option<u64>,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    let (file, dir) = sessions::campaign_file(file, dir)?;
    let campaign = troupe_campaign::load(&file).map_err(|e| anyhow::anyhow!("{e}"))?;
    let _lock = CampaignLock::take(&dir)?;
    let store = sessions::create_store(&dir)?;
    sessions::repair_last_mirror(&dir, &store)?;
    if let Some(last) = store.latest_session()?
        && last.ended_reason.is_none()
    {
        eprintln!(
            "note: session {} did not finish; `troupe resume` continues it. Starting a new session.",
            last.number
        );
    }
    let model = models::choose(model_args, campaign.model.as_ref(), &dir)?;
    let table = table(&dir, model, campaign_memory(&dir, &campaign)?)?;
    let mut gm = gm_seat(gm_script, &[])?;
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let number = store.next_session_number(&dir)?;
    let mirror = EventLog::create(&session_log_path(&dir, number))?;
    let mut story = display::Story::new(gm_script.is_some());
    let clock = SystemClock;
    let setup = SessionSetup {
        campaign,
        session_number: number,
        seed,
    };
    let record = Record {
        store,
        mirror: Some(mirror),
    };
    let driver = Driver::start(setup, record, gm.as_mut(), &table, &mut story, &clock)?;
    run(driver).await
}

pub async fn resume(
    dir: &Path,
    session: Option<u32>,
    gm_script: Option<&Path>,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    sessions::require_played(dir)?;
    let _lock = CampaignLock::take(dir)?;
    let store = sessions::create_store(dir)?;
    let number = match session {
        Some(n) => n,
        None => match store.latest_session()? {
            Some(s) => s.number,
            None => bail!(
                "{} has no sessions yet; `troupe play` starts one",
                dir.display()
            ),
        },
    };
    // The state from the newest snapshot and the events after it: a long session resumes
    // without reading its whole log.
    let state = troupe_engine::snapshot::fold_stored(&store, number)?;
    let Some(campaign) = state.campaign.clone() else {
        bail!(
            "there is no session {number} in {} (or it has no session_started event)",
            dir.display()
        );
    };
    let mirror = sessions::mirror_for(dir, &store, number)?;

    let model = models::choose(model_args, campaign.model.as_ref(), dir)?;
    if model.replays_served() {
        // A provider answering from a recording moves past the replies the log already has.
        let calls = store.live_events_of_types(number, &["model_call"])?;
        model.skip_served(&served_calls(&calls));
    }
    let table = table(dir, model, campaign_memory(dir, &campaign)?)?;
    let gm_inputs = match gm_script {
        Some(_) => store.live_events_of_types(number, script::GM_INPUT_TYPES)?,
        None => Vec::new(),
    };
    let mut gm = gm_seat(gm_script, &gm_inputs)?;
    let mut story = display::Story::new(gm_script.is_some());
    let last_turn = store.live_events_from_turn(number, state.turn_number)?;
    story.recap(&state, &last_turn);
    let clock = SystemClock;
    let record = Record {
        store,
        mirror: Some(mirror),
    };
    let driver = Driver::resume(number, record, gm.as_mut(), &table, &mut story, &clock)?;
    run(driver).await
}

/// Play until the session ends; Ctrl-C ends it cleanly. Every step is committed as it happens,
/// so an interruption (Ctrl-C, kill -9, power loss) loses at most the step in flight.
async fn run(mut driver: Driver<'_>) -> anyhow::Result<ExitCode> {
    // For the crash tests: stop after this many events and wait to be killed.
    if let Some(n) = std::env::var("TROUPE_PAUSE_AFTER_EVENT")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        driver.pause_after(n);
    }
    // …or just before committing the step that holds event N (its side effects done).
    if let Some(n) = std::env::var("TROUPE_PAUSE_BEFORE_COMMIT")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        driver.pause_before_commit(n);
    }
    // `biased`: the Ctrl-C handler is installed (first poll) before the first GM prompt shows.
    let outcome = tokio::select! {
        biased;
        _ = tokio::signal::ctrl_c() => None,
        r = driver.run() => Some(r),
    };
    let code = match outcome {
        Some(r) => {
            r?;
            ExitCode::SUCCESS
        }
        None => {
            driver.end("interrupted by Ctrl-C").await?;
            eprintln!("\nInterrupted. Everything so far is saved; `troupe resume` continues.");
            ExitCode::from(130)
        }
    };
    if driver.session().ended.is_none() {
        driver.end("the GM script ended").await?;
    }
    if let Some(path) = driver.mirror_path() {
        println!("Log: {}", path.display());
    }
    // Give a spinner thread a moment to clear its line.
    tokio::time::sleep(Duration::from_millis(10)).await;
    Ok(code)
}
