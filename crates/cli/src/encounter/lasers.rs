//! `troupe encounter run` for a spec whose rules are Lasers & Feelings: the engine sets the
//! campaign up to play it ([`troupe_encounter::table::lasers`]); here its session is played at
//! this terminal, and its outcome written when it ends.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use troupe_campaign::{Campaign, CampaignDir};
use troupe_encounter::Spec;
use troupe_encounter::table::lasers;
use troupe_encounter::table::start::SeatSpec;

use super::start::TableArgs;
use crate::models::ModelArgs;
use crate::play::SeatArgs;

pub async fn run(
    dir: &Path,
    spec: &Spec,
    players: &[SeatSpec],
    table: &TableArgs,
    model: &ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    // A broken prompt override stops here, before the tally counts a run that never starts.
    crate::play::prompts(dir)?;
    // So does a model that cannot be used (a server that is down, a key that is not set).
    let campaign = troupe_encounter::table::start::campaign_in(&CampaignDir::new(dir));
    let settings = campaign.as_ref().and_then(|c| c.model.as_ref());
    crate::preflight::check_model(model, settings, dir)
        .context("the model cannot be used; nothing was started")?;
    crate::preflight::check_server(model, campaign.as_ref())?;
    let seed = crate::play::seed_or_now(table.seed);
    let (campaign, number) = {
        let _lock = crate::sessions::CampaignLock::take(dir)?;
        prepare(dir, spec, seed, players, memory_url)?
    };
    println!(
        "== {} (Lasers & Feelings: the campaign's characters play it)",
        spec.title
    );
    let seats = SeatArgs {
        gm: None,
        humans: Vec::new(),
        turns: table.max_turns,
        spend: crate::play::SpendArgs::default(),
    };
    let code =
        crate::play::play_campaign(campaign, dir, None, table.seed, &seats, model, memory_url)
            .await?;
    crate::play::finish_encounter(dir, number, memory_url)?;
    Ok(code)
}

/// The campaign set up to play `spec` with its NPCs' memories from wherever the campaign keeps
/// them, and the number of the session about to play it. The caller holds the campaign's lock.
pub fn prepare(
    dir: &Path,
    spec: &Spec,
    seed: u64,
    players: &[SeatSpec],
    memory_url: Option<&str>,
) -> anyhow::Result<(Campaign, u32)> {
    let memory = super::memory(dir, memory_url)?;
    Ok(lasers::prepare(
        &CampaignDir::new(dir),
        &memory,
        spec,
        seed,
        players,
    )?)
}
