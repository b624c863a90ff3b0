//! One batch on many machines: which runs a shard plays, how a finished run is marked so a
//! shard started again skips it, and `troupe simulate merge`, which gathers the shards' output
//! directories into one batch that reads exactly as one machine's would.
//!
//! The rule: run `i` of the plan (campaign by campaign, model by model, seed by seed, as
//! `troupe simulate` lists them) belongs to shard `i mod N` (shown 1-based as `K/N`). Every shard
//! computes the same plan from the same command line, so none needs to hear from another.

use std::fs::File;
use std::path::{Path, PathBuf};
use troupe_lasers::lines::count;

use anyhow::{Context, bail};
use serde_json::Value;

/// The file that marks a run finished: its outcome, written last and atomically, after the
/// run's store and log are on disk. A directory without it is a run to redo.
pub const DONE_FILE: &str = "run.json";

/// The sharding options of `troupe simulate`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ShardArgs {
    /// Play only shard K of N (1-based, e.g. 2/4) of the batch. Default: from a Slurm job array
    /// (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job
    /// (JOB_COMPLETION_INDEX with --shard-count or TROUPE_SHARD_COUNT). A sharded batch resumes:
    /// runs finished earlier are skipped
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// The number of shards of a Kubernetes Indexed Job (its `completions`); also
    /// TROUPE_SHARD_COUNT
    #[arg(long, value_name = "N")]
    pub shard_count: Option<usize>,
    /// Play into an --out that already holds part of this batch: runs finished there are skipped,
    /// unfinished or failed ones are played again from the start
    #[arg(long)]
    pub resume: bool,
}

/// One shard of a batch: `index` counts from 0, `count` is N.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
    /// Where the spec came from, for messages: `--shard`, `SLURM_ARRAY_TASK_ID` …
    pub from: String,
}

impl Shard {
    /// `K/N`, 1-based, as the user writes it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index + 1, self.count)
    }

    /// Whether run `i` of the plan is this shard's.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count == self.index
    }

    /// The shard's summary file, so shards may share one --out.
    pub fn summary_name(&self) -> String {
        format!("simulate-shard-{}-of-{}.json", self.index + 1, self.count)
    }
}

/// Reads `K/N` with 1 ≤ K ≤ N.
pub fn parse_shard(text: &str) -> Result<Shard, String> {
    let bad = || format!("--shard {text}: expected K/N with 1 ≤ K ≤ N, e.g. 2/4");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let k: usize = k.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || k == 0 || k > n {
        return Err(format!(
            "--shard {text} is out of range: K counts from 1 to N (here 1 to {n})"
        ));
    }
    Ok(Shard {
        index: k - 1,
        count: n,
        from: "--shard".into(),
    })
}

/// The shard to play: `--shard`, else a Slurm job array's task, else a Kubernetes Indexed Job's
/// index; None when nothing shards the batch.
pub fn resolve(
    args: &ShardArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Option<Shard>> {
    if let Some(shard) = &args.shard {
        return Ok(Some(shard.clone()));
    }
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let number = |name: &str| -> anyhow::Result<Option<usize>> {
        var(name)
            .map(|v| {
                v.trim()
                    .parse::<usize>()
                    .with_context(|| format!("{name}={v} is not a whole number"))
            })
            .transpose()
    };
    if let Some(task) = number("SLURM_ARRAY_TASK_ID")? {
        return slurm(task, &number).map(Some);
    }
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let count = match args.shard_count {
            Some(n) => n,
            None => number("TROUPE_SHARD_COUNT")?.context(
                "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but not the number of \
                 shards: pass --shard-count N or set TROUPE_SHARD_COUNT to the Job's completions",
            )?,
        };
        return in_range(index, count, "JOB_COMPLETION_INDEX").map(Some);
    }
    Ok(None)
}

