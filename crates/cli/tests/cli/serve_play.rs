//! What a new user hit at the web table (issue 46), over real HTTP against the real binary: the
//! GM's answers kept when they also end the questions, a command typed where an answer goes is
//! a command at every game's seats, people asked at once, and the party's decision on the pages.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve::{gm_answer, player_answer, serve};
use crate::support::{campaign_with, copy_examples, of_type, read_log};

/// The GM answers the AI's two questions and ticks "No more questions this turn" in the same
/// form: the answers are what the log keeps, and the questions end.
#[tokio::test]
async fn the_gms_answers_are_kept_when_they_also_end_the_questions() {
    let dir = campaign_with(&["campaign.json", "campaign.replay.jsonl"]);
    let s = serve(dir.path(), &["--seed", "3", "--turns", "1"]);
    let answers = s
        .play_gm(|state| state["ask"]["ask"]["decision"] == "answers")
        .await;
    let (status, text) = s
        .answer(
            "gm",
            &answers,
            json!({"answer_0": "Yes, barely.", "answer_1": "One, faint.", "finish": true}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    let end = s.play_gm(|_| false).await;
    assert_eq!(end["ended"], "played the 1 turn asked for");
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));
    let given = of_type(&log, "gm_answers");
    assert_eq!(given[0]["answers"], json!(["Yes, barely.", "One, faint."]));
    assert_eq!(given[0]["finished"], true);
    assert_eq!(given.len(), 1, "no more questions were asked: {given:#?}");
}

/// `/help` and `/whisper` typed into an encounter's action box are commands, not the action:
/// help lists the seat's commands, the whisper reaches the GM, and neither is played.
#[tokio::test]
async fn a_command_typed_in_an_encounters_action_box_is_a_command() {
    let dir = crate::encounter::campaign();
    let s = serve(
        dir.path(),
        &[
            "--encounter",
            "encounters/smithy.yaml",
            "--players",
            "human:Mara,ai,ai",
            "--seed",
            "12",
            "--replay",
            "encounters/smithy.replay.jsonl",
        ],
    );
    let ask = s.next_ask("p1").await;
    assert_eq!(ask["ask"]["ask"]["decision"], "action", "{ask}");
    let (status, help) = s.answer("p1", &ask, json!({"action": "/help"})).await;
    assert_eq!(status, 422, "{help}");
    assert!(help.contains("Commands: /whisper"), "{help}");
    let (status, text) = s
        .answer(
            "p1",
            &ask,
            json!({"action": "/whisper Is the smith lying?"}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    let again = s.next_ask("p1").await;
    let (status, text) = s
        .answer(
            "p1",
            &again,
            json!({"action": "I offer to work the bellows."}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    let log = wait_for(&dir.path().join("logs/encounter-1.jsonl"), "player_acted").await;
    let whispered = of_type(&log, "whispered");
    assert_eq!(whispered[0]["text"], "Is the smith lying?");
    let acted: Vec<&Value> = of_type(&log, "player_acted");
    assert!(
        acted
            .iter()
            .all(|e| !e["text"].as_str().unwrap().starts_with('/')),
        "{acted:#?}"
    );
}

/// At a served scene, `/help` typed into the speaker's line box is the speaker's help (which
/// names none of the GM's commands), and `/undo` (the GM's) is refused, not spoken.
#[tokio::test]
async fn a_command_typed_in_a_scenes_line_box_is_a_command_and_the_gms_are_not_the_speakers() {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path(), &["mill.scene.yaml"]);
    let s = serve(dir.path(), &["--scene", "mill.scene.yaml", "--seed", "7"]);
    let ask = s.next_ask("player").await;
    let (status, text) = s.answer("player", &ask, json!({"line": "/help"})).await;
    assert_eq!(status, 204, "{text}");
    let helped = s.next_ask("player").await;
    let shown = helped["ask"]["ask"]["shown"].to_string();
    assert!(shown.contains("/state"), "{shown}");
    for gm_only in ["/undo", "/gm", "/effects", "/note", "/end"] {
        assert!(
            !shown.contains(gm_only),
            "the speaker's help names {gm_only}: {shown}"
        );
    }
    let (status, text) = s.answer("player", &helped, json!({"line": "/undo"})).await;
    assert_eq!(status, 422, "{text}");
    assert!(text.contains("/undo is not a command here"), "{text}");
    let conn = rusqlite::Connection::open(dir.path().join("campaign.db")).unwrap();
    let spoken: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM scene_events WHERE body LIKE '%\"input\":\"/%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(spoken, 0, "no command was played as a line");
}

/// Two people at a party table are asked their questions at the same time (neither waits for
/// the other); the party's decision reaches their pages; a person who backed another player's
/// plan directs their character under it, not under their own rejected plan.
#[tokio::test]
async fn people_are_asked_at_once_and_see_where_the_party_landed() {
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
    let narration = s.next_ask("gm").await;
    s.answer("gm", &narration, gm_answer(&narration["ask"]["ask"]))
        .await;
    let (alex, priya) = (s.next_ask("alex").await, s.next_ask("priya").await);
    assert_eq!(alex["ask"]["ask"]["decision"], "questions", "{alex}");
    assert_eq!(
        priya["ask"]["ask"]["decision"], "questions",
        "Priya is asked while Alex has not answered: {priya}"
    );
    let end = s
        .play_seats_answering(&["gm", "alex", "priya"], |seat, ask| {
            match (seat, ask["decision"].as_str().unwrap()) {
                ("gm", _) => gm_answer(ask),
                // Back the first plan on offer.
                (_, "discussion") => {
                    let on = ask["fields"][1]["options"]
                        .as_array()
                        .and_then(|o| o.iter().find(|c| c["value"] != ""))
                        .map_or(json!(""), |c| c["value"].clone());
                    json!({"message": "Fine by me.", "on": on})
                }
                _ => player_answer(ask),
            }
        })
        .await;
    assert_eq!(end["ended"], "played the 1 turn asked for");
    let alex_page = s.raw_feed("alex").await;
    assert!(alex_page.contains("consensus ("), "{alex_page}");
    let log = read_log(&dir.path().join("logs/session-1.jsonl"));
    let settled = of_type(&log, "consensus")
        .into_iter()
        .rev()
        .find(|e| e["outcome"] != "conflicted")
        .cloned()
        .unwrap();
    for person in ["alex", "priya"] {
        let directive = of_type(&log, "directive")
            .into_iter()
            .find(|e| e["agent"] == person)
            .unwrap()["text"]
            .clone();
        if settled["proposer"] != person && settled["positions"][person] == "agree" {
            assert_ne!(
                directive, "Look around carefully.",
                "{person} backed {}'s plan but directs under their own",
                settled["proposer"]
            );
        }
    }
}

/// The run's log once it holds an event of type `t`.
async fn wait_for(path: &std::path::Path, t: &str) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let log = if path.exists() {
            read_log(path)
        } else {
            Vec::new()
        };
        if !of_type(&log, t).is_empty() {
            return log;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no {t} in {path:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
