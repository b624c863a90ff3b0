//! Lasers & Feelings decisions as seat-protocol asks ([`troupe_seat`]), and their answers read
//! back. [`AskedGm`] and [`AskedPlayers`] let any seat that speaks the protocol (a browser, a
//! test) sit at the GM's chair or in a player's, with nothing of this game in the seat itself.

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use troupe_agents::{ActionDecl, GmView};
use troupe_engine::CallWatch;
use troupe_rules::TaskType;
use troupe_seat::{Answer, Ask, Command, Field, Seat, Values, check, form};
use troupe_validator::Verdict;

use crate::decision::PlayerDecision;
use crate::machine::{CallSpec, GmAsk, MAX_QUESTIONS};
use crate::visibility::describe_roll;
use crate::{
    Answers, FailureChoice, GmDecision, GmQuestion, GmReply, GmSeat, LayerView, Phase,
    PlayerQuestion, PlayerSeat, RollOverride, Ruling, SeatView, StoryMark, WhisperScope,
};

/// A seat that answers badly this many times in a row is taken to have failed.
pub(crate) const MAX_BAD_ANSWERS: u32 = 5;

/// The GM's ruling as the character suggested it.
pub fn suggested(action: &ActionDecl) -> Ruling {
    Ruling::Roll {
        task: action.task_type,
        prepared: action.prepared,
        expert: action.expert,
    }
}

/// Faces typed by the GM: "3 5" or "3,5", each 1–6.
pub fn parse_faces(text: &str) -> Option<Vec<u8>> {
    let faces: Option<Vec<u8>> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u8>().ok().filter(|f| (1..=6).contains(f)))
        .collect();
    faces.filter(|f| !f.is_empty())
}

