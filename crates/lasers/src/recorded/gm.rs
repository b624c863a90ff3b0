//! The GM of a recorded session, for a replay: each decision and each table command the GM
//! made is read back from the log and given again when asked, in order.

use std::collections::{BTreeMap, VecDeque};

use async_trait::async_trait;
use troupe_agents::GmView;
use troupe_engine::CallWatch;
use troupe_rules::DiceExpr;
use troupe_seat::Answer;

use crate::asks::{gm_answer, suggested};
use crate::machine::GmAsk;
use crate::{
    Answers, Envelope, Event, FailureChoice, GmDecision, GmQuestion, GmReply, GmSeat, RollOverride,
    Ruling, SeatNote, StoryMark, WhisperScope,
};

/// A table command the GM typed at a prompt (/roll, /success, /fail).
#[derive(Clone, Debug)]
enum Command {
    Roll(DiceExpr),
    Force(bool),
    Whisper {
        to: Option<String>,
        scope: WhisperScope,
        text: String,
    },
    Mark(StoryMark),
}

/// A GM decision as recorded, with the commands typed at the same prompt before it.
#[derive(Clone, Debug)]
struct Recorded<T> {
    commands: Vec<Command>,
    decision: T,
}

/// What the GM did in each turn, by kind of decision, in order.
#[derive(Default)]
struct TurnInputs {
    narration: Option<Recorded<String>>,
    answers: VecDeque<Recorded<Answers>>,
    reviews: VecDeque<Recorded<String>>,
    rulings: VecDeque<Recorded<Ruling>>,
    overrides: VecDeque<Recorded<RollOverride>>,
    insights: VecDeque<Recorded<String>>,
    outcome: Option<Recorded<String>>,
    /// What the outcome marked in the story (a scene's end, days passing), recorded after it.
    outcome_marks: Vec<StoryMark>,
    failures: VecDeque<Recorded<FailureChoice>>,
    ooc: VecDeque<Recorded<Option<String>>>,
}

/// The GM of a recorded session. When the story goes somewhere the recording did not (a new
/// model asks a question nobody answered), it answers the way a hands-off GM would: no more
/// questions, keep the correction, the suggested roll, keep the dice, nothing hidden, skip.
pub struct RecordedGm {
    turns: BTreeMap<u32, TurnInputs>,
    /// Commands still to perform before the decision being asked for.
    queued: VecDeque<Command>,
    /// That decision, held until its commands are done.
    held: Option<Decision>,
    /// Marks of the story to hand over with the decision just given.
    notes: Vec<SeatNote>,
}

/// A recorded GM decision of any kind, held while the commands typed before it are replayed.
enum Decision {
    Text(String),
    Answers(Answers),
    Ruling(Ruling),
    Override(RollOverride),
    Failure(FailureChoice),
    Ooc(Option<String>),
}

/// The decision types a [`Decision`] holds, and the way back out.
trait Held: Sized {
    fn hold(self) -> Decision;
    fn take(d: Decision) -> Option<Self>;
}

