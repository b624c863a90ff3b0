//! `troupe play` and `troupe resume`: a session at the table, saved step by step in the
//! campaign's `campaign.db` (mirrored to `logs/session-N.jsonl`).

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use troupe_campaign::{Campaign, GmSeatKind, Limit, Priced, SeatTaker};
use troupe_lasers::{
    Driver, Envelope, GmSeat, SessionSetup, SpendStop, SystemClock, script, served_calls,
};
use troupe_llm::ChatModel;

use crate::keyboard::Keyboard;
use crate::people::TerminalPlayers;
use crate::sessions::{self, CampaignLock};
use crate::{display, models, terminal};

// What opens a table the same on every surface (troupe-host), named here too: the binary's
// encounter, scene and web-table commands reach it as `play::…`.
pub use troupe_host::{
    GmChoice, SPEND_LIMIT_EXIT, SeatArgs, SpendArgs, ai_gm, campaign_memory, finish_encounter,
    prompts, retry_policy, seat_table, seed_or_now, sleeper, table,
};

/// Sets the session's spend limit (the command line over the campaign file), if any. A dollar
/// limit on a model troupe has no price for could never be reached: refused, with the way out.
fn limit_spend(
    driver: &mut Driver<'_>,
    args: &SpendArgs,
    campaign: &Campaign,
    model_name: &str,
) -> anyhow::Result<()> {
    let limit = Limit {
        usd: args.max_spend,
        tokens: args.max_tokens,
    }
    .or(campaign.spend_limit.session);
    if limit.is_none() {
        return Ok(());
    }
    if limit.usd.is_some() && campaign.prices.lookup_named(model_name) == Priced::Unknown {
        bail!(
            "a spend limit in dollars needs a price for the model {model_name}, and troupe has none: \
             add it to the campaign file's \"prices\" (e.g. \"prices\": {{\"MODEL\": {{\"input\": 0.15, \
             \"cached_input\": 0.075, \"output\": 0.60}}}}, US dollars per million tokens) or limit \
             tokens instead (--max-tokens)"
        );
    }
    driver.spend_limit(limit, campaign.prices.clone())?;
    Ok(())
}

/// What to tell the person when the spend limit stopped the session.
fn spend_stopped_message(stop: &SpendStop, dir: &Path) -> String {
    let higher = match stop.reached {
        "usd" => format!(
            "--max-spend {:.2}",
            stop.limit.usd.unwrap_or_default() * 2.0
        ),
        _ => format!("--max-tokens {}", stop.limit.tokens.unwrap_or_default() * 2),
    };
    format!(
        "troupe: stopped: {}. Everything so far is saved; {} continues with a higher limit \
         (the command line overrides the campaign file's spend_limit).",
        stop.describe(),
        sessions::command(dir, &format!("troupe resume {higher}"))
    )
}

/// The GM's seat: the AI GM, a script, or the person at the terminal.
fn gm_seat(
    campaign: &Campaign,
    gm_script: Option<&Path>,
    resumed: &[Envelope],
    players: &Arc<dyn ChatModel>,
    dir: &Path,
    keyboard: &Keyboard,
) -> anyhow::Result<Box<dyn GmSeat>> {
    if campaign.gm.seat == GmSeatKind::Ai {
        return Ok(Box::new(ai_gm(campaign, players, dir)?));
    }
    Ok(match gm_script {
        Some(path) => {
            let script = script::Script::load(path)?;
            let agents: Vec<String> = campaign
                .seats
                .iter()
                .map(|s| s.player.agent_id.clone())
                .collect();
            for to in script.unknown_recipients(&agents) {
                eprintln!(
                    "GM script: no AI called {to} at this table (agents: {}, or all); its whispers will not be sent",
                    agents.join(", ")
                );
            }
            let mut gm = script::ScriptGm::new(script);
            gm.fast_forward(resumed);
            Box::new(gm)
        }
        None => {
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "note: standard input is not a terminal; reading GM input from it line by line"
                );
            }
            Box::new(terminal::TerminalGm::new(keyboard.clone()))
        }
    })
}

