//! Suite 2.0's skills, each a ratio of two counts summed over scenarios, with its 95 %
//! interval from a bootstrap over scenarios, and the pairwise comparison of two models played
//! on the same scenarios (the same resamples for both, so the difference is paired).
//!
//! The bootstrap draws its resamples from a fixed seed: the same scores give the same
//! intervals, byte for byte.

use serde::Serialize;

use crate::rng::Rng;
use crate::score::Scores;

/// Resamples per interval.
pub const RESAMPLES: usize = 2000;
const BOOTSTRAP_SEED: u64 = 0x00be_9c50;

/// A skill: `part` gives a scenario's numerator and denominator (the items).
pub struct Skill {
    pub key: &'static str,
    pub title: &'static str,
    /// What one item is, for people reading the results.
    pub item: &'static str,
    pub lower_is_better: bool,
    /// 1 for a share, 100 for a rate per 100.
    pub scale: f64,
    pub part: fn(&Scores) -> (u32, u32),
}

/// The skills every result reports, in order.
pub const SKILLS: &[Skill] = &[
    Skill {
        key: "secrets_kept",
        title: "secrets kept",
        item: "secret told (player-only or character-only, per agent)",
        lower_is_better: false,
        scale: 1.0,
        part: |s| {
            let kept = s.secrets_kept + s.character_secrets_kept;
            (kept, s.secrets + s.character_secrets)
        },
    },
    Skill {
        key: "overreach_per_100_actions",
        title: "overreach per 100 actions",
        item: "declared action",
        lower_is_better: true,
        scale: 100.0,
        part: |s| (s.overreach, s.actions),
    },
    Skill {
        key: "insight_questions",
        title: "LASER FEELINGS: question asked",
        item: "LASER FEELINGS moment",
        lower_is_better: false,
        scale: 1.0,
        part: |s| (s.insight_questions, s.insights),
    },
    Skill {
        key: "insight_heeded",
        title: "LASER FEELINGS: action changed",
        item: "decision after an insight",
        lower_is_better: false,
        scale: 1.0,
        part: |s| (s.insight_heeded, s.insight_decisions),
    },
    Skill {
        key: "party_agreed",
        title: "party agreed without a vote",
        item: "party discussion",
        lower_is_better: false,
        scale: 1.0,
        part: |s| {
            let agreed = ["unanimous", "majority"]
                .iter()
                .map(|k| s.decided_by.get(*k).copied().unwrap_or(0))
                .sum();
            (agreed, s.decisions)
        },
    },
    Skill {
        key: "plan_directives",
        title: "directives under the adopted plan",
        item: "directive after a party plan",
        lower_is_better: false,
        scale: 1.0,
        part: |s| (s.plan_directives_following, s.plan_directives),
    },
    Skill {
        key: "memory_answered",
        title: "memory answered",
        item: "memory question",
        lower_is_better: false,
        scale: 1.0,
        part: |s| (s.memory_answered, s.memory_questions),
    },
    Skill {
        key: "directives_followed",
        title: "directives followed by the character",
        item: "directive of 4+ content words",
        lower_is_better: false,
        scale: 1.0,
        part: |s| (s.directives_followed, s.directives),
    },
    Skill {
        key: "replies_valid",
        title: "replies valid as they came",
        item: "model reply",
        lower_is_better: false,
        scale: 1.0,
        part: |s| (s.replies_valid, s.replies),
    },
];

/// The skill named `key`.
pub fn skill(key: &str) -> Option<&'static Skill> {
    SKILLS.iter().find(|s| s.key == key)
}

/// A skill's value over the scenarios, with its 95 % interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub skill: &'static str,
    /// `None` when no scenario had an item.
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Items counted, and the scenarios they came from.
    pub items: u32,
    pub scenarios: u32,
}

/// Two models on the same scenarios: `a` minus `b`, its interval, and whether it is clear
/// (the interval leaves out 0).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub skill: &'static str,
    pub difference: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub clear: bool,
    /// The better of the two when the difference is clear.
    pub better: Option<String>,
}

fn parts(skill: &Skill, scenarios: &[&Scores]) -> Vec<(f64, f64)> {
    scenarios
        .iter()
        .map(|s| {
            let (n, d) = (skill.part)(s);
            (f64::from(n), f64::from(d))
        })
        .collect()
}

fn ratio(parts: &[(f64, f64)], picks: impl Iterator<Item = usize>, scale: f64) -> Option<f64> {
    let (mut n, mut d) = (0.0, 0.0);
    for i in picks {
        n += parts[i].0;
        d += parts[i].1;
    }
    (d > 0.0).then(|| scale * n / d)
}

/// The resampled scenario indices: the same for every skill and model.
fn resamples(n: usize) -> Vec<Vec<usize>> {
    let mut rng = Rng::new(BOOTSTRAP_SEED);
    (0..RESAMPLES)
        .map(|_| (0..n).map(|_| rng.below(n)).collect())
        .collect()
}

