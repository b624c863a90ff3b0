//! Outcome tables as data (`tables.yaml`, embedded at build): a check's band → its effects.

use std::sync::OnceLock;

use serde::Deserialize;
use troupe_rules::{Band, DiceExpr};

use crate::effects::Effect;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Damage dice rolled against the target.
    #[serde(default)]
    pub damage: Option<String>,
    #[serde(default)]
    pub effects: Vec<Effect>,
    /// Whether a zone target is reached.
    #[serde(default, rename = "move")]
    pub moves: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub crit: Row,
    pub success: Row,
    pub partial: Row,
    pub fail: Row,
}

impl Table {
    pub fn row(&self, band: Band) -> &Row {
        match band {
            Band::Crit => &self.crit,
            Band::Success => &self.success,
            Band::Partial => &self.partial,
            Band::Fail => &self.fail,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tables {
    pub combat: Table,
    pub social: Table,
    pub stealth: Table,
    pub action: Table,
}

const TABLES: &str = include_str!("tables.yaml");

/// The built-in tables. A test proves the embedded file parses, so `None` never happens in a
/// released build; callers treat it as "no riders".
pub fn tables() -> Option<&'static Tables> {
    static PARSED: OnceLock<Option<Tables>> = OnceLock::new();
    PARSED
        .get_or_init(|| serde_saphyr::from_str(TABLES).ok())
        .as_ref()
}

/// A row's effects bound to the actor, target and pressure clock (dropped when there is none).
pub fn bind(row: &Row, actor: &str, target: &str, pressure: Option<&str>) -> Vec<Effect> {
    row.effects
        .iter()
        .filter_map(|e| match e {
            Effect::Clock { clock, delta } if clock == "$pressure" => {
                pressure.map(|p| Effect::Clock {
                    clock: p.to_string(),
                    delta: *delta,
                })
            }
            other => Some(other.bind(actor, target)),
        })
        .collect()
}

/// The row's damage dice, if any.
pub fn damage(row: &Row) -> Option<DiceExpr> {
    row.damage.as_deref().and_then(|d| d.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_tables_parse_and_every_damage_is_dice() {
        let t = tables().expect("tables.yaml parses");
        for table in [&t.combat, &t.social, &t.stealth, &t.action] {
            for band in Band::ALL {
                let row = table.row(band);
                if let Some(d) = &row.damage {
                    assert!(d.parse::<DiceExpr>().is_ok(), "{d}");
                }
            }
        }
        assert!(t.combat.success.damage.is_some());
    }
}
