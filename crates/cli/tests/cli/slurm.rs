#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A batch on a real Slurm. The test starts a single-node cluster from the distribution's
//! packages (munged, slurmctld, slurmd: its own processes, with a slurm.conf for this host in a
//! temporary directory, stopped after, even when the test fails), submits
//! examples/cluster/batch.sbatch as a user would (a recorded-reply batch as a 4-task job array,
//! `--array=0-3`), waits, merges the shards and compares what
//! `troupe stats` and `troupe report` read with a one-process run of the same batch.
//!
//! Slurm missing (scripts/setup installs slurm-wlm and munge) or not root: in CI (CI=true) the
//! test fails; elsewhere it is skipped with a loud notice.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use crate::support::in_ci;
use support::troupe;

const DAEMONS: [&str; 3] = ["munged", "slurmctld", "slurmd"];
const CLIENTS: [&str; 3] = ["sbatch", "squeue", "sinfo"];

/// A program in PATH or in the sbin directories daemons live in.
fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Why this machine cannot run the test, if it cannot.
fn missing() -> Option<String> {
    let absent: Vec<&str> = DAEMONS
        .iter()
        .chain(&CLIENTS)
        .copied()
        .filter(|p| find(p).is_none())
        .collect();
    if !absent.is_empty() {
        return Some(format!(
            "{} not installed (scripts/setup installs slurm-wlm and munge)",
            absent.join(", ")
        ));
    }
    let uid = Command::new("id").arg("-u").output().ok()?;
    (String::from_utf8_lossy(&uid.stdout).trim() != "0")
        .then(|| "slurmd must run as root to start jobs; run the test as root".to_string())
}

/// A free TCP port on this host (bound, then let go).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn short_hostname() -> String {
    let out = Command::new("hostname").arg("-s").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A running single-node cluster; dropping it stops its daemons.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<(String, Child)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (name, child) in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !matches!(child.try_wait(), Ok(Some(_))) {
                eprintln!("{name} did not stop on SIGTERM; killing it");
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(find(program).unwrap());
        cmd.env("SLURM_CONF", self.conf());
        cmd
    }

    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // munged wants its socket's directory reachable by all, its key private.
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        for sub in ["state", "spool"] {
            std::fs::create_dir(root.join(sub)).unwrap();
        }
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key)
            .unwrap();
        std::fs::write(root.join("munge.key"), key).unwrap();
        std::fs::set_permissions(
            root.join("munge.key"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        std::fs::write(root.join("slurm.conf"), slurm_conf(root)).unwrap();
        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
        };
        let socket = cluster.dir.path().join("munge.sock");
        let p = |f: &str| cluster.dir.path().join(f).display().to_string();
        let munged = [
            "-F".to_string(),
            "--force".into(),
            format!("--socket={}", socket.display()),
            format!("--key-file={}", p("munge.key")),
            format!("--pid-file={}", p("munged.pid")),
            format!("--log-file={}", p("munged.log")),
            format!("--seed-file={}", p("munge.seed")),
        ];
        cluster.spawn("munged", &munged);
        wait_for(|| socket.exists(), "munged's socket", &cluster);
        let conf = cluster.conf().display().to_string();
        cluster.spawn("slurmctld", &["-D".into(), "-f".into(), conf.clone()]);
        cluster.spawn("slurmd", &["-D".into(), "-f".into(), conf]);
        wait_for(
            || {
                cluster
                    .command("sinfo")
                    .args(["-h", "-o", "%T"])
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
            },
            "the node to be idle",
            &cluster,
        );
        cluster
    }

    fn spawn(&mut self, program: &str, args: &[String]) {
        let log = std::fs::File::create(self.dir.path().join(format!("{program}.out"))).unwrap();
        let child = self
            .command(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {program}: {e}"));
        self.daemons.push((program.to_string(), child));
    }

    /// The daemons' logs, for a failure message.
    fn logs(&self) -> String {
        let mut text = String::new();
        for f in [
            "munged.log",
            "slurmctld.log",
            "slurmd.log",
            "slurmctld.out",
            "slurmd.out",
        ] {
            if let Ok(t) = std::fs::read_to_string(self.dir.path().join(f)) {
                let tail: Vec<&str> = t.lines().rev().take(15).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                text.push_str(&format!("--- {f}\n{}\n", tail.join("\n")));
            }
        }
        text
    }
}

