#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The learned second opinion on labelled actions (issue 18): for each JSONL file (text, label),
//! the rules alone, the classifier alone, either of them, and the hybrid `check` uses (either,
//! unless the classifier all but rules the result out) at several thresholds, and the time of
//! one check:
//!
//!     cargo run --release -p troupe-validator --features model --example detector -- FILE…
//!
//! With `--adapter FILE` a freshly trained adapter is measured instead of the shipped one.
//! Never tune on the frozen holdout: measure it once per design.

use std::time::Instant;

use troupe_validator::learned::Detector;
use troupe_validator::opinion::SecondOpinion;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let adapter = args.iter().position(|a| a == "--adapter").map(|i| {
        let path = args.remove(i + 1);
        args.remove(i);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    });
    let detector = match &adapter {
        Some(bytes) => Detector::load_with(bytes),
        None => Detector::load(),
    }
    .unwrap_or_else(|e| panic!("{e}"));
    for file in &args {
        report(file, &detector);
    }
}

fn report(file: &str, detector: &Detector) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let rows: Vec<(String, bool)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["text"].as_str().unwrap().to_string(),
                v["label"] == "outcome",
            )
        })
        .collect();
    let texts: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let ruled: Vec<bool> = texts
        .iter()
        .map(|t| troupe_validator::check_rules(t).flagged)
        .collect();
    let start = Instant::now();
    let p = detector.outcome_probabilities(&texts).unwrap();
    let batched = start.elapsed().as_secs_f64() * 1e3 / texts.len() as f64;
    let start = Instant::now();
    for t in texts.iter().take(40) {
        std::hint::black_box(troupe_validator::check_rules(t));
        std::hint::black_box(detector.outcome_probabilities(&[t]).unwrap());
    }
    let single = start.elapsed().as_secs_f64() * 1e3 / texts.len().min(40) as f64;
    println!("\n{file}: {} actions", rows.len());
    println!("| design | threshold | recall | false positives |\n|---|---|---|---|");
    let line = |name: &str, t: &str, flag: &dyn Fn(usize) -> bool| {
        let (mut o, mut oc, mut i, mut ic) = (0, 0, 0, 0);
        for (k, r) in rows.iter().enumerate() {
            if r.1 {
                o += 1;
                oc += usize::from(flag(k));
            } else {
                i += 1;
                ic += usize::from(flag(k));
            }
        }
        println!(
            "| {name} | {t} | {:.3} ({oc}/{o}) | {:.3} ({ic}/{i}) |",
            oc as f64 / o.max(1) as f64,
            ic as f64 / i.max(1) as f64
        );
    };
    if let Ok(path) = std::env::var("DETECTOR_DUMP") {
        // One line per action (label, rules' flag, probability, text), to study the errors.
        let dump: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(k, r)| serde_json::json!([r.1, ruled[k], p[k], r.0]).to_string())
            .collect();
        std::fs::write(&path, dump.join("\n")).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    line("rules", "-", &|k| ruled[k]);
    for t in [0.3, 0.5, 0.7, 0.8, 0.9] {
        line("classifier", &t.to_string(), &|k| p[k] >= t);
    }
    for t in [0.3, 0.5, 0.7, 0.8, 0.9] {
        line("rules or classifier", &t.to_string(), &|k| {
            ruled[k] || p[k] >= t
        });
    }
    // What `check` does: the classifier overrules the rules only when all but certain.
    let overrule = troupe_validator::OVERRULE_BELOW;
    for t in [0.5, 0.7, 0.8, 0.9] {
        let name = format!("hybrid (overrule below {overrule})");
        line(&name, &t.to_string(), &|k| {
            (ruled[k] && p[k] >= overrule) || p[k] >= t
        });
    }
    println!(
        "time: {single:.1} ms a check (rules + classifier, one at a time), {batched:.1} ms an action batched"
    );
}
