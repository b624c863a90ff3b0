#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Campaign files that went wrong, through the real binary: a campaign.db emptied, cut short or
//! overwritten; a session log deleted or torn; a read-only campaign; a disk that fills up in
//! the middle of a session; another program holding the database. Each gets a message that
//! names the file and says what to do, and nothing committed is lost.
//!
//! The read-only and full-disk cases need a real read-only or full file system. As root (where
//! permission bits stop nothing) they mount one in a private mount namespace (`unshare -m`);
//! where that is impossible they say so loudly and skip only that case.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support;
use support::{DEMO, campaign_with, copy_examples, read_log, troupe};

fn campaign_dir() -> tempfile::TempDir {
    campaign_with(&DEMO)
}

const PLAY: [&str; 6] = [
    "play",
    "campaign.json",
    "--gm-script",
    "demo.gm.yaml",
    "--seed",
    "7",
];
const RESUME: [&str; 3] = ["resume", "--gm-script", "demo.gm.yaml"];

/// The commands a GM runs on a campaign: each must refuse a broken campaign.db the same way.
const COMMANDS: [&[&str]; 6] = [
    &PLAY,
    &RESUME,
    &["sessions"],
    &["undo"],
    &["transcript", "1"],
    &["log"],
];

fn run_ok(dir: &Path, args: &[&str]) -> String {
    // The runs under tiny resource limits use the overreach rules alone (below), so every run
    // they are compared with (the baseline, the resume) does too: the verdicts are in the story.
    let out = troupe()
        .current_dir(dir)
        .env("TROUPE_DETECTOR", "pattern")
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{args:?} failed:\n{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout + &stderr
}

fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Run a command that must fail cleanly (an error, not a panic); returns its standard error.
fn run_err(dir: &Path, args: &[&str]) -> String {
    let out = troupe().current_dir(dir).args(args).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}:\n{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

/// Every event campaign.db holds for session 1, undone ones included, read straight from it.
fn stored_events(dir: &Path) -> Vec<Value> {
    try_stored_events(dir).unwrap()
}

fn try_stored_events(dir: &Path) -> rusqlite::Result<Vec<Value>> {
    let conn = rusqlite::Connection::open(dir.join("campaign.db"))?;
    let mut stmt = conn.prepare("SELECT body FROM events WHERE session = 1 ORDER BY seq")?;
    let bodies = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(bodies
        .iter()
        .map(|b| serde_json::from_str(b).unwrap())
        .collect())
}

/// The story a log tells: what legitimately differs between runs (times, ids, positions) and
/// the resume markers taken out.
fn story(log: &[Value]) -> Vec<Value> {
    log.iter()
        .filter(|e| e["event_type"] != "session_resumed")
        .map(|e| {
            let mut e = e.clone();
            let o = e.as_object_mut().unwrap();
            for k in ["timestamp", "seq", "session_id", "latency_ms"] {
                o.remove(k);
            }
            e
        })
        .collect()
}

fn mirror(dir: &Path) -> PathBuf {
    dir.join("logs/session-1.jsonl")
}

/// A played campaign whose campaign.db is then damaged by `damage`; every command refuses it
/// with `says` in its message, and the file is left exactly as it was.
fn refused_untouched(damage: impl Fn(&Path), says: &str) {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let db = dir.path().join("campaign.db");
    damage(&db);
    let before = std::fs::read(&db).unwrap();
    for args in COMMANDS {
        let stderr = run_err(dir.path(), args);
        assert!(stderr.contains("campaign.db: "), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(
            stderr.contains("Restore campaign.db from a backup"),
            "{stderr}"
        );
        assert!(
            stderr.contains("mv campaign.db campaign.db.broken"),
            "{stderr}"
        );
        assert_eq!(std::fs::read(&db).unwrap(), before, "{args:?} changed it");
    }
    // Nothing started a session behind the refusal.
    assert!(!dir.path().join("logs/session-2.jsonl").exists());
}

#[test]
fn an_emptied_database_is_refused_not_started_over() {
    // SQLite takes a 0-byte file for a new, empty database; in a campaign that has session
    // logs it is a lost database, and writing a fresh one there would bury the loss.
    refused_untouched(
        |db| std::fs::write(db, b"").unwrap(),
        "the database is empty (0 bytes)",
    );
}

#[test]
fn a_database_cut_short_is_refused() {
    refused_untouched(
        |db| {
            let len = std::fs::metadata(db).unwrap().len();
            let file = std::fs::OpenOptions::new().write(true).open(db).unwrap();
            file.set_len(len / 2).unwrap();
        },
        "the database was cut short",
    );
}

#[test]
fn a_garbage_database_is_refused_and_the_advice_works() {
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    refused_untouched(
        |db| std::fs::write(db, &garbage).unwrap(),
        "this is not a troupe database",
    );

    // The advice holds: moved aside, the logs still tell the session, and play starts afresh.
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let expected = read_log(&mirror(dir.path()));
    std::fs::write(dir.path().join("campaign.db"), &garbage).unwrap();
    std::fs::rename(
        dir.path().join("campaign.db"),
        dir.path().join("campaign.db.broken"),
    )
    .unwrap();
    let logged: Vec<Value> = run_ok(dir.path(), &["log", "1"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(logged.len(), expected.len());
    run_ok(dir.path(), &PLAY);
    assert!(dir.path().join("logs/session-2.jsonl").exists());
}

#[test]
fn a_deleted_log_is_rebuilt_from_the_database() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let expected = read_log(&mirror(dir.path()));
    run_ok(dir.path(), &["undo"]);
    std::fs::remove_file(mirror(dir.path())).unwrap();
    let out = run_ok(dir.path(), &RESUME);
    assert!(out.contains("the log file is missing"), "{out}");
    assert!(out.contains("rewriting it from campaign.db"), "{out}");
    let log = read_log(&mirror(dir.path()));
    // The rebuilt log is the database, event for event, undo and resume included.
    assert_eq!(log, stored_events(dir.path()));
    assert_eq!(log[..expected.len()], expected[..]);
}

#[test]
fn undo_after_a_torn_log_leaves_no_torn_line_behind() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let path = mirror(dir.path());
    // Half of the last line survives, as after a crash mid-write (cut as bytes: a torn
    // write may split a character too).
    let bytes = std::fs::read(&path).unwrap();
    let last_line = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap();
    std::fs::write(&path, &bytes[..last_line + 30]).unwrap();

    let out = run_ok(dir.path(), &["undo"]);
    assert!(out.contains("half an event"), "{out}");
    // Every line is a whole event (read_log parses each), and the log is the database.
    assert_eq!(read_log(&path), stored_events(dir.path()));
    run_ok(dir.path(), &RESUME);
    assert_eq!(read_log(&path), stored_events(dir.path()));
}

#[test]
fn a_new_session_mends_the_last_sessions_torn_log_first() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let path = mirror(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 20]).unwrap();
    let out = run_ok(dir.path(), &PLAY);
    assert!(out.contains("half an event"), "{out}");
    assert_eq!(read_log(&path), stored_events(dir.path()));
    assert!(dir.path().join("logs/session-2.jsonl").exists());
}

#[test]
fn another_program_holding_the_database_is_named_not_waited_on_forever() {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    let db = dir.path().join("campaign.db");
    let before = stored_events(dir.path());
    {
        // A database tool in the middle of a write transaction.
        let holder = rusqlite::Connection::open(&db).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
        let started = std::time::Instant::now();
        let stderr = run_err(dir.path(), &RESUME);
        assert!(started.elapsed().as_secs() < 30);
        assert!(stderr.contains("campaign.db: "), "{stderr}");
        assert!(
            stderr.contains("another program is using this campaign's database"),
            "{stderr}"
        );
        // Reading still works while it writes (WAL).
        assert!(run_ok(dir.path(), &["sessions"]).contains("ended"));
        holder.execute_batch("ROLLBACK;").unwrap();
    }
    assert_eq!(stored_events(dir.path()), before, "nothing was written");
    run_ok(dir.path(), &RESUME);
}

// ---- read-only campaigns ------------------------------------------------------------------

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Can this machine give a test its own mount namespace (root with CAP_SYS_ADMIN)?
fn can_mount() -> bool {
    Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t tmpfs none /mnt"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run troupe in `dir` with `target` (a directory or a file) read-only: bind-mounted read-only
/// in a private mount namespace as root, its write permission taken away otherwise.
fn troupe_read_only(dir: &Path, target: &Path, args: &[&str]) -> Option<Output> {
    let bin = assert_cmd::cargo::cargo_bin("troupe");
    if !running_as_root() {
        let restore = std::fs::metadata(target).unwrap().permissions();
        let mut ro = restore.clone();
        ro.set_readonly(true);
        std::fs::set_permissions(target, ro).unwrap();
        let out = troupe().current_dir(dir).args(args).output().unwrap();
        std::fs::set_permissions(target, restore).unwrap();
        return Some(out);
    }
    if !can_mount() {
        eprintln!(
            "\n!!! SKIPPED: a read-only campaign cannot be simulated here: running as root \
             (permission bits stop nothing) and no mount namespace (`unshare -m`) is allowed.\n"
        );
        return None;
    }
    // Back into the directory after mounting: a working directory that is itself the mount
    // point still refers to the writable directory underneath.
    let script = r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99
        cd "$2" || exit 99; shift 2; exec "$@""#;
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", script, "sh"])
        .arg(target)
        .arg(dir)
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TROUPE_PAUSE_AFTER_EVENT")
        .env("TROUPE_RETRY_SCALE", "0.001")
        // Under tiny resource limits: the rules alone, so the 87 MB encoder is not what runs out.
        .env("TROUPE_DETECTOR", "pattern")
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(99), "the read-only mount failed");
    Some(out)
}

fn refused_read_only(dir: &Path, target: &Path, args: &[&str], names: &str) {
    let Some(out) = troupe_read_only(dir, target, args) else {
        return;
    };
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}:\n{stdout}\n{stderr}");
    assert!(stderr.contains(names), "{stderr}");
    assert!(stderr.contains("cannot write here"), "{stderr}");
    assert!(stderr.contains("Nothing was changed"), "{stderr}");
    // Refused before the table sat down: no story was told, no GM input was read.
    assert!(!stdout.contains("Turn 1"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_read_only_campaign_is_refused_before_the_gm_is_asked() {
    let dir = campaign_dir();
    let d = dir.path();
    run_ok(d, &PLAY);
    let before = std::fs::read(d.join("campaign.db")).unwrap();
    for args in [&PLAY[..], &RESUME[..], &["undo"][..]] {
        refused_read_only(d, d, args, ": cannot write here");
    }
    // Only campaign.db read-only (a file copied from read-only media keeps its mode).
    let db = d.join("campaign.db");
    for args in [&PLAY[..], &RESUME[..], &["undo"][..]] {
        refused_read_only(d, &db, args, "campaign.db: cannot write here");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert!(!d.join("logs/session-2.jsonl").exists());
    run_ok(d, &RESUME);
}

// ---- a full disk ----------------------------------------------------------------------------

/// Play under a file-size limit (`ulimit -f`, in 512-byte blocks) with SIGXFSZ ignored, as a
/// full disk would stop writes: they fail (EFBIG) instead of the process being killed.
fn play_limited(dir: &Path, bytes: usize) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("troupe");
    Command::new("sh")
        .args([
            "-c",
            r#"trap '' XFSZ; ulimit -f "$1"; shift; exec "$@""#,
            "sh",
        ])
        .arg((bytes / 512).to_string())
        .arg(bin)
        .args(PLAY)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TROUPE_PAUSE_AFTER_EVENT")
        .env("TROUPE_RETRY_SCALE", "0.001")
        // Under tiny resource limits: the rules alone, so the 87 MB encoder is not what runs out.
        .env("TROUPE_DETECTOR", "pattern")
        .output()
        .unwrap()
}

/// The sizes tried for the room a session gets: from 64 KiB, doubling. How much a session
/// writes where (the WAL grows far faster than the log) is the store's business, so the test
/// looks for a size that stops the session in its middle rather than assuming one.
const ROOM: [usize; 8] = [
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
    8 << 20,
];

/// Did this run stop mid-session (well after the start, before the end)?
fn stopped_mid_session(dir: &Path, out: &Output, expected: &[Value]) -> bool {
    // A disk too small for even the tables leaves a database without them.
    let committed = try_stored_events(dir).map_or(0, |e| e.len());
    !out.status.success() && (expected.len() / 4..expected.len() * 3 / 4).contains(&committed)
}

/// After a write failed mid-session: the message says what happened and what to do, every
/// event committed before the fault survives the resume unchanged, and the resumed session
/// tells the same story as one never interrupted.
fn survives_the_fault(dir: &Path, out: &Output, says: &str, expected: &[Value], lift: impl Fn()) {
    let (stdout, stderr) = texts(out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
    assert!(stderr.contains("nothing committed was lost"), "{stderr}");
    assert!(stderr.contains("`troupe resume`"), "{stderr}");
    let committed = stored_events(dir);
    lift();
    let resumed = run_ok(dir, &RESUME);
    assert!(resumed.contains("Resuming"), "{resumed}");
    let after = stored_events(dir);
    assert_eq!(
        after[..committed.len()],
        committed[..],
        "a committed event changed"
    );
    assert_eq!(story(&after), story(expected));
    assert_eq!(
        read_log(&mirror(dir)),
        after,
        "the log is the database again"
    );
}

fn baseline() -> Vec<Value> {
    let dir = campaign_dir();
    run_ok(dir.path(), &PLAY);
    stored_events(dir.path())
}

#[test]
fn a_file_size_limit_mid_session_stops_it_cleanly_and_resume_loses_nothing() {
    let expected = baseline();
    for room in ROOM {
        let dir = campaign_dir();
        let out = play_limited(dir.path(), room);
        if stopped_mid_session(dir.path(), &out, &expected) {
            // SQLite reports EFBIG as an I/O error, the log as "file too large": either way
            // the message names the limit.
            survives_the_fault(dir.path(), &out, "file-size limit", &expected, || {});
            return;
        }
    }
    panic!("no file-size limit in {ROOM:?} stopped the session in its middle");
}

/// A small tmpfs mounted over a directory, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path) -> Option<SmallDisk> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(at.to_path_buf()))
    }

    fn resize(&self, bytes: usize) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={bytes}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_mid_session_stops_it_cleanly_and_resume_loses_nothing() {
    let expected = baseline();
    let outer = tempfile::tempdir().unwrap();
    let at = outer.path().join("disk");
    std::fs::create_dir(&at).unwrap();
    let Some(disk) = SmallDisk::mount(&at) else {
        eprintln!(
            "\n!!! SKIPPED: a full disk cannot be simulated here (no tmpfs mount allowed); \
             the file-size-limit test covers the same path.\n"
        );
        return;
    };
    for room in ROOM {
        let dir = at.join("campaign");
        let _ = std::fs::remove_dir_all(&dir);
        disk.resize(room);
        std::fs::create_dir(&dir).unwrap();
        copy_examples(&dir, &DEMO);
        // The rules alone, as every run of this file: the encoder's 87 MB is not the subject.
        let out = troupe()
            .current_dir(&dir)
            .env("TROUPE_DETECTOR", "pattern")
            .args(PLAY)
            .output()
            .unwrap();
        if stopped_mid_session(&dir, &out, &expected) {
            survives_the_fault(&dir, &out, "the disk is full", &expected, || {
                disk.resize(64 << 20)
            });
            return;
        }
    }
    panic!("no disk size in {ROOM:?} stopped the session in its middle");
}

// ---- --campaign anywhere --------------------------------------------------------------------

#[test]
fn campaign_is_accepted_before_and_after_every_command() {
    let campaign = campaign_dir();
    let c = campaign.path();
    let cs = c.to_str().unwrap();
    // Run from elsewhere, so only --campaign can find the campaign.
    let elsewhere = tempfile::tempdir().unwrap();
    let e = elsewhere.path();
    let notes = e.join("notes.jsonl");
    std::fs::write(
        &notes,
        "{\"id\":\"n-1\",\"session\":1,\"timestamp\":\"2025-01-01T10:00:00Z\",\"speaker\":\"gm\",\"text\":\"The smuggler Kessa owes the party 200 credits.\"}\n",
    )
    .unwrap();
    let script = c.join("demo.gm.yaml");
    let script = script.to_str().unwrap();
    let report = e.join("r.html");
    let report = report.to_str().unwrap();
    let notes = notes.to_str().unwrap();
    // Each command and what its output shows when it found the campaign.
    let commands: Vec<(Vec<&str>, &str)> = vec![
        (vec!["check"], "OK"),
        (vec!["play", "--gm-script", script, "--seed", "7"], "Log:"),
        (vec!["resume", "--gm-script", script], "Resuming"),
        (vec!["sessions"], "ended"),
        (vec!["transcript", "1"], "## Turn 1"),
        (
            vec!["log", "1", "--type", "session_started"],
            "session_started",
        ),
        (vec!["stats", "1"], "urn"),
        (vec!["report", "1", "-o", report], ""),
        (vec!["replay", "1"], "identical"),
        (vec!["undo"], "Undid"),
        (vec!["memory", "import", notes], "Imported"),
        (vec!["memory", "query", "Kessa"], "Kessa"),
        (vec!["memory", "export"], "Kessa"),
        (vec!["memory", "stats"], "episodes"),
    ];
    for (args, shows) in &commands {
        let before: Vec<&str> = ["--campaign", cs].into_iter().chain(args.clone()).collect();
        let mut after = args.clone();
        after.extend(["--campaign", cs]);
        for line in [before, after] {
            let out = run_ok(e, &line);
            assert!(out.contains(shows), "{line:?}: {out}");
        }
    }
    // And in the middle, between a subcommand and its sub-subcommand.
    let out = run_ok(e, &["memory", "--campaign", cs, "stats"]);
    assert!(out.contains("episodes"), "{out}");
    // Nothing was written where the commands ran, but the report asked for.
    let mut left: Vec<String> = std::fs::read_dir(e)
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    left.sort();
    assert_eq!(left, ["notes.jsonl", "r.html"]);
    // Validate takes it too (it needs no campaign, but every command accepts the flag).
    let out = troupe()
        .current_dir(e)
        .args(["validate", "--campaign", cs])
        .write_stdin("I shoot the drone.\n")
        .output()
        .unwrap();
    assert!(out.status.success());
}
