//! `troupe simulate`: a batch of all-AI sessions, one `troupe play` child process per run, over
//! the cross product of campaign files, models and seeds, several at a time. Each run plays in
//! its own campaign directory under `--out` (named after its campaign, seed and model), so
//! `troupe stats --campaign OUT` and `troupe report --campaign OUT` read the batch whole and
//! compare the models in a scorecard.
//!
//! Runs are separate processes (the same binary) rather than tasks in this one: a run that
//! crashes, hangs on a provider or exits with an error takes nothing else down, and each keeps
//! its own standard error beside its log.

use std::io::IsTerminal;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use troupe_campaign::CampaignDir;
use troupe_lasers::{Envelope, Event};
use troupe_report::Known;

use crate::model_spec::{ModelSpec, parse_model, slug};
use crate::shard::Shard;

/// The options of `troupe simulate`.
#[derive(Clone, Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SimulateArgs {
    #[command(subcommand)]
    pub command: Option<SimulateCommand>,
    /// The campaign files to play (one or more); every file is played with every seed and model
    #[arg(required = true, value_name = "CAMPAIGN.json")]
    pub campaigns: Vec<PathBuf>,
    /// Dice seeds, one session each: a range `1..=8` (or `1..9`), a list `1,2,5`, or both
    /// (`1..=4,10`)
    #[arg(long, default_value = "1", value_parser = parse_seeds)]
    pub seeds: Seeds,
    /// The players' model as PROVIDER:MODEL (e.g. openai:gpt-4o-mini, ollama:llama3.2,
    /// replay:FILE.jsonl); repeat to compare models. Default: what `troupe play` would choose
    #[arg(long = "model", value_name = "PROVIDER:MODEL", value_parser = parse_model)]
    pub models: Vec<ModelSpec>,
    /// How many sessions to play at once (default: the number of cores)
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// The directory that receives one campaign directory per run and simulate.json
    #[arg(long, value_name = "DIR", required = true)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub shard: crate::shard::ShardArgs,
    #[command(flatten)]
    pub spend: crate::spend::BatchSpendArgs,
    /// Arguments for every `troupe play`, after `--`, passed verbatim: e.g.
    /// `-- --gm-script examples/research.gm.yaml`, `-- --gm ai --turns 20`
    #[arg(last = true, value_name = "PLAY ARGS")]
    pub play_args: Vec<String>,
}

/// What `troupe simulate` does besides playing a batch.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum SimulateCommand {
    /// Gather the --out directories of a sharded batch's shards into one directory that
    /// `troupe stats` and `troupe report` read exactly as one machine's batch
    Merge(crate::shard::MergeArgs),
}

/// The seeds of a batch, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds(pub Vec<u64>);

/// Reads `1..=8`, `1..9`, `1,2,5` and mixtures such as `1..=4,10`.
pub fn parse_seeds(text: &str) -> Result<Seeds, String> {
    let mut seeds = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        seeds.extend(seed_part(part)?);
    }
    if seeds.is_empty() {
        return Err("no seeds: give a range like 1..=8 or a list like 1,2,3".into());
    }
    Ok(Seeds(seeds))
}

fn seed_part(part: &str) -> Result<Vec<u64>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("\"{s}\" is not a seed (a whole number, 0 or more)"))
    };
    let (from, to) = if let Some((a, b)) = part.split_once("..=") {
        (number(a)?, number(b)?)
    } else if let Some((a, b)) = part.split_once("..") {
        let end = number(b)?;
        if end == 0 {
            return Err(format!("the range {part} is empty"));
        }
        (number(a)?, end - 1)
    } else {
        let n = number(part)?;
        (n, n)
    };
    if from > to {
        return Err(format!("the range {part} is empty"));
    }
    if to - from >= 100_000 {
        return Err(format!("the range {part} has more than 100000 seeds"));
    }
    Ok((from..=to).collect())
}

/// One session to play.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    /// The run's place in the whole batch's plan (shards keep it).
    pub index: usize,
    pub name: String,
    pub campaign: PathBuf,
    pub seed: u64,
    pub model: Option<ModelSpec>,
    pub dir: PathBuf,
    /// This run's own `troupe play` arguments, before the batch's (`troupe bench` gives each
    /// run its GM script and its recorded replies).
    pub args: Vec<String>,
}

