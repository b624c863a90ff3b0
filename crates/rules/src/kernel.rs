//! The scene engine's resolution kernel (seed 004): `d20 + style × d(domain)` against a DC,
//! banded by the margin.
//!
//! "style × d(domain)" is read as *style* dice of *domain* sides (style 2, domain d6 → 2d6):
//! the rating counts dice, the domain sizes them. At style 1 both readings agree; rolling dice
//! keeps every face equally likely instead of multiplying one die's swing.

use serde::{Deserialize, Serialize};

use crate::{roll_dice, roll_seed};

/// How good the roll went, from the margin `total − DC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    /// A natural 20 on the kept d20, or a margin of 5 or more.
    Crit,
    /// Margin 0 to 4.
    Success,
    /// Margin −3 to −1: it works, at a cost.
    Partial,
    /// Margin −4 or worse.
    Fail,
}

impl Band {
    /// Every band, best first (the order of [`band_probabilities`]).
    pub const ALL: [Band; 4] = [Band::Crit, Band::Success, Band::Partial, Band::Fail];

    pub fn as_str(self) -> &'static str {
        match self {
            Band::Crit => "crit",
            Band::Success => "success",
            Band::Partial => "partial",
            Band::Fail => "fail",
        }
    }

    fn index(self) -> usize {
        match self {
            Band::Crit => 0,
            Band::Success => 1,
            Band::Partial => 2,
            Band::Fail => 3,
        }
    }
}

/// Roll the d20 once, or twice keeping the higher (advantage) or the lower (disadvantage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Edge {
    #[default]
    Normal,
    Advantage,
    Disadvantage,
}

/// One check: the ratings that apply and the number to beat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// How many domain dice are added (0 adds none).
    pub style: u32,
    /// The sides of each domain die (6 for d6); 0 adds nothing.
    pub domain: u32,
    /// The difficulty: margin = total − dc.
    pub dc: i32,
    pub edge: Edge,
}

/// A rolled check, with every face so the log can show (and replay can verify) it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRoll {
    pub seed: u64,
    /// One d20, or two under advantage or disadvantage.
    pub d20s: Vec<u32>,
    /// The d20 that counts.
    pub kept: u32,
    pub domain_dice: Vec<u32>,
    pub total: i32,
    pub margin: i32,
    pub band: Band,
}

/// The band of a roll whose kept d20 shows `natural` and whose margin is `margin`.
pub fn band_for(natural: u32, margin: i32) -> Band {
    if natural == 20 || margin >= 5 {
        Band::Crit
    } else if margin >= 0 {
        Band::Success
    } else if margin >= -3 {
        Band::Partial
    } else {
        Band::Fail
    }
}

/// Rolls a check reproducibly from `seed` (the session's roll seed for this roll).
pub fn roll_check(seed: u64, check: &Check) -> CheckRoll {
    let d20_count = if check.edge == Edge::Normal { 1 } else { 2 };
    let d20s = roll_dice(seed, d20_count, 20);
    let kept = match check.edge {
        Edge::Normal => d20s.first().copied(),
        Edge::Advantage => d20s.iter().copied().max(),
        Edge::Disadvantage => d20s.iter().copied().min(),
    }
    .unwrap_or(1);
    // The domain dice come from a seed derived from the roll's own, so the d20s stay the same
    // whatever the style.
    let domain_dice = roll_dice(roll_seed(seed, 0), check.style, check.domain);
    let sum: u32 = domain_dice.iter().sum();
    let total = i32::try_from(kept + sum).unwrap_or(i32::MAX);
    let margin = total.saturating_sub(check.dc);
    CheckRoll {
        seed,
        d20s,
        kept,
        domain_dice,
        total,
        margin,
        band: band_for(kept, margin),
    }
}

/// The exact chance of each band (crit, success, partial, fail) by enumerating every outcome.
pub fn band_probabilities(check: &Check) -> [f64; 4] {
    let d20 = kept_d20_weights(check.edge);
    let domain = sum_weights(check.style, check.domain);
    let mut counts = [0u128; 4];
    for (natural, &w20) in d20.iter().enumerate().skip(1) {
        for (sum, &wd) in domain.iter().enumerate() {
            let total = i64::try_from(natural + sum).unwrap_or(i64::MAX);
            let margin = i32::try_from(total - i64::from(check.dc)).unwrap_or(i32::MIN);
            let natural = u32::try_from(natural).unwrap_or(0);
            if let Some(c) = counts.get_mut(band_for(natural, margin).index()) {
                *c += w20 * wd;
            }
        }
    }
    let all: u128 = counts.iter().sum();
    counts.map(|c| c as f64 / all as f64)
}

