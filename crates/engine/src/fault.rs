//! What went wrong with a campaign's files, in words a GM can act on. Every SQLite failure of
//! the session store and every I/O failure of a session log is sorted here, in one place: a
//! damaged or foreign `campaign.db`, a full disk, a read-only directory, a database another
//! program holds. Whatever else fails keeps its own message.

use std::path::Path;

use rusqlite::ErrorCode;

/// A fault of a campaign file the user can do something about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The file is not an SQLite database at all (SQLITE_NOTADB): overwritten, or another file.
    NotADatabase,
    /// SQLite found the database damaged (SQLITE_CORRUPT), e.g. cut short.
    Damaged,
    /// The file is shorter than its own header says: it was cut short (copied half, truncated).
    Truncated { bytes: u64, expected: u64 },
    /// Zero bytes, though the campaign has been played (session logs or a WAL file say so).
    Emptied,
    /// No space left on the device (SQLITE_FULL, ENOSPC).
    DiskFull,
    /// The file would grow past the size this process may write (EFBIG, `ulimit -f`).
    TooLarge,
    /// A read or write failed without saying why (SQLITE_IOERR): full, failing or removed
    /// storage, or a file-size limit (SQLite reports EFBIG as a plain I/O error).
    IoFailed(String),
    /// The file or its directory cannot be written (SQLITE_READONLY, EROFS, EACCES, EPERM).
    ReadOnly,
    /// The file could not be opened at all (SQLITE_CANTOPEN).
    CannotOpen,
    /// Another connection kept the database locked past the busy timeout (SQLITE_BUSY/LOCKED).
    Busy,
}

/// What the user can do when `campaign.db` is unreadable; the file itself is never touched.
const RECOVER: &str = "troupe has not changed it. Restore campaign.db from a backup; or move it \
    aside (`mv campaign.db campaign.db.broken`): the session logs in logs/ hold a copy of every \
    event (`troupe log`, `stats` and `report` read them without the database), and `troupe play` \
    then starts a new campaign.db (the campaign's memory starts over)";

/// What happens to the session after a write failed.
const NOTHING_LOST: &str = "nothing committed was lost: campaign.db keeps every step saved \
    before the fault, and `troupe resume` re-runs the step in flight and rewrites a log cut short";

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::NotADatabase => write!(
                f,
                "this is not a troupe database (not SQLite at all: overwritten, or another file); {RECOVER}."
            ),
            Fault::Damaged => write!(
                f,
                "the database is damaged (SQLite reports it malformed, e.g. the file was cut short); {RECOVER}."
            ),
            Fault::Truncated { bytes, expected } => write!(
                f,
                "the database was cut short ({bytes} bytes of the {expected} its header records); {RECOVER}."
            ),
            Fault::Emptied => write!(
                f,
                "the database is empty (0 bytes) although this campaign has been played (its session logs are here): the file was truncated or replaced; {RECOVER}."
            ),
            Fault::DiskFull => write!(
                f,
                "the disk is full; {NOTHING_LOST}. Free some space, then run `troupe resume` to continue the session (or run the command again)."
            ),
            Fault::TooLarge => write!(
                f,
                "the file grew past the size this process may write (a file-size limit, `ulimit -f`); {NOTHING_LOST}. Raise the limit, then run `troupe resume` to continue the session (or run the command again)."
            ),
            Fault::IoFailed(detail) => write!(
                f,
                "reading or writing the file failed ({detail}): the disk may be full, failing or gone, or a file-size limit (`ulimit -f`) was reached; {NOTHING_LOST}. Free space or fix the disk, then run `troupe resume` to continue the session (or run the command again)."
            ),
            Fault::ReadOnly => write!(
                f,
                "cannot write here (read-only file system or no permission). troupe writes campaign.db, campaign.lock and logs/ in the campaign directory: make it writable, or copy the campaign somewhere writable and point --campaign at it. Nothing was changed."
            ),
            Fault::CannotOpen => write!(
                f,
                "cannot open the database (its directory may be missing, unreadable or read-only); check the campaign directory's permissions. Nothing was changed."
            ),
            Fault::Busy => write!(
                f,
                "another program is using this campaign's database (it stayed locked for 5 seconds): another troupe playing this campaign, or a database tool holding it open. Finish or close it, then try again. Nothing was changed."
            ),
        }
    }
}

impl Fault {
    /// The fault behind an SQLite error, when it is one the user can act on.
    pub fn of_sqlite(e: &rusqlite::Error) -> Option<Fault> {
        Fault::of_code(e.sqlite_error_code()?, &e.to_string())
    }

    /// The fault behind an SQLite failure kind; `detail` is SQLite's own words for it.
    pub fn of_code(code: ErrorCode, detail: &str) -> Option<Fault> {
        Some(match code {
            ErrorCode::NotADatabase => Fault::NotADatabase,
            ErrorCode::DatabaseCorrupt => Fault::Damaged,
            ErrorCode::DiskFull => Fault::DiskFull,
            ErrorCode::SystemIoFailure => Fault::IoFailed(detail.to_string()),
            ErrorCode::ReadOnly => Fault::ReadOnly,
            ErrorCode::CannotOpen => Fault::CannotOpen,
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Fault::Busy,
            _ => return None,
        })
    }

