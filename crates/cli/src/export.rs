//! `troupe export`: a session, a campaign (its encounter runs and scenes too) or a batch as
//! Parquet tables (troupe-export). The command exists in every build; one built without
//! feature `export` says how to get the writer instead of exporting.

use std::path::Path;
use std::process::ExitCode;

pub fn export(path: &Path, out: &Path, force: bool) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let done = troupe_export::export(path, out, force)?;
    let files: Vec<String> = done
        .files
        .iter()
        .map(|(name, rows)| format!("  {name}: {rows} row{}", if *rows == 1 { "" } else { "s" }))
        .collect();
    println!(
        "Exported {} ({}) to {} in {:.1} s (columns: docs/export-schema.md):\n{}",
        path.display(),
        done.describe(),
        done.out.display(),
        started.elapsed().as_secs_f64(),
        files.join("\n")
    );
    Ok(ExitCode::SUCCESS)
}
