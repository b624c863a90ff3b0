//! The GM at the terminal: a prompt per decision, slash commands at every prompt. A command is
//! read against the commands the decision's ask offers (`troupe_seat::command_in`), as a page's
//! or a Discord thread's is, and sent to the game as the same answer; only what is the
//! terminal's own (`/info`, `/help`, `/quit`) is handled here.

use async_trait::async_trait;
use troupe_agents::{ActionDecl, GmView};
use troupe_engine::CallWatch;
use troupe_lasers::asks::gm_answer;
use troupe_lasers::{
    Answers, FailureChoice, GmAsk, GmDecision, GmQuestion, GmReply, GmSeat, Phase, RollOverride,
    Ruling,
};
use troupe_rules::{RollResult, TaskType};
use troupe_seat::{Answer, Ask, check, command_in};
use troupe_validator::Verdict;

use crate::info::gm_info;
use crate::keyboard::Keyboard;

pub const HELP: &str = "\
Commands (at any prompt):
  /roll NdM+K   roll dice, e.g. /roll 2d6+3, /roll d20, /roll 1d6-1
  /success      the next roll succeeds (2 successes), whatever the dice say
  /fail         the next roll fails (0 successes), whatever the dice say
  /whisper AGENT|all --player-only|--character-only|--both TEXT
                tell one AI (or the whole table) something in private: the player
                only (its strategy; never any character), the character only, or both
  /scene [TITLE]  end the scene here (what was played goes into memory)
  /time DAYS    let days pass in the story, e.g. /time 3 (the in-game day moves on)
  /end [REASON] end the session: with a reason it is over, without one as /quit
  /info         character sheets, ship, day, turn and phase
  /help         this list
  /quit         save and end the session (`troupe undo` then takes back a decision)";

pub struct TerminalGm {
    keyboard: Keyboard,
    /// The decision being asked, as the seat protocol's ask: the commands a line may be.
    asked: Option<Ask>,
}

/// What one prompt produced: text, or what to send the game instead of the decision (a
/// command, or leaving).
enum Input {
    Text(String),
    Send(Answer),
}

impl TerminalGm {
    pub fn new(keyboard: Keyboard) -> Self {
        TerminalGm {
            keyboard,
            asked: None,
        }
    }

    /// Prompt until the GM types something; slash commands are handled here or handed back.
    async fn prompt(&mut self, s: &GmView, prompt: &str) -> Input {
        self.ask(s, prompt, false).await
    }

    /// `allow_empty`: an empty line is an answer (nothing to say) rather than asked again.
    async fn ask(&mut self, s: &GmView, prompt: &str, allow_empty: bool) -> Input {
        loop {
            // End of input: save and end, never hang or lose anything.
            let Some(line) = self.keyboard.line(prompt).await else {
                return Input::Send(Answer::Leave);
            };
            match line.trim() {
                "/quit" | "/exit" => return Input::Send(Answer::Leave),
                "/info" => println!("{}", gm_info(s)),
                "/help" => println!("{HELP}"),
                "/undo" => println!(
                    "/undo takes back a decision between turns: /quit, then `troupe undo`; \
                     `troupe resume` asks for it again."
                ),
                "" if !allow_empty => {}
                text => match self.command(text) {
                    None => return Input::Text(text.to_string()),
                    Some(Ok(answer)) => return Input::Send(answer),
                    Some(Err(why)) => println!("{why}"),
                },
            }
        }
    }

    /// The command a line is, read against the decision's ask and checked as every seat's
    /// answer is; None for ordinary text.
    fn command(&self, line: &str) -> Option<Result<Answer, String>> {
        let asked = self.asked.as_ref()?;
        Some(
            command_in(asked, line)?
                .and_then(|answer| check(asked, &answer).map(|()| answer))
                .map_err(|e| format!("{e}. /help lists the commands.")),
        )
    }

    /// Prompt for one of a few choices (first letters), re-asking on anything else.
    async fn choose(&mut self, s: &GmView, prompt: &str, choices: &[char]) -> Result<char, Answer> {
        loop {
            match self.prompt(s, prompt).await {
                Input::Send(answer) => return Err(answer),
                Input::Text(t) => {
                    let c = t
                        .chars()
                        .next()
                        .map(|c| c.to_ascii_lowercase())
                        .unwrap_or(' ');
                    if choices.contains(&c) {
                        return Ok(c);
                    }
                    let list: Vec<String> = choices.iter().map(|c| c.to_string()).collect();
                    println!("Please answer {}.", list.join(", "));
                }
            }
        }
    }

