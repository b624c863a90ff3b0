//! Facts a model drew from free text ("claims"): each checked against the words of the episode
//! it came from (a cheap guard against invention), named by its slot (subject + attribute) so a
//! later statement on the same slot contradicts it, and stored beside the raw episodes.
//!
//! An episode whose claims cover it is remembered through them; any other episode keeps its
//! raw fact (the fallback), so a poor extraction never loses what was said.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::extract::{Moment, aliases_in, episode_fact};
use crate::text::{content_words, names_in, normalise_name, untag, words};
use crate::{
    Conflict, EntityKind, Episode, Error, MemoryStore, MemoryType, NewFact, Scope, Source,
};

/// One fact a model says an episode states.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The episode it was drawn from.
    pub episode_id: String,
    pub subject: String,
    pub attribute: String,
    pub value: String,
    /// The fact as one plain sentence: what memory shows.
    pub statement: String,
    /// Whose memory it goes to: the party's for the GM's words, a character's for its own.
    pub scope: Scope,
}

/// What storing a step with claims did.
#[derive(Debug, Default)]
pub struct ClaimsStored {
    /// Claims that passed the checks.
    pub accepted: usize,
    /// Facts newly inserted, claims and raw episodes together.
    pub inserted: usize,
    /// Claims dropped, each with why: `"statement" (reason)`.
    pub dropped: Vec<String>,
    /// Episodes kept as raw facts (nothing, or too little, was drawn from them).
    pub raw_kept: usize,
    /// Contradictions the new facts met, settled by precedence.
    pub conflicts: Vec<Conflict>,
}

/// An episode is remembered only through its claims when they hold at least this share of
/// its content words; below it the raw episode is kept too.
pub const COVERAGE: f64 = 0.6;

/// The slot key of an attribute: lowercase words joined by `_`, with common synonyms folded so
/// "job" and "role" (or "whereabouts" and "location") land on the same slot.
pub fn attribute_key(attribute: &str) -> String {
    let key = words(attribute)
        .into_iter()
        .filter(|w| !matches!(w.as_str(), "the" | "a" | "an" | "is" | "current"))
        .collect::<Vec<_>>()
        .join("_");
    let folded = match key.as_str() {
        "job" | "occupation" | "position" | "title" | "rank" | "profession" | "office" => "role",
        "whereabouts" | "place" | "located" | "location_now" | "position_now" | "where" => {
            "location"
        }
        "owner" | "owned_by" | "belongs_to" => "owner",
        "allegiance" | "faction" | "side" | "loyalty" => "allegiance",
        "state" | "condition" | "health" => "status",
        _ => key.as_str(),
    };
    folded.to_string()
}

/// Whether an episode's text supports a claim at all: the subject (or another name it goes
/// by), the value and most of the statement must be words of the text. `names` are the other
/// names the subject is known by.
pub fn check_claim(text: &str, claim: &Claim, names: &[String]) -> Result<(), String> {
    for (field, v) in [
        ("subject", &claim.subject),
        ("attribute", &claim.attribute),
        ("value", &claim.value),
        ("statement", &claim.statement),
    ] {
        if v.trim().is_empty() {
            return Err(format!("empty {field}"));
        }
    }
    let text: HashSet<String> = words(&untag(text)).into_iter().collect();
    let share = |ws: &[String], extra: &HashSet<String>| -> f64 {
        if ws.is_empty() {
            return 0.0;
        }
        let found = ws
            .iter()
            .filter(|w| text.contains(*w) || extra.contains(*w))
            .count();
        found as f64 / ws.len() as f64
    };
    let none = HashSet::new();
    let subject_found = std::iter::once(&claim.subject).chain(names).any(|n| {
        let ws = words(&normalise_name(n));
        !ws.is_empty() && share(&ws, &none) >= 0.5
    });
    if !subject_found {
        return Err(format!(
            "the subject {:?} is not in the text",
            claim.subject
        ));
    }
    let value = match content_words(&claim.value) {
        ws if ws.is_empty() => words(&claim.value),
        ws => ws,
    };
    if value.is_empty() || share(&value, &none) < 0.5 {
        return Err(format!("the value {:?} is not in the text", claim.value));
    }
    // The statement may name the subject and attribute in its own words, but says nothing new.
    let allowed: HashSet<String> = words(&claim.attribute)
        .into_iter()
        .chain(names.iter().flat_map(|n| words(n)))
        .chain(words(&claim.subject))
        .collect();
    let statement = content_words(&claim.statement);
    if share(&statement, &allowed) < 0.5 {
        return Err("the statement says more than the text".to_string());
    }
    Ok(())
}

