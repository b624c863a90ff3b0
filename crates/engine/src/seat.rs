//! Seats: who decides. The engine asks a seat for each GM decision and cannot tell a person at
//! the terminal from a script or, later, an AI.

use async_trait::async_trait;
use troupe_agents::ActionDecl;
use troupe_rules::{DiceExpr, RollResult};
use troupe_validator::Verdict;

use crate::{FailureChoice, Phase, RollOverride, Ruling, Session, WhisperScope};

/// A seat's reply: the answer, or a table command to perform before asking again.
#[derive(Clone, Debug, PartialEq)]
pub enum GmReply<T> {
    Answer(T),
    /// `/roll NdM±K`: roll it, show it, ask again.
    Roll(DiceExpr),
    /// `/success` or `/fail`: decide the next roll's result, ask again.
    Force(bool),
    /// `/whisper AGENT|all --player-only|--character-only|--both TEXT`: record it, ask again.
    Whisper {
        to: Option<String>,
        scope: WhisperScope,
        text: String,
    },
    /// `/quit` (or the script ran out): save and end the session.
    Quit,
}

impl<T> GmReply<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> GmReply<U> {
        match self {
            GmReply::Answer(t) => GmReply::Answer(f(t)),
            GmReply::Roll(e) => GmReply::Roll(e),
            GmReply::Force(b) => GmReply::Force(b),
            GmReply::Whisper { to, scope, text } => GmReply::Whisper { to, scope, text },
            GmReply::Quit => GmReply::Quit,
        }
    }
}

/// The GM's answers to a round of clarifying questions.
#[derive(Clone, Debug, PartialEq)]
pub enum Answers {
    /// One answer per question, in order.
    Answered(Vec<String>),
    /// No more questions this turn.
    Finish,
}

/// The GM's seat: one method per decision the game asks of the GM.
#[async_trait]
pub trait GmSeat: Send {
    async fn narrate(&mut self, s: &Session) -> GmReply<String>;
    async fn answer_questions(
        &mut self,
        s: &Session,
        round: u32,
        questions: &[(String, String)],
    ) -> GmReply<Answers>;
    /// The validator gave up on an action: return the text to keep (the correction or an edit).
    async fn review_action(
        &mut self,
        s: &Session,
        agent: &str,
        original: &str,
        corrected: &str,
        verdict: &Verdict,
    ) -> GmReply<String>;
    async fn adjudicate(
        &mut self,
        s: &Session,
        agent: &str,
        action: &ActionDecl,
    ) -> GmReply<Ruling>;
    async fn override_roll(
        &mut self,
        s: &Session,
        agent: &str,
        roll: &RollResult,
    ) -> GmReply<RollOverride>;
    async fn answer_insight(&mut self, s: &Session, agent: &str, question: &str)
    -> GmReply<String>;
    async fn narrate_outcome(&mut self, s: &Session) -> GmReply<String>;
    /// After a discussion round without agreement: something to say into the players' OOC
    /// talk, or None to let them go on.
    async fn interject(&mut self, _s: &Session, _round: u32) -> GmReply<Option<String>> {
        GmReply::Answer(None)
    }
    /// A phase failed twice: retry, skip the AI's contribution, or type it yourself.
    async fn resolve_failure(
        &mut self,
        s: &Session,
        phase: Phase,
        agent: &str,
        error: &str,
    ) -> GmReply<FailureChoice>;
}
