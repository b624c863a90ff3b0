//! An encounter at the table server: the real binary on a free port, people's seats answered
//! over real HTTP (and in headless Chromium), the run's real log. The same spec, seed and
//! recorded replies as the terminal's encounter tests, so the two tables can be compared event
//! for event.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::encounter::{MARA, RUN, campaign, log, of, story};
use crate::serve::{Served, serve};
use crate::support::run_with;

/// `troupe serve` for the smithy encounter with Mara at her own link and two AI players.
fn serve_smithy(dir: &Path) -> Served {
    serve_smithy_with(dir, &[])
}

/// The same, with more arguments.
fn serve_smithy_with(dir: &Path, more: &[&str]) -> Served {
    let mut args = vec![
        "--encounter",
        "encounters/smithy.yaml",
        "--players",
        "human:Mara,ai,ai",
        "--seed",
        "12",
        "--replay",
        "encounters/smithy.replay.jsonl",
    ];
    args.extend_from_slice(more);
    serve(dir, &args)
}

/// Mara's answers at the terminal (`MARA`), as the page sends them.
fn mara_answer(ask: &Value, actions: &mut std::slice::Iter<'_, &str>) -> Value {
    match ask["decision"].as_str().unwrap() {
        "action" => json!({"action": actions.next().expect("more actions asked than Mara has")}),
        "roll" => json!({}),
        other => panic!("an encounter ask this test does not know: {other}"),
    }
}

