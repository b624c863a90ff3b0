#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one story, from its setting up to what it proves"
)]
//! Snapshots of the AI game master's prompts, one per purpose, rendered from one fixed view in
//! the middle of a turn: a scenario with private notes, a party of two (one played by a
//! person), their out-of-character talk and plan, two declared actions (one helping), a
//! roll, a LASER FEELINGS question, a whisper. A change to a template or to what the GM's view
//! carries shows here as a diff to review.
//!
//!     INSTA_UPDATE=always cargo test -p troupe-agents --test gm_prompts   # then read the diff

use troupe_agents::{
    DeclaredAction, GmCall, GmView, InsightLine, OocLine, PartyPlan, PromptSet, QuestionAnswer,
    RollLine, TableSeat, TurnRecap,
};
use troupe_campaign::Scenario;
use troupe_rules::TaskType;

const CAMPAIGN: &str = r#"{
  "campaign_name": "The Silent Relay",
  "gm_name": "Ryan",
  "party": {"ship_name": "The Raptor", "ship_strengths": ["Nimble", "Cloaking Device"],
            "ship_problem": "Horrible Circuit Breakers"},
  "gm": {"seat": "ai"},
  "characters": [
    {"player": {"agent_id": "alex", "player_name": "Alex", "player_goal": "Solve the puzzle",
                "analytical_score": 0.5, "risk_tolerance": 0.5, "detail_oriented": 0.5, "emotional_memory": 0.5, "assertiveness": 0.5, "cooperativeness": 0.5, "openness": 0.5, "rule_adherence": 0.5, "roleplay_intensity": 0.5},
     "character": {"character_id": "zara", "name": "Zara-7", "style": "Android",
                   "role": "Engineer", "number": 5, "character_goal": "Solve Weird Space Mysteries"}},
    {"player": {"agent_id": "sam", "player_name": "Sam", "player_goal": "Make it loud",
                "analytical_score": 0.5, "risk_tolerance": 0.5, "detail_oriented": 0.5, "emotional_memory": 0.5, "assertiveness": 0.5, "cooperativeness": 0.5, "openness": 0.5, "rule_adherence": 0.5, "roleplay_intensity": 0.5},
     "character": {"character_id": "rex", "name": "Rex Nova", "style": "Hot-Shot",
                   "role": "Pilot", "number": 2, "character_goal": "Prove Yourself"}}
  ]
}"#;

fn view() -> GmView {
    let c = troupe_campaign::parse(CAMPAIGN, "gm_prompts.json").unwrap();
    let table = c
        .seats
        .iter()
        .map(|s| TableSeat {
            agent_id: s.player.agent_id.clone(),
            player_name: s.player.name.clone(),
            character: s.character.clone(),
            human: s.player.agent_id == "sam",
            // Sam's character has a profile in the campaign's registry; Zara-7 has none.
            profile: if s.player.agent_id == "sam" {
                "he/him; human pilot, level 3. Grew up on a mining barge".into()
            } else {
                String::new()
            },
        })
        .collect();
    GmView {
        campaign_name: c.name,
        gm_name: c.gm_name,
        ship: c.ship,
        turn: 2,
        day: 4,
        phase: "GM outcome".into(),
        last_turn: Some(3),
        table,
        scenario: Some(Scenario {
            text: "A relay station went silent a year ago; the Raptor comes for its fuel.".into(),
            notes: vec![
                "A maintenance drone guards the fuel cells.".into(),
                "The drone stands down for anyone who offers it a power cell.".into(),
            ],
        }),
        recent: vec![TurnRecap {
            turn: 1,
            narration: "The relay looms out of the dark, its lights dead.".into(),
            action: Some("Rex docks hard against the station's ring.".into()),
            outcome: Some("The clamps catch, but a breaker on the Raptor blows.".into()),
        }],
        narration: "Inside, a drone with welding arms rolls out of the shadows. What do you do?"
            .into(),
        clarifications: vec![QuestionAnswer {
            // As the session records it: the asker's agent id.
            asked_by: "alex".into(),
            question: "Is the drone armed?".into(),
            answer: "Only with its welding arms.".into(),
        }],
        discussion: vec![
            OocLine {
                round: 1,
                speaker: "alex".into(),
                message: "Let's talk to it first.".into(),
                proposal: Some("Zara hails the drone while Rex covers her.".into()),
                stance: None,
                on: None,
            },
            OocLine {
                round: 1,
                speaker: "sam".into(),
                message: "Fine, but I'm keeping my blaster handy.".into(),
                proposal: None,
                stance: Some("agree".into()),
                on: Some("alex".into()),
            },
        ],
        plan: Some(PartyPlan {
            plan: "Zara hails the drone while Rex covers her.".into(),
            proposer: "alex".into(),
            outcome: "unanimous".into(),
        }),
        actions: vec![
            DeclaredAction {
                agent_id: "alex".into(),
                character: "Zara-7".into(),
                action: "I hail the drone on a maintenance frequency.".into(),
                dialogue: "Unit, state your directive.".into(),
                task_type: TaskType::Lasers,
                prepared: false,
                expert: true,
                helping: None,
            },
            DeclaredAction {
                agent_id: "sam".into(),
                character: "Rex Nova".into(),
                action: "I keep my blaster on the drone's optics.".into(),
                dialogue: String::new(),
                task_type: TaskType::Feelings,
                prepared: false,
                expert: false,
                helping: Some("zara".into()),
            },
        ],
        // Rex's helper roll is not among the GM's rolls (the session keeps it apart); it gave
        // Zara her third die.
        rolls: vec![RollLine {
            character: "Zara-7".into(),
            summary: "lasers, number 5: [2, 5!, 3] → 2 successes (success) — LASER FEELINGS".into(),
            successes: 2,
        }],
        insights: vec![InsightLine {
            character: "Zara-7".into(),
            question: "What does the drone really want?".into(),
            answer: None,
        }],
        outcome: None,
        whispers: vec![(
            "alex".into(),
            "The drone's power light flickers amber.".into(),
        )],
    }
}

fn shown(call: GmCall) -> String {
    format!(
        "=== system ===\n{}\n=== user ===\n{}",
        call.prompt.system, call.prompt.user
    )
}

#[test]
fn gm_narration() {
    let p = PromptSet::embedded();
    insta::assert_snapshot!(shown(p.gm_narration(&view(), "").unwrap()));
}

#[test]
fn gm_narration_sent_back() {
    let p = PromptSet::embedded();
    let feedback = "\"Rex Nova draws his blaster.\" says what a player character does or feels; \
                    describe the world and let the players decide";
    insta::assert_snapshot!(shown(p.gm_narration(&view(), feedback).unwrap()));
}

#[test]
fn gm_answers() {
    let p = PromptSet::embedded();
    let questions = vec![
        (
            "alex".to_string(),
            "Does the drone have a power source?".to_string(),
        ),
        ("sam".to_string(), "How many exits are there?".to_string()),
    ];
    insta::assert_snapshot!(shown(p.gm_answers(&view(), &questions, "").unwrap()));
}

#[test]
fn gm_ruling() {
    let p = PromptSet::embedded();
    insta::assert_snapshot!(shown(p.gm_ruling(&view(), "alex").unwrap()));
}

#[test]
fn gm_insight_answer() {
    let p = PromptSet::embedded();
    let call = p
        .gm_insight(&view(), "alex", "What does the drone really want?", "")
        .unwrap();
    insta::assert_snapshot!(shown(call));
}

#[test]
fn gm_outcome() {
    let p = PromptSet::embedded();
    insta::assert_snapshot!(shown(p.gm_outcome(&view(), "").unwrap()));
}
