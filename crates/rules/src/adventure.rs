//! The rulebook's adventure generator: a threat that wants to do something to something, which
//! will have a dire result. One d6 per column, rolled from a seed so a session's adventure can be
//! rolled again the same way. (Lasers & Feelings © 2013 John Harper, CC BY 4.0.)

use crate::roll_dice;

/// The rulebook's threats as they begin a sentence (the rulebook's "Rogue Captain" is one
/// captain: "A Rogue Captain").
const THREATS: [&str; 6] = [
    "Zorgon the Conqueror",
    "The Hive Armada",
    "A Rogue Captain",
    "Space Pirates",
    "Cyber Zombies",
    "Alien Brain Worms",
];
/// Which threats are one (the verb agrees: "wants"); the others are many ("want").
const ONE: [bool; 6] = [true, true, true, false, false, false];
const WANTS: [&str; 6] = [
    "destroy",
    "steal",
    "bond with",
    "protect",
    "build",
    "occupy",
];
const TARGETS: [&str; 6] = [
    "the Space Pirate King",
    "the Void Crystals",
    "a Star Dreadnought",
    "a Quantum Tunnel",
    "an Ancient Space Ruin",
    "an Alien Artifact",
];
const RESULTS: [&str; 6] = [
    "destroy a solar system",
    "reverse time",
    "enslave a planet",
    "start a war",
    "rip a hole in reality",
    "fix everything",
];

/// An adventure rolled on the threat tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adventure {
    /// The four d6 faces, one per column.
    pub faces: [u32; 4],
    pub threat: &'static str,
    pub wants: &'static str,
    pub target: &'static str,
    pub result: &'static str,
}

impl Adventure {
    /// "Space Pirates want to steal the Void Crystals, which will rip a hole in reality."
    pub fn premise(&self) -> String {
        let one = THREATS
            .iter()
            .position(|t| *t == self.threat)
            .and_then(|i| ONE.get(i).copied())
            .unwrap_or(false);
        format!(
            "{} {} to {} {}, which will {}.",
            self.threat,
            if one { "wants" } else { "want" },
            self.wants,
            self.target,
            self.result
        )
    }
}

/// Roll the four columns with `seed`.
pub fn roll_adventure(seed: u64) -> Adventure {
    let dice = roll_dice(seed, 4, 6);
    let face = |i: usize| dice.get(i).copied().unwrap_or(1).clamp(1, 6);
    let pick = |table: &[&'static str; 6], i: usize| {
        table.get(face(i) as usize - 1).copied().unwrap_or(table[0])
    };
    Adventure {
        faces: [face(0), face(1), face(2), face(3)],
        threat: pick(&THREATS, 0),
        wants: pick(&WANTS, 1),
        target: pick(&TARGETS, 2),
        result: pick(&RESULTS, 3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_rolls_the_same_adventure_and_seeds_differ() {
        assert_eq!(roll_adventure(7), roll_adventure(7));
        let distinct: std::collections::HashSet<String> =
            (0..40).map(|s| roll_adventure(s).premise()).collect();
        assert!(distinct.len() > 20, "{}", distinct.len());
    }

    #[test]
    fn the_verb_agrees_with_the_threat() {
        let premise = |threat: &'static str| {
            Adventure {
                faces: [1; 4],
                threat,
                wants: WANTS[0],
                target: TARGETS[0],
                result: RESULTS[0],
            }
            .premise()
        };
        assert!(premise(THREATS[1]).starts_with("The Hive Armada wants to destroy"));
        assert!(premise(THREATS[2]).starts_with("A Rogue Captain wants to destroy"));
        assert!(premise(THREATS[3]).starts_with("Space Pirates want to destroy"));
    }

    #[test]
    fn each_column_reads_the_table_row_of_its_die() {
        for seed in 0..50 {
            let a = roll_adventure(seed);
            assert_eq!(a.threat, THREATS[a.faces[0] as usize - 1]);
            assert_eq!(a.result, RESULTS[a.faces[3] as usize - 1]);
            assert!(a.premise().ends_with('.'));
        }
    }
}
