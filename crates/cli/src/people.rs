//! People in the players' seats, at the terminal. One seat serves every character a person
//! plays (a hot seat: several people share the keyboard in turn), and each prompt says whose
//! turn it is. The seat answers with the protocol's answer (the form's values), which the engine
//! reads back into the JSON an AI's reply would be, and records the same way.

use async_trait::async_trait;
use serde_json::{Value, json};
use troupe_agents::{CharacterView, PlayerView};
use troupe_engine::{CallSpec, LayerView, PlayerQuestion, PlayerSeat, SeatView};
use troupe_seat::Answer;

use crate::info::sheet;
use crate::keyboard::Keyboard;

pub struct TerminalPlayers {
    keyboard: Keyboard,
    /// Player names by agent id, learnt from the player views (a character's view has none).
    players: std::collections::HashMap<String, String>,
}

/// A person left (`/quit` or the end of input).
struct Left;

impl TerminalPlayers {
    pub fn new(keyboard: Keyboard) -> Self {
        TerminalPlayers {
            keyboard,
            players: std::collections::HashMap::new(),
        }
    }

    /// One line; `/info` shows the sheet and asks again, `/quit` leaves.
    async fn line(&self, view: &SeatView, prompt: &str) -> Result<String, Left> {
        loop {
            let line = self.keyboard.line(prompt).await.ok_or(Left)?;
            match line.trim() {
                "/quit" => return Err(Left),
                "/info" => println!("{}", info(view)),
                "/help" => println!(
                    "Type your answer. /info shows your character, /quit saves and ends the session."
                ),
                other => return Ok(other.to_string()),
            }
        }
    }

    /// A line that may not be empty.
    async fn said(&self, view: &SeatView, prompt: &str) -> Result<String, Left> {
        loop {
            let text = self.line(view, prompt).await?;
            if !text.is_empty() {
                return Ok(text);
            }
        }
    }

    async fn yes(&self, view: &SeatView, prompt: &str) -> Result<bool, Left> {
        let a = self.line(view, &format!("{prompt} [y/N]:")).await?;
        Ok(a.to_lowercase().starts_with('y'))
    }

    /// Say whose turn it is before every decision: on a hot seat the keyboard changes hands.
    fn banner(&mut self, view: &SeatView, what: &str) {
        let (agent, character) = match &view.layer {
            LayerView::Player(v) => {
                self.players
                    .insert(v.agent_id.clone(), v.player.name.clone());
                (&v.agent_id, &v.character.name)
            }
            LayerView::Character(v) => (&v.agent_id, &v.character.name),
        };
        let player = self.players.get(agent).unwrap_or(agent);
        println!("\n── {player} ({character}), your turn: {what} ──");
    }

    async fn player(
        &mut self,
        v: &PlayerView,
        view: &SeatView,
        call: &CallSpec,
    ) -> Result<Value, Left> {
        Ok(match call {
            CallSpec::Questions { .. } => {
                self.banner(view, "questions for the GM");
                scene(&v.narration, &v.clarifications);
                let mut questions = Vec::new();
                while questions.len() < troupe_engine::MAX_QUESTIONS as usize {
                    let q = self.line(view, "Ask the GM (Enter when done):").await?;
                    if q.is_empty() {
                        break;
                    }
                    questions.push(q);
                }
                json!({ "questions": questions })
            }
            CallSpec::Intent { .. } => {
                self.banner(view, "your plan");
                let plan = self
                    .said(view, "Your plan (out of character; the party hears it):")
                    .await?;
                json!({ "plan": plan })
            }
            CallSpec::Discussion { round, .. } => {
                self.banner(view, &format!("party talk, round {round}"));
                for m in &v.discussion {
                    println!("  {}: {}", m.speaker, m.message);
                }
                let message = self.said(view, "Say to the party:").await?;
                let on = self
                    .plan_choice(v, view, "Back a plan? (agent id, Enter for none):")
                    .await?;
                json!({"message": message, "on": on})
            }
            CallSpec::Vote { .. } => {
                self.banner(view, "vote");
                let mut vote = String::new();
                // A vote needs a plan on the table; with none there is nothing to choose.
                while vote.is_empty() && !v.proposals.is_empty() {
                    vote = self
                        .plan_choice(v, view, "Vote for a plan (agent id):")
                        .await?;
                }
                json!({ "vote": vote })
            }
            CallSpec::PartyDirective { .. } => {
                self.banner(view, "the party's plan");
                if let Some(plan) = &v.plan {
                    println!(
                        "The party goes with {}'s plan: {}",
                        plan.proposer, plan.plan
                    );
                }
                let d = self
                    .said(
                        view,
                        &format!("What will {} try under it?", v.character.name),
                    )
                    .await?;
                json!({ "directive": d })
            }
            _ => {
                self.banner(view, "LASER FEELINGS");
                if let Some(i) = &v.insight {
                    println!("You asked: {}\nThe GM: {}", i.question, i.answer);
                }
                let change = self.yes(view, "Change your action and roll again?").await?;
                json!({ "change_action": change })
            }
        })
    }

