//! Narration from facts only: one template per fact, at most three sentences, then the table's
//! content preferences (lines are cut, veils go off-screen).

use troupe_rules::Band;

use crate::exec::Fact;
use crate::model::{ContentPrefs, State};
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
            "{who} listens and hears {}.",
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

/// Why a model's polish of the narration was not used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PolishRejected {
    #[error("it has {0} sentences (1 to {MAX_SENTENCES})")]
    Length(usize),
    #[error("it states the number {0}, which the facts do not")]
    Number(String),
    #[error("it names {0}, who is not in the facts")]
    Name(String),
    #[error("it says the opposite of the roll ({0})")]
    Contradiction(String),
    #[error("it crosses the table's lines or veils")]
    Content,
}

/// Check a model's rewrite of `template` (the narration of `facts`): it may change the words,
/// never the facts. It must keep to 1–3 sentences, add no number, name no one the template
/// does not (`names`: every entity in the scene, hidden ones included), not turn a failure
/// into a success or back, and respect lines and veils. The caller falls back to the template.
pub fn check_polish(
    facts: &[Fact],
    template: &str,
    polished: &str,
    names: &[&str],
    prefs: &ContentPrefs,
) -> Result<String, PolishRejected> {
    let polished = polished.trim();
    let sentences = polished
        .split_terminator(['.', '!', '?'])
        .filter(|s| !s.trim().is_empty())
        .count();
    if sentences == 0 || sentences > MAX_SENTENCES {
        return Err(PolishRejected::Length(sentences));
    }
    for number in polished
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
    {
        if !template
            .split(|c: char| !c.is_ascii_digit())
            .any(|t| t == number)
        {
            return Err(PolishRejected::Number(number.to_string()));
        }
    }
    let lower = polished.to_lowercase();
    let template_lower = template.to_lowercase();
    for name in names {
        let n = name.to_lowercase();
        if !n.is_empty() && lower.contains(&n) && !template_lower.contains(&n) {
            return Err(PolishRejected::Name((*name).to_string()));
        }
    }
    contradiction(facts, &lower)?;
    let crosses = |terms: &[String]| {
        terms
            .iter()
            .any(|t| !t.trim().is_empty() && lower.contains(&t.trim().to_lowercase()))
    };
    if crosses(&prefs.lines) || crosses(&prefs.veils) {
        return Err(PolishRejected::Content);
    }
    Ok(polished.to_string())
}

