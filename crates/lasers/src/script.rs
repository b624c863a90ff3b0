//! The GM from a YAML script: the same decisions as the terminal, read from a file — for demos,
//! tests and research runs. The format is documented in `examples/README.md`.

use crate::SessionError;
use std::collections::VecDeque;
use std::path::Path;

use crate::machine::GmAsk;
use crate::{
    Answers, Envelope, Error, Event, FailureChoice, GmDecision, GmQuestion, GmReply, GmSeat, Phase,
    RollOverride, Ruling, SeatNote, StoryMark, WhisperScope,
};
use async_trait::async_trait;
use serde::Deserialize;
use troupe_agents::{ActionDecl, GmView};
use troupe_engine::CallWatch;
use troupe_rules::TaskType;
use troupe_seat::Answer;

use crate::asks::{gm_answer, suggested};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub turns: Vec<ScriptTurn>,
}

/// One or many: `answers: "x"` or `answers: ["x", "y"]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    fn iter(&self) -> std::slice::Iter<'_, T> {
        match self {
            OneOrMany::One(t) => std::slice::from_ref(t).iter(),
            OneOrMany::Many(v) => v.iter(),
        }
    }

    fn into_deque(self) -> VecDeque<T> {
        match self {
            OneOrMany::One(t) => VecDeque::from([t]),
            OneOrMany::Many(v) => v.into(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    pub narration: String,
    /// Answers to clarifying questions, in the order asked; when they run out, questions end.
    #[serde(default)]
    pub answers: Option<OneOrMany<String>>,
    /// Rulings in order (one per adjudication); default: accept the character's suggestion.
    #[serde(default)]
    pub ruling: Option<OneOrMany<ScriptRuling>>,
    /// Roll overrides in order; default: keep.
    #[serde(default, rename = "override")]
    pub roll_override: Option<OneOrMany<ScriptOverride>>,
    /// What to do when the validator gives up on an action; default: keep the correction.
    #[serde(default)]
    pub review: Option<ScriptReview>,
    /// The honest answer to a LASER FEELINGS question.
    #[serde(default)]
    pub insight: Option<String>,
    pub outcome: String,
    /// When a phase fails twice; default: skip the AI's part.
    #[serde(default)]
    pub failure: Option<ScriptFailure>,
    /// Whispers sent before this turn's narration.
    #[serde(default)]
    pub whisper: Option<OneOrMany<ScriptWhisper>>,
    /// What the GM says into the party's OOC discussion after a round without agreement, in
    /// order; when they run out, the GM lets the players talk.
    #[serde(default)]
    pub ooc: Option<OneOrMany<String>>,
    /// The outcome ends the scene: `true`, or the scene's title.
    #[serde(default)]
    pub scene_ends: Option<SceneEnd>,
    /// In-game days that pass after the outcome.
    #[serde(default)]
    pub days_pass: u32,
}

/// `scene_ends: true` or `scene_ends: "The heist"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum SceneEnd {
    Ends(bool),
    Titled(String),
}

impl ScriptTurn {
    /// What the turn's outcome marks in the story, in order: the scene's end, then the days.
    fn marks(&self) -> Vec<StoryMark> {
        let scene = match &self.scene_ends {
            Some(SceneEnd::Ends(true)) => Some(StoryMark::scene_ended(None)),
            Some(SceneEnd::Titled(t)) => Some(StoryMark::scene_ended(Some(t))),
            Some(SceneEnd::Ends(false)) | None => None,
        };
        StoryMark::with_outcome(scene, self.days_pass)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptWhisper {
    /// An agent id, or "all" for the whole table.
    pub to: String,
    pub scope: WhisperScope,
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptRuling {
    Accept,
    Roll {
        task: TaskType,
        #[serde(default)]
        prepared: bool,
        #[serde(default)]
        expert: bool,
    },
    Revise(String),
    NoRoll(String),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptOverride {
    Keep,
    Success,
    Fail,
    Faces(Vec<u8>),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptReview {
    Correction,
    Original,
    Edit(String),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptFailure {
    Retry,
    Skip,
    TakeOver(String),
}

impl Script {
    pub fn load(path: &Path) -> Result<Script, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: format!("could not read the GM script {}", path.display()),
            source,
        })?;
        Script::parse(&text, &path.display().to_string())
    }

    /// Read a script's text; `file` names it in every error.
    pub fn parse(text: &str, file: &str) -> Result<Script, Error> {
        let bad = |message: String| Error::from(SessionError::Script(format!("{file}: {message}")));
        let script: Script =
            serde_saphyr::from_str(text).map_err(|e| bad(format!("not a valid GM script: {e}")))?;
        if script.turns.is_empty() {
            return Err(bad("the GM script has no turns".into()));
        }
        for (i, t) in script.turns.iter().enumerate() {
            if t.narration.trim().is_empty() || t.outcome.trim().is_empty() {
                return Err(bad(format!(
                    "turns[{i}] needs a non-empty narration and outcome"
                )));
            }
            if t.days_pass > StoryMark::MAX_DAYS {
                return Err(bad(format!(
                    "turns[{i}].days_pass is {}; at most {} days pass at once",
                    t.days_pass,
                    StoryMark::MAX_DAYS
                )));
            }
        }
        Ok(script)
    }

    /// The whispers' recipients that are not at a table of these agents (nor "all"): those
    /// whispers are not sent.
    pub fn unknown_recipients(&self, agents: &[String]) -> Vec<String> {
        let mut unknown: Vec<String> = self
            .turns
            .iter()
            .filter_map(|t| t.whisper.as_ref())
            .flat_map(OneOrMany::iter)
            .map(|w| w.to.clone())
            .filter(|to| !to.eq_ignore_ascii_case("all") && !agents.contains(to))
            .collect();
        unknown.dedup();
        unknown
    }
}

/// The event types [`ScriptGm::fast_forward`] moves past; a resume reads only these.
pub const GM_INPUT_TYPES: &[&str] = &[
    "whisper",
    "gm_narration",
    "gm_ooc",
    "gm_answers",
    "gm_adjudication",
    "gm_roll_override",
];

/// The seat that plays a script, turn by turn; when the script ends, the session ends.
pub struct ScriptGm {
    turns: VecDeque<ScriptTurn>,
    current: Option<Current>,
    /// The next turn, taken from the script while its whispers go out before its narration.
    staged: Option<ScriptTurn>,
    whispers: VecDeque<ScriptWhisper>,
    /// The current turn's marks of the story, handed to the driver with its outcome.
    notes: Vec<SeatNote>,
}

struct Current {
    /// Failures this turn that the script already answered with `retry`.
    retried: Vec<(Phase, String)>,
    answers: VecDeque<String>,
    rulings: VecDeque<ScriptRuling>,
    overrides: VecDeque<ScriptOverride>,
    ooc: VecDeque<String>,
    turn: ScriptTurn,
}

impl ScriptGm {
    pub fn new(script: Script) -> Self {
        ScriptGm {
            turns: script.turns.into(),
            current: None,
            staged: None,
            whispers: VecDeque::new(),
            notes: Vec::new(),
        }
    }

    /// Move past the inputs a resumed session already has (the events of
    /// [`GM_INPUT_TYPES`] are all it reads): one script turn per narration given,
    /// and, within the current turn, the answers, rulings and overrides already recorded.
    pub fn fast_forward(&mut self, events: &[Envelope]) {
        for env in events {
            match &env.event {
                Event::Whisper { .. } => {
                    self.stage();
                    self.whispers.pop_front();
                }
                Event::GmNarration { .. } => {
                    let _ = self.open_next_turn();
                }
                Event::GmOoc { .. } => {
                    if let Some(cur) = self.cur() {
                        cur.ooc.pop_front();
                    }
                }
                Event::GmAnswers {
                    answers,
                    finished: false,
                    ..
                } => {
                    if let Some(cur) = self.cur() {
                        let n = answers.len().min(cur.answers.len());
                        cur.answers.drain(..n);
                    }
                }
                Event::GmAdjudication { .. } => {
                    if let Some(cur) = self.cur() {
                        cur.rulings.pop_front();
                    }
                }
                Event::GmRollOverride { .. } => {
                    if let Some(cur) = self.cur() {
                        cur.overrides.pop_front();
                    }
                }
                _ => {}
            }
        }
    }

    /// Take the next script turn out, with its whispers queued, unless one is out already.
    fn stage(&mut self) {
        if self.staged.is_none()
            && let Some(mut turn) = self.turns.pop_front()
        {
            self.whispers = turn
                .whisper
                .take()
                .map(OneOrMany::into_deque)
                .unwrap_or_default();
            self.staged = Some(turn);
        }
    }

    /// Make the next script turn the current one; its narration, if there is one.
    fn open_next_turn(&mut self) -> Option<String> {
        self.stage();
        self.whispers.clear();
        let mut turn = self.staged.take()?;
        let narration = turn.narration.clone();
        self.current = Some(Current {
            retried: Vec::new(),
            answers: turn
                .answers
                .take()
                .map(OneOrMany::into_deque)
                .unwrap_or_default(),
            rulings: turn
                .ruling
                .take()
                .map(OneOrMany::into_deque)
                .unwrap_or_default(),
            overrides: turn
                .roll_override
                .take()
                .map(OneOrMany::into_deque)
                .unwrap_or_default(),
            ooc: turn
                .ooc
                .take()
                .map(OneOrMany::into_deque)
                .unwrap_or_default(),
            turn,
        });
        Some(narration)
    }

    fn cur(&mut self) -> Option<&mut Current> {
        self.current.as_mut()
    }
}

#[async_trait]
impl GmSeat for ScriptGm {
    fn take_notes(&mut self) -> Vec<SeatNote> {
        std::mem::take(&mut self.notes)
    }

    async fn decide(&mut self, question: &GmQuestion<'_>, _: &mut dyn CallWatch) -> Answer {
        let reply = match question.decision {
            GmAsk::Narration => self.narrate(question.view).map(GmDecision::Text),
            GmAsk::Answers { questions, .. } => self
                .answer_questions(questions.len())
                .map(GmDecision::Answers),
            GmAsk::Review {
                original,
                corrected,
                ..
            } => self
                .review_action(original, corrected)
                .map(GmDecision::Text),
            GmAsk::Adjudicate { action, .. } => self.adjudicate(action).map(GmDecision::Ruling),
            GmAsk::Override { .. } => self.override_roll().map(GmDecision::Override),
            GmAsk::Insight { .. } => self.answer_insight().map(GmDecision::Text),
            GmAsk::Outcome => self.narrate_outcome().map(GmDecision::Text),
            GmAsk::Interject { .. } => self.interject().map(GmDecision::Interjection),
            GmAsk::Failure { phase, agent, .. } => {
                self.resolve_failure(*phase, agent).map(GmDecision::Failure)
            }
        };
        gm_answer(question.decision, reply)
    }
}

impl ScriptGm {
    fn narrate(&mut self, s: &GmView) -> GmReply<String> {
        self.stage();
        while let Some(w) = self.whispers.pop_front() {
            let to = (!w.to.eq_ignore_ascii_case("all")).then_some(w.to);
            // Not sent: the table was told before the session began (`unknown_recipients`).
            if to.as_ref().is_some_and(|a| !s.seated(a)) {
                continue;
            }
            return GmReply::Whisper {
                to,
                scope: w.scope,
                text: w.text,
            };
        }
        match self.open_next_turn() {
            Some(narration) => GmReply::Answer(narration),
            None => GmReply::Quit,
        }
    }

    fn answer_questions(&mut self, questions: usize) -> GmReply<Answers> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        if cur.answers.is_empty() {
            return GmReply::Answer(Answers::Finish);
        }
        let n = questions.min(cur.answers.len());
        let mut answers: Vec<String> = cur.answers.drain(..n).collect();
        // More questions than scripted answers: the rest get a plain GM deflection.
        answers.resize(questions, "You don't know yet.".to_string());
        GmReply::Answer(Answers::Answered(answers))
    }

    fn review_action(&mut self, original: &str, corrected: &str) -> GmReply<String> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        GmReply::Answer(match &cur.turn.review {
            None | Some(ScriptReview::Correction) => corrected.to_string(),
            Some(ScriptReview::Original) => original.to_string(),
            Some(ScriptReview::Edit(t)) => t.clone(),
        })
    }

    fn adjudicate(&mut self, action: &ActionDecl) -> GmReply<Ruling> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        GmReply::Answer(match cur.rulings.pop_front() {
            None | Some(ScriptRuling::Accept) => suggested(action),
            Some(ScriptRuling::Roll {
                task,
                prepared,
                expert,
            }) => Ruling::Roll {
                task,
                prepared,
                expert,
            },
            Some(ScriptRuling::Revise(note)) => Ruling::Revise { note },
            Some(ScriptRuling::NoRoll(note)) => Ruling::NoRoll { note },
        })
    }

    fn override_roll(&mut self) -> GmReply<RollOverride> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        GmReply::Answer(match cur.overrides.pop_front() {
            None | Some(ScriptOverride::Keep) => RollOverride::Keep,
            Some(ScriptOverride::Success) => RollOverride::Success,
            Some(ScriptOverride::Fail) => RollOverride::Failure,
            Some(ScriptOverride::Faces(faces)) => RollOverride::Faces { faces },
        })
    }

    fn answer_insight(&mut self) -> GmReply<String> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        GmReply::Answer(
            cur.turn.insight.clone().unwrap_or_else(|| {
                "Nothing is hidden here: what you see is what is going on.".into()
            }),
        )
    }

    fn narrate_outcome(&mut self) -> GmReply<String> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        let (outcome, marks) = (cur.turn.outcome.clone(), cur.turn.marks());
        self.notes.extend(marks.into_iter().map(SeatNote::Mark));
        GmReply::Answer(outcome)
    }

    fn interject(&mut self) -> GmReply<Option<String>> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        GmReply::Answer(cur.ooc.pop_front())
    }

    fn resolve_failure(&mut self, phase: Phase, agent: &str) -> GmReply<FailureChoice> {
        let Some(cur) = self.cur() else {
            return GmReply::Quit;
        };
        let key = (phase, agent.to_string());
        GmReply::Answer(match &cur.turn.failure {
            None | Some(ScriptFailure::Skip) => FailureChoice::Skip,
            // A script cannot see that the model is still down: retry once, then skip, so an
            // unattended run never loops forever.
            Some(ScriptFailure::Retry) if cur.retried.contains(&key) => FailureChoice::Skip,
            Some(ScriptFailure::Retry) => {
                cur.retried.push(key);
                FailureChoice::Retry
            }
            Some(ScriptFailure::TakeOver(text)) => FailureChoice::TakeOver { text: text.clone() },
        })
    }
}

