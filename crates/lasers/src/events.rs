//! Events: every fact that happened in a session. The session state is a fold over them.

use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use troupe_agents::{ActionDecl, InsightDecision, Intent, Layer, Outcome, Stance};
use troupe_campaign::Campaign;
use troupe_llm::AttemptRecord;
use troupe_rules::{RollResult, TaskType};
use troupe_validator::Verdict;

use crate::Phase;

/// One line of the session log: the event and where it happened.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope {
    pub seq: u64,
    pub timestamp: DateTime<Utc>,
    pub session_id: String,
    pub session_number: u32,
    pub turn_number: u32,
    pub phase: Option<Phase>,
    #[serde(flatten)]
    pub event: Event,
}

/// Who may know what the GM whispered (seed 000's knowledge scopes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhisperScope {
    /// The player's strategy only: never any character.
    PlayerOnly,
    /// The character only: not even its player.
    CharacterOnly,
    Both,
}

impl WhisperScope {
    pub fn as_str(self) -> &'static str {
        match self {
            WhisperScope::PlayerOnly => "player_only",
            WhisperScope::CharacterOnly => "character_only",
            WhisperScope::Both => "both",
        }
    }
    pub fn reaches(self, layer: Layer) -> bool {
        matches!(
            (self, layer),
            (WhisperScope::Both, _)
                | (WhisperScope::PlayerOnly, Layer::Player)
                | (WhisperScope::CharacterOnly, Layer::Character)
        )
    }
}

/// Why a roll was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollPurpose {
    Helper,
    Action,
}

/// The GM's ruling on a declared action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ruling", rename_all = "snake_case")]
pub enum Ruling {
    /// Roll, with the pool the GM decided on.
    Roll {
        task: TaskType,
        prepared: bool,
        expert: bool,
    },
    /// Ask the character to revise its action.
    Revise { note: String },
    /// No roll needed: the GM narrates the outcome directly.
    NoRoll { note: String },
}

/// A GM's change to a roll before it resolves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "override", rename_all = "snake_case")]
pub enum RollOverride {
    Keep,
    Faces { faces: Vec<u8> },
    Success,
    Failure,
}

impl RollOverride {
    /// The word it is logged as (its `override` tag).
    pub fn word(&self) -> &'static str {
        match self {
            RollOverride::Keep => "keep",
            RollOverride::Faces { .. } => "faces",
            RollOverride::Success => "success",
            RollOverride::Failure => "failure",
        }
    }
}

/// How a validation attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictResult {
    Passed,
    Retry,
    AutoCorrected,
    FlaggedForGm,
}

