//! `troupe scene`: seed 004's scene engine at the terminal. The player types what their
//! character does; the rules planner picks one tool from the menu; the engine validates,
//! executes and applies it; the narrator tells what happened. The loop is the engine's
//! ([`troupe_scene::table::SceneTable`]): this is its terminal (or script) speaker, its
//! printed story, and the world knowledge and memory an ended scene leaves behind.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Map, Value};
use troupe_lasers::lines::count;
use troupe_scene::Scene;
use troupe_scene::table::SceneStore;
use troupe_scene::table::{
    AiSpeaker, SceneModels, SceneStop, SceneTable, SceneWatch, keep_world, shown,
};
use troupe_scene::view::gm_view;
use troupe_seat::{Answer, Ask, Seat};

use crate::spinner::Thinking;
use crate::tables::PlannerKind;
use troupe_engine::{CallWatch, Watch};

#[derive(Debug, clap::Subcommand)]
pub enum SceneCommand {
    /// Check a scene file and report every mistake in it, with line and column
    Check {
        /// The scene file (YAML)
        file: PathBuf,
    },
    /// Play a scene: you speak for the character whose turn it is, the engine decides
    Play {
        /// The scene file (YAML)
        file: PathBuf,
        /// Read the player's lines from a YAML list instead of the terminal
        #[arg(long)]
        player_script: Option<PathBuf>,
        /// Dice seed (recorded in the log); the same seed and lines give the same scene
        #[arg(long)]
        seed: Option<u64>,
        /// Show the GM's view (everything, hidden entities included) after every turn
        #[arg(long)]
        gm_view: bool,
        #[command(flatten)]
        planner: PlannerArgs,
    },
    /// Continue the campaign's latest scene run where its log stops (after a crash or /quit)
    Resume {
        /// The player's script: the one the run was played with goes on after the lines
        /// already played; another one is played from its first line
        #[arg(long)]
        player_script: Option<PathBuf>,
        #[arg(long)]
        gm_view: bool,
        #[command(flatten)]
        planner: PlannerArgs,
    },
    /// Take back the last turn of the campaign's latest scene run (and everything after it);
    /// `troupe scene resume` then plays on from there
    Undo,
    /// Re-run the latest scene run (or --run N) from its log and check every event comes out
    /// byte for byte the same; prints its narration
    Replay {
        #[arg(long)]
        run: Option<u32>,
    },
    /// A run's events as JSON lines (for analysis): every tool call, refusal and model call
    Log {
        #[arg(long)]
        run: Option<u32>,
    },
    /// Each scene run's figures (or --run N's): turns, the character's lines, tools applied
    /// and refused, narrations polished and refused, model calls and tokens
    Stats {
        #[arg(long)]
        run: Option<u32>,
        /// One JSON object per run instead of the table
        #[arg(long)]
        json: bool,
    },
}

/// The scene runs, as the commands shared with the encounter's speak of them.
const GAME: crate::runs::Game = troupe_batch::scenes::GAME;

