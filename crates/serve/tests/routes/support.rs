//! The harness: a scene table in a temporary campaign directory, as `troupe serve --scene`
//! opens one; a server for it in a runtime of its own, which dropping stops as a kill does (its
//! listener and every connection go with it); and a client that speaks to it as each seat's page
//! does, with the seat's key as its bearer token.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use troupe_scene::Scene;
use troupe_scene::table::online::SceneGame;
use troupe_scene::table::{GM, PlannerKind, SPEAKER, SceneModels, SceneStore};
use troupe_serve::host::Host;
use troupe_serve::{Link, Playable, TableFile, TableRun};

/// How long a test waits for the table to get somewhere before it fails.
pub const PATIENCE: Duration = Duration::from_secs(10);
/// The longest one request may take: past the stream's hold (20 s), so a held request that
/// nothing wakes fails the test instead of hanging it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

pub fn mill() -> troupe_scene::SceneDef {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mill.scene.yaml"
    );
    troupe_scene::check(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The mill's scene begun in `dir` and its table file saved, as `troupe serve --scene` opens a
/// table: the speaker's, the GM's and the watcher's seats. The table and its seats' links.
pub fn open_scene(dir: &Path) -> (TableFile, Vec<Link>) {
    let mut store = SceneStore::open(dir).unwrap();
    let scene = Scene::start(mill(), 7);
    let run = store
        .begin(&scene.state.id, "2025-01-01T00:00:00Z", &scene.events)
        .unwrap();
    let seats = [
        (SPEAKER, "Player"),
        (GM, "Game master"),
        ("watch", "Watching"),
    ]
    .map(|(seat, label)| (seat.to_string(), label.to_string()));
    let (table, links) =
        troupe_serve::new_table(troupe_scene::offer::OFFER.game, run, &seats, None).unwrap();
    troupe_serve::save_table(dir, &table).unwrap();
    (table, links)
}

/// Each seat's key, from its link (`/t/TABLE/SEAT#key=KEY`).
pub fn keys_of(links: &[Link]) -> BTreeMap<String, String> {
    links
        .iter()
        .map(|l| {
            let (path, key) = l.path.split_once("#key=").unwrap();
            let seat = path.rsplit('/').next().unwrap();
            (seat.to_string(), key.to_string())
        })
        .collect()
}

/// The mill's scene as its table plays it: the rules planner, no model, a GM seat.
pub fn scene_game(dir: &Path, run: u32) -> Box<SceneGame> {
    Box::new(SceneGame {
        store: SceneStore::open(dir).unwrap(),
        run,
        models: SceneModels {
            gateway: None,
            prompts: troupe_prompts::Prompts::embedded(&[troupe_scene::prompts::TEMPLATES]),
            planner: PlannerKind::Rules,
            polish: false,
        },
        ai: None,
        gm: true,
        keep_world: Box::new(|_, _| Ok(())),
    })
}

/// The table whose file is in `dir`, played by `game`.
pub fn table_run(dir: &Path, game: Box<dyn Playable>) -> TableRun {
    let table = troupe_serve::load_table(dir).unwrap().unwrap();
    TableRun {
        dir: dir.to_path_buf(),
        title: "Scene: mill-night".into(),
        table,
        game,
        on_end: Box::new(|_| {}),
    }
}

/// The table whose file is in `dir`, played by the mill's scene.
pub fn scene_run(dir: &Path) -> TableRun {
    let run = troupe_serve::load_table(dir).unwrap().unwrap().session;
    table_run(dir, scene_game(dir, run))
}

/// `troupe_serve::run` on a free loopback port, in a runtime of its own.
pub struct Server {
    runtime: Option<tokio::runtime::Runtime>,
    pub base: String,
}

impl Server {
    pub async fn start(tables: Vec<TableRun>, host: Option<Host>) -> Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (listening, addr) = tokio::sync::oneshot::channel();
        runtime.spawn(async move {
            let bound = troupe_serve::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
                .await
                .unwrap();
            let _ = listening.send(bound.addr);
            if let Err(e) = troupe_serve::run(bound, tables, host, None).await {
                eprintln!("the server stopped: {}", troupe_engine::error_chain(&e));
            }
        });
        let addr = addr.await.expect("the server listens");
        Server {
            runtime: Some(runtime),
            base: format!("http://{addr}"),
        }
    }
}

/// Stopped as a killed process is: the listener and every connection closed, nothing tidied.
/// (The table's game thread is left waiting on a hub no page reaches: it writes nothing more.)
impl Drop for Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The pages of one table: each seat's requests with its key.
pub struct Pages {
    http: reqwest::Client,
    pub base: String,
    pub table: String,
    pub keys: BTreeMap<String, String>,
}

