//! People in the players' seats, at the terminal. One seat serves every character a person
//! plays (a hot seat: several people share the keyboard in turn), and each prompt says whose
//! turn it is. The seat answers with the protocol's answer (the form's values), which the engine
//! reads back into the JSON an AI's reply would be, and records the same way.

use async_trait::async_trait;
use serde_json::{Value, json};
use troupe_agents::{CharacterView, PlayerView};
use troupe_lasers::{CallSpec, LayerView, PlayerQuestion, PlayerSeat, SeatView};
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

    /// The GM's narration and the answers to the table's questions, each asker by name.
    fn scene(&self, narration: &str, answers: &[troupe_agents::QuestionAnswer]) {
        println!("The GM: {narration}");
        for qa in answers {
            let who = self.players.get(&qa.asked_by).unwrap_or(&qa.asked_by);
            println!("  {who} asked: {} — {}", qa.question, qa.answer);
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

    /// A line that may not be empty (an empty one is asked again, saying so).
    async fn said(&self, view: &SeatView, prompt: &str) -> Result<String, Left> {
        loop {
            let text = self.line(view, prompt).await?;
            if !text.is_empty() {
                return Ok(text);
            }
            println!("(an answer is needed here; /help for what you can type)");
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
                for m in &v.party {
                    self.players
                        .insert(m.agent_id.clone(), m.player_name.clone());
                }
                (&v.agent_id, &v.character.name)
            }
            LayerView::Character(v) => (&v.agent_id, &v.character.name),
        };
        let player = self.players.get(agent).unwrap_or(agent);
        if player == character {
            println!("\n── {player}, your turn: {what} ──");
        } else {
            println!("\n── {player} ({character}), your turn: {what} ──");
        }
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
                self.scene(&v.narration, &v.clarifications);
                let mut questions = Vec::new();
                while questions.len() < troupe_lasers::MAX_QUESTIONS as usize {
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
                    .plan_choice(v, view, "Back a plan? (whose, Enter for none):", false)
                    .await?;
                json!({"message": message, "on": on})
            }
            CallSpec::Vote { .. } => {
                self.banner(view, "vote");
                // A vote needs a plan on the table; with none there is nothing to choose.
                let vote = self
                    .plan_choice(v, view, "Vote for a plan (whose):", true)
                    .await?;
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

    /// The agent id whose plan is on the table, named by its agent id, its player's name or
    /// its character's name in any case; or "" (Enter) unless `needed`. Anything else is asked
    /// again, saying why.
    async fn plan_choice(
        &self,
        v: &PlayerView,
        view: &SeatView,
        prompt: &str,
        needed: bool,
    ) -> Result<String, Left> {
        if v.proposals.is_empty() {
            return Ok(String::new());
        }
        for (who, plan) in &v.proposals {
            println!("  {}: {plan}", whose(v, who));
        }
        loop {
            let a = self.line(view, prompt).await?;
            if a.is_empty() && !needed {
                return Ok(a);
            }
            if a.is_empty() {
                println!("A vote needs a plan: type whose plan you vote for (a name above).");
                continue;
            }
            if let Some(agent) = plan_of(v, &a) {
                return Ok(agent);
            }
            let names: Vec<String> = v.proposals.iter().map(|(w, _)| whose(v, w)).collect();
            println!(
                "No plan from {a} on the table; the plans are {}.",
                names.join(", ")
            );
        }
    }

    async fn character(
        &mut self,
        v: &CharacterView,
        view: &SeatView,
        question: &PlayerQuestion<'_>,
    ) -> Result<Value, Left> {
        Ok(match question.call {
            CallSpec::Action { feedback, .. } => {
                self.banner(view, "your action");
                // The attempt the overreach check sent back, as its form's values.
                let mut form = question.prefill();
                if form.is_empty() {
                    self.scene(&v.narration, &v.clarifications);
                    self.action(v, view).await?
                } else {
                    // Flagged: only the words are asked again; the rest of the form stands.
                    println!("The overreach check flagged your action. {feedback}");
                    let said = form
                        .get("action")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    println!("You wrote: {said}");
                    let prompt = format!(
                        "Rephrase what {} tries (Enter sends it as it is, for the GM to rule on):",
                        v.character.name
                    );
                    let text = self.line(view, &prompt).await?;
                    if !text.is_empty() {
                        form.insert("action".into(), Value::String(text));
                    }
                    Value::Object(form)
                }
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
                if helping.is_empty() {
                    break;
                }
                if let Some(id) = v.others.iter().find(|o| o.eq_ignore_ascii_case(&helping)) {
                    helping = id.clone();
                    break;
                }
                println!(
                    "No character {helping} here; type one of {}, or Enter for no.",
                    v.others.join(", ")
                );
            }
        }
        Ok(
            json!({"action": action, "dialogue": dialogue, "task_type": task, "prepared": prepared,
            "expert": expert, "helping": helping}),
        )
    }
}

/// The names of a plan's proposer as the table knows them: player, character, agent id.
fn names_of(v: &PlayerView, agent: &str) -> Option<(String, String)> {
    if agent == v.agent_id {
        return Some((v.player.name.clone(), v.character.name.clone()));
    }
    v.party
        .iter()
        .find(|m| m.agent_id == agent)
        .map(|m| (m.player_name.clone(), m.character_name.clone()))
}

/// A proposer as a person reads them: "Sam (Zara-7)", or "you".
fn whose(v: &PlayerView, agent: &str) -> String {
    match names_of(v, agent) {
        _ if agent == v.agent_id => format!("you ({})", v.character.name),
        Some((player, character)) if player == character => player,
        Some((player, character)) => format!("{player} ({character})"),
        None => agent.to_string(),
    }
}

/// The agent whose plan on the table `answer` names (its agent id, player or character name,
/// in any case; "me" or "mine" for one's own).
fn plan_of(v: &PlayerView, answer: &str) -> Option<String> {
    let answer = answer.trim();
    let me = ["me", "mine", "my plan", "you"]
        .iter()
        .any(|m| answer.eq_ignore_ascii_case(m));
    v.proposals.iter().map(|(who, _)| who).find_map(|who| {
        let (player, character) = names_of(v, who).unwrap_or_default();
        let named = [who.as_str(), player.as_str(), character.as_str()]
            .iter()
            .any(|n| !n.is_empty() && n.eq_ignore_ascii_case(answer));
        (named || (me && *who == v.agent_id)).then(|| who.clone())
    })
}

fn info(view: &SeatView) -> String {
    match &view.layer {
        LayerView::Player(v) => sheet(&v.character, &v.player.name),
        LayerView::Character(v) => sheet(&v.character, "you"),
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
            LayerView::Character(v) => self.character(v, view, question).await,
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
