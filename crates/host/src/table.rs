//! What opens a Lasers & Feelings table on any surface: the retry policy and its sleeper, the
//! campaign's prompt registry, the AI side of the table (model, prompts, memory), the AI GM, the
//! dice seed, and what a session's end writes for an encounter.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use troupe_agents::PromptSet;
use troupe_campaign::{Campaign, CampaignDir};
use troupe_engine::Prompts;
use troupe_lasers::{AiGm, CampaignMemory, StoreMemory, Table};
use troupe_llm::{ChatModel, Gateway, RetryPolicy, ScaledSleeper, Sleeper, TokioSleeper};

use crate::models;

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

/// The campaign's prompt registry: every game's templates, with the campaign's `prompts/`
/// files replacing those of the same name. A broken override is an error naming its file.
pub fn prompts(dir: &Path) -> anyhow::Result<Prompts> {
    Ok(troupe_games::campaign(dir)?)
}

/// The AI side of the table for a campaign: its prompts, the model, and its memory.
pub fn table(
    dir: &Path,
    model: Arc<dyn ChatModel>,
    memory: Box<dyn CampaignMemory>,
) -> anyhow::Result<Table> {
    Ok(Table::new(
        Gateway::new(model, retry_policy(), sleeper()),
        PromptSet::from(prompts(dir)?),
        memory,
    ))
}

/// The campaign's memory, wherever it lives (`memory_url` is `--memory-url`).
pub fn campaign_memory(
    dir: &Path,
    campaign: &Campaign,
    memory_url: Option<&str>,
) -> anyhow::Result<Box<dyn CampaignMemory>> {
    let store = crate::graph::open_memory(&CampaignDir::new(dir), Some(campaign), memory_url)?;
    Ok(Box::new(StoreMemory::new(
        store,
        campaign.corruption_strength,
    )))
}

/// The dice seed asked for, else one from the clock.
pub fn seed_or_now(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    })
}

/// The AI GM, on the campaign's GM model (else the players' model).
pub fn ai_gm(
    campaign: &Campaign,
    players: &Arc<dyn ChatModel>,
    dir: &Path,
) -> anyhow::Result<AiGm> {
    let model = match &campaign.gm.model {
        Some(settings) => models::fail_fast(models::choose(
            &models::ModelArgs::default(),
            Some(settings),
            dir,
        )?),
        None => players.clone(),
    };
    Ok(AiGm::new(
        Gateway::new(model, retry_policy(), sleeper()),
        PromptSet::from(prompts(dir)?),
    ))
}

/// After session `session` was played or resumed: when it is a Lasers & Feelings encounter's
/// and has ended, its summary file and the NPCs' memory of it, once.
pub fn finish_encounter(dir: &Path, session: u32, memory_url: Option<&str>) -> anyhow::Result<()> {
    let campaign_dir = CampaignDir::new(dir);
    if let Some(ended) = troupe_encounter::table::lasers::ended(&campaign_dir, session)? {
        // Opened only now: most sessions are no encounter's, and memory may be on a server.
        let mut memory = crate::graph::open_memory(&campaign_dir, None, memory_url)?;
        ended.record(&campaign_dir, &mut memory)?;
    }
    Ok(())
}

/// The exit status of a session the spend limit stopped (saved, resumable).
pub const SPEND_LIMIT_EXIT: u8 = 3;
