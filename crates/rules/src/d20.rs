//! d20 checks for prepared encounters (seed 003): `d20 + modifier` against a DC.
//!
//! # The rule (ours, stated here because tables differ)
//!
//! * The d20 is rolled once; with [`Edge::Advantage`] twice keeping the higher, with
//!   [`Edge::Disadvantage`] twice keeping the lower.
//! * `total = kept + modifier`; the check succeeds when `total ≥ dc`.
//! * A **natural 20** on the kept die always succeeds and a **natural 1** always fails, whatever
//!   the modifier and the DC. (Strictly, the 5e rules apply this to attacks only; many tables
//!   use it for ability checks too, and seed 003's encounters do.)
//!
//! Rolls are seeded like every other roll (the session's roll seed for this roll, see
//! [`crate::roll_seed`]), so a log holding the seed replays to the same faces. Advantage and
//! disadvantage draw the same two dice from the same seed: the edge decides which one counts.

use serde::{Deserialize, Serialize};

use crate::{Edge, roll_dice};

/// One check as the GM calls for it: the number to reach, the character's modifier and the edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct D20Check {
    /// The difficulty class: the total must reach it.
    pub dc: i32,
    /// Added to the kept die (ability, proficiency, situational).
    pub modifier: i32,
    pub edge: Edge,
}

/// A natural 1 or 20 on the kept die: it decides the check whatever the numbers say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Natural {
    One,
    Twenty,
}

/// A rolled d20 check with every face, so the log can show it and replay can verify it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct D20Roll {
    /// One d20, or two under advantage or disadvantage, in the order rolled.
    pub dice: Vec<u32>,
    /// The die that counts.
    pub kept: u32,
    /// `kept + modifier`.
    pub total: i32,
    pub dc: i32,
    pub success: bool,
    /// Set when the kept die shows 1 or 20.
    pub natural: Option<Natural>,
}

