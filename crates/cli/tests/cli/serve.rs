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
    start(dir, args, |stdout, line| {
        // A reopened table prints no links; a new one ends its links with the watcher's.
        (line.starts_with("Serving table ") && stdout.contains("Reopening"))
            || line.contains("/watch#key=")
    })
}

/// Start `troupe serve --host ROOT`; wait until it names its `n` tables. The tables' ids by
/// campaign directory name (the served table is the first; `Served::table` switches).
pub fn serve_host(root: &Path, n: usize) -> (Served, BTreeMap<String, String>) {
    let args = ["--host", root.to_str().unwrap()];
    let s = start(root, &args, |stdout, _| {
        stdout.lines().filter(|l| l.starts_with("  table ")).count() == n
    });
    let tables = s
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  table "))
        .map(|l| {
            let (id, dir) = l.split_once(": ").unwrap();
            let name = Path::new(dir)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string();
            (name, id.to_string())
        })
        .collect();
    (s, tables)
}

/// Spawn `troupe serve` and read its output until `done` says (given all output so far and the
/// last line) that it has printed what the test needs.
pub fn start(dir: &Path, args: &[&str], done: impl Fn(&str, &str) -> bool) -> Served {
    start_listening(dir, "127.0.0.1:0", args, done)
}

/// `troupe serve` in `dir` as [`serve`] starts it, listening on `listen` (a restart on the
/// port its pages know).
pub fn serve_on(dir: &Path, listen: &str, args: &[&str]) -> Served {
    start_listening(dir, listen, args, |stdout, line| {
        (line.starts_with("Serving table ") && stdout.contains("Reopening"))
            || line.contains("/watch#key=")
    })
}

fn start_listening(
    dir: &Path,
    listen: &str,
    args: &[&str],
    done: impl Fn(&str, &str) -> bool,
) -> Served {
    let bin = assert_cmd::cargo::cargo_bin("troupe");
    let mut child = std::process::Command::new(bin)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("TROUPE_RETRY_SCALE", "0.001")
        .args(["serve", "--listen", listen])
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
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Serving ") {
            let (what, url) = rest.split_once(" at ").unwrap();
            table = what.strip_prefix("table ").unwrap_or_default().to_string();
            base = url.trim_end_matches('/').to_string();
        }
        if let Some(id) = l.strip_prefix("table ").and_then(|t| t.split(':').next())
            && table.is_empty()
        {
            table = id.to_string();
        }
        if let Some((_, link)) = l.rsplit_once(' ')
            && let Some((path, key)) = link.split_once("#key=")
        {
            let seat = path.rsplit('/').next().unwrap().to_string();
            keys.insert(seat, key.to_string());
        }
        if done(&stdout, l) {
            break;
        }
    }
    assert!(
        !base.is_empty(),
        "troupe serve printed no address:\n{stdout}"
    );
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
        let r = self.http.get(url).bearer_auth(key).send().await.unwrap();
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
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no ask for {seat}: {state}"
            );
        }
    }

    pub async fn answer(&self, seat: &str, state: &Value, values: Value) -> (u16, String) {
        let body =
            json!({"ask_id": state["ask"]["id"], "answer": {"answer": "decide", "values": values}});
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
            let (status, text) = self
                .answer("gm", &state, gm_answer(&state["ask"]["ask"]))
                .await;
            if status == 429 {
                // Faster than any person: the seat's rate limit asks us to wait.
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            assert_eq!(status, 204, "{text}");
        }
    }
}

impl Served {
    /// Answer every ask of these seats (a GM and people) until the session ends.
    pub async fn play_seats(&self, seats: &[&str]) -> Value {
        self.play_seats_answering(seats, |seat, ask| {
            if seat == "gm" {
                gm_answer(ask)
            } else {
                player_answer(ask)
            }
        })
        .await
    }

