//! `troupe scene`: seed 004's scene engine at the terminal. The player types what their
//! character does; the rules planner picks one tool from the menu; the engine validates,
//! executes and applies it; the narrator tells what happened. Every event is committed to the
//! campaign's `campaign.db` (table `scene_events`) before it is shown, so a killed run resumes
//! exactly where it stopped.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use troupe_engine::SceneStore;
use troupe_scene::planner::plan;
use troupe_scene::view::{character_view, gm_view};
use troupe_scene::{Caller, Effect, Scene, SceneEvent, ToolCall, Truth, World};

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
        /// The player's script: lines already played are skipped
        #[arg(long)]
        player_script: Option<PathBuf>,
        #[arg(long)]
        gm_view: bool,
        #[command(flatten)]
        planner: PlannerArgs,
    },
    /// Re-run the latest scene run (or --run N) from its log and check every event comes out
    /// byte for byte the same; prints its narration
    Replay {
        #[arg(long)]
        run: Option<u32>,
    },
}

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PlannerKind {
    Rules,
    Model,
}

/// The planner in use: the rules, or a model behind the gateway (on its own small runtime,
/// since the scene loop is synchronous).
struct Planner {
    kind: PlannerKind,
    polish: bool,
    /// With --player ai: who the AI player is, and how many lines it may still say.
    ai: Option<AiPlayer>,
    /// The model, when the planner or the polish needs one.
    link: Option<ModelLink>,
}

struct ModelLink {
    gateway: troupe_llm::Gateway,
    runtime: tokio::runtime::Runtime,
    /// Calls made and not yet in the scene's log: (agent, purpose, the gateway's attempts).
    calls: std::cell::RefCell<Vec<(String, String, Vec<serde_json::Value>)>>,
}

impl ModelLink {
    /// One call; its attempts are kept for the log (see [`Table::log_model_calls`]), failed
    /// ones included.
    fn ask(&self, req: &troupe_llm::ChatRequest) -> anyhow::Result<troupe_llm::GatewayReply> {
        let mut attempts = Vec::new();
        let reply = self.runtime.block_on(self.gateway.call(req, &mut |a| {
            attempts.push(serde_json::to_value(&a).unwrap_or_default());
        }));
        self.calls
            .borrow_mut()
            .push((req.tag.agent.clone(), req.tag.purpose.clone(), attempts));
        reply.map_err(|e| anyhow::anyhow!("the model failed: {e}"))
    }
}

impl Planner {
    fn new(args: &PlannerArgs, dir: &Path) -> anyhow::Result<Planner> {
        let ai = args.player == PlayerKind::Ai;
        let link = if args.planner == PlannerKind::Model || args.polish || ai {
            Some(ModelLink::new(args, dir)?)
        } else {
            None
        };
        Ok(Planner {
            kind: args.planner,
            polish: args.polish,
            ai: ai.then(|| AiPlayer::from_campaign(dir, args.ai_lines)),
            link,
        })
    }
}

/// The AI at the player's seat: a name and a goal from the campaign file (or plain defaults).
struct AiPlayer {
    /// The campaign's player's name, when there is one.
    name: Option<String>,
    goal: String,
    lines_left: u32,
}

impl AiPlayer {
    fn from_campaign(dir: &Path, lines: u32) -> AiPlayer {
        let seat = crate::sessions::campaign_file(None, Some(dir))
            .ok()
            .and_then(|(file, _)| troupe_campaign::load(&file).ok())
            .and_then(|c| c.seats.into_iter().next());
        AiPlayer {
            name: seat.as_ref().map(|s| s.player.name.clone()),
            goal: seat.map_or_else(
                || "play the character well and move the scene on".to_string(),
                |s| s.player.player_goal,
            ),
            lines_left: lines,
        }
    }
}

