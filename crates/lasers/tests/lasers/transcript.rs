#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The Markdown transcript, rendered from real sessions (queued GM, replayed model replies).

use crate::support;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use support::*;
use troupe_agents::PromptSet;
use troupe_lasers::*;
use troupe_llm::{
    ChatModel, ChatReply, ChatRequest, Gateway, ProviderError, ReplayEntry, ReplayModel,
    RetryPolicy, ScaledSleeper,
};

/// A clock stopped at a chosen time.
struct ClockAt(DateTime<Utc>);
impl Clock for ClockAt {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}

/// Keeps every event the driver commits.
#[derive(Default)]
struct Collect(Vec<Envelope>);
impl troupe_engine::CallWatch for Collect {}
impl troupe_engine::Watch<Session, Envelope> for Collect {
    fn on_event(&mut self, _s: &Session, env: &Envelope) {
        self.0.push(env.clone());
    }
}

/// One session in memory, at a given time; its events.
async fn run_at(
    replies: Vec<ReplayEntry>,
    mut gm: QueueGm,
    seed: u64,
    at: DateTime<Utc>,
) -> Vec<Envelope> {
    let model: Arc<dyn ChatModel> = Arc::new(ReplayModel::from_entries(replies));
    let table = Table::new(
        Gateway::new(
            model,
            RetryPolicy::default(),
            Arc::new(ScaledSleeper { factor: 0.0 }),
        ),
        PromptSet::embedded(),
        troupe_lasers::StoreMemory::in_memory().unwrap_or_else(|e| panic!("{e}")),
    );
    let store = Store::in_memory().unwrap();
    let setup = SessionSetup {
        campaign: campaign("campaign.json"),
        session_number: 1,
        seed,
        day: 1,
    };
    let clock = ClockAt(at);
    let mut seen = Collect::default();
    {
        let mut driver = Driver::start(setup, store, &mut gm, &table, &mut seen, &clock).unwrap();
        driver.run().await.unwrap();
    }
    seen.0
}

fn time(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).single().unwrap()
}

/// One turn with a question for the GM, answered.
fn asking_turn() -> (Vec<ReplayEntry>, QueueGm) {
    let replies = vec![
        entry(
            "clarifying_questions",
            serde_json::json!({"questions": ["Is the guard armed?"]}),
        ),
        no_questions(),
        intent(),
        action("I raise my empty hands and step toward the guard."),
        reaction(),
    ];
    let mut gm = QueueGm::turns(1);
    gm.answers = [Answers::Answered(vec!["Yes, a stun baton.".into()])].into();
    (replies, gm)
}

/// The label a quoted line sits under: the nearest line above it that is not a quote.
fn label_of<'a>(md: &'a str, quoted: &str) -> &'a str {
    let lines: Vec<&str> = md.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == format!("> {quoted}"))
        .unwrap_or_else(|| panic!("no quoted line {quoted:?} in\n{md}"));
    lines[..at]
        .iter()
        .rev()
        .find(|l| !l.starts_with('>'))
        .copied()
        .unwrap_or("")
}

#[tokio::test]
async fn the_transcript_does_not_depend_on_time_latency_or_ids() {
    let (replies, gm) = asking_turn();
    let a = run_at(replies, gm, 7, time(2026, 1, 2, 3, 4, 5)).await;
    let (replies, gm) = asking_turn();
    let b = run_at(replies, gm, 7, time(2031, 12, 24, 23, 59, 59)).await;
    // The logs do differ: timestamps, and session ids that carry the time.
    assert_ne!(a[0].timestamp, b[0].timestamp);
    assert_ne!(a[0].session_id, b[0].session_id);
    let (ma, mb) = (render_markdown(&a), render_markdown(&b));
    assert_eq!(ma, mb);
    assert!(!ma.contains("2026") && !ma.contains("2031"), "{ma}");
    assert!(!ma.contains(&a[0].session_id));
    // The same session through the file-backed harness (another clock, another store).
    let (replies, gm) = asking_turn();
    let c = run("campaign.json", replies, gm, 7).await;
    assert_eq!(render_markdown(&c.log), ma);
    // Rendering is a pure function of the events.
    assert_eq!(render_markdown(&a), ma);
}

