#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Shared helpers: a GM seat that plays from a list of decisions, replayed model replies, and
//! a session run in a temporary campaign directory.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use troupe_agents::{ActionDecl, GmView, PromptSet};
use troupe_engine::*;
use troupe_llm::{ChatModel, Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};
use troupe_rules::RollResult;
use troupe_validator::Verdict;

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
    async fn narrate(&mut self, _s: &GmView) -> GmReply<String> {
        self.asked.push("narrate".into());
        match self.narrations.pop_front() {
            Some(n) => GmReply::Answer(n),
            None => GmReply::Quit,
        }
    }
    async fn answer_questions(
        &mut self,
        _s: &GmView,
        _r: u32,
        q: &[(String, String)],
    ) -> GmReply<Answers> {
        self.asked.push(format!("answers:{}", q.len()));
        GmReply::Answer(self.answers.pop_front().unwrap_or(Answers::Finish))
    }
    async fn review_action(
        &mut self,
        _s: &GmView,
        _a: &str,
        _o: &str,
        corrected: &str,
        _v: &Verdict,
    ) -> GmReply<String> {
        self.asked.push("review".into());
        GmReply::Answer(
            self.reviews
                .pop_front()
                .unwrap_or_else(|| corrected.to_string()),
        )
    }
    async fn adjudicate(&mut self, _s: &GmView, _a: &str, action: &ActionDecl) -> GmReply<Ruling> {
        if let Some(cmd) = self.commands_at_adjudication.pop_front() {
            return cmd;
        }
        self.asked.push("adjudicate".into());
        GmReply::Answer(self.rulings.pop_front().unwrap_or(Ruling::Roll {
            task: action.task_type,
            prepared: action.prepared,
            expert: action.expert,
        }))
    }
    async fn override_roll(
        &mut self,
        _s: &GmView,
        _a: &str,
        _r: &RollResult,
    ) -> GmReply<RollOverride> {
        self.asked.push("override".into());
        GmReply::Answer(self.overrides.pop_front().unwrap_or(RollOverride::Keep))
    }
    async fn answer_insight(&mut self, _s: &GmView, _a: &str, _q: &str) -> GmReply<String> {
        self.asked.push("insight".into());
        GmReply::Answer("They are afraid of you.".into())
    }
    async fn narrate_outcome(&mut self, _s: &GmView) -> GmReply<String> {
        self.asked.push("outcome".into());
        GmReply::Answer("It goes as the dice say.".into())
    }
    async fn resolve_failure(
        &mut self,
        _s: &GmView,
        p: Phase,
        _a: &str,
        _e: &str,
    ) -> GmReply<FailureChoice> {
        self.asked.push(format!("failure:{p}"));
        GmReply::Answer(self.failures.pop_front().unwrap_or(FailureChoice::Skip))
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
    let number = store.next_session_number(dir.path()).unwrap();
    let path = session_log_path(dir.path(), number);
    let record = Record {
        store,
        mirror: Some(EventLog::create(&path).unwrap()),
    };
    let mut table = Table::new(
        Gateway::new(
            model,
            RetryPolicy::default(),
            Arc::new(ScaledSleeper { factor: 0.0 }),
        ),
        PromptSet::embedded(),
        troupe_engine::StoreMemory::in_memory().unwrap_or_else(|e| panic!("{e}")),
    );
    if let Some(n) = context_tokens {
        table.context_tokens = n;
    }
    let clock = FixedClock;
    let mut quiet = Quiet;
    let setup = SessionSetup {
        campaign: campaign(file),
        session_number: number,
        seed,
        day: 1,
    };
    let (session, end) = {
        let mut driver = Driver::start(setup, record, &mut gm, &table, &mut quiet, &clock).unwrap();
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
