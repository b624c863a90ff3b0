//! `troupe serve` as people use it: the real binary on a free port, real HTTP, the campaign's
//! real SQLite log, a real SIGKILL, and what each seat's stream carries, byte for byte.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A running `troupe serve` and the links it printed.
pub struct Served {
    child: Child,
    pub base: String,
    pub table: String,
    /// Seat → key, from the printed links.
    pub keys: BTreeMap<String, String>,
    pub stdout: String,
    http: reqwest::Client,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `troupe serve` in `dir` with these arguments; wait for its address and links.
pub fn serve(dir: &Path, args: &[&str]) -> Served {
    let bin = assert_cmd::cargo::cargo_bin("troupe");
    let mut child = std::process::Command::new(bin)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("TROUPE_RETRY_SCALE", "0.001")
        .env("TROUPE_DETECTOR", "pattern")
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let (mut stdout, mut base, mut table) = (String::new(), String::new(), String::new());
    let mut keys = BTreeMap::new();
    let started = Instant::now();
    let mut line = String::new();
    while started.elapsed() < Duration::from_secs(60) {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        stdout.push_str(&line);
        if let Some(rest) = line.trim().strip_prefix("Serving table ") {
            let (id, url) = rest.split_once(" at ").unwrap();
            table = id.to_string();
            base = url.trim_end_matches('/').to_string();
            if stdout.contains("Reopening") {
                break;
            }
        }
        if let Some((_, link)) = line.trim().rsplit_once(' ')
            && let Some((path, key)) = link.split_once("#key=")
        {
            let seat = path.rsplit('/').next().unwrap().to_string();
            keys.insert(seat.clone(), key.to_string());
            if seat == "watch" {
                break;
            }
        }
    }
    assert!(!base.is_empty(), "troupe serve printed no address:\n{stdout}");
    // The rest of its output is not read: let it drain so the server never blocks on it.
    std::thread::spawn(move || for _ in out.lines() {});
    Served {
        child,
        base,
        table,
        keys,
        stdout,
        http: reqwest::Client::new(),
    }
}

impl Served {
    pub fn url(&self, seat: &str, path: &str) -> String {
        format!("{}/t/{}/{seat}{path}", self.base, self.table)
    }

    pub async fn feed(&self, seat: &str, key: &str, after: Option<u64>) -> Value {
        self.feed_since(seat, key, after, None).await
    }

    /// The seat's stream as the page reads it: held open until the table changes past
    /// `version`.
    pub async fn feed_since(
        &self,
        seat: &str,
        key: &str,
        after: Option<u64>,
        version: Option<u64>,
    ) -> Value {
        let mut url = self.url(seat, "/feed?");
        if let Some(a) = after {
            url.push_str(&format!("after={a}&"));
        }
        if let Some(v) = version {
            url.push_str(&format!("version={v}"));
        }
        let r = self
            .http
            .get(url)
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    }

    /// The raw bytes of a seat's whole stream.
    pub async fn raw_feed(&self, seat: &str) -> String {
        let r = self
            .http
            .get(self.url(seat, "/feed"))
            .bearer_auth(&self.keys[seat])
            .send()
            .await
            .unwrap();
        r.text().await.unwrap()
    }

    pub async fn post(&self, seat: &str, path: &str, key: &str, body: Value) -> (u16, String) {
        let r = self
            .http
            .post(self.url(seat, path))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap_or_default())
    }

    /// Wait until the seat has an ask or the session has ended; the seat's state then.
    pub async fn next_ask(&self, seat: &str) -> Value {
        let started = Instant::now();
        let mut version = None;
        loop {
            let f = self
                .feed_since(seat, &self.keys[seat], Some(u64::MAX), version)
                .await;
            version = f["version"].as_u64();
            let state = &f["state"];
            if !state["ask"].is_null() || !state["ended"].is_null() || !state["stopped"].is_null() {
                return state.clone();
            }
            assert!(started.elapsed() < Duration::from_secs(60), "no ask for {seat}: {state}");
        }
    }

    pub async fn answer(&self, seat: &str, state: &Value, values: Value) -> (u16, String) {
        let body = json!({"ask_id": state["ask"]["id"], "answer": {"answer": "decide", "values": values}});
        self.post(seat, "/answer", &self.keys[seat], body).await
    }

    pub async fn command(&self, seat: &str, state: &Value, name: &str, values: Value) {
        let body = json!({"ask_id": state["ask"]["id"],
                          "answer": {"answer": "command", "name": name, "values": values}});
        let (status, text) = self.post(seat, "/answer", &self.keys[seat], body).await;
        assert_eq!(status, 204, "{text}");
    }

    /// Answer the GM's asks as a plain GM would, until the session ends or `stop` says so.
    pub async fn play_gm(&self, mut stop: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let state = self.next_ask("gm").await;
            if state["ask"].is_null() || stop(&state) {
                return state;
            }
            let (status, text) = self.answer("gm", &state, gm_answer(&state["ask"]["ask"])).await;
            if status == 429 {
                // Faster than any person: the seat's rate limit asks us to wait.
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            assert_eq!(status, 204, "{text}");
        }
    }
}