/// The runs, campaign by campaign, then model by model, then seed by seed. Names are unique:
/// two campaign files with the same stem get `-2`, `-3` … after the second's.
fn plan(args: &SimulateArgs, out: &Path) -> Vec<Run> {
    let models: Vec<Option<ModelSpec>> = if args.models.is_empty() {
        vec![None]
    } else {
        args.models.iter().cloned().map(Some).collect()
    };
    let mut runs: Vec<Run> = Vec::new();
    for campaign in &args.campaigns {
        for model in &models {
            for &seed in &args.seeds.0 {
                let mut name = base_name(campaign, seed, model.as_ref());
                let base = name.clone();
                let mut n = 1;
                while runs.iter().any(|r| r.name == name) {
                    n += 1;
                    name = format!("{base}-{n}");
                }
                runs.push(Run {
                    index: runs.len(),
                    dir: out.join(&name),
                    name,
                    campaign: campaign.clone(),
                    seed,
                    model: model.clone(),
                    args: Vec::new(),
                });
            }
        }
    }
    runs
}

fn base_name(campaign: &Path, seed: u64, model: Option<&ModelSpec>) -> String {
    let stem = campaign.file_stem().unwrap_or_default().to_string_lossy();
    let stem = match slug(&stem) {
        s if s.is_empty() => "campaign".to_string(),
        s => s,
    };
    match model {
        Some(m) => format!("{stem}-seed{seed}-{}", m.label()),
        None => format!("{stem}-seed{seed}"),
    }
}

/// Play arguments that simulate sets itself, per run, are refused rather than silently doubled.
fn check_play_args(args: &SimulateArgs) -> anyhow::Result<()> {
    let given = |flag: &str| {
        args.play_args
            .iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    for (flag, why) in [
        ("--seed", "the seeds come from --seeds"),
        (
            "--campaign",
            "each run plays in its own directory under --out",
        ),
    ] {
        if given(flag) {
            bail!("{flag} cannot be passed to the runs: {why}");
        }
    }
    if !args.models.is_empty()
        && ["--provider", "--model", "--replay"]
            .iter()
            .any(|f| given(f))
    {
        bail!(
            "choose the model with simulate's own --model PROVIDER:MODEL, not with --provider/--model/--replay after --"
        );
    }
    Ok(())
}

/// No run may land in a directory that already holds a campaign: `troupe play` would add a
/// session to it and the batch would mix old and new.
fn check_out(runs: &[Run]) -> anyhow::Result<()> {
    let taken: Vec<&str> = runs
        .iter()
        .filter(|r| {
            let dir = CampaignDir::new(&r.dir);
            dir.db().exists() || dir.logs().exists()
        })
        .map(|r| r.name.as_str())
        .collect();
    if let (Some(first), Some(run)) = (taken.first(), runs.first()) {
        let out = run.dir.parent().unwrap_or(Path::new("."));
        bail!(
            "{} already holds {} of these runs ({first}{}); choose a new --out or remove them",
            out.display(),
            taken.len(),
            if taken.len() > 1 { ", …" } else { "" }
        );
    }
    Ok(())
}

/// The run's directory, with copies of what its campaign file points at (its `prompts/`
/// overrides, a relative `replay_file`), so the run resolves them as the campaign would and
/// can be resumed or replayed on its own. A campaign that cannot be read is left to
/// `troupe play`, which says what is wrong with it in the run's stderr.
fn prepare(run: &Run) -> std::io::Result<()> {
    std::fs::create_dir_all(&run.dir)?;
    let Some(from) = run.campaign.parent() else {
        return Ok(());
    };
    let from = if from.as_os_str().is_empty() {
        Path::new(".")
    } else {
        from
    };
    if let Some(name) = run.campaign.file_name()
        && run.campaign.is_file()
    {
        std::fs::copy(&run.campaign, run.dir.join(name))?;
    }
    let prompts = CampaignDir::new(from).prompts();
    if prompts.is_dir() {
        crate::copy_dir(&prompts, &CampaignDir::new(&run.dir).prompts())?;
    }
    if let Some(file) = replay_file(&run.campaign) {
        let to = run.dir.join(&file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(from.join(&file), to)?;
    }
    Ok(())
}

/// The campaign's own recorded replies, when it names a relative file that exists.
fn replay_file(campaign: &Path) -> Option<PathBuf> {
    let loaded = troupe_campaign::load(campaign).ok()?;
    let file = PathBuf::from(loaded.model?.replay_file?);
    let inside = file
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    let exists = campaign.parent()?.join(&file).is_file();
    (inside && exists).then_some(file)
}

/// How one run ended.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub(crate) struct Outcome {
    /// The run's place in the batch's plan.
    index: usize,
    pub run: String,
    campaign: PathBuf,
    seed: u64,
    /// PROVIDER:MODEL as given to --model, or null for `troupe play`'s own choice.
    model: Option<String>,
    /// `ok`; `phases_failed` (the session ran to its end, but steps of it failed for good: a
    /// model call gave up after its retries, or its answer could not be used, and the GM went
    /// on without it: `phase_failed` events); or `failed` (the session did not run to its end).
    status: String,
    /// How many `phase_failed` events the run's session logged.
    #[serde(default)]
    phases_failed: u32,
    /// The child's exit code (null when it was killed by a signal or never started).
    exit_code: Option<i32>,
    duration_ms: u64,
    dir: PathBuf,
    /// The session's JSONL log, when one was written.
    log: Option<PathBuf>,
    /// The child's standard error.
    stderr: PathBuf,
    /// Why it failed: the last line of its standard error, or why it could not start.
    error: Option<String>,
}

/// A run whose session ran to its end with no step failed for good.
const OK: &str = "ok";
/// A run whose session ran to its end with steps that failed for good (`phase_failed`).
const PHASES_FAILED: &str = "phases_failed";
/// A run whose session did not run to its end.
const FAILED: &str = "failed";

impl Outcome {
    /// The run did not fail: its session ran to its end, every step played or not (what
    /// `troupe bench` asks: it scores the failed phases, `phases_failed`, from the log).
    pub fn ok(&self) -> bool {
        self.finished()
    }

    /// The session ran to its end and every step of it was played: status `ok`.
    pub fn clean(&self) -> bool {
        self.status == OK
    }

    /// The session ran to its end, every step played or not: the run is done, and playing it
    /// again would give the same (a resumed batch skips it).
    pub fn finished(&self) -> bool {
        self.status == OK || self.status == PHASES_FAILED
    }

    /// How a progress line says the run ended.
    fn said(&self) -> String {
        match self.status.as_str() {
            OK => "ok".into(),
            PHASES_FAILED => format!(
                "PARTIAL ({} phase{} failed)",
                self.phases_failed,
                if self.phases_failed == 1 { "" } else { "s" }
            ),
            _ => "FAILED".into(),
        }
    }
}

/// The status of a run from its exit and its log: a run that exited well but logged a
/// `phase_failed` is not `ok`.
fn status_of(exited_well: bool, phases_failed: u32) -> &'static str {
    match (exited_well, phases_failed) {
        (false, _) => FAILED,
        (true, 0) => OK,
        (true, _) => PHASES_FAILED,
    }
}