/// How much of an episode's content the accepted claims hold (0–1).
pub fn coverage(text: &str, claims: &[&Claim]) -> f64 {
    let ws = content_words(&untag(text));
    if ws.is_empty() {
        return 1.0;
    }
    let said: HashSet<String> = claims
        .iter()
        .flat_map(|c| {
            words(&c.statement)
                .into_iter()
                .chain(words(&c.value))
                .chain(words(&c.subject))
        })
        .collect();
    ws.iter().filter(|w| said.contains(*w)).count() as f64 / ws.len() as f64
}

/// Store a step's episodes with the claims drawn from them, in one transaction. Each claim is
/// checked against its episode's text and given its slot (the subject resolved to a known
/// entity where one goes by that name); an episode the accepted claims of its own memory do not
/// cover keeps its raw fact. Aliases the text teaches are learnt first, so "Galvin, the harbour
/// master" lets a claim about "the harbour master" land on Galvin's slot.
pub fn store_claims(
    store: &mut MemoryStore,
    items: &[(Episode, Source, Moment)],
    claims: &[Claim],
) -> Result<ClaimsStored, Error> {
    learn_aliases(store, items)?;

    let mut out = ClaimsStored::default();
    let mut accepted: Vec<(usize, &Claim, NewFact)> = Vec::new();
    for claim in claims {
        match place_claim(store, items, claim)? {
            Ok((i, fact)) => accepted.push((i, claim, fact)),
            Err(dropped) => out.dropped.push(dropped),
        }
    }
    out.accepted = accepted.len();
    // Claims in the order of their episodes: within a step, what was said first is older.
    accepted.sort_by_key(|(i, _, _)| *i);

    let mut facts = uncovered_episodes(items, &accepted);
    out.raw_kept = facts.len();
    facts.extend(accepted.into_iter().map(|(_, _, f)| f));
    let episodes: Vec<Episode> = items.iter().map(|(e, _, _)| e.clone()).collect();
    for s in store.store(&episodes, &facts)? {
        out.inserted += usize::from(s.inserted);
        out.conflicts.extend(s.conflicts);
    }
    Ok(out)
}

/// Learns the aliases the step's episodes teach ("Galvin, the harbour master"), each from the
/// session its episode is in, before any claim's subject is resolved against them.
fn learn_aliases(
    store: &mut MemoryStore,
    items: &[(Episode, Source, Moment)],
) -> Result<(), Error> {
    let aliases: Vec<(String, String, u32)> = items
        .iter()
        .flat_map(|(ep, _, _)| {
            aliases_in(&ep.text)
                .into_iter()
                .map(|(name, alias)| (name, alias, ep.session))
        })
        .collect();
    store.add_aliases(&aliases)
}

/// Where a claim goes: the index of its episode in `items` and the fact it becomes, or (the
/// inner `Err`) why it is dropped, as [`ClaimsStored::dropped`] words it. The outer `Err` is
/// the store failing to resolve the claim's subject.
fn place_claim(
    store: &MemoryStore,
    items: &[(Episode, Source, Moment)],
    claim: &Claim,
) -> Result<Result<(usize, NewFact), String>, Error> {
    let Some((i, (ep, source, moment))) = items
        .iter()
        .enumerate()
        .find(|(_, (ep, _, _))| ep.id == claim.episode_id)
    else {
        return Ok(Err(format!(
            "{:?} (no episode {})",
            claim.statement, claim.episode_id
        )));
    };
    // A claim never leaves the memory its episode is in (a character's feelings stay its
    // own); only what everyone heard may become one character's belief.
    if ep.scope != Scope::Party && claim.scope != ep.scope {
        return Ok(Err(format!(
            "{:?} (would leave {}'s memory)",
            claim.statement, ep.scope
        )));
    }
    let names = store.names_of(&claim.subject)?;
    if let Err(why) = check_claim(&ep.text, claim, &names) {
        return Ok(Err(format!("{:?} ({why})", claim.statement)));
    }
    let subject = names
        .first()
        .cloned()
        .unwrap_or_else(|| untag(claim.subject.trim()));
    Ok(Ok((i, claim_fact(claim, &subject, ep, *source, *moment))))
}

