//! A spinner on standard error while a model works: what it is doing and how many tokens of its
//! reply have streamed in ("The GM is narrating… 87 tokens"), so a hosted model's seconds are
//! not a silent screen. The draft's words are never shown: they are unchecked, and the terminal
//! is the whole table's. Off a terminal (a batch's run, a pipe) it draws nothing and starts no
//! ticker thread.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use troupe_engine::CallWatch;
use troupe_llm::Progress;

pub struct Spinner {
    bar: Option<ProgressBar>,
    draws: bool,
}

impl Default for Spinner {
    fn default() -> Self {
        Self::new()
    }
}

impl Spinner {
    /// A spinner that draws only when standard error is a terminal.
    pub fn new() -> Self {
        Spinner {
            bar: None,
            draws: std::io::stderr().is_terminal(),
        }
    }

    /// Spins with `doing` ("Mara is thinking…"), replacing what it said before.
    pub fn start(&mut self, doing: String) {
        if let Some(bar) = &self.bar {
            bar.set_prefix(doing);
            bar.set_message("");
            return;
        }
        if !self.draws {
            return;
        }
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix} {msg} {elapsed}") {
            bar.set_style(style);
        }
        bar.set_prefix(doing);
        bar.enable_steady_tick(Duration::from_millis(120));
        self.bar = Some(bar);
    }

    /// The reply has `n` tokens so far.
    pub fn tokens(&self, n: u32) {
        if let Some(bar) = &self.bar {
            bar.set_message(tokens(n));
        }
    }

    pub fn stop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Prints a line of the story without tearing the spinner.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| println!("{line}")),
            None => println!("{line}"),
        }
    }
}

fn tokens(n: u32) -> String {
    match n {
        1 => "1 token".into(),
        n => format!("{n} tokens"),
    }
}

/// The terminal's spinner as every game's table is watched: who thinks and on what ("Zara is
/// reacting…", "Zara, Kai are voting…", "The GM is narrating…"), and the tokens every thinker's
/// reply has so far. Each game only names its seats.
pub struct Thinking {
    spinner: Spinner,
    /// How a seat is named on the spinner (seat id → name); a seat not here shows its id.
    pub names: BTreeMap<String, String>,
    /// Who is thinking right now (a step's calls run at once).
    thinkers: Vec<String>,
    /// Tokens each thinker's reply has so far, as it streams.
    tokens: BTreeMap<String, u32>,
}

impl Thinking {
    /// A spinner that names these seats (seat id, name) its own way.
    pub fn naming(names: &[(&str, &str)]) -> Self {
        Thinking {
            spinner: Spinner::new(),
            names: (names.iter())
                .map(|(seat, name)| (seat.to_string(), name.to_string()))
                .collect(),
            thinkers: Vec::new(),
            tokens: BTreeMap::new(),
        }
    }

    /// Prints a line of the story without tearing the spinner.
    pub fn println(&self, line: &str) {
        self.spinner.println(line);
    }
}

impl CallWatch for Thinking {
    fn thinking(&mut self, seat: &str, doing: &str) {
        let who = self.names.get(seat).map_or(seat, String::as_str);
        self.thinkers.push(who.to_string());
        let message = match self.thinkers.as_slice() {
            [one] => format!("{one} is {doing}…"),
            many => format!("{} are {doing}…", many.join(", ")),
        };
        self.spinner.start(message);
    }

    fn progress(&mut self, seat: &str, progress: &Progress) {
        self.tokens.insert(seat.to_string(), progress.tokens);
        self.spinner.tokens(self.tokens.values().sum());
    }

    fn idle(&mut self) {
        self.thinkers.clear();
        self.tokens.clear();
        self.spinner.stop();
    }
}