/// The `phase_failed` events of a session's JSONL log (0 without a log). Only the lines that
/// name the kind are read (a line is one event), each as the game's own event through
/// [`Known`]. A `phase_failed` row whose fields do not read still says a step failed for good,
/// so it counts: the run is not `ok` for a row this build could not read.
fn phases_failed_in(log: Option<&Path>) -> u32 {
    let Some(text) = log.and_then(|l| std::fs::read_to_string(l).ok()) else {
        return 0;
    };
    let failed = text
        .lines()
        .filter(|l| l.contains("\"phase_failed\""))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|row| match Known::<Envelope>::read(row) {
            Known::Event(env) => matches!(env.event, Event::PhaseFailed { .. }),
            Known::Malformed { event_type, .. } => event_type == "phase_failed",
            Known::Unknown { .. } => false,
        })
        .count();
    u32::try_from(failed).unwrap_or(u32::MAX)
}

/// Play one run to the end in a child process.
fn execute(run: &Run, exe: &Path, play_args: &[String], threads: usize) -> Outcome {
    let started = Instant::now();
    let stderr = run.dir.join("stderr.log");
    let result = prepare(run)
        .with_context(|| format!("could not prepare {}", run.dir.display()))
        .and_then(|()| spawn(run, exe, play_args, threads, &stderr));
    let (exit_code, error) = match result {
        Ok(status) if status.success() => (status.code(), None),
        Ok(status) => (
            status.code(),
            Some(last_line(&stderr).unwrap_or_else(|| status.to_string())),
        ),
        Err(e) => {
            // Kept beside the run like a child's own error.
            let _ = std::fs::write(&stderr, format!("error: {e:#}\n"));
            (None, Some(format!("{e:#}")))
        }
    };
    let log = latest_log(&run.dir);
    let phases_failed = phases_failed_in(log.as_deref());
    let mut outcome = Outcome {
        index: run.index,
        run: run.name.clone(),
        campaign: run.campaign.clone(),
        seed: run.seed,
        model: run.model.as_ref().map(ModelSpec::spec),
        status: status_of(error.is_none(), phases_failed).to_string(),
        phases_failed,
        exit_code,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        dir: run.dir.clone(),
        log,
        stderr,
        error,
    };
    if outcome.finished() {
        mark_finished(&mut outcome);
    }
    outcome
}

