#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Property tests: the Lasers & Feelings rules hold for every number, task type and pool size.

use proptest::prelude::*;
use troupe_rules::{
    CharacterNumber, Outcome, TaskType, action_pool, helper_succeeded, resolve, roll_dice,
    roll_pool, roll_seed,
};

fn number() -> impl Strategy<Value = CharacterNumber> {
    (2u8..=5).prop_filter_map("a legal number", |n| CharacterNumber::new(n).ok())
}

fn task() -> impl Strategy<Value = TaskType> {
    prop_oneof![Just(TaskType::Lasers), Just(TaskType::Feelings)]
}

fn pool() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(1u8..=6, 1..=6)
}

proptest! {
    #[test]
    fn successes_follow_the_per_die_rule(n in number(), t in task(), faces in pool()) {
        let r = resolve(n, t, &faces);
        let expected = faces
            .iter()
            .filter(|&&f| match t {
                TaskType::Lasers => f <= n.get(),
                TaskType::Feelings => f >= n.get(),
            })
            .count() as u32;
        prop_assert_eq!(r.successes, expected);
        prop_assert_eq!(r.dice.len(), faces.len());
        for (die, &face) in r.dice.iter().zip(&faces) {
            prop_assert_eq!(die.face, face);
        }
    }

    #[test]
    fn exact_number_is_laser_feelings_and_succeeds(n in number(), t in task(), faces in pool()) {
        let r = resolve(n, t, &faces);
        for die in &r.dice {
            prop_assert_eq!(die.laser_feelings, die.face == n.get());
            if die.laser_feelings {
                prop_assert!(die.success);
            }
        }
        prop_assert_eq!(r.laser_feelings(), faces.contains(&n.get()));
    }

    #[test]
    fn outcome_matches_the_success_count(n in number(), t in task(), faces in pool()) {
        let r = resolve(n, t, &faces);
        let expected = match r.successes {
            0 => Outcome::Failure,
            1 => Outcome::Complication,
            2 => Outcome::Success,
            _ => Outcome::Critical,
        };
        prop_assert_eq!(r.outcome, expected);
        prop_assert_eq!(helper_succeeded(&r), r.successes >= 1);
    }

    #[test]
    fn dice_are_in_range_and_deterministic(seed in any::<u64>(), count in 0u32..=50, sides in 1u32..=1000) {
        let a = roll_dice(seed, count, sides);
        prop_assert_eq!(a.len(), count as usize);
        prop_assert!(a.iter().all(|&f| (1..=sides).contains(&f)));
        prop_assert_eq!(a, roll_dice(seed, count, sides));
    }

    #[test]
    fn a_pool_roll_is_reproducible_from_session_and_index(
        session in any::<u64>(), index in any::<u64>(), n in number(), t in task(), size in 1u32..=6,
    ) {
        let a = roll_pool(n, t, size, roll_seed(session, index));
        let b = roll_pool(n, t, size, roll_seed(session, index));
        prop_assert_eq!(a.dice.len(), size as usize);
        prop_assert!(a.dice.iter().all(|d| (1..=6).contains(&d.face)));
        prop_assert_eq!(a, b);
    }

    #[test]
    fn pool_is_capped_base_plus_helpers(prepared in any::<bool>(), expert in any::<bool>(), helpers in 0u32..=4) {
        let pool = action_pool(prepared, expert, helpers);
        let base = pool - helpers;
        prop_assert!((1..=3).contains(&base));
        prop_assert_eq!(base, 1 + u32::from(prepared) + u32::from(expert));
    }
}