/// The fact an accepted claim becomes: on its slot (the resolved `subject` + the attribute),
/// naming the subject and whoever else the statement names, dated and sourced as its episode.
fn claim_fact(
    claim: &Claim,
    subject: &str,
    ep: &Episode,
    source: Source,
    moment: Moment,
) -> NewFact {
    let slot = format!(
        "{}/{}",
        normalise_name(subject),
        attribute_key(&claim.attribute)
    );
    let mut entities = vec![(subject.to_string(), EntityKind::Unknown)];
    for n in names_in(&claim.statement) {
        if normalise_name(&n) != normalise_name(subject) {
            entities.push((n, EntityKind::Unknown));
        }
    }
    NewFact {
        text: sentence(&claim.statement),
        scope: claim.scope.clone(),
        source,
        memory_type: MemoryType::Semantic,
        importance: moment.importance(),
        at: ep.at(),
        speaker: ep.speaker.clone(),
        episode_ids: vec![ep.id.clone()],
        entities,
        slot: Some(slot),
    }
}

/// The raw facts of the episodes the accepted claims of their own memory do not cover (the
/// fallback: a poor extraction never loses what was said), in the order of `items`.
fn uncovered_episodes(
    items: &[(Episode, Source, Moment)],
    accepted: &[(usize, &Claim, NewFact)],
) -> Vec<NewFact> {
    let mut facts = Vec::new();
    for (i, (ep, source, moment)) in items.iter().enumerate() {
        let own: Vec<&Claim> = accepted
            .iter()
            .filter(|(j, c, _)| *j == i && c.scope == ep.scope)
            .map(|(_, c, _)| *c)
            .collect();
        if own.is_empty() || coverage(&ep.text, &own) < COVERAGE {
            facts.push(episode_fact(ep, *source, *moment));
        }
    }
    facts
}