fn slurm_conf(root: &Path) -> String {
    let host = short_hostname();
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let p = |f: &str| root.join(f).display().to_string();
    format!(
        "ClusterName=troupetest\n\
         SlurmctldHost={host}\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         SlurmctldPort={ctld}\n\
         SlurmdPort={slurmd}\n\
         AuthType=auth/munge\n\
         CredType=cred/munge\n\
         AuthInfo=socket={socket}\n\
         StateSaveLocation={state}\n\
         SlurmdSpoolDir={spool}\n\
         SlurmctldPidFile={ctld_pid}\n\
         SlurmdPidFile={slurmd_pid}\n\
         SlurmctldLogFile={ctld_log}\n\
         SlurmdLogFile={slurmd_log}\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         JobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\n\
         JobCompType=jobcomp/none\n\
         SchedulerType=sched/builtin\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core\n\
         MpiDefault=none\n\
         ReturnToService=2\n\
         NodeName={host} CPUs={cpus} State=UNKNOWN\n\
         PartitionName=troupe Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
        ctld = free_port(),
        slurmd = free_port(),
        socket = p("munge.sock"),
        state = p("state"),
        spool = p("spool"),
        ctld_pid = p("slurmctld.pid"),
        slurmd_pid = p("slurmd.pid"),
        ctld_log = p("slurmctld.log"),
        slurmd_log = p("slurmd.log"),
    )
}

fn wait_for(ready: impl Fn() -> bool, what: &str, cluster: &Cluster) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The one-process run of the batch examples/cluster/batch.sbatch plays.
const WHOLE: [&str; 12] = [
    "simulate",
    "examples/party.json",
    "--seeds",
    "1..=8",
    "--model",
    "replay:examples/research.replay.jsonl",
    "--jobs",
    "2",
    "--out",
    "whole/batch",
    "--",
    "--gm-script",
];
const GM_SCRIPT: &str = "examples/research.gm.yaml";

fn output_ok(out: &std::process::Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{what}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn readings(dir: &Path) -> (String, String, Vec<u8>) {
    let run = |args: &[&str]| {
        output_ok(
            &troupe().current_dir(dir).args(args).output().unwrap(),
            &format!("{args:?}"),
        )
    };
    let text = run(&["stats", "--campaign", "batch"]);
    let json = run(&["stats", "--json", "--campaign", "batch"]);
    run(&["report", "--campaign", "batch", "-o", "report.html"]);
    (text, json, std::fs::read(dir.join("report.html")).unwrap())
}

#[test]
fn a_job_array_on_a_real_slurm_merges_into_the_one_process_batch() {
    if let Some(why) = missing() {
        assert!(!in_ci(), "CI=true and Slurm cannot run here: {why}");
        eprintln!("SKIPPED: no Slurm test: {why}");
        return;
    }
    // The repository's example job script, as a user submits it, in a copy of the examples.
    let table = tempfile::tempdir().unwrap();
    let root = table.path();
    std::fs::create_dir_all(root.join("examples/cluster")).unwrap();
    for f in [
        "party.json",
        "research.gm.yaml",
        "research.replay.jsonl",
        "cluster/batch.sbatch",
    ] {
        std::fs::copy(support::examples().join(f), root.join("examples").join(f)).unwrap();
    }
    // Slurm runs the job as root from this directory; it must be reachable.
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("troupe");
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();

    let cluster = Cluster::start();
    let submitted = cluster
        .command("sbatch")
        .current_dir(root)
        .args(["--parsable", "--output=task-%a.out"])
        .arg("examples/cluster/batch.sbatch")
        .env("PATH", path)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("TROUPE_RETRY_SCALE", "0.001")
        .output()
        .unwrap();
    let job = output_ok(&submitted, &format!("sbatch\n{}", cluster.logs()));
    let job = job.trim().split(';').next().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let queue = cluster
            .command("squeue")
            .args(["-h", "-j", &job])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&queue.stdout).trim().is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the array did not finish in 10 minutes:\n{}\n{}",
            String::from_utf8_lossy(&queue.stdout),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(cluster);
    let tasks: String = (0..4)
        .map(|k| std::fs::read_to_string(root.join(format!("task-{k}.out"))).unwrap_or_default())
        .collect();
    for k in 0..4 {
        let summary = root.join(format!("runs/shard-{k}/simulate-shard-{}-of-4.json", k + 1));
        assert!(summary.is_file(), "no {}:\n{tasks}", summary.display());
    }

    let merged = troupe()
        .current_dir(root)
        .args(["simulate", "merge", "--out", "runs/batch"])
        .args((0..4).map(|k| format!("runs/shard-{k}")))
        .output()
        .unwrap();
    let said = output_ok(&merged, "merge");
    assert!(said.contains("Merged 8 finished runs"), "{said}");
    let whole = troupe()
        .current_dir(root)
        .args(WHOLE)
        .arg(GM_SCRIPT)
        .output()
        .unwrap();
    output_ok(&whole, "the one-process batch");
    let (a, b) = (readings(&root.join("whole")), readings(&root.join("runs")));
    assert!(a.0.contains("Scorecard per model"), "{}", a.0);
    assert_eq!(a.0, b.0, "stats differ");
    assert_eq!(a.1, b.1, "stats --json differ");
    assert!(a.2 == b.2, "the HTML reports differ");
}
