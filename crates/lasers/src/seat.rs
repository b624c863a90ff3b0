//! Seats: who decides. The engine asks a seat for each decision, through the view of its role,
//! and cannot tell a person at the terminal from a script, an AI or a recorded session: each
//! decision is recorded as the same event whoever made it.

use async_trait::async_trait;
use troupe_agents::{ActionDecl, CharacterView, GmView, PlayerView};
use troupe_engine::CallWatch;
use troupe_llm::AttemptRecord;
use troupe_rules::DiceExpr;
use troupe_seat::Answer;

use crate::machine::GmAsk;
use crate::{CallSpec, FailureChoice, RollOverride, Ruling, StoryMark, WhisperScope};

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
    /// `/scene` or `/time N`: mark the story (a scene ends, days pass), ask again.
    Mark(StoryMark),
    /// `/quit` (or the script ran out): save and end the session.
    Quit,
    /// End the session here, for this reason (an AI GM's natural stopping point).
    End(String),
    /// The seat cannot decide (an AI's model failed past its retries): everything so far is
    /// saved and the session stops unended, so `troupe resume` asks again.
    Fail(String),
    /// The seat changed hands while it was asked (a person handed it to an AI, or took it back):
    /// ask whoever holds it now.
    Handed,
}

impl<T> GmReply<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> GmReply<U> {
        match self {
            GmReply::Answer(t) => GmReply::Answer(f(t)),
            GmReply::Roll(e) => GmReply::Roll(e),
            GmReply::Force(b) => GmReply::Force(b),
            GmReply::Whisper { to, scope, text } => GmReply::Whisper { to, scope, text },
            GmReply::Mark(m) => GmReply::Mark(m),
            GmReply::Quit => GmReply::Quit,
            GmReply::End(why) => GmReply::End(why),
            GmReply::Fail(why) => GmReply::Fail(why),
            GmReply::Handed => GmReply::Handed,
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
    /// These answers, one per question in order, and no more questions this turn (a web GM
    /// who answers and ticks "No more questions" in one form).
    Final(Vec<String>),
}

impl Answers {
    /// One answer per question: cut or padded to `n` with `fill` (no more questions has none).
    pub fn resized(self, n: usize, fill: &str) -> Answers {
        let pad = |mut v: Vec<String>| {
            v.resize(n, fill.to_string());
            v
        };
        match self {
            Answers::Answered(v) => Answers::Answered(pad(v)),
            Answers::Final(v) => Answers::Final(pad(v)),
            Answers::Finish => Answers::Finish,
        }
    }

    /// The answers given, and whether the questions end with them.
    pub fn into_parts(self) -> (Vec<String>, bool) {
        match self {
            Answers::Answered(v) => (v, false),
            Answers::Final(v) => (v, true),
            Answers::Finish => (Vec::new(), true),
        }
    }
}

/// What a seat did on the way to a decision that the log must hold: the model calls an AI seat
/// made, and what the checks of its output found.
#[derive(Clone, Debug)]
pub enum SeatNote {
    Call {
        purpose: String,
        record: AttemptRecord,
    },
    Flag {
        /// Which check: "outcome_contradicts_dice", "decides_for_character",
        /// "private_note_verbatim".
        check: String,
        detail: String,
        /// The text that was flagged.
        text: String,
        /// Sent back for a rewrite (true) or only flagged (the rewrite was flagged too).
        sent_back: bool,
        /// The flagged text is what the table got.
        kept: bool,
    },
    /// The seat marked the story with its decision (an AI GM's or a script's outcome that ends
    /// the scene or lets days pass): recorded after the decision, unlike the notes above.
    Mark(StoryMark),
}

/// One decision asked of the GM's seat. It is the seat protocol's ask ([`GmQuestion::ask`]: the
/// form, the GM's view as JSON, the table commands), and, for a seat that reasons in the game's
/// terms (an AI, a script, a recording, the terminal), the same decision and view as the
/// game's own types, so those seats need not read the JSON back.
#[derive(Clone, Copy, Debug)]
pub struct GmQuestion<'a> {
    pub decision: &'a GmAsk,
    pub view: &'a GmView,
    /// Why the seat's last answer to this decision was not taken.
    pub error: Option<&'a str>,
    /// Where an AI seat's model calls take their seeds (the GM's calls the log holds).
    pub seeds: crate::CallSeeds,
}