#[tokio::test]
async fn every_channel_is_marked() {
    let (replies, gm) = asking_turn();
    let md = render_markdown(&run_at(replies, gm, 7, time(2026, 1, 1, 0, 0, 0)).await);
    for tag in ["**[GM]**", "**[IC]**", "**[OOC]**", "**[P2C]**"] {
        assert!(md.contains(tag), "the legend explains {tag}");
    }
    assert!(label_of(&md, "Scene 1: a door, a guard, a choice.").starts_with("**[GM]"));
    let strategy = label_of(&md, "Talk first.");
    assert!(
        strategy.starts_with("**[OOC] Alex") && strategy.contains("private strategy"),
        "{strategy}"
    );
    let directive = label_of(&md, "Try to talk the guard down.");
    assert!(
        directive.starts_with("**[P2C] Alex → Zara-7**"),
        "{directive}"
    );
    let act = label_of(&md, "I raise my empty hands and step toward the guard.");
    assert!(act.starts_with("**[IC] Zara-7 attempts**"), "{act}");
    assert!(label_of(&md, "Phew.").starts_with("**[IC] Zara-7 reacts"));
    assert!(label_of(&md, "It goes as the dice say.").starts_with("**[GM] Outcome"));
    assert!(md.contains("**[OOC] Alex asks the GM** (round 1):"));
    assert!(md.contains("- Alex: Is the guard armed? — **GM:** Yes, a stun baton."));
    // Raw model traffic stays out.
    assert!(!md.contains("model_call") && !md.contains("latency"));
}

#[tokio::test]
async fn a_retried_overreaching_action_shows_what_was_flagged() {
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
    let md = render_markdown(&r.log);
    let struck = format!("> ~~{bad}~~");
    assert_eq!(md.matches(&struck).count(), 3, "{md}");
    assert!(md.contains("*rejected by the overreach check:*"));
    assert!(md.contains("Sent back: the character declares again"));
    for e in &r.log {
        if let Event::Validation { verdict, .. } = &e.event {
            for v in &verdict.violations {
                assert!(
                    md.contains(&format!("\"{}\"", v.excerpt)),
                    "flag {:?} shown",
                    v.excerpt
                );
            }
        }
    }
    assert!(md.contains("- Flagged: \""));
    // The stricter prompts are model traffic, not the story.
    assert!(!md.contains("FINAL ATTEMPT"));
}

#[tokio::test]
async fn a_laser_feelings_turn_shows_the_question_the_answer_and_the_decision() {
    // Zara-7 has number 5; a FEELINGS roll of [6, 5] is one success plus LASER FEELINGS.
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
    let md = render_markdown(&r.log);
    assert!(
        md.contains("GM override: the faces are set to 6, 5"),
        "{md}"
    );
    assert!(md.contains("- Dice: 6 (success), 5 (LASER FEELINGS)"));
    assert!(md.contains("**LASER FEELINGS!** A die shows exactly 5"));
    assert!(
        label_of(&md, "What are they really feeling?")
            .starts_with("**[IC] Zara-7 asks the GM a LASER FEELINGS question")
    );
    assert!(label_of(&md, "They are afraid of you.").starts_with("**[GM] answers"));
    assert!(label_of(&md, "Good to know.").starts_with("**[OOC] Alex decides to keep the action"));
}

#[tokio::test]
async fn gm_commands_and_forced_results_are_shown_as_such() {
    let mut gm = QueueGm::turns(1);
    gm.commands_at_adjudication = [
        GmReply::Roll("2d6+3".parse().unwrap()),
        GmReply::Force(false),
    ]
    .into();
    let r = run("campaign.json", plain_turn(), gm, 9).await;
    let md = render_markdown(&r.log);
    assert!(md.contains("**[GM] /roll 2d6+3** → "), "{md}");
    assert!(md.contains("**[GM] /fail** — the next roll fails"));
    assert!(md.contains("overrides Zara-7's result: failure** (GM override"));
    assert!(md.contains("0 successes: **failure**"));
}

/// A model that fails every call.
struct Broken;
#[async_trait]
impl ChatModel for Broken {
    fn name(&self) -> String {
        "broken".into()
    }
    async fn complete(&self, _r: &ChatRequest) -> Result<ChatReply, ProviderError> {
        Err(ProviderError::Server {
            status: 503,
            body: "overloaded".into(),
        })
    }
}

#[tokio::test]
async fn phase_failures_and_the_gms_resolution_are_shown() {
    let mut gm = QueueGm::turns(1);
    gm.failures = [
        FailureChoice::Skip,
        FailureChoice::TakeOver {
            text: "Try to talk the guard down.".into(),
        },
        FailureChoice::TakeOver {
            text: "I step forward with my hands up.".into(),
        },
        FailureChoice::Skip,
    ]
    .into();
    let r = run_with("campaign.json", Arc::new(Broken), gm, 2).await;
    let md = render_markdown(&r.log);
    assert!(
        md.contains("**[NOTE]** Questions for the GM failed for Zara-7 (Alex) (failure 1)"),
        "{md}"
    );
    assert!(md.contains("rolled back; retrying once."));
    assert!(md.contains("rolled back; the GM decides."));
    assert!(md.contains("**[GM] resolves the failure:** skip Zara-7 (Alex)'s part this time."));
    assert!(md.contains("writes Zara-7 (Alex)'s part themself (below)."));
    assert!(label_of(&md, "I step forward with my hands up.").starts_with("**[IC] Zara-7"));
    assert!(md.contains("- Overreach check: none needed (the GM wrote it)"));
    assert_eq!(md.matches("> I step forward with my hands up.").count(), 1);
    assert!(md.contains("## End of session"));
}