/// A Slurm array task: its index counts from SLURM_ARRAY_TASK_MIN in steps of
/// SLURM_ARRAY_TASK_STEP (`--array=1-8`, `--array=0-6:2`).
fn slurm(
    task: usize,
    number: &dyn Fn(&str) -> anyhow::Result<Option<usize>>,
) -> anyhow::Result<Shard> {
    let count = number("SLURM_ARRAY_TASK_COUNT")?
        .context("SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT; pass --shard K/N")?;
    let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let Some(offset) = task.checked_sub(min).filter(|o| o % step == 0) else {
        bail!(
            "SLURM_ARRAY_TASK_ID={task} is not on the array's grid (SLURM_ARRAY_TASK_MIN={min}, \
             step {step}); use --array=A-B or A-B:S, or pass --shard K/N"
        );
    };
    in_range(offset / step, count, "SLURM_ARRAY_TASK_ID")
}

fn in_range(index: usize, count: usize, from: &str) -> anyhow::Result<Shard> {
    if count == 0 || index >= count {
        bail!(
            "{from} gives shard {} of {count}, out of range: the shards are 1 to {count}",
            index + 1
        );
    }
    Ok(Shard {
        index,
        count,
        from: from.into(),
    })
}

/// The recorded outcome of a finished run, if it finished.
pub fn finished(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join(DONE_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Mark a run finished: its files flushed to disk first, then the outcome written to a
/// temporary file, flushed, and renamed into place, and the directory flushed. A crash at any
/// point leaves either no mark (the run is redone) or a whole one.
pub fn mark_done(dir: &Path, outcome: &Value) -> anyhow::Result<()> {
    sync_tree(dir).with_context(|| format!("could not flush {} to disk", dir.display()))?;
    let tmp = dir.join(format!("{DONE_FILE}.tmp"));
    let text = serde_json::to_string_pretty(outcome)? + "\n";
    std::fs::write(&tmp, text).with_context(|| format!("could not write {}", tmp.display()))?;
    File::open(&tmp)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("could not flush {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(DONE_FILE))
        .with_context(|| format!("could not mark {} finished", dir.display()))?;
    sync_dir(dir).with_context(|| format!("could not flush {}", dir.display()))
}

/// Flush every file under `dir` and the directories themselves.
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            sync_tree(&entry.path())?;
        } else {
            File::open(entry.path())?.sync_all()?;
        }
    }
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    // Directories open read-only for fsync on Unix; elsewhere there is nothing to flush.
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Before a run is played again: what an unfinished attempt left is removed, so its session
/// is never read beside the new one.
pub fn clear_unfinished(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("could not clear the unfinished run {}", dir.display()))?;
    }
    Ok(())
}

/// `troupe simulate merge`.
#[derive(Clone, Debug, clap::Args)]
pub struct MergeArgs {
    /// The shards' --out directories (a directory shared by several shards counts once)
    #[arg(required = true, value_name = "SHARD_DIR")]
    pub shards: Vec<PathBuf>,
    /// The directory that receives every finished run and simulate.json; `troupe stats` and
    /// `troupe report --campaign DIR` read it as one machine's batch
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// A run found in a shard's directory.
struct Found {
    name: String,
    dir: PathBuf,
    outcome: Value,
}

/// Gather the finished runs of every shard directory into `out`, with one simulate.json.
/// Fails, naming them, when runs the shards planned are missing or a run is in two places.
pub fn merge(args: &MergeArgs) -> anyhow::Result<std::process::ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("could not create {}", args.out.display()))?;
    let out = args.out.canonicalize()?;
    let mut found: Vec<Found> = Vec::new();
    let mut summaries: Vec<(PathBuf, Value)> = Vec::new();
    let mut seen_dirs: Vec<PathBuf> = Vec::new();
    for shard in &args.shards {
        let real = shard
            .canonicalize()
            .with_context(|| format!("the shard directory {} does not exist", shard.display()))?;
        if seen_dirs.contains(&real) {
            continue;
        }
        seen_dirs.push(real.clone());
        summaries.extend(shard_summaries(&real)?);
        collect_runs(&real, &mut found)?;
    }
    if found.is_empty() {
        bail!("no finished run in {}", list(&args.shards));
    }
    found.sort_by_key(|f| (index_of(&f.outcome), f.name.clone()));
    for f in &found {
        if f.dir.parent() != Some(out.as_path()) {
            copy_run(&f.dir, &out.join(&f.name))?;
        }
    }
    let report = completeness(&found, &summaries);
    write_summary(&out, &found, &summaries, &report)?;
    println!(
        "Merged {} from {} into {}",
        count(found.len(), "finished run"),
        list(&args.shards),
        args.out.display()
    );
    for problem in &report {
        println!("  {problem}");
    }
    Ok(if report.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        println!("The merged batch is incomplete: run the missing shards again, then merge again.");
        std::process::ExitCode::FAILURE
    })
}