/// A run that ended well is marked finished, durably, so a shard started again skips it; a run
/// that cannot be marked counts as failed (it would be played again).
fn mark_finished(outcome: &mut Outcome) {
    let marked = serde_json::to_value(&*outcome)
        .map_err(anyhow::Error::from)
        .and_then(|value| crate::shard::mark_done(&outcome.dir, &value));
    if let Err(e) = marked {
        outcome.status = FAILED.to_string();
        outcome.error = Some(format!("{e:#}"));
    }
}

fn spawn(
    run: &Run,
    exe: &Path,
    play_args: &[String],
    threads: usize,
    stderr: &Path,
) -> anyhow::Result<std::process::ExitStatus> {
    let err = std::fs::File::create(stderr)
        .with_context(|| format!("could not create {}", stderr.display()))?;
    let out_path = run.dir.join("stdout.log");
    let out = std::fs::File::create(&out_path)
        .with_context(|| format!("could not create {}", out_path.display()))?;
    let user_threads = std::env::var_os(troupe_host::models::THREADS_VAR).is_some();
    let mut cmd = play_command(run, exe, play_args, (!user_threads).then_some(threads));
    if std::env::var_os(DURABILITY_VAR).is_none() {
        cmd.env(DURABILITY_VAR, CHECKPOINTS);
    }
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .with_context(|| format!("could not start {}", exe.display()))
}

/// How the stores of this process commit: `checkpoints` (set by `troupe simulate` for its
/// runs, unless the user set it) or `every-commit` (the default).
pub const DURABILITY_VAR: &str = "TROUPE_DURABILITY";
const CHECKPOINTS: &str = "checkpoints";

/// A batch's run need not press every event to the disk: a run is flushed whole before it is
/// marked finished (shard::mark_done), and one that was not marked is played again. That saves
/// an fsync per event (about 154 of a replayed session's 161).
pub fn durability_from_env() {
    if std::env::var(DURABILITY_VAR).is_ok_and(|v| v.trim() == CHECKPOINTS) {
        troupe_engine::set_durability(troupe_engine::Durability::Checkpoints);
    }
}

/// The `troupe play` command of one run. `threads`, when given, is the run's share of the
/// cores for the embedded model (None when the user set TROUPE_THREADS, which the child
/// inherits): llama.cpp's threads spin while they wait for each other, so two runs with a
/// thread per core each on the same cores run far slower than one.
fn play_command(run: &Run, exe: &Path, play_args: &[String], threads: Option<usize>) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("play")
        .arg(&run.campaign)
        .arg("--campaign")
        .arg(&run.dir)
        .arg("--seed")
        .arg(run.seed.to_string());
    if let Some(threads) = threads {
        cmd.env(troupe_host::models::THREADS_VAR, threads.to_string());
    }
    if let Some(model) = &run.model {
        cmd.args(model.play_flags());
    } else if let Some(file) = campaign_replay(run, play_args) {
        cmd.arg("--replay").arg(file);
    }
    cmd.args(&run.args).args(play_args);
    cmd
}

/// The campaign's own recorded replies, named by their original path, when nothing else
/// chooses the model: so every run records the same model (`replay:examples/party.replay.jsonl`)
/// and the scorecard puts them in one row, not one per run directory's copy.
fn campaign_replay(run: &Run, play_args: &[String]) -> Option<PathBuf> {
    let chosen = run.args.iter().chain(play_args).any(|a| {
        ["--provider", "--model", "--replay"]
            .iter()
            .any(|f| a == f || a.starts_with(&format!("{f}=")))
    });
    let file = replay_file(&run.campaign).filter(|_| !chosen)?;
    Some(run.campaign.parent()?.join(file))
}

fn last_line(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    Some(line.trim().to_string())
}

/// The newest `logs/session-N.jsonl` of a run's directory.
fn latest_log(dir: &Path) -> Option<PathBuf> {
    let dir = CampaignDir::new(dir);
    let latest = dir.logged_sessions().into_iter().max()?;
    Some(dir.session_log(latest))
}

/// Progress on standard error: a bar on a terminal, a plain line per finished run elsewhere.
enum Progress {
    Bar(ProgressBar),
    Lines { done: usize, total: usize },
}