/// Fuzz target: GM scripts as a person writes them (see crates/fuzz for the strategies and
/// `TROUPE_FUZZ_CASES`).
#[cfg(test)]
mod fuzz {
    use std::path::Path;

    use proptest::prelude::*;
    use serde_json::Value;
    use troupe_fuzz::{ByteEdit, Edit, apply, apply_bytes, byte_edits, config, edits};

    use super::Script;

    /// YAML syntax (anchors, aliases, tags, block scalars, merge keys) and the script's fields.
    const VOCAB: &[&str] = &[
        "turns:",
        "\n  - ",
        "narration: ",
        "outcome: ",
        "answers: ",
        "ruling: ",
        "override: ",
        "review: ",
        "insight: ",
        "failure: ",
        "whisper: ",
        "ooc: ",
        "scene_ends: ",
        "days_pass: ",
        "accept",
        "roll",
        "task: ",
        "lasers",
        "feelings",
        "faces: [",
        "]",
        "edit: ",
        "take_over: ",
        "to: all",
        "scope: ",
        "&a ",
        "*a",
        "<<: *a",
        "!!binary ",
        "!!str ",
        "? ",
        "|",
        ">-",
        "|+",
        "---",
        "...",
        "#",
        "'",
        "\"",
        "{",
        "}",
        "[",
        ":",
        "- ",
        "\n",
        "\n    ",
        "\t",
        "~",
        "null",
        "0x1F",
        "1e999",
    ];

