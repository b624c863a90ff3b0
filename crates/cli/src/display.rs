//! The story as it happens, in the terminal; a spinner while an AI thinks.

use troupe_agents::Purpose;
use troupe_engine::visibility::describe_roll;
use troupe_engine::{
    Envelope, Event, Observer, Phase, RollOverride, Ruling, Session, VerdictResult,
};

use crate::info::{character_name, player_name};
use crate::spinner::Spinner;

pub struct Story {
    /// Echo the GM's own inputs (when they come from a script, nobody typed them).
    pub echo_gm: bool,
    spinner: Spinner,
    /// Who is thinking right now (a round of calls runs at once).
    thinkers: Vec<String>,
    /// Tokens each thinker's reply has so far, as it streams.
    tokens: std::collections::BTreeMap<String, u32>,
}

impl Story {
    pub fn new(echo_gm: bool) -> Self {
        Story {
            echo_gm,
            spinner: Spinner::new(),
            thinkers: Vec::new(),
            tokens: std::collections::BTreeMap::new(),
        }
    }
}

fn what(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::ClarifyingQuestions => "considering questions for the GM",
        Purpose::StrategicIntent => "thinking about strategy",
        Purpose::CharacterAction => "deciding what to attempt",
        Purpose::InsightQuestion => "choosing a LASER FEELINGS question",
        Purpose::InsightDecision => "weighing the insight",
        Purpose::CharacterReaction => "reacting",
        Purpose::OocDiscussion => "talking it over with the party",
        Purpose::ForcedVote => "voting",
        Purpose::PartyDirective => "directing their character under the party's plan",
    }
}

impl Story {
    /// Before a resumed session goes on: where it stopped (its state), and the events of the
    /// interrupted turn so far.
    pub fn recap(&mut self, s: &Session, last_turn: &[Envelope]) {
        let from = last_turn
            .iter()
            .rposition(|e| matches!(e.event, Event::TurnStarted))
            .unwrap_or(0);
        println!(
            "== Resuming {} — session {} ==",
            s.campaign.as_ref().map(|c| c.name.as_str()).unwrap_or(""),
            s.number
        );
        let echo = self.echo_gm;
        self.echo_gm = true;
        for e in last_turn.get(from..).unwrap_or_default() {
            self.on_event(e, s);
        }
        self.echo_gm = echo;
    }
}

impl Observer for Story {
    /// The spinner says who is thinking and what about ("Zara is reacting… 143 tokens"); the
    /// count is of every thinker's tokens so far.
    fn thinking(&mut self, agent: &str, purpose: Purpose) {
        self.thinkers.push(agent.to_string());
        let message = match self.thinkers.as_slice() {
            [one] => format!("{one} is {}…", what(purpose)),
            many => format!("{} are {}…", many.join(", "), what(purpose)),
        };
        self.spinner.start(message);
    }

    fn paused(&mut self, events: u64) {
        // The crash tests wait for this line, then kill the process.
        eprintln!(
            "troupe: paused after {events} events (TROUPE_PAUSE_AFTER_EVENT or _BEFORE_COMMIT)"
        );
    }

    fn progress(&mut self, agent: &str, _purpose: Purpose, progress: &troupe_llm::Progress) {
        self.tokens.insert(agent.to_string(), progress.tokens);
        self.spinner.tokens(self.tokens.values().sum());
    }

    fn idle(&mut self) {
        self.thinkers.clear();
        self.tokens.clear();
        self.spinner.stop();
    }

