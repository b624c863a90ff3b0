//! The AI GM at the terminal: while it works, a spinner says what it is deciding and counts its
//! reply's tokens as they stream ("The GM is narrating… 143 tokens").

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use troupe_lasers::{AiGm, GmAsk, GmQuestion, GmSeat, SeatNote};
use troupe_seat::Answer;

use crate::spinner::Spinner;

/// The AI GM, with a spinner when standard error is a terminal (off one, the plain seat).
pub fn shown(gm: AiGm) -> Box<dyn GmSeat> {
    let spinner = Spinner::new();
    if !spinner.draws() {
        return Box::new(gm);
    }
    let spinner = Arc::new(Mutex::new(spinner));
    let counter = spinner.clone();
    let gm = gm.on_progress(Arc::new(move |_purpose, progress| {
        if let Ok(spinner) = counter.lock() {
            spinner.tokens(progress.tokens);
        }
    }));
    Box::new(SpinningGm { gm, spinner })
}

struct SpinningGm {
    gm: AiGm,
    spinner: Arc<Mutex<Spinner>>,
}

#[async_trait]
impl GmSeat for SpinningGm {
    fn take_notes(&mut self) -> Vec<SeatNote> {
        self.gm.take_notes()
    }

    async fn decide(&mut self, question: &GmQuestion<'_>) -> Answer {
        let doing = format!("The GM is {}…", deciding(question.decision));
        if let Ok(mut spinner) = self.spinner.lock() {
            spinner.start(doing);
        }
        let answer = self.gm.decide(question).await;
        if let Ok(mut spinner) = self.spinner.lock() {
            spinner.stop();
        }
        answer
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
