#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Prints `flagged<TAB>action` for each stdin line: compare two detector versions on recorded
//! sessions' actions (`cargo run -p troupe-validator --example flags < actions.txt`).
use std::io::BufRead;

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        println!("{}\t{line}", troupe_validator::check(&line).flagged);
    }
}