/// What the GM chose after a phase failed twice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "choice", rename_all = "snake_case")]
pub enum FailureChoice {
    Retry,
    Skip,
    TakeOver { text: String },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event_type", rename_all = "snake_case")]
pub enum Event {
    SessionStarted {
        campaign: Box<Campaign>,
        seed: u64,
        model: String,
        troupe_version: String,
        /// The story's in-game day when the session began (day 1 is the campaign's first;
        /// absent in logs of the first day and in logs written before days were tracked).
        #[serde(default = "first_day", skip_serializing_if = "is_first_day")]
        day: u32,
    },
    SessionEnded {
        reason: String,
    },
    /// The session was picked up again (after a crash, Ctrl-C, a quit or an undo).
    SessionResumed {
        troupe_version: String,
        /// What the log showed when it was picked up, e.g. "turn 2, gm_adjudication".
        at: String,
    },
    /// The GM took back events `from_seq..=to_seq`; they stay in the log, marked undone.
    EventsUndone {
        from_seq: u64,
        to_seq: u64,
        what: String,
    },
    TurnStarted,
    TurnCompleted,
    PhaseStarted,
    PhaseCompleted,
    PhaseFailed {
        agent: String,
        error: String,
        failures: u32,
    },
    GmNarration {
        text: String,
    },
    /// What an AI recalled before deciding: `results` are the player layer's lines (as shown),
    /// `recalled` every memory of both layers with its confidence, source and episodes.
    MemoryRetrieved {
        agent: String,
        query: String,
        results: Vec<String>,
        #[serde(default)]
        recalled: Vec<crate::memory::types::Recalled>,
        status: String,
    },
    ClarifyingQuestions {
        agent: String,
        round: u32,
        questions: Vec<String>,
    },
    GmAnswers {
        round: u32,
        /// One per question in asking order; empty when the GM finished the Q&A.
        answers: Vec<String>,
        finished: bool,
    },
    ClarificationEnded {
        reason: String,
    },
    StrategicIntent {
        agent: String,
        intent: Intent,
    },
    /// The player-to-character (P2C) message: only this agent's character sees it.
    Directive {
        agent: String,
        character: String,
        text: String,
    },
    CharacterAction {
        agent: String,
        attempt: u32,
        action: ActionDecl,
    },
    Validation {
        agent: String,
        attempt: u32,
        verdict: Verdict,
        result: VerdictResult,
        /// The auto-corrected action text, when the result is auto_corrected or flagged.
        corrected: Option<String>,
    },
    GmReviewedAction {
        agent: String,
        /// The text the GM kept (the correction, or their own edit).
        action: String,
    },
    GmAdjudication {
        agent: String,
        #[serde(flatten)]
        ruling: Ruling,
    },
    /// A GM command (/success, /fail) that decides the next roll's result.
    GmForcedResult {
        success: bool,
    },
    DiceRolled {
        agent: String,
        purpose: RollPurpose,
        /// For a helper roll: whom it helps.
        helping: Option<String>,
        roll_index: u64,
        seed: u64,
        pool: u32,
        result: RollResult,
    },
    GmRollOverride {
        agent: String,
        #[serde(flatten)]
        change: RollOverride,
        result: RollResult,
    },
    /// A `/roll` the GM made at a prompt.
    GmRoll {
        expression: String,
        roll_index: u64,
        seed: u64,
        faces: Vec<u32>,
        total: i64,
    },
    LaserFeelingsQuestion {
        agent: String,
        question: String,
    },
    LaserFeelingsAnswer {
        agent: String,
        answer: String,
    },
    InsightDecision {
        agent: String,
        decision: InsightDecision,
    },
    GmOutcome {
        text: String,
    },
    CharacterReaction {
        agent: String,
        text: String,
    },
    /// The memory step ran: the turns it stored and why, or that it held them for later.
    MemoryStorage {
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trigger: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        turns: Vec<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stored: Option<crate::memory::types::Remembered>,
        /// How facts were drawn from the free text: `model`, `fallback: <reason>` (the raw
        /// episodes were stored), or `off`; absent when there was nothing to draw from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extraction: Option<String>,
        /// The names the campaign memory knew when the extraction prompt was written (it lists
        /// them), so a replay writes the same prompt; absent when no prompt was written, and in
        /// logs from before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        known_names: Option<Vec<troupe_agents::KnownName>>,
    },
    /// A check of the AI GM's output found a problem: its outcome contradicts the dice, its
    /// narration decides what a character does or feels, or it repeats a private note word for
    /// word. `sent_back`: the GM was asked to rewrite; `kept`: this text reached the table.
    GmFlagged {
        check: String,
        detail: String,
        text: String,
        sent_back: bool,
        kept: bool,
    },
    GmFailureDecision {
        agent: String,
        #[serde(flatten)]
        choice: FailureChoice,
    },
    /// A prompt passed 80% of the model's context and was trimmed to fit.
    ContextTrimmed {
        agent: String,
        purpose: String,
        prompt_tokens: u32,
        budget: u32,
        turns_dropped: u32,
        memories_dropped: u32,
    },
    /// A player's seat changed hands between decisions: a person took it (`person`), or an AI
    /// now plays it. Decisions from here on are asked of the new holder.
    SeatHanded {
        agent: String,
        person: bool,
    },
    /// The GM ended a scene (`/scene`, a script's `scene_ends`, an AI GM's reply): what was
    /// played goes into memory at the turn's storage step.
    SceneEnded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// The GM let time pass in the story (`/time N`): the in-game day moves on by `days`.
    TimePassed {
        days: u32,
    },
    /// The GM told someone something in private (`/whisper`). `to: None` is the whole table.
    Whisper {
        to: Option<String>,
        scope: WhisperScope,
        text: String,
    },
    /// A player's message in the party's out-of-character (OOC) discussion: players see it,
    /// characters never do.
    OocMessage {
        agent: String,
        round: u32,
        message: String,
        /// The speaker's position, classified by the model with the message.
        stance: Stance,
        /// Whose plan the stance is about.
        on: Option<String>,
        proposal: Option<String>,
        /// The directive the player would give its character as things stand.
        directive: Option<String>,
    },
    /// The GM spoke into the OOC discussion.
    GmOoc {
        round: u32,
        text: String,
    },
    /// Where the party stands after a round (conflicted), or how it settled.
    Consensus {
        round: u32,
        outcome: Outcome,
        plan: Option<String>,
        proposer: Option<String>,
        /// Each player's position toward the leading plan.
        positions: BTreeMap<String, Stance>,
        /// Players who did not agree (kept in party memory when the majority proceeds).
        dissent: Vec<String>,
    },
    /// The discussion ran past its time before this round began: the party votes.
    DiscussionTimedOut {
        round: u32,
        elapsed_ms: u64,
    },
    /// The last two rounds left every stance and the leading plan as they were: more talk
    /// would not converge, so the party votes before this round (seed 001's 5 rounds and 2
    /// minutes stay the upper bound).
    DiscussionStalled {
        round: u32,
    },
    /// A player's ballot in a forced vote, and what it says if outvoted.
    VoteCast {
        agent: String,
        vote: String,
        remark: Option<String>,
    },
    ModelCall {
        agent: String,
        layer: Layer,
        purpose: String,
        #[serde(flatten)]
        record: AttemptRecord,
    },
}

impl Event {
    /// How a GM's mark of the story reads at the table (`day`: the in-game day after it), for
    /// the terminal, the transcript and the web table alike. None for other events.
    pub fn story_mark_line(&self, day: u32) -> Option<String> {
        match self {
            Event::SceneEnded { title: Some(t) } => Some(format!("The scene ends: {t}.")),
            Event::SceneEnded { title: None } => Some("The scene ends.".into()),
            Event::TimePassed { days: 1 } => Some(format!("A day passes. It is now day {day}.")),
            Event::TimePassed { days } => Some(format!("{days} days pass. It is now day {day}.")),
            _ => None,
        }
    }

