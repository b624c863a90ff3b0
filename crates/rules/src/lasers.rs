//! Lasers & Feelings rolls: the character number, task types, per-die results, outcomes, pools
//! and helping.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{Error, roll_dice};

/// What kind of action is being rolled for; decides whether dice must come in under or over the
/// character's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskType {
    /// Technology, science, cold rationality, calm precise action: roll under your number.
    Lasers,
    /// Intuition, diplomacy, seduction, wild passionate action: roll over your number.
    Feelings,
}

impl TaskType {
    /// Both task types, for iteration and prompts.
    pub const ALL: &'static [Self] = &[Self::Lasers, Self::Feelings];
}

impl fmt::Display for TaskType {
    /// Upper case, as the rulebook writes it ("a LASERS roll").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Lasers => "LASERS",
            Self::Feelings => "FEELINGS",
        })
    }
}

impl FromStr for TaskType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lasers" | "laser" => Ok(Self::Lasers),
            "feelings" | "feeling" => Ok(Self::Feelings),
            _ => Err(Error::UnknownTaskType(s.to_string())),
        }
    }
}

/// A character's single stat, 2..=5. High is better at LASERS, low is better at FEELINGS.
///
/// Only constructible in range, so every roll in the engine is against a legal number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct CharacterNumber(u8);

impl CharacterNumber {
    /// The smallest legal number.
    pub const MIN: u8 = 2;
    /// The largest legal number.
    pub const MAX: u8 = 5;

    /// Accepts 2..=5; anything else is an error that explains the range.
    pub fn new(n: u8) -> Result<Self, Error> {
        if (Self::MIN..=Self::MAX).contains(&n) {
            Ok(Self(n))
        } else {
            Err(Error::NumberOutOfRange(n))
        }
    }

    /// The number itself.
    pub fn get(self) -> u8 {
        self.0
    }

    /// The task type this number is better at: 4–5 lean LASERS, 2–3 lean FEELINGS.
    pub fn leans(self) -> TaskType {
        if self.0 >= 4 {
            TaskType::Lasers
        } else {
            TaskType::Feelings
        }
    }
}

impl TryFrom<u8> for CharacterNumber {
    type Error = Error;

    fn try_from(n: u8) -> Result<Self, Self::Error> {
        Self::new(n)
    }
}

impl From<CharacterNumber> for u8 {
    fn from(n: CharacterNumber) -> u8 {
        n.0
    }
}

impl fmt::Display for CharacterNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How a roll turned out, from the number of successes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// 0 successes.
    Failure,
    /// 1 success.
    Complication,
    /// 2 successes.
    Success,
    /// 3 or more successes.
    Critical,
}

impl Outcome {
    /// 0 / 1 / 2 / 3+ successes.
    pub fn from_successes(successes: u32) -> Self {
        match successes {
            0 => Self::Failure,
            1 => Self::Complication,
            2 => Self::Success,
            _ => Self::Critical,
        }
    }

    /// What the outcome means at the table, for the GM and for prompts.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Failure => "it goes wrong; the GM says how things get worse",
            Self::Complication => {
                "you barely manage it; the GM inflicts a complication, harm or cost"
            }
            Self::Success => "you do it well",
            Self::Critical => "critical success: you do it well and the GM adds an extra effect",
        }
    }

    /// The lowercase name, as serialized.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Failure => "failure",
            Self::Complication => "complication",
            Self::Success => "success",
            Self::Critical => "critical",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One d6 of a roll, judged against the character's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DieResult {
    /// The face shown.
    pub face: u8,
    /// Whether it counts as a success (LASER FEELINGS dice do).
    pub success: bool,
    /// The face equals the character's number: a success and a special insight.
    pub laser_feelings: bool,
}

/// A whole Lasers & Feelings roll: every die, the count of successes and the outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RollResult {
    /// The number rolled against.
    pub number: CharacterNumber,
    /// Whether dice had to come in under (LASERS) or over (FEELINGS) the number.
    pub task: TaskType,
    /// Every die, in the order rolled.
    pub dice: Vec<DieResult>,
    /// Dice that succeeded, LASER FEELINGS included.
    pub successes: u32,
    /// What the successes add up to.
    pub outcome: Outcome,
}

impl RollResult {
    /// Any die showed exactly the number: the player may ask the GM a question, which the GM
    /// answers honestly, and may then change their action and roll again.
    pub fn laser_feelings(&self) -> bool {
        self.dice.iter().any(|d| d.laser_feelings)
    }
}

/// Judges already-rolled faces: LASERS succeeds under the number, FEELINGS over it, and a face
/// equal to the number is LASER FEELINGS, which also succeeds.
pub fn resolve(number: CharacterNumber, task: TaskType, faces: &[u8]) -> RollResult {
    let n = number.get();
    let dice: Vec<DieResult> = faces
        .iter()
        .map(|&face| {
            let laser_feelings = face == n;
            let beats = match task {
                TaskType::Lasers => face < n,
                TaskType::Feelings => face > n,
            };
            DieResult {
                face,
                success: beats || laser_feelings,
                laser_feelings,
            }
        })
        .collect();
    let successes = dice.iter().filter(|d| d.success).count();
    let successes = u32::try_from(successes).unwrap_or(u32::MAX);
    RollResult {
        number,
        task,
        dice,
        successes,
        outcome: Outcome::from_successes(successes),
    }
}

/// Rolls `pool` d6 from `seed` and resolves them; the one call the engine needs for a roll.
pub fn roll_pool(number: CharacterNumber, task: TaskType, pool: u32, seed: u64) -> RollResult {
    let faces: Vec<u8> = roll_dice(seed, pool, 6)
        .into_iter()
        .map(|f| u8::try_from(f).unwrap_or(u8::MAX))
        .collect();
    resolve(number, task, &faces)
}

