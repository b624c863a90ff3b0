#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The one renderer of a session's events into lines (`troupe_lasers::lines`), driven by a real
//! party session: who may read each line. A whisper, a player's plan and its directive reach
//! only their seat and the GM; an event the table may not read (model calls, memories,
//! verdicts, the GM's decisions) gives no line any player or watcher can read. Online, a page
//! gets exactly those lines with those readers, less the kinds no page shows.

use crate::support;

use support::*;
use troupe_agents::{Outcome, Stance};
use troupe_lasers::lines::{Audience, GM, JOIN, Kind, Line, WATCH, render};
use troupe_lasers::{Envelope, Event, GmReply, Phase, Session, StoryMark, WhisperScope};

/// party.json's seats: alex (Zara-7), sam (Rex Nova), priya (Vell).
const SEATS: [&str; 3] = ["alex", "sam", "priya"];
const READERS: [&str; 6] = [GM, WATCH, JOIN, "alex", "sam", "priya"];

/// The events the table may read: every other event is the GM's alone.
const FOR_THE_TABLE: [&str; 27] = [
    "session_started",
    "session_resumed",
    "session_ended",
    "turn_started",
    "gm_narration",
    "clarifying_questions",
    "gm_answers",
    "strategic_intent",
    "ooc_message",
    "gm_ooc",
    "vote_cast",
    "directive",
    "character_action",
    "gm_reviewed_action",
    "gm_adjudication",
    "dice_rolled",
    "gm_roll_override",
    "gm_roll",
    "laser_feelings_question",
    "laser_feelings_answer",
    "gm_outcome",
    "character_reaction",
    "seat_handed",
    "whisper",
    "scene_ended",
    "time_passed",
    // Where the party's out-of-character talk landed, as the talk itself (issue 46).
    "consensus",
];

fn readers(line: &Line) -> Vec<&'static str> {
    READERS
        .into_iter()
        .filter(|r| line.audience.includes(r))
        .collect()
}

/// One party turn where the GM whispers to one seat, to another, and to the whole table,
/// forces the next roll and ends the scene: every event with the lines it renders to.
async fn party_turn() -> Vec<(Envelope, Vec<Line>)> {
    let replies = vec![
        no_questions(),
        no_questions(),
        no_questions(),
        intent(),
        intent(),
        intent(),
        action("I try to hack the lock panel."),
        action("I watch the corridor."),
        action("I hum to calm the guard."),
        reaction(),
        reaction(),
        reaction(),
    ];
    let whisper = |to: Option<&str>, scope, text: &str| GmReply::Whisper {
        to: to.map(str::to_string),
        scope,
        text: text.into(),
    };
    let mut gm = QueueGm::turns(1);
    gm.commands_at_adjudication = [
        whisper(Some("sam"), WhisperScope::PlayerOnly, "sam-secret"),
        whisper(Some("priya"), WhisperScope::CharacterOnly, "priya-secret"),
        whisper(None, WhisperScope::Both, "table-news"),
        GmReply::Force(true),
        GmReply::Mark(StoryMark::SceneEnded { title: None }),
    ]
    .into();
    let run = run("party.json", replies, gm, 5).await;
    rendered(&run.log)
}

fn rendered(log: &[Envelope]) -> Vec<(Envelope, Vec<Line>)> {
    let mut session = Session::new("s", 1);
    log.iter()
        .map(|env| {
            session.apply(env);
            (env.clone(), render(env, &session))
        })
        .collect()
}

#[tokio::test]
async fn a_private_line_reaches_only_its_seat_and_the_gm() {
    let mut events = party_turn().await;
    // The party's replayed plans fail in this turn (the GM skips them): a plan of its own.
    let mut planned = gm_only_events();
    planned.truncate(1);
    planned.push(Envelope {
        seq: 1,
        event: Event::StrategicIntent {
            agent: "sam".into(),
            intent: troupe_agents::Intent {
                strategy: "sam-plan".into(),
                directive: "Run.".into(),
                proposal: Some("We all run.".into()),
            },
        },
        ..planned[0].clone()
    });
    events.extend(rendered(&planned));
    let mut private = 0;
    for (env, lines) in &events {
        let seat = match &env.event {
            Event::Whisper { to: Some(a), .. } | Event::Directive { agent: a, .. } => a,
            Event::StrategicIntent { agent, .. } => agent,
            _ => continue,
        };
        for line in lines.iter().filter(|l| l.kind != Kind::Ooc) {
            assert_eq!(readers(line), [GM, seat.as_str()], "{line:?}");
            private += 1;
        }
    }
    // Two whispers to a seat, the three players' directives, Sam's plan.
    assert_eq!(private, 2 + 3 + 1);
    let proposal = events
        .iter()
        .flat_map(|(_, lines)| lines)
        .find(|l| l.kind == Kind::Ooc);
    assert_eq!(
        proposal.map(|l| l.audience.clone()),
        Some(Audience::Table),
        "said aloud"
    );
    let to_all: Vec<&Line> = events
        .iter()
        .filter(|(e, _)| matches!(e.event, Event::Whisper { to: None, .. }))
        .flat_map(|(_, lines)| lines)
        .collect();
    assert_eq!(to_all.len(), 1);
    assert_eq!(
        readers(to_all[0]),
        [GM, "alex", "sam", "priya"],
        "seated, not watching"
    );
}

