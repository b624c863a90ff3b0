//! `troupe bench MODEL…`: generates the bench suite from its templates and the seed (suite 2.0;
//! or plays the fixed 1.0 suite, or a suite file), plays it with each model and the baselines
//! (the scripted good and bad players, and with `--embedded` the embedded model), every
//! session a `troupe play` child as `troupe simulate` plays its runs, then scores each
//! scenario from its log and writes `bench.md`, `bench.json` and `bench.html`. What a score
//! means is troupe-bench's business (docs/bench.md); this module chooses the runs, plays them
//! and shows the result.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, bail};
use troupe_bench::{Bench, ModelResult, SUITE_NAME, Scenario, ScenarioInfo, Suite};
use troupe_campaign::CampaignDir;

use crate::model_spec::ModelSpec;
use crate::simulate::{Outcome, Run};

/// The options of `troupe bench`.
#[derive(Clone, Debug, clap::Args)]
pub struct BenchArgs {
    /// The models to score: PROVIDER:MODEL as for simulate (openai:gpt-4o-mini,
    /// ollama:llama3.2, local or local:FILE.gguf for the embedded model), or replay:DIR for
    /// recorded replies, one file per session: DIR/SCENARIO-N.jsonl
    #[arg(value_name = "MODEL", value_parser = parse_bench_model)]
    pub models: Vec<ModelSpec>,
    /// The directory that receives the runs (one campaign directory per model and scenario),
    /// bench.md and bench.json; it must not hold a bench already
    #[arg(long, value_name = "DIR", default_value = "bench")]
    pub out: PathBuf,
    /// The seed the suite is generated with (2.0) and the dice seed of every session: the same
    /// seed gives the same suite, and with the same replies the same scores. Seed 1 is the
    /// published development seed; report scores on seeds you did not tune on
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The suite to play: 2.0 (generated from its templates with --seed) or 1.0 (the fixed
    /// suite of issue 32)
    #[arg(long, value_name = "VERSION", default_value = "2.0")]
    pub suite_version: String,
    /// Scenarios per family in a generated suite (5 families; 12 gives every score 40+ items)
    #[arg(long, value_name = "N", default_value_t = troupe_bench::generate::PER_FAMILY)]
    pub per_family: usize,
    /// Add the embedded model (`local`) to the baselines of a generated suite
    #[arg(long)]
    pub embedded: bool,
    /// Print the results as JSON instead of the Markdown tables
    #[arg(long)]
    pub json: bool,
    /// A suite file of your own (default: the suite built into troupe, written to OUT/suite)
    #[arg(long, value_name = "SUITE.yaml")]
    pub suite: Option<PathBuf>,
    /// How many sessions to play at once (default: the number of cores)
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Arguments for every `troupe play`, after `--`, e.g. `-- --base-url http://host:8000/v1`
    #[arg(last = true, value_name = "PLAY ARGS")]
    pub play_args: Vec<String>,
}

/// `PROVIDER:MODEL`, or a provider alone for its default model (`local`).
fn parse_bench_model(text: &str) -> Result<ModelSpec, String> {
    if text.trim().eq_ignore_ascii_case("local") {
        return Ok(ModelSpec {
            provider: "local".into(),
            model: String::new(),
        });
    }
    crate::model_spec::parse_model(text)
}

/// The `troupe play` flags of one model for one session of a scenario (from 1).
fn model_flags(m: &ModelSpec, scenario: &str, session: usize) -> Vec<String> {
    if m.provider == "replay" {
        let file = replay_file(m, scenario, session);
        return vec!["--replay".into(), file.display().to_string()];
    }
    let mut flags = vec!["--provider".to_string(), m.provider.clone()];
    if !m.model.is_empty() {
        flags.extend(["--model".to_string(), m.model.clone()]);
    }
    flags
}

fn replay_file(m: &ModelSpec, scenario: &str, session: usize) -> PathBuf {
    Path::new(&m.model).join(format!("{scenario}-{session}.jsonl"))
}

/// A model in the bench: its spec, its name in the results, its directory under `runs/`.
#[derive(Clone, Debug)]
struct Entrant {
    spec: ModelSpec,
    name: String,
    label: String,
}

/// The scripted baselines of a suite that has them (`players/good` and `players/bad` beside
/// its suite file), the embedded model when asked, then the models given.
fn entrants(suite: &Suite, args: &BenchArgs) -> (Vec<Entrant>, Vec<String>) {
    let mut out = Vec::new();
    for who in ["good", "bad"] {
        let dir = suite.dir.join("players").join(who);
        if dir.is_dir() {
            out.push(Entrant {
                spec: ModelSpec {
                    provider: "replay".into(),
                    model: dir.display().to_string(),
                },
                name: format!("scripted:{who}"),
                label: format!("scripted-{who}"),
            });
        }
    }
    let mut given = args.models.clone();
    if args.embedded && !given.iter().any(|m| m.provider == "local") {
        given.insert(
            0,
            ModelSpec {
                provider: "local".into(),
                model: String::new(),
            },
        );
    }
    let mut baselines: Vec<String> = out.iter().map(|e| e.name.clone()).collect();
    if args.embedded {
        baselines.push("local".into());
    }
    for (m, label) in given.iter().zip(labels(&given)) {
        out.push(Entrant {
            name: shown(m),
            spec: m.clone(),
            label,
        });
    }
    (out, baselines)
}

/// A directory name for each model, unique within the bench.
fn labels(models: &[ModelSpec]) -> Vec<String> {
    let mut out: Vec<String> = vec!["scripted-good".into(), "scripted-bad".into()];
    for m in models {
        let name = match m.provider.as_str() {
            "replay" => {
                let dir = Path::new(&m.model).file_name().unwrap_or_default();
                format!("replay-{}", dir.to_string_lossy())
            }
            _ if m.model.is_empty() => m.provider.clone(),
            _ => format!("{}-{}", m.provider, m.model),
        };
        let base = crate::model_spec::slug(&name);
        let mut label = base.clone();
        let mut n = 1;
        while out.contains(&label) {
            n += 1;
            label = format!("{base}-{n}");
        }
        out.push(label);
    }
    out.split_off(2)
}

/// How the model is named in the results: as it was given.
fn shown(m: &ModelSpec) -> String {
    if m.model.is_empty() {
        m.provider.clone()
    } else {
        format!("{}:{}", m.provider, m.model)
    }
}

/// `troupe bench`.
pub fn bench(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    check_play_args(&args.play_args)?;
    let out = &args.out;
    if out.join("bench.json").exists() || out.join("runs").exists() {
        bail!(
            "{} already holds a bench; choose a new --out or remove it",
            out.display()
        );
    }
    let suite = load_suite(args)?;
    let (entrants, baselines) = entrants(&suite, args);
    if entrants.is_empty() {
        bail!("name at least one MODEL to bench (this suite has no scripted baselines)");
    }
    check_models(&suite, args, &entrants)?;
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if jobs == 0 {
        bail!("--jobs must be 1 or more");
    }
    let started = std::time::Instant::now();
    let failed = play_all(&suite, args, &entrants, jobs)?;
    let mut bench = score_all(&suite, args, &entrants, &failed)?;
    bench.baselines = baselines;
    if suite.seed.is_some() {
        bench.analyse();
    }
    write_results(out, &bench)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
    } else {
        print!("{}", troupe_bench::render_markdown(&bench));
        println!("\nResults: {}", out.join("bench.md").display());
    }
    eprintln!(
        "bench: {} models, {} scenarios, {:.1} s wall",
        entrants.len(),
        suite.scenarios.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "{} run{} failed (see stderr.log in their directories): {}",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" },
            failed.join(", ")
        );
        ExitCode::FAILURE
    })
}

