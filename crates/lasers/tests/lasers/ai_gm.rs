#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The AI game master's seat over recorded replies: a narration that decides for a character
//! goes back once with what was wrong and the rewrite is what the table gets; a rewrite that is
//! flagged too is kept and said so; an outcome against the dice is caught; a model that fails
//! twice stops the seat; and the GM may end the session only when no turn limit is set.

use crate::support;

use std::sync::Arc;

use serde_json::json;
use troupe_agents::{GmView, PromptSet, RollLine};
use troupe_lasers::{AiGm, GmAsk, GmDecision, GmQuestion, GmReply, GmSeat, SeatNote};
use troupe_llm::{Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};

/// The AI GM asked as the game asks it (through the seat protocol), its answer read back.
async fn asked(seat: &mut AiGm, decision: GmAsk, view: &GmView) -> GmReply<String> {
    let question = GmQuestion {
        decision: &decision,
        view,
        error: None,
        seeds: Default::default(),
    };
    let answer = seat
        .decide(&question, &mut troupe_engine::attempts::Unwatched)
        .await;
    question.read(answer).unwrap().map(|d| match d {
        GmDecision::Text(text) => text,
        other => panic!("a text was asked, not {other:?}"),
    })
}

/// The seat asked for a narration and for an outcome, as the game asks them.
trait Narrates {
    async fn narrate(&mut self, view: &GmView) -> GmReply<String>;
    async fn narrate_outcome(&mut self, view: &GmView) -> GmReply<String>;
}

impl Narrates for AiGm {
    async fn narrate(&mut self, view: &GmView) -> GmReply<String> {
        asked(self, GmAsk::Narration, view).await
    }
    async fn narrate_outcome(&mut self, view: &GmView) -> GmReply<String> {
        asked(self, GmAsk::Outcome, view).await
    }
}

/// The GM's view at the start of the example AI-GM campaign (Zara-7, Rex Nova, Ambassador Vell).
fn view() -> GmView {
    support::gm_view_at_start("aigm.json")
}

fn gm(replies: Vec<ReplayEntry>) -> AiGm {
    let gateway = Gateway::new(
        Arc::new(ReplayModel::from_entries(replies)),
        RetryPolicy::default(),
        Arc::new(ScaledSleeper { factor: 0.0 }),
    );
    AiGm::new(gateway, PromptSet::embedded())
}

fn narration(text: &str) -> ReplayEntry {
    support::entry("gm_narration", json!({ "narration": text }))
}

fn outcome(text: &str, end_session: bool) -> ReplayEntry {
    support::entry(
        "gm_outcome",
        json!({ "outcome": text, "end_session": end_session }),
    )
}

/// The notes in order, as short tags: "call:PURPOSE" or "flag:CHECK:sent_back:kept".
fn tags(notes: &[SeatNote]) -> Vec<String> {
    notes
        .iter()
        .map(|n| match n {
            SeatNote::Call { purpose, .. } => format!("call:{purpose}"),
            SeatNote::Flag {
                check,
                sent_back,
                kept,
                ..
            } => format!("flag:{check}:{sent_back}:{kept}"),
            SeatNote::Mark(mark) => format!("mark:{mark:?}"),
        })
        .collect()
}

