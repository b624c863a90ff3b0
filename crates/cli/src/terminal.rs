//! The GM at the terminal: a prompt per decision, slash commands at every prompt.

use async_trait::async_trait;
use troupe_agents::{ActionDecl, GmView};
use troupe_engine::asks::gm_answer;
use troupe_engine::{
    Answers, FailureChoice, GmAsk, GmDecision, GmQuestion, GmReply, GmSeat, Phase, RollOverride,
    Ruling,
};
use troupe_rules::{RollResult, TaskType};
use troupe_seat::Answer;
use troupe_validator::Verdict;

use crate::commands::{self, Command, HELP};
use crate::info::gm_info;
use crate::keyboard::Keyboard;

pub struct TerminalGm {
    keyboard: Keyboard,
}

/// What one prompt produced: text, or a reply for the engine (a command or quit).
enum Input {
    Text(String),
    Engine(GmReply<()>),
}

impl TerminalGm {
    pub fn new(keyboard: Keyboard) -> Self {
        TerminalGm { keyboard }
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
                return Input::Engine(GmReply::Quit);
            };
            match commands::parse(&line) {
                None if line.trim().is_empty() && !allow_empty => continue,
                None => return Input::Text(line.trim().to_string()),
                Some(Err(msg)) => println!("{msg}"),
                Some(Ok(Command::Help)) => println!("{HELP}"),
                Some(Ok(Command::Info)) => println!("{}", gm_info(s)),
                Some(Ok(Command::Roll(e))) => return Input::Engine(GmReply::Roll(e)),
                Some(Ok(Command::Whisper { to, scope, text })) => {
                    if let Some(a) = &to
                        && !s.seated(a)
                    {
                        println!(
                            "No AI called {a} at this table. Agents: {}, or all.",
                            s.agent_ids().join(", ")
                        );
                        continue;
                    }
                    return Input::Engine(GmReply::Whisper { to, scope, text });
                }
                Some(Ok(Command::Mark(mark))) => return Input::Engine(GmReply::Mark(mark)),
                Some(Ok(Command::Success)) => return Input::Engine(GmReply::Force(true)),
                Some(Ok(Command::Fail)) => return Input::Engine(GmReply::Force(false)),
                Some(Ok(Command::Quit)) => return Input::Engine(GmReply::Quit),
            }
        }
    }

    /// Prompt for one of a few choices (first letters), re-asking on anything else.
    async fn choose(
        &mut self,
        s: &GmView,
        prompt: &str,
        choices: &[char],
    ) -> Result<char, GmReply<()>> {
        loop {
            match self.prompt(s, prompt).await {
                Input::Engine(r) => return Err(r),
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

    async fn text(&mut self, s: &GmView, prompt: &str) -> Result<String, GmReply<()>> {
        match self.prompt(s, prompt).await {
            Input::Text(t) => Ok(t),
            Input::Engine(r) => Err(r),
        }
    }
}

/// Hand an engine reply through with the right type.
fn pass<T>(r: GmReply<()>) -> GmReply<T> {
    match r {
        GmReply::Answer(()) | GmReply::Quit => GmReply::Quit,
        GmReply::Roll(e) => GmReply::Roll(e),
        GmReply::Force(b) => GmReply::Force(b),
        GmReply::Mark(m) => GmReply::Mark(m),
        GmReply::Whisper { to, scope, text } => GmReply::Whisper { to, scope, text },
        GmReply::Fail(why) => GmReply::Fail(why),
        GmReply::Handed => GmReply::Handed,
        GmReply::End(why) => GmReply::End(why),
    }
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(r) => return pass(r),
        }
    };
}

pub use troupe_engine::asks::{parse_faces, suggested};

#[async_trait]
impl GmSeat for TerminalGm {
    async fn decide(&mut self, question: &GmQuestion<'_>) -> Answer {
        if let Some(why) = question.error {
            println!("That answer does not fit: {why}");
        }
        let s = question.view;
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
        gm_answer(question.decision, reply)
    }
}

/// One prompt (or a few) per decision, in the game's words.
impl TerminalGm {
    async fn narrate(&mut self, s: &GmView) -> GmReply<String> {
        println!(
            "\n[Turn {}] Awaiting GM narration. (/help for commands)",
            s.turn
        );
        GmReply::Answer(tri!(self.text(s, "Enter narration:").await))
    }

    async fn answer_questions(
        &mut self,
        s: &GmView,
        round: u32,
        questions: &[(String, String)],
    ) -> GmReply<Answers> {
        println!(
            "\nQuestions for the GM (round {round}); answer each, or type 'finish' to end questions:"
        );
        let mut answers = Vec::new();
        for (i, (agent, q)) in questions.iter().enumerate() {
            println!("  Q{} ({}): {q}", i + 1, s.character_name(agent));
            let a = tri!(self.text(s, &format!("Answer {}:", i + 1)).await);
            if a.eq_ignore_ascii_case("finish") {
                return GmReply::Answer(Answers::Finish);
            }
            answers.push(a);
        }
        GmReply::Answer(Answers::Answered(answers))
    }

