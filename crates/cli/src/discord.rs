//! `troupe discord`: the Discord bot, one more surface of the same tables `troupe serve` serves
//! (`troupe_discord`). It reopens every open table of a campaign directory (or of every campaign
//! under `--root`), gives each a thread in `--channel`, and opens more from Discord's slash
//! commands as the host's page does. The bot's token comes from the environment only.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

use crate::models;
use crate::tables::ServeArgs;

#[derive(Clone, Debug, clap::Args)]
pub struct DiscordArgs {
    /// Serve every campaign directory under ROOT (each open table; `/start encounter` and the
    /// like open more there, naming the campaign). Without it: the campaign directory
    #[arg(long, value_name = "ROOT")]
    pub root: Option<PathBuf>,
    /// The channel (its id) where a table without a thread gets one
    #[arg(long, value_name = "CHANNEL_ID")]
    pub channel: Option<u64>,
    /// When a person has not answered for this many seconds, an AI plays their seat until
    /// they take it back
    #[arg(long, value_name = "SECONDS")]
    pub hand_over_after: Option<u64>,
    /// Dice seed of the tables opened from Discord (recorded in the log)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Play this many turns of a Lasers & Feelings session, then end it
    #[arg(long)]
    pub turns: Option<u32>,
    /// Discord's REST API (a test's fake; the default is Discord's)
    #[arg(long, hide = true, default_value = troupe_discord::DISCORD_API)]
    pub api_url: String,
    /// Discord's gateway (a test's fake; the default is Discord's)
    #[arg(long, hide = true)]
    pub gateway_url: Option<String>,
}

/// The defaults of `troupe serve`'s table options, for the tables the bot opens and reopens.
#[derive(Parser)]
struct Defaults {
    #[command(flatten)]
    serve: ServeArgs,
}

pub async fn discord(
    dir: Option<&Path>,
    args: &DiscordArgs,
    model_args: &models::ModelArgs,
    memory_url: Option<String>,
) -> anyhow::Result<ExitCode> {
    // The token first: a missing one stops here, before anything opens.
    let token = troupe_discord::Token::from_env(troupe_discord::TOKEN_VAR)?;
    let (root, single) = match (&args.root, dir) {
        (Some(root), _) => (root.clone(), None),
        (None, dir) => {
            let dir = crate::sessions::dir_of(dir.map(Path::to_path_buf));
            let dir = std::fs::canonicalize(&dir)
                .with_context(|| format!("cannot read {}", dir.display()))?;
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .context("the campaign directory has no name")?;
            let parent = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            (parent, Some(name))
        }
    };
    let mut serve = Defaults::try_parse_from(["serve"])?.serve;
    serve.seed = args.seed;
    serve.turns = args.turns;
    serve.memory_url = memory_url;
    let locks = Arc::new(Mutex::new(Vec::new()));
    let open = crate::serve::opener(&root, &serve, model_args, locks.clone());
    // A table opened from Discord gets the bot's dice seed (a request from Discord names none).
    let seed = args.seed;
    let opener: troupe_serve::host::Opener = Box::new(move |r| {
        let mut r = r.clone();
        r.seed = r.seed.or(seed);
        open(&r)
    });
    let config = troupe_discord::Config {
        token,
        api: args.api_url.clone(),
        gateway: args.gateway_url.clone(),
        channel: args.channel,
        home: match &single {
            Some(name) => root.join(name),
            None => root.clone(),
        },
        campaign: single.clone(),
        hand_over_after: args.hand_over_after.map(Duration::from_secs),
        offers: troupe_games::OFFERS.to_vec(),
    };
    // A refused token stops here too, before any table starts.
    let bot = troupe_discord::Bot::connect(config, Some(opener)).await?;
    let dirs: Vec<PathBuf> = match &single {
        Some(name) => vec![root.join(name)],
        None => std::fs::read_dir(&root)
            .with_context(|| format!("cannot read {}", root.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect(),
    };
    let mut dirs: Vec<PathBuf> = dirs
        .into_iter()
        .filter(|d| troupe_campaign::CampaignDir::new(d).table().is_file())
        .collect();
    dirs.sort();
    for dir in &dirs {
        match crate::serve::reopen(dir, &serve, model_args) {
            Ok(Some(opened)) => {
                println!("  table {}: {}", opened.run.table.id, dir.display());
                if let Ok(mut held) = locks.lock() {
                    held.push(opened.lock);
                }
                bot.open(opened.run)?;
            }
            Ok(None) => println!("{}: its table's game has ended; not served", dir.display()),
            Err(e) => eprintln!("troupe: {}: {e:#}; not served", dir.display()),
        }
    }
    println!(
        "The Discord bot is connected, serving {} table{}; Ctrl-C stops it (everything is saved).",
        dirs.len(),
        if dirs.len() == 1 { "" } else { "s" }
    );
    bot.serve().await?;
    drop(locks);
    Ok(ExitCode::SUCCESS)
}
