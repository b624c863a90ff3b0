#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Shared helpers: a GM seat that plays from a list of decisions, replayed model replies, and
//! a session run in a temporary campaign directory.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use troupe_agents::PromptSet;
use troupe_engine::watch::Unwatched;
use troupe_lasers::*;
use troupe_llm::{ChatModel, Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};

/// A GM that answers from queues; defaults keep a turn moving.
#[derive(Default)]
pub struct QueueGm {
    pub narrations: VecDeque<String>,
    pub answers: VecDeque<Answers>,
    pub rulings: VecDeque<Ruling>,
    pub overrides: VecDeque<RollOverride>,
    pub reviews: VecDeque<String>,
    pub failures: VecDeque<FailureChoice>,
    /// Replies handed back before a decision, e.g. /roll or /success at the adjudication prompt.
    pub commands_at_adjudication: VecDeque<GmReply<Ruling>>,
    pub asked: Vec<String>,
}

impl QueueGm {
    pub fn turns(n: usize) -> Self {
        QueueGm {
            narrations: (1..=n)
                .map(|i| format!("Scene {i}: a door, a guard, a choice."))
                .collect(),
            ..Default::default()
        }
    }
}

#[async_trait]
impl GmSeat for QueueGm {
    async fn decide(
        &mut self,
        q: &GmQuestion<'_>,
        _: &mut dyn troupe_engine::CallWatch,
    ) -> troupe_seat::Answer {
        let reply = self.reply(q.decision);
        troupe_lasers::asks::gm_answer(q.decision, reply)
    }
}

impl QueueGm {
    fn reply(&mut self, ask: &GmAsk) -> GmReply<GmDecision> {
        let (asked, reply) = match ask {
            GmAsk::Narration => (
                "narrate".to_string(),
                match self.narrations.pop_front() {
                    Some(n) => GmReply::Answer(GmDecision::Text(n)),
                    None => GmReply::Quit,
                },
            ),
            GmAsk::Answers { questions, .. } => (
                format!("answers:{}", questions.len()),
                GmReply::Answer(GmDecision::Answers(
                    self.answers.pop_front().unwrap_or(Answers::Finish),
                )),
            ),
            GmAsk::Review { corrected, .. } => (
                "review".into(),
                GmReply::Answer(GmDecision::Text(
                    self.reviews
                        .pop_front()
                        .unwrap_or_else(|| corrected.clone()),
                )),
            ),
            GmAsk::Adjudicate { action, .. } => {
                if let Some(cmd) = self.commands_at_adjudication.pop_front() {
                    return cmd.map(GmDecision::Ruling);
                }
                let ruling = self.rulings.pop_front().unwrap_or(Ruling::Roll {
                    task: action.task_type,
                    prepared: action.prepared,
                    expert: action.expert,
                });
                (
                    "adjudicate".into(),
                    GmReply::Answer(GmDecision::Ruling(ruling)),
                )
            }
            GmAsk::Override { .. } => (
                "override".into(),
                GmReply::Answer(GmDecision::Override(
                    self.overrides.pop_front().unwrap_or(RollOverride::Keep),
                )),
            ),
            GmAsk::Insight { .. } => (
                "insight".into(),
                GmReply::Answer(GmDecision::Text("They are afraid of you.".into())),
            ),
            GmAsk::Outcome => (
                "outcome".into(),
                GmReply::Answer(GmDecision::Text("It goes as the dice say.".into())),
            ),
            // The party talks without the GM.
            GmAsk::Interject { .. } => return GmReply::Answer(GmDecision::Interjection(None)),
            GmAsk::Failure { phase, .. } => (
                format!("failure:{phase}"),
                GmReply::Answer(GmDecision::Failure(
                    self.failures.pop_front().unwrap_or(FailureChoice::Skip),
                )),
            ),
        };
        self.asked.push(asked);
        reply
    }
}

pub struct FixedClock;
impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0)
            .single()
            .unwrap_or_default()
    }
}

pub fn entry(purpose: &str, content: serde_json::Value) -> ReplayEntry {
    ReplayEntry {
        agent: "*".into(),
        purpose: purpose.into(),
        content: content.to_string(),
    }
}