/// How many d6 a character rolls: 1, +1 if prepared, +1 if an expert (never more than 3 from
/// these), then +1 for each helper whose own roll succeeded.
pub fn action_pool(prepared: bool, expert: bool, successful_helpers: u32) -> u32 {
    let base = (1 + u32::from(prepared) + u32::from(expert)).min(3);
    base.saturating_add(successful_helpers)
}

/// A helper rolls 1d6 with their own number and the helped action's task type; any success
/// (LASER FEELINGS included) gives the helped character +1d6.
pub fn helper_succeeded(r: &RollResult) -> bool {
    r.successes >= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(n: u8) -> CharacterNumber {
        CharacterNumber::new(n).unwrap()
    }

    #[test]
    fn number_outside_two_to_five_is_rejected_with_the_range() {
        for bad in [0, 1, 6, 255] {
            let err = CharacterNumber::new(bad).unwrap_err();
            assert!(err.to_string().contains("from 2 to 5"), "{err}");
        }
        assert_eq!(num(4).get(), 4);
    }

    #[test]
    fn number_round_trips_as_plain_integer_and_validates_on_read() {
        assert_eq!(serde_json::to_string(&num(3)).unwrap(), "3");
        assert_eq!(
            serde_json::from_str::<CharacterNumber>("5").unwrap(),
            num(5)
        );
        assert!(serde_json::from_str::<CharacterNumber>("7").is_err());
        assert!(serde_json::from_str::<CharacterNumber>("\"3\"").is_err());
    }

    #[test]
    fn high_numbers_lean_lasers() {
        assert_eq!(num(5).leans(), TaskType::Lasers);
        assert_eq!(num(4).leans(), TaskType::Lasers);
        assert_eq!(num(3).leans(), TaskType::Feelings);
        assert_eq!(num(2).leans(), TaskType::Feelings);
    }

    #[test]
    fn lasers_rolls_under_and_feelings_over() {
        let lasers = resolve(num(4), TaskType::Lasers, &[1, 3, 5, 6]);
        assert_eq!(lasers.successes, 2);
        assert_eq!(lasers.outcome, Outcome::Success);
        assert!(!lasers.laser_feelings());

        let feelings = resolve(num(4), TaskType::Feelings, &[1, 3, 5, 6]);
        assert_eq!(feelings.successes, 2);
        let feelings = resolve(num(2), TaskType::Feelings, &[1]);
        assert_eq!(feelings.outcome, Outcome::Failure);
    }

    #[test]
    fn exact_number_is_laser_feelings_and_a_success() {
        let r = resolve(num(3), TaskType::Lasers, &[3, 6]);
        assert!(r.laser_feelings());
        assert_eq!(r.successes, 1);
        assert_eq!(r.outcome, Outcome::Complication);
        assert!(r.dice[0].laser_feelings && r.dice[0].success);
        assert!(!r.dice[1].success);
    }

    #[test]
    fn outcome_bands() {
        assert_eq!(Outcome::from_successes(0), Outcome::Failure);
        assert_eq!(Outcome::from_successes(1), Outcome::Complication);
        assert_eq!(Outcome::from_successes(2), Outcome::Success);
        assert_eq!(Outcome::from_successes(3), Outcome::Critical);
        assert_eq!(Outcome::from_successes(6), Outcome::Critical);
        assert!(Outcome::Complication.describe().contains("complication"));
        assert_eq!(
            serde_json::to_string(&Outcome::Critical).unwrap(),
            "\"critical\""
        );
    }

    #[test]
    fn task_type_parses_any_case_and_serializes_lowercase() {
        assert_eq!("LASERS".parse::<TaskType>().unwrap(), TaskType::Lasers);
        assert_eq!(
            " Feelings ".parse::<TaskType>().unwrap(),
            TaskType::Feelings
        );
        let err = "lazers".parse::<TaskType>().unwrap_err();
        assert!(err.to_string().contains("lasers or feelings"), "{err}");
        assert_eq!(
            serde_json::to_string(&TaskType::Feelings).unwrap(),
            "\"feelings\""
        );
        assert_eq!(TaskType::Lasers.to_string(), "LASERS");
    }

    #[test]
    fn pool_caps_prepared_and_expert_and_adds_helpers() {
        assert_eq!(action_pool(false, false, 0), 1);
        assert_eq!(action_pool(true, false, 0), 2);
        assert_eq!(action_pool(true, true, 0), 3);
        assert_eq!(action_pool(true, true, 2), 5);
        assert_eq!(action_pool(false, false, 1), 2);
    }

    #[test]
    fn helper_needs_one_success() {
        assert!(helper_succeeded(&resolve(num(5), TaskType::Lasers, &[2])));
        assert!(helper_succeeded(&resolve(num(5), TaskType::Lasers, &[5])));
        assert!(!helper_succeeded(&resolve(num(5), TaskType::Lasers, &[6])));
    }

    #[test]
    fn roll_pool_is_reproducible_and_sized() {
        let a = roll_pool(num(4), TaskType::Lasers, 3, 99);
        let b = roll_pool(num(4), TaskType::Lasers, 3, 99);
        assert_eq!(a, b);
        assert_eq!(a.dice.len(), 3);
    }

    #[test]
    fn roll_result_round_trips_through_json() {
        let r = resolve(num(2), TaskType::Feelings, &[2, 5, 1]);
        let json = serde_json::to_string(&r).unwrap();
        let back: RollResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        assert!(json.contains("\"laser_feelings\":true"), "{json}");
    }
}