fn contradiction(facts: &[Fact], lower: &str) -> Result<(), PolishRejected> {
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    for fact in facts {
        let (band, missed) = match fact {
            Fact::Rolled { roll, .. } => (Some(roll.band), false),
            Fact::Missed { .. } => (None, true),
            _ => continue,
        };
        let failed = missed || band == Some(Band::Fail);
        if failed && has(&["succeed", "success", "hits ", "lands"]) {
            return Err(PolishRejected::Contradiction("it failed".into()));
        }
        if matches!(band, Some(Band::Success | Band::Crit)) && has(&["fail", "misses", "miss "]) {
            return Err(PolishRejected::Contradiction("it succeeded".into()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod unbacked_tests {
    use super::*;

    fn mill() -> State {
        let text = include_str!("../../../examples/mill.scene.yaml");
        let def = crate::check(text).unwrap_or_else(|p| panic!("{p:?}"));
        crate::Scene::start(def, 1).state
    }

    /// What `unbacked` finds in a sentence said at the mill's start, with the engine's
    /// narration of what the reply's tools did.
    fn said_at_the_mill() -> impl Fn(&str, &[&str]) -> Option<String> {
        let state = mill();
        move |sentence, applied| {
            let applied: Vec<String> = applied.iter().map(|a| a.to_string()).collect();
            unbacked(sentence, &state, &applied)
        }
    }

    #[test]
    fn a_defeat_or_harm_the_engine_did_not_deal_is_named() {
        let said = said_at_the_mill();
        assert!(
            said("The hound yelps and dies.", &[])
                .unwrap()
                .contains("the mill hound")
        );
        assert!(said("Old Tam collapses, unconscious.", &[]).is_some());
        assert!(said("Vesk takes 4 damage.", &[]).is_some());
        assert_eq!(
            said("Vesk takes 4 damage.", &["Wren hits Vesk for 4."]),
            None
        );
        assert_eq!(said("The hound snarls at the mill road.", &[]), None);
        assert_eq!(said("Wren has 12 hit points left.", &[]), None);
        assert_eq!(said("The dead leaves stir in the yard.", &[]), None);
    }

    #[test]
    fn a_move_a_taking_or_a_clock_the_engine_did_not_make_is_named() {
        let said = said_at_the_mill();
        // Positions: Old Tam is in the yard, Wren on the road.
        let claim = said("Old Tam climbs into the hay loft.", &[]).unwrap();
        assert!(
            claim.contains("Old Tam") && claim.contains("the mill yard"),
            "{claim}"
        );
        assert!(said("Wren walks into the mill yard.", &[]).is_some());
        assert_eq!(
            said("Old Tam walks across the yard.", &[]),
            None,
            "he is there"
        );
        assert_eq!(said("Wren walks toward the yard, slowly.", &[]), None);
        assert_eq!(said("The hound snarls at the mill road.", &[]), None);
        assert_eq!(
            said("Wren drags Old Tam into the loft.", &[]),
            None,
            "two people: whose move is not clear"
        );
        // Items: Wren carries the tonic and the lockpick; Tam carries nothing.
        let claim = said("Old Tam pockets the bitter tonic.", &[]).unwrap();
        assert!(claim.contains("carries none"), "{claim}");
        assert_eq!(said("Wren takes out her bent lockpick.", &[]), None);
        // Clocks: the alarm stands at 0 of 6.
        let claim = said("The alarm sounds across the mill.", &[]).unwrap();
        assert!(claim.contains("0/6"), "{claim}");
        assert_eq!(said("The alarm clock ticks forward.", &[]), None);
        assert_eq!(said("Nobody has raised a voice.", &[]), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use troupe_rules::{CheckRoll, band_for};

    fn rolled(band_margin: i32) -> Vec<Fact> {
        let roll = CheckRoll {
            seed: 1,
            d20s: vec![10],
            kept: 10,
            domain_dice: vec![3],
            total: 13,
            margin: band_margin,
            band: band_for(10, band_margin),
        };
        vec![Fact::Rolled {
            who: "Wren".into(),
            action: "climb".into(),
            dc: 13 - band_margin,
            roll,
        }]
    }

    #[test]
    fn a_polish_that_keeps_the_facts_is_used() {
        let facts = rolled(0);
        let template = narrate(&facts, &ContentPrefs::default());
        let polished = "Wren hauls herself up the wall: 13 against 13, and she makes it.";
        assert_eq!(
            check_polish(
                &facts,
                &template,
                polished,
                &["Wren"],
                &ContentPrefs::default()
            ),
            Ok(polished.to_string())
        );
    }

    #[test]
    fn a_polish_that_adds_or_contradicts_a_fact_is_refused() {
        let facts = rolled(-6);
        let template = narrate(&facts, &ContentPrefs::default());
        let prefs = ContentPrefs {
            lines: vec![],
            veils: vec!["blood".into()],
        };
        let names = ["Wren", "Vesk the smuggler"];
        let check = |p: &str| check_polish(&facts, &template, p, &names, &prefs);
        assert!(matches!(
            check("Wren takes 4 damage."),
            Err(PolishRejected::Number(_))
        ));
        assert!(matches!(
            check("Wren spots Vesk the smuggler."),
            Err(PolishRejected::Name(_))
        ));
        assert!(matches!(
            check("Wren succeeds with ease."),
            Err(PolishRejected::Contradiction(_))
        ));
        assert!(matches!(
            check("There is blood."),
            Err(PolishRejected::Content)
        ));
        assert!(matches!(
            check("One. Two. Three. Four."),
            Err(PolishRejected::Length(4))
        ));
        assert!(check("Wren slips and the wall wins.").is_ok());
    }
}

/// Words that tell a person is out of the fight.
const DEFEAT_WORDS: &[&str] = &[
    "collapses",
    "dead",
    "defeated",
    "died",
    "dies",
    "killed",
    "lifeless",
    "slain",
    "unconscious",
];
/// Words that tell hit points were lost or won.
const HARM_WORDS: &[&str] = &["damage", "heals", "hp", "points", "wound", "wounds"];
/// Words that tell someone changes place.
const MOVE_WORDS: &[&str] = &[
    "arrives", "climbs", "crawls", "crosses", "dashes", "enters", "flees", "goes", "heads",
    "moves", "reaches", "retreats", "runs", "slips", "sneaks", "steps", "walks",
];
/// Words that put the mover in a place ("into the loft", "enters the yard").
const PLACE_WORDS: &[&str] = &[
    "at", "enters", "in", "inside", "into", "onto", "reaches", "through", "to", "up",
];
/// Words that tell someone comes to hold a thing.
const TAKE_WORDS: &[&str] = &[
    "carries", "catches", "gets", "grabs", "holds", "pockets", "picks", "receives", "snatches",
    "takes",
];
/// Words that tell a clock has run out.
const CLOCK_DONE_WORDS: &[&str] = &["blares", "complete", "full", "raised", "rings", "sounds"];
/// Words of a name that do not name anyone on their own.
const TITLES: &[&str] = &[
    "captain", "lady", "lord", "mister", "old", "sir", "the", "young",
];

/// What one sentence of a GM's narration claims that the scene engine does not hold (issue 33:
/// the model proposes, the engine decides): a person out of the fight whom `state` (the scene
/// after the reply's own tools) has standing, or a number of hit points or damage that neither
/// `applied` (the engine's narration of what the reply's tools did) nor anyone's hit points
/// say. None when the sentence keeps to the facts.
pub fn unbacked(sentence: &str, state: &State, applied: &[String]) -> Option<String> {
    let lower = sentence.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.iter().any(|w| DEFEAT_WORDS.contains(w)) {
        let standing = state
            .entities
            .values()
            .filter(|e| e.kind.is_person() && e.alive())
            .find(|e| named(&words, &e.name));
        if let Some(e) = standing {
            return Some(format!(
                "it tells {} is out of the fight, but the scene engine has {} standing at {}/{} \
                 hit points: deal harm with a tool, then narrate what the engine says",
                e.name, e.name, e.hp, e.max_hp
            ));
        }
    }
    if let Some(claim) = moved(&words, state)
        .or_else(|| taken(&words, state))
        .or_else(|| clocked(&words, state))
    {
        return Some(claim);
    }
    if words.iter().any(|w| HARM_WORDS.contains(w)) {
        let known = |n: i32| {
            applied.iter().any(|a| numbers(a).contains(&n))
                || state.entities.values().any(|e| e.hp == n || e.max_hp == n)
        };
        if let Some(n) = numbers(&lower).into_iter().find(|n| !known(*n)) {
            return Some(format!(
                "it tells {n} points of harm or healing that the scene engine did not deal"
            ));
        }
    }
    None
}

/// The one person a sentence names, when it names exactly one.
fn the_person<'a>(words: &[&str], state: &'a State) -> Option<&'a crate::model::Entity> {
    let mut named_here = state
        .entities
        .values()
        .filter(|e| e.kind.is_person() && e.alive() && named(words, &e.name));
    let one = named_here.next()?;
    named_here.next().is_none().then_some(one)
}

/// A person told to go somewhere the engine does not have them: a move word, and a place the
/// sentence puts them in ("into the hay loft") other than their zone.
fn moved(words: &[&str], state: &State) -> Option<String> {
    if !words.iter().any(|w| MOVE_WORDS.contains(w)) {
        return None;
    }
    let who = the_person(words, state)?;
    let place = state
        .zones
        .values()
        .filter(|z| z.id != who.zone)
        .find(|z| placed_in(words, &z.name))?;
    let at = state
        .zones
        .get(&who.zone)
        .map_or(who.zone.as_str(), |z| z.name.as_str());
    Some(format!(
        "it tells {} goes to {}, but the scene engine has {} in {at}: move with a tool, then \
         narrate what the engine says",
        who.name, place.name, who.name
    ))
}

/// The place named right after a word that puts someone there ("into the loft").
fn placed_in(words: &[&str], place: &str) -> bool {
    let head = place
        .split(|c: char| !c.is_alphanumeric())
        .rfind(|w| !w.is_empty())
        .map(str::to_lowercase);
    let Some(head) = head else {
        return false;
    };
    words.iter().enumerate().any(|(i, w)| {
        *w == head
            && words
                .get(i.saturating_sub(4)..i)
                .is_some_and(|before| before.iter().any(|b| PLACE_WORDS.contains(b)))
    })
}

/// A person told to take or hold an item the engine's inventory does not give them.
fn taken(words: &[&str], state: &State) -> Option<String> {
    if !words.iter().any(|w| TAKE_WORDS.contains(w)) {
        return None;
    }
    let who = the_person(words, state)?;
    let item = state.items.values().find(|i| named(words, &i.name))?;
    if who.inventory.get(&item.id).copied().unwrap_or(0) > 0 {
        return None;
    }
    Some(format!(
        "it tells {} has {}, but the scene engine's {} carries none: give it with a tool, then \
         narrate what the engine says",
        who.name, item.name, who.name
    ))
}

/// A clock told to have run out that the engine has short of full. (A clock told to move is
/// not checked: the state after the reply's tools does not say whether they moved it.)
fn clocked(words: &[&str], state: &State) -> Option<String> {
    let clock = state
        .clocks
        .values()
        .find(|c| named(words, &c.name) || words.contains(&c.id.as_str()))?;
    (words.iter().any(|w| CLOCK_DONE_WORDS.contains(w)) && clock.value < clock.size).then(|| {
        format!(
            "it tells the {} has run out, but the scene engine's clock stands at {}/{}: move it \
             with a tool, then narrate what the engine says",
            clock.name, clock.value, clock.size
        )
    })
}

/// `name` among `words`: whole, or by the word a narration calls it by: a proper name's
/// capitalised words ("Vesk the smuggler": Vesk; "Old Tam": Tam), a common noun's head ("the
/// mill hound": hound).
fn named(words: &[&str], name: &str) -> bool {
    let parts: Vec<&str> = name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let lower: Vec<String> = parts.iter().map(|w| w.to_lowercase()).collect();
    if !lower.is_empty() && words.windows(lower.len()).any(|w| w == lower.as_slice()) {
        return true;
    }
    let common = parts
        .first()
        .is_some_and(|w| w.chars().next().is_some_and(char::is_lowercase));
    let callers: Vec<String> = if common {
        lower.last().cloned().into_iter().collect()
    } else {
        parts
            .iter()
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .map(|w| w.to_lowercase())
            .filter(|w| !TITLES.contains(&w.as_str()))
            .collect()
    };
    callers.iter().any(|c| words.contains(&c.as_str()))
}

fn numbers(text: &str) -> Vec<i32> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect()
}
