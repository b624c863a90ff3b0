//! `troupe`: AI players at a Lasers & Feelings table.

mod commands;
mod display;
mod info;
mod models;
mod script;
mod terminal;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use troupe_agents::PromptSet;
use troupe_engine::{Driver, EventLog, GmSeat, SessionSetup, SystemClock, Table, next_session_log};
use troupe_llm::{Gateway, RetryPolicy, ScaledSleeper, Sleeper, TokioSleeper};

#[derive(Parser)]
#[command(
    name = "troupe",
    version,
    about = "AI players at your Lasers & Feelings table"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a campaign file and report every mistake in it
    Check { file: PathBuf },
    /// Play a session: you are the GM, the AIs are the players
    Play {
        /// The campaign file (campaign.json / characters.json)
        file: PathBuf,
        /// Read the GM's inputs from a YAML script instead of the terminal
        #[arg(long)]
        gm_script: Option<PathBuf>,
        /// Dice seed (recorded in the log); the same seed and inputs give the same rolls
        #[arg(long)]
        seed: Option<u64>,
        /// Campaign directory for logs/ and prompts/ (default: the campaign file's directory)
        #[arg(long)]
        campaign: Option<PathBuf>,
        #[command(flatten)]
        model: models::ModelArgs,
    },
    /// Check character actions for overreach: one action per line on stdin, one JSON verdict per line out
    Validate,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { file } => check(&file),
        Command::Validate => validate(),
        Command::Play {
            file,
            gm_script,
            seed,
            campaign,
            model,
        } => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("could not start the async runtime")
            .and_then(|rt| rt.block_on(play(&file, gm_script.as_deref(), seed, campaign, &model))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn check(file: &Path) -> anyhow::Result<ExitCode> {
    match troupe_campaign::load(file) {
        Ok(c) => {
            println!(
                "{}: OK — \"{}\", GM {}, {} AI player{}, ship {}",
                file.display(),
                c.name,
                c.gm_name,
                c.seats.len(),
                if c.seats.len() == 1 { "" } else { "s" },
                c.ship.name
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

fn validate() -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.context("could not read standard input")?;
        let verdict = troupe_validator::check(&line);
        writeln!(out, "{}", serde_json::to_string(&verdict)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Backoff waits are scaled by TROUPE_RETRY_SCALE (tests use a tiny factor; default 1).
fn sleeper() -> Arc<dyn Sleeper> {
    match std::env::var("TROUPE_RETRY_SCALE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
    {
        Some(factor) => Arc::new(ScaledSleeper { factor }),
        None => Arc::new(TokioSleeper),
    }
}

async fn play(
    file: &Path,
    gm_script: Option<&Path>,
    seed: Option<u64>,
    campaign_dir: Option<PathBuf>,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    let campaign = troupe_campaign::load(file).map_err(|e| anyhow::anyhow!("{e}"))?;
    let dir = campaign_dir.unwrap_or_else(|| {
        file.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    });
    let model = models::choose(model_args, campaign.model.as_ref(), &dir)?;
    let prompts =
        PromptSet::with_overrides(&dir.join("prompts")).map_err(|e| anyhow::anyhow!("{e}"))?;
    let table = Table {
        gateway: Gateway::new(model, RetryPolicy::default(), sleeper()),
        prompts,
    };
    let mut gm: Box<dyn GmSeat> = match gm_script {
        Some(path) => Box::new(script::ScriptGm::new(script::Script::load(path)?)),
        None => {
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "note: standard input is not a terminal; reading GM input from it line by line"
                );
            }
            Box::new(terminal::TerminalGm::new())
        }
    };
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let (number, log_path) = next_session_log(&dir);
    let log = EventLog::create(&log_path)?;
    let mut story = display::Story::new(gm_script.is_some());
    let clock = SystemClock;
    let setup = SessionSetup {
        campaign,
        session_number: number,
        seed,
    };
    let mut driver = Driver::start(setup, log, gm.as_mut(), &table, &mut story, &clock)?;

    // Ctrl-C: every event already written is a whole, flushed line; record the interruption
    // and stop. A second Ctrl-C while saving exits at once, losing nothing written.
    let outcome = tokio::select! {
        r = driver.run() => Some(r),
        _ = tokio::signal::ctrl_c() => None,
    };
    let code = match outcome {
        Some(r) => {
            r?;
            ExitCode::SUCCESS
        }
        None => {
            driver.end("interrupted by Ctrl-C")?;
            eprintln!("\nInterrupted. Everything so far is saved.");
            ExitCode::from(130)
        }
    };
    if driver.session().ended.is_none() {
        driver.end("the GM script ended")?;
    }
    println!("Log: {}", driver.log_path().display());
    // Give a spinner thread a moment to clear its line.
    tokio::time::sleep(Duration::from_millis(10)).await;
    Ok(code)
}
