//! The research surface, as functions the `troupe` binary calls: `troupe simulate` (a batch of
//! all-AI sessions, each a `troupe play` child process; shards over many machines, Slurm arrays
//! and Kubernetes Indexed Jobs; a batch's spend limit; the checks before a single run starts),
//! `troupe bench` (the bench suite played as such a batch and scored), and the readers of what
//! was played: `troupe log`, `stats` and `report`, and a game's runs (`troupe encounter log`,
//! `troupe scene stats`…).

pub mod bench;
pub mod encounters;
pub mod model_spec;
pub mod preflight;
pub mod research;
pub mod runs;
pub mod scenes;
pub mod shard;
pub mod simulate;
pub mod spend;

/// Copy a directory tree (a shard's run into the merged batch, a campaign's prompts into a
/// run's directory).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}
