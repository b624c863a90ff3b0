//! The encounter loop at the terminal: what comes next is the fold's to say ([`State::next`]);
//! this brings the model's replies, the people's words and the dice, commits every step's
//! events to `campaign.db` before they are shown, and stops saved when asked or when the input
//! ends. A killed run resumes where its log stops.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::Value;
use troupe_encounter::budget::Role;
use troupe_encounter::log::{
    EncounterEvent, Envelope, ModelCall, Next, Phase, SeatKind, State, fold,
};
use troupe_encounter::prompt::{gm_messages, gm_schema, player_messages, player_schema};
use troupe_encounter::tools::CheckCall;
use troupe_encounter::turn::{GmStep, gm_reply, player_reply};
use troupe_engine::EncounterStore;
use troupe_llm::{CallTag, ChatRequest, Gateway, Message, ResponseSchema};
use troupe_rules::d20::{D20Check, roll_d20};

use super::files;
use crate::keyboard::Keyboard;

/// How often a person is asked again for a line that is not one (an empty action, a roll typed
/// as something else) before the table moves on without it.
pub const PERSON_ATTEMPTS: u32 = 3;
/// How many table commands a person may type in one prompt before the table moves on.
const PERSON_COMMANDS: u32 = 20;

const ENCOUNTER_HELP: &str = "Say what your character attempts (\"I offer to work the \
bellows\"): the GM decides what happens. Commands: /info (your character, the place, who is \
here, the story lately), /whisper TEXT (a word to the GM alone), /help (this), /quit (stop; \
`troupe encounter resume` continues). When the GM asks for a roll: Enter or /roll.";

pub struct Runner {
    pub dir: PathBuf,
    pub store: EncounterStore,
    pub run: u32,
    pub events: Vec<Envelope>,
    pub state: State,
    pub gateway: Gateway,
    pub model_name: String,
    pub keyboard: Keyboard,
    /// Stop (saved) before this round of player actions begins.
    pub max_rounds: Option<u32>,
}

/// Why the loop stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    Resolved,
    Rounds(u32),
    /// A person typed /quit or the input ended.
    Quit,
}

impl Runner {
    pub fn from_log(
        dir: PathBuf,
        store: EncounterStore,
        run: u32,
        model: std::sync::Arc<dyn troupe_llm::ChatModel>,
        max_rounds: Option<u32>,
    ) -> anyhow::Result<Runner> {
        let events = store.events(run)?;
        let state = fold(&events).context("the run's log does not start an encounter")?;
        Ok(Runner {
            dir,
            store,
            run,
            events,
            state,
            model_name: model.name(),
            gateway: Gateway::new(model, crate::play::retry_policy(), crate::play::sleeper()),
            keyboard: Keyboard::new(),
            max_rounds,
        })
    }

    /// Commit events (one transaction), then fold them in and show them.
    fn record(&mut self, new: Vec<EncounterEvent>) -> anyhow::Result<()> {
        let mut next = self.events.last().map_or(0, |e| e.seq + 1);
        let envs: Vec<Envelope> = new
            .into_iter()
            .map(|event| {
                let env = Envelope { seq: next, event };
                next += 1;
                env
            })
            .collect();
        self.store.append(self.run, &envs, 0)?;
        for env in envs {
            self.state.apply(&env);
            show(&self.state, &env.event);
            self.events.push(env);
        }
        self.maybe_pause();
        Ok(())
    }

