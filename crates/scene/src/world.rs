//! World knowledge: entity cards with 1–3 facts, relations between them, and a truth level on
//! every fact. Canon is locked; soft-canon can be retconned; improv is a note that lasts until
//! someone promotes it (an explicit, logged event).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Truth {
    Canon,
    SoftCanon,
    Improv,
}

impl Truth {
    pub fn as_str(self) -> &'static str {
        match self {
            Truth::Canon => "canon",
            Truth::SoftCanon => "soft-canon",
            Truth::Improv => "improv",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoreFact {
    pub text: String,
    pub truth: Truth,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    pub id: String,
    pub name: String,
    pub bio: String,
    pub tags: Vec<String>,
    pub facts: Vec<LoreFact>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    pub from: String,
    pub relation: String,
    pub to: String,
    pub truth: Truth,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct World {
    pub cards: Vec<Card>,
    pub relations: Vec<Relation>,
}

/// A change the scene hands back to the campaign's world knowledge when it ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldDelta {
    pub card: String,
    pub text: String,
    pub truth: Truth,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorldError {
    #[error("no card '{0}'")]
    NoCard(String),
    #[error("card '{card}' has no fact {index}")]
    NoFact { card: String, index: usize },
    #[error("fact {index} of '{card}' is canon: canon is locked")]
    Locked { card: String, index: usize },
}

impl World {
    pub fn card(&self, id: &str) -> Option<&Card> {
        self.cards.iter().find(|c| c.id == id)
    }

    /// Up to `k` facts about the given cards (bios first, then facts canon first, then relations),
    /// for the narrator. Only the ids asked for: the caller passes what its audience has seen.
    pub fn lore_snippet(&self, ids: &[&str], k: usize) -> Vec<String> {
        let mut out: Vec<(Truth, String)> = Vec::new();
        for id in ids {
            let Some(card) = self.card(id) else { continue };
            for f in &card.facts {
                out.push((f.truth, format!("{}: {}", card.name, f.text)));
            }
        }
        for r in &self.relations {
            if ids.contains(&r.from.as_str()) && ids.contains(&r.to.as_str()) {
                out.push((r.truth, format!("{} {} {}", r.from, r.relation, r.to)));
            }
        }
        out.sort_by_key(|(t, _)| *t);
        out.into_iter().take(k).map(|(_, s)| s).collect()
    }

    /// Change a fact's truth level; canon cannot change.
    pub fn set_truth(&mut self, card: &str, index: usize, to: Truth) -> Result<Truth, WorldError> {
        let c = self
            .cards
            .iter_mut()
            .find(|c| c.id == card)
            .ok_or_else(|| WorldError::NoCard(card.to_string()))?;
        let fact = c.facts.get_mut(index).ok_or(WorldError::NoFact {
            card: card.to_string(),
            index,
        })?;
        if fact.truth == Truth::Canon {
            return Err(WorldError::Locked {
                card: card.to_string(),
                index,
            });
        }
        Ok(std::mem::replace(&mut fact.truth, to))
    }

    /// Add an improv note to a card (created if missing).
    pub fn note(&mut self, card: &str, text: &str) {
        let fact = LoreFact {
            text: text.to_string(),
            truth: Truth::Improv,
        };
        match self.cards.iter_mut().find(|c| c.id == card) {
            Some(c) => c.facts.push(fact),
            None => self.cards.push(Card {
                id: card.to_string(),
                name: card.to_string(),
                bio: String::new(),
                tags: Vec::new(),
                facts: vec![fact],
            }),
        }
    }

    /// Merge a scene's deltas into this world (the campaign's), skipping facts already there.
    pub fn merge(&mut self, deltas: &[WorldDelta]) {
        for d in deltas {
            let known = self
                .card(&d.card)
                .is_some_and(|c| c.facts.iter().any(|f| f.text == d.text));
            if known {
                continue;
            }
            self.note(&d.card, &d.text);
            if let Some(f) = self
                .cards
                .iter_mut()
                .find(|c| c.id == d.card)
                .and_then(|c| c.facts.last_mut())
            {
                f.truth = d.truth;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        World {
            cards: vec![Card {
                id: "guard".into(),
                name: "Old Tam".into(),
                bio: "Night guard".into(),
                tags: vec![],
                facts: vec![
                    LoreFact {
                        text: "drinks on duty".into(),
                        truth: Truth::Improv,
                    },
                    LoreFact {
                        text: "works for the Mill Coop".into(),
                        truth: Truth::Canon,
                    },
                ],
            }],
            relations: vec![],
        }
    }

    #[test]
    fn snippets_put_canon_first_and_stop_at_k() {
        let w = world();
        assert_eq!(
            w.lore_snippet(&["guard"], 1),
            vec!["Old Tam: works for the Mill Coop"]
        );
        assert_eq!(w.lore_snippet(&["nobody"], 3), Vec::<String>::new());
    }

    #[test]
    fn canon_is_locked_and_improv_can_be_promoted() {
        let mut w = world();
        assert_eq!(w.set_truth("guard", 0, Truth::Canon), Ok(Truth::Improv));
        assert!(matches!(
            w.set_truth("guard", 1, Truth::Improv),
            Err(WorldError::Locked { .. })
        ));
    }
}
