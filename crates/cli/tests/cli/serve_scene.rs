//! A scene at the table server: the speaker's lines sent over real HTTP give the same log, byte
//! for byte, as the same lines at the terminal, through a SIGKILL and a reopen; the speaker has
//! no GM commands, and what only the GM's view holds reaches no stream.

use std::path::Path;

use serde_json::{Value, json};

use crate::serve::{Served, command_names, serve};
use crate::support::{copy_examples, run_with};

/// The speaker's lines of `examples/mill.player.yaml` (the GM's commands left out).
const LINES: [&str; 12] = [
    "look around",
    "status",
    "/state",
    "go",
    "go to the mill yard",
    "talk to Old Tam about the ledger",
    "attack the hound",
    "use the tonic",
    "sneak into the storehouse",
    "listen",
    "examine the place closely",
    "recap",
];

pub(crate) fn mill() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["mill.scene.yaml"]);
    dir
}

pub(crate) fn stored(dir: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT body FROM scene_events WHERE run = 1 ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The same lines spoken at the terminal (`troupe scene play` with them as the player's
/// script, and these arguments): what it printed.
pub(crate) fn play_at_terminal(dir: &Path, lines: &[&str], args: &[&str]) -> String {
    let script: String = lines.iter().map(|l| format!("- '{l}'\n")).collect();
    std::fs::write(dir.join("lines.yaml"), script).unwrap();
    let mut play = vec![
        "scene",
        "play",
        "mill.scene.yaml",
        "--player-script",
        "lines.yaml",
    ];
    play.extend_from_slice(args);
    run_with(dir, &play, "")
}

/// Send one line as the page does: a command for `/state`, the words otherwise. What the
/// table answered a command comes with the next ask.
async fn say(s: &Served, line: &str) {
    let state = s.next_ask("player").await;
    let (status, text) = match line.strip_prefix('/') {
        Some(name) => {
            let body = json!({"ask_id": state["ask"]["id"],
                              "answer": {"answer": "command", "name": name, "values": {}}});
            s.post("player", "/answer", &s.keys["player"], body).await
        }
        None => s.answer("player", &state, json!({"line": line})).await,
    };
    assert_eq!(status, 204, "{line}: {text}");
}

#[tokio::test]
async fn a_scene_is_spoken_from_a_browser_as_at_the_terminal_through_a_kill() {
    let terminal = mill();
    let out = play_at_terminal(terminal.path(), &LINES, &["--seed", "7"]);

    let dir = mill();
    let args = ["--scene", "mill.scene.yaml", "--seed", "7"];
    let s = serve(dir.path(), &args);
    assert_eq!(s.keys.keys().collect::<Vec<_>>(), ["gm", "player", "watch"]);
    let first = s.next_ask("player").await;
    let offered = command_names(&first);
    assert_eq!(
        offered,
        ["help", "state", "quit"],
        "no GM commands for the speaker"
    );
    let body = json!({"ask_id": first["ask"]["id"],
                      "answer": {"answer": "command", "name": "gm", "values": {}}});
    let (status, text) = s.post("player", "/answer", &s.keys["player"], body).await;
    assert_eq!(status, 422, "{text}");
    for line in &LINES[..6] {
        say(&s, line).await;
    }
    // Killed (once the last line is committed: the next line is asked), and started again:
    // the same links; the story so far, then on.
    s.next_ask("player").await;
    let before = s.raw_feed("watch").await;
    let s = s.restarted(|| serve(dir.path(), &args));
    assert!(
        s.stdout.contains("Reopening the table of scene run 1"),
        "{}",
        s.stdout
    );
    let after = s.raw_feed("watch").await;
    let lines = |raw: &str| serde_json::from_str::<Value>(raw).unwrap()["lines"].clone();
    assert_eq!(lines(&after), lines(&before));
    for line in &LINES[6..] {
        say(&s, line).await;
    }
    let last = s.next_ask("player").await;
    assert!(
        last["sheet"]["info"].as_str().unwrap().contains("turn"),
        "{last}"
    );

    // The same log as at the terminal, byte for byte.
    let (web, term) = (stored(dir.path()), stored(terminal.path()));
    for (i, (w, t)) in web.iter().zip(&term).enumerate() {
        assert_eq!(w, t, "event {i}");
    }
    assert_eq!(web.len(), term.len());
    // Every seat read what the terminal's player read; nothing only the GM sees.
    let watch: Vec<String> = lines(&s.raw_feed("watch").await)
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap().to_string())
        .collect();
    assert!(watch.len() > 10, "{watch:?}");
    for line in &watch {
        assert!(
            out.contains(line.as_str()),
            "{line:?} is not what the terminal showed"
        );
    }
    for seat in ["player", "watch"] {
        let raw = s.raw_feed(seat).await;
        for hidden in ["Vesk the smuggler", "the ledger"] {
            assert_eq!(
                raw.contains(hidden),
                out.contains(hidden),
                "{seat}: {hidden:?} only where the terminal's player saw it"
            );
        }
    }
}

/// A served scene with the model planner (`--scene-planner model`, recorded replies): the same
/// calls and decisions as the same lines at the terminal with `--planner model`.
#[tokio::test]
async fn a_served_scene_plans_with_a_model_as_the_terminal_does() {
    let lines = [
        "head into the yard",
        "ask Tam about the ledger",
        "go for the dog",
        "leave",
    ];
    let with_replies = || {
        let dir = mill();
        copy_examples(dir.path(), &["mill.replay.jsonl"]);
        dir
    };
    let terminal = with_replies();
    let model = [
        "--seed",
        "3",
        "--planner",
        "model",
        "--replay",
        "mill.replay.jsonl",
    ];
    play_at_terminal(terminal.path(), &lines, &model);
    let dir = with_replies();
    let s = serve(
        dir.path(),
        &[
            "--scene",
            "mill.scene.yaml",
            "--seed",
            "3",
            "--scene-planner",
            "model",
            "--replay",
            "mill.replay.jsonl",
        ],
    );
    for line in lines {
        say(&s, line).await;
    }
    s.next_ask("player").await;
    // Timings differ between two runs; every decision and what the model replied do not.
    let decisions = |dir: &Path| -> Vec<String> {
        stored(dir)
            .into_iter()
            .filter(|e| !e.contains("\"event_type\":\"model_called\""))
            .collect()
    };
    let web = decisions(dir.path());
    assert!(
        web.iter().filter(|e| e.contains("planner_replied")).count() == 4,
        "{web:?}"
    );
    assert_eq!(web, decisions(terminal.path()));
}

/// The GM's commands from the GM's own link, while the speaker plays (a command answers the
/// GM's standing ask). The speaker's line may just have been played: the GM's ask it answered
/// is then gone (409) and the page sends it again to the new one, as a person's page does.
async fn gm(s: &Served, name: &str, args: &str) -> Value {
    let values = if args.is_empty() {
        json!({})
    } else {
        json!({ "args": args })
    };
    loop {
        let state = s.next_ask("gm").await;
        assert_eq!(state["ask"]["ask"]["decision"], "run", "{state}");
        let body = json!({"ask_id": state["ask"]["id"],
                          "answer": {"answer": "command", "name": name, "values": values}});
        match s.post("gm", "/answer", &s.keys["gm"], body).await {
            (204, _) => return s.next_ask("gm").await,
            (409, _) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            (status, text) => panic!("/{name}: {status} {text}"),
        }
    }
}

/// A scene served with a GM link: the GM runs it from their own page while the speaker plays.
/// The GM sees everything (the hidden smuggler, the cards' notes); the speaker and the watchers
/// never do; the GM's undo and end act on the scene, and the log keeps every command.
#[tokio::test]
async fn the_gm_runs_a_served_scene_from_their_own_link() {
    let dir = mill();
    let s = serve(dir.path(), &["--scene", "mill.scene.yaml", "--seed", "7"]);
    let first = gm(&s, "gm", "").await;
    let offered = command_names(&first);
    assert_eq!(offered, ["undo", "gm", "effects", "note", "promote", "end"]);
    let shown = first["ask"]["ask"]["shown"].to_string();
    assert!(shown.contains("Vesk"), "/gm shows everything: {shown}");
    assert!(
        first["sheet"]["info"].as_str().unwrap().contains("Vesk"),
        "{first}"
    );

    say(&s, "go to the mill yard").await;
    gm(&s, "note", "tam SECRETNOTE hums old river songs").await;
    gm(&s, "promote", "tam 1").await;
    gm(
        &s,
        "effects",
        r#"[{"effect": "tag", "key": "alert", "value": "wary"}]"#,
    )
    .await;
    say(&s, "talk to Old Tam about the ledger").await;
    // Taken back: the last turn (the talk with Tam) is undone.
    let after_undo = gm(&s, "undo", "").await;
    assert!(after_undo["ask"]["ask"]["error"].is_null(), "{after_undo}");
    say(&s, "listen").await;
    gm(&s, "end", "").await;
    let ended = s.next_ask("player").await;
    assert!(
        !ended["ended"].is_null(),
        "the GM's /end ends the table: {ended}"
    );

    let events = stored(dir.path());
    let of = |ty: &str| {
        events
            .iter()
            .filter(|e| e.contains(&format!("\"event_type\":\"{ty}\"")))
            .count()
    };
    assert_eq!(of("noted"), 1, "{events:#?}");
    assert_eq!(of("truth_changed"), 1);
    assert_eq!(of("undone"), 1);
    assert_eq!(of("scene_ended"), 1);
    assert!(events.iter().any(|e| e.contains("\"caller\":\"gm\"")));
    for seat in ["player", "watch"] {
        let raw = s.raw_feed(seat).await;
        for secret in ["SECRETNOTE", "Vesk the smuggler", "soft-canon"] {
            assert!(!raw.contains(secret), "{seat} read {secret:?}");
        }
    }
    let raw = s.raw_feed("gm").await;
    assert!(
        raw.contains("SECRETNOTE"),
        "the GM reads their notes: {raw}"
    );
}

/// Wait until `script` returns true on the page.
async fn until(page: &crate::support::browser::WebDriver, script: &str) {
    let started = std::time::Instant::now();
    while page.eval(script).await != Value::Bool(true) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the page never showed: {script}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Wait until the page shows this ask.
async fn shows(page: &crate::support::browser::WebDriver, state: &Value) {
    let id = &state["ask"]["id"];
    until(
        page,
        &format!("return document.getElementById('ask').dataset.ask === '{id}'"),
    )
    .await;
}

/// In Chromium: the GM starts writing a note on the GM's page; the speaker says a line, so the
/// GM is asked again; the half-written note and its open form are still there, and sending it
/// notes the card. The GM's sheet shows the hidden smuggler.
#[tokio::test]
async fn the_gms_half_written_note_survives_the_speakers_line_in_a_browser() {
    use crate::support::browser::WebDriver;
    let Some(page) = WebDriver::start_or_skip("the scene GM's browser test").await else {
        return;
    };
    let dir = mill();
    let s = serve(dir.path(), &["--scene", "mill.scene.yaml", "--seed", "7"]);
    page.open(&format!("{}#key={}", s.url("gm", ""), s.keys["gm"]))
        .await;
    let first = s.next_ask("gm").await;
    shows(&page, &first).await;
    page.eval(
        "const d = document.querySelector('details[data-command=note]'); d.open = true; \
         d.querySelector('[data-name=args]').value = 'tam HALFWRITTEN hums'; return true",
    )
    .await;
    say(&s, "go to the mill yard").await;
    // The speaker's line is played; the GM is asked again (a new ask).
    let again = loop {
        let state = s.next_ask("gm").await;
        if state["ask"]["id"] != first["ask"]["id"] {
            break state;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    shows(&page, &again).await;
    let kept = page
        .eval(
            "const d = document.querySelector('details[data-command=note]'); \
             return [d.open, d.querySelector('[data-name=args]').value]",
        )
        .await;
    assert_eq!(kept, json!([true, "tam HALFWRITTEN hums"]));
    page.eval("document.querySelector('details[data-command=note] button').click(); return true")
        .await;
    let started = std::time::Instant::now();
    while !stored(dir.path()).iter().any(|e| e.contains("HALFWRITTEN")) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the note was never sent"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    until(&page, "return document.body.innerText.includes('Vesk')").await;
}

/// Recorded replies for the AI at the speaker's seat (purpose `scene_player`), in `dir`.
fn ai_replies(dir: &Path) {
    let lines = [
        "I head into the mill yard.",
        "I talk to Old Tam about the ledger.",
    ];
    let jsonl: String = lines
        .iter()
        .map(|l| json!({"agent": "*", "purpose": "scene_player", "content": l}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("ai.replay.jsonl"), jsonl).unwrap();
}

/// The log's events of this type, as JSON.
fn events_of(dir: &Path, ty: &str) -> Vec<Value> {
    stored(dir)
        .iter()
        .map(|e| serde_json::from_str::<Value>(e).unwrap())
        .filter(|e| e["event_type"] == ty)
        .collect()
}

/// Wait until the log holds a line the speaker said (a tool call's input) that reads `input`.
async fn until_said(dir: &Path, input: &str) {
    let started = std::time::Instant::now();
    loop {
        let said = ["tool_applied", "rejected"]
            .iter()
            .flat_map(|ty| events_of(dir, ty))
            .any(|e| e["input"] == input);
        if said {
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "never said {input:?}: {:#?}",
            stored(dir)
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Hand the speaker's seat (`person`: to its person; else to an AI) from `seat`'s link.
async fn hand(s: &Served, seat: &str, person: bool) -> (u16, String) {
    let body = json!({"seat": "player", "person": person});
    s.post(seat, "/hand", &s.keys[seat], body).await
}

/// Every line of a seat's stream, as text.
async fn stream_text(s: &Served, seat: &str) -> Vec<String> {
    let raw = s.raw_feed(seat).await;
    serde_json::from_str::<Value>(&raw).unwrap()["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap().to_string())
        .collect()
}

/// A scene opened with an AI at the speaker's seat (`--speaker ai`, recorded replies): it says
/// its lines through the same planner, then waits; the GM gives the seat to a person, who plays
/// on. Both hand-overs are in the log and on every page's stream, and the log replays byte for
/// byte.
#[tokio::test]
async fn an_ai_speaks_at_a_served_scene_until_the_gm_gives_the_seat_to_a_person() {
    let dir = mill();
    ai_replies(dir.path());
    let args = [
        "--scene",
        "mill.scene.yaml",
        "--seed",
        "2",
        "--speaker",
        "ai",
        "--ai-lines",
        "2",
        "--replay",
        "ai.replay.jsonl",
    ];
    let s = serve(dir.path(), &args);
    until_said(dir.path(), "I talk to Old Tam about the ledger.").await;
    let player = s.feed("player", &s.keys["player"], None).await["state"].clone();
    assert_eq!(player["person_holds"], false, "{player}");
    assert!(player["ask"].is_null(), "an AI holds the seat: {player}");
    let watch = stream_text(&s, "watch").await;
    for line in [
        "(An AI speaks for the characters for now.)",
        "[move] Wren moves from the mill road to the mill yard.",
    ] {
        assert!(watch.iter().any(|l| l == line), "{line:?} in {watch:?}");
    }

    // A watcher hands over nothing; the GM gives the seat to its person.
    assert_eq!(hand(&s, "watch", true).await.0, 403);
    let (status, text) = hand(&s, "gm", true).await;
    assert_eq!(status, 204, "{text}");
    say(&s, "listen").await;
    until_said(dir.path(), "listen").await;
    let player = s.next_ask("player").await;
    assert_eq!(player["person_holds"], true, "{player}");

    let handed: Vec<bool> = events_of(dir.path(), "seat_handed")
        .iter()
        .map(|e| e["person"].as_bool().unwrap())
        .collect();
    assert_eq!(handed, [false, true]);
    let said: Vec<Value> = events_of(dir.path(), "model_called");
    assert_eq!(said.len(), 2, "two lines, as --ai-lines said: {said:?}");
    for seat in ["gm", "player", "watch"] {
        let lines = stream_text(&s, seat).await;
        assert!(
            lines
                .iter()
                .any(|l| l == "(A person speaks for the characters again.)"),
            "{seat}: {lines:?}"
        );
    }
    drop(s);
    let replay = crate::support::run_with(dir.path(), &["scene", "replay"], "");
    assert!(replay.contains("identical to the log"), "{replay}");
    assert!(replay.contains("(An AI speaks for the characters for now.)"));
}

/// The GM hands a person's seat to an AI mid-scene; the server is killed (SIGKILL) once the AI
/// has said its line and started again: the AI still holds the seat and says no line more than
/// it was given; the person claims the seat back from their own link and plays on.
#[tokio::test]
async fn a_seat_handed_to_an_ai_stays_handed_through_a_kill_and_its_person_claims_it_back() {
    let dir = mill();
    ai_replies(dir.path());
    let args = [
        "--scene",
        "mill.scene.yaml",
        "--seed",
        "7",
        "--ai-lines",
        "1",
        "--replay",
        "ai.replay.jsonl",
    ];
    let s = serve(dir.path(), &args);
    say(&s, "look around").await;
    let player = s.next_ask("player").await;
    assert_eq!(player["person_holds"], true, "{player}");
    // A person may hand over only their own seat; the GM any.
    let body = json!({"seat": "gm", "person": false});
    assert_eq!(
        s.post("player", "/hand", &s.keys["player"], body).await.0,
        403
    );
    let (status, text) = hand(&s, "gm", false).await;
    assert_eq!(status, 204, "{text}");
    assert_eq!(hand(&s, "gm", false).await.0, 403, "an AI holds it already");
    until_said(dir.path(), "I head into the mill yard.").await;

    let s = s.restarted(|| serve(dir.path(), &args));
    // The GM is asked only while no one speaks: the AI, its line said, waits for its person.
    s.next_ask("gm").await;
    let calls = events_of(dir.path(), "model_called");
    assert_eq!(calls.len(), 1, "no line more after the restart: {calls:?}");
    let player = s.feed("player", &s.keys["player"], None).await["state"].clone();
    assert_eq!(player["person_holds"], false, "still the AI's: {player}");
    let (status, text) = hand(&s, "player", true).await;
    assert_eq!(status, 204, "{text}");
    say(&s, "listen").await;
    until_said(dir.path(), "listen").await;

    let handed: Vec<bool> = events_of(dir.path(), "seat_handed")
        .iter()
        .map(|e| e["person"].as_bool().unwrap())
        .collect();
    assert_eq!(handed, [false, true]);
    let calls = events_of(dir.path(), "model_called");
    assert_eq!(calls.len(), 1, "no line more after the restart: {calls:?}");
    let lines = stream_text(&s, "watch").await;
    let at = |text: &str| lines.iter().position(|l| l == text).unwrap();
    assert!(
        at("(An AI speaks for the characters for now.)")
            < at("(A person speaks for the characters again.)"),
        "{lines:?}"
    );
}

/// A scene table opened before scenes had a GM link: `--new-link gm` as it reopens gives it one,
/// and the GM's page runs the scene.
#[tokio::test]
async fn an_old_scene_table_gets_a_gm_link_when_asked() {
    let dir = mill();
    let s = serve(dir.path(), &["--scene", "mill.scene.yaml", "--seed", "7"]);
    say(&s, "look around").await;
    drop(s);
    let path = dir.path().join("table.json");
    let mut table: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    table["seats"]
        .as_array_mut()
        .unwrap()
        .retain(|seat| seat["seat"] != "gm");
    std::fs::write(&path, table.to_string()).unwrap();

    let args = ["--scene", "mill.scene.yaml", "--new-link", "gm"];
    let s = crate::serve::start(dir.path(), &args, |_, line| line.contains("/gm#key="));
    assert!(s.stdout.contains("Reopening"), "{}", s.stdout);
    let gm = s.next_ask("gm").await;
    assert_eq!(gm["ask"]["ask"]["decision"], "run", "{gm}");
    assert!(
        gm["sheet"]["info"].as_str().unwrap().contains("Vesk"),
        "{gm}"
    );
}

/// A GM opens a scene from the host's page with an AI speaking for the characters: the table's
/// log starts with the hand-over to the AI and holds its lines; a speaker that is neither a
/// person nor an AI is refused.
#[tokio::test]
async fn the_hosts_page_opens_a_scene_with_an_ai_speaker() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("mill");
    std::fs::create_dir(&dir).unwrap();
    copy_examples(&dir, &["mill.scene.yaml"]);
    let jsonl: String = (0..12)
        .map(|_| {
            json!({"agent": "*", "purpose": "scene_player", "content": "I look around."})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(dir.join("ai.replay.jsonl"), jsonl).unwrap();
    let args = [
        "--host",
        root.path().to_str().unwrap(),
        "--replay",
        "mill/ai.replay.jsonl",
    ];
    let s = crate::serve::start(root.path(), &args, |_, line| line.starts_with("Serving "));
    let host_key = s
        .stdout
        .lines()
        .find_map(|l| {
            l.split_once("/host#key=")
                .map(|(_, k)| k.split(' ').next().unwrap())
        })
        .expect("the host's link")
        .to_string();
    let open = |body: Value| {
        let http = reqwest::Client::new();
        let (url, key) = (format!("{}/host/open", s.base), host_key.clone());
        async move {
            let r = http
                .post(url)
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let scene = json!({"campaign": "mill", "game": "scene", "file": "mill.scene.yaml",
                       "speaker": "robot", "seed": 2});
    assert_eq!(open(scene.clone()).await.0, 422);
    let mut scene = scene;
    scene["speaker"] = json!("ai");
    let (status, opened) = open(scene).await;
    assert_eq!(status, 200, "{opened}");
    let started = std::time::Instant::now();
    while events_of(&dir, "model_called").len() < 12 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{:#?}",
            stored(&dir)
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let events: Vec<Value> = stored(&dir)
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert_eq!(events[1]["event_type"], "seat_handed", "{events:#?}");
    assert_eq!(events[1]["person"], false);
    assert_eq!(
        events_of(&dir, "tool_applied")[0]["input"],
        "I look around."
    );
}

/// Click the button of the holders' list that reads `label`, once the page shows it.
async fn click_holder_button(page: &crate::support::browser::WebDriver, label: &str) {
    let find = format!(
        "return Array.from(document.querySelectorAll('#holders button')).some(b => b.textContent === '{label}')"
    );
    until(page, &find).await;
    page.eval(&format!(
        "Array.from(document.querySelectorAll('#holders button')).find(b => b.textContent === '{label}').click(); return true"
    ))
    .await;
}

/// In Chromium: the GM's page hands the speaker's seat to an AI, which says its line; the
/// speaker's page then offers the seat back, and taking it brings back the form to speak.
#[tokio::test]
async fn the_seat_goes_to_an_ai_and_back_from_the_pages_in_a_browser() {
    use crate::support::browser::WebDriver;
    let mut pages = Vec::new();
    for _ in 0..2 {
        let Some(page) = WebDriver::start_or_skip("the scene hand-over's browser test").await
        else {
            return;
        };
        pages.push(page);
    }
    let dir = mill();
    ai_replies(dir.path());
    let args = [
        "--scene",
        "mill.scene.yaml",
        "--seed",
        "7",
        "--ai-lines",
        "1",
        "--replay",
        "ai.replay.jsonl",
    ];
    let s = serve(dir.path(), &args);
    let (gm, player) = (&pages[0], &pages[1]);
    gm.open(&format!("{}#key={}", s.url("gm", ""), s.keys["gm"]))
        .await;
    player
        .open(&format!("{}#key={}", s.url("player", ""), s.keys["player"]))
        .await;
    shows(player, &s.next_ask("player").await).await;
    click_holder_button(gm, "Let an AI play").await;
    until_said(dir.path(), "I head into the mill yard.").await;
    until(
        player,
        "return document.getElementById('status').textContent.includes('An AI plays your seat now.')",
    )
    .await;
    until(
        player,
        "return document.body.innerText.includes('(An AI speaks for the characters for now.)')",
    )
    .await;
    click_holder_button(player, "Take my seat back").await;
    let back = s.next_ask("player").await;
    shows(player, &back).await;
    assert_eq!(back["person_holds"], true, "{back}");
    let handed: Vec<bool> = events_of(dir.path(), "seat_handed")
        .iter()
        .map(|e| e["person"].as_bool().unwrap())
        .collect();
    assert_eq!(handed, [false, true]);
}

/// `--hand-over-after`: a speaker who does not answer in time leaves the seat to an AI, which
/// speaks; the hand-over is in the log like the GM's.
#[tokio::test]
async fn an_idle_speakers_seat_goes_to_an_ai() {
    let dir = mill();
    ai_replies(dir.path());
    let args = [
        "--scene",
        "mill.scene.yaml",
        "--seed",
        "7",
        "--ai-lines",
        "1",
        "--replay",
        "ai.replay.jsonl",
        "--hand-over-after",
        "1",
    ];
    let s = serve(dir.path(), &args);
    s.next_ask("player").await;
    until_said(dir.path(), "I head into the mill yard.").await;
    let handed = events_of(dir.path(), "seat_handed");
    assert_eq!(handed.len(), 1, "{handed:?}");
    assert_eq!(handed[0]["person"], false);
    let player = s.feed("player", &s.keys["player"], None).await["state"].clone();
    assert_eq!(player["person_holds"], false, "{player}");
}

/// `troupe serve --scene` with an AI speaker whose model is the mock server at `url`.
fn ai_speaker_args<'a>(url: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--scene",
        "mill.scene.yaml",
        "--seed",
        "7",
        "--speaker",
        "ai",
        "--provider",
        "openai-compatible",
        "--base-url",
        url,
        "--model",
        "llama3.2",
    ];
    args.extend_from_slice(more);
    args
}

/// The AI at the speaker's seat calls a model server that is down: past its retries the seat
/// goes back to its person instead of stopping the table. The log keeps the failed call and a
/// `seat_handed` with why; the GM's page says why (as text), the others only that a person
/// speaks again. An idle person's seat is not handed to the failed AI again (`--hand-over-after
/// 1`); the person plays on through a SIGKILL and a restart; the GM hands the seat to the AI
/// again, it fails again and comes back again; the log replays byte for byte.
#[tokio::test]
async fn a_failing_ai_speaker_hands_the_seat_back_and_the_table_plays_on() {
    use crate::support::openai_server::{OpenAiServer, Personality};
    let down = OpenAiServer::start(Personality::Down);
    let url = down.base_url();
    let dir = mill();
    let args = ai_speaker_args(&url, &["--hand-over-after", "1"]);
    let s = serve(dir.path(), &args);
    let player = s.next_ask("player").await;
    assert!(player["stopped"].is_null(), "the table plays on: {player}");
    assert_eq!(player["person_holds"], true, "{player}");
    assert_eq!(player["ask"]["ask"]["decision"], "line", "{player}");

    let handed = events_of(dir.path(), "seat_handed");
    assert_eq!(handed.len(), 2, "{handed:?}");
    assert_eq!(handed[0]["person"], false);
    assert!(handed[0].get("reason").is_none(), "{}", handed[0]);
    assert_eq!(handed[1]["person"], true);
    let why = handed[1]["reason"].as_str().unwrap();
    assert!(
        why.contains("503") && why.contains("model is loading"),
        "{why}"
    );
    let calls = events_of(dir.path(), "model_called");
    assert_eq!(calls.len(), 1, "{calls:?}");
    let attempts = calls[0]["attempts"].as_array().unwrap();
    assert_eq!(
        attempts.len(),
        down.served().len(),
        "every attempt is logged"
    );
    assert!(attempts.len() > 1 && attempts.iter().all(|a| !a["error"].is_null()));

    let gm = stream_text(&s, "gm").await;
    assert!(
        gm.iter()
            .any(|l| l.contains("model failed") && l.contains("model is loading")),
        "the GM is told why: {gm:?}"
    );
    for seat in ["player", "watch"] {
        let lines = stream_text(&s, seat).await;
        let back = "(The AI could not go on: a person speaks for the characters again.)";
        assert!(lines.iter().any(|l| l == back), "{seat}: {lines:?}");
        let raw = s.raw_feed(seat).await;
        assert!(!raw.contains("model is loading"), "{seat}: {raw}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(
        events_of(dir.path(), "seat_handed").len(),
        2,
        "idle, the person keeps the seat"
    );
    say(&s, "look around").await;
    until_said(dir.path(), "look around").await;

    let s = s.restarted(|| serve(dir.path(), &args));
    let player = s.next_ask("player").await;
    assert_eq!(player["person_holds"], true, "still the person's: {player}");
    say(&s, "go to the mill yard").await;
    until_said(dir.path(), "go to the mill yard").await;
    assert_eq!(
        events_of(dir.path(), "model_called").len(),
        1,
        "no call more"
    );

    // Given to the AI again while the model is still down, the seat comes back again.
    let (status, text) = hand(&s, "gm", false).await;
    assert_eq!(status, 204, "{text}");
    let started = std::time::Instant::now();
    while events_of(dir.path(), "seat_handed").len() < 4 {
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let player = s.next_ask("player").await;
    assert_eq!(player["person_holds"], true, "{player}");
    assert!(player["stopped"].is_null(), "{player}");
    drop(s);
    let replay = crate::support::run_with(dir.path(), &["scene", "replay"], "");
    assert!(replay.contains("identical to the log"), "{replay}");
}

/// While the AI speaker's reply streams in (a model writing a token every 150 ms), every page
/// shows who is thinking and the token count; the unchecked draft reaches the speaker's own
/// page only, never the GM's or a watcher's stream.
#[tokio::test]
async fn every_page_sees_the_ai_speakers_token_count_and_only_its_own_page_the_draft() {
    use crate::support::openai_server::{OpenAiServer, Personality};
    let paced = OpenAiServer::start(Personality::Paced {
        delay: std::time::Duration::from_millis(150),
    });
    let url = paced.base_url();
    let dir = mill();
    let s = serve(dir.path(), &ai_speaker_args(&url, &["--ai-lines", "1"]));
    // The mock's reply to a call without a schema.
    let draft_words = ["Mock reply", "crew nods"];
    let mut counted = std::collections::BTreeSet::new();
    let mut drafted = false;
    let started = std::time::Instant::now();
    while events_of(dir.path(), "model_called").is_empty() {
        for seat in ["gm", "player", "watch"] {
            let raw = s.raw_feed(seat).await;
            let state = serde_json::from_str::<Value>(&raw).unwrap()["state"].clone();
            if state["thinking_tokens"].as_u64().is_some_and(|n| n > 0) {
                let who = state["thinking"].as_str().unwrap_or_default();
                assert!(who.starts_with("Player"), "{seat}: {state}");
                counted.insert(seat);
            }
            let draft = state["draft"].as_str().unwrap_or_default();
            if seat == "player" {
                drafted |= draft.contains("Mock reply");
                continue;
            }
            assert!(state["draft"].is_null(), "{seat} got a draft: {state}");
            for words in draft_words {
                assert!(
                    !raw.contains(words),
                    "{seat}'s stream holds the draft: {raw}"
                );
            }
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        counted.into_iter().collect::<Vec<_>>(),
        ["gm", "player", "watch"],
        "every page saw the count"
    );
    assert!(drafted, "the speaker's own page saw the draft");
    assert!(paced.served().iter().all(|r| r.streamed));
}

/// The mill with its hidden smuggler renamed to markers no other text holds: its id, its name
/// and its card are secrets of the GM's view.
fn mill_with_marked_secret() -> tempfile::TempDir {
    let dir = mill();
    let path = dir.path().join("mill.scene.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    let marked = yaml
        .replace("id: smuggler", "id: hiddenqz7")
        .replace("entity: smuggler", "entity: hiddenqz7")
        .replace("name: Vesk the smuggler", "name: Vesk QZ7")
        .replace("name: Vesk\n", "name: Vesk QZ7\n");
    assert_ne!(marked, yaml);
    std::fs::write(&path, marked).unwrap();
    dir
}

/// Issue 45: a GM's command the engine refuses names the hidden entity it was about ("hiddenqz7
/// has 0 of 'ledger'"): that refusal is the GM's to read, on the GM's stream alone; an applied
/// effect on the same hidden entity tells the other seats nothing of it either. Every seat's
/// whole stream is read byte for byte, the watcher's too.
#[tokio::test]
async fn a_gms_refused_and_applied_effects_on_a_hidden_entity_reach_only_the_gms_stream() {
    let dir = mill_with_marked_secret();
    let s = serve(dir.path(), &["--scene", "mill.scene.yaml", "--seed", "7"]);
    say(&s, "go to the mill yard").await;
    let refused = gm(
        &s,
        "effects",
        r#"[{"effect": "inventory", "entity": "hiddenqz7", "item": "ledger", "delta": -1}]"#,
    )
    .await;
    let applied = gm(
        &s,
        "effects",
        r#"[{"effect": "hp", "entity": "hiddenqz7", "delta": -1}]"#,
    )
    .await;
    say(&s, "listen").await;
    let _ = s.next_ask("player").await;
    let events = stored(dir.path());
    assert!(
        events
            .iter()
            .any(|e| e.contains("\"event_type\":\"rejected\"") && e.contains("hiddenqz7")),
        "the engine refused the GM's effect: {events:#?}\n{refused}"
    );
    assert!(
        events
            .iter()
            .any(|e| e.contains("\"event_type\":\"tool_applied\"")
                && e.contains("\"caller\":\"gm\"")),
        "the second effect applied: {applied}"
    );
    for seat in ["player", "watch"] {
        let raw = s.raw_feed(seat).await.to_lowercase();
        assert!(!raw.contains("qz7"), "{seat} read the hidden entity: {raw}");
        assert!(
            !raw.contains("refused"),
            "{seat} read the GM's refusal: {raw}"
        );
    }
    let gm_feed = s.raw_feed("gm").await;
    assert!(
        gm_feed.contains("refused") && gm_feed.contains("hiddenqz7"),
        "the GM reads why their effect was refused: {gm_feed}"
    );
}