impl ModelLink {
    fn new(args: &PlannerArgs, dir: &Path) -> anyhow::Result<ModelLink> {
        let model = crate::models::choose(&args.model, None, dir)?;
        let gateway = troupe_llm::Gateway::new(
            model,
            troupe_llm::RetryPolicy::default(),
            crate::play::sleeper(),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("could not start the async runtime")?;
        Ok(ModelLink {
            gateway,
            runtime,
            calls: std::cell::RefCell::default(),
        })
    }
}

impl Planner {
    /// The AI player's next line, or `None` when it has said all it may.
    fn ai_line(
        &mut self,
        state: &troupe_scene::State,
        last: &str,
    ) -> anyhow::Result<Option<String>> {
        let (Some(ai), Some(link)) = (self.ai.as_mut(), self.link.as_ref()) else {
            return Ok(None);
        };
        if ai.lines_left == 0 {
            return Ok(None);
        }
        ai.lines_left -= 1;
        use troupe_llm::{CallTag, ChatRequest, Message};
        let actor = state.current_actor();
        let who = match &ai.name {
            Some(name) => format!("You are {name}, a player"),
            None => "You are a player".to_string(),
        };
        let system = format!(
            "{who} at a tabletop role-playing game, speaking for {}. Your goal: {}. The scene's \
             goal: {}. Say in one short sentence what your character tries next (move, talk, \
             attack, use an item, sneak, look). State what you try, never what happens.",
            state.name_of(actor),
            ai.goal,
            state.goal
        );
        let user = format!("{}\nLast: {last}", character_view(state, actor));
        let mut req = ChatRequest::new(
            CallTag::new(actor, "scene_player"),
            vec![Message::system(system), Message::user(user)],
        );
        req.max_tokens = 80;
        let reply = link.ask(&req)?;
        let line = reply.content.lines().next().unwrap_or("look around").trim();
        Ok(Some(line.to_string()))
    }

    /// The model's rewrite of a narration, if polishing is on.
    fn polish(
        &self,
        state: &troupe_scene::State,
        narration: &str,
    ) -> anyhow::Result<Option<(String, String)>> {
        let Some(link) = self.link.as_ref().filter(|_| self.polish) else {
            return Ok(None);
        };
        use troupe_llm::{CallTag, ChatRequest, Message};
        let system = format!(
            "Rewrite the narration of a tabletop scene in 1 to 3 sentences, tone: {}. Keep every \
             fact; add no names, numbers or events. Reply with the narration only.",
            state.tone.join(", ")
        );
        let mut req = ChatRequest::new(
            CallTag::new(state.current_actor(), "scene_polish"),
            vec![Message::system(system), Message::user(narration)],
        );
        req.temperature = 0.3;
        let reply = link.ask(&req)?;
        Ok(Some((link.gateway.model_name(), reply.content)))
    }

    /// One call for the actor's words, and the model's reply when a model chose it.
    fn plan(
        &self,
        state: &troupe_scene::State,
        actor: &str,
        text: &str,
    ) -> anyhow::Result<(ToolCall, Option<(String, serde_json::Value)>)> {
        let link = match (&self.link, self.kind) {
            (Some(link), PlannerKind::Model) => link,
            _ => return Ok((plan(state, actor, text), None)),
        };
        use troupe_llm::{CallTag, ChatRequest, Message, ResponseSchema};
        let ask = troupe_scene::planner::model_ask(state, actor, text);
        let mut req = ChatRequest::new(
            CallTag::new(actor, "scene_plan"),
            vec![Message::system(ask.system), Message::user(ask.user)],
        );
        req.schema = Some(ResponseSchema {
            name: "scene_tool_call".into(),
            schema: ask.schema,
        });
        req.temperature = 0.0;
        let reply = link.ask(&req)?;
        let json = match reply.json {
            Some(json) => json,
            None => serde_json::from_str(&reply.content).unwrap_or_default(),
        };
        let call = troupe_scene::planner::read_reply(state, actor, &json);
        Ok((call, Some((link.gateway.model_name(), json))))
    }
}

/// Run a `troupe scene` command; `dir` is the campaign directory if one was given.
pub fn run(dir: Option<&Path>, command: SceneCommand) -> anyhow::Result<ExitCode> {
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
            let planner = Planner::new(&planner, &dir)?;
            play(
                &dir,
                &file,
                player_script.as_deref(),
                seed,
                gm_view,
                planner,
            )
        }
        SceneCommand::Resume {
            player_script,
            gm_view,
            planner,
        } => {
            let dir = dir_or_here(dir);
            let planner = Planner::new(&planner, &dir)?;
            resume(&dir, player_script.as_deref(), gm_view, planner)
        }
        SceneCommand::Replay { run } => replay(&dir_or_here(dir), run),
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
            "{}\n{} problem{} in {}",
            lines.join("\n"),
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            file.display()
        )
    }))
}

