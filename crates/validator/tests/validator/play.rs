//! The play sets of issue 47 (`data/play_dev.jsonl`, `data/play_test.jsonl`; provenance in
//! `data/PLAY_SETS.md`): table-talk as people and models write it, frozen before any tuning.
//! The sets stay as committed; the rules alone, and with feature `model` the hybrid `check`
//! uses, never drop below the figures measured on them (BENCHMARKS.md, issue 47); and the
//! hybrid's confidence stays calibrated on the set it was not tuned on.

use serde::Deserialize;

const PLAY_DEV: &str = include_str!("../../data/play_dev.jsonl");
const PLAY_TEST: &str = include_str!("../../data/play_test.jsonl");

/// FNV-1a 64 of each set as committed in "validator: the play sets for issue 47, frozen before
/// any tuning". Editing a set would silently change every figure measured on it: write a new one.
const FROZEN: [(&str, &str, u64); 2] = [
    ("play_dev", PLAY_DEV, 0x216c_6459_05df_a44c),
    ("play_test", PLAY_TEST, 0x4324_4087_ba6e_9336),
];

#[derive(Deserialize)]
struct Row {
    text: String,
    label: String,
}

fn rows(src: &str) -> Vec<Row> {
    src.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (outcomes flagged, outcomes, intents flagged, intents).
fn counts(rows: &[Row], flagged: &[bool]) -> (usize, usize, usize, usize) {
    let mut c = (0, 0, 0, 0);
    for (r, f) in rows.iter().zip(flagged) {
        if r.label == "outcome" {
            c.0 += usize::from(*f);
            c.1 += 1;
        } else {
            c.2 += usize::from(*f);
            c.3 += 1;
        }
    }
    c
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn the_play_sets_are_unchanged_since_they_were_frozen() {
    for (name, src, hash) in FROZEN {
        assert_eq!(
            fnv1a(src.as_bytes()),
            hash,
            "data/{name}.jsonl changed after it was frozen; write a new set instead"
        );
    }
}

// The rules alone (`TROUPE_DETECTOR=pattern`, or no embedding model), measured on 2026-11-28
// (BENCHMARKS.md, issue 47): (outcomes caught at least, intents flagged at most).
const RULES_DEV: (usize, usize) = (111, 4);
const RULES_TEST: (usize, usize) = (85, 3);

#[test]
fn the_rules_alone_stay_at_their_measured_figures() {
    for (name, src, (caught, flagged)) in [
        ("play_dev", PLAY_DEV, RULES_DEV),
        ("play_test", PLAY_TEST, RULES_TEST),
    ] {
        let rows = rows(src);
        let f: Vec<bool> = rows
            .iter()
            .map(|r| troupe_validator::check_rules(&r.text).flagged)
            .collect();
        let c = counts(&rows, &f);
        println!(
            "{name}, rules: {}/{} caught, {}/{} flagged",
            c.0, c.1, c.2, c.3
        );
        assert!(c.0 >= caught, "{name}: the rules' recall dropped: {c:?}");
        assert!(
            c.2 <= flagged,
            "{name}: the rules' false alarms rose: {c:?}"
        );
    }
}

#[cfg(feature = "model")]
mod hybrid {
    use super::*;
    use troupe_validator::learned::Detector;
    use troupe_validator::opinion::SecondOpinion;
    use troupe_validator::{check_rules, hybrid_flags, hybrid_probability};

    // The hybrid as `check` decides, on the set it was not tuned on (play_test), measured once
    // per design on 2026-11-28 (BENCHMARKS.md, issue 47): the first design caught 88 with none
    // flagged (ECE 0.029); the second (train_shapes, the classifier alone from 0.7) these. A
    // better design raises them; nothing may lower them.
    /// Outcomes caught at least (94 of 98, recall 0.959), intents flagged at most (0 of 128).
    const HYBRID_TEST: (usize, usize) = (94, 0);
    /// Expected calibration error of the hybrid probability (10 buckets) at most (measured 0.018).
    const ECE_TEST: f64 = 0.03;

    use troupe_test_support::in_ci;

    #[test]
    fn the_hybrid_meets_its_figures_and_its_confidence_means_what_it_says() {
        let d = match Detector::load() {
            Ok(d) => d,
            Err(e) if in_ci() => panic!("the learned detector could not load: {e}"),
            Err(e) => {
                eprintln!("SKIPPED (not in CI): the learned detector could not load: {e}");
                return;
            }
        };
        let rows = rows(PLAY_TEST);
        let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
        let p = d.outcome_probabilities(&texts).unwrap();
        let q: Vec<f64> = texts
            .iter()
            .zip(&p)
            .map(|(t, p)| hybrid_probability(*p, check_rules(t).flagged))
            .collect();
        let flagged: Vec<bool> = texts
            .iter()
            .zip(&q)
            .map(|(t, q)| hybrid_flags(*q, check_rules(t).flagged))
            .collect();
        let c = counts(&rows, &flagged);
        let mut ece = 0.0;
        for b in 0..10 {
            let lo = f64::from(b) / 10.0;
            let ks: Vec<usize> = (0..q.len())
                .filter(|&k| q[k] >= lo && (q[k] < lo + 0.1 || b == 9))
                .collect();
            if ks.is_empty() {
                continue;
            }
            let n = ks.len() as f64;
            let conf = ks.iter().map(|&k| q[k]).sum::<f64>() / n;
            let share = ks.iter().filter(|&&k| rows[k].label == "outcome").count() as f64 / n;
            ece += n / q.len() as f64 * (share - conf).abs();
        }
        println!(
            "play_test, hybrid: {}/{} caught, {}/{} flagged, ECE {ece:.3}",
            c.0, c.1, c.2, c.3
        );
        assert!(c.0 >= HYBRID_TEST.0, "recall dropped: {c:?}");
        assert!(c.2 <= HYBRID_TEST.1, "false alarms rose: {c:?}");
        assert!(ece <= ECE_TEST, "calibration drifted: ECE {ece:.3}");
    }
}
