//! The output directory: refused when it already holds files (unless forced), and filled all at
//! once: the files are written into a temporary directory beside it, which is renamed into
//! place only when every file is written, so a failure or a kill never leaves half an export
//! that a later analysis would read as whole.

use std::path::{Path, PathBuf};

use crate::Error;

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Whether `out` may be written: new, empty, or (with `force`) replaced.
pub fn check(out: &Path, force: bool) -> Result<(), Error> {
    if out.is_file() {
        return Err(Error::OutIsFile {
            path: out.display().to_string(),
        });
    }
    let holds_files = std::fs::read_dir(out).is_ok_and(|mut entries| entries.next().is_some());
    if holds_files && !force {
        return Err(Error::OutNotEmpty {
            path: out.display().to_string(),
        });
    }
    Ok(())
}

/// A name beside `out` for a temporary directory (same filesystem, so renames are atomic).
fn beside(out: &Path, what: &str) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "export".into(), |n| n.to_string_lossy().to_string());
    out.with_file_name(format!(".{name}.{what}-{}", std::process::id()))
}

/// Run `fill` on a new temporary directory, then put it in `out`'s place (replacing what was
/// there, which `check` allowed). The temporary directory is removed when `fill` fails.
pub fn write_all(out: &Path, fill: impl FnOnce(&Path) -> Result<(), Error>) -> Result<(), Error> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let tmp = beside(out, "tmp");
    // A leftover from an export that was killed under this very process id.
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp).map_err(io(&tmp))?;
    if let Err(e) = fill(&tmp) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let old = beside(out, "old");
    let replacing = out.exists();
    if replacing {
        std::fs::rename(out, &old).map_err(io(out))?;
    }
    if let Err(e) = std::fs::rename(&tmp, out) {
        // Put back what was there rather than leave nothing.
        if replacing {
            let _ = std::fs::rename(&old, out);
        }
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(io(out)(e));
    }
    if replacing {
        std::fs::remove_dir_all(&old).map_err(io(&old))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_directory_with_files_is_refused_unless_forced_and_then_replaced() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("tables");
        std::fs::create_dir(&out).unwrap();
        check(&out, false).unwrap();
        std::fs::write(out.join("mine.txt"), "keep me").unwrap();
        let err = check(&out, false).unwrap_err().to_string();
        assert!(err.contains("tables") && err.contains("--force"), "{err}");
        check(&out, true).unwrap();
        write_all(&out, |dir| {
            std::fs::write(dir.join("a.parquet"), "a").map_err(io(dir))
        })
        .unwrap();
        assert_eq!(files(&out), ["a.parquet"]);
        assert_eq!(files(root.path()), ["tables"]);
        assert!(check(&out.join("a.parquet"), true).is_err());
    }

    #[test]
    fn a_failure_leaves_nothing_half_written() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("tables");
        let err = write_all(&out, |dir| {
            std::fs::write(dir.join("a.parquet"), "a").map_err(io(dir))?;
            Err(Error::NotBuilt)
        });
        assert!(matches!(err, Err(Error::NotBuilt)));
        assert!(files(root.path()).is_empty(), "{:?}", files(root.path()));
    }
}