    /// For the crash tests: once the log holds `TROUPE_PAUSE_AFTER_EVENT` events, say so and
    /// wait to be killed.
    fn maybe_pause(&self) {
        let Some(n) = std::env::var("TROUPE_PAUSE_AFTER_EVENT")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        else {
            return;
        };
        if self.events.len() >= n {
            eprintln!("troupe: paused after {} events", self.events.len());
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }

    pub async fn play(&mut self) -> anyhow::Result<Stop> {
        loop {
            match self.state.next() {
                Next::Done => {
                    self.finish()?;
                    return Ok(Stop::Resolved);
                }
                Next::Open | Next::Gm => self.gm_turn().await?,
                Next::Roll(check) => {
                    if !self.roll(check).await? {
                        return Ok(Stop::Quit);
                    }
                }
                Next::Act(seat) => {
                    let new_round = seat == 0;
                    if new_round && self.max_rounds.is_some_and(|m| self.state.round >= m) {
                        return Ok(Stop::Rounds(self.state.round));
                    }
                    if !self.act(seat).await? {
                        return Ok(Stop::Quit);
                    }
                }
            }
        }
    }

    /// After the resolution: the summary file and the NPCs' memory (both safe to redo).
    fn finish(&self) -> anyhow::Result<()> {
        let Some(Envelope {
            event: EncounterEvent::Resolved { file, at, .. },
            ..
        }) = self
            .events
            .iter()
            .rev()
            .find(|e| matches!(e.event, EncounterEvent::Resolved { .. }))
        else {
            return Ok(());
        };
        files::write_summary(&self.dir, file, &self.state, at)?;
        files::remember(&self.dir, &self.state, self.run, at)
    }

    async fn gm_turn(&mut self) -> anyhow::Result<()> {
        let assembled = gm_messages(&self.state)?;
        let messages = assembled
            .messages
            .iter()
            .map(|(role, text)| message(*role, text))
            .collect();
        let mut req = ChatRequest::new(CallTag::new("gm", "encounter_gm"), messages);
        req.schema = Some(ResponseSchema {
            name: "encounter_gm_reply".to_string(),
            schema: gm_schema(&self.state),
        });
        req.max_tokens = 700;
        req.seed = Some(troupe_rules::roll_seed(
            self.state.seed,
            u64::MAX - self.state.seq,
        ));
        let (called, refused) = self.call(req, "gm").await;
        let mut events: Vec<EncounterEvent> = refused
            .into_iter()
            .map(|(reply, problems)| EncounterEvent::GmRejected {
                problems,
                reply: Some(reply),
            })
            .collect();
        let (call, json) = match called {
            Ok(c) => c,
            Err(e) => {
                // The shapes the gateway refused are kept: they were model replies.
                let refused = events.len();
                self.record(events)?;
                if refused > 0 {
                    bail!("{e} (the GM's last {refused} replies did not fit the reply schema)");
                }
                return Err(e);
            }
        };
        let now = now();
        events.push(EncounterEvent::GmCalled {
            call,
            zones: assembled.zones,
            trimmed: assembled.trimmed,
        });
        match gm_reply(&self.state, &json, &now) {
            GmStep::Events(more) => {
                events.extend(more);
                self.record(events)
            }
            GmStep::Failed(problems) => {
                events.push(EncounterEvent::GmRejected {
                    problems: problems.clone(),
                    reply: None,
                });
                self.record(events)?;
                bail!(
                    "the GM's reply failed its checks {} times in a row ({}); the run is saved: \
                     `troupe encounter resume` asks again",
                    troupe_encounter::log::GM_ATTEMPTS,
                    problems.join("; ")
                )
            }
        }
    }

    /// One model call through the gateway: the call as the log keeps it (or why it failed),
    /// and each reply the gateway refused for its shape, with the problems, in order.
    async fn call(
        &self,
        req: ChatRequest,
        agent: &str,
    ) -> (
        anyhow::Result<(ModelCall, Value)>,
        Vec<(String, Vec<String>)>,
    ) {
        let started = Instant::now();
        let mut refused = Vec::new();
        let mut attempts = Vec::new();
        let result = self
            .gateway
            .call(&req, &mut |a| {
                if let (Some(reply), Some(error)) = (&a.reply, &a.error) {
                    refused.push((reply.clone(), vec![error.clone()]));
                }
                attempts.push(serde_json::to_value(&a).unwrap_or(Value::Null));
            })
            .await;
        let reply = match result {
            Ok(r) => r,
            Err(e) => {
                let e = anyhow::anyhow!("the model failed ({agent}): {e}; the run is saved");
                return (Err(e), refused);
            }
        };
        let json = reply
            .json
            .clone()
            .or_else(|| serde_json::from_str(&reply.content).ok())
            .unwrap_or(Value::Null);
        let call = ModelCall {
            agent: agent.to_string(),
            purpose: req.tag.purpose.clone(),
            model: self.model_name.clone(),
            reply: reply.content,
            json: json.clone(),
            tokens_in: u64::from(reply.usage.input_tokens),
            tokens_out: u64::from(reply.usage.output_tokens),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            attempts,
        };
        (Ok((call, json)), refused)
    }

    /// One seat's action; false when a person quit.
    async fn act(&mut self, index: usize) -> anyhow::Result<bool> {
        let Some(seat) = self.state.seats.get(index).cloned() else {
            bail!("no seat {index} at this table");
        };
        match seat.kind {
            SeatKind::Ai => {
                let messages = player_messages(&self.state, index)?
                    .iter()
                    .map(|(role, text)| message(*role, text))
                    .collect();
                let mut req =
                    ChatRequest::new(CallTag::new(seat.id.clone(), "encounter_action"), messages);
                req.schema = Some(ResponseSchema {
                    name: "encounter_action".to_string(),
                    schema: player_schema(),
                });
                req.max_tokens = 200;
                // A player's reply refused for its shape is repaired by the gateway; only the
                // final one is the player's action.
                let (call, json) = self.call(req, &seat.id).await.0?;
                let reply = player_reply(&self.state, &seat.id, &json);
                self.record(vec![EncounterEvent::PlayerCalled { call }, reply])?;
                Ok(true)
            }
            SeatKind::Person => {
                let Some(text) = self.person_action(&seat).await? else {
                    return Ok(false);
                };
                let text = if text.is_empty() {
                    "(waits)".to_string()
                } else {
                    text
                };
                self.record(vec![EncounterEvent::PlayerActed {
                    seat: seat.id,
                    text,
                }])?;
                Ok(true)
            }
        }
    }

    /// Someone takes a seat at the running table (`troupe encounter resume --join`).
    pub fn join(&mut self, seat: troupe_encounter::log::Seat) -> anyhow::Result<()> {
        self.record(vec![EncounterEvent::SeatJoined { seat }])
    }

    /// A person's action: table commands (`/help`, `/info`, `/whisper`) are answered and the
    /// question asked again; an action that says what happens is explained, and the person
    /// rephrases it or sends it as it is for the GM to rule on (never rewritten for them).
    /// None when they quit or the input ended.
    async fn person_action(
        &mut self,
        seat: &troupe_encounter::log::Seat,
    ) -> anyhow::Result<Option<String>> {
        let prompt = format!("{}, what do you attempt?", who(seat));
        for _ in 0..PERSON_COMMANDS {
            let Some(line) = self.person_line(&prompt, false).await else {
                return Ok(None);
            };
            if line.starts_with('/') {
                self.table_command(seat, &line)?;
                continue;
            }
            let verdict = troupe_validator::check(&line);
            if !verdict.flagged {
                return Ok(Some(line));
            }
            let feedback = troupe_validator::feedback(&verdict);
            println!("({feedback})");
            let again = "Rephrase it, or press Enter to send it as it is for the GM to rule on: ";
            let Some(rephrased) = self.keyboard.line(again).await else {
                return Ok(None);
            };
            self.record(vec![EncounterEvent::ActionSentBack {
                seat: seat.id.clone(),
                text: line.clone(),
                feedback,
            }])?;
            let rephrased = rephrased.trim();
            return Ok(Some(if rephrased.is_empty() {
                line
            } else {
                rephrased.to_string()
            }));
        }
        Ok(Some(String::new()))
    }

    /// `/help`, `/info`, `/whisper TEXT` at an encounter (`/quit` is read by the caller).
    fn table_command(
        &mut self,
        seat: &troupe_encounter::log::Seat,
        line: &str,
    ) -> anyhow::Result<()> {
        let (command, rest) = line.split_once(' ').unwrap_or((line, ""));
        match command {
            "/help" => println!("{ENCOUNTER_HELP}"),
            "/info" => {
                let info = troupe_encounter::view::seat_info(&self.state, &seat.id);
                println!("{}", info.unwrap_or_default());
            }
            "/whisper" if !rest.trim().is_empty() => {
                self.record(vec![EncounterEvent::Whispered {
                    seat: seat.id.clone(),
                    text: rest.trim().to_string(),
                }])?;
                println!("(whispered to the GM)");
            }
            "/whisper" => println!("(usage: /whisper TEXT: a word to the GM alone)"),
            other => println!("(no command {other} here; /help lists them)"),
        }
        Ok(())
    }

    /// A line from a person: None when they quit or the input ended. With `roll`, Enter and
    /// `/roll` are the answer; otherwise an empty line is asked again.
    async fn person_line(&self, prompt: &str, roll: bool) -> Option<String> {
        for _ in 0..PERSON_ATTEMPTS {
            let line = self.keyboard.line(prompt).await?;
            let line = line.trim().to_string();
            if line == "/quit" {
                return None;
            }
            if roll {
                if line.is_empty() || line == "/roll" {
                    return Some(line);
                }
                println!("(press Enter or type /roll to roll)");
            } else if !line.is_empty() {
                return Some(line);
            }
        }
        Some(String::new())
    }

    /// Roll the pending check: a person rolls with Enter or `/roll` (after a few other lines it
    /// is rolled for them); an AI player's is rolled for it. False when a person quit.
    async fn roll(&mut self, check: CheckCall) -> anyhow::Result<bool> {
        let Some(seat) = self.state.seat(&check.player).cloned() else {
            bail!(
                "the check is for {}, who is not at this table",
                check.player
            );
        };
        if seat.kind == SeatKind::Person {
            let prompt = format!(
                "{}, roll a d20{}: {} [Enter or /roll]",
                who(&seat),
                edge_words(&check),
                check.what,
            );
            if self.person_line(&prompt, true).await.is_none() {
                return Ok(false);
            }
        }
        let d20 = D20Check {
            dc: check.dc,
            modifier: check.modifier,
            edge: check.edge,
        };
        let roll = roll_d20(
            &d20,
            troupe_rules::roll_seed(self.state.seed, self.state.rolls),
        );
        self.record(vec![EncounterEvent::CheckRolled {
            seat: seat.id,
            roll,
        }])?;
        Ok(true)
    }
}

/// A person's name at the prompt, with their character's when it is another.
fn who(seat: &troupe_encounter::log::Seat) -> String {
    if seat.player == seat.character {
        seat.player.clone()
    } else {
        format!("{} ({})", seat.player, seat.character)
    }
}

fn edge_words(check: &CheckCall) -> &'static str {
    match check.edge {
        troupe_rules::Edge::Advantage => " with advantage",
        troupe_rules::Edge::Disadvantage => " with disadvantage",
        troupe_rules::Edge::Normal => "",
    }
}

