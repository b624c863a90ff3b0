#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The turn machine, driven through whole turns with a queued GM and replayed model replies.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use support::*;
use troupe_lasers::*;
use troupe_llm::{ChatModel, ChatReply, ChatRequest, ProviderError};

const FULL: [Phase; 13] = [
    Phase::GmNarration,
    Phase::MemoryRetrieval,
    Phase::Clarification,
    Phase::StrategicIntent,
    Phase::Directive,
    Phase::CharacterAction,
    Phase::Validation,
    Phase::GmAdjudication,
    Phase::HelperRolls,
    Phase::DiceResolution,
    Phase::GmOutcome,
    Phase::CharacterReaction,
    Phase::MemoryStorage,
];

#[tokio::test]
async fn a_plain_turn_runs_every_phase_once_in_order() {
    let r = run("campaign.json", plain_turn(), QueueGm::turns(1), 1).await;
    // Seed 1 may or may not roll LASER FEELINGS; remove that optional phase to compare.
    let phases: Vec<Phase> = r
        .phases(1)
        .into_iter()
        .filter(|p| *p != Phase::LaserFeelings)
        .collect();
    assert_eq!(phases, FULL);
    assert_eq!(r.session.history.len(), 1);
    assert_eq!(r.end, "the GM ended the session");
    // The GM quit at turn 2's narration prompt: that phase is the only one left open.
    assert_eq!(
        r.events("phase_started").len(),
        r.events("phase_completed").len() + 1
    );
    let last_start = r
        .events("phase_started")
        .last()
        .map(|e| (e.turn_number, e.phase));
    assert_eq!(last_start, Some((2, Some(Phase::GmNarration))));
}

#[tokio::test]
async fn questions_are_answered_round_by_round_up_to_three() {
    let ask = |q: &str| {
        entry(
            "clarifying_questions",
            serde_json::json!({"questions": [q]}),
        )
    };
    let mut replies = vec![
        ask("Is it armed?"),
        ask("Is it alone?"),
        ask("Is it scared?"),
    ];
    replies.extend([
        intent(),
        action("I ask the guard to lower the weapon."),
        reaction(),
    ]);
    let mut gm = QueueGm::turns(1);
    gm.answers = [
        Answers::Answered(vec!["Yes.".into()]),
        Answers::Answered(vec!["Yes.".into()]),
        Answers::Answered(vec!["Very.".into()]),
    ]
    .into();
    let r = run("campaign.json", replies, gm, 1).await;
    assert_eq!(
        r.events("clarifying_questions").len(),
        3,
        "three rounds, then no more"
    );
    let ended = r.events("clarification_ended");
    assert_eq!(ended.len(), 1);
    // The answers reach the player's strategy prompt.
    let intent_call = r
        .log
        .iter()
        .find(|e| matches!(&e.event, Event::ModelCall { purpose, .. } if purpose == "strategic_intent"))
        .unwrap();
    let text = serde_json::to_string(&intent_call.event).unwrap();
    assert!(text.contains("Is it scared?") && text.contains("Very."));
}

#[tokio::test]
async fn the_gm_can_finish_questions_early() {
    let ask = entry(
        "clarifying_questions",
        serde_json::json!({"questions": ["Is it armed?", "Is it alone?"]}),
    );
    let mut replies = vec![ask];
    replies.extend([
        intent(),
        action("I ask the guard to lower the weapon."),
        reaction(),
    ]);
    let mut gm = QueueGm::turns(1);
    gm.answers = [Answers::Finish].into();
    let r = run("campaign.json", replies, gm, 1).await;
    assert_eq!(r.events("clarifying_questions").len(), 1);
    assert!(r.gm.asked.contains(&"answers:2".to_string()));
    assert!(r.session.history[0].narration.contains("Scene 1"));
}

