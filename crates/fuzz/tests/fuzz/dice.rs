#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzz target: dice notation (`/roll 2d6+3` at the GM's prompt) and the rulebook's names
//! (styles, roles, ship strengths and problems) typed by a person or written in a file.

use proptest::prelude::*;
use troupe_fuzz::{config, nasty_text};
use troupe_rules::{DiceExpr, Role, ShipProblem, ShipStrength, Style, TaskType, roll_expr};

const VOCAB: &[&str] = &[
    "d",
    "D",
    "1",
    "2",
    "6",
    "20",
    "100",
    "1000",
    "1001",
    "0",
    "00",
    "+",
    "-",
    "+-",
    "--",
    "99999999999999999999",
    "d6",
    "2d6",
    "3d6+3",
    "d20-1",
    " ",
    "\u{A0}",
    "\u{3000}",
    "Android",
    "Hot-Shot",
    "hot shot",
    "Pilot",
    "Fast",
    "Fuel Hog",
];

fn parse_all(text: &str) -> Result<(), TestCaseError> {
    if let Ok(expr) = text.parse::<DiceExpr>() {
        // What parses prints in canonical form, which parses back to the same expression.
        let again: DiceExpr = expr
            .to_string()
            .parse()
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(again, expr);
        let roll = roll_expr(&expr, 7);
        prop_assert_eq!(roll.faces.len(), expr.count as usize);
        prop_assert!(roll.faces.iter().all(|f| (1..=expr.sides).contains(f)));
        let _ = roll.to_string();
    } else if let Err(e) = text.parse::<DiceExpr>() {
        let _ = e.to_string();
    }
    let _ = text.parse::<Style>().map_err(|e| e.to_string());
    let _ = text.parse::<TaskType>().map_err(|e| e.to_string());
    let _ = text.parse::<Role>().map_err(|e| e.to_string());
    let _ = text.parse::<ShipStrength>().map_err(|e| e.to_string());
    let _ = text.parse::<ShipProblem>().map_err(|e| e.to_string());
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn dice_notation_never_panics(text in nasty_text(VOCAB, 12)) {
        parse_all(&text)?;
    }
}