    /// The player seat whose decision this event records (a player's questions, plan,
    /// directive, insight, vote or words out of character; its character's action, reaction
    /// or question to the GM). None for the GM's and the table's events.
    pub fn decision_agent(&self) -> Option<&str> {
        match self {
            Event::ClarifyingQuestions { agent, .. }
            | Event::StrategicIntent { agent, .. }
            | Event::CharacterAction { agent, .. }
            | Event::LaserFeelingsQuestion { agent, .. }
            | Event::InsightDecision { agent, .. }
            | Event::CharacterReaction { agent, .. }
            | Event::OocMessage { agent, .. }
            | Event::VoteCast { agent, .. }
            | Event::Directive { agent, .. } => Some(agent),
            _ => None,
        }
    }

    /// The `event_type` tag, as written in the log.
    pub fn event_type(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| {
                v.get("event_type")
                    .and_then(|t| t.as_str())
                    .map(String::from)
            })
            .unwrap_or_default()
    }
}

/// The story's first in-game day.
pub const FIRST_DAY: u32 = 1;

fn first_day() -> u32 {
    FIRST_DAY
}

fn is_first_day(day: &u32) -> bool {
    *day == FIRST_DAY
}

/// What a GM marks in the story besides its decisions: a scene's end, time passing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoryMark {
    SceneEnded { title: Option<String> },
    TimePassed { days: u32 },
}

impl StoryMark {
    /// The most days one `/time` may pass: ten years, a typo's guard.
    pub const MAX_DAYS: u32 = 3650;

    /// Days for `/time`: "3", "3 days", "1 day"; from 1 to [`StoryMark::MAX_DAYS`].
    pub fn parse_days(text: &str) -> Result<u32, String> {
        let text = text.trim();
        let number = text
            .strip_suffix("days")
            .or_else(|| text.strip_suffix("day"))
            .unwrap_or(text)
            .trim();
        number
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=Self::MAX_DAYS).contains(n))
            .ok_or_else(|| format!("a number of days from 1 to {}, e.g. 3", Self::MAX_DAYS))
    }

    /// A scene's end, with its title when one is given (blank is none).
    pub fn scene_ended(title: Option<&str>) -> StoryMark {
        StoryMark::SceneEnded {
            title: title
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from),
        }
    }

    /// What an outcome marks in the story, in order: the scene's end, then the days that pass
    /// (none when `days` is 0; at most [`StoryMark::MAX_DAYS`]).
    pub fn with_outcome(scene_end: Option<StoryMark>, days: u32) -> Vec<StoryMark> {
        let days = (days > 0).then(|| StoryMark::TimePassed {
            days: days.min(Self::MAX_DAYS),
        });
        scene_end.into_iter().chain(days).collect()
    }

    pub fn event(self) -> Event {
        match self {
            StoryMark::SceneEnded { title } => Event::SceneEnded { title },
            StoryMark::TimePassed { days } => Event::TimePassed { days },
        }
    }

    /// The mark an event records, if it records one: [`StoryMark::event`] read back.
    pub fn of_event(event: &Event) -> Option<StoryMark> {
        match event {
            Event::SceneEnded { title } => Some(StoryMark::SceneEnded {
                title: title.clone(),
            }),
            Event::TimePassed { days } => Some(StoryMark::TimePassed { days: *days }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RollOverride;

    #[test]
    fn a_roll_overrides_word_is_its_logged_tag() {
        for change in [
            RollOverride::Keep,
            RollOverride::Faces { faces: vec![1, 6] },
            RollOverride::Success,
            RollOverride::Failure,
        ] {
            assert_eq!(
                serde_json::to_value(&change).unwrap()["override"],
                change.word()
            );
        }
    }
}
