//! The game's fixed lists: styles, roles, ship strengths and problems, the standard kit and goals.
//!
//! Each list is an enum so a typo in a campaign file is caught at load time, and each value keeps
//! the rulebook's spelling for display, prompts and files.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Error;

/// What every Consortium crew member carries, per the rulebook.
pub const STANDARD_KIT: &[&str] = &[
    "Consortium uniform (with built-in vacc-suit for space walks)",
    "space-phone-camera-communicator-scanner (with universal translator)",
    "variable-beam phase pistol (set to stun, usually)",
];

/// Every player's goal, per the rulebook.
pub const PLAYER_GOAL: &str =
    "Get your character involved in crazy space adventures and try to make the best of them.";

/// The rulebook's suggested character goals (players may also write their own).
pub const CHARACTER_GOALS: &[&str] = &[
    "Become Captain",
    "Meet New Aliens",
    "Shoot Bad Guys",
    "Find New Worlds",
    "Solve Weird Space Mysteries",
    "Prove Yourself",
    "Keep Being Awesome",
];

/// Lowercase with everything but letters and digits removed, so "Hot-Shot", "hotshot" and
/// "hot shot" all match.
fn fold(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

macro_rules! vocab {
    (
        $(#[$meta:meta])*
        $name:ident, $kind:literal, { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in rulebook order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The rulebook spelling.
            pub const fn as_str(&self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }

            /// The rulebook list, comma separated, for error messages and prompts.
            pub fn allowed() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = Error;

            /// Case-, space- and hyphen-insensitive.
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let key = fold(s);
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| !key.is_empty() && fold(v.as_str()) == key)
                    .ok_or_else(|| Error::UnknownWord {
                        kind: $kind,
                        input: s.to_string(),
                        allowed: Self::allowed(),
                    })
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

vocab! {
    /// A character's style: how they do things.
    Style, "style", {
        Alien => "Alien",
        Android => "Android",
        Dangerous => "Dangerous",
        Heroic => "Heroic",
        HotShot => "Hot-Shot",
        Intrepid => "Intrepid",
        Savvy => "Savvy",
    }
}

vocab! {
    /// A character's role aboard the ship.
    Role, "role", {
        Doctor => "Doctor",
        Envoy => "Envoy",
        Engineer => "Engineer",
        Explorer => "Explorer",
        Pilot => "Pilot",
        Scientist => "Scientist",
        Soldier => "Soldier",
    }
}

vocab! {
    /// One of the ship's two strengths (narrative only: no dice effect).
    ShipStrength, "ship strength", {
        Fast => "Fast",
        Nimble => "Nimble",
        WellArmed => "Well-Armed",
        PowerfulShields => "Powerful Shields",
        SuperiorSensors => "Superior Sensors",
        CloakingDevice => "Cloaking Device",
        Fightercraft => "Fightercraft",
    }
}

vocab! {
    /// The ship's one problem (narrative only: no dice effect).
    ShipProblem, "ship problem", {
        FuelHog => "Fuel Hog",
        OnlyOneMedicalPod => "Only One Medical Pod",
        HorribleCircuitBreakers => "Horrible Circuit Breakers",
        GrimReputation => "Grim Reputation",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_shot_is_accepted_in_any_spelling() {
        for s in ["Hot-Shot", "hotshot", "hot shot", "HOT-SHOT", " Hot Shot "] {
            assert_eq!(s.parse::<Style>().unwrap(), Style::HotShot, "{s}");
        }
        assert_eq!(Style::HotShot.to_string(), "Hot-Shot");
    }

    #[test]
    fn multi_word_values_parse_loosely_and_print_as_the_rulebook() {
        assert_eq!(
            "well armed".parse::<ShipStrength>().unwrap(),
            ShipStrength::WellArmed
        );
        assert_eq!(
            "only-one-medical-pod".parse::<ShipProblem>().unwrap(),
            ShipProblem::OnlyOneMedicalPod
        );
        assert_eq!(ShipStrength::PowerfulShields.as_str(), "Powerful Shields");
    }

    #[test]
    fn unknown_word_lists_what_is_allowed() {
        let err = "Maneuverable".parse::<ShipStrength>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "'Maneuverable' is not a ship strength; allowed: Fast, Nimble, Well-Armed, \
             Powerful Shields, Superior Sensors, Cloaking Device, Fightercraft"
        );
        assert!("".parse::<Role>().is_err());
        assert!("Captain".parse::<Role>().is_err());
    }

    #[test]
    fn lists_match_the_rulebook() {
        assert_eq!(Style::ALL.len(), 7);
        assert_eq!(Role::ALL.len(), 7);
        assert_eq!(ShipStrength::ALL.len(), 7);
        assert_eq!(ShipProblem::ALL.len(), 4);
    }

    #[test]
    fn serde_uses_the_rulebook_string() {
        assert_eq!(
            serde_json::to_string(&Style::HotShot).unwrap(),
            "\"Hot-Shot\""
        );
        assert_eq!(
            serde_json::from_str::<ShipProblem>("\"Grim Reputation\"").unwrap(),
            ShipProblem::GrimReputation
        );
        let err = serde_json::from_str::<Role>("\"Janitor\"").unwrap_err();
        assert!(err.to_string().contains("allowed: Doctor"), "{err}");
    }
}