impl Progress {
    fn new(total: usize) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress::Lines { done: 0, total };
        }
        let bar = ProgressBar::new(total as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30.cyan/blue} {pos}/{len} sessions  {elapsed} (eta {eta})  {msg}",
        ) {
            bar.set_style(style);
        }
        Progress::Bar(bar)
    }

    fn finished(&mut self, o: &Outcome) {
        let what = format!(
            "{} {} in {:.1} s",
            o.run,
            o.said(),
            o.duration_ms as f64 / 1000.0
        );
        match self {
            Progress::Bar(bar) => {
                if !o.clean() {
                    bar.println(&what);
                }
                bar.set_message(what);
                bar.inc(1);
            }
            Progress::Lines { done, total } => {
                *done += 1;
                eprintln!("[{done}/{total}] {what}");
            }
        }
    }

    fn close(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// Set at Ctrl-C. The signal reaches the runs under way too (one process group): each ends its
/// session, saved, as `troupe play` does; simulate starts no new run and still writes its
/// summary. Listening replaces the default of dying at once.
pub(crate) fn watch_interrupt() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let listen = move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
                eprintln!(
                    "\nInterrupted: the sessions under way end and are saved; no new run starts."
                );
            }
        });
    };
    // Without the listener Ctrl-C still works: it just ends simulate without its summary.
    let _ = std::thread::Builder::new()
        .name("ctrl-c".into())
        .spawn(listen);
    stop
}

/// Play every run, `jobs` at a time, until `stop`; outcomes of the runs that were started come
/// back in the runs' order.
pub(crate) fn run_all(
    runs: &[Run],
    jobs: usize,
    exe: &Path,
    play_args: &[String],
    stop: &AtomicBool,
) -> Vec<Outcome> {
    let threads = threads_per_run(jobs.clamp(1, runs.len().max(1)));
    let next = AtomicUsize::new(0);
    let (send, receive) = mpsc::channel::<(usize, Outcome)>();
    let mut progress = Progress::new(runs.len());
    let mut outcomes: Vec<Option<Outcome>> = vec![None; runs.len()];
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, runs.len().max(1)) {
            let send = send.clone();
            let next = &next;
            scope.spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(run) = runs.get(i) else { return };
                    if send
                        .send((i, execute(run, exe, play_args, threads)))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
        drop(send);
        for (i, outcome) in receive {
            progress.finished(&outcome);
            outcomes[i] = Some(outcome);
        }
    });
    progress.close();
    outcomes.into_iter().flatten().collect()
}

/// Each of `jobs` runs at once gets an equal share of the cores (at least one thread).
fn threads_per_run(jobs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    share_of_cores(cores, jobs)
}

fn share_of_cores(cores: usize, jobs: usize) -> usize {
    (cores / jobs.max(1)).max(1)
}

/// simulate.json (or a shard's simulate-shard-K-of-N.json): the batch as a whole and every run.
#[derive(Serialize)]
struct Summary<'a> {
    sessions: usize,
    /// Runs whose session ran to its end with every step played.
    ok: usize,
    /// Runs whose session ran to its end with steps that failed for good (`phase_failed`).
    phases_failed: usize,
    /// Runs whose session did not run to its end.
    failed: usize,
    /// Runs never started because simulate was interrupted.
    not_started: Vec<&'a str>,
    /// Runs finished by an earlier start of this batch or shard, skipped this time.
    resumed: usize,
    /// The shard this summary is of (`k` counts from 1), or null for the whole batch.
    shard: Option<serde_json::Value>,
    /// Every run this summary's batch or shard was to play, finished or not.
    planned: Vec<&'a str>,
    jobs: usize,
    wall_ms: u64,
    /// Sessions played this time per second of wall time.
    sessions_per_second: f64,
    play_args: &'a [String],
    runs: &'a [Outcome],
}

struct Batch<'a> {
    planned: &'a [Run],
    todo: &'a [Run],
    shard: Option<&'a Shard>,
    resumed: usize,
}

fn summarize<'a>(
    batch: &Batch<'a>,
    outcomes: &'a [Outcome],
    jobs: usize,
    wall: Duration,
    play_args: &'a [String],
) -> Summary<'a> {
    let ok = outcomes.iter().filter(|o| o.clean()).count();
    let finished = outcomes.iter().filter(|o| o.finished()).count();
    let played = outcomes.len() - batch.resumed;
    Summary {
        sessions: outcomes.len(),
        ok,
        phases_failed: finished - ok,
        failed: outcomes.len() - finished,
        not_started: batch
            .todo
            .iter()
            .filter(|r| !outcomes.iter().any(|o| o.run == r.name))
            .map(|r| r.name.as_str())
            .collect(),
        resumed: batch.resumed,
        shard: batch
            .shard
            .map(|s| serde_json::json!({"k": s.index + 1, "count": s.count, "from": s.from})),
        planned: batch.planned.iter().map(|r| r.name.as_str()).collect(),
        jobs,
        wall_ms: u64::try_from(wall.as_millis()).unwrap_or(u64::MAX),
        sessions_per_second: played as f64 / wall.as_secs_f64().max(1e-9),
        play_args,
        runs: outcomes,
    }
}

