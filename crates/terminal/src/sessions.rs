//! The campaign directory and its sessions: finding the campaign file, the lock that keeps two
//! `troupe` processes from playing the same campaign at once, `sessions`, `undo`, `transcript`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use troupe_campaign::CampaignDir;
use troupe_engine::{Fault, GameStore, Logged, RunLog, StoredRun};
use troupe_lasers::Store;
use troupe_lasers::lines::count;
use troupe_lasers::session_log_path;

/// The campaign directory: the one given, or the current directory.
pub fn dir_of(given: Option<PathBuf>) -> PathBuf {
    given.unwrap_or_else(|| PathBuf::from("."))
}

/// The campaign file and directory. A file given names the directory (unless --campaign says
/// otherwise); without one, the directory's campaign.json or characters.json is used.
pub fn campaign_file(
    file: Option<&Path>,
    dir: Option<&Path>,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    match file {
        Some(f) => {
            let dir = dir.map(Path::to_path_buf).unwrap_or_else(|| {
                f.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| PathBuf::from("."))
            });
            Ok((f.to_path_buf(), dir))
        }
        None => {
            let dir = dir
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("."));
            if let Some(f) = CampaignDir::new(&dir).campaign_file() {
                return Ok((f, dir));
            }
            bail!(
                "no campaign.json or characters.json in {}; name the campaign file (e.g. `troupe play examples/campaign.json`) or the directory with --campaign DIR",
                dir.display()
            )
        }
    }
}

/// The campaign's store, created when missing (for `play`).
pub fn create_store(dir: &Path) -> anyhow::Result<Store> {
    Store::open(dir).map_err(anyhow::Error::from)
}

/// The store of a campaign that has been played (every other command): a directory without
/// one is a mistake worth naming, not a place to leave an empty database behind.
pub fn open_store(dir: &Path) -> anyhow::Result<Store> {
    require_played(dir)?;
    create_store(dir)
}

/// A campaign directory without campaign.db has never been played: say so, create nothing.
pub fn require_played(dir: &Path) -> anyhow::Result<()> {
    if !CampaignDir::new(dir).db().is_file() {
        bail!(
            "no sessions have been played in {} (there is no campaign.db); `troupe play CAMPAIGN.json` starts one, or point --campaign at the campaign's directory",
            dir.display()
        );
    }
    Ok(())
}

/// A failed file operation as the user should read it: a read-only directory or a full disk
/// says what to do (the engine's wording), anything else names the file.
fn file_error(path: &Path, what: &str, e: std::io::Error) -> anyhow::Error {
    // "./: cannot write here" would name nothing: the full path says which directory.
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match Fault::of_io(&e) {
        Some(fault) => anyhow::anyhow!("{}: {fault}", shown.display()),
        None => anyhow::Error::new(e).context(format!("could not {what} {}", path.display())),
    }
}

/// Held while a process writes to a campaign; the OS releases it when the process dies, so a
/// crash never leaves a stale lock behind.
pub struct CampaignLock {
    _file: File,
}

impl CampaignLock {
    /// Lock the campaign for writing. Taken before anything is asked of the GM, so it is also
    /// where a campaign that cannot be written (a read-only directory or campaign.db) is found.
    pub fn take(dir: &Path) -> anyhow::Result<CampaignLock> {
        std::fs::create_dir_all(dir)
            .map_err(|e| file_error(dir, "create the campaign directory", e))?;
        // campaign.lock may already exist in a directory that is no longer writable, and
        // SQLite needs to create its -wal and -shm files there: try creating a file.
        let probe = dir.join(".troupe-write-check");
        File::create(&probe).map_err(|e| file_error(dir, "write in", e))?;
        let _ = std::fs::remove_file(&probe);
        let path = CampaignDir::new(dir).lock();
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| file_error(&path, "open", e))?;
        let lock = match file.try_lock() {
            Ok(()) => CampaignLock { _file: file },
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "{}: another troupe is using this campaign right now (playing, resuming, undoing or importing); finish or stop it first",
                path.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => return Err(file_error(&path, "lock", e)),
        };
        // SQLite would open a read-only campaign.db quietly and fail at the first write.
        let db = CampaignDir::new(dir).db();
        if db.is_file() {
            File::options()
                .append(true)
                .open(&db)
                .map_err(|e| file_error(&db, "open", e))?;
        }
        Ok(lock)
    }
}

