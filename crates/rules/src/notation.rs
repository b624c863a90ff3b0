//! Dice notation for the GM's `/roll`: `NdM`, `NdM+K`, `NdM-K`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{Error, roll_dice};

const MAX_COUNT: u64 = 100;
const MIN_SIDES: u64 = 2;
const MAX_SIDES: u64 = 1000;
const MAX_MODIFIER: u64 = 1_000_000;

/// A parsed dice expression such as `2d6+3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiceExpr {
    /// How many dice, 1..=100.
    pub count: u32,
    /// Sides per die, 2..=1000.
    pub sides: u32,
    /// Added to the sum of the faces; may be negative.
    pub modifier: i64,
}

impl fmt::Display for DiceExpr {
    /// Canonical form: `d20` prints as `1d20`, a zero modifier is left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}d{}", self.count, self.sides)?;
        match self.modifier {
            0 => Ok(()),
            m if m > 0 => write!(f, "+{m}"),
            m => write!(f, "{m}"),
        }
    }
}

/// Parses a run of ASCII digits; `None` if the text is empty or has anything else in it.
/// Values too long to matter saturate, so range errors still report them.
fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(text.parse::<u64>().unwrap_or(u64::MAX))
}

impl FromStr for DiceExpr {
    type Err = Error;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let compact: String = input
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        let not_notation = || Error::NotDiceNotation(input.trim().to_string());

        let (count_text, rest) = compact.split_once('d').ok_or_else(not_notation)?;
        let count = if count_text.is_empty() {
            1
        } else {
            digits(count_text).ok_or_else(not_notation)?
        };
        let (sides_text, modifier) = match rest.find(['+', '-']) {
            Some(at) => {
                let (sides_text, signed) = rest.split_at(at);
                let magnitude_text = signed.strip_prefix(['+', '-']).unwrap_or(signed);
                let magnitude = digits(magnitude_text).ok_or_else(not_notation)?;
                (sides_text, Some((signed, magnitude)))
            }
            None => (rest, None),
        };
        let sides = digits(sides_text).ok_or_else(not_notation)?;

        if !(1..=MAX_COUNT).contains(&count) {
            return Err(Error::DiceCountOutOfRange {
                input: input.trim().to_string(),
                count: count_text.to_string(),
            });
        }
        if !(MIN_SIDES..=MAX_SIDES).contains(&sides) {
            return Err(Error::DiceSidesOutOfRange {
                input: input.trim().to_string(),
                sides: sides_text.to_string(),
            });
        }
        let modifier = match modifier {
            None => 0,
            Some((signed, magnitude)) => {
                if magnitude > MAX_MODIFIER {
                    return Err(Error::ModifierOutOfRange {
                        input: input.trim().to_string(),
                        modifier: signed.to_string(),
                    });
                }
                // magnitude <= 1_000_000, so it fits an i64.
                let m = i64::try_from(magnitude).unwrap_or(0);
                if signed.starts_with('-') { -m } else { m }
            }
        };
        // Both were range-checked above, so these conversions always succeed.
        let count = u32::try_from(count).unwrap_or(1);
        let sides = u32::try_from(sides).unwrap_or(2);
        Ok(Self {
            count,
            sides,
            modifier,
        })
    }
}

/// A rolled dice expression: the faces and the total, for the log and the GM's screen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotationRoll {
    /// What was rolled.
    pub expr: DiceExpr,
    /// Every face, in the order rolled.
    pub faces: Vec<u32>,
    /// Sum of the faces plus the modifier.
    pub total: i64,
}

/// Rolls a dice expression reproducibly from `seed`.
pub fn roll_expr(expr: &DiceExpr, seed: u64) -> NotationRoll {
    let faces = roll_dice(seed, expr.count, expr.sides);
    let sum: i64 = faces.iter().map(|&f| i64::from(f)).sum();
    NotationRoll {
        expr: *expr,
        total: sum.saturating_add(expr.modifier),
        faces,
    }
}

