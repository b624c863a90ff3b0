//! The AI GM at the terminal: while it works, a spinner says what it is deciding and counts its
//! reply's tokens as they stream ("The GM is narrating… 143 tokens"), so a hosted model's 5–10 s
//! are not a silent screen. The draft itself stays hidden: it is unchecked, and the terminal is
//! the whole table's (the web table shows it on the GM's own page only).

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressStyle};
use troupe_engine::{AiGm, GmAsk, GmQuestion, GmSeat, SeatNote};
use troupe_seat::Answer;

/// The spinner of the decision under way, shared with the model calls' progress callback.
type Slot = Arc<Mutex<Option<ProgressBar>>>;

/// The AI GM, with a spinner when standard error is a terminal (off one, the plain seat: no
/// ticker thread for a batch's run or a pipe).
pub fn shown(gm: AiGm) -> Box<dyn GmSeat> {
    if !std::io::stderr().is_terminal() {
        return Box::new(gm);
    }
    let slot: Slot = Arc::default();
    let counter = slot.clone();
    let gm = gm.on_progress(Arc::new(move |_purpose, progress| {
        if let Some(bar) = counter.lock().ok().as_ref().and_then(|s| s.as_ref()) {
            bar.set_message(tokens(progress.tokens));
        }
    }));
    Box::new(SpinningGm { gm, slot })
}

struct SpinningGm {
    gm: AiGm,
    slot: Slot,
}

#[async_trait]
impl GmSeat for SpinningGm {
    fn take_notes(&mut self) -> Vec<SeatNote> {
        self.gm.take_notes()
    }

    async fn decide(&mut self, question: &GmQuestion<'_>) -> Answer {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix} {msg} {elapsed}") {
            bar.set_style(style);
        }
        bar.set_prefix(format!("The GM is {}…", deciding(question.decision)));
        bar.enable_steady_tick(Duration::from_millis(120));
        self.set(Some(bar));
        let answer = self.gm.decide(question).await;
        if let Some(bar) = self.set(None) {
            bar.finish_and_clear();
        }
        answer
    }
}

impl SpinningGm {
    /// Puts `bar` in the slot; the one it held.
    fn set(&self, bar: Option<ProgressBar>) -> Option<ProgressBar> {
        let mut slot = self.slot.lock().ok()?;
        std::mem::replace(&mut *slot, bar)
    }
}

fn tokens(n: u32) -> String {
    match n {
        1 => "1 token".into(),
        n => format!("{n} tokens"),
    }
}

/// What the GM is doing, in the spinner's words.
fn deciding(ask: &GmAsk) -> &'static str {
    match ask {
        GmAsk::Narration => "narrating",
        GmAsk::Answers { .. } => "answering the players' questions",
        GmAsk::Review { .. } => "reviewing an action",
        GmAsk::Adjudicate { .. } => "ruling on an action",
        GmAsk::Override { .. } => "looking at the roll",
        GmAsk::Insight { .. } => "answering a LASER FEELINGS question",
        GmAsk::Outcome => "narrating the outcome",
        GmAsk::Interject { .. } => "listening to the party's talk",
        GmAsk::Failure { .. } => "deciding what to do about a failed call",
    }
}