/// The people's seats, when anyone plays a character at the terminal.
fn people_seat(campaign: &Campaign, keyboard: &Keyboard) -> Option<TerminalPlayers> {
    let names: Vec<String> = campaign
        .seats
        .iter()
        .filter(|x| x.taken_by == SeatTaker::Human)
        .map(|x| format!("{} plays {}", x.player.name, x.character.name))
        .collect();
    if names.is_empty() {
        return None;
    }
    println!("At the terminal: {}.", names.join("; "));
    Some(TerminalPlayers::new(keyboard.clone()))
}

pub async fn play(
    file: Option<&Path>,
    dir: Option<&Path>,
    gm_script: Option<&Path>,
    seed: Option<u64>,
    seats: &SeatArgs,
    model_args: &models::ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let (file, dir) = sessions::campaign_file(file, dir)?;
    let campaign = troupe_campaign::load(&file)?;
    play_campaign(
        campaign, &dir, gm_script, seed, seats, model_args, memory_url,
    )
    .await
}

/// Play a session of this campaign (as loaded, or as an encounter set it up) in `dir`.
pub async fn play_campaign(
    mut campaign: Campaign,
    dir: &Path,
    gm_script: Option<&Path>,
    seed: Option<u64>,
    seats: &SeatArgs,
    model_args: &models::ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let dir = dir.to_path_buf();
    let seed = seed_or_now(seed);
    seat_table(&mut campaign, seats, gm_script, seed)?;
    // The model first: a server that is down is named now, not after the GM's first narration.
    let model = models::fail_fast(models::choose(model_args, campaign.model.as_ref(), &dir)?);
    crate::preflight::check_server(model_args, Some(&campaign))?;
    let _lock = CampaignLock::take(&dir)?;
    let mut store = sessions::create_store(&dir)?;
    sessions::repair_last_mirror(&dir, &mut store)?;
    if let Some(last) = store.latest_session()?
        && last.ended_reason.is_none()
    {
        eprintln!(
            "note: session {} did not finish; {} continues it. Starting a new session.",
            last.number,
            sessions::command(&dir, "troupe resume")
        );
    }
    let keyboard = Keyboard::new();
    let mut gm = gm_seat(&campaign, gm_script, &[], &model, &dir, &keyboard)?;
    let mut people = people_seat(&campaign, &keyboard);
    let model_name = model.name();
    let spend_campaign = campaign.clone();
    let table = table(&dir, model, campaign_memory(&dir, &campaign, memory_url)?)?;
    let number = store.next_session_number()?;
    store
        .mirror(number)
        .with_context(|| format!("cannot write the log of session {number}"))?;
    let mut story = display::Story::new(
        gm_script.is_some() || campaign.gm.seat == GmSeatKind::Ai,
        display::Reader::of(&campaign),
    );
    let clock = SystemClock;
    let setup = SessionSetup {
        campaign,
        session_number: number,
        seed,
        day: store.campaign_day()?,
    };
    let mut driver = Driver::start(setup, store, gm.as_mut(), &table, &mut story, &clock)?;
    if let Some(p) = people.as_mut() {
        driver.seat_people(p);
    }
    if let Some(n) = seats.turns {
        driver.stop_after(n);
    }
    limit_spend(&mut driver, &seats.spend, &spend_campaign, &model_name)?;
    run(driver, &dir).await
}