/// A statement as memory shows it: untagged, trimmed, ending like a sentence.
fn sentence(s: &str) -> String {
    let s = untag(s.trim());
    if s.ends_with(['.', '!', '?', '"', '”']) {
        s
    } else {
        format!("{s}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(subject: &str, attribute: &str, value: &str, statement: &str) -> Claim {
        Claim {
            episode_id: "e1".into(),
            subject: subject.into(),
            attribute: attribute.into(),
            value: value.into(),
            statement: statement.into(),
            scope: Scope::Party,
        }
    }

    #[test]
    fn a_claim_must_be_in_the_words_of_its_episode() {
        let text = "Galvin, the harbour master, waves you in.";
        let ok = claim(
            "Galvin",
            "role",
            "harbour master",
            "Galvin is the harbour master.",
        );
        assert_eq!(check_claim(text, &ok, &[]), Ok(()));
        let invented = claim("Galvin", "role", "governor", "Galvin is the governor.");
        assert!(check_claim(text, &invented, &[]).is_err());
        let stranger = claim(
            "Vos",
            "role",
            "harbour master",
            "Vos is the harbour master.",
        );
        assert!(check_claim(text, &stranger, &[]).is_err());
        let empty = claim(
            "Galvin",
            "",
            "harbour master",
            "Galvin is the harbour master.",
        );
        assert_eq!(
            check_claim(text, &empty, &[]),
            Err("empty attribute".into())
        );
        let padded = claim(
            "Galvin",
            "role",
            "harbour master",
            "Galvin is the harbour master and secretly a smuggler who sold the fleet.",
        );
        assert!(check_claim(text, &padded, &[]).is_err());
    }

    #[test]
    fn a_subject_known_by_another_name_is_found_by_it() {
        let text = "The harbour master waves you in.";
        let c = claim("Galvin", "mood", "waves", "Galvin waves you in.");
        assert!(check_claim(text, &c, &[]).is_err());
        let names = ["Galvin".to_string(), "harbour master".to_string()];
        assert_eq!(check_claim(text, &c, &names), Ok(()));
    }

    #[test]
    fn synonyms_share_a_slot() {
        assert_eq!(attribute_key("Job"), attribute_key("role"));
        assert_eq!(attribute_key("whereabouts"), "location");
        assert_eq!(attribute_key("ship name"), "ship_name");
    }

    fn ep(id: &str, turn: u32, speaker: &str, scope: Scope, text: &str) -> Episode {
        Episode {
            id: id.into(),
            session: 1,
            turn,
            day: None,
            timestamp: String::new(),
            speaker: speaker.into(),
            text: text.into(),
            scope,
        }
    }

    fn on(episode: &Episode, scope: Scope, subject: &str, value: &str, statement: &str) -> Claim {
        Claim {
            episode_id: episode.id.clone(),
            subject: subject.into(),
            attribute: "role".into(),
            value: value.into(),
            statement: statement.into(),
            scope,
        }
    }

    #[test]
    fn the_gm_closes_an_old_fact_and_a_character_cannot_override_canon() {
        let mut store = MemoryStore::in_memory().unwrap();
        let first = ep("t1", 1, "gm", Scope::Party, "Galvin is the harbour master.");
        let got = store_claims(
            &mut store,
            &[(first.clone(), Source::Gm, Moment::Narration)],
            &[on(
                &first,
                Scope::Party,
                "Galvin",
                "harbour master",
                "Galvin is the harbour master.",
            )],
        )
        .unwrap();
        assert_eq!((got.accepted, got.raw_kept), (1, 0), "{got:?}");

        let second = ep("t2", 2, "gm", Scope::Party, "Galvin is now the governor.");
        let got = store_claims(
            &mut store,
            &[(second.clone(), Source::Gm, Moment::Narration)],
            &[on(
                &second,
                Scope::Party,
                "Galvin",
                "governor",
                "Galvin is the governor.",
            )],
        )
        .unwrap();
        assert_eq!(got.conflicts.len(), 1, "{got:?}");
        let c = &got.conflicts[0];
        assert_eq!(
            (c.slot.as_str(), c.resolution.as_str()),
            ("galvin/role", "superseded")
        );
        assert_eq!((c.old_source, c.new_source), (Source::Gm, Source::Gm));
        let valid: Vec<String> = store
            .facts(&crate::Reader::All, false)
            .unwrap()
            .into_iter()
            .map(|f| f.text)
            .collect();
        assert_eq!(valid, ["Galvin is the governor."]);

        // A character insisting otherwise is remembered as its belief, not believed.
        let claim = ep(
            "t3",
            3,
            "zara",
            Scope::Party,
            "Zara-7 attempted: \"I salute Galvin, the harbour master.\"",
        );
        let got = store_claims(
            &mut store,
            &[(claim.clone(), Source::Character, Moment::Action)],
            &[on(
                &claim,
                Scope::Character("alex".into()),
                "Galvin",
                "harbour master",
                "Galvin is the harbour master.",
            )],
        )
        .unwrap();
        assert_eq!(got.conflicts.len(), 1, "{got:?}");
        assert_eq!(got.conflicts[0].resolution, "kept_old");
        assert_eq!(got.conflicts[0].old_source, Source::Gm);
        assert_eq!(got.conflicts[0].new_source, Source::Character);
        // What everyone saw the character do is still remembered by the party.
        assert_eq!(got.raw_kept, 1);
        let believed: Vec<String> = store
            .facts(&crate::Reader::Character("alex".into()), false)
            .unwrap()
            .into_iter()
            .filter(|f| f.slot.is_some())
            .map(|f| f.text)
            .collect();
        assert_eq!(believed, ["Galvin is the governor."]);
    }

    #[test]
    fn unsupported_claims_are_dropped_and_their_episode_kept_raw() {
        let mut store = MemoryStore::in_memory().unwrap();
        let e = ep(
            "t1",
            1,
            "gm",
            Scope::Party,
            "Rain falls on the dock of Port Vex.",
        );
        let got = store_claims(
            &mut store,
            &[(e.clone(), Source::Gm, Moment::Narration)],
            &[on(
                &e,
                Scope::Party,
                "Galvin",
                "governor",
                "Galvin is the governor.",
            )],
        )
        .unwrap();
        assert_eq!((got.accepted, got.raw_kept, got.dropped.len()), (0, 1, 1));
        let facts = store.facts(&crate::Reader::All, false).unwrap();
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].text, "Rain falls on the dock of Port Vex.");
    }

    #[test]
    fn a_characters_feelings_never_become_party_memory() {
        let mut store = MemoryStore::in_memory().unwrap();
        let e = ep(
            "r1",
            1,
            "zara",
            Scope::Character("alex".into()),
            "Zara-7 distrusts Galvin deeply.",
        );
        let got = store_claims(
            &mut store,
            &[(e.clone(), Source::Character, Moment::Reaction)],
            &[on(
                &e,
                Scope::Party,
                "Zara-7",
                "distrusts Galvin",
                "Zara-7 distrusts Galvin.",
            )],
        )
        .unwrap();
        assert_eq!(got.accepted, 0, "{got:?}");
        assert!(
            store
                .facts(&crate::Reader::Party, false)
                .unwrap()
                .is_empty()
        );
    }
}
