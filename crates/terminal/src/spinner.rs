//! A spinner on standard error while a model works: what it is doing and how many tokens of its
//! reply have streamed in ("The GM is narrating… 87 tokens"), so a hosted model's seconds are
//! not a silent screen. The draft's words are never shown: they are unchecked, and the terminal
//! is the whole table's. Off a terminal (a batch's run, a pipe) it draws nothing and starts no
//! ticker thread.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

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

    /// Whether this spinner draws at all (standard error is a terminal).
    pub fn draws(&self) -> bool {
        self.draws
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