    async fn text(&mut self, s: &GmView, prompt: &str) -> Result<String, Answer> {
        match self.prompt(s, prompt).await {
            Input::Text(t) => Ok(t),
            Input::Send(answer) => Err(answer),
        }
    }
}

pub use troupe_lasers::asks::{parse_faces, suggested};

#[async_trait]
impl GmSeat for TerminalGm {
    async fn decide(&mut self, question: &GmQuestion<'_>, _: &mut dyn CallWatch) -> Answer {
        if let Some(why) = question.error {
            println!("That answer does not fit: {why}");
        }
        let s = question.view;
        self.asked = Some(question.ask());
        let reply = match question.decision {
            GmAsk::Narration => self.narrate(s).await.map(GmDecision::Text),
            GmAsk::Answers { round, questions } => self
                .answer_questions(s, *round, questions)
                .await
                .map(GmDecision::Answers),
            GmAsk::Review {
                agent,
                original,
                corrected,
                verdict,
            } => self
                .review_action(s, agent, original, corrected, verdict)
                .await
                .map(GmDecision::Text),
            GmAsk::Adjudicate { agent, action } => self
                .adjudicate(s, agent, action)
                .await
                .map(GmDecision::Ruling),
            GmAsk::Override { agent, roll } => self
                .override_roll(s, agent, roll)
                .await
                .map(GmDecision::Override),
            GmAsk::Insight { agent, question } => self
                .answer_insight(s, agent, question)
                .await
                .map(GmDecision::Text),
            GmAsk::Outcome => self.narrate_outcome(s).await.map(GmDecision::Text),
            GmAsk::Interject { round } => self
                .interject(s, *round)
                .await
                .map(GmDecision::Interjection),
            GmAsk::Failure {
                phase,
                agent,
                error,
            } => self
                .resolve_failure(s, *phase, agent, error)
                .await
                .map(GmDecision::Failure),
        };
        match reply {
            Ok(decision) => gm_answer(question.decision, GmReply::Answer(decision)),
            Err(instead) => instead,
        }
    }
}

/// One prompt (or a few) per decision, in the game's words.
impl TerminalGm {
    async fn narrate(&mut self, s: &GmView) -> Result<String, Answer> {
        println!(
            "\n[Turn {}] Awaiting GM narration. (/help for commands)",
            s.turn
        );
        self.text(s, "Enter narration:").await
    }

    async fn answer_questions(
        &mut self,
        s: &GmView,
        round: u32,
        questions: &[(String, String)],
    ) -> Result<Answers, Answer> {
        println!(
            "\nQuestions for the GM (round {round}); answer each, or type 'finish' to end questions:"
        );
        let mut answers = Vec::new();
        for (i, (agent, q)) in questions.iter().enumerate() {
            println!("  Q{} ({}): {q}", i + 1, s.character_name(agent));
            let a = self.text(s, &format!("Answer {}:", i + 1)).await?;
            if a.eq_ignore_ascii_case("finish") {
                return Ok(Answers::Finish);
            }
            answers.push(a);
        }
        Ok(Answers::Answered(answers))
    }

    async fn review_action(
        &mut self,
        s: &GmView,
        agent: &str,
        original: &str,
        corrected: &str,
        verdict: &Verdict,
    ) -> Result<String, Answer> {
        println!(
            "\n{} kept narrating results after 3 attempts.",
            s.character_name(agent)
        );
        println!("  Original:  {original}");
        for v in &verdict.violations {
            println!("  - \"{}\": {}", v.excerpt, v.reason);
        }
        println!("  Corrected: {corrected}");
        let c = self
            .choose(
                s,
                "Keep the [c]orrection, keep the [o]riginal, or [e]dit it?",
                &['c', 'o', 'e'],
            )
            .await?;
        Ok(match c {
            'c' => corrected.to_string(),
            'o' => original.to_string(),
            _ => self.text(s, "Type the action as it should stand:").await?,
        })
    }

