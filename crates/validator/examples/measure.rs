#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Prints the validator's recall and false-positive rate on the labelled corpus, per split,
//! with every miss, then the same on the frozen holdout of issue 18 (`data/holdout.jsonl`), per
//! category: `cargo run -p troupe-validator --example measure`.

#[path = "../tests/validator/support/holdout.rs"]
mod holdout;
#[path = "../tests/validator/support/measure.rs"]
mod measure;

fn main() {
    let entries = match measure::load() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let mut splits = measure::all_splits(&entries);
    if let Ok(fresh) = measure::load_fresh() {
        splits.push(measure::measure(&fresh, "fresh (not asserted)", |_| true));
    }
    print!("{}", measure::table(&splits, true));
    print_holdout();
    let start = std::time::Instant::now();
    let rounds = 20;
    for _ in 0..rounds {
        for e in &entries {
            std::hint::black_box(troupe_validator::check(&e.text));
        }
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / (rounds * entries.len()) as f64;
    println!(
        "\nmean check() time: {per:.1} µs per action ({} actions × {rounds})",
        entries.len()
    );
}

/// The frozen holdout (issue 18): written before any tuning, measured once per design.
fn print_holdout() {
    match holdout::load() {
        Ok(items) => {
            let report = holdout::evaluate(&items, holdout::rules);
            println!("\nfrozen holdout (issue 18, data/holdout.jsonl)\n");
            print!("{}", holdout::table("design 2: rules v2", &report, true));
        }
        Err(e) => eprintln!("{e}"),
    }
}