#[tokio::test]
async fn an_event_the_table_may_not_read_gives_no_line_a_player_can_read() {
    let mut events = party_turn().await;
    events.extend(rendered(&gm_only_events()));
    let mut gm_only_lines = 0;
    for (env, lines) in &events {
        if FOR_THE_TABLE.contains(&env.event.event_type().as_str()) {
            continue;
        }
        for line in lines {
            assert_eq!(readers(line), [GM], "{}: {line:?}", env.event.event_type());
            gm_only_lines += 1;
        }
    }
    // Overreach checks, memory, the forced roll and the discussion's notices below all render.
    assert!(gm_only_lines >= 3 + 3 + 1 + 4, "{gm_only_lines}");
    // And the table does read its story: narration reaches a watcher.
    let narration = events
        .iter()
        .find(|(e, _)| matches!(e.event, Event::GmNarration { .. }))
        .map(|(_, lines)| &lines[0])
        .unwrap();
    assert_eq!(narration.audience, Audience::Table);
    assert!(narration.audience.includes(WATCH));
}

/// Events of the party's discussion and the GM's decisions, which a one-turn party without
/// proposals does not reach.
fn gm_only_events() -> Vec<Envelope> {
    let campaign = campaign("party.json");
    let started = Event::SessionStarted {
        campaign: Box::new(campaign),
        seed: 1,
        model: "test".into(),
        troupe_version: "test".into(),
        day: 1,
    };
    let events = [
        started,
        Event::DiscussionStalled { round: 3 },
        Event::DiscussionTimedOut {
            round: 2,
            elapsed_ms: 61_000,
        },
        Event::Consensus {
            round: 2,
            outcome: Outcome::Majority,
            plan: Some("Go in loud.".into()),
            proposer: Some("sam".into()),
            positions: [("alex".to_string(), Stance::Agree)].into(),
            dissent: vec!["priya".into()],
        },
        Event::InsightDecision {
            agent: "alex".into(),
            decision: troupe_agents::InsightDecision {
                change_action: true,
                reason: "The guard is afraid.".into(),
            },
        },
        Event::PhaseFailed {
            agent: "priya".into(),
            error: "the model is down".into(),
            failures: 1,
        },
    ];
    events
        .into_iter()
        .enumerate()
        .map(|(seq, event)| Envelope {
            seq: seq as u64,
            timestamp: chrono::DateTime::<chrono::Utc>::default(),
            session_id: "s".into(),
            session_number: 1,
            turn_number: 1,
            phase: None,
            event,
        })
        .collect()
}

#[test]
fn each_seat_is_listed_with_the_session() {
    let lines = rendered(&gm_only_events()[..1]).remove(0).1;
    let cast: Vec<&str> = lines
        .iter()
        .filter(|l| l.kind == Kind::Setup && l.audience == Audience::Table)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(cast.len(), SEATS.len());
    assert!(cast[0].starts_with("Alex plays Zara-7 ("), "{cast:?}");
    // The model and the dice seed are the GM's to know.
    assert!(
        lines
            .iter()
            .any(|l| l.text.contains("Dice seed: 1") && l.audience == Audience::Gm)
    );
}

#[test]
fn a_failed_phase_names_whose_decision_it_was() {
    let all = gm_only_events();
    let failed = |phase: Phase| {
        let env = Envelope {
            phase: Some(phase),
            ..all.last().unwrap().clone()
        };
        let lines = rendered(&[all[0].clone(), env]).remove(1).1;
        lines[0].text.clone()
    };
    // Priya plays Ambassador Vell: her plan is hers, the character's attempt Vell's.
    assert!(failed(Phase::StrategicIntent).starts_with("Priya could not decide"));
    assert!(failed(Phase::CharacterAction).starts_with("Ambassador Vell could not decide"));
}

/// The session online (`troupe_lasers::online::update`, what the web table and Discord read):
/// each event's lines are the renderer's with their audiences untouched, numbered from the
/// event's sequence number; a kind no page shows (the GM's notices and decisions, checks,
/// memory, model calls) is left out whoever may read it; a whisper to a seat still reaches only
/// that seat and the GM; every seat's sheet and the GM's come with each event.
#[tokio::test]
async fn online_a_page_gets_the_renderers_lines_with_their_readers() {
    let events = party_turn().await;
    let mut session = Session::new("s", 1);
    let shows = |kind: Kind| {
        !matches!(
            kind,
            Kind::Setup
                | Kind::Notice
                | Kind::Check
                | Kind::Decision
                | Kind::Memory
                | Kind::Recalled
                | Kind::Model
        )
    };
    let (mut left_out, mut secrets, mut seated) = (0, 0, 0);
    for (env, lines) in &events {
        session.apply(env);
        let update = troupe_lasers::online::update(env, &session);
        let shown: Vec<&Line> = lines.iter().filter(|l| shows(l.kind)).collect();
        left_out += lines.len() - shown.len();
        assert_eq!(update.lines.len(), shown.len().min(4), "{env:?}");
        for (i, (online, line)) in update.lines.iter().zip(&shown).enumerate() {
            assert_eq!(online.id, env.seq * 4 + i as u64);
            assert_eq!(
                (&online.text, &online.audience),
                (&line.text, &line.audience)
            );
            let readers: Vec<&str> = READERS
                .into_iter()
                .filter(|r| online.audience.includes(r))
                .collect();
            if online.text.contains("sam-secret") {
                assert_eq!((online.kind, readers), ("whisper", vec![GM, "sam"]));
                secrets += 1;
            }
        }
        let sheets: Vec<&str> = update.sheets.iter().map(|(s, _)| s.as_str()).collect();
        if session.seats().len() == SEATS.len() {
            assert_eq!(sheets, ["alex", "sam", "priya", GM], "{env:?}");
            seated += 1;
        }
    }
    assert_eq!(secrets, 1);
    assert!(seated > 10, "{seated}");
    assert!(left_out >= 3, "the overreach checks at least: {left_out}");
}