/// Rolls `check` reproducibly from `seed` and judges it by the rule in the module docs.
pub fn roll_d20(check: &D20Check, seed: u64) -> D20Roll {
    let count = if check.edge == Edge::Normal { 1 } else { 2 };
    let dice = roll_dice(seed, count, 20);
    let kept = match check.edge {
        Edge::Normal => dice.first().copied(),
        Edge::Advantage => dice.iter().copied().max(),
        Edge::Disadvantage => dice.iter().copied().min(),
    }
    // roll_dice(_, n ≥ 1, 20) always yields n dice; 1 is a safe floor that never panics.
    .unwrap_or(1);
    // kept ≤ 20, so the conversion cannot fail.
    let total = i32::try_from(kept)
        .unwrap_or(1)
        .saturating_add(check.modifier);
    let natural = match kept {
        1 => Some(Natural::One),
        20 => Some(Natural::Twenty),
        _ => None,
    };
    let success = match natural {
        Some(Natural::Twenty) => true,
        Some(Natural::One) => false,
        None => total >= check.dc,
    };
    D20Roll {
        dice,
        kept,
        total,
        dc: check.dc,
        success,
        natural,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(dc: i32, modifier: i32, edge: Edge) -> D20Check {
        D20Check { dc, modifier, edge }
    }

    /// The first seed (from 0) whose roll of `count` d20 satisfies `want`.
    fn seed_where(count: u32, want: impl Fn(&[u32]) -> bool) -> u64 {
        (0u64..100_000)
            .find(|&s| want(&roll_dice(s, count, 20)))
            .unwrap_or(u64::MAX)
    }

    #[test]
    fn normal_rolls_one_die_and_adds_the_modifier() {
        let r = roll_d20(&check(15, 3, Edge::Normal), 42);
        assert_eq!(r.dice.len(), 1);
        assert_eq!(r.dice, roll_dice(42, 1, 20));
        assert_eq!(r.kept, r.dice[0]);
        assert_eq!(r.total, r.kept as i32 + 3);
        assert_eq!(r.dc, 15);
    }

    #[test]
    fn meeting_the_dc_exactly_succeeds_and_one_short_fails() {
        let seed = seed_where(1, |d| (2..=19).contains(&d[0]));
        let face = roll_dice(seed, 1, 20)[0] as i32;
        assert!(roll_d20(&check(face + 2, 2, Edge::Normal), seed).success);
        assert!(!roll_d20(&check(face + 3, 2, Edge::Normal), seed).success);
    }

    #[test]
    fn advantage_keeps_the_higher_and_disadvantage_the_lower_of_the_same_two_dice() {
        let seed = seed_where(2, |d| d[0] != d[1]);
        let adv = roll_d20(&check(10, 0, Edge::Advantage), seed);
        let dis = roll_d20(&check(10, 0, Edge::Disadvantage), seed);
        assert_eq!(
            adv.dice, dis.dice,
            "the edge chooses, the dice are the same"
        );
        assert_eq!(adv.dice.len(), 2);
        assert_eq!(adv.kept, *adv.dice.iter().max().unwrap());
        assert_eq!(dis.kept, *dis.dice.iter().min().unwrap());
        assert!(adv.kept > dis.kept);
    }

    #[test]
    fn a_natural_20_succeeds_against_any_dc() {
        let seed = seed_where(1, |d| d[0] == 20);
        let r = roll_d20(&check(40, -5, Edge::Normal), seed);
        assert_eq!(r.natural, Some(Natural::Twenty));
        assert_eq!(r.total, 15);
        assert!(r.success, "natural 20 beats DC 40 with total 15");
    }

    #[test]
    fn a_natural_1_fails_whatever_the_modifier() {
        let seed = seed_where(1, |d| d[0] == 1);
        let r = roll_d20(&check(5, 30, Edge::Normal), seed);
        assert_eq!(r.natural, Some(Natural::One));
        assert_eq!(r.total, 31);
        assert!(!r.success, "natural 1 fails DC 5 with total 31");
    }

    #[test]
    fn advantage_avoids_a_natural_1_when_the_other_die_is_higher() {
        let seed = seed_where(2, |d| d.contains(&1) && d.iter().any(|&f| f > 1));
        let adv = roll_d20(&check(2, 0, Edge::Advantage), seed);
        assert_eq!(adv.natural, None);
        assert!(adv.success);
        let dis = roll_d20(&check(2, 0, Edge::Disadvantage), seed);
        assert_eq!(dis.natural, Some(Natural::One));
        assert!(!dis.success);
    }

    #[test]
    fn a_roll_round_trips_through_json_in_snake_case() {
        let r = roll_d20(&check(12, 1, Edge::Disadvantage), 9);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<D20Roll>(&json).unwrap(), r);
        let c = serde_json::to_string(&check(12, 1, Edge::Disadvantage)).unwrap();
        assert!(c.contains("\"disadvantage\""), "{c}");
        assert_eq!(
            serde_json::to_string(&Natural::Twenty).unwrap(),
            "\"twenty\""
        );
    }

    #[test]
    fn extreme_modifiers_saturate_instead_of_overflowing() {
        let r = roll_d20(&check(0, i32::MAX, Edge::Normal), 3);
        assert_eq!(r.total, i32::MAX);
    }

    fn edge() -> impl Strategy<Value = Edge> {
        prop_oneof![
            Just(Edge::Normal),
            Just(Edge::Advantage),
            Just(Edge::Disadvantage)
        ]
    }

    proptest! {
        #[test]
        fn every_roll_obeys_the_rule(
            seed: u64, dc in -10i32..40, modifier in -10i32..20, edge in edge()
        ) {
            let c = check(dc, modifier, edge);
            let r = roll_d20(&c, seed);
            prop_assert_eq!(&r, &roll_d20(&c, seed), "same seed, same roll");
            prop_assert!(r.dice.iter().all(|d| (1..=20).contains(d)));
            let expected_kept = match edge {
                Edge::Normal => {
                    prop_assert_eq!(r.dice.len(), 1);
                    r.dice[0]
                }
                Edge::Advantage => {
                    prop_assert_eq!(r.dice.len(), 2);
                    *r.dice.iter().max().unwrap()
                }
                Edge::Disadvantage => {
                    prop_assert_eq!(r.dice.len(), 2);
                    *r.dice.iter().min().unwrap()
                }
            };
            prop_assert_eq!(r.kept, expected_kept);
            prop_assert_eq!(r.total, r.kept as i32 + modifier);
            let expected = match r.kept {
                20 => true,
                1 => false,
                _ => r.total >= dc,
            };
            prop_assert_eq!(r.success, expected);
            prop_assert_eq!(r.natural.is_some(), r.kept == 1 || r.kept == 20);
        }
    }
}