macro_rules! held {
    ($t:ty, $v:ident) => {
        impl Held for $t {
            fn hold(self) -> Decision {
                Decision::$v(self)
            }
            fn take(d: Decision) -> Option<Self> {
                match d {
                    Decision::$v(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}
held!(String, Text);
held!(Answers, Answers);
held!(Ruling, Ruling);
held!(RollOverride, Override);
held!(FailureChoice, Failure);
held!(Option<String>, Ooc);

impl RecordedGm {
    pub fn new(events: &[Envelope]) -> Self {
        let mut turns: BTreeMap<u32, TurnInputs> = BTreeMap::new();
        let mut commands: Vec<Command> = Vec::new();
        // Marks right after an outcome came with it; others were typed before a decision.
        let mut after_outcome = false;
        for env in events {
            let t = turns.entry(env.turn_number).or_default();
            let rec = |commands: &mut Vec<Command>| std::mem::take(commands);
            let was_after_outcome = std::mem::replace(&mut after_outcome, false);
            match &env.event {
                Event::SceneEnded { .. } | Event::TimePassed { .. } => {
                    let mark = StoryMark::of_event(&env.event);
                    if was_after_outcome {
                        t.outcome_marks.extend(mark);
                        after_outcome = true;
                    } else {
                        commands.extend(mark.map(Command::Mark));
                    }
                }
                Event::GmRoll { expression, .. } => {
                    if let Ok(expr) = expression.parse::<DiceExpr>() {
                        commands.push(Command::Roll(expr));
                    }
                }
                Event::GmForcedResult { success } => commands.push(Command::Force(*success)),
                Event::Whisper { to, scope, text } => commands.push(Command::Whisper {
                    to: to.clone(),
                    scope: *scope,
                    text: text.clone(),
                }),
                Event::GmOoc { text, .. } => t.ooc.push_back(Recorded {
                    commands: rec(&mut commands),
                    decision: (!text.is_empty()).then(|| text.clone()),
                }),
                Event::GmNarration { text } => {
                    t.narration = Some(Recorded {
                        commands: rec(&mut commands),
                        decision: text.clone(),
                    })
                }
                Event::GmAnswers {
                    answers, finished, ..
                } => t.answers.push_back(Recorded {
                    commands: rec(&mut commands),
                    decision: match (*finished, answers.is_empty()) {
                        (true, true) => Answers::Finish,
                        (true, false) => Answers::Final(answers.clone()),
                        (false, _) => Answers::Answered(answers.clone()),
                    },
                }),
                Event::GmReviewedAction { action, .. } => t.reviews.push_back(Recorded {
                    commands: rec(&mut commands),
                    decision: action.clone(),
                }),
                Event::GmAdjudication { ruling, .. } => t.rulings.push_back(Recorded {
                    commands: rec(&mut commands),
                    decision: ruling.clone(),
                }),
                Event::GmRollOverride { change, .. } => t.overrides.push_back(Recorded {
                    commands: rec(&mut commands),
                    decision: change.clone(),
                }),
                Event::LaserFeelingsAnswer { answer, .. } => t.insights.push_back(Recorded {
                    commands: rec(&mut commands),
                    decision: answer.clone(),
                }),
                Event::GmOutcome { text } => {
                    t.outcome = Some(Recorded {
                        commands: rec(&mut commands),
                        decision: text.clone(),
                    });
                    after_outcome = true;
                }
                Event::GmFailureDecision { choice, .. } => t.failures.push_back(Recorded {
                    commands: rec(&mut commands),
                    decision: choice.clone(),
                }),
                _ => {}
            }
        }
        RecordedGm {
            turns,
            queued: VecDeque::new(),
            held: None,
            notes: Vec::new(),
        }
    }

    /// The recorded commands first, one per ask, then the recorded decision (or the fallback).
    fn give<T: Held>(
        &mut self,
        s: &GmView,
        pick: impl FnOnce(&mut TurnInputs) -> Option<Recorded<T>>,
        fallback: impl Fn() -> T,
    ) -> GmReply<T> {
        if self.held.is_none() {
            let recorded = self.turns.get_mut(&s.turn).and_then(pick);
            let (commands, decision) = match recorded {
                Some(r) => (r.commands, r.decision),
                None => (Vec::new(), fallback()),
            };
            self.queued = commands.into();
            self.held = Some(decision.hold());
        }
        match self.queued.pop_front() {
            Some(Command::Roll(expr)) => return GmReply::Roll(expr),
            Some(Command::Force(success)) => return GmReply::Force(success),
            Some(Command::Whisper { to, scope, text }) => {
                return GmReply::Whisper { to, scope, text };
            }
            Some(Command::Mark(mark)) => return GmReply::Mark(mark),
            None => {}
        }
        match self.held.take().and_then(T::take) {
            Some(d) => GmReply::Answer(d),
            None => GmReply::Answer(fallback()),
        }
    }
}

#[async_trait]
impl GmSeat for RecordedGm {
    fn take_notes(&mut self) -> Vec<SeatNote> {
        std::mem::take(&mut self.notes)
    }

    async fn decide(&mut self, question: &GmQuestion<'_>, _: &mut dyn CallWatch) -> Answer {
        let s = question.view;
        let reply = match question.decision {
            GmAsk::Narration => self.narrate(s).map(GmDecision::Text),
            GmAsk::Answers { questions, .. } => {
                let n = questions.len();
                self.give(s, |t| t.answers.pop_front(), || Answers::Finish)
                    .map(|a| a.resized(n, "You don't know yet."))
                    .map(GmDecision::Answers)
            }
            GmAsk::Review { corrected, .. } => self
                .give(s, |t| t.reviews.pop_front(), || corrected.clone())
                .map(GmDecision::Text),
            GmAsk::Adjudicate { action, .. } => self
                .give(s, |t| t.rulings.pop_front(), || suggested(action))
                .map(GmDecision::Ruling),
            GmAsk::Override { .. } => self
                .give(s, |t| t.overrides.pop_front(), || RollOverride::Keep)
                .map(GmDecision::Override),
            GmAsk::Insight { .. } => self
                .give(
                    s,
                    |t| t.insights.pop_front(),
                    || "Nothing is hidden here: what you see is what is going on.".to_string(),
                )
                .map(GmDecision::Text),
            GmAsk::Outcome => self.narrate_outcome(s).map(GmDecision::Text),
            GmAsk::Interject { .. } => self
                .give(s, |t| t.ooc.pop_front(), || None)
                .map(GmDecision::Interjection),
            GmAsk::Failure { .. } => self
                .give(s, |t| t.failures.pop_front(), || FailureChoice::Skip)
                .map(GmDecision::Failure),
        };
        gm_answer(question.decision, reply)
    }
}

impl RecordedGm {
    fn narrate(&mut self, s: &GmView) -> GmReply<String> {
        let recorded = self.held.is_some()
            || self
                .turns
                .get(&s.turn)
                .is_some_and(|t| t.narration.is_some());
        if !recorded {
            // The recording has no more turns: the replay ends where the session did.
            return GmReply::Quit;
        }
        self.give(s, |t| t.narration.take(), String::new)
    }

    fn narrate_outcome(&mut self, s: &GmView) -> GmReply<String> {
        let reply = self.give(s, |t| t.outcome.take(), || "The moment passes.".to_string());
        if matches!(reply, GmReply::Answer(_)) {
            let marks = self
                .turns
                .get_mut(&s.turn)
                .map(|t| std::mem::take(&mut t.outcome_marks))
                .unwrap_or_default();
            self.notes.extend(marks.into_iter().map(SeatNote::Mark));
        }
        reply
    }
}