#[tokio::test]
async fn overreach_is_retried_then_auto_corrected_after_three_attempts() {
    let bad = "I shoot the guard and he falls to the floor.";
    let replies = vec![
        no_questions(),
        intent(),
        action(bad),
        action(bad),
        action(bad),
        reaction(),
    ];
    let r = run("campaign.json", replies, QueueGm::turns(1), 1).await;
    let results: Vec<VerdictResult> = r
        .log
        .iter()
        .filter_map(|e| match &e.event {
            Event::Validation { result, .. } => Some(*result),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(&results[..2], &[VerdictResult::Retry, VerdictResult::Retry]);
    assert!(matches!(
        results[2],
        VerdictResult::AutoCorrected | VerdictResult::FlaggedForGm
    ));
    // The stricter prompts carry the validator's feedback.
    let action_prompts: Vec<String> = r
        .log
        .iter()
        .filter_map(|e| match &e.event {
            Event::ModelCall {
                purpose, record, ..
            } if purpose == "character_action" => Some(
                record
                    .messages
                    .last()
                    .map(|m| m.content.clone())
                    .unwrap_or_default(),
            ),
            _ => None,
        })
        .collect();
    assert!(action_prompts[1].contains("WARNING"));
    assert!(action_prompts[2].contains("FINAL ATTEMPT"));
    // Whatever the GM adjudicated is free of the outcome: either corrected or GM-reviewed.
    let track = r.session.history[0].action.clone().unwrap();
    assert!(!track.contains("falls to the floor"), "{track}");
}

#[tokio::test]
async fn a_revision_sends_the_character_back_to_declare_again() {
    let replies = vec![
        no_questions(),
        intent(),
        action("I pull out my phone and try to call the guard's boss."),
        action("I raise my hands and ask the guard what he wants."),
        reaction(),
    ];
    let mut gm = QueueGm::turns(1);
    gm.rulings = [Ruling::Revise {
        note: "There is no signal down here.".into(),
    }]
    .into();
    let r = run("campaign.json", replies, gm, 1).await;
    assert_eq!(r.events("character_action").len(), 2);
    let second = r
        .log
        .iter()
        .filter_map(|e| match &e.event {
            Event::ModelCall {
                purpose, record, ..
            } if purpose == "character_action" => Some(record.messages.clone()),
            _ => None,
        })
        .nth(1)
        .unwrap();
    assert!(
        serde_json::to_string(&second)
            .unwrap()
            .contains("There is no signal down here.")
    );
    assert_eq!(r.gm.asked.iter().filter(|a| *a == "adjudicate").count(), 2);
}

#[tokio::test]
async fn no_roll_skips_the_dice() {
    let mut gm = QueueGm::turns(1);
    gm.rulings = [Ruling::NoRoll {
        note: "It just works.".into(),
    }]
    .into();
    let r = run("campaign.json", plain_turn(), gm, 1).await;
    assert!(r.events("dice_rolled").is_empty());
    assert!(!r.gm.asked.contains(&"override".to_string()));
    assert!(r.phases(1).contains(&Phase::GmOutcome));
}

#[tokio::test]
async fn success_forced_at_a_prompt_decides_the_roll_and_gm_rolls_are_logged() {
    let mut gm = QueueGm::turns(1);
    gm.commands_at_adjudication = [
        GmReply::Roll("2d6+3".parse().unwrap()),
        GmReply::Force(false),
    ]
    .into();
    let r = run("campaign.json", plain_turn(), gm, 9).await;
    let roll = &r.events("gm_roll")[0].event;
    let Event::GmRoll { total, faces, .. } = roll else {
        unreachable!()
    };
    assert_eq!(*total, faces.iter().sum::<u32>() as i64 + 3);
    let ov = r.events("gm_roll_override");
    let Event::GmRollOverride { change, result, .. } = &ov[0].event else {
        unreachable!()
    };
    assert_eq!(*change, RollOverride::Failure);
    assert_eq!(result.successes, 0);
    // Forced: the GM was not asked to override.
    assert!(!r.gm.asked.contains(&"override".to_string()));
}

#[tokio::test]
async fn gm_faces_override_resolves_by_the_rules() {
    // Zara-7 has number 5; a feelings roll of [6, 5] is one success plus LASER FEELINGS.
    let mut gm = QueueGm::turns(1);
    gm.overrides = [RollOverride::Faces { faces: vec![6, 5] }].into();
    let mut replies = plain_turn();
    replies.insert(
        3,
        entry(
            "insight_question",
            serde_json::json!({"question": "What are they really feeling?"}),
        ),
    );
    replies.insert(
        4,
        entry(
            "insight_decision",
            serde_json::json!({"change_action": false, "reason": "Good to know."}),
        ),
    );
    let r = run("campaign.json", replies, gm, 1).await;
    let ov = r.events("gm_roll_override");
    let Event::GmRollOverride { result, .. } = &ov[0].event else {
        unreachable!()
    };
    assert_eq!(result.successes, 2);
    assert!(result.laser_feelings());
    assert!(r.phases(1).contains(&Phase::LaserFeelings));
    assert!(r.gm.asked.contains(&"insight".to_string()));
}

#[tokio::test]
async fn after_an_insight_the_player_may_change_the_action_and_roll_again() {
    let mut gm = QueueGm::turns(1);
    gm.overrides = [RollOverride::Faces { faces: vec![5] }, RollOverride::Keep].into();
    let replies = vec![
        no_questions(),
        intent(),
        action("I raise my empty hands and step toward the guard."),
        entry(
            "insight_question",
            serde_json::json!({"question": "Who's behind this?"}),
        ),
        entry(
            "insight_decision",
            serde_json::json!({"change_action": true, "reason": "Go for the boss instead."}),
        ),
        action("I turn to the shadow behind the guard and address the boss directly."),
        reaction(),
    ];
    let r = run("campaign.json", replies, gm, 1).await;
    assert_eq!(r.events("character_action").len(), 2);
    assert_eq!(r.events("dice_rolled").len(), 2, "rolled again");
    // Only one insight per turn, whatever the second roll shows.
    assert_eq!(r.events("laser_feelings_question").len(), 1);
}

/// A model that fails every call, counting them.
struct Broken(AtomicU32);
#[async_trait]
impl ChatModel for Broken {
    fn name(&self) -> String {
        "broken".into()
    }
    async fn complete(&self, _r: &ChatRequest) -> Result<ChatReply, ProviderError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(ProviderError::Server {
            status: 503,
            body: "overloaded".into(),
        })
    }
}

#[tokio::test]
async fn a_failing_model_rolls_back_retries_once_then_asks_the_gm() {
    let model = Arc::new(Broken(AtomicU32::new(0)));
    let mut gm = QueueGm::turns(1);
    gm.failures = [
        FailureChoice::Skip, // questions
        FailureChoice::TakeOver {
            text: "Try to talk the guard down.".into(),
        }, // strategy
        FailureChoice::TakeOver {
            text: "I step forward with my hands up.".into(),
        }, // action
        FailureChoice::Skip, // reaction
    ]
    .into();
    let r = run_with("campaign.json", model.clone(), gm, 2).await;
    let failed = r.events("phase_failed");
    // Two failures per AI contribution, then the GM decides.
    assert_eq!(failed.len(), 8, "{:?}", r.gm.asked);
    assert_eq!(r.events("gm_failure_decision").len(), 4);
    // Each failed phase made 5 attempts twice (gateway retries, then the phase retry); the
    // memory's fact extraction tried 5 times too, then fell back to the raw episodes.
    assert_eq!(model.0.load(Ordering::SeqCst), 8 * 5 + 5);
    assert_eq!(r.events("model_call").len(), 45, "every attempt logged");
    let storage = r.events("memory_storage");
    let stored = storage.last().unwrap();
    match &stored.event {
        Event::MemoryStorage {
            extraction, stored, ..
        } => {
            assert!(
                extraction
                    .as_deref()
                    .unwrap_or("")
                    .starts_with("fallback: "),
                "{extraction:?}"
            );
            assert!(stored.as_ref().unwrap().facts > 0, "nothing lost");
        }
        _ => unreachable!(),
    }
    // The turn still completed, with the GM's words standing in.
    assert_eq!(r.session.history.len(), 1);
    assert_eq!(
        r.session.history[0].action.as_deref(),
        Some("I step forward with my hands up.")
    );
    let phases: Vec<Phase> = r
        .phases(1)
        .into_iter()
        .filter(|p| *p != Phase::LaserFeelings)
        .collect();
    assert_eq!(phases, FULL);
}

#[tokio::test]
async fn helpers_roll_first_and_a_success_adds_a_die() {
    // party.json: alex (Zara-7), sam (Rex Nova), priya (Vell). Rex and Vell help Zara.
    let zara = campaign("party.json").seats[0]
        .character
        .character_id
        .clone();
    let replies = vec![
        no_questions(),
        no_questions(),
        no_questions(),
        intent(),
        intent(),
        intent(),
        action("I try to hack the lock panel."),
        helping_action("I hold the light steady so Zara can see the wiring.", &zara),
        helping_action("I keep watch down the corridor while Zara works.", &zara),
        reaction(),
        reaction(),
        reaction(),
    ];
    let mut gm = QueueGm::turns(1);
    gm.rulings = [Ruling::Roll {
        task: troupe_rules::TaskType::Lasers,
        prepared: false,
        expert: true,
    }]
    .into();
    let r = run("party.json", replies, gm, 5).await;
    let rolls = r.events("dice_rolled");
    let helper_rolls: Vec<_> = rolls
        .iter()
        .filter_map(|e| match &e.event {
            Event::DiceRolled {
                purpose: RollPurpose::Helper,
                result,
                ..
            } => Some(result.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(helper_rolls.len(), 2);
    let helped = helper_rolls
        .iter()
        .filter(|r| troupe_rules::helper_succeeded(r))
        .count() as u32;
    let main = rolls
        .iter()
        .find_map(|e| match &e.event {
            Event::DiceRolled {
                purpose: RollPurpose::Action,
                pool,
                ..
            } => Some(*pool),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        main,
        2 + helped,
        "1 die + expert + one per successful helper"
    );
    // Helper rolls come before the main roll.
    let first_action = rolls
        .iter()
        .position(|e| {
            matches!(
                e.event,
                Event::DiceRolled {
                    purpose: RollPurpose::Action,
                    ..
                }
            )
        })
        .unwrap();
    assert_eq!(first_action, 2);
}

#[tokio::test]
async fn the_character_never_sees_the_players_strategy() {
    let r = run("campaign.json", plain_turn(), QueueGm::turns(1), 1).await;
    for e in &r.log {
        if let Event::ModelCall {
            layer: troupe_agents::Layer::Character,
            record,
            purpose,
            ..
        } = &e.event
        {
            let text = serde_json::to_string(&record.messages).unwrap();
            assert!(
                !text.contains("Talk first."),
                "strategy leaked into a character prompt"
            );
            if purpose == "character_action" {
                assert!(
                    text.contains("Try to talk the guard down."),
                    "the directive reaches the character"
                );
            }
        }
    }
}

#[tokio::test]
async fn the_same_seed_gives_the_same_log_apart_from_latency() {
    let strip = |r: &Run| -> Vec<serde_json::Value> {
        r.log
            .iter()
            .map(|e| {
                let mut v = serde_json::to_value(e).unwrap();
                v.as_object_mut().unwrap().remove("latency_ms");
                v
            })
            .collect()
    };
    let a = run("campaign.json", plain_turn(), QueueGm::turns(1), 77).await;
    let b = run("campaign.json", plain_turn(), QueueGm::turns(1), 77).await;
    assert_eq!(strip(&a), strip(&b));
}

/// The intent prompt of `turn`, in estimated tokens.
fn intent_tokens(r: &support::Run, turn: u32) -> u32 {
    r.log
        .iter()
        .filter(|e| e.turn_number == turn)
        .find_map(|e| match &e.event {
            Event::ModelCall {
                purpose, record, ..
            } if purpose == "strategic_intent" => Some(
                record
                    .messages
                    .iter()
                    .map(|m| troupe_llm::estimate_tokens(&m.content))
                    .sum(),
            ),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn a_prompt_past_80_percent_of_the_context_drops_older_turns_to_fit() {
    let model = || -> Arc<dyn ChatModel> {
        Arc::new(troupe_llm::ReplayModel::from_entries(
            (0..4).flat_map(|_| plain_turn()).collect(),
        ))
    };
    let roomy = support::run_in_context("campaign.json", model(), QueueGm::turns(4), 1, None).await;
    assert!(roomy.events("context_trimmed").is_empty());
    let full = intent_tokens(&roomy, 4);
    // A window whose 80% is just under turn 4's prompt: it must be trimmed, and fit.
    let context = (full - 10) * 5 / 4;
    let tight = support::run_in_context(
        "campaign.json",
        model(),
        QueueGm::turns(4),
        1,
        Some(context),
    )
    .await;
    let trims = tight.events("context_trimmed");
    assert!(!trims.is_empty());
    let budget = context / 5 * 4;
    let t4 = intent_tokens(&tight, 4);
    assert!(t4 <= budget, "{t4} > {budget}");
    assert!(t4 < full);
    let Event::ContextTrimmed {
        turns_dropped,
        budget: logged,
        ..
    } = &trims.last().unwrap().event
    else {
        unreachable!()
    };
    assert!(*turns_dropped >= 1);
    assert_eq!(*logged, budget);
}