fn list(dirs: &[PathBuf]) -> String {
    let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    names.join(", ")
}

fn index_of(outcome: &Value) -> u64 {
    outcome
        .get("index")
        .and_then(Value::as_u64)
        .unwrap_or(u64::MAX)
}

/// The summaries a shard directory holds: simulate.json and simulate-shard-K-of-N.json.
fn shard_summaries(dir: &Path) -> anyhow::Result<Vec<(PathBuf, Value)>> {
    let mut out = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("could not read {}", dir.display()))?
    {
        let path = entry?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if name.starts_with("simulate-shard-") && name.ends_with(".json") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("could not read {}", path.display()))?;
            let value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a simulate summary", path.display()))?;
            out.push((path, value));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The finished runs directly under `dir`; a run already found elsewhere is an error.
fn collect_runs(dir: &Path, found: &mut Vec<Found>) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    for run in entries {
        let Some(outcome) = finished(&run) else {
            continue;
        };
        let name = run
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if let Some(other) = found.iter().find(|f| f.name == name) {
            bail!(
                "the run {name} finished in two places: {} and {}; keep one (remove the other) and merge again",
                other.dir.display(),
                run.display()
            );
        }
        found.push(Found {
            name,
            dir: run,
            outcome,
        });
    }
    Ok(())
}

/// Copy a run's directory, refusing to overwrite one already there.
fn copy_run(from: &Path, to: &Path) -> anyhow::Result<()> {
    if to.exists() {
        bail!(
            "{} already exists; merge into a new --out directory",
            to.display()
        );
    }
    crate::copy_dir(from, to)
        .with_context(|| format!("could not copy {} to {}", from.display(), to.display()))
}

