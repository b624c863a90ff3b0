#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Development figures (never the frozen holdout): recall and false-positive rate on
//! `data/dev.jsonl` (written for issue 18 before the detector changed) and the fresh probe, per
//! category, with every error: `cargo run -p troupe-validator --example dev`.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Deserialize)]
struct Row {
    text: String,
    label: String,
    #[serde(default)]
    category: String,
}

fn load(src: &str) -> Vec<Row> {
    src.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn report(name: &str, rows: &[Row]) {
    let mut by_cat: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    let mut errors = Vec::new();
    for r in rows {
        let flagged = troupe_validator::check(&r.text).flagged;
        let e = by_cat
            .entry((r.label.clone(), r.category.clone()))
            .or_default();
        e.0 += 1;
        e.1 += usize::from(flagged);
        if flagged != (r.label == "outcome") {
            errors.push(format!("  {:7} {:28} {}", r.label, r.category, r.text));
        }
    }
    let sum = |label: &str| {
        by_cat
            .iter()
            .filter(|((l, _), _)| l == label)
            .fold((0, 0), |a, (_, v)| (a.0 + v.0, a.1 + v.1))
    };
    let (o, oc) = sum("outcome");
    let (i, ifl) = sum("intent");
    println!(
        "{name}: recall {oc}/{o} = {:.3}, false positives {ifl}/{i} = {:.3}",
        oc as f64 / o.max(1) as f64,
        ifl as f64 / i.max(1) as f64
    );
    for ((l, c), (t, f)) in &by_cat {
        println!("  {l:7} {c:28} {f}/{t}");
    }
    println!("errors:");
    for e in errors {
        println!("{e}");
    }
}

fn main() {
    report("dev", &load(include_str!("../data/dev.jsonl")));
    report("fresh", &load(include_str!("../data/fresh_probe.jsonl")));
}
