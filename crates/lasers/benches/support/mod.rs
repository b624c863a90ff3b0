//! What the engine benchmarks share: a GM that answers at once, one turn's recorded model
//! replies, and the example campaign.

use async_trait::async_trait;
use troupe_lasers::*;
use troupe_llm::ReplayEntry;

pub struct InstantGm(pub u64);

#[async_trait]
impl GmSeat for InstantGm {
    async fn decide(
        &mut self,
        q: &GmQuestion<'_>,
        _: &mut dyn troupe_engine::CallWatch,
    ) -> troupe_seat::Answer {
        let text = |t: &str| GmReply::Answer(GmDecision::Text(t.into()));
        let reply = match q.decision {
            GmAsk::Narration if self.0 == 0 => GmReply::Quit,
            GmAsk::Narration => {
                self.0 -= 1;
                text("A guard blocks the corridor, rifle raised.")
            }
            GmAsk::Answers { .. } => GmReply::Answer(GmDecision::Answers(Answers::Finish)),
            GmAsk::Review { corrected, .. } => text(corrected),
            GmAsk::Adjudicate { action: x, .. } => {
                GmReply::Answer(GmDecision::Ruling(Ruling::Roll {
                    task: x.task_type,
                    prepared: x.prepared,
                    expert: x.expert,
                }))
            }
            GmAsk::Override { .. } => GmReply::Answer(GmDecision::Override(RollOverride::Keep)),
            GmAsk::Insight { .. } => text("They are bluffing."),
            GmAsk::Outcome => text("The guard hesitates."),
            GmAsk::Interject { .. } => GmReply::Answer(GmDecision::Interjection(None)),
            GmAsk::Failure { .. } => GmReply::Answer(GmDecision::Failure(FailureChoice::Skip)),
        };
        asks::gm_answer(q.decision, reply)
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