/// The prompt the model was sent on the `n`th call note (all its messages, joined).
fn prompt_of(notes: &[SeatNote], n: usize) -> String {
    notes
        .iter()
        .filter_map(|note| match note {
            SeatNote::Call { record, .. } => Some(
                record
                    .messages
                    .iter()
                    .map(|m| m.content.clone())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            SeatNote::Flag { .. } | SeatNote::Mark(_) => None,
        })
        .nth(n)
        .unwrap()
}

const DECIDES: &str = "The airlock hisses open. Rex Nova draws his blaster and fires.";
const FAIR: &str = "The airlock hisses open and a battered drone rolls out. What do you do?";

#[tokio::test]
async fn a_narration_that_decides_for_a_character_is_sent_back_once_and_the_rewrite_is_told() {
    let mut seat = gm(vec![narration(DECIDES), narration(FAIR)]);
    let reply = seat.narrate(&view()).await;
    assert_eq!(reply, GmReply::Answer(FAIR.to_string()));
    let notes = seat.take_notes();
    assert_eq!(
        tags(&notes),
        [
            "call:gm_narration",
            "flag:decides_for_character:true:false",
            "call:gm_narration"
        ]
    );
    let SeatNote::Flag { detail, text, .. } = &notes[1] else {
        panic!("{:?}", notes[1]);
    };
    assert_eq!(text, DECIDES);
    assert!(detail.contains("Rex Nova draws his blaster"), "{detail}");
    assert!(!prompt_of(&notes, 0).contains("Your last try was sent back"));
    let second = prompt_of(&notes, 1);
    assert!(
        second.contains(&format!("Your last try was sent back: {detail}")),
        "{second}"
    );
    assert!(seat.take_notes().is_empty(), "notes are handed over once");
}

#[tokio::test]
async fn a_rewrite_that_is_flagged_too_is_kept_and_marked_kept() {
    let again = "Zara-7 decides the drone is harmless. What do you do?";
    let mut seat = gm(vec![narration(DECIDES), narration(again), narration(FAIR)]);
    let reply = seat.narrate(&view()).await;
    assert_eq!(reply, GmReply::Answer(again.to_string()));
    let notes = seat.take_notes();
    assert_eq!(
        tags(&notes),
        [
            "call:gm_narration",
            "flag:decides_for_character:true:false",
            "call:gm_narration",
            "flag:decides_for_character:false:true"
        ]
    );
}

/// Issue 33: the scenario's notes are the GM's secret. A narration that reads one out is sent
/// back; if the rewrite reads it out again, the sentences that do are withheld, not kept.
#[tokio::test]
async fn a_private_note_read_out_twice_is_withheld_not_kept() {
    let leak = "The drone will stand down for anyone who offers it a power cell. What do you do?";
    let again =
        "Dust drifts. THE DRONE WILL STAND DOWN FOR ANYONE WHO OFFERS IT a cell! What do you do?";
    let mut seat = gm(vec![narration(leak), narration(again)]);
    let reply = seat.narrate(&view()).await;
    assert_eq!(
        reply,
        GmReply::Answer("Dust drifts. [withheld] What do you do?".to_string())
    );
    assert_eq!(
        tags(&seat.take_notes()),
        [
            "call:gm_narration",
            "flag:private_note_verbatim:true:false",
            "call:gm_narration",
            "flag:private_note_verbatim:false:true"
        ]
    );
}

#[tokio::test]
async fn an_outcome_of_clean_success_after_no_successes_is_caught() {
    let mut v = view();
    v.rolls = vec![RollLine {
        character: "Rex Nova".into(),
        summary: "lasers, number 2: [3] → 0 successes (it goes wrong)".into(),
        successes: 0,
    }];
    let clean = "The lock clicks and opens perfectly; the vault is theirs.";
    let fitting = "The lock sparks and jams shut, and somewhere an alarm starts to wail.";
    let mut seat = gm(vec![outcome(clean, false), outcome(fitting, false)]);
    assert_eq!(
        seat.narrate_outcome(&v).await,
        GmReply::Answer(fitting.to_string())
    );
    let notes = seat.take_notes();
    assert_eq!(
        tags(&notes),
        [
            "call:gm_outcome",
            "flag:outcome_contradicts_dice:true:false",
            "call:gm_outcome"
        ]
    );
    assert!(prompt_of(&notes, 1).contains("the dice show no successes"));

    // The same words after two successes are not flagged.
    v.rolls[0].successes = 2;
    let mut seat = gm(vec![outcome(clean, false)]);
    assert_eq!(
        seat.narrate_outcome(&v).await,
        GmReply::Answer(clean.to_string())
    );
    assert_eq!(tags(&seat.take_notes()), ["call:gm_outcome"]);
}

#[tokio::test]
async fn a_model_that_fails_twice_stops_the_seat() {
    // No replies at all: every call is an error.
    let mut seat = gm(Vec::new());
    let GmReply::Fail(why) = seat.narrate(&view()).await else {
        panic!("expected a failure");
    };
    assert!(why.contains("failed twice"), "{why}");
    let calls = tags(&seat.take_notes());
    assert!(calls.len() >= 2 && calls.iter().all(|c| c == "call:gm_narration"));

    // Replies that pass the schema but say nothing (blanks) fail the same way.
    let blank = " ".repeat(30);
    let mut seat = gm(vec![narration(&blank), narration(&blank), narration(FAIR)]);
    assert!(matches!(seat.narrate(&view()).await, GmReply::Fail(_)));
    assert_eq!(
        tags(&seat.take_notes()),
        ["call:gm_narration", "call:gm_narration"]
    );

    // One failure is not enough: the second try is told.
    let mut seat = gm(vec![narration(&blank), narration(FAIR)]);
    assert_eq!(
        seat.narrate(&view()).await,
        GmReply::Answer(FAIR.to_string())
    );
}

#[tokio::test]
async fn the_gm_ends_the_session_at_the_next_narration_only_without_a_turn_limit() {
    let done = "The drone powers down for good and the fuel cells are the crew's.";
    let mut v = view();
    let mut seat = gm(vec![outcome(done, true), narration(FAIR)]);
    assert_eq!(seat.narrate_outcome(&v).await, GmReply::Answer(done.into()));
    v.turn = 2;
    let reply = seat.narrate(&v).await;
    assert!(matches!(reply, GmReply::End(_)), "{reply:?}");
    assert_eq!(
        tags(&seat.take_notes()),
        ["call:gm_outcome"],
        "ending asks the model nothing"
    );
    // After the end was reported, the seat narrates again if asked.
    assert_eq!(seat.narrate(&v).await, GmReply::Answer(FAIR.into()));

    // With a turn limit the session plays its turns: end_session is ignored.
    let mut v = view();
    v.last_turn = Some(3);
    let mut seat = gm(vec![outcome(done, true), narration(FAIR)]);
    assert_eq!(seat.narrate_outcome(&v).await, GmReply::Answer(done.into()));
    v.turn = 2;
    assert_eq!(seat.narrate(&v).await, GmReply::Answer(FAIR.into()));

    // Without a limit but end_session false: the story goes on.
    let mut seat = gm(vec![outcome(done, false), narration(FAIR)]);
    assert_eq!(
        seat.narrate_outcome(&view()).await,
        GmReply::Answer(done.into())
    );
    assert_eq!(seat.narrate(&view()).await, GmReply::Answer(FAIR.into()));
}

/// What a watch heard, in order: "thinking SEAT: DOING", "progress SEAT", "idle".
#[derive(Default)]
struct Heard(Vec<String>);

impl troupe_engine::CallWatch for Heard {
    fn thinking(&mut self, seat: &str, doing: &str) {
        self.0.push(format!("thinking {seat}: {doing}"));
    }
    fn progress(&mut self, seat: &str, _: &troupe_llm::Progress) {
        if self.0.last() != Some(&format!("progress {seat}")) {
            self.0.push(format!("progress {seat}"));
        }
    }
    fn idle(&mut self) {
        self.0.push("idle".into());
    }
}

#[tokio::test]
async fn the_ai_gm_s_calls_are_watched_as_every_seat_s_with_what_the_decision_has_it_do() {
    // A narration sent back once: two calls, each shown from its start to its end.
    let mut seat = gm(vec![narration(DECIDES), narration(FAIR)]);
    let (decision, view) = (GmAsk::Narration, view());
    let question = GmQuestion {
        decision: &decision,
        view: &view,
        error: None,
        seeds: Default::default(),
    };
    let mut heard = Heard::default();
    seat.decide(&question, &mut heard).await;
    let heard: Vec<&str> = (heard.0.iter())
        .map(String::as_str)
        .filter(|h| !h.starts_with("progress"))
        .collect();
    assert_eq!(
        heard,
        [
            "thinking gm: narrating",
            "idle",
            "thinking gm: narrating",
            "idle"
        ]
    );
}