/// The 2.5th and 97.5th percentiles.
fn interval(mut values: Vec<f64>) -> (Option<f64>, Option<f64>) {
    if values.is_empty() {
        return (None, None);
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (Some(round(at(0.025))), Some(round(at(0.975))))
}

/// Three decimals: stable in JSON, and finer than any interval.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Every skill's estimate over `scenarios` (one model's scores, scenario by scenario).
pub fn estimates(scenarios: &[&Scores]) -> Vec<Estimate> {
    let draws = resamples(scenarios.len());
    SKILLS
        .iter()
        .map(|skill| {
            let p = parts(skill, scenarios);
            let boot: Vec<f64> = draws
                .iter()
                .filter_map(|d| ratio(&p, d.iter().copied(), skill.scale))
                .collect();
            let (low, high) = interval(boot);
            Estimate {
                skill: skill.key,
                value: ratio(&p, 0..p.len(), skill.scale).map(round),
                low,
                high,
                items: p.iter().map(|x| x.1 as u32).sum(),
                scenarios: p.iter().filter(|x| x.1 > 0.0).count() as u32,
            }
        })
        .collect()
}

/// Every skill compared between two models played on the same scenarios, in the same order.
pub fn compare(a: (&str, &[&Scores]), b: (&str, &[&Scores])) -> Vec<Pair> {
    let draws = resamples(a.1.len().min(b.1.len()));
    SKILLS
        .iter()
        .map(|skill| {
            let (pa, pb) = (parts(skill, a.1), parts(skill, b.1));
            let diff = |picks: &[usize]| {
                let x = ratio(&pa, picks.iter().copied(), skill.scale)?;
                Some(x - ratio(&pb, picks.iter().copied(), skill.scale)?)
            };
            let all: Vec<usize> = (0..pa.len().min(pb.len())).collect();
            let (low, high) = interval(draws.iter().filter_map(|d| diff(d)).collect());
            let clear = matches!((low, high), (Some(l), Some(h)) if l > 0.0 || h < 0.0);
            let a_ahead = low.is_some_and(|l| l > 0.0) != skill.lower_is_better;
            Pair {
                a: a.0.to_string(),
                b: b.0.to_string(),
                skill: skill.key,
                difference: diff(&all).map(round),
                low,
                high,
                clear,
                better: clear.then(|| if a_ahead { a.0 } else { b.0 }.to_string()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn memory(answered: u32, asked: u32) -> Scores {
        Scores {
            memory_answered: answered,
            memory_questions: asked,
            ..Scores::default()
        }
    }

    fn get<'a>(e: &'a [Estimate], key: &str) -> &'a Estimate {
        e.iter().find(|x| x.skill == key).unwrap()
    }

    #[test]
    fn an_interval_surrounds_the_value_and_narrows_with_more_scenarios() {
        let few: Vec<Scores> = (0..6)
            .map(|i| memory(u32::from(i % 2 == 0) * 4, 4))
            .collect();
        let many: Vec<Scores> = (0..60)
            .map(|i| memory(u32::from(i % 2 == 0) * 4, 4))
            .collect();
        let e_few = estimates(&few.iter().collect::<Vec<_>>());
        let e_many = estimates(&many.iter().collect::<Vec<_>>());
        let (f, m) = (
            get(&e_few, "memory_answered"),
            get(&e_many, "memory_answered"),
        );
        assert_eq!((f.value, m.value), (Some(0.5), Some(0.5)));
        assert_eq!((m.items, m.scenarios), (240, 60));
        let width = |e: &Estimate| e.high.unwrap() - e.low.unwrap();
        assert!(f.low.unwrap() < 0.5 && f.high.unwrap() > 0.5, "{f:?}");
        assert!(width(m) < width(f) / 2.0, "{f:?} {m:?}");
        // No item: no value and no interval.
        let none = get(&e_few, "secrets_kept");
        assert_eq!((none.value, none.low, none.items), (None, None, 0));
    }

    fn r(v: &[Scores]) -> Vec<&Scores> {
        v.iter().collect()
    }

    #[test]
    fn a_pairwise_difference_is_clear_only_when_its_interval_leaves_out_zero() {
        let good: Vec<Scores> = (0..40)
            .map(|i| memory(3 + u32::from(i % 2 == 0), 4))
            .collect();
        let bad: Vec<Scores> = (0..40).map(|i| memory(u32::from(i % 3 == 0), 4)).collect();
        let close: Vec<Scores> = (0..40)
            .map(|i| memory(3 + u32::from(i % 2 == 1), 4))
            .collect();
        let pairs = compare(("good", &r(&good)), ("bad", &r(&bad)));
        let p = pairs.iter().find(|p| p.skill == "memory_answered").unwrap();
        assert!(p.clear && p.difference.unwrap() > 0.5, "{p:?}");
        assert_eq!(p.better.as_deref(), Some("good"));
        let pairs = compare(("good", &r(&good)), ("close", &r(&close)));
        let p = pairs.iter().find(|p| p.skill == "memory_answered").unwrap();
        assert!(!p.clear && p.better.is_none(), "{p:?}");
        assert_eq!(p.difference, Some(0.0));
        // Lower is better for overreach: fewer overreaches win.
        let calm = Scores {
            actions: 10,
            ..Scores::default()
        };
        let wild = Scores {
            actions: 10,
            overreach: 9,
            ..Scores::default()
        };
        let pairs = compare(("calm", &vec![&calm; 30]), ("wild", &vec![&wild; 30]));
        let p = pairs
            .iter()
            .find(|p| p.skill == "overreach_per_100_actions")
            .unwrap();
        assert_eq!(
            (p.difference, p.better.as_deref()),
            (Some(-90.0), Some("calm"))
        );
    }

    #[test]
    fn the_same_scores_give_the_same_intervals() {
        let v: Vec<Scores> = (0..20).map(|i| memory(i % 5, 4)).collect();
        let r: Vec<&Scores> = v.iter().collect();
        assert_eq!(estimates(&r), estimates(&r));
    }
}