impl Pages {
    pub fn new(server: &Server, table: &str, keys: &BTreeMap<String, String>) -> Pages {
        Pages {
            http: reqwest::Client::builder()
                .timeout(REQUEST_TIMEOUT)
                .build()
                .unwrap(),
            base: server.base.clone(),
            table: table.to_string(),
            keys: keys.clone(),
        }
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub fn url(&self, seat: &str, path: &str) -> String {
        format!("{}/t/{}/{seat}{path}", self.base, self.table)
    }

    /// A GET of the seat's `path`, with `key` as its bearer token when there is one.
    pub async fn get(&self, seat: &str, path: &str, key: Option<&str>) -> reqwest::Response {
        let mut r = self.http.get(self.url(seat, path));
        if let Some(key) = key {
            r = r.bearer_auth(key);
        }
        r.send().await.unwrap()
    }

    /// A POST of `body` to the seat's `path`: the status and the body's text.
    pub async fn post(
        &self,
        seat: &str,
        path: &str,
        key: Option<&str>,
        body: &Value,
    ) -> (u16, String) {
        let mut r = self.http.post(self.url(seat, path)).json(body);
        if let Some(key) = key {
            r = r.bearer_auth(key);
        }
        let r = r.send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// The seat's stream as its page reads it: its lines after `after`, held open until the
    /// table changes past `version`.
    pub async fn feed(&self, seat: &str, after: Option<u64>, version: Option<u64>) -> Value {
        let mut path = "/feed?".to_string();
        if let Some(a) = after {
            path.push_str(&format!("after={a}&"));
        }
        if let Some(v) = version {
            path.push_str(&format!("version={v}"));
        }
        let r = self.get(seat, &path, Some(&self.keys[seat])).await;
        assert_eq!(r.status(), 200, "{seat}'s stream");
        r.json().await.unwrap()
    }

    /// The raw bytes of a seat's whole stream.
    pub async fn raw_feed(&self, seat: &str) -> String {
        let r = self.get(seat, "/feed", Some(&self.keys[seat])).await;
        assert_eq!(r.status(), 200, "{seat}'s stream");
        r.text().await.unwrap()
    }

    /// Wait until the seat is asked something (or the table ended or stopped): its state then.
    pub async fn next_ask(&self, seat: &str) -> Value {
        let started = Instant::now();
        let mut version = None;
        loop {
            let f = self.feed(seat, Some(u64::MAX), version).await;
            version = f["version"].as_u64();
            let state = &f["state"];
            if !state["ask"].is_null() || !state["ended"].is_null() || !state["stopped"].is_null() {
                return state.clone();
            }
            assert!(
                started.elapsed() < PATIENCE,
                "{seat} is asked nothing: {state}"
            );
        }
    }

    /// The seat's answer with these values to the ask in `state`.
    pub async fn answer(&self, seat: &str, state: &Value, values: Value) -> (u16, String) {
        let body = json!({"ask_id": state["ask"]["id"],
                          "answer": {"answer": "decide", "values": values}});
        self.post(seat, "/answer", Some(&self.keys[seat]), &body)
            .await
    }

    /// The speaker says a line, as their page sends it once asked. A GM's command may just
    /// have been played: the speaker's ask is then asked anew (409) and the page sends the line
    /// again to the new one.
    pub async fn say(&self, line: &str) {
        let started = Instant::now();
        loop {
            let state = self.next_ask(SPEAKER).await;
            match self.answer(SPEAKER, &state, json!({"line": line})).await {
                (204, _) => return,
                (409, _) if started.elapsed() < PATIENCE => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                (status, text) => panic!("{line}: {status} {text}"),
            }
        }
    }

    /// A GM's command from the GM's page (answering the GM's standing ask). The speaker's line
    /// may just have been played: the ask it answered is then gone (409) and the page sends it
    /// again to the new one.
    pub async fn gm(&self, name: &str, args: &str) {
        let started = Instant::now();
        loop {
            let state = self.next_ask(GM).await;
            let body = json!({"ask_id": state["ask"]["id"],
                              "answer": {"answer": "command", "name": name,
                                         "values": {"args": args}}});
            match self.post(GM, "/answer", Some(&self.keys[GM]), &body).await {
                (204, _) => return,
                (409, _) if started.elapsed() < PATIENCE => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                (status, text) => panic!("/{name}: {status} {text}"),
            }
        }
    }
}

/// The table's stored events as JSON (its run in `campaign.db`).
pub fn stored(dir: &Path, run: u32) -> Vec<Value> {
    let store = SceneStore::open(dir).unwrap();
    store
        .bodies(run)
        .unwrap()
        .iter()
        .map(|b| serde_json::from_str(b).unwrap())
        .collect()
}

/// How many of the stored events are the speaker's line `input` (applied, or refused by the
/// rules).
pub fn times_said(dir: &Path, run: u32, input: &str) -> usize {
    stored(dir, run)
        .iter()
        .filter(|e| matches!(e["event_type"].as_str(), Some("tool_applied" | "rejected")))
        .filter(|e| e["input"] == input)
        .count()
}

/// Wait until the stored events hold the speaker's line `input`.
pub async fn until_said(dir: &Path, run: u32, input: &str) {
    let started = Instant::now();
    while times_said(dir, run, input) == 0 {
        assert!(started.elapsed() < PATIENCE, "never said {input:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