#[tokio::test]
async fn markdown_in_model_and_gm_text_cannot_break_the_structure() {
    let mut gm = QueueGm::turns(1);
    gm.narrations =
        ["# Not a heading\n> not a quote\n\n- not a list\n1. nor this\n---".into()].into();
    let mut replies = plain_turn();
    replies[3] = entry(
        "character_reaction",
        serde_json::json!({"reaction": "## Phew\n\n\n[x]: http://example.com\n    indented"}),
    );
    let r = run("campaign.json", replies, gm, 1).await;
    let md = render_markdown(&r.log);
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        headings,
        [
            "# Voyage of the Raptor — session 1",
            "## Turn 1",
            // The GM quit at turn 2's narration prompt.
            "## Turn 2",
            "## End of session"
        ],
        "{md}"
    );
    let narration = "**[GM] Narration:**\n> \\# Not a heading\n> \\> not a quote\n>\n> \\- not a list\n> 1\\. nor this\n> \\---\n\n";
    assert!(md.contains(narration), "{md}");
    let reaction =
        "**[IC] Zara-7 reacts:**\n> \\## Phew\n>\n> \\[x]: http://example.com\n> indented\n\n";
    assert!(md.contains(reaction), "{md}");
}

#[tokio::test]
async fn one_full_turn() {
    let (replies, gm) = asking_turn();
    let md = render_markdown(&run_at(replies, gm, 7, time(2026, 1, 1, 0, 0, 0)).await);
    insta::assert_snapshot!(md, @r##"
    # Voyage of the Raptor — session 1

    - GM: Ryan
    - Ship: The Raptor (Fast, Superior Sensors; problem: Fuel Hog)
    - Dice seed: 7
    - Model: replay:(in memory)

    | Player | Character | Style | Role | Number |
    |---|---|---|---|---|
    | Alex | Zara-7 | Android | Engineer | 5 |

    Channels:

    - **[GM]** the game master
    - **[IC]** in character: what a character attempts, says or feels
    - **[OOC]** out of character: an AI player's questions, private strategy and decisions
    - **[P2C]** player to character: the directive a player gives its own character (only that character hears it)
    - **[DICE]** dice rolled by the rules
    - **[NOTE]** the engine's notices

    Quoted blocks are the words as written.

    ## Turn 1

    **[GM] Narration:**
    > Scene 1: a door, a guard, a choice.

    **[NOTE]** Memory retrieval for Alex: nothing known.

    **[OOC] Alex asks the GM** (round 1):

    - Is the guard armed?

    **[OOC] GM answers** (round 1):

    - Alex: Is the guard armed? — **GM:** Yes, a stun baton.

    **[OOC] Alex** has no questions for the GM (round 2).

    **[NOTE]** Questions for the GM are over: no more questions.

    **[OOC] Alex's private strategy** (player only; the character never sees it):
    > Talk first.

    **[P2C] Alex → Zara-7** (directive; only this character hears it):
    > Try to talk the guard down.

    **[IC] Zara-7 attempts** (attempt 1):
    > I raise my empty hands and step toward the guard.
    >
    > *Says:* Easy now.

    - Suggests: FEELINGS, not prepared, not expert
    - Why (OOC): Talking is feelings.
    - Overreach check: passed (states intent only)

    **[GM] Ruling for Zara-7:** roll FEELINGS, not prepared, not expert.

    **[DICE] Zara-7 rolls FEELINGS** — 1d6, against number 5 (FEELINGS: a die over 5 succeeds; exactly 5 is LASER FEELINGS)

    - Dice: 3 (miss)
    - 0 successes: **failure** — it goes wrong; the GM says how things get worse

    **[GM]** keeps Zara-7's roll as it fell.

    **[GM] Outcome:**
    > It goes as the dice say.

    **[IC] Zara-7 reacts:**
    > Phew.

    **[NOTE]** Memory storage: turn 1 stored (critical event: a risky action was resolved).

    ## Turn 2

    ## End of session

    **[NOTE]** The session ended: the GM ended the session.
    "##);
}