/// What is missing from the merged batch, one line each: shards with no summary, runs a
/// shard planned that did not finish.
fn completeness(found: &[Found], summaries: &[(PathBuf, Value)]) -> Vec<String> {
    let mut problems = Vec::new();
    let counts: Vec<u64> = summaries
        .iter()
        .filter_map(|(_, s)| s.pointer("/shard/count").and_then(Value::as_u64))
        .collect();
    if let Some(&n) = counts.first() {
        if counts.iter().any(|&c| c != n) {
            problems.push(format!(
                "the shards were split different ways (N = {counts:?}); merge shards of one split"
            ));
        }
        for k in 1..=n {
            let has = summaries
                .iter()
                .any(|(_, s)| s.pointer("/shard/k").and_then(Value::as_u64) == Some(k));
            if !has {
                problems.push(format!(
                    "shard {k}/{n}: no summary (not run, or still running)"
                ));
            }
        }
    }
    let mut missing: Vec<&str> = summaries
        .iter()
        .flat_map(|(_, s)| {
            s.get("planned")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(Value::as_str)
        .filter(|name| !found.iter().any(|f| f.name == *name))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if !missing.is_empty() {
        problems.push(format!(
            "{} did not finish: {}",
            count(missing.len(), "planned run"),
            missing.join(", ")
        ));
    }
    problems
}

fn write_summary(
    out: &Path,
    found: &[Found],
    summaries: &[(PathBuf, Value)],
    problems: &[String],
) -> anyhow::Result<()> {
    let runs: Vec<&Value> = found.iter().map(|f| &f.outcome).collect();
    // Every run found finished; one whose session logged a failed phase is not `ok`.
    let partial = runs
        .iter()
        .filter(|r| r.get("status").and_then(Value::as_str) == Some("phases_failed"))
        .count();
    let shards: Vec<Value> = summaries
        .iter()
        .map(|(path, s)| {
            serde_json::json!({
                "summary": path,
                "shard": s.get("shard").cloned().unwrap_or(Value::Null),
                "wall_ms": s.get("wall_ms").cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    let value = serde_json::json!({
        "merged": true,
        "sessions": found.len(),
        "ok": found.len() - partial,
        "phases_failed": partial,
        "failed": 0,
        "complete": problems.is_empty(),
        "missing": problems,
        "shards": shards,
        "runs": runs,
    });
    let path = out.join("simulate.json");
    std::fs::write(&path, serde_json::to_string_pretty(&value)? + "\n")
        .with_context(|| format!("could not write {}", path.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn a_shard_spec_is_k_of_n_counted_from_one() {
        let s = parse_shard("2/4").unwrap();
        assert_eq!((s.index, s.count, s.label()), (1, 4, "2/4".to_string()));
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "-1/4"] {
            assert!(parse_shard(bad).is_err(), "{bad} should be refused");
        }
        assert!(parse_shard("5/4").unwrap_err().contains("out of range"));
    }

    #[test]
    fn every_run_belongs_to_exactly_one_shard() {
        let shards: Vec<Shard> = (1..=3)
            .map(|k| parse_shard(&format!("{k}/3")).unwrap())
            .collect();
        for i in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.owns(i)).count(), 1, "run {i}");
        }
        assert!(shards[0].owns(0) && shards[1].owns(1) && shards[0].owns(3));
    }

    #[test]
    fn slurm_arrays_shard_from_their_minimum_and_step() {
        let none = ShardArgs::default();
        let vars = [
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "4"),
        ];
        assert_eq!(resolve(&none, &env(&vars)).unwrap().unwrap().label(), "2/4");
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "6"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
        ];
        assert_eq!(
            resolve(&none, &env(&stepped)).unwrap().unwrap().label(),
            "4/4"
        );
        let beyond = [
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        let err = resolve(&none, &env(&beyond)).unwrap_err().to_string();
        assert!(err.contains("out of range"), "{err}");
        // The flag wins over the environment.
        let flag = ShardArgs {
            shard: Some(parse_shard("1/2").unwrap()),
            ..ShardArgs::default()
        };
        assert_eq!(resolve(&flag, &env(&vars)).unwrap().unwrap().label(), "1/2");
        assert_eq!(resolve(&none, &env(&[])).unwrap(), None);
    }

    #[test]
    fn an_indexed_job_needs_its_count() {
        let none = ShardArgs::default();
        let vars = [("JOB_COMPLETION_INDEX", "0")];
        let err = resolve(&none, &env(&vars)).unwrap_err().to_string();
        assert!(err.contains("--shard-count"), "{err}");
        let counted = [("JOB_COMPLETION_INDEX", "2"), ("TROUPE_SHARD_COUNT", "3")];
        assert_eq!(
            resolve(&none, &env(&counted)).unwrap().unwrap().label(),
            "3/3"
        );
        let flag = ShardArgs {
            shard_count: Some(2),
            ..ShardArgs::default()
        };
        assert!(
            resolve(&flag, &env(&counted)).is_err(),
            "index 2 of 2 is out of range"
        );
    }

    #[test]
    fn a_run_is_finished_only_once_its_mark_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("logs")).unwrap();
        std::fs::write(dir.path().join("logs/session-1.jsonl"), "{}\n").unwrap();
        assert!(finished(dir.path()).is_none());
        std::fs::write(dir.path().join(DONE_FILE), "{\"run\": ").unwrap();
        assert!(finished(dir.path()).is_none(), "a torn mark is no mark");
        mark_done(dir.path(), &serde_json::json!({"run": "a", "index": 3})).unwrap();
        assert_eq!(finished(dir.path()).unwrap()["index"], 3);
        assert!(!dir.path().join(format!("{DONE_FILE}.tmp")).exists());
    }
}