fn message(role: Role, text: &str) -> Message {
    match role {
        Role::System => Message::system(text),
        Role::User => Message::user(text),
        Role::Assistant => Message::assistant(text),
    }
}

/// Now, ISO 8601 in UTC to the second.
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Show what the players see of an event (the GM's calls, rejections and caught leaks are not
/// for them: they are in the log).
pub fn show(state: &State, event: &EncounterEvent) {
    if let Some(line) = shown(state, event) {
        println!("{line}");
    }
}

pub fn shown(state: &State, event: &EncounterEvent) -> Option<String> {
    let name = |id: &str| {
        state
            .seat(id)
            .map_or(id.to_string(), |s| s.character.clone())
    };
    match event {
        EncounterEvent::Narrated { text, .. } => Some(format!("\nGM: {text}\n")),
        EncounterEvent::PlayerActed { seat, text } => {
            let ai = state.seat(seat).is_some_and(|s| s.kind == SeatKind::Ai);
            ai.then(|| format!("{}: {text}", name(seat)))
        }
        EncounterEvent::CheckEmitted { check } => Some(format!(
            "[the GM asks {} for a d20 roll: {}{}]",
            name(&check.player),
            check.what,
            edge_words(check)
        )),
        EncounterEvent::CheckRolled { seat, roll } => {
            let dice: Vec<String> = roll.dice.iter().map(u32::to_string).collect();
            Some(format!(
                "{} rolls d20 [{}] → {}: {}",
                name(seat),
                dice.join(", "),
                roll.total,
                if roll.success { "success" } else { "failure" }
            ))
        }
        EncounterEvent::SceneActed {
            outcome, applied, ..
        } => applied.then(|| outcome.clone()),
        EncounterEvent::Resolved { summary, .. } if state.phase == Phase::Resolved => {
            Some(format!("\n== The encounter is over. {summary}"))
        }
        _ => None,
    }
}