    fn on_event(&mut self, env: &Envelope, s: &Session) {
        let ch = |a: &str| character_name(s, a);
        let line = match &env.event {
            Event::SessionStarted { model, seed, .. } => {
                let c = s.campaign.as_ref();
                let mut out = format!(
                    "== {} — session {} ==\nModel: {model}   Dice seed: {seed}\n",
                    c.map(|c| c.name.as_str()).unwrap_or(""),
                    s.number
                );
                for seat in s.seats() {
                    out.push_str(&format!(
                        "  {} plays {} ({} {}, number {})\n",
                        seat.player.name,
                        seat.character.name,
                        seat.character.style,
                        seat.character.role,
                        seat.character.number.get()
                    ));
                }
                out
            }
            Event::TurnStarted => format!("\n──── Turn {} ────", env.turn_number),
            Event::SceneEnded { .. } | Event::TimePassed { .. } => env
                .event
                .story_mark_line(s.day())
                .map(|l| format!("── {l} ──"))
                .unwrap_or_default(),
            Event::GmNarration { text } if self.echo_gm => format!("GM: {text}"),
            Event::MemoryRetrieved {
                agent,
                status,
                results,
                ..
            } => {
                let mut out = format!("  (memory, {}: {status})", ch(agent));
                for r in results {
                    out.push_str(&format!("\n    · {r}"));
                }
                out
            }
            Event::ClarifyingQuestions {
                agent, questions, ..
            } => questions
                .iter()
                .map(|q| format!("{} (OOC) asks: {q}", player_name(s, agent)))
                .collect::<Vec<_>>()
                .join("\n"),
            Event::GmAnswers {
                answers, finished, ..
            } if self.echo_gm => {
                if *finished {
                    "GM: (no more questions)".into()
                } else {
                    answers
                        .iter()
                        .map(|a| format!("GM answers: {a}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                }
            }
            Event::StrategicIntent { agent, intent } => {
                let mut out = format!(
                    "{} (OOC, strategy): {}",
                    player_name(s, agent),
                    intent.strategy
                );
                if let Some(p) = &intent.proposal {
                    out.push_str(&format!("\n[OOC] {} proposes: {p}", player_name(s, agent)));
                }
                out
            }
            Event::Directive { agent, text, .. } => {
                format!(
                    "{} → {} (directive): {text}",
                    player_name(s, agent),
                    ch(agent)
                )
            }
            Event::CharacterAction {
                agent,
                attempt,
                action,
            } => {
                let mut out = format!("{} (attempt {attempt}): {}", ch(agent), action.action);
                if !action.dialogue.trim().is_empty() {
                    out.push_str(&format!(
                        " \"{}\"",
                        action.dialogue.trim().trim_matches('"')
                    ));
                }
                out
            }
            Event::Validation {
                verdict,
                result,
                corrected,
                ..
            } => match result {
                VerdictResult::Passed => "  ✓ states intent only".into(),
                VerdictResult::Retry => format!(
                    "  ✗ narrates a result ({}) — asking again, more strictly",
                    excerpts(verdict)
                ),
                VerdictResult::AutoCorrected => format!(
                    "  ✗ still narrates a result ({}) — auto-corrected to: {}",
                    excerpts(verdict),
                    corrected.clone().unwrap_or_default()
                ),
                VerdictResult::FlaggedForGm => format!(
                    "  ✗ still narrates a result ({}) — flagged for the GM",
                    excerpts(verdict)
                ),
            },
            Event::GmReviewedAction { agent, action } if self.echo_gm => {
                format!("GM keeps {}'s action as: {action}", ch(agent))
            }
            Event::GmAdjudication { agent, ruling } if self.echo_gm => match ruling {
                Ruling::Roll {
                    task,
                    prepared,
                    expert,
                } => format!(
                    "GM: {} rolls {task}{}{}",
                    ch(agent),
                    if *prepared { ", prepared" } else { "" },
                    if *expert { ", expert" } else { "" }
                ),
                Ruling::Revise { note } => format!("GM asks {} to revise: {note}", ch(agent)),
                Ruling::NoRoll { note } => format!("GM: no roll needed — {note}"),
            },
            Event::DiceRolled {
                agent,
                result,
                helping,
                ..
            } => match helping {
                Some(t) => format!("  {} helps {}: {}", ch(agent), ch(t), describe_roll(result)),
                None => format!("  Dice for {}: {}", ch(agent), describe_roll(result)),
            },
            Event::GmRollOverride { change, result, .. } if *change != RollOverride::Keep => {
                format!("  GM overrides the roll: {}", describe_roll(result))
            }
            Event::GmForcedResult { success } => format!(
                "  GM decides the next roll {}",
                if *success { "succeeds" } else { "fails" }
            ),
            Event::GmRoll {
                expression,
                faces,
                total,
                ..
            } => {
                format!("  /roll {expression}: {faces:?} = {total}")
            }
            Event::LaserFeelingsQuestion { agent, question } => {
                format!("{} (LASER FEELINGS) asks: {question}", ch(agent))
            }
            Event::LaserFeelingsAnswer { answer, .. } if self.echo_gm => format!("GM: {answer}"),
            Event::InsightDecision { agent, decision } => format!(
                "{} {} the action: {}",
                player_name(s, agent),
                if decision.change_action {
                    "changes"
                } else {
                    "keeps"
                },
                decision.reason
            ),
            Event::GmOutcome { text } if self.echo_gm => format!("GM: {text}"),
            Event::CharacterReaction { agent, text } => format!("{}: {text}", ch(agent)),
            Event::MemoryStorage {
                status, extraction, ..
            } => match extraction {
                Some(x) if x != "model" => format!("  (memory: {status}; facts extraction: {x})"),
                _ => format!("  (memory: {status})"),
            },
            Event::PhaseFailed {
                agent,
                error,
                failures,
            } => format!(
                "  ! {} failed for {} ({error}){}",
                env.phase.map(|p| p.title()).unwrap_or("phase"),
                // The player layer's phases name the player; the rest, its character.
                match env.phase {
                    Some(
                        Phase::Clarification
                        | Phase::StrategicIntent
                        | Phase::Discussion
                        | Phase::Directive,
                    ) => player_name(s, agent),
                    _ => ch(agent),
                },
                if *failures < troupe_engine::FAILURES_BEFORE_GM {
                    " — rolled back, retrying once"
                } else {
                    " — rolled back; the GM decides"
                }
            ),
            Event::ModelCall { record, .. } => match (&record.error, record.retry_in_ms) {
                _ if record.fell_back_to.is_some() => format!(
                    "  note: the model server refused {} output; asking for {} (the schema in the prompt) for the rest of the session",
                    record
                        .structured_output
                        .map_or("structured", |s| s.as_str()),
                    record.fell_back_to.map_or("", |s| s.as_str()),
                ),
                (Some(e), Some(ms)) => format!(
                    "  model call failed (attempt {}): {e}; retrying in {:.0} s",
                    record.attempt,
                    ms as f64 / 1000.0
                ),
                _ => String::new(),
            },
            Event::Whisper { to, scope, text } if self.echo_gm => format!(
                "GM whispers to {} ({}): {text}",
                to.as_deref()
                    .map(|a| player_name(s, a))
                    .unwrap_or("the table".into()),
                scope.as_str().replace('_', "-")
            ),
            Event::OocMessage {
                agent,
                round,
                message,
                stance,
                on,
                proposal,
                ..
            } => {
                let about = on
                    .as_deref()
                    .map(|o| format!(" with {}", player_name(s, o)))
                    .unwrap_or_default();
                let mut out = format!(
                    "[OOC r{round}] {} ({}{about}): {message}",
                    player_name(s, agent),
                    stance.as_str()
                );
                if let Some(p) = proposal {
                    out.push_str(&format!("\n           proposes: {p}"));
                }
                out
            }
            Event::GmOoc { text, .. } if self.echo_gm && !text.trim().is_empty() => {
                format!("[OOC] GM: {text}")
            }
            Event::VoteCast { agent, vote, .. } => {
                format!(
                    "[OOC vote] {} votes for {}'s plan",
                    player_name(s, agent),
                    player_name(s, vote)
                )
            }
            Event::DiscussionStalled { .. } => {
                "[OOC] the last round changed no one's stance: the party votes".to_string()
            }
            Event::DiscussionTimedOut { elapsed_ms, .. } => format!(
                "[OOC] time is up ({:.0} s): the party votes",
                *elapsed_ms as f64 / 1000.0
            ),
            Event::Consensus {
                round,
                outcome,
                plan,
                proposer,
                dissent,
                ..
            } => {
                let who = |v: &[String]| {
                    v.iter()
                        .map(|a| player_name(s, a))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                match (outcome, plan, proposer) {
                    (troupe_agents::Outcome::Conflicted, _, _) => {
                        format!("[OOC] after round {round}: no agreement yet")
                    }
                    (o, Some(plan), Some(p)) => {
                        let mut out = format!(
                            "[OOC] consensus ({}): {}'s plan — {plan}",
                            o.as_str(),
                            player_name(s, p)
                        );
                        if !dissent.is_empty() {
                            out.push_str(&format!(" (not with it: {})", who(dissent)));
                        }
                        if *o == troupe_agents::Outcome::Vote {
                            for a in dissent {
                                if let Some((_, Some(r))) = s.turn.votes.get(a) {
                                    out.push_str(&format!("\n[OOC] {}: {r}", player_name(s, a)));
                                }
                            }
                        }
                        out
                    }
                    _ => "[OOC] no plan was put forward: each player follows their own".into(),
                }
            }
            Event::SessionEnded { reason } => format!("\nSession ended: {reason}."),
            _ => String::new(),
        };
        if !line.is_empty() {
            self.spinner.println(&line);
        }
    }
}

fn excerpts(v: &troupe_validator::Verdict) -> String {
    v.violations
        .iter()
        .map(|x| format!("\"{}\"", x.excerpt))
        .collect::<Vec<_>>()
        .join(", ")
}