/// Who turns the player's words into a tool call.
#[derive(Clone, Debug, clap::Args)]
pub struct PlannerArgs {
    /// rules: the deterministic rules planner; model: a model picks from the menu (a JSON
    /// schema), its reply checked like any other call
    #[arg(long, value_enum, default_value = "rules")]
    planner: PlannerKind,
    /// Ask the model to rewrite each narration; a rewrite that adds or contradicts a fact is
    /// refused (and logged) and the template stands
    #[arg(long)]
    polish: bool,
    /// Who speaks for the character: human (the terminal or --player-script) or ai (a model,
    /// as the first AI player of the campaign directory's campaign.json when there is one)
    #[arg(long, value_enum, default_value = "human")]
    player: PlayerKind,
    /// With --player ai: how many lines the AI says before stopping (`resume` continues)
    #[arg(long, default_value_t = 12)]
    ai_lines: u32,
    #[command(flatten)]
    model: crate::models::ModelArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PlayerKind {
    Human,
    Ai,
}

/// The scene's models from the flags: the gateway when the planner, the polish or the AI
/// speaker needs one, and the AI speaker (named from the campaign's first AI player). Recorded
/// replies already `served` in the run's log are not served again.
fn models(
    args: &PlannerArgs,
    dir: &Path,
    served: &[troupe_llm::CallTag],
) -> anyhow::Result<(SceneModels, Option<AiSpeaker>)> {
    let ai = args.player == PlayerKind::Ai;
    let gateway = if args.planner == PlannerKind::Model || args.polish || ai {
        let model = crate::models::choose(&args.model, None, dir)?;
        if model.replays_served() {
            model.skip_served(served);
        }
        Some(troupe_llm::Gateway::new(
            model,
            troupe_llm::RetryPolicy::default(),
            crate::play::sleeper(),
        ))
    } else {
        None
    };
    let planner = match args.planner {
        PlannerKind::Rules => troupe_scene::table::PlannerKind::Rules,
        PlannerKind::Model => troupe_scene::table::PlannerKind::Model,
    };
    let prompts = crate::play::prompts(dir)?;
    let models = SceneModels {
        gateway,
        prompts,
        planner,
        polish: args.polish,
    };
    Ok((models, ai.then(|| ai_speaker(dir, args.ai_lines))))
}

/// The AI at the speaker's seat: a name and a goal from the campaign file (or plain defaults).
fn ai_speaker(dir: &Path, lines: u32) -> AiSpeaker {
    let seat = crate::sessions::campaign_file(None, Some(dir))
        .ok()
        .and_then(|(file, _)| troupe_campaign::load(&file).ok())
        .and_then(|c| c.seats.into_iter().next());
    AiSpeaker {
        name: seat.as_ref().map(|s| s.player.name.clone()),
        goal: seat.map_or_else(
            || "play the character well and move the scene on".to_string(),
            |s| s.player.player_goal,
        ),
        lines_left: lines,
    }
}

/// Run a `troupe scene` command; `dir` is the campaign directory if one was given,
/// `memory_url` is `--memory-url`.
pub fn run(
    dir: Option<&Path>,
    command: SceneCommand,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    match command {
        SceneCommand::Check { file } => check(&file),
        SceneCommand::Play {
            file,
            player_script,
            seed,
            gm_view,
            planner,
        } => {
            let dir = dir.map(Path::to_path_buf).unwrap_or_else(|| parent(&file));
            let planner = models(&planner, &dir, &[])?;
            play(
                &dir,
                &file,
                player_script.as_deref(),
                seed,
                gm_view,
                planner,
                memory_url,
            )
        }
        SceneCommand::Resume {
            player_script,
            gm_view,
            planner,
        } => {
            let dir = dir_or_here(dir);
            let planner = models(&planner, &dir, &[])?;
            resume(&dir, player_script.as_deref(), gm_view, planner, memory_url)
        }
        SceneCommand::Undo => undo(&dir_or_here(dir)),
        SceneCommand::Replay { run } => replay(&dir_or_here(dir), run),
        SceneCommand::Log { run } => {
            let dir = dir_or_here(dir);
            crate::runs::log(&existing(&dir)?, &dir, run, &GAME)
        }
        SceneCommand::Stats { run, json } => {
            let dir = dir_or_here(dir);
            let store = existing(&dir)?;
            crate::runs::stats(
                &store,
                &dir,
                (run, json),
                &GAME,
                troupe_batch::scenes::figures,
                troupe_batch::scenes::render_figures,
            )
        }
    }
}

fn dir_or_here(dir: Option<&Path>) -> PathBuf {
    dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn parent(file: &Path) -> PathBuf {
    file.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn load(file: &Path) -> anyhow::Result<Result<troupe_scene::SceneDef, String>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("could not read the scene file {}", file.display()))?;
    Ok(troupe_scene::check(&text).map_err(|problems| {
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}:{p}", file.display()))
            .collect();
        format!(
            "{}\n{} in {}",
            lines.join("\n"),
            count(problems.len(), "problem"),
            file.display()
        )
    }))
}

