//! PLACEHOLDER until the helper's branch `checks` merges (it replaces this file).
use serde::{Deserialize, Serialize};

use crate::Edge;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Natural {
    One,
    Twenty,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct D20Check {
    pub dc: i32,
    pub modifier: i32,
    pub edge: Edge,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct D20Roll {
    pub dice: Vec<u32>,
    pub kept: u32,
    pub total: i32,
    pub dc: i32,
    pub success: bool,
    pub natural: Option<Natural>,
}

pub fn roll_d20(check: &D20Check, seed: u64) -> D20Roll {
    let n = if check.edge == Edge::Normal { 1 } else { 2 };
    let dice = crate::roll_dice(seed, n, 20);
    let kept = match check.edge {
        Edge::Disadvantage => dice.iter().copied().min().unwrap_or(1),
        _ => dice.iter().copied().max().unwrap_or(1),
    };
    let total = i32::try_from(kept).unwrap_or(1) + check.modifier;
    let natural = match kept {
        1 => Some(Natural::One),
        20 => Some(Natural::Twenty),
        _ => None,
    };
    D20Roll {
        success: natural != Some(Natural::One)
            && (natural == Some(Natural::Twenty) || total >= check.dc),
        dice,
        kept,
        total,
        dc: check.dc,
        natural,
    }
}
