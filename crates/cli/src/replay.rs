//! `troupe replay`: run a recorded session again. The GM's inputs come from its log, the dice
//! from its seed, the AIs' replies from its recorded model calls — or, from `--from-turn N` on,
//! from a model of your choice (the same story told to a different AI). The replay runs in
//! memory and writes its log and transcript under `replays/`, never into the campaign's sessions.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use async_trait::async_trait;
use troupe_agents::{ActionDecl, GmView};
use troupe_engine::{
    Answers, Driver, Envelope, Event, EventLog, FailureChoice, GmReply, GmSeat, Phase, Quiet,
    Record, RollOverride, Ruling, SeatNote, SessionSetup, Store, StoryMark, SystemClock,
    WhisperScope, render_markdown,
};
use troupe_llm::{
    CallTag, ChatModel, ChatReply, ChatRequest, ProviderError, ReplayEntry, ReplayModel,
};
use troupe_rules::{DiceExpr, RollResult};
use troupe_validator::Verdict;

use crate::log_players::LogPlayers;
use crate::sessions::open_store;
use crate::{models, play, terminal};

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

/// A recorded scene end or passing of days as the mark that made it.
fn story_mark(event: &Event) -> Option<StoryMark> {
    match event {
        Event::SceneEnded { title } => Some(StoryMark::SceneEnded {
            title: title.clone(),
        }),
        Event::TimePassed { days } => Some(StoryMark::TimePassed { days: *days }),
        _ => None,
    }
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
struct LogGm {
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

impl LogGm {
    fn new(events: &[Envelope]) -> Self {
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
                    let mark = story_mark(&env.event);
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
                    decision: if *finished {
                        Answers::Finish
                    } else {
                        Answers::Answered(answers.clone())
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
        LogGm {
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
impl GmSeat for LogGm {
    fn take_notes(&mut self) -> Vec<SeatNote> {
        std::mem::take(&mut self.notes)
    }

    async fn narrate(&mut self, s: &GmView) -> GmReply<String> {
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

    async fn answer_questions(
        &mut self,
        s: &GmView,
        _round: u32,
        questions: &[(String, String)],
    ) -> GmReply<Answers> {
        let n = questions.len();
        self.give(s, |t| t.answers.pop_front(), || Answers::Finish)
            .map(|a| match a {
                Answers::Answered(mut v) => {
                    v.resize(n, "You don't know yet.".to_string());
                    Answers::Answered(v)
                }
                Answers::Finish => Answers::Finish,
            })
    }

    async fn review_action(
        &mut self,
        s: &GmView,
        _agent: &str,
        _original: &str,
        corrected: &str,
        _verdict: &Verdict,
    ) -> GmReply<String> {
        let corrected = corrected.to_string();
        self.give(s, |t| t.reviews.pop_front(), || corrected.clone())
    }

    async fn adjudicate(
        &mut self,
        s: &GmView,
        _agent: &str,
        action: &ActionDecl,
    ) -> GmReply<Ruling> {
        self.give(s, |t| t.rulings.pop_front(), || terminal::suggested(action))
    }

    async fn override_roll(
        &mut self,
        s: &GmView,
        _agent: &str,
        _roll: &RollResult,
    ) -> GmReply<RollOverride> {
        self.give(s, |t| t.overrides.pop_front(), || RollOverride::Keep)
    }

    async fn answer_insight(&mut self, s: &GmView, _agent: &str, _q: &str) -> GmReply<String> {
        self.give(
            s,
            |t| t.insights.pop_front(),
            || "Nothing is hidden here: what you see is what is going on.".to_string(),
        )
    }

    async fn narrate_outcome(&mut self, s: &GmView) -> GmReply<String> {
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

    async fn interject(&mut self, s: &GmView, _round: u32) -> GmReply<Option<String>> {
        self.give(s, |t| t.ooc.pop_front(), || None)
    }

    async fn resolve_failure(
        &mut self,
        s: &GmView,
        _phase: Phase,
        _agent: &str,
        _error: &str,
    ) -> GmReply<FailureChoice> {
        self.give(s, |t| t.failures.pop_front(), || FailureChoice::Skip)
    }
}

/// Recorded replies until they run out, then the live model (for `--from-turn`).
struct ThenLive {
    recorded: ReplayModel,
    /// The model that gave the recorded replies: an exact replay is that model's session again.
    recorded_from: String,
    live: Option<Arc<dyn ChatModel>>,
}

#[async_trait]
impl ChatModel for ThenLive {
    fn name(&self) -> String {
        match &self.live {
            Some(live) => format!("{} then {}", self.recorded_from, live.name()),
            None => self.recorded_from.clone(),
        }
    }

    async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, ProviderError> {
        match (self.recorded.complete(req).await, &self.live) {
            (Err(ProviderError::Replay(_)), Some(live)) => live.complete(req).await,
            (result, _) => result,
        }
    }

    fn skip_served(&self, served: &[CallTag]) {
        self.recorded.skip_served(served);
    }
}

/// The recorded replies of the model calls before `before_turn` (all of them when `None`).
fn recorded_replies(events: &[Envelope], before_turn: Option<u32>) -> Vec<ReplayEntry> {
    events
        .iter()
        .filter(|e| before_turn.is_none_or(|t| e.turn_number < t))
        .filter_map(|e| match &e.event {
            Event::ModelCall {
                agent,
                purpose,
                record,
                ..
            } => record.reply.as_ref().map(|reply| ReplayEntry {
                agent: agent.clone(),
                purpose: purpose.clone(),
                content: reply.clone(),
            }),
            _ => None,
        })
        .collect()
}

pub async fn replay(
    dir: &Path,
    session: u32,
    from_turn: Option<u32>,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    let store = open_store(dir)?;
    let events = store.live_events(session)?;
    let Some((campaign, seed, recorded_from, day)) = events.iter().find_map(|e| match &e.event {
        Event::SessionStarted {
            campaign,
            seed,
            model,
            day,
            ..
        } => Some(((**campaign).clone(), *seed, model.clone(), *day)),
        _ => None,
    }) else {
        bail!("there is no session {session} in {}", dir.display());
    };
    let live = match from_turn {
        Some(_) => Some(models::choose(model_args, campaign.model.as_ref(), dir)?),
        None => None,
    };
    let model = Arc::new(ThenLive {
        recorded: ReplayModel::from_entries(recorded_replies(&events, from_turn)),
        recorded_from,
        live,
    });
    // Recalls come from the recording: the campaign's memory has moved on since.
    let memory = Box::new(troupe_engine::RecordedMemory::from_log(&events));
    let mut table = play::table(dir, model, memory)?;
    // The discussion runs out of time where it did, however fast the replay is.
    table.discussion_limit = troupe_engine::DiscussionLimit::recorded(&events);
    let mut gm = LogGm::new(&events);
    let mut people = LogPlayers::from_log(&events);

    let replays = dir.join("replays");
    let stem = match from_turn {
        Some(t) => format!("session-{session}-from-turn-{t}"),
        None => format!("session-{session}"),
    };
    let log_path = (1..)
        .map(|k| replays.join(format!("{stem}-replay-{k}.jsonl")))
        .find(|p| !p.exists())
        .context("no free replay file name")?;
    let record = Record {
        store: Store::in_memory()?,
        mirror: Some(EventLog::create(&log_path)?),
    };
    let setup = SessionSetup {
        campaign,
        session_number: session,
        seed,
        day,
    };
    let clock = SystemClock;
    let mut quiet = Quiet;
    let replayed = {
        let mut driver = Driver::start(setup, record, &mut gm, &table, &mut quiet, &clock)?;
        if let Some(p) = people.as_mut() {
            driver.seat_people(p);
        }
        // A session that stopped at its turn limit stops there again.
        if let Some(turns) = turn_limit(&events) {
            driver.stop_after(turns);
        }
        driver.run().await?;
        troupe_engine::read_log(&log_path)?
    };

    let original = render_markdown(&events);
    let again = render_markdown(&replayed);
    let md_path = log_path.with_extension("md");
    std::fs::write(&md_path, &again)
        .with_context(|| format!("could not write {}", md_path.display()))?;
    println!("Replay log: {}", log_path.display());
    println!("Transcript: {}", md_path.display());
    if from_turn.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    if original == again {
        println!("The replay's transcript is identical to session {session}'s.");
        Ok(ExitCode::SUCCESS)
    } else {
        let line = original
            .lines()
            .zip(again.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| original.lines().count().min(again.lines().count()));
        eprintln!(
            "The replay differs from session {session} (first at transcript line {}): the log \
             does not hold everything the session depended on.",
            line + 1
        );
        Ok(ExitCode::FAILURE)
    }
}

/// The turns a session was limited to (`--turns`), read from how it ended.
fn turn_limit(events: &[Envelope]) -> Option<u32> {
    events.iter().rev().find_map(|e| match &e.event {
        Event::SessionEnded { reason } if reason.starts_with("played the ") => Some(e.turn_number),
        _ => None,
    })
}