fn check(file: &Path) -> anyhow::Result<ExitCode> {
    match load(file)? {
        Ok(def) => {
            println!(
                "{}: OK — scene {}, {} zones, {} entities, {} clocks",
                file.display(),
                def.id,
                def.zones.len(),
                def.entities.len(),
                def.clocks.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(report) => {
            eprintln!("{report}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Where the player's lines come from: the terminal, or a script (with lines already played
/// skipped on resume).
enum Input {
    Terminal,
    Script(std::vec::IntoIter<String>),
}

impl Input {
    fn open(script: Option<&Path>, skip: u64) -> anyhow::Result<Input> {
        let Some(path) = script else {
            return Ok(Input::Terminal);
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("could not read the player script {}", path.display()))?;
        let lines: Vec<String> = serde_saphyr::from_str(&text).with_context(|| {
            format!(
                "{}: a player script is a YAML list of lines",
                path.display()
            )
        })?;
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        Ok(Input::Script(
            lines.into_iter().skip(skip).collect::<Vec<_>>().into_iter(),
        ))
    }

    fn next(&mut self, prompt: &str) -> anyhow::Result<Option<String>> {
        match self {
            Input::Script(lines) => Ok(lines.next().inspect(|l| println!("{prompt}{l}"))),
            Input::Terminal => {
                print!("{prompt}");
                std::io::stdout().flush()?;
                let mut line = String::new();
                let n = std::io::stdin()
                    .lock()
                    .read_line(&mut line)
                    .context("could not read the terminal")?;
                Ok((n > 0).then(|| line.trim().to_string()))
            }
        }
    }
}

fn play(
    dir: &Path,
    file: &Path,
    script: Option<&Path>,
    seed: Option<u64>,
    gm: bool,
    planner: Planner,
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
    let mut store = store(dir)?;
    let run = store
        .begin(&def.id, &chrono::Utc::now().to_rfc3339())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let scene = Scene::start(def, seed);
    store
        .append(run, &scene.events, 0)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!(
        "Scene {} (run {run}, seed {seed}). Goal: {}",
        scene.state.id, scene.state.goal
    );
    println!("Type what your character does; /state, /undo, /end, /quit, /help.");
    let mut table = Table {
        dir: dir.to_path_buf(),
        store,
        run,
        scene,
        inputs: 0,
        gm,
        planner,
    };
    table.play(Input::open(script, 0)?)
}

fn resume(
    dir: &Path,
    script: Option<&Path>,
    gm: bool,
    planner: Planner,
) -> anyhow::Result<ExitCode> {
    let store = store(dir)?;
    let Some(latest) = store.latest().map_err(|e| anyhow::anyhow!("{e}"))? else {
        bail!("no scene has been played in {}", dir.display());
    };
    if latest.ended {
        bail!(
            "scene run {} has ended; `troupe scene play FILE` starts a new one",
            latest.number
        );
    }
    let events = store
        .events(latest.number)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let scene = Scene::resume(events).map_err(|e| anyhow::anyhow!("{e}"))?;
    println!(
        "Resuming scene {} (run {}) at turn {}, {} line{} already played.",
        scene.state.id,
        latest.number,
        scene.state.turn + 1,
        latest.inputs,
        if latest.inputs == 1 { "" } else { "s" }
    );
    let mut table = Table {
        dir: dir.to_path_buf(),
        store,
        run: latest.number,
        scene,
        inputs: latest.inputs,
        gm,
        planner,
    };
    table.play(Input::open(script, latest.inputs)?)
}

fn replay(dir: &Path, run: Option<u32>) -> anyhow::Result<ExitCode> {
    let store = store(dir)?;
    let number = match run {
        Some(n) => n,
        None => match store.latest().map_err(|e| anyhow::anyhow!("{e}"))? {
            Some(r) => r.number,
            None => bail!("no scene has been played in {}", dir.display()),
        },
    };
    let events = store.events(number).map_err(|e| anyhow::anyhow!("{e}"))?;
    if events.is_empty() {
        bail!("there is no scene run {number} in this campaign");
    }
    let replayed = troupe_scene::replay(&events).map_err(|e| anyhow::anyhow!("{e}"))?;
    for env in &replayed.events {
        if let Some(line) = shown(&env.event) {
            println!("{line}");
        }
    }
    let same = serde_json::to_string(&replayed.events)? == serde_json::to_string(&events)?;
    if !same {
        bail!("replay of run {number} differs from its log");
    }
    println!(
        "Replay of run {number}: {} events, identical to the log.",
        events.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn store(dir: &Path) -> anyhow::Result<SceneStore> {
    SceneStore::open(dir).map_err(|e| anyhow::anyhow!("{e}"))
}

/// What the table sees of an event.
fn shown(event: &SceneEvent) -> Option<String> {
    match event {
        SceneEvent::ToolApplied {
            call, narration, ..
        } => Some(format!("[{}] {narration}", call.name())),
        SceneEvent::Rejected { call, reason, .. } => {
            Some(format!("[{}] refused: {reason}", call.name()))
        }
        SceneEvent::Undone { from_seq } => Some(format!("(undone: events from {from_seq} on)")),
        SceneEvent::Noted { card, text } => Some(format!("(noted on {card}: {text})")),
        SceneEvent::TruthChanged {
            card,
            index,
            from,
            to,
        } => Some(format!(
            "({card} fact {index}: {} → {})",
            from.as_str(),
            to.as_str()
        )),
        SceneEvent::SceneEnded { deltas } => Some(match deltas.len() {
            0 => "The scene ends. Nothing changes in the world.".to_string(),
            1 => "The scene ends. 1 change goes to the world.".to_string(),
            n => format!("The scene ends. {n} changes go to the world."),
        }),
        SceneEvent::NarrationPolished {
            text,
            refused: None,
            ..
        } => Some(format!("[polished] {text}")),
        SceneEvent::NarrationPolished {
            refused: Some(why), ..
        } => Some(format!("(the model's rewrite was not used: {why})")),
        SceneEvent::SceneStarted { .. }
        | SceneEvent::PlannerReplied { .. }
        | SceneEvent::ModelCalled { .. } => None,
    }
}

/// A scene at the table: the scene, where it is saved and how many lines it has consumed.
struct Table {
    dir: PathBuf,
    store: SceneStore,
    run: u32,
    scene: Scene,
    inputs: u64,
    gm: bool,
    planner: Planner,
}

const HELP: &str = "Say what your character does (\"go to the yard\", \"attack the hound\", \
\"talk to Tam about the ledger\", \"use the tonic\", \"sneak into the storehouse\", \"look\", \
\"status\"). Commands: /state (what you see), /gm (everything), /undo (take back the last \
turn), /effects JSON (GM: apply effect atoms), /note CARD TEXT, /promote CARD N (improv → \
canon), /end (end the scene), /quit (stop; resume later).";

impl Table {
    fn play(&mut self, mut input: Input) -> anyhow::Result<ExitCode> {
        loop {
            if self.scene.state.ended {
                return Ok(ExitCode::SUCCESS);
            }
            let prompt = format!(
                "{}> ",
                self.scene.state.name_of(self.scene.state.current_actor())
            );
            let line = if self.planner.ai.is_some() {
                let last = self.last_narration();
                let line = self.planner.ai_line(&self.scene.state, &last)?;
                if let Some(l) = &line {
                    println!("{prompt}{l}");
                }
                line
            } else {
                input.next(&prompt)?
            };
            let Some(line) = line else {
                println!("(no more input; `troupe scene resume` continues this scene)");
                return Ok(ExitCode::SUCCESS);
            };
            self.inputs += 1;
            if line.trim() == "/quit" {
                self.save_inputs()?;
                println!("Saved; `troupe scene resume` continues.");
                return Ok(ExitCode::SUCCESS);
            }
            self.line(line.trim())?;
        }
    }

    /// One line of input: a read-only command, a command that appends an event, or words
    /// for the planner.
    fn line(&mut self, line: &str) -> anyhow::Result<()> {
        let before = self.scene.events.len();
        // The AI player's call that wrote this line comes first.
        self.log_model_calls();
        let state = &self.scene.state;
        match line
            .split_once(' ')
            .map_or((line, ""), |(c, rest)| (c, rest.trim()))
        {
            ("", _) => {}
            ("/help", _) => println!("{HELP}"),
            ("/state", _) => print!("{}", character_view(state, state.current_actor())),
            ("/gm", _) => print!("{}", gm_view(state)),
            ("/undo", _) => {
                if let Err(e) = self.scene.undo() {
                    println!("({e})");
                }
            }
            ("/note", rest) => match rest.split_once(' ') {
                Some((card, text)) => {
                    self.scene.note(card, text.trim());
                }
                None => println!("(usage: /note CARD TEXT)"),
            },
            ("/promote", rest) => self.promote(rest),
            ("/effects", rest) => match serde_json::from_str::<Vec<Effect>>(rest) {
                Ok(effects) => {
                    self.scene
                        .act(line, ToolCall::ApplyEffects { effects }, Caller::Gm);
                }
                Err(e) => println!("(not a list of effects: {e})"),
            },
            ("/end", _) => {
                if let Err(e) = self.scene.end() {
                    println!("({e})");
                }
            }
            _ => {
                let actor = state.current_actor().to_string();
                let (call, reply) = self.planner.plan(state, &actor, line)?;
                self.log_model_calls();
                if let Some((model, reply)) = reply {
                    self.scene.planner_replied(line, &model, reply);
                }
                let applied = matches!(
                    self.scene.act(line, call, Caller::Player).event,
                    SceneEvent::ToolApplied { .. }
                );
                self.polish_last(applied)?;
            }
        }
        self.commit(before)
    }

    /// The latest narration, for the AI player.
    fn last_narration(&self) -> String {
        self.scene
            .events
            .iter()
            .rev()
            .find_map(|e| match &e.event {
                SceneEvent::ToolApplied { narration, .. } => Some(narration.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Offer the last narration to the model for a rewrite (when polishing is on).
    fn polish_last(&mut self, applied: bool) -> anyhow::Result<()> {
        let narration = match self.scene.events.last().map(|e| &e.event) {
            Some(SceneEvent::ToolApplied { narration, .. }) if applied => narration.clone(),
            _ => return Ok(()),
        };
        let polished = self.planner.polish(&self.scene.state, &narration)?;
        self.log_model_calls();
        if let Some((model, text)) = polished {
            self.scene.polish(&model, &text);
        }
        Ok(())
    }

    /// Append the model calls made since the last time to the scene's log.
    fn log_model_calls(&mut self) {
        let Some(link) = &self.planner.link else {
            return;
        };
        for (agent, purpose, attempts) in link.calls.borrow_mut().drain(..) {
            self.scene.model_called(&agent, &purpose, attempts);
        }
    }

    fn promote(&mut self, rest: &str) {
        let parsed = rest
            .split_once(' ')
            .and_then(|(card, n)| n.trim().parse::<usize>().ok().map(|n| (card, n)));
        match parsed {
            Some((card, index)) => {
                if let Err(e) = self.scene.set_truth(card, index, Truth::Canon) {
                    println!("({e})");
                }
            }
            None => println!("(usage: /promote CARD N, N counting facts from 0)"),
        }
    }

    fn save_inputs(&mut self) -> anyhow::Result<()> {
        self.store
            .append(self.run, &[], self.inputs)
            .map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// Save the line's events (and that the line was read) in one transaction, then show them.
    fn commit(&mut self, before: usize) -> anyhow::Result<()> {
        let new = self.scene.events.get(before..).unwrap_or_default().to_vec();
        self.store
            .append(self.run, &new, self.inputs)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let polished: Vec<u64> = new
            .iter()
            .filter_map(|e| match &e.event {
                SceneEvent::NarrationPolished {
                    of, refused: None, ..
                } => Some(*of),
                _ => None,
            })
            .collect();
        for env in &new {
            if polished.contains(&env.seq) {
                continue;
            }
            if let Some(text) = shown(&env.event) {
                println!("{text}");
            }
            if let SceneEvent::SceneEnded { deltas } = &env.event {
                self.write_world(deltas)?;
            }
        }
        if self.gm && !new.is_empty() {
            print!("{}", gm_view(&self.scene.state));
        }
        pause_if_asked(self.scene.events.len());
        Ok(())
    }

    /// Merge the scene's deltas into the campaign's world knowledge (`world.json`).
    fn write_world(&self, deltas: &[troupe_scene::WorldDelta]) -> anyhow::Result<()> {
        let path = self.dir.join("world.json");
        let mut world: World = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{} is not world knowledge", path.display()))?,
            Err(_) => self.scene.state.world.clone(),
        };
        world.merge(deltas);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(&world)?)
            .with_context(|| format!("could not write {}", tmp.display()))?;
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("could not write {}", path.display()))?;
        let n = self.remember(deltas)?;
        println!(
            "World knowledge: {} and {n} fact{} in the campaign memory",
            path.display(),
            if n == 1 { "" } else { "s" }
        );
        Ok(())
    }

    /// The scene's deltas as facts in the campaign memory (`troupe memory query` recalls them),
    /// each with the memory source that carries its truth level: canon as the GM's word,
    /// soft-canon as imported notes, improv as a character's interpretation.
    fn remember(&self, deltas: &[troupe_scene::WorldDelta]) -> anyhow::Result<usize> {
        use troupe_memory::{EntityKind, Episode, GameTime, MemoryType, NewFact, Scope, Source};
        // The sessions' schema first: the memory lives beside it in campaign.db.
        let sessions = crate::sessions::create_store(&self.dir)?;
        let session = sessions
            .latest_session()
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .map_or(1, |s| s.number);
        let mut store = crate::graph::open_memory(&self.dir, None)?;
        let state = &self.scene.state;
        let at = GameTime {
            session,
            turn: state.turn,
            day: None,
        };
        let now = chrono::Utc::now().to_rfc3339();
        let mut episodes = Vec::new();
        let mut facts = Vec::new();
        for (i, d) in deltas.iter().enumerate() {
            let name = state
                .world
                .card(&d.card)
                .map_or_else(|| state.name_of(&d.card).to_string(), |c| c.name.clone());
            let text = format!("{name} {}", d.text);
            let id = format!("scene-{}-run-{}-{i}", state.id, self.run);
            episodes.push(Episode {
                id: id.clone(),
                session,
                turn: state.turn,
                day: None,
                timestamp: now.clone(),
                speaker: "gm".into(),
                text: text.clone(),
                scope: Scope::Party,
            });
            facts.push(NewFact {
                text,
                scope: Scope::Party,
                source: match d.truth {
                    Truth::Canon => Source::Gm,
                    Truth::SoftCanon => Source::Import,
                    Truth::Improv => Source::Character,
                },
                memory_type: MemoryType::Semantic,
                importance: 0.6,
                at,
                speaker: "gm".into(),
                episode_ids: vec![id],
                entities: vec![(name, EntityKind::Npc)],
                slot: None,
            });
        }
        store
            .store(&episodes, &facts)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(facts.len())
    }
}

/// For the crash tests: once the log holds this many events, say so and wait to be killed.
fn pause_if_asked(events: usize) {
    let wanted = std::env::var("TROUPE_PAUSE_AFTER_EVENT")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    if wanted.is_some_and(|n| events >= n) {
        eprintln!("troupe: paused after {events} events (TROUPE_PAUSE_AFTER_EVENT)");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}