    async fn review_action(
        &mut self,
        s: &GmView,
        agent: &str,
        original: &str,
        corrected: &str,
        verdict: &Verdict,
    ) -> GmReply<String> {
        println!(
            "\n{} kept narrating results after 3 attempts.",
            s.character_name(agent)
        );
        println!("  Original:  {original}");
        for v in &verdict.violations {
            println!("  - \"{}\": {}", v.excerpt, v.reason);
        }
        println!("  Corrected: {corrected}");
        let c = tri!(
            self.choose(
                s,
                "Keep the [c]orrection, keep the [o]riginal, or [e]dit it?",
                &['c', 'o', 'e']
            )
            .await
        );
        GmReply::Answer(match c {
            'c' => corrected.to_string(),
            'o' => original.to_string(),
            _ => tri!(self.text(s, "Type the action as it should stand:").await),
        })
    }

    async fn adjudicate(
        &mut self,
        s: &GmView,
        agent: &str,
        action: &ActionDecl,
    ) -> GmReply<Ruling> {
        let name = s.character_name(agent);
        // The attempt is on the screen already (the story's line for it): only the suggestion.
        println!(
            "\n{name} suggests: {} roll{}{} — {}",
            action.task_type,
            if action.prepared { ", prepared" } else { "" },
            if action.expert { ", expert" } else { "" },
            action.justification
        );
        let c = tri!(self.choose(s, "Ruling: [a]ccept as suggested, roll [l]asers or [f]eelings, ask to [r]evise, or [n]o roll?", &['a', 'l', 'f', 'r', 'n']).await);
        GmReply::Answer(match c {
            'a' => suggested(action),
            'l' | 'f' => {
                let prepared = tri!(self.choose(s, "Prepared? [y/n]:", &['y', 'n']).await) == 'y';
                let expert = tri!(self.choose(s, "Expert? [y/n]:", &['y', 'n']).await) == 'y';
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
                note: tri!(self.text(s, &format!("What should {name} change?")).await),
            },
            _ => Ruling::NoRoll {
                note: tri!(self.text(s, "Why no roll? (a few words):").await),
            },
        })
    }

    async fn override_roll(
        &mut self,
        s: &GmView,
        agent: &str,
        _roll: &RollResult,
    ) -> GmReply<RollOverride> {
        // The roll itself is on the screen already (the story's line for it).
        let prompt = format!("Override {}'s roll? [y/n]:", s.character_name(agent));
        if tri!(self.choose(s, &prompt, &['y', 'n']).await) == 'n' {
            return GmReply::Answer(RollOverride::Keep);
        }
        loop {
            let t = tri!(
                self.text(s, "New faces (e.g. 3 5), or 'success' / 'fail':")
                    .await
            );
            match t.to_ascii_lowercase().as_str() {
                "success" => return GmReply::Answer(RollOverride::Success),
                "fail" | "failure" => return GmReply::Answer(RollOverride::Failure),
                _ => match parse_faces(&t) {
                    Some(faces) => return GmReply::Answer(RollOverride::Faces { faces }),
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
    ) -> GmReply<String> {
        // The question is on the screen already (the story's LASER FEELINGS line).
        let prompt = format!("Answer {} honestly:", s.character_name(agent));
        GmReply::Answer(tri!(self.text(s, &prompt).await))
    }

    async fn narrate_outcome(&mut self, s: &GmView) -> GmReply<String> {
        // The rolls are on the screen already, each once (the story's lines for them).
        GmReply::Answer(tri!(self.text(s, "\nNarrate the outcome:").await))
    }

    async fn interject(&mut self, s: &GmView, round: u32) -> GmReply<Option<String>> {
        match self
            .ask(
                s,
                &format!("[OOC] No agreement after round {round}. Say something to the players (Enter to let them talk):"),
                true,
            )
            .await
        {
            Input::Text(t) if t.trim().is_empty() => GmReply::Answer(None),
            Input::Text(t) => GmReply::Answer(Some(t)),
            Input::Engine(r) => pass(r),
        }
    }

    async fn resolve_failure(
        &mut self,
        s: &GmView,
        phase: Phase,
        agent: &str,
        error: &str,
    ) -> GmReply<FailureChoice> {
        println!(
            "\n{} ({}) failed twice for {}: {error}",
            phase.title(),
            phase,
            s.character_name(agent)
        );
        let c = tri!(
            self.choose(
                s,
                "[r]etry, [s]kip the AI's part, or [t]ype it yourself?",
                &['r', 's', 't']
            )
            .await
        );
        GmReply::Answer(match c {
            'r' => FailureChoice::Retry,
            's' => FailureChoice::Skip,
            _ => FailureChoice::TakeOver {
                text: tri!(self.text(s, "Type it:").await),
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