    /// The fault behind a campaign-memory error (the memory shares campaign.db).
    pub fn of_memory(e: &troupe_memory::Error) -> Option<Fault> {
        match e {
            troupe_memory::Error::Db {
                code: Some(code),
                message,
                ..
            } => Fault::of_code(*code, message),
            _ => None,
        }
    }

    /// The fault behind a failed file operation (a session log, the lock file).
    pub fn of_io(e: &std::io::Error) -> Option<Fault> {
        use std::io::ErrorKind;
        Some(match e.kind() {
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Fault::DiskFull,
            ErrorKind::FileTooLarge => Fault::TooLarge,
            ErrorKind::ReadOnlyFilesystem | ErrorKind::PermissionDenied => Fault::ReadOnly,
            _ => return None,
        })
    }

    /// A fault of `campaign.db` visible before SQLite opens it: emptied, or cut short. SQLite
    /// would take an empty file for a new database and write a fresh one over the loss, and
    /// may read a truncated one without noticing until it reaches a missing page.
    pub fn of_db_file(db: &Path, campaign_dir: &Path) -> Option<Fault> {
        let bytes = std::fs::metadata(db).ok()?.len();
        let wal = wal_bytes(db);
        if bytes == 0 {
            // A WAL database is never empty once created (its header page is written when
            // WAL mode is set); with no logs and no WAL it is a new file, nothing to lose.
            return (wal > 0 || has_logs(campaign_dir)).then_some(Fault::Emptied);
        }
        // With a WAL, pages may legitimately live there until a checkpoint copies them. And
        // while a WAL or its index exists a connection may have the file open, perhaps in this
        // very process: reading the header opens and closes a descriptor of the file, and
        // closing one drops every POSIX lock the process holds on it. Another process would
        // then take itself for the last connection and delete the WAL under ours.
        if wal > 0 || sibling(db, "-wal").exists() || sibling(db, "-shm").exists() {
            return None;
        }
        let expected = header_size(db)?;
        (bytes < expected).then_some(Fault::Truncated { bytes, expected })
    }
}

fn wal_bytes(db: &Path) -> u64 {
    std::fs::metadata(sibling(db, "-wal")).map_or(0, |m| m.len())
}

/// SQLite's file beside the database: its `-wal` or `-shm`.
fn sibling(db: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// Whether anything was played here: a mirror of a session, or of an encounter or scene run.
fn has_logs(campaign_dir: &Path) -> bool {
    !troupe_campaign::CampaignDir::new(campaign_dir)
        .mirrors()
        .is_empty()
}

/// The database size SQLite's header records (page size × page count), when the header says
/// it is valid (its "version valid for" matches the change counter) and the file is SQLite.
fn header_size(db: &Path) -> Option<u64> {
    use std::io::Read;
    let mut header = [0u8; 100];
    std::fs::File::open(db).ok()?.read_exact(&mut header).ok()?;
    if !header.starts_with(b"SQLite format 3\0") {
        return None;
    }
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(header.get(at..at + 4)?.try_into().ok()?))
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536,
        n => u64::from(n),
    };
    let (change_counter, valid_for, pages) = (be32(24)?, be32(92)?, be32(28)?);
    (change_counter == valid_for && pages > 0).then_some(page_size * u64::from(pages))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_that_people_can_fix_are_recognised() {
        let full = std::io::Error::from_raw_os_error(28); // ENOSPC
        let big = std::io::Error::from_raw_os_error(27); // EFBIG
        let rofs = std::io::Error::from_raw_os_error(30); // EROFS
        assert_eq!(Fault::of_io(&full), Some(Fault::DiskFull));
        assert_eq!(Fault::of_io(&big), Some(Fault::TooLarge));
        assert_eq!(Fault::of_io(&rofs), Some(Fault::ReadOnly));
        assert_eq!(Fault::of_io(&std::io::Error::other("x")), None);
    }

    #[test]
    fn a_new_empty_file_is_not_a_fault_but_an_emptied_campaign_is() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("campaign.db");
        std::fs::write(&db, b"").unwrap();
        assert_eq!(Fault::of_db_file(&db, dir.path()), None);
        std::fs::create_dir(dir.path().join("logs")).unwrap();
        std::fs::write(dir.path().join("logs/session-1.jsonl"), b"{}\n").unwrap();
        assert_eq!(Fault::of_db_file(&db, dir.path()), Some(Fault::Emptied));
    }

    #[test]
    fn a_database_shorter_than_its_header_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("campaign.db");
        {
            let conn = rusqlite::Connection::open(&db).unwrap();
            conn.execute_batch(
                "CREATE TABLE t (x TEXT); INSERT INTO t SELECT hex(randomblob(3000)) \
                 FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4);",
            )
            .unwrap();
        }
        let whole = std::fs::metadata(&db).unwrap().len();
        assert_eq!(Fault::of_db_file(&db, dir.path()), None);
        let file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
        file.set_len(whole / 2).unwrap();
        assert_eq!(
            Fault::of_db_file(&db, dir.path()),
            Some(Fault::Truncated {
                bytes: whole / 2,
                expected: whole
            })
        );
    }
}