/// Arguments the bench sets per run are refused after `--` rather than silently doubled.
fn check_play_args(play_args: &[String]) -> anyhow::Result<()> {
    for flag in [
        "--seed",
        "--campaign",
        "--gm-script",
        "--provider",
        "--model",
        "--replay",
    ] {
        if play_args
            .iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
        {
            bail!(
                "{flag} cannot be passed to the runs: the bench sets it (models are troupe bench's own arguments)"
            );
        }
    }
    Ok(())
}

/// The suite given with --suite, or the built-in one written under OUT/suite: generated from
/// the templates with the seed (2.0), or the fixed 1.0 suite.
fn load_suite(args: &BenchArgs) -> anyhow::Result<Suite> {
    let dir = args.out.join("suite");
    let file = match (&args.suite, args.suite_version.as_str()) {
        (Some(file), _) => file.clone(),
        (None, "1.0") => troupe_bench::suite::write_embedded(&dir)?,
        (None, v) if v == troupe_bench::generate::VERSION => {
            if args.per_family == 0 {
                bail!("--per-family must be 1 or more");
            }
            let scenarios = troupe_bench::generate::generate(args.seed, args.per_family);
            troupe_bench::generate::write_suite(&dir, args.seed, &scenarios)?
        }
        (None, v) => bail!(
            "--suite-version {v} is not one troupe has: 2.0 (generated) or 1.0 (the fixed suite)"
        ),
    };
    Ok(troupe_bench::suite::load(&file)?)
}

