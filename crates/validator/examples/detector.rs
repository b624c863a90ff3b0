#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The learned second opinion on labelled actions (issues 18 and 47): for each JSONL file (text,
//! label, optional category), the rules alone, the classifier alone at several thresholds, the
//! hybrid `check` uses (the rules' flag and the classifier's probability weighed into one
//! calibrated probability; the classifier alone flags only when sure), its calibration
//! (expected calibration error and reliability by bucket), every error, and the time of one
//! check:
//!
//!     cargo run --release -p troupe-validator --features model --example detector -- FILE…
//!
//! With `--adapter FILE` a freshly trained adapter is measured instead of the shipped one; with
//! `--quiet` the errors are not listed. Never tune on a frozen set: measure it once per design.
#![allow(
    clippy::too_many_lines,
    reason = "a measuring program reads top to bottom, as its report is printed"
)]

use std::time::Instant;

use troupe_validator::learned::Detector;
use troupe_validator::opinion::SecondOpinion;
use troupe_validator::{check_rules, hybrid_flags, hybrid_probability};

struct Row {
    text: String,
    outcome: bool,
    category: String,
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let adapter = args.iter().position(|a| a == "--adapter").map(|i| {
        let path = args.remove(i + 1);
        args.remove(i);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    });
    let quiet = args
        .iter()
        .position(|a| a == "--quiet")
        .map(|i| args.remove(i));
    let detector = match &adapter {
        Some(bytes) => Detector::load_with(bytes),
        None => Detector::load(),
    }
    .unwrap_or_else(|e| panic!("{e}"));
    for file in &args {
        report(file, &detector, quiet.is_none());
    }
}

fn load(file: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Row {
                text: v["text"].as_str().unwrap().to_string(),
                outcome: v["label"] == "outcome",
                category: v["category"].as_str().unwrap_or("").to_string(),
            }
        })
        .collect()
}

fn rate(rows: &[Row], flag: &dyn Fn(usize) -> bool) -> (usize, usize, usize, usize) {
    let (mut o, mut oc, mut i, mut ic) = (0, 0, 0, 0);
    for (k, r) in rows.iter().enumerate() {
        if r.outcome {
            o += 1;
            oc += usize::from(flag(k));
        } else {
            i += 1;
            ic += usize::from(flag(k));
        }
    }
    (oc, o, ic, i)
}

