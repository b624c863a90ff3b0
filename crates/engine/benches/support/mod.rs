//! What the engine benchmarks share: a GM that answers at once, one turn's recorded model
//! replies, and the example campaign.

use async_trait::async_trait;
use troupe_agents::{ActionDecl, GmView};
use troupe_engine::*;
use troupe_llm::ReplayEntry;
use troupe_rules::RollResult;
use troupe_validator::Verdict;

pub struct InstantGm(pub u64);

#[async_trait]
impl GmSeat for InstantGm {
    async fn narrate(&mut self, _s: &GmView) -> GmReply<String> {
        if self.0 == 0 {
            return GmReply::Quit;
        }
        self.0 -= 1;
        GmReply::Answer("A guard blocks the corridor, rifle raised.".into())
    }
    async fn answer_questions(
        &mut self,
        _s: &GmView,
        _r: u32,
        _q: &[(String, String)],
    ) -> GmReply<Answers> {
        GmReply::Answer(Answers::Finish)
    }
    async fn review_action(
        &mut self,
        _s: &GmView,
        _a: &str,
        _o: &str,
        c: &str,
        _v: &Verdict,
    ) -> GmReply<String> {
        GmReply::Answer(c.into())
    }
    async fn adjudicate(&mut self, _s: &GmView, _a: &str, x: &ActionDecl) -> GmReply<Ruling> {
        GmReply::Answer(Ruling::Roll {
            task: x.task_type,
            prepared: x.prepared,
            expert: x.expert,
        })
    }
    async fn override_roll(
        &mut self,
        _s: &GmView,
        _a: &str,
        _r: &RollResult,
    ) -> GmReply<RollOverride> {
        GmReply::Answer(RollOverride::Keep)
    }
    async fn answer_insight(&mut self, _s: &GmView, _a: &str, _q: &str) -> GmReply<String> {
        GmReply::Answer("They are bluffing.".into())
    }
    async fn narrate_outcome(&mut self, _s: &GmView) -> GmReply<String> {
        GmReply::Answer("The guard hesitates.".into())
    }
    async fn resolve_failure(
        &mut self,
        _s: &GmView,
        _p: Phase,
        _a: &str,
        _e: &str,
    ) -> GmReply<FailureChoice> {
        GmReply::Answer(FailureChoice::Skip)
    }
}

pub fn entry(purpose: &str, content: serde_json::Value) -> ReplayEntry {
    ReplayEntry {
        agent: "*".into(),
        purpose: purpose.into(),
        content: content.to_string(),
    }
}

pub fn turn_replies() -> Vec<ReplayEntry> {
    vec![
        entry("clarifying_questions", serde_json::json!({"questions": []})),
        entry(
            "strategic_intent",
            serde_json::json!({"strategy": "Talk first.", "directive": "Talk the guard down."}),
        ),
        entry(
            "character_action",
            serde_json::json!({"action": "I raise my empty hands and step toward the guard.",
            "dialogue": "Easy now.", "task_type": "feelings", "prepared": false, "expert": false, "justification": "Talk."}),
        ),
        entry(
            "insight_question",
            serde_json::json!({"question": "What are they really feeling?"}),
        ),
        entry(
            "insight_decision",
            serde_json::json!({"change_action": false, "reason": "Fine."}),
        ),
        entry(
            "character_reaction",
            serde_json::json!({"reaction": "Phew."}),
        ),
    ]
}

pub fn campaign() -> troupe_campaign::Campaign {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/campaign.json");
    match troupe_campaign::load(&path) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}