    /// Answer every ask of these seats with `answer(seat, ask)` until the session ends.
    pub async fn play_seats_answering(
        &self,
        seats: &[&str],
        answer: impl Fn(&str, &Value) -> Value,
    ) -> Value {
        let started = Instant::now();
        loop {
            for seat in seats {
                let state =
                    self.feed(seat, &self.keys[*seat], Some(u64::MAX)).await["state"].clone();
                if !state["ended"].is_null() {
                    return state;
                }
                if state["ask"].is_null() {
                    continue;
                }
                let values = answer(seat, &state["ask"]["ask"]);
                let (status, text) = self.answer(seat, &state, values).await;
                assert!(status == 204 || status == 409, "{status} {text}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "the session did not end"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// What a plain person answers to each decision of their character's.
pub fn player_answer(ask: &Value) -> Value {
    match ask["decision"].as_str().unwrap() {
        "questions" => json!({"questions": []}),
        "plan" => json!({"plan": "Look around carefully."}),
        "discussion" => json!({"message": "Let's be careful.", "on": ""}),
        "vote" => json!({"vote": ask["fields"][0]["options"][0]["value"]}),
        "directive" => json!({"directive": "Scan the room."}),
        "action" => json!({"action": "I scan the room for life signs.", "dialogue": "",
                           "task_type": "lasers", "prepared": false, "expert": true, "helping": ""}),
        "insight_question" => json!({"question": "What are they hiding?"}),
        "insight_decision" => json!({"change_action": false}),
        "reaction" => json!({"reaction": "I nod."}),
        other => panic!("a player ask this test does not know: {other}"),
    }
}

/// The names of the table commands a seat's pending ask offers.
pub fn command_names(state: &Value) -> Vec<&str> {
    state["ask"]["ask"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
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
    assert!(
        texts.iter().any(|t| t.starts_with("Zara-7 attempts: ")),
        "{texts:?}"
    );
    let last = lines.last().unwrap()["id"].as_u64().unwrap();
    let again = s.feed("watch", &s.keys["watch"], Some(last)).await;
    assert_eq!(again["lines"], json!([]));
    let ids: Vec<u64> = lines.iter().map(|l| l["id"].as_u64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

/// What the process writes down of a played session holds no seat's key: its log and a report
/// of it. (A seat opened only with its own key, and the table file and database holding only
/// its hash, are troupe-serve's routes tests: requests.rs.)
#[tokio::test]
async fn no_key_is_in_the_log_or_a_report_of_a_session_played_at_the_table() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3", "--turns", "1"]);
    assert_eq!(s.keys.len(), 3, "{}", s.stdout);
    s.play_gm(|_| false).await;
    let mut written = std::fs::read_to_string(dir.path().join("logs/session-1.jsonl")).unwrap();
    assert!(written.contains("gm_narration"), "the session was played");
    written += &String::from_utf8_lossy(&std::fs::read(dir.path().join("campaign.db")).unwrap());
    run(dir.path(), &["report", "-o", "report.html"]);
    written += &std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for key in s.keys.values() {
        assert!(!written.contains(key.as_str()), "a key was written down");
    }
}

/// SIGKILL mid-turn, and `troupe serve` again: the table reopens where it was, behind the same
/// links, and the session plays on with no event lost or repeated. (A page's stream resuming
/// after its last line, the same lines with the same ids across a restart, is troupe-serve's
/// routes test: streams.rs.)
#[tokio::test]
async fn a_killed_server_reopens_the_table_where_it_was() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let first = serve(dir.path(), &["--seed", "3", "--turns", "2"]);
    // Play into the first turn: narration answered, the table moves on to the AI.
    let at_adjudication = first
        .play_gm(|s| s["ask"]["ask"]["decision"] == "adjudicate")
        .await;
    assert_eq!(at_adjudication["ask"]["ask"]["decision"], "adjudicate");
    let keys = first.keys.clone();
    let mut first = first;
    // SIGKILL: no chance to tidy up.
    first.child.kill().unwrap();
    first.child.wait().unwrap();

    let second = serve(dir.path(), &[]);
    assert!(
        second.stdout.contains("Reopening the table of session 1"),
        "{}",
        second.stdout
    );
    let mut second = second;
    second.keys = keys;
    // The same links work; the table asks again what it was asking.
    let state = second.next_ask("gm").await;
    assert_eq!(state["ask"]["ask"]["decision"], "adjudicate");
    let end = second.play_gm(|_| false).await;
    assert_eq!(end["ended"], "played the 2 turns asked for");
    let log = log_of(dir.path(), 1);
    let seqs: Vec<u64> = log.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "no event lost or repeated"
    );
    assert_eq!(of_type(&log, "gm_adjudication").len(), 2);
    assert_eq!(of_type(&log, "session_resumed").len(), 1);
}

/// A small deterministic generator: the property's cases are the same on every run.
struct Dice(u64);
impl Dice {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// The party campaign with GM prep whose every note is a secret token.
fn party_with_notes(dir: &Path, notes: &[String]) {
    let path = dir.join("party.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    c["gm"] = json!({"seat": "person", "scenario": {"text": "A beacon calls from a dead moon.",
                     "notes": notes}});
    std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
}

#[tokio::test]
async fn whispers_and_gm_notes_reach_no_seat_they_are_not_for_byte_for_byte() {
    let agents = ["alex", "sam", "priya"];
    let scopes = ["both", "player_only", "character_only"];
    for seed in 1..=3u64 {
        let dir = campaign_with(&["party.json", "party.replay.jsonl"]);
        let notes: Vec<String> = (0..2).map(|i| format!("GMNOTE{seed}X{i}QZ")).collect();
        party_with_notes(dir.path(), &notes);
        let s = serve(dir.path(), &["party.json", "--seed", "5", "--turns", "1"]);
        let mut dice = Dice(seed);
        // (token, the seat it is for: an agent, or None for the whole table)
        let mut planted: Vec<(String, Option<&str>)> = Vec::new();
        for i in 0..8 {
            // A command is performed and the GM asked again: each whisper answers a new ask.
            let state = s.next_ask("gm").await;
            let to = if dice.next(4) == 0 {
                None
            } else {
                Some(agents[dice.next(3)])
            };
            let token = format!("WHISPER{seed}N{i}QZ");
            let scope = scopes[dice.next(3)];
            s.command(
                "gm",
                &state,
                "whisper",
                json!({"to": to.unwrap_or("all"), "scope": scope, "text": format!("psst {token}")}),
            )
            .await;
            planted.push((token, to));
        }
        s.play_gm(|_| false).await;
        for seat in ["alex", "sam", "priya", "watch", "gm"] {
            let raw = s.raw_feed(seat).await;
            for (token, to) in &planted {
                let allowed = match (seat, to) {
                    ("gm", _) => true,
                    ("watch", _) => false,
                    (_, None) => true,
                    (seat, Some(agent)) => seat == *agent,
                };
                assert_eq!(
                    raw.contains(token.as_str()),
                    allowed,
                    "seed {seed}: {token} for {to:?} on {seat}'s stream"
                );
            }
            for note in &notes {
                assert_eq!(
                    raw.contains(note.as_str()),
                    seat == "gm",
                    "seed {seed}: a GM note on {seat}'s stream"
                );
            }
        }
        // The page itself is the same shell for every seat: nothing of the table is in it.
        let page = reqwest::get(s.url("alex", ""))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(!page.contains("QZ"));
    }
}

#[tokio::test]
async fn a_person_plays_their_seat_hands_it_to_an_ai_and_takes_it_back() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(
        dir.path(),
        &["--seed", "3", "--turns", "3", "--person", "alex"],
    );
    assert!(s.stdout.contains("people play Zara-7"), "{}", s.stdout);
    let gm = s.next_ask("gm").await;
    s.answer("gm", &gm, json!({"text": "The airlock hisses open."}))
        .await;
    // Alex's questions, then plan, as a person answers them from the page.
    let q = s.next_ask("alex").await;
    assert_eq!(q["ask"]["ask"]["decision"], "questions");
    assert_eq!(q["sheet"]["character"]["name"], "Zara-7");
    let (status, _) = s.answer("alex", &q, json!({"questions": []})).await;
    assert_eq!(status, 204);
    let plan = s.next_ask("alex").await;
    assert_eq!(plan["ask"]["ask"]["decision"], "plan");
    // An answer that does not fit the form is refused and the ask keeps waiting.
    let (status, text) = s.answer("alex", &plan, json!({"plan": "  "})).await;
    assert_eq!(
        (status, text.contains("may not be empty")),
        (422, true),
        "{text}"
    );
    // A stale answer (an ask that is gone) is refused too.
    let stale = json!({"ask": {"id": 0}});
    assert_eq!(s.answer("alex", &stale, json!({"plan": "x"})).await.0, 409);
    // The GM lets an AI play Alex's seat while the table waits on Alex.
    let body = json!({"seat": "alex", "person": false});
    assert_eq!(
        s.post("gm", "/hand", &s.keys["gm"], body.clone()).await.0,
        204
    );
    // The watcher cannot hand seats over; a player cannot hand over someone else's.
    assert_eq!(
        s.post("watch", "/hand", &s.keys["watch"], body.clone())
            .await
            .0,
        403
    );
    // The AI plays on; Alex takes the seat back from the page.
    let (status, text) = s
        .post(
            "alex",
            "/hand",
            &s.keys["alex"],
            json!({"seat": "alex", "person": true}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    let end = s.play_seats(&["gm", "alex"]).await;
    assert_eq!(end["ended"], "played the 3 turns asked for");
    let log = log_of(dir.path(), 1);
    let handed: Vec<bool> = of_type(&log, "seat_handed")
        .iter()
        .map(|e| e["person"].as_bool().unwrap())
        .collect();
    assert_eq!(handed, [false, true], "both hand-overs are in the log");
    let watch = s.raw_feed("watch").await;
    assert!(watch.contains("An AI now plays Zara-7."));
    assert!(watch.contains("Alex takes their seat (Zara-7)."));
}

/// A seat that floods the running server is slowed down (429), and answered again once the
/// hub's rate window has passed: a real wait, as the window is the binary's own clock, which
/// cannot be injected from here (troupe_serve::hub reads `Instant::now` against the constant
/// `RATE_WINDOW`). Every other bad request's clear 4xx, and the table playing on beside the
/// flood, are troupe-serve's routes test (requests.rs), where the same router answers them.
#[tokio::test]
async fn a_flooding_seat_is_answered_again_once_the_rate_window_has_passed() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3", "--turns", "1"]);
    let gm = s.next_ask("gm").await;
    let mut limited = false;
    for _ in 0..=troupe_serve::hub::MAX_POSTS {
        let (status, _) = s.post("gm", "/answer", &s.keys["gm"], json!({})).await;
        if status == 429 {
            limited = true;
            break;
        }
        assert_eq!(status, 422, "an empty answer is refused as one");
    }
    assert!(limited, "a seat's flood of requests is rate limited");
    tokio::time::sleep(troupe_serve::hub::RATE_WINDOW).await;
    let (code, text) = s.answer("gm", &gm, json!({"text": "Still here."})).await;
    assert_eq!(code, 204, "{text}");
}

#[tokio::test]
async fn what_people_and_models_write_is_shown_as_text_in_the_browser() {
    let Some(browser) =
        crate::support::browser::WebDriver::start_or_skip("the table page's browser test").await
    else {
        return;
    };
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let name = r#"<img src=x onerror="document.title='pwned'">"#;
    let path = dir.path().join("campaign.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    c["characters"][0]["character"]["name"] = json!(name);
    std::fs::write(&path, c.to_string()).unwrap();
    // The model's action carries a script.
    let replies = dir.path().join("campaign.replay.jsonl");
    let text = std::fs::read_to_string(&replies).unwrap().replacen(
        r#"\"action\": \""#,
        r#"\"action\": \"<script>document.title='pwned'</script>I try "#,
        1,
    );
    std::fs::write(&replies, text).unwrap();
    let s = serve(dir.path(), &["--seed", "3", "--turns", "1"]);
    let gm = s.next_ask("gm").await;
    s.answer(
        "gm",
        &gm,
        json!({"text": "<b>Bold</b> <script>document.title='pwned'</script>"}),
    )
    .await;
    s.play_gm(|st| st["ask"]["ask"]["decision"] == "outcome")
        .await;

    for seat in ["watch", "gm"] {
        browser
            .open(&format!("{}#key={}", s.url(seat, ""), s.keys[seat]))
            .await;
        let started = Instant::now();
        let story = loop {
            let story = browser
                .eval("return document.getElementById('story').innerText")
                .await;
            let story = story.as_str().unwrap_or_default().to_string();
            if story.contains("attempts") {
                break story;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{seat}'s page never showed the story: {story}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert!(
            story.contains("<b>Bold</b> <script>document.title='pwned'</script>"),
            "{story}"
        );
        assert!(
            story.contains(&format!("{name} attempts: <script>")),
            "{story}"
        );
        let markup = browser
            .eval("return document.querySelectorAll('img, b, #story script, #ask script').length")
            .await;
        assert_eq!(markup, 0, "markup from the story ran in {seat}'s page");
        assert_eq!(browser.eval("return document.title").await, "troupe table");
    }
    // The GM's form names the character in its choices, as text.
    let options = browser.eval("return Array.from(document.querySelectorAll('option')).map(o => o.textContent).join('|')").await;
    assert!(options.as_str().unwrap().contains(name), "{options}");
}

/// Fill the page's form for the waiting ask with these values and press Send, as a person would.
pub const FILL_AND_SEND: &str = r#"
const values = arguments[0];
// Only the form of this ask (when given): the page may not show it yet.
if (arguments[1] !== undefined && document.getElementById('ask').dataset.ask !== String(arguments[1])) return false;
const form = document.querySelector('#ask form');
if (!form) return false;
for (const i of form.querySelectorAll('[data-name]')) {
  const v = values[i.dataset.name];
  if (v === undefined || v === null) continue;
  if (i.dataset.kind === 'flag') i.checked = !!v;
  else if (i.dataset.kind === 'lines') i.value = v.join('\n');
  else i.value = v;
}
form.querySelector('button[type=submit]').click();
return true;
"#;

#[tokio::test]
async fn a_gm_and_a_person_play_whole_turns_from_their_browsers() {
    use crate::support::browser::WebDriver;
    let Some(gm_page) = WebDriver::start_or_skip("the table's two-browser test").await else {
        return;
    };
    let Some(alex_page) = WebDriver::start_or_skip("the table's two-browser test").await else {
        return;
    };
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(
        dir.path(),
        &["--seed", "3", "--turns", "2", "--person", "alex"],
    );
    gm_page
        .open(&format!("{}#key={}", s.url("gm", ""), s.keys["gm"]))
        .await;
    alex_page
        .open(&format!("{}#key={}", s.url("alex", ""), s.keys["alex"]))
        .await;
    let pages = [("gm", &gm_page), ("alex", &alex_page)];
    let (end, answered) = play_from_pages(&s, &pages).await;
    assert_eq!(end["ended"], "played the 2 turns asked for");
    assert!(answered >= 10, "{answered} answers from the pages");
    let log = log_of(dir.path(), 1);
    let actions: Vec<&str> = of_type(&log, "character_action")
        .iter()
        .map(|e| e["action"]["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["I scan the room for life signs."; 2]);
    assert_eq!(
        of_type(&log, "gm_narration")[0]["text"],
        "A derelict freighter drifts across the bow."
    );
    // Both pages show the end, and the person's page showed their character's sheet.
    for (seat, page) in pages {
        let waited = Instant::now();
        loop {
            let status = page
                .eval("return document.getElementById('status').textContent")
                .await;
            if status
                .as_str()
                .unwrap_or_default()
                .contains("The session has ended")
            {
                break;
            }
            assert!(
                waited.elapsed() < Duration::from_secs(20),
                "{seat}: {status}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let sheet = alex_page
        .eval("return document.getElementById('sheet').innerText")
        .await;
    assert!(sheet.as_str().unwrap().contains("Zara-7"), "{sheet}");
    // The page as a person sees it: kept for looking at, and checked for its dark header and
    // white panels on the page's background (not a blank or unstyled page).
    let shot = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("table-alex.png");
    let rgb = alex_page.screenshot(&shot).await;
    let pixels = rgb.len() / 3;
    let header = crate::support::browser::pixels_of(&rgb, [0x22, 0x22, 0x22]);
    let panels = crate::support::browser::pixels_of(&rgb, [0xff, 0xff, 0xff]);
    let background = crate::support::browser::pixels_of(&rgb, [0xf6, 0xf5, 0xf2]);
    assert!(
        header * 50 > pixels,
        "the header is drawn: {header} of {pixels} ({})",
        shot.display()
    );
    assert!(
        panels * 10 > pixels,
        "the panels are drawn: {panels} of {pixels}"
    );
    assert!(
        background * 20 > pixels,
        "the style sheet is applied: {background} of {pixels}"
    );
}

/// Answer every ask of these seats from their pages, as people would (the form filled and
/// sent), until the session ends: its final state, and how many answers the pages sent.
async fn play_from_pages(
    s: &Served,
    pages: &[(&str, &crate::support::browser::WebDriver)],
) -> (Value, usize) {
    let started = Instant::now();
    let mut answered = 0;
    let end = 'play: loop {
        for &(seat, page) in pages {
            let state = s.feed(seat, &s.keys[seat], Some(u64::MAX)).await["state"].clone();
            if !state["ended"].is_null() {
                break 'play state;
            }
            if state["ask"].is_null() {
                continue;
            }
            let ask = &state["ask"]["ask"];
            let values = if seat == "gm" {
                gm_answer(ask)
            } else {
                player_answer(ask)
            };
            answer_from_page(s, seat, page, FILL_AND_SEND, &values, &state).await;
            answered += 1;
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the session did not end"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    (end, answered)
}

/// Answer the ask in `state` from the seat's page as a person would: once the page shows that
/// ask's form, `script` fills it with `values` and sends it; then wait until the seat's stream
/// has moved past the ask. When it never does, the page's errors and form are in the panic.
pub async fn answer_from_page(
    s: &Served,
    seat: &str,
    page: &crate::support::browser::WebDriver,
    script: &str,
    values: &Value,
    state: &Value,
) {
    let id = &state["ask"]["id"];
    let waited = Instant::now();
    while page.eval_with(script, json!([values, id])).await != json!(true) {
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "{seat}'s page shows no form"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    while s.feed(seat, &s.keys[seat], Some(u64::MAX)).await["state"]["ask"]["id"] == *id {
        if waited.elapsed() > Duration::from_secs(20) {
            let errors = page
                .eval("return Array.from(document.querySelectorAll('.error')).map(e => e.textContent).join('|')")
                .await;
            let form = page
                .eval("return document.getElementById('ask').innerHTML")
                .await;
            panic!("{seat}'s answer to ask {id} never arrived: {errors} {form}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Served {
    /// The server killed and started again by `start` (which waits for it as `serve` does),
    /// with the seats' keys as they were: the links people hold.
    pub fn restarted(self, start: impl FnOnce() -> Served) -> Served {
        let keys = self.keys.clone();
        drop(self);
        let mut s = start();
        s.keys = keys;
        s
    }
}

/// A GM and two people, each at their own browser, with an AI in the third chair: whole turns
/// of a party's session, every decision sent from a page.
#[tokio::test]
async fn a_gm_and_two_people_play_whole_turns_from_three_browsers() {
    use crate::support::browser::WebDriver;
    let mut pages = Vec::new();
    for _ in 0..3 {
        let Some(page) = WebDriver::start_or_skip("the table's three-browser test").await else {
            return;
        };
        pages.push(page);
    }
    let dir = campaign_with(&["party.json", "party.replay.jsonl"]);
    let s = serve(
        dir.path(),
        &[
            "party.json",
            "--seed",
            "3",
            "--turns",
            "1",
            "--person",
            "alex",
            "--person",
            "priya",
        ],
    );
    let seats = ["gm", "alex", "priya"];
    for (seat, page) in seats.iter().zip(&pages) {
        page.open(&format!("{}#key={}", s.url(seat, ""), s.keys[*seat]))
            .await;
    }
    let at: Vec<(&str, &WebDriver)> = seats.iter().copied().zip(pages.iter()).collect();
    let (end, answered) = play_from_pages(&s, &at).await;
    assert_eq!(end["ended"], "played the 1 turn asked for");
    assert!(answered >= 8, "{answered} answers from the pages");
    let log = log_of(dir.path(), 1);
    let acted: Vec<&str> = of_type(&log, "character_action")
        .iter()
        .map(|e| e["agent"].as_str().unwrap_or_default())
        .collect();
    for person in ["alex", "priya"] {
        assert!(
            acted.contains(&person),
            "{person} acted from the page: {acted:?}"
        );
    }
    // The AI in the third chair played its part too.
    assert!(
        of_type(&log, "model_call")
            .iter()
            .any(|e| e["agent"] == "sam"),
        "Sam's AI played"
    );
}

/// BENCHMARKS.md, "The table online": the time from a GM's command to its line reaching the
/// last of five connected streams, and the server's memory. Run with
/// `cargo test --release -p troupe-cli --test cli serve::stream_latency -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a benchmark: run it by name"]
async fn stream_latency_bench() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = std::sync::Arc::new(serve(dir.path(), &["--seed", "3"]));
    let rss = |pid: u32| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    let pid = s.child.id();
    let idle_rss = rss(pid);
    let readers = ["gm", "alex", "watch", "watch", "watch"];
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, String, Instant)>();
    for (i, seat) in readers.iter().enumerate() {
        let (s, tx, seat) = (s.clone(), tx.clone(), seat.to_string());
        tokio::spawn(async move {
            let (mut after, mut version) = (None, None);
            loop {
                let f = s.feed_since(&seat, &s.keys[&seat], after, version).await;
                let now = Instant::now();
                version = f["version"].as_u64();
                for l in f["lines"].as_array().unwrap() {
                    after = l["id"].as_u64();
                    let _ = tx.send((i, l["text"].as_str().unwrap().to_string(), now));
                }
            }
        });
    }
    let mut delays = Vec::new();
    for n in 0..100 {
        let state = s.next_ask("gm").await;
        let dice = format!("{}d6", n % 9 + 1);
        let sent = Instant::now();
        s.command("gm", &state, "roll", json!({"dice": dice})).await;
        let mut seen = [false; 5];
        while !seen.iter().all(|x| *x) {
            let (i, text, at) = rx.recv().await.unwrap();
            if text.starts_with(&format!("The GM rolls {dice}:")) && !seen[i] {
                seen[i] = true;
                if seen.iter().all(|x| *x) {
                    delays.push(at.duration_since(sent).as_secs_f64() * 1000.0);
                }
            }
        }
        // Drain lines of earlier rolls with the same dice; stay under the seat's rate limit.
        while rx.try_recv().is_ok() {}
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    delays.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| delays[((delays.len() - 1) as f64 * p) as usize];
    println!(
        "command to the last of 5 streams, {} commands: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
         server RSS idle {idle_rss}, after {}",
        delays.len(),
        pct(0.5),
        pct(0.99),
        delays.last().unwrap(),
        rss(pid)
    );
}

/// What the GM's page did in one step of a session played over HTTP.
enum GmStep {
    Ended,
    /// The GM was asked to rule on a flagged action (what the review showed) and kept the
    /// person's own words.
    Reviewed(Value),
    /// Anything else, answered plainly, or nothing was asked.
    Played,
}

/// One step of the GM's page: its waiting ask answered plainly, a review by keeping the
/// person's original words.
async fn gm_keeps_the_original(s: &Served) -> GmStep {
    let gm = s.feed("gm", &s.keys["gm"], Some(u64::MAX)).await["state"].clone();
    if !gm["ended"].is_null() {
        return GmStep::Ended;
    }
    if gm["ask"].is_null() {
        return GmStep::Played;
    }
    let ask = &gm["ask"]["ask"];
    if ask["decision"] == "review" {
        s.answer("gm", &gm, json!({"keep": "original"})).await;
        return GmStep::Reviewed(ask["shown"].clone());
    }
    s.answer("gm", &gm, gm_answer(ask)).await;
    GmStep::Played
}

#[tokio::test]
async fn a_persons_flagged_action_is_explained_and_sent_as_it_is_goes_to_the_gm_unaltered() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(
        dir.path(),
        &["--seed", "3", "--turns", "1", "--person", "alex"],
    );
    let overreach = "I shoot the guard and he falls down unconscious.";
    let started = Instant::now();
    let mut feedback_seen = false;
    let mut reviewed = None;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the session did not end"
        );
        match gm_keeps_the_original(&s).await {
            GmStep::Ended => break,
            GmStep::Reviewed(shown) => reviewed = Some(shown),
            GmStep::Played => {}
        }
        let alex = s.feed("alex", &s.keys["alex"], Some(u64::MAX)).await["state"].clone();
        if !alex["ask"].is_null() {
            let ask = &alex["ask"]["ask"];
            let mut values = player_answer(ask);
            if ask["decision"] == "action" {
                values["action"] = json!(overreach);
                if ask["shown"].to_string().contains("rephrase") {
                    feedback_seen = true;
                    // The form comes back holding the flagged attempt: only its words need
                    // changing (the page fills its fields from it).
                    let first = player_answer(ask);
                    assert_eq!(ask["prefill"]["action"], overreach, "{ask}");
                    for field in ["task_type", "prepared", "expert", "dialogue"] {
                        assert_eq!(ask["prefill"][field], first[field], "{field}: {ask}");
                    }
                }
            }
            s.answer("alex", &alex, values).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(feedback_seen, "the person was told what was flagged");
    let shown = reviewed
        .expect("the GM was asked to rule on it")
        .to_string();
    assert!(shown.contains(overreach), "{shown}");
    let log = log_of(dir.path(), 1);
    let results: Vec<&str> = of_type(&log, "validation")
        .iter()
        .map(|e| e["result"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["retry", "flagged_for_gm"]);
    let kept = of_type(&log, "gm_reviewed_action");
    assert_eq!(
        kept[0]["action"], overreach,
        "the GM kept the person's words"
    );
}

/// What the page's form for this ask holds, field by field (null until the page shows it).
const FORM_VALUES: &str = r#"
if (document.getElementById('ask').dataset.ask !== String(arguments[0])) return null;
const form = document.querySelector('#ask form');
if (!form) return null;
const v = {};
for (const i of form.querySelectorAll('[data-name]')) v[i.dataset.name] = i.type === 'checkbox' ? i.checked : i.value;
return v;
"#;

/// At her browser, a person whose action the overreach check sent back finds her form as she
/// sent it (her words, her roll, her flags): she changes only what was wrong, or sends it again
/// as it is, and the GM rules on her own words.
#[tokio::test]
async fn a_flagged_action_comes_back_to_the_persons_page_as_she_wrote_it() {
    use crate::support::browser::WebDriver;
    let Some(page) = WebDriver::start_or_skip("the flagged action's page test").await else {
        return;
    };
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(
        dir.path(),
        &["--seed", "3", "--turns", "1", "--person", "alex"],
    );
    page.open(&format!("{}#key={}", s.url("alex", ""), s.keys["alex"]))
        .await;
    let overreach = "I shoot the guard and he falls down unconscious.";
    let first = json!({"action": overreach, "dialogue": "Hands up!", "task_type": "feelings",
                       "prepared": true, "expert": false, "helping": ""});
    let started = Instant::now();
    let mut refilled = None;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the session did not end"
        );
        if let GmStep::Ended = gm_keeps_the_original(&s).await {
            break;
        }
        let alex = s.feed("alex", &s.keys["alex"], Some(u64::MAX)).await["state"].clone();
        if alex["ask"].is_null() {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        let ask = &alex["ask"]["ask"];
        let values = match ask["decision"].as_str() {
            Some("action") if ask["shown"].to_string().contains("rephrase") => {
                let id = &alex["ask"]["id"];
                let shown = loop {
                    let v = page.eval_with(FORM_VALUES, json!([id])).await;
                    if !v.is_null() {
                        break v;
                    }
                    assert!(
                        started.elapsed() < Duration::from_secs(120),
                        "no form for {id}"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                };
                refilled = Some(shown);
                json!({}) // sent again as it is: the page sends what it holds
            }
            Some("action") => first.clone(),
            _ => player_answer(ask),
        };
        answer_from_page(&s, "alex", &page, FILL_AND_SEND, &values, &alex).await;
    }
    let refilled = refilled.expect("the action was sent back to be rephrased");
    assert_eq!(refilled, first, "the form came back as she sent it");
    let log = log_of(dir.path(), 1);
    let kept = of_type(&log, "gm_reviewed_action");
    assert_eq!(
        kept[0]["action"], overreach,
        "the GM ruled on her own words"
    );
}

/// A campaign's model block: recorded replies from a file in its directory (so tables hosted
/// together each have their own).
fn replies_in_campaign(dir: &Path, file: &str) {
    let path = dir.join("campaign.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    c["model"] = json!({"provider": "replay", "replay_file": file});
    std::fs::write(&path, c.to_string()).unwrap();
}

/// `troupe serve --host ROOT`: a Lasers & Feelings table and an encounter table, each opened by
/// its own `troupe serve` and killed, come back in one process: each seat's old link opens its
/// seat at its own table only, and both games go on.
#[tokio::test]
async fn one_process_hosts_many_tables_each_behind_its_own_keys() {
    let root = tempfile::tempdir().unwrap();
    let lasers = root.path().join("lasers");
    std::fs::create_dir(&lasers).unwrap();
    crate::support::copy_examples(&lasers, &["campaign.json", "campaign.replay.jsonl"]);
    replies_in_campaign(&lasers, "campaign.replay.jsonl");
    let smithy = crate::encounter::campaign();
    let encounter = root.path().join("smithy");
    std::fs::rename(smithy.path(), &encounter).unwrap();
    replies_in_campaign(&encounter, "encounters/smithy.replay.jsonl");
    let a = serve(&lasers, &["--seed", "3"]);
    assert_eq!(
        a.next_ask("gm").await["ask"]["ask"]["decision"],
        "narration"
    );
    let b = serve(
        &encounter,
        &[
            "--encounter",
            "encounters/smithy.yaml",
            "--players",
            "human:Mara,ai,ai",
            "--seed",
            "12",
        ],
    );
    assert_eq!(b.next_ask("p1").await["ask"]["ask"]["decision"], "action");
    let (lasers_keys, encounter_keys) = (a.keys.clone(), b.keys.clone());
    let (lasers_id, encounter_id) = (a.table.clone(), b.table.clone());
    drop((a, b));

    let (mut s, tables) = serve_host(root.path(), 2);
    assert_eq!(tables["lasers"], lasers_id, "{}", s.stdout);
    assert_eq!(tables["smithy"], encounter_id);
    // The encounter's seats, by their old links; the GM's key opens nothing there.
    s.table = encounter_id.clone();
    s.keys = encounter_keys.clone();
    let state = s.next_ask("p1").await;
    assert_eq!(state["ask"]["ask"]["decision"], "action");
    let r = s
        .http
        .get(s.url("p1", "/feed"))
        .bearer_auth(&lasers_keys["gm"])
        .send()
        .await;
    assert_eq!(r.unwrap().status(), 401);
    let (status, text) = s
        .answer(
            "p1",
            &state,
            json!({"action": "I offer to work the bellows myself"}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    // The session's GM, by its old link: the same ask as before the kill; it plays on.
    s.table = lasers_id.clone();
    s.keys = lasers_keys;
    let gm = s.next_ask("gm").await;
    assert_eq!(gm["ask"]["ask"]["decision"], "narration");
    s.answer("gm", &gm, gm_answer(&gm["ask"]["ask"])).await;
    let next = s.next_ask("gm").await;
    assert_ne!(next["ask"]["id"], gm["ask"]["id"]);
    assert_eq!(
        of_type(&log_of(&lasers, 1), "gm_narration")[0]["text"],
        "A derelict freighter drifts across the bow."
    );
    // And the encounter went on meanwhile: Mara is asked for her roll.
    s.table = encounter_id;
    s.keys = encounter_keys;
    let started = Instant::now();
    while s.next_ask("p1").await["ask"]["ask"]["decision"] != "roll" {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no roll asked of Mara"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// BENCHMARKS.md, "Many tables in one process": `troupe serve --host` with 1, 10, 50 and
/// `TABLES` (100 by default) Lasers & Feelings tables, each waiting on its GM; the server's
/// memory at idle, and at the largest size, with five streams connected to every table, the
/// time from a GM's command to its line reaching the last of that table's five streams. Run
/// with `cargo test --release -p troupe-cli --test cli serve::host_scale -- --ignored
/// --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: run it by name"]
async fn host_scale_bench() {
    let tables: usize = std::env::var("TABLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let campaigns = tempfile::tempdir().unwrap();
    let mut keys = Vec::new();
    for i in 0..tables {
        let dir = campaigns.path().join(format!("t{i:03}"));
        std::fs::create_dir(&dir).unwrap();
        crate::support::copy_examples(&dir, &["campaign.json", "campaign.replay.jsonl"]);
        replies_in_campaign(&dir, "campaign.replay.jsonl");
        let s = serve(&dir, &["--seed", &i.to_string()]);
        s.next_ask("gm").await;
        keys.push((s.table.clone(), s.keys.clone()));
    }
    let rss_kb = |pid: u32| -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
            .unwrap_or(0)
    };
    // Idle memory by the number of tables: a root holding links to the first n campaigns.
    let mut sizes: Vec<usize> = [1, 10, 50].into_iter().filter(|n| *n < tables).collect();
    sizes.push(tables);
    let mut hosted = None;
    for n in sizes {
        // The last host lets go of its campaigns' locks first.
        drop(hosted.take());
        let root = tempfile::tempdir().unwrap();
        for i in 0..n {
            let name = format!("t{i:03}");
            std::os::unix::fs::symlink(campaigns.path().join(&name), root.path().join(&name))
                .unwrap();
        }
        let (s, _) = serve_host(root.path(), n);
        tokio::time::sleep(Duration::from_secs(3)).await;
        println!("{n} idle tables: server RSS {} kB", rss_kb(s.child.id()));
        hosted = Some((s, root));
    }
    let (s, _root) = hosted.unwrap();
    let s = std::sync::Arc::new(s);
    // Five streams a table: the GM's, the character's, three watchers.
    let readers = ["gm", "alex", "watch", "watch", "watch"];
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, usize, String, Instant)>();
    for (t, (table, seat_keys)) in keys.iter().enumerate() {
        for (i, seat) in readers.iter().enumerate() {
            let (s, tx) = (s.clone(), tx.clone());
            let url = format!("{}/t/{table}/{seat}/feed?", s.base);
            let key = seat_keys[*seat].clone();
            tokio::spawn(async move {
                let (mut after, mut version) = (None::<u64>, None::<u64>);
                loop {
                    let mut u = url.clone();
                    if let Some(a) = after {
                        u.push_str(&format!("after={a}&"));
                    }
                    if let Some(v) = version {
                        u.push_str(&format!("version={v}"));
                    }
                    let Ok(r) = s.http.get(u).bearer_auth(&key).send().await else {
                        continue;
                    };
                    let Ok(f) = r.json::<Value>().await else {
                        continue;
                    };
                    let now = Instant::now();
                    version = f["version"].as_u64();
                    for l in f["lines"].as_array().into_iter().flatten() {
                        after = l["id"].as_u64();
                        let text = l["text"].as_str().unwrap_or_default().to_string();
                        let _ = tx.send((t, i, text, now));
                    }
                }
            });
        }
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!(
        "{} streams connected: server RSS {} kB",
        tables * readers.len(),
        rss_kb(s.child.id())
    );
    while rx.try_recv().is_ok() {}
    let mut delays = Vec::new();
    for n in 0..(2 * tables) {
        let t = (n * 37) % tables;
        let (table, seat_keys) = &keys[t];
        let url = format!("{}/t/{table}/gm/feed?after={}", s.base, u64::MAX);
        let state: Value = s
            .http
            .get(url)
            .bearer_auth(&seat_keys["gm"])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let dice = format!("{}d6", n % 9 + 1);
        let body = json!({"ask_id": state["state"]["ask"]["id"],
                          "answer": {"answer": "command", "name": "roll", "values": {"dice": dice}}});
        let sent = Instant::now();
        let r = s
            .http
            .post(format!("{}/t/{table}/gm/answer", s.base))
            .bearer_auth(&seat_keys["gm"])
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204);
        let mut seen = [false; 5];
        while !seen.iter().all(|x| *x) {
            let (tt, i, text, at) = rx.recv().await.unwrap();
            if tt == t && text.starts_with(&format!("The GM rolls {dice}:")) && !seen[i] {
                seen[i] = true;
                if seen.iter().all(|x| *x) {
                    delays.push(at.duration_since(sent).as_secs_f64() * 1000.0);
                }
            }
        }
        while rx.try_recv().is_ok() {}
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    delays.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| delays[((delays.len() - 1) as f64 * p) as usize];
    println!(
        "{tables} tables, {} streams: command to the last of its table's 5 streams, {} commands: \
         p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; server RSS {} kB",
        tables * readers.len(),
        delays.len(),
        pct(0.5),
        pct(0.99),
        delays.last().unwrap(),
        rss_kb(s.child.id())
    );
}

/// A leaked link is replaced: `--new-link SEAT` as the table reopens gives the seat a new key;
/// the old link is refused, the new one opens the seat, the other seats' links are untouched.
#[tokio::test]
async fn a_seat_gets_a_new_link_and_its_old_one_stops_working() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3", "--person", "alex"]);
    s.next_ask("gm").await;
    let old = s.keys.clone();
    drop(s);
    let args = ["--seed", "3", "--new-link", "alex"];
    let mut s = start(dir.path(), &args, |_, line| line.contains("/alex#key="));
    assert!(s.stdout.contains("Reopening"), "{}", s.stdout);
    let new_key = s.keys["alex"].clone();
    assert_ne!(new_key, old["alex"]);
    let r = s
        .http
        .get(s.url("alex", "/feed"))
        .bearer_auth(&old["alex"])
        .send()
        .await;
    assert_eq!(r.unwrap().status(), 401, "the old link is refused");
    s.keys = old.clone();
    s.keys.insert("alex".into(), new_key);
    assert_eq!(
        s.feed("alex", &s.keys["alex"], None).await["state"]["seat"],
        "alex"
    );
    assert_eq!(
        s.next_ask("gm").await["ask"]["ask"]["decision"],
        "narration"
    );
    let table = std::fs::read_to_string(dir.path().join("table.json")).unwrap();
    assert!(!table.contains(&s.keys["alex"]), "only the hash is kept");
    // A seat the table does not have is named, with the seats it has.
    drop(s);
    let out = crate::support::troupe()
        .current_dir(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--new-link", "nobody"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no seat \"nobody\""),
        "{err}"
    );
    assert!(err.contains("alex") && err.contains("watch"), "{err}");
}

/// The GM takes back a decision from the page: the table stops the game where it waits, marks
/// the decision undone (kept in the log, as `troupe undo` does), and asks for it again.
#[tokio::test]
async fn the_gm_takes_back_a_decision_from_the_page() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3"]);
    let gm = s.next_ask("gm").await;
    assert_eq!(gm["ask"]["ask"]["decision"], "narration");
    let first = "A derelict freighter drifts across the bow.";
    let (status, text) = s.answer("gm", &gm, json!({"text": first})).await;
    assert_eq!(status, 204, "{text}");
    let next = loop {
        let state = s.next_ask("gm").await;
        if state["ask"]["id"] != gm["ask"]["id"] {
            break state;
        }
    };
    s.command("gm", &next, "undo", json!({})).await;
    let again = loop {
        let state = s.next_ask("gm").await;
        if state["ask"]["ask"]["decision"] == "narration" && state["ask"]["id"] != gm["ask"]["id"] {
            break state;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let second = "A comet's tail lights the hull.";
    let (status, text) = s.answer("gm", &again, json!({"text": second})).await;
    assert_eq!(status, 204, "{text}");
    s.next_ask("gm").await;
    let log = log_of(dir.path(), 1);
    let undone = of_type(&log, "events_undone");
    assert_eq!(undone.len(), 1, "{undone:?}");
    assert_eq!(undone[0]["what"], "the narration (turn 1)");
    let transcript = crate::support::run_with(dir.path(), &["transcript", "1"], "");
    assert!(
        transcript.contains(second) && !transcript.contains(first),
        "{transcript}"
    );
    let gm_stream = s.raw_feed("gm").await;
    assert!(
        gm_stream.contains("The GM took back the narration (turn 1)."),
        "{gm_stream}"
    );
}

/// A GM opens a table from the host's page: `troupe serve --host ROOT` with no table yet prints
/// the host's link; its key opens a Lasers & Feelings table for a campaign under ROOT through
/// the binary's opener and returns the seats' links; the game plays. A campaign directory ROOT
/// does not have is refused by that opener. (The page itself, a wrong key, another site's
/// page, a name outside ROOT and a game not offered are troupe-serve's routes test: host.rs.)
#[tokio::test]
async fn a_table_is_opened_from_the_hosts_page() {
    let root = tempfile::tempdir().unwrap();
    let lasers = root.path().join("lasers");
    std::fs::create_dir(&lasers).unwrap();
    crate::support::copy_examples(&lasers, &["campaign.json", "campaign.replay.jsonl"]);
    let args = ["--host", root.path().to_str().unwrap()];
    let mut s = start(root.path(), &args, |_, line| line.starts_with("Serving "));
    let host_key = s
        .stdout
        .lines()
        .find_map(|l| {
            l.split_once("/host#key=")
                .map(|(_, k)| k.split(' ').next().unwrap())
        })
        .expect("the host's link")
        .to_string();
    let open = |key: String, body: Value| {
        let (http, url) = (s.http.clone(), format!("{}/host/open", s.base));
        async move {
            let r = http
                .post(url)
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap();
            (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let table = json!({"campaign": "lasers", "game": "lasers", "persons": ["alex"], "seed": 3});
    let nowhere = json!({"campaign": "nowhere", "game": "lasers"});
    let (status, body) = open(host_key.clone(), nowhere).await;
    assert_eq!(status, 422, "{body}");
    let why = body["error"].as_str().unwrap_or_default();
    assert!(why.contains("no campaign directory nowhere"), "{body}");
    let (status, opened) = open(host_key.clone(), table).await;
    assert_eq!(status, 200, "{opened}");
    s.table = opened["table"].as_str().unwrap().to_string();
    for link in opened["links"].as_array().unwrap() {
        let (path, key) = link["path"].as_str().unwrap().split_once("#key=").unwrap();
        s.keys.insert(
            path.rsplit('/').next().unwrap().to_string(),
            key.to_string(),
        );
    }
    assert_eq!(s.keys.keys().collect::<Vec<_>>(), ["alex", "gm", "watch"]);
    assert_eq!(
        s.next_ask("gm").await["ask"]["ask"]["decision"],
        "narration"
    );
    let table_file = std::fs::read_to_string(lasers.join("table.json")).unwrap();
    assert!(!table_file.contains(&host_key) && !table_file.contains(&s.keys["gm"]));
}

/// The host's page in a browser: the form filled and sent as a GM would, the new table's links
/// listed as text.
#[tokio::test]
async fn the_hosts_page_opens_a_table_in_a_browser() {
    let Some(page) =
        crate::support::browser::WebDriver::start_or_skip("the host page's browser test").await
    else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("my-table");
    std::fs::create_dir(&dir).unwrap();
    crate::support::copy_examples(&dir, &["campaign.json", "campaign.replay.jsonl"]);
    let args = ["--host", root.path().to_str().unwrap()];
    let s = start(root.path(), &args, |_, line| line.starts_with("Serving "));
    let host = s
        .stdout
        .lines()
        .find_map(|l| {
            l.split_once("Open new tables at ")
                .map(|(_, r)| r.split(' ').next().unwrap())
        })
        .unwrap()
        .to_string();
    page.open(&host).await;
    // The form is built from the games' offers: every game, a session's GM a person by default.
    let games = page
        .eval("return [...document.getElementById('game').options].map(o => o.value).join(',')")
        .await;
    assert_eq!(games, "lasers,encounter,scene");
    let gm = page
        .eval("return document.getElementById('option-gm').value")
        .await;
    assert_eq!(gm, "person");
    let fill = r#"
        document.getElementById('campaign').value = 'my-table';
        document.getElementById('option-persons').value = 'alex';
        document.querySelector('#open button').click();
        return true;
    "#;
    page.eval(fill).await;
    let started = Instant::now();
    let links = loop {
        let links = page
            .eval("return document.getElementById('links').innerText")
            .await;
        let links = links.as_str().unwrap_or_default().to_string();
        if links.contains("/watch#key=") {
            break links;
        }
        let error = page
            .eval("return document.getElementById('error').textContent")
            .await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no links: {error}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        links.contains("/gm#key=") && links.contains("/alex#key="),
        "{links}"
    );
    assert!(dir.join("table.json").is_file());
}

/// Issue 33 at the web table: the GM ends a scene and lets days pass from the page; every seat's
/// stream tells it, the log records it, and a number of days that is not one is asked again.
#[tokio::test]
async fn the_gm_ends_a_scene_and_lets_days_pass_from_the_page() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3", "--turns", "1"]);
    let state = s.next_ask("gm").await;
    let commands = command_names(&state);
    assert!(
        commands.contains(&"scene") && commands.contains(&"time"),
        "{commands:?}"
    );
    let bad = json!({"ask_id": state["ask"]["id"],
                     "answer": {"answer": "command", "name": "time", "values": {"days": "soon"}}});
    let (status, text) = s.post("gm", "/answer", &s.keys["gm"], bad).await;
    assert_eq!(status, 204, "{text}");
    // The game reads it, refuses it and asks again, saying why.
    let state = s.next_ask("gm").await;
    let why = state["ask"]["ask"]["error"].as_str().unwrap_or_default();
    assert!(why.contains("a number of days from 1 to 3650"), "{state}");
    s.command("gm", &state, "time", json!({"days": "2"})).await;
    let state = s.next_ask("gm").await;
    s.command("gm", &state, "scene", json!({"title": "The dock"}))
        .await;
    s.play_gm(|_| false).await;
    for seat in ["alex", "watch", "gm"] {
        let raw = s.raw_feed(seat).await;
        assert!(
            raw.contains("2 days pass. It is now day 3."),
            "{seat}: {raw}"
        );
        assert!(raw.contains("The scene ends: The dock."), "{seat}: {raw}");
    }
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));
    let types: Vec<&str> = log
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .filter(|t| *t == "time_passed" || *t == "scene_ended")
        .collect();
    assert_eq!(types, ["time_passed", "scene_ended"]);
}

/// Issue 48: the Lasers & Feelings AI GM's calls are watched as every seat's. While it writes,
/// every page says the GM is thinking and counts its tokens; its unchecked draft (its prompt
/// holds the scenario's secret notes) reads on no page, against a model that repeats its whole
/// prompt in every string it streams.
#[tokio::test]
async fn every_page_sees_the_ai_gm_think_and_none_reads_its_draft() {
    use crate::support::openai_server::{OpenAiServer, Personality};
    let parrot = OpenAiServer::start(Personality::Parrot {
        delay: Duration::from_millis(3),
    });
    let url = parrot.base_url();
    let dir = campaign_with(&["aigm.json"]);
    let s = serve(
        dir.path(),
        &[
            "aigm.json",
            "--gm",
            "ai",
            "--seed",
            "5",
            "--turns",
            "1",
            "--provider",
            "openai-compatible",
            "--base-url",
            &url,
            "--model",
            "parrot",
        ],
    );
    // Words of the scenario's two notes (examples/aigm.json), which only the GM's view holds.
    let secrets = ["maintenance drone", "offers it a power cell"];
    let seats = ["alex", "sam", "priya", "watch"];
    let mut counted = std::collections::BTreeSet::new();
    let started = Instant::now();
    while counted.len() < seats.len() && started.elapsed() < Duration::from_secs(60) {
        for seat in seats {
            let raw = s.raw_feed(seat).await;
            for secret in secrets {
                assert!(!raw.contains(secret), "{seat} read {secret:?}: {raw}");
            }
            let state = serde_json::from_str::<Value>(&raw).unwrap()["state"].clone();
            if state["thinking"] == "The GM" && state["thinking_tokens"].as_u64() > Some(0) {
                assert!(
                    state["draft"].is_null(),
                    "{seat} got the GM's draft: {state}"
                );
                counted.insert(seat);
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        counted.len(),
        seats.len(),
        "every page counted the GM's tokens while it streamed: {counted:?}"
    );
    assert!(parrot.served().iter().any(|r| r.streamed));
}
