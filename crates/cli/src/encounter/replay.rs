//! `troupe encounter replay`: every event that the engine derives (the GM's prompt zones, what
//! its reply did, the dice, the AI players' actions) is derived again from the recorded inputs
//! (the model's replies, the people's lines, the seed, the campaign's prompts) and compared
//! byte for byte.

use std::path::Path;
use std::process::ExitCode;

pub fn replay(dir: &Path, run: Option<u32>) -> anyhow::Result<ExitCode> {
    let store = super::open_store(dir)?;
    let run = super::run_number(&store, dir, run)?;
    let events = store.events(run)?;
    // The GM's prompts as the run had them: the campaign's overrides too.
    let prompts = crate::play::prompts(dir)?;
    for line in troupe_encounter::table::replay(run, &events, &prompts)? {
        println!("{line}");
    }
    let replayed = troupe_encounter::log::live(&events).len();
    println!("(run {run}: {replayed} events replayed, identical)");
    Ok(ExitCode::SUCCESS)
}