/// Every model can be used before anything is played: recorded replies for every session,
/// the others as `troupe simulate` checks them (a key, a server, a GGUF file).
fn check_models(suite: &Suite, args: &BenchArgs, entrants: &[Entrant]) -> anyhow::Result<()> {
    for e in entrants.iter().filter(|e| e.spec.provider == "replay") {
        for s in &suite.scenarios {
            for n in 1..=s.sessions.len() {
                let file = replay_file(&e.spec, &s.id, n);
                if !file.is_file() {
                    bail!(
                        "{} cannot be used: {} is missing (recorded replies for scenario {}, session {n}); nothing was played",
                        e.name,
                        file.display(),
                        s.id
                    );
                }
            }
        }
    }
    let others: Vec<ModelSpec> = entrants
        .iter()
        .filter(|e| e.spec.provider != "replay")
        .map(|e| e.spec.clone())
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    let campaigns: Vec<PathBuf> = suite
        .scenarios
        .iter()
        .map(|s| suite.file(&s.campaign))
        .collect();
    crate::preflight::check_batch(&campaigns, &others, &args.play_args)
}

/// A scenario's campaign directory for one model.
fn run_dir(out: &Path, label: &str, scenario: &Scenario) -> PathBuf {
    out.join("runs").join(label).join(&scenario.id)
}

/// Play every session: first every scenario's session 1 for every model, then the sessions 2
/// (each in its scenario's directory, after its session 1), and so on. A scenario whose
/// session failed plays no later session. Returns the runs that failed.
fn play_all(
    suite: &Suite,
    args: &BenchArgs,
    entrants: &[Entrant],
    jobs: usize,
) -> anyhow::Result<Vec<String>> {
    let exe = std::env::current_exe().context("could not find the troupe binary to run")?;
    let stop = crate::simulate::watch_interrupt();
    let mut failed: Vec<String> = Vec::new();
    let longest = suite.scenarios.iter().map(|s| s.sessions.len()).max();
    for session in 1..=longest.unwrap_or(0) {
        let wave = wave(suite, args, entrants, session, &failed);
        eprintln!(
            "bench: session {session} of {}: {} runs ({} models), {jobs} at a time",
            longest.unwrap_or(0),
            wave.len(),
            entrants.len()
        );
        let outcomes = crate::simulate::run_all(&wave, jobs, &exe, &args.play_args, &stop);
        failed.extend(outcomes.iter().filter(|o| !o.ok()).map(run_name));
        if stop.load(Ordering::SeqCst) {
            bail!("interrupted: the sessions under way were saved; no bench results were written");
        }
    }
    Ok(failed)
}

fn run_name(o: &Outcome) -> String {
    o.run.clone()
}