impl fmt::Display for NotationRoll {
    /// `2d6+3: [4, 1] + 3 = 8`, so the GM sees every die, not only the total.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: [", self.expr)?;
        for (i, face) in self.faces.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{face}")?;
        }
        f.write_str("]")?;
        match self.expr.modifier {
            0 => {}
            m if m > 0 => write!(f, " + {m}")?,
            m => write!(f, " - {}", m.unsigned_abs())?,
        }
        write!(f, " = {}", self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> DiceExpr {
        s.parse().unwrap()
    }

    fn expr(count: u32, sides: u32, modifier: i64) -> DiceExpr {
        DiceExpr {
            count,
            sides,
            modifier,
        }
    }

    #[test]
    fn accepts_the_usual_forms() {
        assert_eq!(parse("2d6+3"), expr(2, 6, 3));
        assert_eq!(parse("d20"), expr(1, 20, 0));
        assert_eq!(parse("1d6-1"), expr(1, 6, -1));
        assert_eq!(parse("3D6"), expr(3, 6, 0));
        assert_eq!(parse(" 2 d 6 + 3 "), expr(2, 6, 3));
        assert_eq!(parse("100d1000"), expr(100, 1000, 0));
        assert_eq!(parse("1d2-1000000"), expr(1, 2, -1_000_000));
    }

    #[test]
    fn malformed_text_explains_the_expected_shape() {
        for bad in [
            "2d", "d", "", "2x6", "six", "2d6+", "2d6++3", "2d6+3d4", "-2d6", "2.5d6", "2d6*2",
            "2dd6", "+3",
        ] {
            let err = bad.parse::<DiceExpr>().unwrap_err();
            assert!(matches!(err, Error::NotDiceNotation(_)), "{bad}: {err:?}");
        }
        assert_eq!(
            "2d".parse::<DiceExpr>().unwrap_err().to_string(),
            "'2d' is not dice notation: expected NdM, NdM+K or NdM-K, e.g. 2d6+3"
        );
    }

    #[test]
    fn too_many_or_too_few_dice_is_a_count_error() {
        for bad in ["0d6", "101d6", "99999999999999999999999d6"] {
            let err = bad.parse::<DiceExpr>().unwrap_err();
            assert!(
                matches!(err, Error::DiceCountOutOfRange { .. }),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains("1 to 100"), "{err}");
        }
    }

    #[test]
    fn silly_die_sizes_are_a_sides_error() {
        for bad in ["1d1", "1d0", "1d1001"] {
            let err = bad.parse::<DiceExpr>().unwrap_err();
            assert!(
                matches!(err, Error::DiceSidesOutOfRange { .. }),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains("2 to 1000"), "{err}");
        }
    }

    #[test]
    fn huge_modifier_is_rejected() {
        let err = "1d6+1000001".parse::<DiceExpr>().unwrap_err();
        assert!(matches!(err, Error::ModifierOutOfRange { .. }), "{err:?}");
    }

    #[test]
    fn display_is_canonical() {
        assert_eq!(parse("d20").to_string(), "1d20");
        assert_eq!(parse("2D6 + 3").to_string(), "2d6+3");
        assert_eq!(parse("1d6-1").to_string(), "1d6-1");
        assert_eq!(parse("2d6+0").to_string(), "2d6");
    }

    #[test]
    fn roll_shows_every_face_and_the_total() {
        let roll = NotationRoll {
            expr: expr(2, 6, 3),
            faces: vec![4, 1],
            total: 8,
        };
        assert_eq!(roll.to_string(), "2d6+3: [4, 1] + 3 = 8");
        let roll = NotationRoll {
            expr: expr(1, 6, -1),
            faces: vec![4],
            total: 3,
        };
        assert_eq!(roll.to_string(), "1d6-1: [4] - 1 = 3");
    }

    #[test]
    fn roll_expr_sums_faces_and_modifier_reproducibly() {
        let e = parse("3d6-2");
        let a = roll_expr(&e, 11);
        assert_eq!(a, roll_expr(&e, 11));
        assert_eq!(a.faces.len(), 3);
        assert!(a.faces.iter().all(|f| (1..=6).contains(f)));
        let sum: i64 = a.faces.iter().map(|&f| i64::from(f)).sum();
        assert_eq!(a.total, sum - 2);
    }
}