fn report(file: &str, detector: &Detector, errors: bool) {
    let rows = load(file);
    let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
    let start = Instant::now();
    let ruled: Vec<bool> = texts.iter().map(|t| check_rules(t).flagged).collect();
    let rules_us = start.elapsed().as_secs_f64() * 1e6 / texts.len() as f64;
    let start = Instant::now();
    let p = detector.outcome_probabilities(&texts).unwrap();
    let batched = start.elapsed().as_secs_f64() * 1e3 / texts.len() as f64;
    let start = Instant::now();
    for t in texts.iter().take(40) {
        std::hint::black_box(check_rules(t));
        std::hint::black_box(detector.outcome_probabilities(&[t]).unwrap());
    }
    let single = start.elapsed().as_secs_f64() * 1e3 / texts.len().min(40) as f64;
    let q: Vec<f64> = p
        .iter()
        .zip(&ruled)
        .map(|(p, r)| hybrid_probability(*p, *r))
        .collect();
    let hybrid: Vec<bool> = q
        .iter()
        .zip(&ruled)
        .map(|(q, r)| hybrid_flags(*q, *r))
        .collect();
    println!("\n{file}: {} actions", rows.len());
    println!("| design | threshold | recall | false positives |\n|---|---|---|---|");
    let line = |name: &str, t: &str, flag: &dyn Fn(usize) -> bool| {
        let (oc, o, ic, i) = rate(&rows, flag);
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
            .map(|(k, r)| serde_json::json!([r.outcome, ruled[k], p[k], r.text]).to_string())
            .collect();
        std::fs::write(&path, dump.join("\n")).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    line("rules", "-", &|k| ruled[k]);
    for t in [0.5, 0.7, 0.9] {
        line("classifier", &t.to_string(), &|k| p[k] >= t);
    }
    line(
        "**hybrid (as `check`)**",
        &format!(
            "rules ≥ 0.5, alone ≥ {}",
            troupe_validator::JUDGED_THRESHOLD
        ),
        &|k| hybrid[k],
    );
    line("hybrid, the unsure sent back too", "≥ 0.5", &|k| {
        q[k] >= 0.5
    });

    // Calibration: the hybrid probability of a result against how often it was one.
    println!("\nreliability of the hybrid probability (10 buckets):");
    println!(
        "| bucket | actions | mean probability | share that were results |\n|---|---|---|---|"
    );
    let mut ece = 0.0;
    for b in 0..10 {
        let lo = b as f64 / 10.0;
        let hi = lo + 0.1;
        let ks: Vec<usize> = (0..rows.len())
            .filter(|&k| q[k] >= lo && (q[k] < hi || (b == 9 && q[k] <= 1.0)))
            .collect();
        if ks.is_empty() {
            continue;
        }
        let conf = ks.iter().map(|&k| q[k]).sum::<f64>() / ks.len() as f64;
        let acc = ks.iter().filter(|&&k| rows[k].outcome).count() as f64 / ks.len() as f64;
        ece += ks.len() as f64 / rows.len() as f64 * (acc - conf).abs();
        println!("| {lo:.1}–{hi:.1} | {} | {conf:.3} | {acc:.3} |", ks.len());
    }
    // The verdict's own confidence (what `check` reports): how often a verdict that sure was right.
    let conf: Vec<f64> = (0..rows.len())
        .map(|k| if hybrid[k] { q[k] } else { 1.0 - q[k] })
        .collect();
    let mut verdict_ece = 0.0;
    for b in 0..10 {
        let lo = b as f64 / 10.0;
        let ks: Vec<usize> = (0..rows.len())
            .filter(|&k| conf[k] >= lo && (conf[k] < lo + 0.1 || b == 9))
            .collect();
        if ks.is_empty() {
            continue;
        }
        let c = ks.iter().map(|&k| conf[k]).sum::<f64>() / ks.len() as f64;
        let right =
            ks.iter().filter(|&&k| hybrid[k] == rows[k].outcome).count() as f64 / ks.len() as f64;
        verdict_ece += ks.len() as f64 / rows.len() as f64 * (right - c).abs();
    }
    let sure: Vec<usize> = (0..rows.len()).filter(|&k| conf[k] >= 0.99).collect();
    let sure_right = sure
        .iter()
        .filter(|&&k| hybrid[k] == rows[k].outcome)
        .count();
    let raw_ece = {
        let mut e = 0.0;
        for b in 0..10 {
            let lo = b as f64 / 10.0;
            let ks: Vec<usize> = (0..rows.len())
                .filter(|&k| p[k] >= lo && (p[k] < lo + 0.1 || b == 9))
                .collect();
            if ks.is_empty() {
                continue;
            }
            let c = ks.iter().map(|&k| p[k]).sum::<f64>() / ks.len() as f64;
            let a = ks.iter().filter(|&&k| rows[k].outcome).count() as f64 / ks.len() as f64;
            e += ks.len() as f64 / rows.len() as f64 * (a - c).abs();
        }
        e
    };
    println!(
        "ECE (10 buckets): hybrid probability {ece:.3}; verdict confidence {verdict_ece:.3}; \
         classifier alone {raw_ece:.3}. Verdicts at ≥ 0.99: {sure_right} of {} right.",
        sure.len()
    );
    let unsure = (0..rows.len())
        .filter(|&k| !ruled[k] && !hybrid[k] && q[k] >= 0.5)
        .collect::<Vec<_>>();
    println!(
        "unsure classifier verdicts let through: {} ({} of them results)",
        unsure.len(),
        unsure.iter().filter(|&&k| rows[k].outcome).count()
    );
    if errors {
        println!("errors of the hybrid (label, category, rules, probability, text):");
        for (k, r) in rows.iter().enumerate() {
            if hybrid[k] != r.outcome {
                println!(
                    "  {:7} {:20} rules={} q={:.3} p={:.3} {}",
                    if r.outcome { "outcome" } else { "intent" },
                    r.category,
                    ruled[k],
                    q[k],
                    p[k],
                    r.text
                );
            }
        }
    }
    println!(
        "time: {single:.1} ms a check (rules + classifier, one at a time), {batched:.1} ms an \
         action batched; the rules alone {rules_us:.1} µs"
    );
}