/// The runs of one session number, over every model and every scenario that has it.
fn wave(
    suite: &Suite,
    args: &BenchArgs,
    entrants: &[Entrant],
    session: usize,
    failed: &[String],
) -> Vec<Run> {
    let mut runs = Vec::new();
    for e in entrants {
        for s in &suite.scenarios {
            let Some(script) = s.sessions.get(session - 1) else {
                continue;
            };
            let earlier_failed = failed
                .iter()
                .any(|f| f.starts_with(&format!("{}/{}/", e.label, s.id)));
            if earlier_failed {
                continue;
            }
            let mut extra = vec![
                "--gm-script".to_string(),
                suite.file(script).display().to_string(),
            ];
            extra.extend(model_flags(&e.spec, &s.id, session));
            runs.push(Run {
                index: runs.len(),
                name: format!("{}/{}/session-{session}", e.label, s.id),
                campaign: suite.file(&s.campaign),
                seed: args.seed,
                model: None,
                dir: run_dir(&args.out, &e.label, s),
                args: extra,
            });
        }
    }
    runs
}

/// Each model's scores, scenario by scenario, from the logs its runs wrote.
fn score_all(
    suite: &Suite,
    args: &BenchArgs,
    entrants: &[Entrant],
    failed: &[String],
) -> anyhow::Result<Bench> {
    let mut models = Vec::new();
    for e in entrants {
        let mut scenarios = Vec::new();
        for s in &suite.scenarios {
            let dir = run_dir(&args.out, &e.label, s);
            let events = if CampaignDir::new(&dir).db().exists() {
                troupe_report::load_campaign(&dir)?
            } else {
                Vec::new()
            };
            let (scores, timing) = troupe_bench::score(s, &events);
            scenarios.push((s.id.clone(), scores, timing));
        }
        let mine: Vec<String> = failed
            .iter()
            .filter(|f| f.starts_with(&format!("{}/", e.label)))
            .cloned()
            .collect();
        models.push(ModelResult::new(
            &e.name,
            &suite.version,
            args.seed,
            scenarios,
            mine,
        ));
    }
    let scenarios = suite
        .scenarios
        .iter()
        .filter(|s| s.family.is_some())
        .map(|s| ScenarioInfo {
            id: s.id.clone(),
            family: s.family.clone().unwrap_or_default(),
            seed: s.seed,
        })
        .collect();
    Ok(Bench {
        suite: SUITE_NAME,
        suite_version: suite.version.clone(),
        seed: args.seed,
        judge: None,
        scenarios,
        baselines: Vec::new(),
        models,
        pairwise: Vec::new(),
    })
}

fn write_results(out: &Path, bench: &Bench) -> anyhow::Result<()> {
    let json = out.join("bench.json");
    std::fs::write(&json, serde_json::to_string_pretty(bench)? + "\n")
        .with_context(|| format!("could not write {}", json.display()))?;
    let md = out.join("bench.md");
    std::fs::write(&md, troupe_bench::render_markdown(bench))
        .with_context(|| format!("could not write {}", md.display()))?;
    if !bench.pairwise.is_empty() || bench.models.iter().any(|m| !m.skills.is_empty()) {
        let html = out.join("bench.html");
        std::fs::write(&html, troupe_bench::render_html(bench))
            .with_context(|| format!("could not write {}", html.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn models_name_their_flags_and_directories() {
        let local = parse_bench_model("local").unwrap();
        assert_eq!(model_flags(&local, "secrets", 1), ["--provider", "local"]);
        let replay = parse_bench_model("replay:rec/good").unwrap();
        assert_eq!(
            model_flags(&replay, "memory", 2),
            ["--replay", "rec/good/memory-2.jsonl"]
        );
        let hosted = parse_bench_model("openai:gpt-4o-mini").unwrap();
        assert_eq!(
            labels(&[local, replay, hosted.clone(), hosted]),
            [
                "local",
                "replay-good",
                "openai-gpt-4o-mini",
                "openai-gpt-4o-mini-2"
            ]
        );
        assert!(parse_bench_model("gpt-4o").is_err());
    }

    #[test]
    fn arguments_the_bench_sets_are_refused_after_the_double_dash() {
        assert!(check_play_args(&["--base-url".into(), "http://x".into()]).is_ok());
        for flag in ["--seed", "--gm-script=x", "--replay", "--model"] {
            assert!(check_play_args(&[flag.to_string()]).is_err(), "{flag}");
        }
    }
}