    fn scripts() -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        ["demo.gm.yaml", "party.gm.yaml", "research.gm.yaml"]
            .iter()
            .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
            .collect()
    }

    /// Parse; any error names the file.
    fn parse(bytes: &[u8]) -> Result<(), TestCaseError> {
        let text = String::from_utf8_lossy(bytes);
        if let Err(e) = Script::parse(&text, "gm.yaml") {
            let message = e.to_string();
            prop_assert!(message.starts_with("gm.yaml: "), "{}", message);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn gm_script_text_never_panics(which in 0usize..3, bytes in byte_edits(VOCAB)) {
            let mut text = scripts().swap_remove(which).into_bytes();
            apply_bytes(&mut text, &bytes);
            parse(&text)?;
        }

        #[test]
        fn gm_script_values_never_panic(which in 0usize..3, edits in edits(VOCAB, 4), bytes in byte_edits(VOCAB)) {
            let mut doc: Value = serde_saphyr::from_str(&scripts().swap_remove(which)).unwrap();
            apply(&mut doc, &edits);
            // JSON is YAML: the edited script, written as JSON, is a script file too.
            let mut text = serde_json::to_vec_pretty(&doc).unwrap();
            apply_bytes(&mut text, &bytes);
            parse(&text)?;
        }
    }

    #[test]
    fn the_shipped_scripts_parse() {
        for text in scripts() {
            Script::parse(&text, "gm.yaml").unwrap();
        }
    }

    /// Edits of nothing leave a script that parses (the strategies' output is reachable).
    #[test]
    fn unedited_scripts_pass_through_the_fuzz_path() {
        let edits: Vec<Edit> = Vec::new();
        let bytes: Vec<ByteEdit> = Vec::new();
        let mut doc: Value = serde_saphyr::from_str(&scripts().swap_remove(0)).unwrap();
        apply(&mut doc, &edits);
        let mut text = serde_json::to_vec_pretty(&doc).unwrap();
        apply_bytes(&mut text, &bytes);
        Script::parse(&String::from_utf8(text).unwrap(), "gm.yaml").unwrap();
    }
}