/// What a plain GM answers to each decision.
pub fn gm_answer(ask: &Value) -> Value {
    match ask["decision"].as_str().unwrap() {
        "narration" => json!({"text": "A derelict freighter drifts across the bow."}),
        "answers" => json!({"finish": true}),
        "adjudicate" => json!({"ruling": "accept"}),
        "override" => json!({"override": "keep"}),
        "outcome" => json!({"text": "It works, mostly."}),
        "insight" => json!({"answer": "They are scared."}),
        "interject" => json!({"text": ""}),
        "review" => json!({"keep": "corrected"}),
        "failure" => json!({"choice": "skip"}),
        other => panic!("a GM ask this test does not know: {other}"),
    }
}

fn log_of(dir: &Path, n: u32) -> Vec<Value> {
    read_log(&dir.join(format!("logs/session-{n}.jsonl")))
}

#[tokio::test]
async fn a_gm_in_the_browser_plays_a_session_with_an_ai_player() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3", "--turns", "2"]);
    assert_eq!(
        s.keys.keys().collect::<Vec<_>>(),
        ["alex", "gm", "watch"],
        "{}",
        s.stdout
    );
    let end = s.play_gm(|_| false).await;
    assert_eq!(end["ended"], "played the 2 turns asked for");

    // The log is a session like any other, with the GM's decisions in it.
    let log = log_of(dir.path(), 1);
    assert_eq!(of_type(&log, "gm_narration").len(), 2);
    assert_eq!(of_type(&log, "turn_completed").len(), 2);
    assert_eq!(of_type(&log, "gm_adjudication").len(), 2);

    // The watcher sees the story; a reader who has every line gets nothing twice.
    let watch = s.feed("watch", &s.keys["watch"], None).await;
    let lines = watch["lines"].as_array().unwrap();
    let texts: Vec<&str> = lines.iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert!(texts.contains(&"A derelict freighter drifts across the bow."));
    assert!(texts.iter().any(|t| t.starts_with("Zara-7 attempts: ")), "{texts:?}");
    let last = lines.last().unwrap()["id"].as_u64().unwrap();
    let again = s.feed("watch", &s.keys["watch"], Some(last)).await;
    assert_eq!(again["lines"], json!([]));
    let ids: Vec<u64> = lines.iter().map(|l| l["id"].as_u64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

#[tokio::test]
async fn a_seat_without_its_key_is_refused_and_keys_are_stored_only_hashed() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3", "--turns", "1"]);
    let client = reqwest::Client::new();
    let no_key = client.get(s.url("gm", "/feed")).send().await.unwrap();
    assert_eq!(no_key.status(), 401);
    assert!(no_key.text().await.unwrap().contains("key is missing or wrong"));
    // Another seat's key does not open this one.
    let theirs = client
        .get(s.url("gm", "/feed"))
        .bearer_auth(&s.keys["alex"])
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), 401);
    let unknown = client
        .get(s.url("nobody", "/feed"))
        .bearer_auth(&s.keys["gm"])
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    for key in s.keys.values() {
        assert_eq!(key.len(), 32, "128 bits in hex");
    }
    s.play_gm(|_| false).await;
    // No key is in the table file, the log, its database or a report.
    let mut stored = std::fs::read_to_string(dir.path().join("table.json")).unwrap();
    stored += &std::fs::read_to_string(dir.path().join("logs/session-1.jsonl")).unwrap();
    stored += &String::from_utf8_lossy(&std::fs::read(dir.path().join("campaign.db")).unwrap());
    run(dir.path(), &["report", "-o", "report.html"]);
    stored += &std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for key in s.keys.values() {
        assert!(!stored.contains(key.as_str()), "a key was written down");
    }
}

#[tokio::test]
async fn a_killed_server_reopens_the_table_where_it_was_and_streams_resume_without_repeats() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let first = serve(dir.path(), &["--seed", "3", "--turns", "2"]);
    // Play into the first turn: narration answered, the table moves on to the AI.
    let at_adjudication = first
        .play_gm(|s| s["ask"]["ask"]["decision"] == "adjudicate")
        .await;
    assert_eq!(at_adjudication["ask"]["ask"]["decision"], "adjudicate");
    let seen = first.feed("watch", &first.keys["watch"], None).await;
    let seen_lines = seen["lines"].as_array().unwrap().clone();
    let last_seen = seen_lines.last().unwrap()["id"].as_u64().unwrap();
    let keys = first.keys.clone();
    let mut first = first;
    // SIGKILL: no chance to tidy up.
    first.child.kill().unwrap();
    first.child.wait().unwrap();

    let second = serve(dir.path(), &[]);
    assert!(second.stdout.contains("Reopening the table of session 1"), "{}", second.stdout);
    let mut second = second;
    second.keys = keys;
    // The same links work; the table asks again what it was asking.
    let state = second.next_ask("gm").await;
    assert_eq!(state["ask"]["ask"]["decision"], "adjudicate");
    // A page that reconnects after its last line gets only what came since.
    let resumed = second.feed("watch", &second.keys["watch"], Some(last_seen)).await;
    for l in resumed["lines"].as_array().unwrap() {
        assert!(l["id"].as_u64().unwrap() > last_seen);
    }
    let whole = second.feed("watch", &second.keys["watch"], None).await;
    assert_eq!(
        whole["lines"].as_array().unwrap()[..seen_lines.len()],
        seen_lines[..],
        "the stream before the kill is the same after it"
    );
    let end = second.play_gm(|_| false).await;
    assert_eq!(end["ended"], "played the 2 turns asked for");
    let log = log_of(dir.path(), 1);
    let seqs: Vec<u64> = log.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "no event lost or repeated");
    assert_eq!(of_type(&log, "gm_adjudication").len(), 2);
    assert_eq!(of_type(&log, "session_resumed").len(), 1);
}