fn check(file: &Path) -> anyhow::Result<ExitCode> {
    match load(file)? {
        Ok(def) => {
            println!(
                "{}: OK — scene {}, {}, {}, {}",
                file.display(),
                def.id,
                count(def.zones.len(), "zone"),
                count(def.entities.len(), "entity"),
                count(def.clocks.len(), "clock")
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(report) => {
            eprintln!("{report}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Where the speaker's lines come from: the terminal, or a script (with lines already played
/// skipped on resume). `/help` is answered here; `/quit` and the table's commands go to the
/// table; the end of the input leaves.
enum Speaker {
    Terminal,
    Script(std::vec::IntoIter<String>),
}

/// A player script's lines.
fn script_lines(path: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read the player script {}", path.display()))?;
    serde_saphyr::from_str(&text).with_context(|| {
        format!(
            "{}: a player script is a YAML list of lines",
            path.display()
        )
    })
}

/// The character's words a run's log holds, in order (undone turns included: their lines
/// were read too).
fn spoken(events: &[troupe_scene::Envelope]) -> Vec<String> {
    use troupe_scene::{Caller, SceneEvent};
    events
        .iter()
        .filter_map(|e| match &e.event {
            SceneEvent::ToolApplied {
                caller: Caller::Player,
                input,
                ..
            }
            | SceneEvent::Rejected {
                caller: Caller::Player,
                input,
                ..
            } => Some(input.trim().to_string()),
            _ => None,
        })
        .collect()
}

/// Whether a script is the one a run read its first `read` lines from: those lines, leaving
/// out the commands (which the log does not keep as words), are the words the log holds.
fn same_script(lines: &[String], read: usize, said: &[String]) -> bool {
    let words: Vec<String> = lines
        .iter()
        .take(read)
        .map(|l| l.trim().to_string())
        .filter(|l| !l.starts_with('/') && !l.is_empty())
        .collect();
    let mut said = said.to_vec();
    said.dedup();
    let mut words = words;
    words.dedup();
    words == said
}

impl Speaker {
    fn open(script: Option<&Path>, skip: u64) -> anyhow::Result<Speaker> {
        let Some(path) = script else {
            return Ok(Speaker::Terminal);
        };
        let lines = script_lines(path)?;
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        Ok(Speaker::Script(
            lines.into_iter().skip(skip).collect::<Vec<_>>().into_iter(),
        ))
    }

    fn next(&mut self, prompt: &str) -> Option<String> {
        match self {
            Speaker::Script(lines) => lines.next().inspect(|l| println!("{prompt}{l}")),
            Speaker::Terminal => {
                print!("{prompt}");
                let _ = std::io::stdout().flush();
                let mut line = String::new();
                let n = std::io::stdin().lock().read_line(&mut line).ok()?;
                (n > 0).then(|| line.trim().to_string())
            }
        }
    }
}

#[async_trait::async_trait]
impl Seat for Speaker {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        for line in &ask.shown {
            println!("{line}");
        }
        if let Some(e) = &ask.error {
            println!("{e}");
        }
        let Some(line) = self.next(&ask.prompt) else {
            return Answer::Leave;
        };
        let line = line.trim();
        let (command, args) = line
            .split_once(' ')
            .map_or((line, ""), |(c, rest)| (c, rest.trim()));
        let values = |name: &str, text: &str| {
            Map::from_iter([(name.to_string(), Value::String(text.to_string()))])
        };
        // A word that is not one of the table's commands is the character's (as it always was).
        let known = command
            .strip_prefix('/')
            .and_then(|name| ask.commands.iter().find(|c| c.name == name));
        match known {
            Some(c) => Answer::Command {
                name: c.name.clone(),
                values: if c.fields.is_empty() {
                    Map::new()
                } else {
                    values("args", args)
                },
            },
            None => Answer::Decide {
                values: values("line", line),
            },
        }
    }
}

fn play(
    dir: &Path,
    file: &Path,
    script: Option<&Path>,
    seed: Option<u64>,
    gm: bool,
    planner: (SceneModels, Option<AiSpeaker>),
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let def = match load(file)? {
        Ok(def) => def,
        Err(report) => {
            eprintln!("{report}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    // Another troupe playing this campaign would interleave its steps with these.
    std::fs::create_dir_all(dir)
        .with_context(|| format!("could not create the campaign directory {}", dir.display()))?;
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    let mut store = store(dir)?;
    let scene = Scene::start(def, seed);
    let run = store.begin(
        &scene.state.id,
        &chrono::Utc::now().to_rfc3339(),
        &scene.events,
    )?;
    println!(
        "Scene {} (run {run}, seed {seed}). Goal: {}",
        scene.state.id, scene.state.goal
    );
    println!("Type what your character does; /state, /undo, /end, /quit, /help.");
    let speaker = Speaker::open(script, 0)?;
    play_table(dir, store, run, scene, 0, speaker, gm, planner, memory_url)
}

fn resume(
    dir: &Path,
    script: Option<&Path>,
    gm: bool,
    planner: (SceneModels, Option<AiSpeaker>),
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    let mut store = store(dir)?;
    let run = crate::runs::run_number(&store, dir, None, &GAME)?;
    if store.run(run)?.is_some_and(|r| r.ended) {
        return keep_ended(dir, &store, run, memory_url);
    }
    let latest = crate::sessions::open_run(&mut store, run, (GAME.name, GAME.starts))?;
    let events = store.events(latest.number)?;
    let said = spoken(&events);
    let scene = Scene::resume(events)?;
    print!(
        "Resuming scene {} (run {}) at turn {}, {} already played",
        scene.state.id,
        latest.number,
        scene.state.turn + 1,
        troupe_lasers::lines::count(latest.inputs, "line"),
    );
    // The script this run was played with goes on after its played lines; another one is
    // played from its first line.
    let skip = match script {
        None => {
            println!(".");
            0
        }
        Some(path) => {
            let lines = script_lines(path)?;
            let read = usize::try_from(latest.inputs).unwrap_or(usize::MAX);
            if same_script(&lines, read, &said) {
                println!(
                    "; {} goes on from its line {}.",
                    path.display(),
                    read.min(lines.len()) + 1
                );
                latest.inputs
            } else {
                println!(
                    ". {} is not the script those lines came from: it is played from its first \
                     line.",
                    path.display()
                );
                0
            }
        }
    };
    let speaker = Speaker::open(script, skip)?;
    play_table(
        dir,
        store,
        latest.number,
        scene,
        latest.inputs,
        speaker,
        gm,
        planner,
        memory_url,
    )
}

/// `troupe scene resume` of a run that has ended: its changes to the world kept again, which is
/// how a crash or a failed write between the scene's end and its world's (a memory server down)
/// gets them kept. Keeping is idempotent (a fact the world or the memory has is not added
/// twice), so a second resume changes nothing.
fn keep_ended(
    dir: &Path,
    store: &SceneStore,
    run: u32,
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let scene = Scene::resume(store.events(run)?)?;
    let deltas = scene.events.iter().rev().find_map(|e| match &e.event {
        troupe_scene::SceneEvent::SceneEnded { deltas } => Some(deltas),
        _ => None,
    });
    if let Some(deltas) = deltas {
        write_world(dir, run, memory_url, &scene.state, deltas)?;
    }
    println!(
        "Scene run {run} has ended; {} starts a new one.",
        GAME.starts
    );
    Ok(ExitCode::SUCCESS)
}

/// Play the scene at this terminal until it ends or the speaker stops.
#[allow(clippy::too_many_arguments)]
fn play_table(
    dir: &Path,
    store: SceneStore,
    run: u32,
    scene: Scene,
    inputs: u64,
    speaker: Speaker,
    gm: bool,
    (models, ai): (SceneModels, Option<AiSpeaker>),
    memory_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let watch = Printed {
        dir: dir.to_path_buf(),
        memory_url: memory_url.map(str::to_string),
        run,
        gm,
        thinking: Thinking::naming(&[
            (troupe_scene::table::SPEAKER, "The AI speaker"),
            (troupe_scene::table::GM, "The narrator"),
        ]),
    };
    let mut table = SceneTable::new(store, run, scene, inputs, speaker, Box::new(watch));
    table.models(models, ai);
    table.pause_at(troupe_engine::pause::CrashPause::from_env());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")?;
    let resume = crate::sessions::command(dir, "troupe scene resume");
    match runtime.block_on(table.play())? {
        SceneStop::Quit => println!("Saved; {resume} continues."),
        SceneStop::OutOfInput => {
            println!("(no more input; {resume} continues this scene)");
        }
        SceneStop::Ended => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// `troupe scene undo`: the latest run's last turn taken back, as the table's `/undo` does.
fn undo(dir: &Path) -> anyhow::Result<ExitCode> {
    let _lock = crate::sessions::CampaignLock::take(dir)?;
    let mut store = store(dir)?;
    let run = crate::runs::run_number(&store, dir, None, &GAME)?;
    let undone = crate::sessions::undo_run(&mut store, run, (GAME.name, GAME.starts), |events| {
        let mut scene = Scene::resume(events)?;
        scene.undo().cloned().map_err(|e| match e {
            troupe_scene::Error::NothingToUndo => {
                anyhow::anyhow!("scene run {run} has no turn to take back")
            }
            e => e.into(),
        })
    })?;
    if let troupe_scene::SceneEvent::Undone { from_seq } = undone.event {
        println!(
            "Scene run {run}: the last turn (from event {from_seq}) is taken back; \
             {} plays on from there.",
            crate::sessions::command(dir, "troupe scene resume")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn replay(dir: &Path, run: Option<u32>) -> anyhow::Result<ExitCode> {
    let store = store(dir)?;
    let number = crate::runs::run_number(&store, dir, run, &GAME)?;
    let events = store.events(number)?;
    if events.is_empty() {
        bail!("there is no scene run {number} in this campaign");
    }
    let replayed = troupe_scene::replay(&events)?;
    for env in &replayed.events {
        if let Some(line) = shown(&env.event) {
            println!("{line}");
        }
    }
    if let Some(d) = troupe_engine::replay::first_difference(&events, &replayed.events, &[])? {
        bail!("replay of run {number} differs from its log: {d}");
    }
    println!(
        "Replay of run {number}: {} events, identical to the log.",
        events.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn store(dir: &Path) -> anyhow::Result<SceneStore> {
    SceneStore::open(dir).map_err(anyhow::Error::from)
}

/// The scene runs of a campaign that has played one; nothing is created for one that has not.
fn existing(dir: &Path) -> anyhow::Result<SceneStore> {
    match SceneStore::open_existing(dir)? {
        Some(store) => Ok(store),
        None => bail!(
            "{} has no scene runs yet; {} starts one",
            dir.display(),
            GAME.starts
        ),
    }
}

/// Prints the scene as it is played; keeps an ended scene's changes in the world.
struct Printed {
    dir: PathBuf,
    /// `--memory-url`, for the campaign memory the scene's changes go into.
    memory_url: Option<String>,
    run: u32,
    /// Show the GM's view (everything) after every line.
    gm: bool,
    /// While a model works.
    thinking: Thinking,
}

impl Watch<troupe_scene::State, troupe_scene::Envelope> for Printed {
    fn on_event(&mut self, _state: &troupe_scene::State, env: &troupe_scene::Envelope) {
        if let Some(text) = shown(&env.event) {
            println!("{text}");
        }
    }

    fn paused(&mut self, events: u64) {
        troupe_engine::pause::announce(events);
    }
}

impl CallWatch for Printed {
    fn thinking(&mut self, seat: &str, doing: &str) {
        self.thinking.thinking(seat, doing);
    }
    fn progress(&mut self, seat: &str, progress: &troupe_llm::Progress) {
        self.thinking.progress(seat, progress);
    }
    fn idle(&mut self) {
        self.thinking.idle();
    }
}

impl SceneWatch for Printed {
    fn spoke(&mut self, prompt: &str, line: &str) {
        println!("{prompt}{line}");
    }

    fn after_line(&mut self, state: &troupe_scene::State) {
        if self.gm {
            print!("{}", gm_view(state));
        }
    }

    fn scene_ended(
        &mut self,
        state: &troupe_scene::State,
        deltas: &[troupe_scene::WorldDelta],
    ) -> Result<(), String> {
        write_world(
            &self.dir,
            self.run,
            self.memory_url.as_deref(),
            state,
            deltas,
        )
        .map_err(|e| format!("{e:#}"))
    }
}

/// Keep a scene's changes in the campaign's world knowledge and memory (the scene's own rule,
/// `keep_world`), in the memory this campaign uses, and say where.
fn write_world(
    dir: &Path,
    run: u32,
    memory_url: Option<&str>,
    state: &troupe_scene::State,
    deltas: &[troupe_scene::WorldDelta],
) -> anyhow::Result<()> {
    let campaign = troupe_campaign::CampaignDir::new(dir);
    // The sessions' schema first: the memory lives beside it in campaign.db.
    let sessions = crate::sessions::create_store(dir)?;
    let session = sessions.latest_session()?.map_or(1, |s| s.number);
    let mut memory = crate::graph::open_memory(&campaign, None, memory_url)?;
    let kept = keep_world(&campaign, run, session, state, deltas, &mut memory)?;
    println!(
        "World knowledge: {} and {} in the campaign memory",
        kept.world.display(),
        count(kept.facts, "fact")
    );
    Ok(())
}

/// `troupe serve --scene FILE`: the campaign's open scene table reopened, or a new run of
/// `file` with a link for its speaker, one for its GM and one to watch. The speaker's seat goes
/// to an AI from the start with `--speaker ai` (recorded as the run's first hand-over).
pub fn serve_open(
    dir: &Path,
    file: &Path,
    args: &crate::tables::ServeArgs,
    model_args: &crate::models::ModelArgs,
) -> anyhow::Result<crate::tables::Opened> {
    std::fs::create_dir_all(dir)?;
    let lock = crate::sessions::CampaignLock::take(dir)?;
    let looked_in = match open_table(dir, args)? {
        Found::Open(table, store) => return reopened(dir, store, table, lock, args, model_args),
        Found::Closed(store) => store,
    };
    let def = match load(file)? {
        Ok(def) => def,
        Err(report) => bail!("{report}"),
    };
    let ai_speaks = args.speaker == crate::tables::SpeakerKind::Ai;
    // The models first: a table whose AI has no model is not opened at all.
    let models = served_models_for(dir, ai_speaks, args, model_args, &[])?;
    // The store the table was looked for in is kept; without one it is opened only now, so a
    // table whose models fail leaves no campaign.db behind.
    let mut store = match looked_in {
        Some(store) => store,
        None => store(dir)?,
    };
    let (table, links, title) = open_new(dir, &mut store, def, ai_speaks, args.seed)?;
    let run = served(dir, store, table, models, title, args.memory_url.as_deref());
    Ok(crate::tables::Opened { run, links, lock })
}

/// A new run of the scene `def` in `store`, its table file saved: the table, its links (the
/// speaker's, the GM's and the watcher's) and its title (the scene's id).
fn open_new(
    dir: &Path,
    store: &mut SceneStore,
    def: troupe_scene::SceneDef,
    ai_speaks: bool,
    seed: Option<u64>,
) -> anyhow::Result<(troupe_serve::TableFile, Vec<troupe_serve::Link>, String)> {
    let seed = crate::play::seed_or_now(seed);
    let mut scene = Scene::start(def, seed);
    if ai_speaks {
        scene.hand_over(troupe_scene::table::SPEAKER, false);
    }
    let run = store.begin(
        &scene.state.id,
        &chrono::Utc::now().to_rfc3339(),
        &scene.events,
    )?;
    let actors: Vec<String> = scene
        .state
        .turn_order
        .iter()
        .map(|a| scene.state.name_of(a).to_string())
        .collect();
    let labels = [
        (
            troupe_scene::table::SPEAKER.to_string(),
            format!("Player ({})", actors.join(", ")),
        ),
        (troupe_scene::table::GM.to_string(), GM_LABEL.to_string()),
        ("watch".to_string(), "Watching".to_string()),
    ];
    let (table, links) =
        troupe_serve::new_table(troupe_scene::offer::OFFER.game, run, &labels, None)?;
    troupe_serve::save_table(dir, &table)?;
    println!(
        "Table open for scene {} (run {run}, seed {seed}). Goal: {}",
        scene.state.id, scene.state.goal
    );
    if ai_speaks {
        println!("An AI speaks for the characters; a person can claim the seat from its link.");
    }
    Ok((table, links, scene.state.id))
}

const GM_LABEL: &str = "Game master (the GM's view and commands)";

/// The campaign's open scene table, reopened; None when it has none.
pub fn serve_reopen(
    dir: &Path,
    args: &crate::tables::ServeArgs,
    model_args: &crate::models::ModelArgs,
) -> anyhow::Result<Option<crate::tables::Opened>> {
    let lock = crate::sessions::CampaignLock::take(dir)?;
    match open_table(dir, args)? {
        Found::Open(table, store) => reopened(dir, store, table, lock, args, model_args).map(Some),
        Found::Closed(_) => Ok(None),
    }
}

/// The campaign's open scene table, served again from `store` with the models its log calls
/// for (its links were printed when it opened). The log is read once, here: who holds the
/// speaker's seat, the calls already served and the title all come from it.
fn reopened(
    dir: &Path,
    mut store: SceneStore,
    table: troupe_serve::TableFile,
    lock: crate::sessions::CampaignLock,
    args: &crate::tables::ServeArgs,
    model_args: &crate::models::ModelArgs,
) -> anyhow::Result<crate::tables::Opened> {
    crate::sessions::reopen_mirror_of(&mut store, table.session)?;
    let events = store.events(table.session)?;
    let models = served_models(dir, &events, args, model_args)?;
    let title = title_of(&events);
    let run = served(dir, store, table, models, title, args.memory_url.as_deref());
    Ok(crate::tables::Opened {
        run,
        links: Vec::new(),
        lock,
    })
}

/// A reopened scene's models: as for a new one, with an AI when its log (`events`) says one
/// holds the speaker's seat.
fn served_models(
    dir: &Path,
    events: &[troupe_scene::Envelope],
    args: &crate::tables::ServeArgs,
    model_args: &crate::models::ModelArgs,
) -> anyhow::Result<(SceneModels, Option<AiSpeaker>)> {
    let ai_holds = troupe_scene::held_by_person(events, troupe_scene::table::SPEAKER);
    let served: Vec<troupe_llm::CallTag> = events
        .iter()
        .filter_map(|e| match &e.event {
            troupe_scene::SceneEvent::ModelCalled { agent, purpose, .. } => {
                Some(troupe_llm::CallTag::new(agent.clone(), purpose.clone()))
            }
            _ => None,
        })
        .collect();
    served_models_for(dir, ai_holds == Some(false), args, model_args, &served)
}

/// A served scene's planner and polish, from `--scene-planner` and `--polish`, and the AI the
/// speaker's seat can be handed to: there is one when an AI speaks now (`ai_speaks`) or a model
/// is named (the embedded model is not loaded for a seat a person holds).
fn served_models_for(
    dir: &Path,
    ai_speaks: bool,
    args: &crate::tables::ServeArgs,
    model_args: &crate::models::ModelArgs,
    served: &[troupe_llm::CallTag],
) -> anyhow::Result<(SceneModels, Option<AiSpeaker>)> {
    let on_call = ai_speaks || model_named(model_args);
    let planner_args = PlannerArgs {
        planner: args.scene_planner,
        polish: args.polish,
        player: if on_call {
            PlayerKind::Ai
        } else {
            PlayerKind::Human
        },
        ai_lines: args.ai_lines,
        model: model_args.clone(),
    };
    models(&planner_args, dir, served)
}

/// Whether a model is named for this process: a provider, recorded replies, or a hosted
/// model's key in the environment.
fn model_named(m: &crate::models::ModelArgs) -> bool {
    m.provider.is_some()
        || m.replay.is_some()
        || ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
}

/// What the campaign's table file says of a served scene.
enum Found {
    /// A scene table whose run has not ended, and the store its run was looked up in (kept:
    /// the table plays from it).
    Open(troupe_serve::TableFile, SceneStore),
    /// No open scene table; the store, when one was opened to look.
    Closed(Option<SceneStore>),
}

/// The table file, when it is a scene's whose run has not ended. A table opened before scenes
/// had a GM link gets one when `--new-link gm` asks for it (the key is set with the new link).
fn open_table(dir: &Path, args: &crate::tables::ServeArgs) -> anyhow::Result<Found> {
    let Some(mut t) = troupe_serve::load_table(dir)? else {
        return Ok(Found::Closed(None));
    };
    if !crate::serve::plays(&t, &troupe_scene::offer::OFFER) {
        return Ok(Found::Closed(None));
    }
    let store = store(dir)?;
    if store.run(t.session)?.is_none_or(|r| r.ended) {
        return Ok(Found::Closed(Some(store)));
    }
    let gm = troupe_scene::table::GM;
    if args.new_link.iter().any(|s| s == gm) && !t.seats.iter().any(|s| s.seat == gm) {
        t.seats.push(troupe_serve::StoredSeat {
            seat: gm.to_string(),
            label: GM_LABEL.to_string(),
            key_sha256: String::new(),
        });
    }
    println!(
        "Reopening the table of scene run {} in {}: the links printed when it opened still work.",
        t.session,
        dir.display()
    );
    Ok(Found::Open(t, store))
}

/// The table's run as served: its game on `store` (the one store the table was opened with),
/// titled with the scene's id (`title`).
fn served(
    dir: &Path,
    store: SceneStore,
    table: troupe_serve::TableFile,
    (models, ai): (SceneModels, Option<AiSpeaker>),
    title: String,
    memory_url: Option<&str>,
) -> troupe_serve::TableRun {
    let run = table.session;
    let gm = table
        .seats
        .iter()
        .any(|s| s.seat == troupe_scene::table::GM);
    let (world_dir, memory_url) = (dir.to_path_buf(), memory_url.map(str::to_string));
    let game = Box::new(troupe_scene::table::online::SceneGame {
        store,
        run,
        models,
        ai,
        gm,
        keep_world: Box::new(move |state, deltas| {
            write_world(&world_dir, run, memory_url.as_deref(), state, deltas)
                .map_err(|e| format!("{e:#}"))
        }),
    });
    troupe_serve::TableRun {
        dir: dir.to_path_buf(),
        title: format!("Scene: {title}"),
        table,
        game,
        on_end: crate::tables::on_end(dir),
    }
}

/// The scene's id, from its log (none when the log does not fold).
fn title_of(events: &[troupe_scene::Envelope]) -> String {
    troupe_scene::fold(events).map_or_else(|_| String::new(), |s| s.id)
}
