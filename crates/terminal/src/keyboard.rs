//! Standard input, shared by every seat at the terminal (the GM's and the people's player
//! seats): one line reader, so no seat's buffer swallows a line meant for another.

use std::io::Write;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};
use tokio::sync::Mutex;

#[derive(Clone)]
pub struct Keyboard(Arc<Mutex<Lines<BufReader<Stdin>>>>);

impl Default for Keyboard {
    fn default() -> Self {
        Self::new()
    }
}

impl Keyboard {
    /// The one reader of standard input (make it once; clone it for every seat).
    pub fn new() -> Self {
        Keyboard(Arc::new(Mutex::new(
            BufReader::new(tokio::io::stdin()).lines(),
        )))
    }

    /// Show `prompt` and read one line; `None` at the end of input (or a read error).
    pub async fn line(&self, prompt: &str) -> Option<String> {
        print!("{prompt} ");
        let _ = std::io::stdout().flush();
        let line = self.0.lock().await.next_line().await.ok().flatten();
        if line.is_none() {
            println!();
        }
        line
    }
}
