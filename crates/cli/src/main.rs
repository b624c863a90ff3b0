//! `troupe`: AI players at a Lasers & Feelings table.

mod detector;
mod discord;
mod encounter;
mod export;
mod scene;
mod serve;
mod tables;

// The modules of troupe-host (opening a table), troupe-batch (a game's runs) and
// troupe-terminal (the campaign's sessions, the keyboard, spinners, play) keep the names the
// surfaces still in this binary (encounters, scenes, the web table, Discord) reach them by.
use troupe_batch::runs;
use troupe_host::{graph, models, preflight};
use troupe_terminal::{keyboard, memory, play, replay, sessions, spinner};

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "troupe",
    version,
    about = "AI players, an AI game master and a scene engine for tabletop role-playing: \
             Lasers & Feelings sessions, d20 encounters and scenes, at the terminal or online",
    help_template = HELP_TEMPLATE
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Before the subcommand (`troupe --campaign DIR sessions`); clap hands it down to the
    /// subcommand's own `--campaign`, so every command reads it from there.
    #[command(flatten)]
    dir: CampaignDir,
    /// Keep the campaign memory on a graph server instead of campaign.db:
    /// falkordb://HOST:PORT/GRAPH (or redis://…) or http://HOST:7474/DATABASE (Neo4j)
    #[arg(long, value_name = "URL", global = true)]
    memory_url: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Check a campaign file and its prompt overrides, reporting every mistake
    Check {
        /// The campaign file (default: campaign.json or characters.json in the campaign directory)
        file: Option<PathBuf>,
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Play a new Lasers & Feelings session of the campaign
    ///
    /// You (or an AI, --gm ai) run the game; AIs (or people, --human AGENT) play the
    /// characters.
    Play {
        /// The campaign file (default: campaign.json or characters.json in the campaign directory)
        file: Option<PathBuf>,
        #[command(flatten)]
        dir: CampaignDir,
        /// Read the GM's inputs from a YAML script instead of the terminal
        #[arg(long)]
        gm_script: Option<PathBuf>,
        /// Dice seed (recorded in the log); the same seed and inputs give the same rolls
        #[arg(long)]
        seed: Option<u64>,
        #[command(flatten)]
        seats: play::SeatArgs,
        #[command(flatten)]
        model: models::ModelArgs,
    },
    /// Continue the last session where it stopped
    ///
    /// The last session (or --session N) goes on where its log stops: after a crash, Ctrl-C,
    /// /quit or an undo.
    Resume {
        #[command(flatten)]
        dir: CampaignDir,
        /// The session to continue (default: the latest)
        #[arg(long)]
        session: Option<u32>,
        /// Read the GM's inputs from a YAML script (it picks up where the session stopped)
        #[arg(long)]
        gm_script: Option<PathBuf>,
        /// End the session once this turn is played
        #[arg(long)]
        turns: Option<u32>,
        #[command(flatten)]
        spend: play::SpendArgs,
        #[command(flatten)]
        model: models::ModelArgs,
    },
    /// Open a table that people join from their own browsers
    ///
    /// A Lasers & Feelings session, an encounter or a scene: a link per seat, AI in any empty
    /// chair. Run it again after a stop or a crash to continue the same table; `--host ROOT`
    /// serves many, and opens more from a page.
    Serve {
        /// The campaign file (default: campaign.json or characters.json in the campaign directory)
        file: Option<PathBuf>,
        #[command(flatten)]
        dir: CampaignDir,
        #[command(flatten)]
        args: serve::ServeArgs,
        #[command(flatten)]
        model: models::ModelArgs,
    },
    /// Run a Discord bot for the campaign's tables (or every campaign under --root)
    ///
    /// The same tables as `troupe serve`: a thread per table, people's seats bound to Discord
    /// users, slash commands for the games' commands. The token comes from the environment
    /// variable TROUPE_DISCORD_TOKEN only.
    Discord {
        #[command(flatten)]
        dir: CampaignDir,
        #[command(flatten)]
        args: discord::DiscordArgs,
        #[command(flatten)]
        model: models::ModelArgs,
    },
    /// List the campaign's sessions, encounter runs and scenes
    Sessions {
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Take back the last GM decision (or turn) of the latest session
    ///
    /// The last GM decision (or, with --turn, the whole last turn) of the latest session;
    /// `troupe resume` then asks for it again.
    Undo {
        #[command(flatten)]
        dir: CampaignDir,
        /// Take back the whole last turn
        #[arg(long)]
        turn: bool,
    },
    /// Re-run a session from its log and check it comes out the same
    ///
    /// The recorded GM inputs, dice and model replies (from --from-turn N on, a model of your
    /// choice answers instead).
    Replay {
        /// The session number
        session: u32,
        #[command(flatten)]
        dir: CampaignDir,
        /// From this turn on, ask the chosen model (--provider …) instead of the recorded replies
        #[arg(long)]
        from_turn: Option<u32>,
        #[command(flatten)]
        model: models::ModelArgs,
    },
    /// Write a session's readable Markdown transcript
    Transcript {
        /// The session number
        session: u32,
        #[command(flatten)]
        dir: CampaignDir,
        /// Write here instead of standard output
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a session's logged events, one JSON object per line (docs/log-schema.md)
    Log {
        /// The session number (default: the latest)
        session: Option<u32>,
        /// Every session of the campaign, in order
        #[arg(long, conflicts_with = "session")]
        all: bool,
        /// Only events of this type (repeat for several), e.g. --type model_call
        #[arg(long = "type", value_name = "TYPE")]
        types: Vec<String>,
        /// Also the events the GM undid, marked "undone": true
        #[arg(long)]
        include_undone: bool,
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Metrics of a session, a campaign or a batch, with a scorecard per model
    ///
    /// A session (default: the latest) or, with --all, the whole campaign (or every campaign
    /// of a `troupe simulate` --out directory): turns, validation failures, model retries,
    /// response times, tokens, consensus, leadership, dice, the log audit, what is flagged for
    /// review and a scorecard per model.
    Stats {
        /// The session number (default: the latest)
        session: Option<u32>,
        /// Every session of the campaign
        #[arg(long, conflicts_with = "session")]
        all: bool,
        /// Print the numbers as JSON
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Write a self-contained HTML report of a session, a campaign or a batch
    ///
    /// Charts, flags, a scorecard per model and the transcript with the AIs' reasoning, of a
    /// session (default: the latest) or, with --all, the whole campaign (or every campaign of a
    /// `troupe simulate` --out directory).
    Report {
        /// The session number (default: the latest)
        session: Option<u32>,
        /// Every session of the campaign
        #[arg(long, conflicts_with = "session")]
        all: bool,
        /// The HTML file to write
        #[arg(short, long, default_value = "report.html")]
        output: PathBuf,
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Write a session, a campaign or a batch as Parquet tables
    ///
    /// Events, model calls, turns, verdicts and scorecards, for pandas, polars or DuckDB; the
    /// columns are in docs/export-schema.md. Needs a troupe built with `--features export`.
    Export {
        /// What to export: a campaign directory or its campaign.db, a session's
        /// logs/session-N.jsonl, or the --out directory of troupe simulate (default: --campaign,
        /// or the current directory)
        #[arg(value_name = "PATH")]
        source: Option<PathBuf>,
        /// The directory to write the .parquet files into (new or empty)
        #[arg(short, long, value_name = "OUTDIR")]
        output: PathBuf,
        /// Replace OUTDIR when it already holds files
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Check character actions for overreach (stdin lines in, JSON verdicts out)
    ///
    /// One action per line on standard input, one JSON verdict per line out.
    Validate,
    /// The campaign memory: query it, import notes into it, export it
    Memory {
        #[command(subcommand)]
        command: memory::MemoryCommand,
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Play a batch of all-AI sessions in parallel
    ///
    /// Campaign files × models × seeds, each in its own campaign directory under --out;
    /// `troupe stats`/`report --campaign OUT` compare them.
    Simulate(troupe_batch::simulate::SimulateArgs),
    /// Score AI players on the bench suite
    ///
    /// Scripted scenarios of secrets, LASER FEELINGS, a party that disagrees, memory across
    /// sessions and tempting actions, scored from the logs (docs/bench.md); writes bench.md and
    /// bench.json under --out.
    Bench(troupe_batch::bench::BenchArgs),
    /// d20 encounters run by an AI game master from a spec
    ///
    /// Check a spec, run it, resume, undo, replay, see its log and stats, list the specs.
    Encounter {
        #[command(subcommand)]
        command: encounter::EncounterCommand,
        #[command(flatten)]
        dir: CampaignDir,
    },
    /// Scenes the engine decides, from a scene file
    ///
    /// Check a scene file, play it, resume, undo, replay, see its log and stats.
    Scene {
        #[command(subcommand)]
        command: scene::SceneCommand,
        #[command(flatten)]
        dir: CampaignDir,
    },
}

/// `troupe --help`: the commands grouped the way people look for them, one line each (each
/// command's own `--help` has the details).
const HELP_TEMPLATE: &str = "\
{name} {version}: {about}

{usage-heading} {usage}

Play at this terminal (a Lasers & Feelings campaign):
  play        Play a new session: you or an AI run the game, AIs or people play
  resume      Continue the last session where it stopped
  undo        Take back the last GM decision (or turn) of the latest session
  sessions    List the campaign's sessions, encounter runs and scenes
  check       Check a campaign file and its prompt overrides
  memory      Query the campaign's memory, import notes into it, export it

The table online:
  serve       Open a table that people join from their browsers
  discord     Run a Discord bot for the campaign's tables

Other games:
  encounter   d20 encounters run by an AI game master: run, resume, log, stats…
  scene       Scenes the engine decides: play, resume, log, stats…

Research:
  log         A session's logged events as JSON lines
  stats       Metrics of a session, a campaign or a batch
  report      An HTML report of a session, a campaign or a batch
  transcript  A session's readable Markdown transcript
  replay      Re-run a session from its log and check it comes out the same
  export      A session, a campaign or a batch as Parquet tables
  simulate    Play a batch of all-AI sessions in parallel
  bench       Score AI players on the bench suite
  validate    Check character actions for overreach

Options:
{options}

`troupe help COMMAND` (or `troupe COMMAND --help`) tells more about each command.
";

/// The campaign directory option every campaign command takes. Global, so it is accepted
/// anywhere on the command line: before the subcommand, after it, or after a sub-subcommand's
/// arguments (`troupe memory import notes.jsonl --campaign DIR`).
#[derive(Clone, Debug, clap::Args)]
struct CampaignDir {
    /// Campaign directory: campaign.db, logs/, prompts/ (default: the campaign file's directory,
    /// or the current directory)
    #[arg(long = "campaign", value_name = "DIR", global = true)]
    path: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    detector::register();
    troupe_batch::simulate::durability_from_env();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Run the command given.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per subcommand, each only unpacking its arguments into its module's function; split, the commands would be listed twice"
)]
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // `--memory-url`, handed to each command that opens the campaign's memory.
    let memory_url = cli.memory_url.as_deref();
    match cli.command {
        Command::Check { file, dir } => {
            sessions::campaign_file(file.as_deref(), dir.path.as_deref())
                .and_then(|(f, d)| check(&f, &d))
        }
        Command::Validate => validate(),
        Command::Simulate(args) => match cli.dir.path {
            Some(_) => Err(anyhow::anyhow!(
                "simulate plays each run in its own directory under --out; --campaign does not apply"
            )),
            None => troupe_batch::simulate::simulate(&args),
        },
        Command::Bench(args) => match cli.dir.path {
            Some(_) => Err(anyhow::anyhow!(
                "bench plays each scenario in its own directory under --out; --campaign does not apply"
            )),
            None => troupe_batch::bench::bench(&args),
        },
        Command::Memory { command, dir } => {
            memory::run(&sessions::dir_of(dir.path), command, memory_url)
        }
        Command::Scene { command, dir } => scene::run(dir.path.as_deref(), command, memory_url),
        Command::Encounter { command, dir } => {
            encounter::run(dir.path.as_deref(), command, memory_url)
        }
        Command::Log {
            session,
            all,
            types,
            include_undone,
            dir,
        } => troupe_batch::research::log(
            &sessions::dir_of(dir.path),
            session,
            all,
            &types,
            include_undone,
        ),
        Command::Stats {
            session,
            all,
            json,
            dir,
        } => troupe_batch::research::stats(&sessions::dir_of(dir.path), session, all, json),
        Command::Report {
            session,
            all,
            output,
            dir,
        } => troupe_batch::research::report(&sessions::dir_of(dir.path), session, all, &output),
        Command::Export {
            source,
            output,
            force,
            dir,
        } => export::export(
            &source.unwrap_or_else(|| sessions::dir_of(dir.path)),
            &output,
            force,
        ),
        Command::Sessions { dir } => sessions::list(&sessions::dir_of(dir.path)),
        Command::Undo { dir, turn } => {
            sessions::undo(&sessions::dir_of(dir.path), turn, memory_url)
        }
        Command::Transcript {
            session,
            dir,
            output,
        } => sessions::transcript(&sessions::dir_of(dir.path), session, output.as_deref()),
        Command::Play {
            file,
            dir,
            gm_script,
            seed,
            seats,
            model,
        } => block_on(play::play(
            file.as_deref(),
            dir.path.as_deref(),
            gm_script.as_deref(),
            seed,
            &seats,
            &model,
            memory_url,
        )),
        Command::Resume {
            dir,
            session,
            gm_script,
            turns,
            spend,
            model,
        } => block_on(play::resume(
            &sessions::dir_of(dir.path),
            session,
            gm_script.as_deref(),
            turns,
            &spend,
            &model,
            memory_url,
        )),
        Command::Serve {
            file,
            dir,
            mut args,
            model,
        } => {
            args.memory_url = cli.memory_url.clone();
            block_on(serve::serve(
                file.as_deref(),
                dir.path.as_deref(),
                &args,
                &model,
            ))
        }
        Command::Discord { dir, args, model } => block_on(discord::discord(
            dir.path.as_deref(),
            &args,
            &model,
            cli.memory_url.clone(),
        )),
        Command::Replay {
            session,
            dir,
            from_turn,
            model,
        } => block_on(replay::replay(
            &sessions::dir_of(dir.path),
            session,
            from_turn,
            &model,
        )),
    }
}

/// Run a command on the async runtime. Shutting down in the background matters: a GM prompt
/// may still be blocked reading standard input after Ctrl-C, and nothing must wait for it.
fn block_on(
    command: impl std::future::Future<Output = anyhow::Result<ExitCode>>,
) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")?;
    let result = rt.block_on(command);
    rt.shutdown_background();
    result
}

/// The campaign file, then the prompt overrides in its directory: each error names its file.
fn check(file: &Path, dir: &Path) -> anyhow::Result<ExitCode> {
    let campaign = check_campaign(file);
    let prompts = check_prompts(dir);
    Ok(if campaign && prompts {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn check_campaign(file: &Path) -> bool {
    match troupe_campaign::load(file) {
        Ok(c) => {
            println!(
                "{}: OK — \"{}\", GM {}, {}, ship {}",
                file.display(),
                c.name,
                c.gm_name,
                troupe_lasers::lines::count(c.seats.len(), "AI player"),
                c.ship.name
            );
            true
        }
        Err(e) => {
            eprintln!("{}", troupe_engine::error_chain(&e));
            false
        }
    }
}

/// The campaign's `prompts/` overrides (of every game's templates): each must compile; a file
/// that replaces no template (a misspelt name) is noted, since nothing would ever read it.
fn check_prompts(dir: &Path) -> bool {
    let folder = troupe_games::folder(dir);
    for unused in troupe_games::unused(dir) {
        eprintln!(
            "note: {} replaces no prompt template (the names are those of crates/*/prompts/*.md)",
            unused.display()
        );
    }
    match troupe_games::campaign(dir) {
        Ok(p) if p.overridden().is_empty() => true,
        Ok(p) => {
            println!(
                "{}: OK — overrides {}",
                folder.display(),
                p.overridden().join(", ")
            );
            true
        }
        Err(e) => {
            eprintln!("{}", troupe_engine::error_chain(&e));
            false
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::{Cli, HELP_TEMPLATE};

    /// The grouped help names every command once, and no command that is not there.
    #[test]
    fn the_help_lists_every_command_once() {
        let cli = Cli::command();
        let listed: Vec<&str> = HELP_TEMPLATE
            .lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let mut names: Vec<&str> = cli
            .get_subcommands()
            .map(clap::Command::get_name)
            .filter(|n| *n != "help")
            .collect();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        names.sort_unstable();
        assert_eq!(sorted, names);
    }
}