/// `troupe sessions`: the campaign's Lasers & Feelings sessions, then its encounter and scene
/// runs, each with what continues an unfinished one.
pub fn list(dir: &Path) -> anyhow::Result<ExitCode> {
    let store = open_store(dir)?;
    let sessions = store.sessions()?;
    let runs = [
        (
            "encounter",
            all_runs::<troupe_encounter::log::Envelope>(dir)?,
        ),
        ("scene", all_runs::<troupe_scene::Envelope>(dir)?),
    ];
    if sessions.is_empty() && runs.iter().all(|(_, r)| r.is_empty()) {
        println!(
            "No sessions yet in {}; `troupe play` starts one.",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut tables = 0;
    if !sessions.is_empty() {
        print_sessions(&sessions, dir);
        tables += 1;
    }
    for (game, runs) in runs.iter().filter(|(_, r)| !r.is_empty()) {
        if tables > 0 {
            println!();
        }
        print_runs(game, runs, dir);
        tables += 1;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_sessions(sessions: &[troupe_lasers::SessionInfo], dir: &Path) {
    println!(
        "{:>7}  {:<16}  {:>5}  status",
        "session", "started", "turns"
    );
    for s in sessions {
        let status = match &s.ended_reason {
            Some(reason) => format!("ended ({reason})"),
            None => format!(
                "unfinished — {} continues it",
                command(dir, "troupe resume")
            ),
        };
        let started = minute_of(&s.started_at);
        println!("{:>7}  {:<16}  {:>5}  {status}", s.number, started, s.turns);
    }
}

/// One game's runs: number, start, what was played (the encounter's or scene's id), status.
fn print_runs(game: &str, runs: &[troupe_engine::StoredRun], dir: &Path) {
    println!("{game:>9}  {:<16}  {:<28}  status", "started", "id");
    let at = campaign_flag(dir);
    let latest = runs.last().map(|r| r.number);
    for r in runs {
        // `resume` takes the latest run; an encounter's takes an older one with --run.
        let status = match (r.ended, Some(r.number) == latest, game) {
            (true, _, _) => "ended".to_string(),
            (false, true, _) => format!("unfinished — `troupe {game} resume{at}` continues it"),
            (false, false, "encounter") => format!(
                "unfinished — `troupe encounter resume --run {}{at}` continues it",
                r.number
            ),
            (false, false, _) => {
                format!("unfinished (`troupe {game} resume{at}` takes the latest)")
            }
        };
        let started = minute_of(&r.started_at);
        println!(
            "{:>9}  {started:<16}  {:<28}  {status}",
            r.number, r.spec_id
        );
    }
}

/// "2026-11-27 00:41" from an RFC 3339 time; the text as stored when it is not one.
fn minute_of(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// Every run of one game's kind in a campaign; none when it never played that game (nothing is
/// created).
fn all_runs<E: troupe_engine::RunLog>(dir: &Path) -> anyhow::Result<Vec<troupe_engine::StoredRun>> {
    Ok(match GameStore::<E>::open_existing(dir)? {
        Some(store) => store.runs()?,
        None => Vec::new(),
    })
}

pub fn undo(dir: &Path, whole_turn: bool, memory_url: Option<&str>) -> anyhow::Result<ExitCode> {
    require_played(dir)?;
    let _lock = CampaignLock::take(dir)?;
    let mut store = create_store(dir)?;
    let Some(info) = store.latest_session()? else {
        let missing = format!("{} has no sessions yet; nothing to undo", dir.display());
        return Err(no_session(dir, missing, Asked::Undo));
    };
    let number = info.number;
    let Some(undone) = take_back(dir, &mut store, number, whole_turn, memory_url)? else {
        bail!("session {number} has nothing to undo yet");
    };
    let (what, n) = (&undone.what, undone.events);
    println!(
        "Undid {what} in session {number}: {} marked undone (kept in the log).\n\
         {} continues from there and asks for it again.",
        count(n, "event"),
        command(dir, "troupe resume")
    );
    Ok(ExitCode::SUCCESS)
}

/// Take back session `number`'s last GM decision (or turn): the events marked undone, the undo
/// recorded in the log and its mirror, what the undone turns put into memory forgotten (it is
/// remembered again as they are replayed). None when there is nothing to take back.
/// `memory_url` is `--memory-url`.
pub fn take_back(
    dir: &Path,
    store: &mut Store,
    number: u32,
    whole_turn: bool,
    memory_url: Option<&str>,
) -> anyhow::Result<Option<troupe_lasers::undo::Undone>> {
    reopen_mirror_of(store, number)?;
    let Some(undone) = troupe_lasers::undo::undo_last(store, number, whole_turn)? else {
        return Ok(None);
    };
    if let Some(troupe_lasers::Unreadable { seq, why }) = &undone.unreadable {
        eprintln!(
            "note: event {seq} of session {number} cannot be read ({why}); undone from the last GM \
             decision before it"
        );
    }
    let from_turn = undone.from_turn;
    let forgotten = crate::graph::open_memory(&CampaignDir::new(dir), None, memory_url)?
        .forget_from(number, from_turn)
        .map_err(crate::graph::memory_error)?;
    if forgotten > 0 {
        println!(
            "Memory: {} from turn {from_turn} on forgotten; they are remembered again as the turn is replayed.",
            count(forgotten, "fact")
        );
    }
    Ok(Some(undone))
}

pub fn transcript(dir: &Path, session: u32, output: Option<&Path>) -> anyhow::Result<ExitCode> {
    let store = open_store(dir)?;
    let events = store.live_events(session)?;
    if events.is_empty() {
        bail!(
            "there is no session {session} in {} (`troupe sessions{}` lists them)",
            full_path(dir),
            campaign_flag(dir)
        );
    }
    let text = troupe_lasers::render_markdown(&events);
    match output {
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("could not write {}", path.display()))?;
            println!("Transcript of session {session}: {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// A session's or a run's mirror, about to be played on: checked against the database and
/// rewritten from it (saying so) when it falls short, so what the store appends next follows
/// every event before it.
pub fn reopen_mirror_of<E: Logged>(store: &mut GameStore<E>, run: u32) -> anyhow::Result<()> {
    if let Some(why) = store.mirror(run)? {
        let path = store.mirror_file(run).unwrap_or_default();
        mirror_note(&path, &why);
    }
    Ok(())
}

/// Run `run` of a game played in runs, about to be played on or taken back (`resume`, `undo`):
/// it must exist and not have ended (`game` and what `starts` a new run name the way on); its
/// mirror is checked and rewritten from the database if it falls short, saying so. The caller
/// holds the campaign's lock.
pub fn open_run<E: RunLog>(
    store: &mut GameStore<E>,
    run: u32,
    (game, starts): (&str, &str),
) -> anyhow::Result<StoredRun> {
    let Some(stored) = store.run(run)? else {
        bail!("there is no {game} run {run} in this campaign");
    };
    if stored.ended {
        bail!("{game} run {run} has ended; {starts} starts a new one");
    }
    reopen_mirror_of(store, run)?;
    Ok(stored)
}

/// `troupe encounter undo`, `troupe scene undo`: run `run`'s last step taken back in one commit,
/// as the table's GM takes it back (the run opened as [`open_run`] opens it). The game's
/// `take_back` makes its undo event from the run's events (or says why there is none).
pub fn undo_run<E: RunLog>(
    store: &mut GameStore<E>,
    run: u32,
    game: (&str, &str),
    take_back: impl FnOnce(Vec<E>) -> anyhow::Result<E>,
) -> anyhow::Result<E> {
    let stored = open_run(store, run, game)?;
    let undone = take_back(store.events(run)?)?;
    // The lines a script read stay read: it resumes after them.
    store.append(run, std::slice::from_ref(&undone), stored.inputs)?;
    Ok(undone)
}

/// Tell the user a mirror was rewritten from the database, and why.
pub fn mirror_note(path: &Path, why: &str) {
    eprintln!(
        "note: {}: {why}; rewriting it from campaign.db (the record), nothing is lost",
        path.display()
    );
}

/// Before a new session: the last session's log, if a crash tore its tail or it went missing,
/// is rewritten from campaign.db. Only the last byte is read when the log ends in a whole line,
/// so a long campaign costs nothing here; `resume` checks the rest (`reopen_mirror_of`).
pub fn repair_last_mirror(dir: &Path, store: &mut Store) -> anyhow::Result<()> {
    let Some(last) = store.latest_session()? else {
        return Ok(());
    };
    let path = session_log_path(dir, last.number);
    if ends_with_newline(&path) {
        return Ok(());
    }
    if store.event_count(last.number)? > 0 {
        reopen_mirror_of(store, last.number)?;
    }
    Ok(())
}

/// Does the file exist and end with a whole line?
fn ends_with_newline(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let mut last = [0u8; 1];
    file.seek(SeekFrom::End(-1))
        .and_then(|_| file.read_exact(&mut last))
        .is_ok_and(|_| last[0] == b'\n')
}

/// What the person asked of a Lasers & Feelings session that the campaign does not have.
#[derive(Clone, Copy)]
pub enum Asked {
    Resume,
    Undo,
    Replay,
}

/// The error for a campaign without the Lasers & Feelings session asked for (`missing` says
/// which): when the campaign has played encounters or scenes, it names the latest run of each
/// and the command of its game that does what was asked, rather than leaving the person to
/// guess that each game keeps its own runs.
pub fn no_session(dir: &Path, missing: String, asked: Asked) -> anyhow::Error {
    let others = other_games(dir, asked);
    if others.is_empty() {
        return anyhow::anyhow!("{missing}");
    }
    anyhow::anyhow!("{missing}. This campaign also has {}", others.join("; "))
}

/// The campaign's latest encounter and scene runs, each with the command that does `asked`.
/// Unreadable tables count as none: this only adds a hint to an error already being made.
fn other_games(dir: &Path, asked: Asked) -> Vec<String> {
    let mut out = Vec::new();
    let encounter = all_runs::<troupe_encounter::log::Envelope>(dir).unwrap_or_default();
    let scene = all_runs::<troupe_scene::Envelope>(dir).unwrap_or_default();
    for (game, runs) in [("encounter", encounter), ("scene", scene)] {
        if let Some(latest) = runs.last() {
            out.push(describe(latest, game, asked, dir));
        }
    }
    out
}

/// "encounter run 2 (smithy, not finished): `troupe encounter resume` continues it". An
/// encounter's undo takes back a round of a finished run too; a scene's only of one that has
/// not ended.
fn describe(run: &troupe_engine::StoredRun, game: &str, asked: Asked, dir: &Path) -> String {
    let at = campaign_flag(dir);
    let state = if run.ended {
        "finished"
    } else {
        "not finished"
    };
    let does = match (asked, game, run.ended) {
        (Asked::Resume, _, true) | (Asked::Undo, "scene", true) => "it has ended".to_string(),
        (Asked::Resume, _, false) => format!("`troupe {game} resume{at}` continues it"),
        (Asked::Undo, "scene", false) => {
            format!("`troupe scene undo{at}` takes back its last turn")
        }
        (Asked::Undo, _, _) => format!("`troupe {game} undo{at}` takes back its last round"),
        (Asked::Replay, _, _) => {
            format!("`troupe {game} replay --run {}{at}` replays it", run.number)
        }
    };
    format!(
        "{game} run {} ({}, {state}): {does}",
        run.number, run.spec_id
    )
}

/// The campaign directory as an error names it: its full path ("no session 1 in ." said
/// nothing).
pub fn full_path(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

/// ` --campaign DIR` for a command printed for the person to run: the campaign's full path,
/// so that the command does what it says from any directory (quoted when the shell would split
/// it).
pub fn campaign_flag(dir: &Path) -> String {
    let shown = full_path(dir);
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@,".contains(c);
    if shown.chars().all(plain) {
        format!(" --campaign {shown}")
    } else {
        format!(" --campaign '{}'", shown.replace('\'', "'\\''"))
    }
}

/// A command for the person to run on this campaign, quoted as the hints quote it:
/// "`troupe scene resume --campaign /home/me/mill`".
pub fn command(dir: &Path, command: &str) -> String {
    format!("`{command}{}`", campaign_flag(dir))
}