pub async fn resume(
    dir: &Path,
    session: Option<u32>,
    gm_script: Option<&Path>,
    turns: Option<u32>,
    spend: &SpendArgs,
    model_args: &models::ModelArgs,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    sessions::require_played(dir)?;
    let _lock = CampaignLock::take(dir)?;
    let mut store = sessions::create_store(dir)?;
    let number = match session {
        Some(n) => n,
        None => match store.latest_session()? {
            Some(s) => s.number,
            None => {
                let missing = format!(
                    "{} has no sessions yet; `troupe play` starts one",
                    dir.display()
                );
                return Err(sessions::no_session(dir, missing, sessions::Asked::Resume));
            }
        },
    };
    // The state from the newest snapshot and the events after it: a long session resumes
    // without reading its whole log.
    let state = troupe_lasers::snapshot::fold_stored(&store, number)?;
    let Some(campaign) = state.campaign.clone() else {
        bail!(
            "there is no session {number} in {} (or it has no session_started event)",
            sessions::full_path(dir)
        );
    };
    sessions::reopen_mirror_of(&mut store, number)?;

    let model = models::fail_fast(models::choose(model_args, campaign.model.as_ref(), dir)?);
    crate::preflight::check_server(model_args, Some(&campaign))?;
    let keyboard = Keyboard::new();
    let gm_inputs = match gm_script {
        Some(_) => store.live_events_of_types(number, script::GM_INPUT_TYPES)?,
        None => Vec::new(),
    };
    let mut gm = gm_seat(&campaign, gm_script, &gm_inputs, &model, dir, &keyboard)?;
    if model.replays_served() {
        // A provider answering from a recording moves past the replies the log already has.
        let calls = store.live_events_of_types(number, &["model_call"])?;
        model.skip_served(&served_calls(&calls));
    }
    let mut people = people_seat(&campaign, &keyboard);
    let model_name = model.name();
    let table = table(dir, model, campaign_memory(dir, &campaign, memory_url)?)?;
    let mut story = display::Story::new(
        gm_script.is_some() || campaign.gm.seat == GmSeatKind::Ai,
        display::Reader::of(&campaign),
    );
    let last_turn = store.live_events_from_turn(number, state.turn_number)?;
    story.recap(&state, &last_turn);
    let clock = SystemClock;
    let mut driver = Driver::resume(number, store, gm.as_mut(), &table, &mut story, &clock)?;
    if let Some(p) = people.as_mut() {
        driver.seat_people(p);
    }
    if let Some(n) = turns {
        driver.stop_after(n);
    }
    limit_spend(&mut driver, spend, &campaign, &model_name)?;
    let code = run(driver, dir).await?;
    // A Lasers & Feelings encounter's session writes its outcome when it ends, resumed or not.
    finish_encounter(dir, number, memory_url)?;
    Ok(code)
}

/// Play until the session ends; Ctrl-C ends it cleanly. Every step is committed as it happens,
/// so an interruption (Ctrl-C, kill -9, power loss) loses at most the step in flight.
async fn run(mut driver: Driver<'_>, dir: &Path) -> anyhow::Result<ExitCode> {
    // For the crash tests: stop at a given event and wait to be killed.
    driver.pause_at(troupe_engine::pause::CrashPause::from_env());
    // `biased`: the Ctrl-C handler is installed (first poll) before the first GM prompt shows.
    let outcome = tokio::select! {
        biased;
        _ = tokio::signal::ctrl_c() => None,
        r = driver.run() => Some(r),
    };
    let code = match outcome {
        Some(r) => {
            r?;
            if let Some(stop) = driver.spend_stopped() {
                // Saved, not ended: `troupe resume` continues where it stopped.
                eprintln!("{}", spend_stopped_message(stop, dir));
                if let Some(path) = driver.mirror_path() {
                    println!("Log: {}", path.display());
                }
                return Ok(ExitCode::from(SPEND_LIMIT_EXIT));
            }
            ExitCode::SUCCESS
        }
        None => {
            // Ending stores the session in memory, which asks the model: a second Ctrl-C
            // leaves without waiting for it (the session stays unfinished, every step saved).
            eprintln!("\nInterrupted: saving (Ctrl-C again leaves at once)…");
            let ended = tokio::select! {
                biased;
                _ = tokio::signal::ctrl_c() => false,
                r = driver.end("interrupted by Ctrl-C") => { r?; true }
            };
            eprintln!(
                "{}Everything so far is saved; {} continues.",
                if ended {
                    ""
                } else {
                    "Left before the session's memories were stored. "
                },
                sessions::command(dir, "troupe resume")
            );
            if !ended {
                return Ok(ExitCode::from(130));
            }
            ExitCode::from(130)
        }
    };
    if driver.session().ended.is_none() {
        driver.end("the GM script ended").await?;
    }
    if let Some(path) = driver.mirror_path() {
        println!("Log: {}", path.display());
    }
    // Give a spinner thread a moment to clear its line (there is none off a terminal: a batch
    // of sessions need not wait).
    if std::io::stderr().is_terminal() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(code)
}