    /// An agent id whose plan is on the table, or "" (re-asks on an unknown id).
    async fn plan_choice(
        &self,
        v: &PlayerView,
        view: &SeatView,
        prompt: &str,
    ) -> Result<String, Left> {
        if v.proposals.is_empty() {
            return Ok(String::new());
        }
        for (who, plan) in &v.proposals {
            println!("  {who}: {plan}");
        }
        loop {
            let a = self.line(view, prompt).await?;
            if a.is_empty() || v.proposals.iter().any(|(who, _)| *who == a) {
                return Ok(a);
            }
            println!("No plan from {a}; choose one of the ids above.");
        }
    }

    async fn character(
        &mut self,
        v: &CharacterView,
        view: &SeatView,
        call: &CallSpec,
    ) -> Result<Value, Left> {
        Ok(match call {
            CallSpec::Action { feedback, .. } => {
                self.banner(view, "your action");
                scene(&v.narration, &v.clarifications);
                if !feedback.is_empty() {
                    println!("The table asks you to rephrase: {feedback}");
                    println!("Rephrase it, or type it again as it is: then the GM rules on it.");
                }
                self.action(v, view).await?
            }
            CallSpec::InsightQuestion { .. } => {
                self.banner(view, "LASER FEELINGS!");
                if let Some(roll) = &v.roll {
                    println!("{roll}");
                }
                let q = self
                    .said(
                        view,
                        "You rolled your number exactly. Ask the GM one question:",
                    )
                    .await?;
                json!({ "question": q })
            }
            _ => {
                self.banner(view, "reaction");
                if let Some(o) = &v.outcome {
                    println!("The GM: {o}");
                }
                let r = self
                    .said(view, &format!("How does {} react?", v.character.name))
                    .await?;
                json!({ "reaction": r })
            }
        })
    }

    /// What the character attempts, then how: the task, prepared, expert, whom it helps.
    async fn action(&self, v: &CharacterView, view: &SeatView) -> Result<Value, Left> {
        let name = &v.character.name;
        let action = self
            .said(
                view,
                &format!("What does {name} try? (what you attempt, not what happens)"),
            )
            .await?;
        let dialogue = self
            .line(view, "Anything said aloud (Enter for nothing):")
            .await?;
        let task = loop {
            let t = self
                .line(
                    view,
                    "LASERS (technology, cool logic) or FEELINGS (intuition, passion)? [l/f]:",
                )
                .await?;
            match t.to_lowercase().chars().next() {
                Some('l') => break "lasers",
                Some('f') => break "feelings",
                _ => println!("Please answer l or f."),
            }
        };
        let prepared = self.yes(view, "Prepared (set up earlier)?").await?;
        let expert = self.yes(view, "Expert (your role fits)?").await?;
        let mut helping = String::new();
        if !v.others.is_empty() {
            loop {
                helping = self
                    .line(
                        view,
                        &format!("Helping someone? ({}; Enter for no):", v.others.join(", ")),
                    )
                    .await?;
                if helping.is_empty() || v.others.contains(&helping) {
                    break;
                }
                println!("No character {helping} here.");
            }
        }
        Ok(
            json!({"action": action, "dialogue": dialogue, "task_type": task, "prepared": prepared,
            "expert": expert, "helping": helping}),
        )
    }
}

fn info(view: &SeatView) -> String {
    match &view.layer {
        LayerView::Player(v) => sheet(&v.character, &v.player.name),
        LayerView::Character(v) => sheet(&v.character, "you"),
    }
}

fn scene(narration: &str, answers: &[troupe_agents::QuestionAnswer]) {
    println!("The GM: {narration}");
    for qa in answers {
        println!("  {} asked: {} — {}", qa.asked_by, qa.question, qa.answer);
    }
}

#[async_trait]
impl PlayerSeat for TerminalPlayers {
    async fn decide(&mut self, question: &PlayerQuestion<'_>) -> Answer {
        let (view, call) = (question.view, question.call);
        if let Some(why) = question.error {
            println!("(that answer was not taken: {why})");
        }
        let got = match &view.layer {
            LayerView::Player(v) => self.player(v, view, call).await,
            LayerView::Character(v) => self.character(v, view, call).await,
        };
        match got {
            Ok(Value::Object(values)) => Answer::Decide { values },
            // Every prompt above answers with an object of the form's values.
            Ok(other) => Answer::Fail {
                reason: format!("the terminal built {other} for a form"),
            },
            Err(Left) => Answer::Leave,
        }
    }
}