/// The GM's seat. Every seat answers every decision the same way, with the protocol's answer
/// (the form's values, a table command, or leaving), read back by the game in one place; so a
/// seat need implement nothing per decision, and a browser, an AI and a script are all asked
/// alike.
#[async_trait]
pub trait GmSeat: Send {
    /// What this seat did since it was last asked (an AI's model calls, its checks' flags), in
    /// order; recorded before the decision (its marks of the story after it).
    fn take_notes(&mut self) -> Vec<SeatNote> {
        Vec::new()
    }

    /// `watch` hears the model calls an AI in the chair makes for it (who thinks, the drafts),
    /// as the table's watch hears every seat's.
    async fn decide(&mut self, question: &GmQuestion<'_>, watch: &mut dyn CallWatch) -> Answer;
}

/// A GM decision in the game's terms, for the seats that reason in them: what
/// [`crate::asks::gm_answer`] turns into the protocol's answer for the decision asked.
#[derive(Clone, Debug, PartialEq)]
pub enum GmDecision {
    /// Narration, an outcome, an insight answer, or the text of a reviewed action.
    Text(String),
    Answers(Answers),
    Ruling(Ruling),
    Override(RollOverride),
    /// Something said into the party's talk, or nothing.
    Interjection(Option<String>),
    Failure(FailureChoice),
}

/// What a player seat is shown: the player layer's view or the character's, by the decision.
#[derive(Clone, Debug)]
pub enum LayerView {
    Player(PlayerView),
    Character(CharacterView),
}

/// A player seat's view of one decision: the turn, and its layer's view.
#[derive(Clone, Debug)]
pub struct SeatView {
    pub turn: u32,
    pub layer: LayerView,
}

/// One decision asked of a player's seat, like [`GmQuestion`]: the protocol's ask
/// ([`PlayerQuestion::ask`]: the form, the layer's view as JSON), and the same call and view as
/// the game's own types, for a seat that reasons in them (the terminal's prompts).
#[derive(Clone, Copy, Debug)]
pub struct PlayerQuestion<'a> {
    pub call: &'a CallSpec,
    pub view: &'a SeatView,
    /// Why the seat's last answer to this decision was not taken.
    pub error: Option<&'a str>,
    /// The attempt this decision asks again: an action the overreach check sent back, whose
    /// form comes back holding it (the ask's `prefill`).
    pub again: Option<&'a ActionDecl>,
}

/// A player's seat taken by a person (at the terminal, in a browser, or a recording of them).
/// Like the GM's seat it answers with the protocol's answer, read back by the game in one
/// place ([`PlayerQuestion::read`]) into a [`crate::PlayerDecision`], the type an AI's reply is
/// read into too: a person's decision and an AI's are recorded the same way, and neither is
/// dressed up as the other.
#[async_trait]
pub trait PlayerSeat: Send {
    async fn decide(&mut self, question: &PlayerQuestion<'_>) -> Answer;

    /// The first answers to one step's decisions, in order: decisions that do not depend on each
    /// other (questions, plans, party talk, votes, actions). By default asked one after another
    /// (a hot seat shares one terminal); seats in people's own browsers ask them all at once.
    async fn decide_all(&mut self, questions: &[PlayerQuestion<'_>]) -> Vec<Answer> {
        let mut answers = Vec::with_capacity(questions.len());
        for question in questions {
            answers.push(self.decide(question).await);
        }
        answers
    }

    /// Seats that changed hands since the driver last asked: (agent id, whether a person now
    /// plays it). The driver records each in the log before its next step.
    fn take_hand_overs(&mut self) -> Vec<(String, bool)> {
        Vec::new()
    }
}