    async fn adjudicate(
        &mut self,
        s: &GmView,
        agent: &str,
        action: &ActionDecl,
    ) -> Result<Ruling, Answer> {
        let name = s.character_name(agent);
        // The attempt is on the screen already (the story's line for it): only the suggestion.
        println!(
            "\n{name} suggests: {} roll{}{} — {}",
            action.task_type,
            if action.prepared { ", prepared" } else { "" },
            if action.expert { ", expert" } else { "" },
            action.justification
        );
        let c = self.choose(s, "Ruling: [a]ccept as suggested, roll [l]asers or [f]eelings, ask to [r]evise, or [n]o roll?", &['a', 'l', 'f', 'r', 'n']).await?;
        Ok(match c {
            'a' => suggested(action),
            'l' | 'f' => {
                let prepared = self.choose(s, "Prepared? [y/n]:", &['y', 'n']).await? == 'y';
                let expert = self.choose(s, "Expert? [y/n]:", &['y', 'n']).await? == 'y';
                let task = if c == 'l' {
                    TaskType::Lasers
                } else {
                    TaskType::Feelings
                };
                Ruling::Roll {
                    task,
                    prepared,
                    expert,
                }
            }
            'r' => Ruling::Revise {
                note: self.text(s, &format!("What should {name} change?")).await?,
            },
            _ => Ruling::NoRoll {
                note: self.text(s, "Why no roll? (a few words):").await?,
            },
        })
    }

    async fn override_roll(
        &mut self,
        s: &GmView,
        agent: &str,
        _roll: &RollResult,
    ) -> Result<RollOverride, Answer> {
        // The roll itself is on the screen already (the story's line for it).
        let prompt = format!("Override {}'s roll? [y/n]:", s.character_name(agent));
        if self.choose(s, &prompt, &['y', 'n']).await? == 'n' {
            return Ok(RollOverride::Keep);
        }
        loop {
            let t = self
                .text(s, "New faces (e.g. 3 5), or 'success' / 'fail':")
                .await?;
            match t.to_ascii_lowercase().as_str() {
                "success" => return Ok(RollOverride::Success),
                "fail" | "failure" => return Ok(RollOverride::Failure),
                _ => match parse_faces(&t) {
                    Some(faces) => return Ok(RollOverride::Faces { faces }),
                    None => println!("Faces are numbers from 1 to 6, separated by spaces."),
                },
            }
        }
    }

    async fn answer_insight(
        &mut self,
        s: &GmView,
        agent: &str,
        _question: &str,
    ) -> Result<String, Answer> {
        // The question is on the screen already (the story's LASER FEELINGS line).
        let prompt = format!("Answer {} honestly:", s.character_name(agent));
        self.text(s, &prompt).await
    }

    async fn narrate_outcome(&mut self, s: &GmView) -> Result<String, Answer> {
        // The rolls are on the screen already, each once (the story's lines for them).
        self.text(s, "\nNarrate the outcome:").await
    }

    async fn interject(&mut self, s: &GmView, round: u32) -> Result<Option<String>, Answer> {
        match self
            .ask(
                s,
                &format!("[OOC] No agreement after round {round}. Say something to the players (Enter to let them talk):"),
                true,
            )
            .await
        {
            Input::Text(t) if t.trim().is_empty() => Ok(None),
            Input::Text(t) => Ok(Some(t)),
            Input::Send(answer) => Err(answer),
        }
    }

    async fn resolve_failure(
        &mut self,
        s: &GmView,
        phase: Phase,
        agent: &str,
        error: &str,
    ) -> Result<FailureChoice, Answer> {
        println!(
            "\n{} ({}) failed twice for {}: {error}",
            phase.title(),
            phase,
            s.character_name(agent)
        );
        let c = self
            .choose(
                s,
                "[r]etry, [s]kip the AI's part, or [t]ype it yourself?",
                &['r', 's', 't'],
            )
            .await?;
        Ok(match c {
            'r' => FailureChoice::Retry,
            's' => FailureChoice::Skip,
            _ => FailureChoice::TakeOver {
                text: self.text(s, "Type it:").await?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faces_parse() {
        assert_eq!(parse_faces("3 5"), Some(vec![3, 5]));
        assert_eq!(parse_faces("1,6"), Some(vec![1, 6]));
        assert_eq!(parse_faces("7"), None);
        assert_eq!(parse_faces(""), None);
        assert_eq!(parse_faces("two"), None);
    }
}