fn print_summary(summary: &Summary, json: &Path) {
    let partial = if summary.phases_failed == 0 {
        String::new()
    } else {
        let phases: u32 = summary.runs.iter().map(|o| o.phases_failed).sum();
        format!(
            ", {} with failed phases ({phases} phase{} failed for good)",
            summary.phases_failed,
            if phases == 1 { "" } else { "s" }
        )
    };
    println!(
        "Simulated {} session{} in {:.2} s ({:.2} sessions/s, {} at a time): {} ok{partial}, {} failed",
        summary.sessions,
        if summary.sessions == 1 { "" } else { "s" },
        summary.wall_ms as f64 / 1000.0,
        summary.sessions_per_second,
        summary.jobs,
        summary.ok,
        summary.failed
    );
    if summary.resumed > 0 {
        println!(
            "Resumed: {} run{} finished earlier, skipped",
            summary.resumed,
            if summary.resumed == 1 { "" } else { "s" }
        );
    }
    if !summary.not_started.is_empty() {
        println!(
            "Interrupted: {} run{} not started ({})",
            summary.not_started.len(),
            if summary.not_started.len() == 1 {
                ""
            } else {
                "s"
            },
            summary.not_started.join(", ")
        );
    }
    let width = summary
        .runs
        .iter()
        .map(|o| o.run.chars().count())
        .max()
        .unwrap_or(0);
    for o in summary.runs {
        match &o.error {
            None if !o.clean() => println!(
                "  PARTIAL {:<width$}  {:>6.1} s  {} ({} phase{} failed for good: `troupe stats --campaign {}` shows them)",
                o.run,
                o.duration_ms as f64 / 1000.0,
                o.log.as_deref().unwrap_or(&o.dir).display(),
                o.phases_failed,
                if o.phases_failed == 1 { "" } else { "s" },
                o.dir.display()
            ),
            None => println!(
                "  ok      {:<width$}  {:>6.1} s  {}",
                o.run,
                o.duration_ms as f64 / 1000.0,
                o.log.as_deref().unwrap_or(&o.dir).display()
            ),
            Some(error) => println!(
                "  FAILED  {:<width$}  {:>6.1} s  {} ({error})",
                o.run,
                o.duration_ms as f64 / 1000.0,
                o.stderr.display()
            ),
        }
    }
    println!("Summary: {}", json.display());
}

/// Watches the batch's spend when it has a limit: raises `stop` once it is reached.
fn watch_spend(
    args: &SimulateArgs,
    out: &Path,
    stop: &Arc<AtomicBool>,
) -> (troupe_campaign::Limit, Arc<AtomicBool>, Arc<AtomicBool>) {
    let limit = crate::spend::batch_limit(args.spend.limit(), &args.campaigns);
    let (over, done) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    if !limit.is_none() {
        let (stop, o, d) = (Arc::clone(stop), Arc::clone(&over), Arc::clone(&done));
        crate::spend::watch(out.to_path_buf(), limit, stop, o, d);
    }
    (limit, over, done)
}

