//! One JSON array (the sentence embedding) per line of standard input, for measuring and training
//! outside Rust: `cargo run --release -p troupe-embed --example embed_lines < texts.txt`.

use std::io::{BufRead, Write};

use troupe_embed::Embedder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let embedder = Embedder::load(None)?;
    let lines: Vec<String> = std::io::stdin().lock().lines().collect::<Result<_, _>>()?;
    let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut out = std::io::stdout().lock();
    for v in embedder.embed_batch(&texts)? {
        writeln!(out, "{}", serde_json::to_string(&v)?)?;
    }
    Ok(())
}