/// Every line of a seat's whole stream, as text.
async fn stream(s: &Served, seat: &str) -> Vec<String> {
    let f = s.feed(seat, &s.keys[seat], None).await;
    f["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap().to_string())
        .collect()
}

/// What the GM's prompt and the spec hold that no seat may read: the GM's check notes, the
/// hidden goals, an NPC's persona, the replies the engine refused, the DC it caught.
const SECRETS: [&str; 6] = [
    "Easier (DC 11)",
    "forged entry",
    "The forge burns again, with the smith's blessing",
    "trusts people who offer to work",
    "fireball",
    "DC 14",
];

#[tokio::test]
async fn an_encounter_is_played_from_a_browser_seat_as_at_the_terminal_through_a_kill() {
    // The same run at the terminal, for comparison.
    let terminal = campaign();
    run_with(terminal.path(), &RUN, MARA);
    let expected = story(&log(terminal.path(), 1));

    let dir = campaign();
    let s = serve_smithy(dir.path());
    assert!(
        s.keys.contains_key("p1") && s.keys.contains_key("alex") && s.keys.contains_key("watch"),
        "a link for each seat and one to watch: {:?}",
        s.keys.keys()
    );
    assert!(s.stdout.contains("people play Mara"), "{}", s.stdout);
    let actions = [
        "I offer to work the bellows myself",
        "I keep pumping the bellows",
    ];
    let mut mara = actions.iter();
    // Mara's first action and a whisper; then the table waits for her roll.
    let state = s.next_ask("p1").await;
    assert_eq!(state["ask"]["ask"]["decision"], "action");
    assert!(
        state["sheet"]["info"]
            .as_str()
            .unwrap()
            .contains("You play Mara"),
        "{state}"
    );
    s.command(
        "p1",
        &state,
        "whisper",
        json!({"text": "Mara hides a spare key 7f3a"}),
    )
    .await;
    let state = s.next_ask("p1").await;
    let (status, text) = s
        .answer("p1", &state, mara_answer(&state["ask"]["ask"], &mut mara))
        .await;
    assert_eq!(status, 204, "{text}");
    let roll = loop {
        let state = s.next_ask("p1").await;
        if state["ask"]["ask"]["decision"] == "roll" {
            break state;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        roll["ask"]["ask"]["prompt"]
            .as_str()
            .unwrap()
            .contains("roll a d20 with advantage"),
        "{roll}"
    );

    // Killed while it waits for the roll, and started again: the same links, the same ask,
    // the streams exactly as they were.
    let before: Vec<(String, Vec<String>)> = futures_all(&s, &["p1", "alex", "watch"]).await;
    let s = s.restarted(|| serve_smithy(dir.path()));
    assert!(
        s.stdout.contains("Reopening the table of encounter run 1"),
        "{}",
        s.stdout
    );
    let state = s.next_ask("p1").await;
    assert_eq!(state["ask"]["ask"]["decision"], "roll", "{state}");
    assert_eq!(futures_all(&s, &["p1", "alex", "watch"]).await, before);

    // Play on to the resolution.
    let end = loop {
        let state = s.next_ask("p1").await;
        if !state["ended"].is_null() {
            break state;
        }
        let (status, text) = s
            .answer("p1", &state, mara_answer(&state["ask"]["ask"], &mut mara))
            .await;
        assert!(status == 204 || status == 409, "{status} {text}");
    };
    assert!(end["ended"].as_str().unwrap().len() > 10, "{end}");

    // The same run as at the terminal, event for event, and it replays identically.
    let served = log(dir.path(), 1);
    // (Mara's whisper is one more event: the sequence numbers differ by it.)
    assert_eq!(without_seq(&story(&served)), without_seq(&expected));
    assert_eq!(of(&served, "whispered").len(), 1);
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("events replayed, identical"), "{replay}");
    assert_eq!(
        std::fs::read_dir(dir.path().join("summaries"))
            .unwrap()
            .count(),
        1
    );

    // Each seat read the story; the whisper reached only Mara's seat (not the GM's page: the
    // GM a whisper is for is the model); no seat read a secret.
    let watch = stream(&s, "watch").await;
    assert!(
        watch.iter().any(|l| l.starts_with("GM: Rain needles")),
        "{watch:?}"
    );
    assert!(
        watch
            .iter()
            .any(|l| l == "Mara: I offer to work the bellows myself")
    );
    assert!(
        watch
            .iter()
            .any(|l| l.contains("Mara rolls d20 [5, 15] → 15: success"))
    );
    for seat in ["p1", "alex", "sam", "watch", "gm"] {
        let raw = s.raw_feed(seat).await;
        for secret in SECRETS {
            assert!(!raw.contains(secret), "{seat}'s stream holds {secret:?}");
        }
        // An AI player's action sent back for saying what happens is told to its seat alone.
        assert_eq!(raw.contains("confesses"), seat == "alex", "{seat}: {raw}");
        assert_eq!(raw.contains("7f3a"), seat == "p1", "{seat}: {raw}");
    }
}

fn without_seq(story: &[String]) -> Vec<Value> {
    story
        .iter()
        .map(|e| {
            let mut e: Value = serde_json::from_str(e).unwrap();
            e.as_object_mut().unwrap().remove("seq");
            e
        })
        .collect()
}

async fn futures_all(s: &Served, seats: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for seat in seats {
        out.push((seat.to_string(), stream(s, seat).await));
    }
    out
}

/// Mara leaves her seat to an AI and takes it back; Sam claims the seat an AI held for him.
#[tokio::test]
async fn a_person_hands_their_encounter_seat_to_an_ai_and_takes_it_back() {
    let dir = campaign();
    // An AI player's reply for Mara's seat while she is away.
    let replies = dir.path().join("encounters/smithy.replay.jsonl");
    let mut text = std::fs::read_to_string(&replies).unwrap();
    text.push_str(
        "{\"agent\": \"p1\", \"purpose\": \"encounter_action\", \"content\": {\"action\": \
         \"I work the bellows, steady and slow\", \"dialogue\": \"\"}}\n",
    );
    std::fs::write(&replies, text).unwrap();
    let s = serve_smithy(dir.path());
    let hand = |seat: &'static str, person: bool| {
        let s = &s;
        async move {
            let body = json!({"seat": seat, "person": person});
            let (status, text) = s.post(seat, "/hand", &s.keys[seat], body).await;
            assert_eq!(status, 204, "{seat}: {text}");
        }
    };
    let state = s.next_ask("p1").await;
    assert_eq!(state["person_holds"], true);
    // Sam claims his character from the AI; Mara leaves hers to one.
    hand("sam", true).await;
    hand("p1", false).await;
    // The AI plays Mara's action; the table waits for Sam, and Mara takes her seat back.
    let sam = s.next_ask("sam").await;
    assert_eq!(sam["ask"]["ask"]["decision"], "action", "{sam}");
    let watch = stream(&s, "watch").await;
    assert!(
        watch
            .iter()
            .any(|l| l == "Mara: I work the bellows, steady and slow"),
        "{watch:?}"
    );
    let mara = s.feed("p1", &s.keys["p1"], Some(u64::MAX)).await["state"].clone();
    assert!(
        mara["ask"].is_null() && mara["person_holds"] == false,
        "{mara}"
    );
    hand("p1", true).await;
    let sam_says = [
        "I lean on the cold forge",
        "I step between the factor and the back door",
    ];
    let (mut sam_says, mut answered) = (sam_says.iter(), Vec::new());
    let end = loop {
        let mut ended = None;
        for seat in ["p1", "sam"] {
            let state = s.feed(seat, &s.keys[seat], Some(u64::MAX)).await["state"].clone();
            assert!(state["stopped"].is_null(), "{state}");
            if !state["ended"].is_null() {
                ended = Some(state);
                break;
            }
            if state["ask"].is_null() {
                continue;
            }
            let decision = state["ask"]["ask"]["decision"]
                .as_str()
                .unwrap()
                .to_string();
            let values = match (seat, decision.as_str()) {
                ("p1", "action") => json!({"action": "I keep pumping the bellows"}),
                ("sam", "action") => json!({"action": sam_says.next().unwrap()}),
                _ => json!({}),
            };
            let (status, text) = s.answer(seat, &state, values).await;
            assert!(status == 204 || status == 409, "{status} {text}");
            answered.push(format!("{seat} {decision}"));
        }
        if let Some(state) = ended {
            break state;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!end["ended"].is_null());
    assert!(answered.contains(&"p1 action".to_string()), "{answered:?}");
    let log = log(dir.path(), 1);
    let handed: Vec<(&str, bool)> = of(&log, "seat_handed")
        .iter()
        .map(|e| (e["seat"].as_str().unwrap(), e["person"] == true))
        .collect();
    assert_eq!(handed, [("sam", true), ("p1", false), ("p1", true)]);
    // What the AI was shown for Mara's seat is in the log with its reply.
    let for_mara: Vec<_> = of(&log, "player_called")
        .into_iter()
        .filter(|c| c["call"]["agent"] == "p1")
        .collect();
    assert_eq!(for_mara.len(), 1);
    assert!(
        for_mara[0]["call"]["attempts"][0]
            .to_string()
            .contains("Mara")
    );
    let acted = |seat: &str| -> Vec<String> {
        of(&log, "player_acted")
            .iter()
            .filter(|e| e["seat"] == seat)
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        acted("p1"),
        [
            "I work the bellows, steady and slow",
            "I keep pumping the bellows"
        ]
    );
    assert_eq!(acted("sam")[0], "I lean on the cold forge");
    let watch = stream(&s, "watch").await;
    for line in [
        "(An AI player plays for Mara for now.)",
        "(Mara is back and plays again.)",
        "(Sam (Rex Nova) is back and plays again.)",
    ] {
        assert!(watch.iter().any(|l| l == line), "{line}: {watch:?}");
    }
}

/// Mara plays the encounter from her page in headless Chromium: her action, a whisper with the
/// page's command button, her roll; what she writes (markup included) is shown as text.
#[tokio::test]
async fn mara_plays_the_encounter_from_her_page_in_a_browser() {
    use crate::support::browser::{WebDriver, pixels_of};
    let Some(page) = WebDriver::start_or_skip("the encounter table's browser test").await else {
        return;
    };
    let dir = campaign();
    let s = serve_smithy(dir.path());
    page.open(&format!("{}#key={}", s.url("p1", ""), s.keys["p1"]))
        .await;
    let marked = "I keep pumping the bellows <script>document.title='pwned'</script><b>hard</b>";
    let mut actions = ["I offer to work the bellows myself", marked].into_iter();
    let mut whispered = false;
    let started = Instant::now();
    let end = loop {
        let state = s.feed("p1", &s.keys["p1"], Some(u64::MAX)).await["state"].clone();
        assert!(state["stopped"].is_null(), "{state}");
        if !state["ended"].is_null() {
            break state;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the run did not end"
        );
        if state["ask"].is_null() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let script = if !whispered {
            whispered = true;
            WHISPER_BY_BUTTON
        } else {
            crate::serve::FILL_AND_SEND
        };
        let values = match state["ask"]["ask"]["decision"].as_str().unwrap() {
            "action" if script == WHISPER_BY_BUTTON => json!({"text": "a word for the GM"}),
            "action" => json!({"action": actions.next().unwrap()}),
            _ => json!({}),
        };
        crate::serve::answer_from_page(&s, "p1", &page, script, &values, &state).await;
    };
    assert!(!end["ended"].is_null());
    let log = log(dir.path(), 1);
    assert_eq!(of(&log, "whispered")[0]["text"], "a word for the GM");
    let mara: Vec<&str> = of(&log, "player_acted")
        .iter()
        .filter(|e| e["seat"] == "p1")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(mara, ["I offer to work the bellows myself", marked]);
    // Her page: the story with her markup as text, the whisper hers alone, the end, her seat.
    let waited = Instant::now();
    let story = loop {
        let story = page
            .eval("return document.getElementById('story').innerText")
            .await;
        let story = story.as_str().unwrap_or_default().to_string();
        if story.contains("The encounter is over") {
            break story;
        }
        assert!(waited.elapsed() < Duration::from_secs(20), "{story}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(story.contains(&format!("Mara: {marked}")), "{story}");
    assert!(
        story.contains("You whispered to the GM: a word for the GM"),
        "{story}"
    );
    assert!(story.contains("Mara rolls d20 [5, 15]"), "{story}");
    let markup = page
        .eval("return document.querySelectorAll('#story b, #story script').length")
        .await;
    assert_eq!(markup, 0);
    assert_eq!(page.eval("return document.title").await, "troupe table");
    let sheet = page
        .eval("return document.getElementById('sheet').innerText")
        .await;
    assert!(
        sheet.as_str().unwrap().contains("You play Mara."),
        "{sheet}"
    );
    let shot = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("encounter-mara.png");
    let rgb = page.screenshot(&shot).await;
    let pixels = rgb.len() / 3;
    assert!(
        pixels_of(&rgb, [0xff, 0xff, 0xff]) * 10 > pixels,
        "the panels are drawn ({})",
        shot.display()
    );
}

/// Open the ask's first command (the whisper), fill its form and press its button.
const WHISPER_BY_BUTTON: &str = r#"
const values = arguments[0];
if (document.getElementById('ask').dataset.ask !== String(arguments[1])) return false;
const details = document.querySelector('#ask details');
if (!details) return false;
details.open = true;
const input = details.querySelector('[data-name]');
input.value = values.text;
details.querySelector('button[type=submit]').click();
return true;
"#;

/// Kit joins the running encounter from the invitation link while the table waits on Mara:
/// what Kit says while waiting is held and told to the table once Kit is seated (seed 003's held
/// messages); Kit acts from the current round on; Kit's new link outlives a restart.
#[tokio::test]
async fn a_person_joins_from_the_invitation_link_and_what_they_said_waiting_is_held() {
    let dir = campaign();
    let mut s = serve_smithy(dir.path());
    assert!(
        s.keys.contains_key("join"),
        "an invitation link: {:?}",
        s.keys.keys()
    );
    let mara = s.next_ask("p1").await;
    let invite = s.next_ask("join").await;
    assert_eq!(invite["ask"]["ask"]["decision"], "join");
    assert!(invite["holders"].as_array().unwrap().is_empty());
    let (status, text) = s
        .answer(
            "join",
            &invite,
            json!({"name": "Kit", "character": "Kestrel"}),
        )
        .await;
    assert_eq!(status, 200, "{text}");
    let open: Value = serde_json::from_str(&text).unwrap();
    let (path, key) = open["open"].as_str().unwrap().split_once("#key=").unwrap();
    assert!(path.ends_with("/p2"), "{path}");
    s.keys.insert("p2".into(), key.to_string());
    let held = "Hello, I'm new here <b>hi</b>";
    let waiting = s.next_ask("p2").await;
    assert_eq!(waiting["ask"]["ask"]["decision"], "held");
    let (status, text) = s.answer("p2", &waiting, json!({"text": held})).await;
    assert_eq!(status, 204, "{text}");
    assert!(
        !s.raw_feed("watch").await.contains("new here"),
        "held until Kit is seated"
    );

    // Mara acts; the table seats Kit before its next step, then Kit acts in this round.
    let (status, text) = s
        .answer(
            "p1",
            &mara,
            json!({"action": "I offer to work the bellows myself"}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    let kit = loop {
        let state = s.next_ask("p2").await;
        if state["ask"]["ask"]["decision"] == "action" {
            break state;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (status, text) = s
        .answer(
            "p2",
            &kit,
            json!({"action": "I hold the lantern up for Mara"}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    let (status, _) = s.answer("p2", &waiting, json!({"text": "too late"})).await;
    assert_eq!(status, 409, "Kit is seated: nothing more is held");
    let log = log(dir.path(), 1);
    let joined = of(&log, "seat_joined");
    assert_eq!(joined[0]["seat"]["id"], "p2");
    assert_eq!(joined[0]["seat"]["character"], "Kestrel");
    assert_eq!(joined[0]["seat"]["kind"], "person");
    let seq = joined[0]["seq"].as_u64().unwrap();
    let next = log.iter().find(|e| e["seq"] == seq + 1).unwrap();
    assert_eq!(next["event_type"], "held_delivered", "{next}");
    assert_eq!(next["texts"], json!([held]));
    let table = std::fs::read_to_string(dir.path().join("table.json")).unwrap();
    assert!(table.contains("\"p2\"") && !table.contains(key), "{table}");

    // After a restart, Kit's link still opens Kit's seat; the game goes on to the end.
    let s = s.restarted(|| serve_smithy(dir.path()));
    let started = Instant::now();
    let end = loop {
        let mut ended = None;
        for seat in ["p1", "p2"] {
            let state = s.feed(seat, &s.keys[seat], Some(u64::MAX)).await["state"].clone();
            assert!(state["stopped"].is_null(), "{state}");
            if !state["ended"].is_null() {
                ended = Some(state);
                break;
            }
            let decision = state["ask"]["ask"]["decision"].as_str().unwrap_or_default();
            let values = match (seat, decision) {
                (_, "") => continue,
                ("p1", "action") => json!({"action": "I keep pumping the bellows"}),
                ("p2", "action") => json!({"action": "I keep the lantern steady"}),
                _ => json!({}),
            };
            let (status, text) = s.answer(seat, &state, values).await;
            assert!(status == 204 || status == 409, "{status} {text}");
        }
        if let Some(state) = ended {
            break state;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run did not end"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!end["ended"].is_null());
    let watch = stream(&s, "watch").await;
    let at = |needle: &str| watch.iter().position(|l| l.contains(needle));
    let (join_line, held_line) = (at("Kit joins the table, playing Kestrel."), at(held));
    assert!(join_line.is_some() && held_line > join_line, "{watch:?}");
    assert!(
        watch
            .iter()
            .any(|l| l == "Kestrel: I hold the lantern up for Mara"),
        "{watch:?}"
    );
}

/// A table stopped saved (here after the rounds asked for) says so on every page, instead of
/// leaving the pages waiting on a game that is not playing.
#[tokio::test]
async fn a_table_stopped_after_its_rounds_says_so() {
    let dir = campaign();
    let s = serve_smithy_with(dir.path(), &["--turns", "1"]);
    let mut actions = ["I offer to work the bellows myself"].into_iter();
    let state = loop {
        let state = s.next_ask("p1").await;
        if !state["stopped"].is_null() || !state["ended"].is_null() {
            break state;
        }
        let values = match state["ask"]["ask"]["decision"].as_str().unwrap() {
            "action" => json!({"action": actions.next().expect("only one round is played")}),
            _ => json!({}),
        };
        let (status, text) = s.answer("p1", &state, values).await;
        assert!(status == 204 || status == 409, "{status} {text}");
    };
    assert!(state["ended"].is_null(), "{state}");
    let stopped = state["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with("stopped after round 1 as asked"),
        "{stopped}"
    );
    assert!(
        stopped.contains("goes on when its server starts again"),
        "{stopped}"
    );
}

/// A Lasers & Feelings encounter at the table server: served as a session of the campaign's
/// characters with an AI GM whose adventure is the spec; a person plays Alex's character from
/// their link; when the session ends, the encounter's summary, tally and NPC memory are written
/// as at the terminal.
#[tokio::test]
async fn a_lasers_and_feelings_encounter_is_served_as_a_session_and_writes_its_outcome() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(examples.join("aigm.json"), dir.path().join("campaign.json")).unwrap();
    std::fs::copy(
        examples.join("aigm.replay.jsonl"),
        dir.path().join("r.jsonl"),
    )
    .unwrap();
    let spec = examples.join("encounters/docking.yaml");
    let args = [
        "--encounter",
        spec.to_str().unwrap(),
        "--players",
        "human,ai,ai",
        "--seed",
        "7",
        "--turns",
        "2",
        "--replay",
        "r.jsonl",
    ];
    let s = serve(dir.path(), &args);
    assert!(
        s.stdout.contains("plays by Lasers & Feelings") && s.stdout.contains("people play Zara-7"),
        "{}",
        s.stdout
    );
    // The GM is an AI: no GM link; every character's seat and the watchers'.
    assert_eq!(
        s.keys.keys().collect::<Vec<_>>(),
        ["alex", "priya", "sam", "watch"]
    );
    let pending = dir.path().join("encounter-sessions/session-1.json");
    assert!(pending.exists(), "the outcome waits for the session's end");
    // Killed while Alex's seat is asked, and started with the same command: the same session
    // goes on; the encounter is not prepared a second time.
    s.next_ask("alex").await;
    let s = s.restarted(|| serve(dir.path(), &args));
    assert!(
        s.stdout.contains("Reopening the table of session 1"),
        "{}",
        s.stdout
    );
    let ended = s.play_seats(&["alex"]).await;
    assert!(!ended["ended"].is_null(), "{ended}");

    let log = crate::support::read_log(&dir.path().join("logs/session-1.jsonl"));
    let started = &crate::support::of_type(&log, "session_started")[0];
    let scenario = &started["campaign"]["gm"]["scenario"];
    assert!(
        scenario["text"]
            .as_str()
            .unwrap()
            .starts_with("Docking Trouble at Halcyon Ring."),
        "{scenario}"
    );
    // The person's decisions are the page's, not the recorded model's.
    assert!(
        log.iter().any(|e| e["event_type"] == "strategic_intent"
            && e["agent"] == "alex"
            && e["intent"]["strategy"] == "Look around carefully."),
        "alex's plan came from the page"
    );
    let tally: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("tally.json")).unwrap())
            .unwrap();
    assert_eq!(tally["docking-at-halcyon-ring"]["runs"], 1, "{tally}");
    assert!(!dir.path().join("logs/session-2.jsonl").exists());
    let deadline = Instant::now() + Duration::from_secs(10);
    while pending.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!pending.exists(), "the outcome was written");
    let summaries = std::fs::read_dir(dir.path().join("summaries"))
        .unwrap()
        .count();
    assert_eq!(summaries, 1);
}

/// The events still in force: an `undone` takes back those from its `from` on.
fn live(log: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in log {
        if e["event_type"] == "undone" {
            let from = e["from"].as_u64().unwrap();
            out.retain(|kept| kept["seq"].as_u64().unwrap() < from);
        } else {
            out.push(e.clone());
        }
    }
    out
}

/// Wait until `seat` is asked for this decision; its state then.
async fn until_asked(s: &Served, seat: &str, decision: &str) -> Value {
    let started = Instant::now();
    loop {
        let state = s.next_ask(seat).await;
        if state["ask"]["ask"]["decision"] == decision {
            return state;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{seat} never asked for {decision}: {state}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The GM's page takes back the last round as `troupe encounter undo` does: the table stops
/// where it waits, the log gets the same `undone` event, every page is told, and the round is
/// asked again. Through a SIGKILL and a restart the streams are as they were and the round is
/// still taken back; played on to its end, the run tells the terminal's story and replays
/// identically. A player's page has no undo; with no round to take back, nothing is logged and
/// the GM's page says so.
#[tokio::test]
async fn the_gms_page_takes_back_the_last_round_of_an_encounter_through_a_kill() {
    let terminal = campaign();
    run_with(terminal.path(), &RUN, MARA);
    let expected = story(&log(terminal.path(), 1));

    let dir = campaign();
    let s = serve_smithy(dir.path());
    until_asked(&s, "p1", "action").await;
    let gm = s.next_ask("gm").await;
    assert_eq!(gm["ask"]["standing"], true, "{gm}");
    assert_eq!(crate::serve::command_names(&gm), ["undo"]);
    s.command("gm", &gm, "undo", json!({})).await;
    let started = Instant::now();
    loop {
        let gm = s.next_ask("gm").await;
        if gm["ask"]["ask"]["shown"].to_string().contains("no round") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{gm}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(of(&log(dir.path(), 1), "undone").is_empty());

    // Mara acts; round 1 is played to her roll. Her page cannot take it back.
    let mara = until_asked(&s, "p1", "action").await;
    let action = json!({"action": "I offer to work the bellows myself"});
    assert_eq!(s.answer("p1", &mara, action).await.0, 204);
    let roll = until_asked(&s, "p1", "roll").await;
    let body = json!({"ask_id": roll["ask"]["id"],
                      "answer": {"answer": "command", "name": "undo", "values": {}}});
    let (status, text) = s.post("p1", "/answer", &s.keys["p1"], body).await;
    assert!((400..500).contains(&status), "{status} {text}");

    let gm = s.next_ask("gm").await;
    s.command("gm", &gm, "undo", json!({})).await;
    until_asked(&s, "p1", "action").await;
    let served = log(dir.path(), 1);
    let undone = of(&served, "undone");
    assert_eq!(undone.len(), 1, "{undone:?}");
    // What `troupe encounter undo` records after round 1: from Mara's action, event 3.
    let last = served.last().unwrap()["seq"].clone();
    assert_eq!(
        *undone[0],
        json!({"seq": last, "event_type": "undone", "from": 3})
    );
    for seat in ["p1", "alex", "watch", "gm"] {
        let lines = stream(&s, seat).await;
        assert!(
            lines.iter().any(|l| l.contains("took back the last round")),
            "{seat}: {lines:?}"
        );
    }

    let seats = ["p1", "alex", "watch", "gm"];
    let before = futures_all(&s, &seats).await;
    let s = s.restarted(|| serve_smithy(dir.path()));
    until_asked(&s, "p1", "action").await;
    assert_eq!(
        futures_all(&s, &seats).await,
        before,
        "the streams as they were"
    );
    assert_eq!(of(&log(dir.path(), 1), "undone").len(), 1);

    let actions = [
        "I offer to work the bellows myself",
        "I keep pumping the bellows",
    ];
    let mut mara = actions.iter();
    loop {
        let state = s.next_ask("p1").await;
        if !state["ended"].is_null() {
            break;
        }
        let (status, text) = s
            .answer("p1", &state, mara_answer(&state["ask"]["ask"], &mut mara))
            .await;
        assert!(status == 204 || status == 409, "{status} {text}");
    }
    let served = live(&log(dir.path(), 1));
    assert_eq!(without_seq(&story(&served)), without_seq(&expected));
    let replay = run_with(dir.path(), &["encounter", "replay"], "");
    assert!(replay.contains("events replayed, identical"), "{replay}");
}

/// Issue 45: an encounter's AI GM writes with the encounter's secrets in its prompt (DCs, the
/// hidden goals, the NPCs' personas). Against a model that repeats its whole prompt in every
/// string it streams, no page, the GM link's included (its person is a player's peer), reads a
/// byte of the GM's draft or of a secret; every page still counts the GM's tokens.
#[tokio::test]
async fn no_page_reads_the_ai_gms_streaming_draft_even_from_a_parrot() {
    use crate::support::openai_server::{OpenAiServer, Personality};
    let parrot = OpenAiServer::start(Personality::Parrot {
        delay: Duration::from_millis(3),
    });
    let url = parrot.base_url();
    let dir = campaign();
    let s = serve(
        dir.path(),
        &[
            "--encounter",
            "encounters/smithy.yaml",
            "--players",
            "human:Mara,ai",
            "--seed",
            "12",
            "--provider",
            "openai-compatible",
            "--base-url",
            &url,
            "--model",
            "parrot",
        ],
    );
    let seats = ["gm", "p1", "watch"];
    let mut counted = std::collections::BTreeSet::new();
    let started = Instant::now();
    while counted.len() < seats.len() && started.elapsed() < Duration::from_secs(60) {
        for seat in seats {
            let raw = s.raw_feed(seat).await;
            for secret in SECRETS.iter().chain(["calm_smith_dc", "relight_dc"].iter()) {
                assert!(!raw.contains(secret), "{seat} read {secret:?}: {raw}");
            }
            let state = serde_json::from_str::<Value>(&raw).unwrap()["state"].clone();
            assert!(state["draft"].is_null(), "{seat} got a draft: {state}");
            if state["thinking"] == "The GM" && state["thinking_tokens"].as_u64() > Some(0) {
                counted.insert(seat);
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        counted.into_iter().collect::<Vec<_>>(),
        ["gm", "p1", "watch"],
        "every page counted the GM's tokens while it streamed"
    );
    assert!(parrot.served().iter().any(|r| r.streamed));
}
