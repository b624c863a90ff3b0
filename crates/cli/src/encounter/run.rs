//! The encounter at the terminal: the people's seats read from the keyboard, the table's lines
//! printed as they are committed. The loop itself is the engine's
//! ([`troupe_encounter::table::EncounterTable`]).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use troupe_encounter::log::{EncounterEvent, Envelope, State};
use troupe_encounter::table::EncounterStore;
use troupe_encounter::table::asks::{ACTION, ACTION_AGAIN, GM, ROLL, WHISPER};
use troupe_encounter::table::{EncounterTable, Stop, outcome, shown};
use troupe_engine::{CallWatch, Prompts, Watch};
use troupe_llm::Gateway;
use troupe_seat::{Answer, Ask, Seat, check, command_in};

use crate::keyboard::Keyboard;
use crate::spinner::Thinking;

/// How often a person is asked again for a line that is not one (an empty action, a roll typed
/// as something else) before the table moves on without it.
pub const PERSON_ATTEMPTS: u32 = 3;

/// What `/help` says at the terminal; `{resume}` is the exact command that continues.
const ENCOUNTER_HELP: &str = "Say what your character attempts (\"I offer to work the \
bellows\"): the GM decides what happens. Commands: /info (your character, the place, who is \
here, the story lately), /whisper TEXT (a word to the GM alone), /help (this), /quit (stop; \
{resume} continues). When the GM asks for a roll: Enter or /roll.";

/// Open a run at this terminal: people at the keyboard, the table's lines on the screen, the
/// crash tests' pause from the environment; the GM and AI players on `model` with the
/// campaign's `prompts`.
pub fn open(
    dir: &Path,
    store: EncounterStore,
    run: u32,
    (model, prompts): (Arc<dyn troupe_llm::ChatModel>, Prompts),
    max_rounds: Option<u32>,
) -> anyhow::Result<EncounterTable<Terminal>> {
    let gateway = Gateway::new(model, crate::play::retry_policy(), crate::play::sleeper());
    let resume = crate::sessions::command(dir, "troupe encounter resume");
    let (people, watch) = (Terminal::new(resume), Box::new(printed()));
    let mut table = EncounterTable::open(store, run, gateway, prompts, people, watch)?;
    table.stop_before_round(max_rounds);
    table.pause_at(troupe_engine::pause::CrashPause::from_env());
    Ok(table)
}

fn printed() -> Printed {
    Printed(Thinking::naming(&[(GM, "The GM")]))
}

/// Play the run until it stops; a resolved run's summary and the NPCs' memories are written
/// (both safe to redo).
pub async fn play(
    dir: &Path,
    table: &mut EncounterTable<impl Seat>,
    memory_url: Option<&str>,
) -> anyhow::Result<Stop> {
    let stop = table.play().await?;
    if stop == Stop::Resolved {
        finish(dir, table.state(), table.events(), table.run(), memory_url)?;
    }
    Ok(stop)
}

/// After the resolution: the summary file and the NPCs' memory.
pub fn finish(
    dir: &Path,
    state: &State,
    events: &[Envelope],
    run: u32,
    memory_url: Option<&str>,
) -> anyhow::Result<()> {
    let Some(EncounterEvent::Resolved { file, at, .. }) = events
        .iter()
        .rev()
        .map(|e| &e.event)
        .find(|e| matches!(e, EncounterEvent::Resolved { .. }))
    else {
        return Ok(());
    };
    outcome::write_summary(dir, file, state, at)?;
    outcome::remember(&mut super::memory(dir, memory_url)?, state, run, at)?;
    Ok(())
}

/// Prints what the players see of each event; the spinner while a model works, each seat
/// named by its player as the last event's state has them.
struct Printed(Thinking);

impl Watch<State, Envelope> for Printed {
    fn on_event(&mut self, state: &State, env: &Envelope) {
        for s in &state.seats {
            self.0.names.insert(s.id.clone(), s.player.clone());
        }
        if let Some(line) = shown(state, &env.event, false) {
            self.0.println(&line);
        }
    }

    fn paused(&mut self, events: u64) {
        troupe_engine::pause::announce(events);
    }
}

impl CallWatch for Printed {
    fn thinking(&mut self, seat: &str, doing: &str) {
        self.0.thinking(seat, doing);
    }
    fn progress(&mut self, seat: &str, progress: &troupe_llm::Progress) {
        self.0.progress(seat, progress);
    }
    fn idle(&mut self) {
        self.0.idle();
    }
}

/// Everyone who plays at this keyboard: answers a person's asks from typed lines. `/help` and
/// `/info` are answered here; `/whisper` and the action go to the table; `/quit` and the end of
/// input leave.
pub struct Terminal {
    keyboard: Keyboard,
    /// The command that continues this run, as `/help` names it.
    resume: String,
}

impl Terminal {
    pub fn new(resume: String) -> Self {
        Terminal {
            keyboard: Keyboard::new(),
            resume,
        }
    }

    async fn action(&self, ask: &Ask) -> Answer {
        let again = ask.decision == ACTION_AGAIN;
        if again && let Some(feedback) = &ask.error {
            println!("({feedback})");
        }
        let mut empty = 0;
        loop {
            let Some(line) = self.keyboard.line(&ask.prompt).await else {
                return Answer::Leave;
            };
            let line = line.trim();
            match line {
                "/quit" => return Answer::Leave,
                "/help" => println!("{}", ENCOUNTER_HELP.replace("{resume}", &self.resume)),
                "/info" => println!("{}", info(ask)),
                // The ask's commands (a whisper to the GM), read as every surface reads them.
                typed if let Some(command) = command_in(ask, typed) => {
                    match command.and_then(|answer| check(ask, &answer).map(|()| answer)) {
                        Ok(answer) => {
                            if matches!(&answer, Answer::Command { name, .. } if name == WHISPER) {
                                println!("(whispered to the GM)");
                            }
                            return answer;
                        }
                        Err(e) => println!("({e})"),
                    }
                }
                // Enter sends a sent-back action as it was; an empty first answer is asked again.
                "" if !again && empty + 1 < PERSON_ATTEMPTS => {
                    empty += 1;
                    println!(
                        "(an action is needed: say what your character attempts; /help lists \
                         the commands)"
                    );
                }
                _ => {
                    return Answer::Decide {
                        values: values("action", line),
                    };
                }
            }
        }
    }

    async fn roll(&self, ask: &Ask) -> Answer {
        let prompt = format!("{} [Enter or /roll]", ask.prompt);
        for _ in 0..PERSON_ATTEMPTS {
            let Some(line) = self.keyboard.line(&prompt).await else {
                return Answer::Leave;
            };
            match line.trim() {
                "/quit" => return Answer::Leave,
                "" | "/roll" => break,
                _ => println!("(press Enter or type /roll to roll)"),
            }
        }
        Answer::Decide { values: Map::new() }
    }
}

#[async_trait]
impl Seat for Terminal {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        match ask.decision.as_str() {
            ACTION | ACTION_AGAIN => self.action(ask).await,
            ROLL => self.roll(ask).await,
            // Not an encounter's ask: nothing at this terminal answers it.
            _ => Answer::Leave,
        }
    }
}

fn info(ask: &Ask) -> String {
    ask.view
        .get("info")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn values(name: &str, text: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(name.to_string(), Value::String(text.to_string()));
    m
}