/// `troupe simulate`.
pub fn simulate(args: &SimulateArgs) -> anyhow::Result<ExitCode> {
    if let Some(SimulateCommand::Merge(merge)) = &args.command {
        return crate::shard::merge(merge);
    }
    let out = args.out.as_deref().context("--out DIR is required")?;
    check_play_args(args)?;
    let shard = crate::shard::resolve(&args.shard, &|v| std::env::var(v).ok())?;
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if jobs == 0 {
        bail!("--jobs must be 1 or more");
    }
    crate::preflight::check_batch(&args.campaigns, &args.models, &args.play_args)?;
    let planned = shard_of(plan(args, out), shard.as_ref())?;
    let resume = args.shard.resume || shard.is_some();
    let (earlier, todo) = if resume {
        resume_point(&planned)?
    } else {
        check_fresh(out, &planned)?;
        (Vec::new(), planned.clone())
    };
    std::fs::create_dir_all(out).with_context(|| format!("could not create {}", out.display()))?;
    let exe = std::env::current_exe().context("could not find the troupe binary to run")?;
    let stop = watch_interrupt();
    let (limit, over_limit, done) = watch_spend(args, out, &stop);
    let started = Instant::now();
    let mut outcomes = earlier;
    let resumed = outcomes.len();
    outcomes.extend(run_all(&todo, jobs, &exe, &args.play_args, &stop));
    done.store(true, Ordering::SeqCst);
    outcomes.sort_by_key(|o| o.index);
    let batch = Batch {
        planned: &planned,
        todo: &todo,
        shard: shard.as_ref(),
        resumed,
    };
    let summary = summarize(&batch, &outcomes, jobs, started.elapsed(), &args.play_args);
    let json = out.join(
        shard
            .as_ref()
            .map_or_else(|| "simulate.json".into(), Shard::summary_name),
    );
    std::fs::write(&json, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("could not write {}", json.display()))?;
    print_summary(&summary, &json);
    if over_limit.load(Ordering::SeqCst) {
        let spent = crate::spend::spent(out);
        println!("{}", crate::spend::stopped_message(&limit, spent));
        return Ok(ExitCode::from(troupe_host::SPEND_LIMIT_EXIT));
    }
    Ok(if stop.load(Ordering::SeqCst) {
        ExitCode::from(130)
    } else if summary.failed == 0 && summary.phases_failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The runs of one shard (all of them without one). A shard with no run is a mistake in N.
fn shard_of(runs: Vec<Run>, shard: Option<&Shard>) -> anyhow::Result<Vec<Run>> {
    let Some(shard) = shard else {
        return Ok(runs);
    };
    let total = runs.len();
    let mine: Vec<Run> = runs.into_iter().filter(|r| shard.owns(r.index)).collect();
    if mine.is_empty() {
        bail!(
            "shard {} ({}) has no run: the batch has {total} run{}, so use at most {total} shards",
            shard.label(),
            shard.from,
            if total == 1 { "" } else { "s" }
        );
    }
    Ok(mine)
}

/// A new batch must not land on an old one.
fn check_fresh(out: &Path, runs: &[Run]) -> anyhow::Result<()> {
    if out.join("simulate.json").exists() {
        bail!(
            "{} already holds a batch (simulate.json); choose a new --out, remove it, or pass --resume to finish it",
            out.display()
        );
    }
    check_out(runs)
}

/// Resuming: the runs finished earlier (their recorded outcomes) and the runs to play, whose
/// unfinished attempts are cleared so no session is counted twice.
fn resume_point(runs: &[Run]) -> anyhow::Result<(Vec<Outcome>, Vec<Run>)> {
    let mut done = Vec::new();
    let mut todo = Vec::new();
    for run in runs {
        let recorded = crate::shard::finished(&run.dir)
            .and_then(|v| serde_json::from_value::<Outcome>(v).ok());
        match recorded {
            Some(o) if o.finished() => {
                if o.seed != run.seed || o.model != run.model.as_ref().map(ModelSpec::spec) {
                    bail!(
                        "{} finished as a different run (seed {}, model {}); choose a new --out",
                        run.dir.display(),
                        o.seed,
                        o.model.as_deref().unwrap_or("default")
                    );
                }
                done.push(o);
            }
            _ => {
                crate::shard::clear_unfinished(&run.dir)?;
                todo.push(run.clone());
            }
        }
    }
    Ok((done, todo))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn seeds_read_ranges_lists_and_mixtures() {
        assert_eq!(parse_seeds("1..=4").unwrap().0, [1, 2, 3, 4]);
        assert_eq!(parse_seeds("1..4").unwrap().0, [1, 2, 3]);
        assert_eq!(parse_seeds("7").unwrap().0, [7]);
        assert_eq!(parse_seeds("1, 3,5").unwrap().0, [1, 3, 5]);
        assert_eq!(parse_seeds("1..=2,10").unwrap().0, [1, 2, 10]);
        for bad in ["", "x", "5..=2", "3..3", "0..0", "1..=200000", "-1"] {
            assert!(parse_seeds(bad).is_err(), "{bad:?} should be refused");
        }
    }

    /// A recorded session's log with steps that failed: a `phase_failed` counts, and so does
    /// one whose fields do not read (it still says a step failed for good); another kind whose
    /// field holds the word, known or a newer troupe's, does not.
    #[test]
    fn the_failed_steps_are_read_from_the_log_as_its_events() {
        let log: Vec<serde_json::Value> = include_str!("../../fuzz/data/demo.session-1.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let at = |fields: serde_json::Value| {
            let mut row = log[5].clone();
            for (k, v) in fields.as_object().unwrap() {
                row[k] = v.clone();
            }
            row
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("session-1.jsonl");
        let write = |rows: &[serde_json::Value]| {
            let lines: Vec<String> = rows.iter().map(ToString::to_string).collect();
            std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        };
        write(&log);
        assert_eq!(phases_failed_in(Some(&file)), 0);
        let mut failed = log.clone();
        failed.extend([
            at(
                serde_json::json!({"event_type": "phase_failed", "agent": "alex",
                "error": "the model gave up", "failures": 2}),
            ),
            at(
                serde_json::json!({"event_type": "phase_failed", "agent": "alex",
                "failures": "two"}),
            ),
            at(serde_json::json!({"event_type": "session_ended", "reason": "phase_failed"})),
            at(serde_json::json!({"event_type": "weather_changed", "after": "phase_failed"})),
        ]);
        write(&failed);
        assert_eq!(phases_failed_in(Some(&file)), 2);
        assert_eq!(phases_failed_in(None), 0);
    }

    fn plan_in(a: &SimulateArgs) -> Vec<Run> {
        plan(a, Path::new("runs"))
    }

    fn args(campaigns: &[&str], seeds: &str, models: &[&str]) -> SimulateArgs {
        SimulateArgs {
            campaigns: campaigns.iter().map(PathBuf::from).collect(),
            seeds: parse_seeds(seeds).unwrap(),
            models: models.iter().map(|m| parse_model(m).unwrap()).collect(),
            command: None,
            jobs: None,
            out: Some(PathBuf::from("runs")),
            shard: crate::shard::ShardArgs::default(),
            spend: Default::default(),
            play_args: Vec::new(),
        }
    }

    /// What issue 20 measured: two runs with two spinning threads each on two cores run far
    /// slower than one, so each run gets its share, and a user's own TROUPE_THREADS wins.
    #[test]
    fn each_run_gets_its_share_of_the_cores_unless_the_user_chose() {
        assert_eq!(share_of_cores(2, 1), 2);
        assert_eq!(share_of_cores(2, 2), 1);
        assert_eq!(share_of_cores(2, 8), 1);
        assert_eq!(share_of_cores(8, 3), 2);
        let run = &plan_in(&args(&["party.json"], "3", &[]))[0];
        let env = |cmd: &Command| -> Vec<(String, Option<String>)> {
            cmd.get_envs()
                .map(|(k, v)| {
                    let v = v.map(|v| v.to_string_lossy().into_owned());
                    (k.to_string_lossy().into_owned(), v)
                })
                .collect()
        };
        let shared = play_command(run, Path::new("troupe"), &[], Some(1));
        let var = troupe_host::models::THREADS_VAR.to_string();
        assert_eq!(env(&shared), [(var, Some("1".to_string()))]);
        let inherited = play_command(run, Path::new("troupe"), &[], None);
        assert!(env(&inherited).is_empty());
    }

    #[test]
    fn the_plan_is_the_cross_product_with_readable_unique_names() {
        let a = args(
            &["examples/party.json", "other/party.json"],
            "1..=2",
            &["replay:r.jsonl", "ollama:llama3.2"],
        );
        let names: Vec<String> = plan_in(&a).into_iter().map(|r| r.name).collect();
        assert_eq!(names.len(), 8);
        assert_eq!(names[0], "party-seed1-replay-r");
        assert_eq!(names[2], "party-seed1-ollama-llama3-2");
        assert_eq!(names[4], "party-seed1-replay-r-2");
        let plain = plan_in(&args(&["party.json"], "3", &[]));
        assert_eq!(plain[0].name, "party-seed3");
        assert_eq!(plain[0].dir, Path::new("runs/party-seed3"));
    }

    #[test]
    fn play_arguments_simulate_sets_itself_are_refused() {
        let mut a = args(&["party.json"], "1", &["replay:r.jsonl"]);
        a.play_args = vec!["--gm-script".into(), "gm.yaml".into()];
        assert!(check_play_args(&a).is_ok());
        for given in [
            ["--seed", "3"],
            ["--campaign", "x"],
            ["--replay", "r.jsonl"],
        ] {
            a.play_args = given.iter().map(|s| s.to_string()).collect();
            assert!(check_play_args(&a).is_err(), "{given:?}");
        }
        a.play_args = vec!["--seed=4".into()];
        assert!(check_play_args(&a).is_err());
    }
}
