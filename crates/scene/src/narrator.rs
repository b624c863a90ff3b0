//! Narration from facts only: one template per fact, at most three sentences, then the table's
//! content preferences (lines are cut, veils go off-screen).

use troupe_rules::Band;

use crate::exec::Fact;
use crate::model::ContentPrefs;
use crate::tools::Topic;

pub const MAX_SENTENCES: usize = 3;
pub const VEILED: &str = "That moment stays off-screen.";
pub const NOTHING: &str = "The scene moves on.";

/// The narration of a tool's facts for the table.
pub fn narrate(facts: &[Fact], prefs: &ContentPrefs) -> String {
    let sentences: Vec<String> = facts.iter().flat_map(sentences).collect();
    let kept: Vec<String> = sentences
        .into_iter()
        .filter_map(|s| enforce(s, prefs))
        .map(capitalised)
        .take(MAX_SENTENCES)
        .collect();
    if kept.is_empty() {
        NOTHING.to_string()
    } else {
        kept.join(" ")
    }
}

/// The sentence with its first letter upper-case ("the mill hound goes down" starts one).
fn capitalised(sentence: String) -> String {
    let mut chars = sentence.chars();
    match chars.next() {
        Some(first) if first.is_lowercase() => first.to_uppercase().chain(chars).collect(),
        _ => sentence,
    }
}

/// A sentence under the table's lines and veils: `None` when it crosses a line.
fn enforce(sentence: String, prefs: &ContentPrefs) -> Option<String> {
    let lower = sentence.to_lowercase();
    let hits = |terms: &[String]| {
        terms
            .iter()
            .any(|t| !t.trim().is_empty() && lower.contains(&t.trim().to_lowercase()))
    };
    if hits(&prefs.lines) {
        None
    } else if hits(&prefs.veils) {
        Some(VEILED.to_string())
    } else {
        Some(sentence)
    }
}

fn band_words(band: Band) -> &'static str {
    match band {
        Band::Crit => "a critical success",
        Band::Success => "a success",
        Band::Partial => "a success at a cost",
        Band::Fail => "a failure",
    }
}

fn list(items: &[String], none: &str) -> String {
    if items.is_empty() {
        none.to_string()
    } else {
        items.join(", ")
    }
}

fn sentences(fact: &Fact) -> Vec<String> {
    match fact {
        Fact::Moved { who, from, to } => vec![format!("{who} moves from {from} to {to}.")],
        Fact::Rolled {
            who,
            action,
            dc,
            roll,
        } => vec![format!(
            "{who} tries to {action}: {} against {dc}, {}.",
            roll.total,
            band_words(roll.band)
        )],
        Fact::Hit {
            attacker,
            target,
            damage,
            down,
        } => {
            let mut s = vec![format!("{attacker} hits {target} for {damage}.")];
            if *down {
                s.push(format!("{target} goes down."));
            }
            s
        }
        Fact::Missed { attacker, target } => {
            vec![format!("{attacker}'s attack on {target} finds nothing.")]
        }
        Fact::Talked {
            who,
            target,
            topic,
            band,
        } => vec![match band {
            Band::Crit => format!("{target} is won over by {who}'s words about {topic}."),
            Band::Success => format!("{target} softens as {who} talks about {topic}."),
            Band::Partial => format!("{target} listens to {who}, but the talk draws attention."),
            Band::Fail => format!("{target} is unmoved by {who}."),
        }],
        Fact::UsedItem { who, item, target } if who == target => {
            vec![format!("{who} uses the {item}.")]
        }
        Fact::UsedItem { who, item, target } => {
            vec![format!("{who} uses the {item} on {target}.")]
        }
        Fact::Status {
            who,
            hp,
            max_hp,
            guard,
            marks,
            zone,
            clocks,
            here,
        } => vec![
            format!("{who}: {hp}/{max_hp} hp, guard {guard}, marks {marks}, in {zone}."),
            format!("Clocks: {}.", list(clocks, "none")),
            format!("Here: {}.", list(here, "no one else")),
        ],
        Fact::Sensed {
            who,
            topic,
            zone,
            features,
            here,
            exits,
            lore,
        } => sensed(who, *topic, zone, features, here, exits, lore),
        Fact::Recap { goal, clocks } => vec![
            format!("The goal: {goal}."),
            format!("Clocks: {}.", list(clocks, "none")),
        ],
        Fact::EffectsApplied { kinds } => {
            vec![format!("The GM changes the scene ({}).", kinds.join(", "))]
        }
        Fact::Question { question, options } if options.is_empty() => vec![question.clone()],
        Fact::Question { question, options } => {
            vec![format!("{question} ({})", options.join(" / "))]
        }
    }
}

fn sensed(
    who: &str,
    topic: Topic,
    zone: &str,
    features: &[String],
    here: &[String],
    exits: &[String],
    lore: &[String],
) -> Vec<String> {
    match topic {
        Topic::Look => vec![
            format!("{zone}: {}.", list(features, "nothing of note")),
            format!("{who} sees {}.", list(here, "no one else")),
            format!("Ways on: {}.", list(exits, "none")),
        ],
        Topic::Listen => vec![format!(
            "{who} listens in {zone} and hears {}.",
            if here.is_empty() {
                "nothing close".to_string()
            } else {
                format!("{} nearby", here.join(", "))
            }
        )],
        Topic::Smell => vec![format!(
            "{who} breathes in the air of {zone}: {}.",
            list(features, "nothing stands out")
        )],
        Topic::ZoomIn => {
            let mut s = vec![format!("{who} looks closely around {zone}.")];
            s.extend(lore.iter().map(|l| format!("{l}.")));
            s
        }
        Topic::Recap => Vec::new(),
    }
}