pub fn no_questions() -> ReplayEntry {
    entry("clarifying_questions", serde_json::json!({"questions": []}))
}
pub fn intent() -> ReplayEntry {
    entry(
        "strategic_intent",
        serde_json::json!({"strategy": "Talk first.", "directive": "Try to talk the guard down."}),
    )
}
pub fn action(text: &str) -> ReplayEntry {
    entry(
        "character_action",
        serde_json::json!({"action": text, "dialogue": "Easy now.", "task_type": "feelings",
            "prepared": false, "expert": false, "justification": "Talking is feelings."}),
    )
}
pub fn helping_action(text: &str, helping: &str) -> ReplayEntry {
    entry(
        "character_action",
        serde_json::json!({"action": text, "dialogue": "", "task_type": "lasers",
            "prepared": false, "expert": false, "justification": "", "helping": helping}),
    )
}
pub fn reaction() -> ReplayEntry {
    entry(
        "character_reaction",
        serde_json::json!({"reaction": "Phew."}),
    )
}
/// The replies for one plain turn of one player.
pub fn plain_turn() -> Vec<ReplayEntry> {
    vec![
        no_questions(),
        intent(),
        action("I raise my empty hands and step toward the guard."),
        reaction(),
    ]
}

pub fn campaign(file: &str) -> troupe_campaign::Campaign {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(file);
    troupe_campaign::load(&path).unwrap()
}

pub struct Run {
    pub session: Session,
    pub log: Vec<Envelope>,
    pub log_path: PathBuf,
    pub gm: QueueGm,
    pub end: String,
    _dir: tempfile::TempDir,
}

impl Run {
    pub fn events(&self, event_type: &str) -> Vec<&Envelope> {
        self.log
            .iter()
            .filter(|e| e.event.event_type() == event_type)
            .collect()
    }
    pub fn phases(&self, turn: u32) -> Vec<Phase> {
        self.log
            .iter()
            .filter(|e| matches!(e.event, Event::PhaseStarted) && e.turn_number == turn)
            .filter_map(|e| e.phase)
            .collect()
    }
}

pub async fn run_with(file: &str, model: Arc<dyn ChatModel>, gm: QueueGm, seed: u64) -> Run {
    run_in_context(file, model, gm, seed, None).await
}

/// A run whose model has this context window (the prompt budget is 80% of it).
pub async fn run_in_context(
    file: &str,
    model: Arc<dyn ChatModel>,
    mut gm: QueueGm,
    seed: u64,
    context_tokens: Option<u32>,
) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let number = store.next_session_number().unwrap();
    let path = session_log_path(dir.path(), number);

    let mut table = Table::new(
        Gateway::new(
            model,
            RetryPolicy::default(),
            Arc::new(ScaledSleeper { factor: 0.0 }),
        ),
        PromptSet::embedded(),
        troupe_lasers::StoreMemory::in_memory().unwrap_or_else(|e| panic!("{e}")),
    );
    if let Some(n) = context_tokens {
        table.context_tokens = n;
    }
    let clock = FixedClock;
    let mut quiet = Unwatched;
    let setup = SessionSetup {
        campaign: campaign(file),
        session_number: number,
        seed,
        day: 1,
    };
    let (session, end) = {
        let mut driver = Driver::start(setup, store, &mut gm, &table, &mut quiet, &clock).unwrap();
        let end = driver.run().await.unwrap();
        (driver.session().clone(), end)
    };
    Run {
        session,
        log: read_log(&path).unwrap(),
        log_path: path,
        gm,
        end,
        _dir: dir,
    }
}

pub async fn run(file: &str, replies: Vec<ReplayEntry>, gm: QueueGm, seed: u64) -> Run {
    run_with(file, Arc::new(ReplayModel::from_entries(replies)), gm, seed).await
}

/// The GM's view at the first turn of a campaign file's first session.
pub fn gm_view_at_start(campaign_file: &str) -> troupe_agents::GmView {
    let session = session_at_start(campaign_file);
    let mut v = troupe_lasers::visibility::gm_view(&session).unwrap();
    v.turn = 1;
    v
}

/// A campaign file's first session, just started.
pub fn session_at_start(campaign_file: &str) -> Session {
    let mut session = Session::new("s", 1);
    session.apply(&Envelope {
        seq: 0,
        timestamp: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
        session_id: "s".into(),
        session_number: 1,
        turn_number: 1,
        phase: None,
        event: Event::SessionStarted {
            campaign: Box::new(campaign(campaign_file)),
            seed: 1,
            model: "test".into(),
            troupe_version: "test".into(),
            day: 1,
        },
    });
    session
}