type Form = (&'static str, String, Vec<String>, Vec<Field>);

fn gm_form(ask: &GmAsk, v: &GmView) -> Form {
    match ask {
        GmAsk::Narration => (
            "narration",
            format!(
                "Turn {}: set the scene. What do the characters see?",
                v.turn
            ),
            vec![],
            vec![form::text("text", "Narration")],
        ),
        GmAsk::Answers { questions, .. } => answers_form(questions, v),
        GmAsk::Review {
            agent,
            original,
            corrected,
            verdict,
        } => review_form(v, agent, original, corrected, verdict),
        GmAsk::Adjudicate { agent, action } => adjudicate_form(v, agent, action),
        GmAsk::Override { agent, roll } => (
            "override",
            format!("The dice for {}. Keep them?", v.character_name(agent)),
            vec![describe_roll(roll)],
            vec![
                form::choice(
                    "override",
                    "The roll",
                    &[
                        ("keep", "Keep the dice"),
                        ("faces", "Set the faces"),
                        ("success", "Make it a success"),
                        ("failure", "Make it a failure"),
                    ],
                ),
                form::optional("faces", "Faces (e.g. 3 5), when setting them"),
            ],
        ),
        GmAsk::Insight { agent, question } => (
            "insight",
            format!(
                "LASER FEELINGS: {} asks you a question. Answer it honestly.",
                v.character_name(agent)
            ),
            vec![question.clone()],
            vec![form::text("answer", "Your answer")],
        ),
        GmAsk::Outcome => (
            "outcome",
            "Narrate what happens, from the dice.".into(),
            v.rolls
                .iter()
                .map(|r| format!("{}: {}", r.character, r.summary))
                .collect(),
            vec![form::text("text", "Outcome")],
        ),
        GmAsk::Interject { round } => (
            "interject",
            format!("The party has not agreed after round {round}. Say something to them?"),
            vec![],
            vec![form::optional(
                "text",
                "To the party (blank to let them go on)",
            )],
        ),
        GmAsk::Failure {
            phase,
            agent,
            error,
        } => failure_form(*phase, agent, error),
    }
}

fn answers_form(questions: &[(String, String)], v: &GmView) -> Form {
    let shown = questions
        .iter()
        .map(|(agent, q)| format!("{} asks: {q}", v.character_name(agent)))
        .collect();
    let mut fields: Vec<Field> = questions
        .iter()
        .enumerate()
        .map(|(i, (agent, _))| {
            form::optional(
                &format!("answer_{i}"),
                &format!("Answer to {}", v.character_name(agent)),
            )
        })
        .collect();
    fields.push(form::flag("finish", "No more questions this turn"));
    (
        "answers",
        "The players ask. Answer each question, or end the questions.".into(),
        shown,
        fields,
    )
}

fn review_form(
    v: &GmView,
    agent: &str,
    original: &str,
    corrected: &str,
    verdict: &Verdict,
) -> Form {
    let why: Vec<String> = verdict
        .violations
        .iter()
        .map(|x| format!("flagged: \"{}\" ({})", x.excerpt, x.reason))
        .collect();
    let mut shown = vec![
        format!("{} declared: {original}", v.character_name(agent)),
        format!("rewritten: {corrected}"),
    ];
    shown.extend(why);
    (
        "review",
        "The overreach check could not settle this action. Which text stands?".into(),
        shown,
        vec![
            form::choice(
                "keep",
                "Keep",
                &[
                    ("corrected", "The rewrite"),
                    ("original", "The original"),
                    ("edit", "My own text"),
                ],
            ),
            form::optional("text", "Your text, when writing your own"),
        ],
    )
}

fn adjudicate_form(v: &GmView, agent: &str, action: &ActionDecl) -> Form {
    let pool = format!(
        "suggests: {} roll{}{}: {}",
        action.task_type,
        if action.prepared { ", prepared" } else { "" },
        if action.expert { ", expert" } else { "" },
        action.justification
    );
    (
        "adjudicate",
        format!("Rule on {}'s action.", v.character_name(agent)),
        vec![
            format!("{} attempts: {}", v.character_name(agent), action.action),
            pool,
        ],
        vec![
            form::choice(
                "ruling",
                "Ruling",
                &[
                    ("accept", "Roll as suggested"),
                    ("lasers", "Roll LASERS"),
                    ("feelings", "Roll FEELINGS"),
                    ("revise", "Ask to revise"),
                    ("no_roll", "No roll"),
                ],
            ),
            form::flag("prepared", "Prepared (when you choose the roll)"),
            form::flag("expert", "Expert (when you choose the roll)"),
            form::optional("note", "Note (what to revise, or why no roll)"),
        ],
    )
}

fn failure_form(phase: Phase, agent: &str, error: &str) -> Form {
    (
        "failure",
        format!("{agent} failed twice at {phase}. What now?"),
        vec![error.to_string()],
        vec![
            form::choice(
                "choice",
                "Choice",
                &[
                    ("retry", "Try again"),
                    ("skip", "Skip its part"),
                    ("take_over", "Write it myself"),
                ],
            ),
            form::optional("text", "Your text, when writing it yourself"),
        ],
    )
}

/// The table commands the GM has at every decision (the terminal's `/roll`, `/whisper`…).
fn gm_commands(v: &GmView) -> Vec<Command> {
    let mut to: Vec<(String, String)> = vec![("all".into(), "The whole table".into())];
    to.extend(v.table.iter().map(|s| {
        (
            s.agent_id.clone(),
            format!("{} ({})", s.character.name, s.player_name),
        )
    }));
    let to: Vec<(&str, &str)> = to.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let command = |name: &str, label: &str, fields: Vec<Field>| Command {
        name: name.into(),
        label: label.into(),
        fields,
    };
    vec![
        command(
            "roll",
            "Roll dice",
            vec![form::line("dice", "Dice (e.g. 2d6+1)")],
        ),
        command("success", "Next roll succeeds", vec![]),
        command("fail", "Next roll fails", vec![]),
        command(
            "whisper",
            "Whisper",
            vec![
                form::choice("to", "To", &to),
                form::choice(
                    "scope",
                    "Who hears it",
                    &[
                        ("both", "Player and character"),
                        ("player_only", "The player only"),
                        ("character_only", "The character only"),
                    ],
                ),
                form::text("text", "Whisper"),
            ],
        ),
        command(
            "scene",
            "End the scene",
            vec![form::optional("title", "The scene's title (optional)")],
        ),
        command(
            "time",
            "Let days pass",
            vec![form::line("days", "Days that pass (e.g. 3)")],
        ),
        command("undo", "Take back your last decision", vec![]),
        command(
            "end",
            "End the session",
            vec![form::optional("reason", "Why")],
        ),
    ]
}

/// A GM command as the reply the driver performs.
fn gm_command<T>(name: &str, values: &Map<String, Value>) -> Result<GmReply<T>, String> {
    Ok(match name {
        "roll" => {
            let dice = values.text("dice");
            GmReply::Roll(
                dice.parse()
                    .map_err(|e| format!("{dice} is not dice notation: {e}"))?,
            )
        }
        "success" => GmReply::Force(true),
        "fail" => GmReply::Force(false),
        "scene" => GmReply::Mark(StoryMark::scene_ended(Some(&values.text("title")))),
        "time" => GmReply::Mark(StoryMark::TimePassed {
            days: StoryMark::parse_days(&values.text("days"))
                .map_err(|e| format!("/time needs {e}"))?,
        }),
        "whisper" => {
            let to = values.text("to");
            let scope = match values.text("scope").as_str() {
                "player_only" => WhisperScope::PlayerOnly,
                "character_only" => WhisperScope::CharacterOnly,
                _ => WhisperScope::Both,
            };
            GmReply::Whisper {
                to: (to != "all").then_some(to),
                scope,
                text: values.text("text"),
            }
        }
        "end" => match values.text("reason") {
            r if r.is_empty() => GmReply::Quit,
            r => GmReply::End(r),
        },
        // The table takes decisions back (it stops the game, marks them undone and resumes);
        // a seat cannot do it from inside the game.
        "undo" => return Err("/undo is the table's: ask the table to take it back".into()),
        other => return Err(format!("/{other} is not a GM command")),
    })
}

/// Read the seat's answer to a GM ask: the decision, a command, or why it does not fit.
fn read_gm<T>(
    ask: &Ask,
    answer: Answer,
    decide: impl FnOnce(&Map<String, Value>) -> Result<T, String>,
) -> Result<GmReply<T>, String> {
    check(ask, &answer).map_err(|e| e.to_string())?;
    match answer {
        Answer::Decide { values } => decide(&values).map(GmReply::Answer),
        Answer::Command { name, values } => gm_command(&name, &values),
        Answer::Handed => Ok(GmReply::Handed),
        Answer::Leave => Ok(GmReply::Quit),
        Answer::Fail { reason } => Ok(GmReply::Fail(reason)),
    }
}

fn ruling(values: &Map<String, Value>, action: &ActionDecl) -> Result<Ruling, String> {
    let roll = |task| Ruling::Roll {
        task,
        prepared: values.flag("prepared"),
        expert: values.flag("expert"),
    };
    Ok(match values.text("ruling").as_str() {
        "accept" => suggested(action),
        "lasers" => roll(TaskType::Lasers),
        "feelings" => roll(TaskType::Feelings),
        "revise" => Ruling::Revise {
            note: required(values, "note", "what to revise")?,
        },
        // Why there is no roll may go unsaid: the outcome's narration tells it.
        _ => Ruling::NoRoll {
            note: exact(values, "note"),
        },
    })
}

/// A text as it was sent (a person's was trimmed where it arrived; a recording's must replay
/// byte for byte).
fn exact(values: &Map<String, Value>, name: &str) -> String {
    values
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn required(values: &Map<String, Value>, name: &str, what: &str) -> Result<String, String> {
    let text = exact(values, name);
    if text.trim().is_empty() {
        return Err(format!("say {what}"));
    }
    Ok(text)
}

fn roll_override(values: &Map<String, Value>) -> Result<RollOverride, String> {
    Ok(match values.text("override").as_str() {
        "success" => RollOverride::Success,
        "failure" => RollOverride::Failure,
        "faces" => RollOverride::Faces {
            faces: parse_faces(&values.text("faces"))
                .ok_or("faces are numbers from 1 to 6, separated by spaces")?,
        },
        _ => RollOverride::Keep,
    })
}

fn failure_choice(values: &Map<String, Value>) -> Result<FailureChoice, String> {
    Ok(match values.text("choice").as_str() {
        "retry" => FailureChoice::Retry,
        "skip" => FailureChoice::Skip,
        _ => FailureChoice::TakeOver {
            text: required(values, "text", "the text")?,
        },
    })
}

/// Any seat that speaks the protocol, in the GM's chair: it is shown the ask, view and all.
pub struct AskedGm<S> {
    pub seat: S,
}

#[async_trait]
impl<S: Seat> GmSeat for AskedGm<S> {
    async fn decide(&mut self, question: &GmQuestion<'_>, _: &mut dyn CallWatch) -> Answer {
        self.seat.decide(&question.ask()).await
    }
}

impl GmQuestion<'_> {
    /// The protocol's ask: the form, the GM's view as JSON, the commands, the last error.
    pub fn ask(&self) -> Ask {
        Ask {
            view: serde_json::to_value(self.view).unwrap_or(Value::Null),
            error: self.error.map(str::to_string),
            ..self.form()
        }
    }

    /// The ask without the view: what an answer is checked against (the view is not read).
    fn form(&self) -> Ask {
        let (decision, prompt, shown, fields) = gm_form(self.decision, self.view);
        Ask {
            seat: "gm".into(),
            decision: decision.into(),
            prompt,
            shown,
            view: Value::Null,
            fields,
            commands: gm_commands(self.view),
            error: None,
            prefill: Default::default(),
        }
    }

    /// Read the seat's answer: the decision in the game's terms, a table command, or why the
    /// answer does not fit its ask (the seat is then asked again, told why).
    pub fn read(&self, answer: Answer) -> Result<GmReply<GmDecision>, String> {
        read_gm(&self.form(), answer, |x| read_decision(self.decision, x))
    }
}

/// The values of a GM's answer, read as the decision asked. Texts are taken as they are (a
/// person's are trimmed where they arrive), so a recorded decision replays byte for byte.
fn read_decision(gm: &GmAsk, x: &Map<String, Value>) -> Result<GmDecision, String> {
    let text = |name: &str| exact(x, name);
    Ok(match gm {
        GmAsk::Narration | GmAsk::Outcome => GmDecision::Text(text("text")),
        GmAsk::Insight { .. } => GmDecision::Text(text("answer")),
        GmAsk::Answers { questions, .. } => {
            let answers: Vec<String> = (0..questions.len())
                .map(|i| text(&format!("answer_{i}")))
                .collect();
            let answered = answers.iter().any(|a| !a.trim().is_empty());
            GmDecision::Answers(match (x.flag("finish"), answered) {
                // What the GM wrote is kept even when they also end the questions.
                (true, true) => Answers::Final(answers),
                (true, false) => Answers::Finish,
                (false, _) => Answers::Answered(answers),
            })
        }
        GmAsk::Review {
            original,
            corrected,
            ..
        } => GmDecision::Text(match x.text("keep").as_str() {
            "original" => original.clone(),
            "edit" => required(x, "text", "your text")?,
            _ => corrected.clone(),
        }),
        GmAsk::Adjudicate { action, .. } => GmDecision::Ruling(ruling(x, action)?),
        GmAsk::Override { .. } => GmDecision::Override(roll_override(x)?),
        GmAsk::Interject { .. } => {
            GmDecision::Interjection(Some(text("text")).filter(|t| !t.trim().is_empty()))
        }
        GmAsk::Failure { .. } => GmDecision::Failure(failure_choice(x)?),
    })
}

/// A GM's reply in the game's terms as the protocol's answer to the decision asked: what the
/// seats that reason in the game's terms (an AI, a script, a recording, the terminal) send.
pub fn gm_answer(gm: &GmAsk, reply: GmReply<GmDecision>) -> Answer {
    match reply {
        GmReply::Answer(decision) => Answer::Decide {
            values: decision_values(gm, decision),
        },
        GmReply::Roll(dice) => command("roll", json!({ "dice": dice.to_string() })),
        GmReply::Force(true) => command("success", json!({})),
        GmReply::Force(false) => command("fail", json!({})),
        GmReply::Whisper { to, scope, text } => command(
            "whisper",
            json!({"to": to.unwrap_or_else(|| "all".into()), "scope": scope_value(scope),
                   "text": text}),
        ),
        GmReply::Mark(StoryMark::SceneEnded { title }) => {
            command("scene", json!({ "title": title.unwrap_or_default() }))
        }
        GmReply::Mark(StoryMark::TimePassed { days }) => {
            command("time", json!({ "days": days.to_string() }))
        }
        GmReply::End(reason) => command("end", json!({ "reason": reason })),
        GmReply::Quit => Answer::Leave,
        GmReply::Handed => Answer::Handed,
        GmReply::Fail(reason) => Answer::Fail { reason },
    }
}

fn command(name: &str, values: Value) -> Answer {
    Answer::Command {
        name: name.into(),
        values: object(values),
    }
}

fn object(values: Value) -> Map<String, Value> {
    match values {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn scope_value(scope: WhisperScope) -> &'static str {
    match scope {
        WhisperScope::PlayerOnly => "player_only",
        WhisperScope::CharacterOnly => "character_only",
        WhisperScope::Both => "both",
    }
}

/// The form's values that read back as this decision (see [`read_decision`]).
fn decision_values(gm: &GmAsk, decision: GmDecision) -> Map<String, Value> {
    object(match (gm, decision) {
        (GmAsk::Insight { .. }, GmDecision::Text(t)) => json!({ "answer": t }),
        (
            GmAsk::Review {
                original,
                corrected,
                ..
            },
            GmDecision::Text(t),
        ) => match t {
            t if &t == corrected => json!({"keep": "corrected"}),
            t if &t == original => json!({"keep": "original"}),
            t => json!({"keep": "edit", "text": t}),
        },
        (_, GmDecision::Text(t)) => json!({ "text": t }),
        (_, GmDecision::Answers(Answers::Finish)) => json!({"finish": true}),
        (
            GmAsk::Answers { questions, .. },
            GmDecision::Answers(a @ (Answers::Answered(_) | Answers::Final(_))),
        ) => {
            let (given, finish) = a.into_parts();
            let mut values: Map<String, Value> = given
                .into_iter()
                .take(questions.len())
                .enumerate()
                .map(|(i, t)| (format!("answer_{i}"), Value::String(t)))
                .collect();
            if finish {
                values.insert("finish".into(), Value::Bool(true));
            }
            Value::Object(values)
        }
        (_, GmDecision::Answers(_)) => json!({}),
        (_, GmDecision::Ruling(r)) => ruling_values(r),
        (_, GmDecision::Override(o)) => match o {
            RollOverride::Keep => json!({"override": "keep"}),
            RollOverride::Success => json!({"override": "success"}),
            RollOverride::Failure => json!({"override": "failure"}),
            RollOverride::Faces { faces } => json!({"override": "faces",
                "faces": faces.iter().map(u8::to_string).collect::<Vec<_>>().join(" ")}),
        },
        (_, GmDecision::Interjection(t)) => json!({ "text": t.unwrap_or_default() }),
        (_, GmDecision::Failure(f)) => match f {
            FailureChoice::Retry => json!({"choice": "retry"}),
            FailureChoice::Skip => json!({"choice": "skip"}),
            FailureChoice::TakeOver { text } => json!({"choice": "take_over", "text": text}),
        },
    })
}

fn ruling_values(ruling: Ruling) -> Value {
    match ruling {
        Ruling::Roll {
            task,
            prepared,
            expert,
        } => {
            let task = match task {
                TaskType::Lasers => "lasers",
                TaskType::Feelings => "feelings",
            };
            json!({"ruling": task, "prepared": prepared, "expert": expert})
        }
        Ruling::Revise { note } => json!({"ruling": "revise", "note": note}),
        Ruling::NoRoll { note } => json!({"ruling": "no_roll", "note": note}),
    }
}

impl PlayerQuestion<'_> {
    /// The protocol's ask: the form, the deciding layer's view as JSON, the last error.
    pub fn ask(&self) -> Ask {
        let (decision, prompt, shown, fields) = player_form(self.view, self.call);
        let layer = match &self.view.layer {
            LayerView::Player(v) => serde_json::to_value(v),
            LayerView::Character(v) => serde_json::to_value(v),
        };
        Ask {
            seat: self.call.agent().to_string(),
            decision: decision.into(),
            prompt,
            shown,
            view: layer.unwrap_or(Value::Null),
            fields,
            commands: vec![],
            error: self.error.map(str::to_string),
            prefill: self.prefill(),
        }
    }

    /// The form's values of the attempt asked again, as the seat would send them.
    pub fn prefill(&self) -> Map<String, Value> {
        let Some(attempt) = self.again else {
            return Map::new();
        };
        match player_answer(
            self.call,
            &serde_json::to_value(attempt).unwrap_or_default(),
        ) {
            Answer::Decide { values } => values,
            _ => Map::new(),
        }
    }

    /// Read the seat's answer: the person's decision (the same type as an AI's), a change of
    /// hands, the person leaving, or why the answer does not fit. A player's seat has no table
    /// commands.
    pub fn read(&self, answer: Answer) -> Result<GmReply<PlayerDecision>, String> {
        let ask = self.ask();
        check(&ask, &answer).map_err(|e| e.to_string())?;
        Ok(match answer {
            Answer::Decide { values } => {
                GmReply::Answer(PlayerDecision::from_form(self.call, &values)?)
            }
            Answer::Handed => GmReply::Handed,
            Answer::Fail { reason } => GmReply::Fail(reason),
            Answer::Command { .. } | Answer::Leave => {
                GmReply::End(format!("{}'s player left the table", self.call.agent()))
            }
        })
    }
}

fn player_form(view: &SeatView, call: &CallSpec) -> Form {
    let (proposals, others, character) = match &view.layer {
        LayerView::Player(v) => (v.proposals.clone(), Vec::new(), v.character.name.clone()),
        LayerView::Character(v) => (Vec::new(), v.others.clone(), v.character.name.clone()),
    };
    let plans: Vec<(String, String)> = proposals
        .iter()
        .map(|(who, plan)| (who.clone(), format!("{who}: {plan}")))
        .collect();
    let plan_choice = |name: &str, label: &str, none: Option<&str>| {
        let mut options: Vec<(&str, &str)> = none.map(|n| ("", n)).into_iter().collect();
        options.extend(plans.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        form::choice(name, label, &options)
    };
    match call {
        CallSpec::Questions { .. } => (
            "questions",
            "Questions for the GM about the scene (leave blank for none).".into(),
            vec![],
            vec![form::lines("questions", "Questions", MAX_QUESTIONS)],
        ),
        CallSpec::Intent { .. } => (
            "plan",
            "Your plan, out of character: the party hears it.".into(),
            vec![],
            vec![form::text("plan", "Plan")],
        ),
        CallSpec::Discussion { round, .. } => (
            "discussion",
            format!("Party talk, round {round}: say your piece."),
            vec![],
            vec![
                form::text("message", "To the party"),
                plan_choice("on", "Back a plan", Some("No plan")),
            ],
        ),
        CallSpec::Vote { .. } => (
            "vote",
            "Vote for the party's plan.".into(),
            vec![],
            vec![plan_choice(
                "vote",
                "Your vote",
                proposals.is_empty().then_some("No plan"),
            )],
        ),
        CallSpec::PartyDirective { .. } => (
            "directive",
            format!("What will {character} try under the party's plan?"),
            vec![],
            vec![form::text("directive", "Directive")],
        ),
        CallSpec::InsightDecision { .. } => (
            "insight_decision",
            "LASER FEELINGS: you have the GM's answer. Change your action and roll again?".into(),
            vec![],
            vec![form::flag(
                "change_action",
                "Change the action and roll again",
            )],
        ),
        CallSpec::Action { feedback, .. } => action_form(&character, feedback, &others),
        CallSpec::InsightQuestion { .. } => (
            "insight_question",
            "LASER FEELINGS! You rolled your number exactly: ask the GM one question.".into(),
            vec![],
            vec![form::text("question", "Question")],
        ),
        CallSpec::Reaction { .. } => (
            "reaction",
            format!("How does {character} react?"),
            vec![],
            vec![form::text("reaction", "Reaction")],
        ),
    }
}

fn action_form(character: &str, feedback: &str, others: &[String]) -> Form {
    let shown = if feedback.is_empty() {
        vec![]
    } else {
        // The overreach check's finding, told to the person: rephrase, or send it as it is
        // and the GM rules on it.
        vec![
            format!("The table asks you to rephrase: {feedback}"),
            "Rephrase it, or send it again as it is: then the GM rules on it.".to_string(),
        ]
    };
    let mut helping: Vec<(&str, &str)> = vec![("", "Nobody")];
    helping.extend(others.iter().map(|o| (o.as_str(), o.as_str())));
    (
        "action",
        format!("What does {character} try? Say what you attempt, not what happens."),
        shown,
        vec![
            form::text("action", "Action"),
            form::optional("dialogue", "Said aloud"),
            form::choice(
                "task_type",
                "Roll",
                &[
                    ("lasers", "LASERS (technology, cool logic)"),
                    ("feelings", "FEELINGS (intuition, passion)"),
                ],
            ),
            form::flag("prepared", "Prepared (set up earlier)"),
            form::flag("expert", "Expert (your role fits)"),
            form::choice("helping", "Helping", &helping),
        ],
    )
}

/// The form's answer that gave this recorded decision (as the log holds it, JSON): for a seat
/// that holds a person's decision as it was recorded (a replay of their session), and for the
/// form of an attempt asked again. Each field is taken as it was, so the replay records it byte
/// for byte.
pub fn player_answer(call: &CallSpec, reply: &Value) -> Answer {
    let names: &[&str] = match call {
        CallSpec::Questions { .. } => &["questions"],
        CallSpec::Intent { .. } => &[],
        CallSpec::Discussion { .. } => &["message", "on"],
        CallSpec::Vote { .. } => &["vote"],
        CallSpec::PartyDirective { .. } => &["directive"],
        CallSpec::InsightDecision { .. } => &["change_action"],
        CallSpec::Action { .. } => &[
            "action",
            "dialogue",
            "task_type",
            "prepared",
            "expert",
            "helping",
        ],
        CallSpec::InsightQuestion { .. } => &["question"],
        CallSpec::Reaction { .. } => &["reaction"],
    };
    let mut values: Map<String, Value> = names
        .iter()
        .filter_map(|n| Some((n.to_string(), reply.get(*n)?.clone())))
        .filter(|(_, v)| !v.is_null())
        .collect();
    if let CallSpec::Intent { .. } = call {
        // A person's plan is their strategy, proposal and directive at once.
        values.insert(
            "plan".into(),
            reply.get("strategy").cloned().unwrap_or_default(),
        );
    }
    Answer::Decide { values }
}

/// Hands of seats asked for between steps: (agent id, whether a person takes it).
pub type HandOver = (String, bool);

/// A seat that speaks the protocol in the players' chairs: every character a person plays.
pub struct AskedPlayers<S> {
    pub seat: S,
    /// Seats changing hands, taken by the driver before its next step.
    pub hand_overs: std::sync::Arc<std::sync::Mutex<Vec<HandOver>>>,
}

#[async_trait]
impl<S: Seat> PlayerSeat for AskedPlayers<S> {
    async fn decide(&mut self, question: &PlayerQuestion<'_>) -> Answer {
        self.seat.decide(&question.ask()).await
    }

    fn take_hand_overs(&mut self) -> Vec<HandOver> {
        match self.hand_overs.lock() {
            Ok(mut h) => std::mem::take(&mut *h),
            Err(_) => Vec::new(),
        }
    }
}