/// Weight of each kept d20 face (index 1..=20) out of 400 equally likely pairs.
fn kept_d20_weights(edge: Edge) -> [u128; 21] {
    let mut w = [0u128; 21];
    for (k, slot) in w.iter_mut().enumerate().skip(1) {
        let k = k as u128;
        *slot = match edge {
            Edge::Normal => 20,
            Edge::Advantage => k * k - (k - 1) * (k - 1),
            Edge::Disadvantage => (21 - k) * (21 - k) - (20 - k) * (20 - k),
        };
    }
    w
}

/// How many ways `count` dice of `sides` sides make each sum (index = sum).
fn sum_weights(count: u32, sides: u32) -> Vec<u128> {
    let mut ways = vec![1u128];
    if sides == 0 {
        return ways;
    }
    for _ in 0..count {
        let mut next = vec![0u128; ways.len() + sides as usize];
        for (s, &w) in ways.iter().enumerate() {
            for slot in next.iter_mut().skip(s + 1).take(sides as usize) {
                *slot += w;
            }
        }
        ways = next;
    }
    ways
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(style: u32, domain: u32, dc: i32, edge: Edge) -> Check {
        Check {
            style,
            domain,
            dc,
            edge,
        }
    }

    #[test]
    fn the_issue_example_enumerates_to_its_figures() {
        let p = band_probabilities(&check(1, 6, 12, Edge::Normal));
        let want = [0.375, 0.25, 0.15, 0.225];
        for (got, want) in p.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{p:?}");
        }
    }

    #[test]
    fn bands_follow_the_margin_and_the_natural_twenty() {
        assert_eq!(band_for(20, -30), Band::Crit);
        assert_eq!(band_for(3, 5), Band::Crit);
        assert_eq!(band_for(3, 4), Band::Success);
        assert_eq!(band_for(3, 0), Band::Success);
        assert_eq!(band_for(3, -1), Band::Partial);
        assert_eq!(band_for(3, -3), Band::Partial);
        assert_eq!(band_for(3, -4), Band::Fail);
    }

    /// 100k seeded rolls per check land within 4.5 standard errors of the exact chance of every
    /// band (a false alarm about once in 150,000 bands).
    #[test]
    fn sampled_band_frequencies_match_exact_enumeration() {
        const N: u64 = 100_000;
        let checks = [
            check(1, 6, 12, Edge::Normal),
            check(2, 8, 18, Edge::Advantage),
            check(3, 4, 15, Edge::Disadvantage),
            check(0, 6, 10, Edge::Normal),
        ];
        for (i, c) in checks.iter().enumerate() {
            let exact = band_probabilities(c);
            let mut seen = [0u64; 4];
            for n in 0..N {
                seen[roll_check(roll_seed(1000 + i as u64, n), c).band.index()] += 1;
            }
            for b in 0..4 {
                let p = exact[b];
                let freq = seen[b] as f64 / N as f64;
                let se = (p * (1.0 - p) / N as f64).sqrt();
                assert!(
                    (freq - p).abs() <= 4.5 * se + 1e-9,
                    "{c:?} band {b}: sampled {freq}, exact {p}"
                );
            }
        }
    }

    #[test]
    fn advantage_keeps_the_higher_and_disadvantage_the_lower() {
        for seed in 0..200 {
            let adv = roll_check(seed, &check(1, 6, 10, Edge::Advantage));
            assert_eq!(adv.d20s.len(), 2);
            assert_eq!(adv.kept, *adv.d20s.iter().max().unwrap());
            let dis = roll_check(seed, &check(1, 6, 10, Edge::Disadvantage));
            assert_eq!(dis.kept, *dis.d20s.iter().min().unwrap());
            assert_eq!(adv.d20s, dis.d20s, "same seed, same faces");
        }
    }

    #[test]
    fn a_roll_is_reproducible_and_adds_up() {
        let c = check(2, 6, 14, Edge::Normal);
        let r = roll_check(99, &c);
        assert_eq!(r, roll_check(99, &c));
        assert_eq!(r.domain_dice.len(), 2);
        let total = r.kept + r.domain_dice.iter().sum::<u32>();
        assert_eq!(r.total, total as i32);
        assert_eq!(r.margin, r.total - 14);
        assert_eq!(r.band, band_for(r.kept, r.margin));
    }
}
