//! Headless Chromium for the browser tests (the report's files, the table's live pages): the page's DOM after it ran (what a reader's
//! browser made of it, scripts included) and a screenshot decoded to RGB pixels.
//!
//! Needs `chromium` (scripts/setup installs it); `TROUPE_CHROMIUM` names another binary.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("TROUPE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|p| p.is_file())
}

// Where the browser tests always asked it; one definition for every crate's tests now.
pub use crate::in_ci;

/// The browser, or None after saying why the test is skipped (a missing browser fails in CI).
pub fn browser_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        let msg = format!(
            "chromium is not installed: {test} cannot run (scripts/setup installs it; TROUPE_CHROMIUM names another binary)"
        );
        assert!(!in_ci(), "{msg}");
        eprintln!("\n*** SKIPPED: {msg} ***\n");
    }
    found
}

/// Run headless Chromium on a local file with these extra arguments, within two minutes; its
/// standard output. (Written to a file: a page's DOM fills a pipe nobody reads while waiting.)
fn headless(browser: &Path, html: &Path, extra: &[String]) -> Vec<u8> {
    let profile = tempfile::tempdir().unwrap();
    let out_path = profile.path().join("stdout");
    let stdout = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", html.display()))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {}: {e}", browser.display()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium took over two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "chromium exited with {status}");
    std::fs::read(out_path).unwrap()
}

/// The page's DOM as the browser holds it once loaded (after any script on it ran).
pub fn dom(browser: &Path, html: &Path) -> String {
    String::from_utf8(headless(browser, html, &["--dump-dom".into()])).unwrap()
}

/// A screenshot of the page at this size, kept at `png` and decoded to RGB rows.
pub fn screenshot(browser: &Path, html: &Path, png: &Path, size: (u32, u32)) -> Vec<u8> {
    headless(
        browser,
        html,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={},{}", size.0, size.1),
        ],
    );
    let mut decoder = png::Decoder::new(std::io::Cursor::new(std::fs::read(png).unwrap()));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.line_size / info.width as usize;
    assert!(
        channels >= 3,
        "a colour screenshot, not {:?}",
        info.color_type
    );
    buf[..info.line_size * info.height as usize]
        .chunks(channels)
        .flat_map(|px| px[..3].to_vec())
        .collect()
}

/// How many pixels are within a few levels of this colour.
pub fn pixels_of(rgb: &[u8], colour: [u8; 3]) -> usize {
    rgb.chunks(3)
        .filter(|px| px.iter().zip(colour).all(|(x, y)| x.abs_diff(y) <= 8))
        .count()
}

/// Headless Chromium driven over WebDriver (`chromedriver`, Debian's `chromium-driver`): for
/// live pages that keep a request open, which `--dump-dom` would wait on forever.
pub struct WebDriver {
    child: std::process::Child,
    base: String,
    session: String,
    http: reqwest::Client,
}

impl WebDriver {
    /// A browser session, or None after saying why the test is skipped (fails in CI).
    pub async fn start_or_skip(test: &str) -> Option<WebDriver> {
        let browser = browser_or_skip(test)?;
        let driver = std::env::var("TROUPE_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // Its own process group, so that dropping the driver also ends the browser it started
        // (killing chromedriver alone left Chromium running after every test).
        let child = match Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                let msg = format!(
                    "{driver} cannot start ({e}): {test} cannot run (scripts/setup installs chromium-driver)"
                );
                assert!(!in_ci(), "{msg}");
                eprintln!("\n*** SKIPPED: {msg} ***\n");
                return None;
            }
        };
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let started = Instant::now();
        while http.get(format!("{base}/status")).send().await.is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let caps = serde_json::json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": browser, "args": ["--headless", "--no-sandbox", "--disable-gpu"]}}}});
        let r: serde_json::Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let session = r["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no browser session: {r}"))
            .to_string();
        Some(WebDriver {
            child,
            base,
            session,
            http,
        })
    }

    /// A WebDriver command of this session (`url`, `execute/sync`…): its reply.
    async fn send(&self, command: &str, body: serde_json::Value) -> serde_json::Value {
        let url = format!("{}/session/{}/{command}", self.base, self.session);
        let r = self.http.post(url).json(&body).send().await.unwrap();
        r.json().await.unwrap()
    }

    pub async fn open(&self, url: &str) {
        self.send("url", serde_json::json!({ "url": url })).await;
    }

    /// Run a script in the page; its return value.
    pub async fn eval(&self, script: &str) -> serde_json::Value {
        self.eval_with(script, serde_json::json!([])).await
    }

    /// Run a script in the page with these arguments (`arguments[0]`…); its return value.
    pub async fn eval_with(&self, script: &str, args: serde_json::Value) -> serde_json::Value {
        let body = serde_json::json!({ "script": script, "args": args });
        self.send("execute/sync", body).await["value"].clone()
    }
}

impl WebDriver {
    /// A screenshot of the window, kept at `png` and decoded to RGB rows.
    pub async fn screenshot(&self, png: &Path) -> Vec<u8> {
        use base64::Engine;
        let r: serde_json::Value = self
            .http
            .get(format!("{}/session/{}/screenshot", self.base, self.session))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(r["value"].as_str().unwrap_or_default())
            .unwrap();
        std::fs::write(png, &bytes).unwrap();
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.line_size / info.width as usize;
        buf[..info.line_size * info.height as usize]
            .chunks(channels)
            .flat_map(|px| px[..3].to_vec())
            .collect()
    }
}

impl Drop for WebDriver {
    /// The whole process group: chromedriver, and the browser and helpers it started.
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
