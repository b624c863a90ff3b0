//! How sure a memory is (confidence), and how likely it is to come back wrong (corruption).
//!
//! Confidence (seed 001 FR-007) comes from the source's authority and decays with age: GM
//! narration and game records stay at 1.0; a player's observation starts at 0.9 and decays
//! towards 0.7; a character's interpretation starts at 0.7 and decays towards 0.5, faster.
//! Age is counted in sessions (in-game days are added when the GM tracks them).
//!
//! Corruption (seed 000): p = personality × time × importance × rehearsal × global strength,
//! capped at 0.95, applied at retrieval when enabled, deterministically from the session seed.
//! The stored fact is never changed: a corrupted result carries the original beside it.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Fact, Source};

/// Age of a memory, in sessions and (when tracked) in-game days.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Age {
    pub sessions: u32,
    pub days: Option<u32>,
}

/// Confidence in a fact of this source and age: 0–1.
pub fn confidence(source: Source, age: Age) -> f64 {
    // (start, floor, sessions for the excess over the floor to fall by 1/e)
    let (start, floor, tau) = match source {
        Source::Gm | Source::Game => return 1.0,
        Source::Player | Source::Import => (0.9, 0.7, 6.0),
        Source::Character => (0.7, 0.5, 2.0),
    };
    // A tracked in-game week counts like a session: memory fades with story time too.
    let t = f64::from(age.sessions) + age.days.map_or(0.0, |d| f64::from(d) / 7.0);
    floor + (start - floor) * (-t / tau).exp()
}

/// The personality traits that shape corruption.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rememberer {
    /// 0–1: meticulous players forget details less.
    pub detail_oriented: f64,
    /// 0–1: how much mood colours recall.
    pub emotional_memory: f64,
    /// Base corruption rate before modifiers (seed default 0.5).
    pub base_decay_rate: f64,
}

/// Seed 000's probability that a memory comes back corrupted, capped at 0.95.
///
/// `days_since` is in-game days since the memory formed; `importance` 0–1; `rehearsals` how
/// often it was recalled (20 makes it immune); `strength` the campaign's global setting 0–1.
pub fn corruption_probability(
    who: &Rememberer,
    days_since: u32,
    importance: f64,
    rehearsals: u32,
    strength: f64,
) -> f64 {
    let time = 1.0 - (-f64::from(days_since) / 365.0).exp();
    let importance_mod = 1.5 - importance.clamp(0.0, 1.0);
    let rehearsal = (1.0 - f64::from(rehearsals) * 0.05).max(0.0);
    let personality = who.base_decay_rate * (1.0 + (0.5 - who.detail_oriented));
    let p = personality * time * importance_mod * rehearsal * strength.clamp(0.0, 1.0);
    p.clamp(0.0, 0.95)
}

/// Seed 000's kinds of corruption.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CorruptionType {
    DetailDrift,
    EmotionalColoring,
    Conflation,
    Simplification,
    FalseConfidence,
}

/// A recalled fact as the rememberer got it back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Corruption {
    pub kind: CorruptionType,
    pub probability: f64,
    /// The corrupted text; the original stays in the result's `fact`.
    pub text: String,
}

/// Decide, deterministically from `seed` and the fact, whether this recall is corrupted, and how.
///
/// The transformation is textual and rule-based (no model call), so a session replays exactly.
/// `other` is another recalled fact, used for conflation.
pub fn corrupt(
    fact: &Fact,
    who: &Rememberer,
    days_since: u32,
    strength: f64,
    seed: u64,
    other: Option<&str>,
) -> Option<Corruption> {
    let probability =
        corruption_probability(who, days_since, fact.importance, fact.rehearsals, strength);
    if probability <= 0.0 {
        return None;
    }
    let mut rng = fact_rng(seed, fact.id, fact.rehearsals);
    let draw = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    if draw >= probability {
        return None;
    }
    let kind = pick_kind(who, &mut rng, other.is_some());
    let text = match kind {
        CorruptionType::DetailDrift => drift(&fact.text, &mut rng),
        CorruptionType::EmotionalColoring => colour(&fact.text, who, &mut rng),
        CorruptionType::Conflation => conflate(&fact.text, other.unwrap_or_default()),
        CorruptionType::Simplification => simplify(&fact.text),
        CorruptionType::FalseConfidence => embellish(&fact.text, &mut rng),
    };
    // A transformation that changed nothing (no number to drift, nothing to simplify) falls back
    // to simplification's sibling: mood colouring, which always changes the text.
    let text = if text == fact.text {
        colour(&fact.text, who, &mut rng)
    } else {
        text
    };
    Some(Corruption {
        kind,
        probability,
        text,
    })
}

fn fact_rng(seed: u64, fact: i64, rehearsals: u32) -> ChaCha8Rng {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(fact.to_le_bytes());
    h.update(rehearsals.to_le_bytes());
    let digest: [u8; 32] = h.finalize().into();
    ChaCha8Rng::from_seed(digest)
}

fn pick_kind(who: &Rememberer, rng: &mut ChaCha8Rng, can_conflate: bool) -> CorruptionType {
    // Weights follow the rememberer: mood-driven minds colour, careless ones simplify and drift.
    let careless = 1.0 - who.detail_oriented.clamp(0.0, 1.0);
    let mut kinds = vec![
        (CorruptionType::DetailDrift, 0.2 + careless),
        (
            CorruptionType::EmotionalColoring,
            0.2 + who.emotional_memory.clamp(0.0, 1.0),
        ),
        (CorruptionType::Simplification, 0.2 + careless * 0.5),
        (CorruptionType::FalseConfidence, 0.3),
    ];
    if can_conflate {
        kinds.push((CorruptionType::Conflation, 0.3));
    }
    let total: f64 = kinds.iter().map(|(_, w)| w).sum();
    let mut x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
    for (k, w) in &kinds {
        if x < *w {
            return *k;
        }
        x -= w;
    }
    CorruptionType::FalseConfidence
}

/// Change one number (or, with none, one word of quantity) a little.
fn drift(text: &str, rng: &mut ChaCha8Rng) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut changed = false;
    let mut digits = String::new();
    let flush =
        |digits: &mut String, out: &mut String, changed: &mut bool, rng: &mut ChaCha8Rng| {
            if digits.is_empty() {
                return;
            }
            if !*changed && let Ok(n) = digits.parse::<u64>() {
                let step = (n / 5).max(1) + rng.next_u64() % 3;
                let m = if rng.next_u64().is_multiple_of(2) || n < step {
                    n + step
                } else {
                    n - step
                };
                out.push_str(&m.to_string());
                *changed = true;
            } else {
                out.push_str(digits);
            }
            digits.clear();
        };
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            flush(&mut digits, &mut out, &mut changed, rng);
            out.push(c);
        }
    }
    flush(&mut digits, &mut out, &mut changed, rng);
    if changed {
        return out;
    }
    const SWAPS: &[(&str, &str)] = &[
        (" two ", " three "),
        (" three ", " four "),
        (" four ", " two "),
        (" north", " south"),
        (" south", " north"),
        (" east", " west"),
        (" west", " east"),
        (" left", " right"),
        (" right", " left"),
        (" before ", " after "),
        (" after ", " before "),
    ];
    for (a, b) in SWAPS {
        if text.contains(a) {
            return text.replacen(a, b, 1);
        }
    }
    text.to_string()
}

fn colour(text: &str, who: &Rememberer, rng: &mut ChaCha8Rng) -> String {
    const WARM: &[&str] = &[
        "It felt like a good sign at the time:",
        "I remember feeling hopeful when",
        "Somehow it all seemed friendlier than it was:",
    ];
    const COLD: &[&str] = &[
        "It still makes me uneasy:",
        "I remember a bad feeling about it:",
        "Something about it felt wrong:",
    ];
    let pool = if who.emotional_memory >= 0.5 || rng.next_u64().is_multiple_of(2) {
        COLD
    } else {
        WARM
    };
    let lead = pick(pool, rng);
    format!("{lead} {}", lower_first(text))
}

fn conflate(text: &str, other: &str) -> String {
    let a = first_clause(text);
    let b = other.trim().trim_end_matches('.');
    if b.is_empty() {
        return text.to_string();
    }
    format!("{a}, around when {}", lower_first(b))
}

fn simplify(text: &str) -> String {
    let a = first_clause(text);
    if a.len() + 1 >= text.trim_end_matches('.').len() {
        return text.to_string();
    }
    format!("{a}.")
}

fn embellish(text: &str, rng: &mut ChaCha8Rng) -> String {
    const ADDED: &[&str] = &[
        "I'm certain it was at night",
        "and there were at least three guards",
        "and they mentioned a reward",
        "and the ship's alarms were going off",
        "and someone was watching us",
    ];
    let add = pick(ADDED, rng);
    format!("{} — {add}.", text.trim().trim_end_matches('.'))
}

fn first_clause(text: &str) -> &str {
    let t = text.trim();
    let cut = t
        .find([',', ';', ':'])
        .or_else(|| t.find(" and "))
        .or_else(|| t.find(" but "))
        .unwrap_or(t.len());
    t.get(..cut).unwrap_or(t).trim().trim_end_matches('.')
}

/// One of `list`, drawn from `rng`.
fn pick(list: &[&'static str], rng: &mut ChaCha8Rng) -> &'static str {
    let i = rng.next_u64() % list.len().max(1) as u64;
    list.get(i as usize).copied().unwrap_or_default()
}

fn lower_first(s: &str) -> String {
    let mut c = s.trim().chars();
    match c.next() {
        // Keep names and "I" capitalised: lower only a common first word.
        Some(f) if f.is_uppercase() && starts_common_word(s.trim()) => {
            f.to_lowercase().chain(c).collect()
        }
        Some(f) => std::iter::once(f).chain(c).collect(),
        None => String::new(),
    }
}

fn starts_common_word(s: &str) -> bool {
    let w = s
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default();
    matches!(
        w,
        "The" | "A" | "An" | "We" | "They" | "He" | "She" | "It" | "There" | "Our" | "This"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GameTime, MemoryType, Scope, TruthLevel};

    fn fact(text: &str, importance: f64, rehearsals: u32) -> Fact {
        Fact {
            id: 7,
            text: text.to_string(),
            scope: Scope::Party,
            source: Source::Gm,
            memory_type: MemoryType::Semantic,
            truth: TruthLevel::Canon,
            importance,
            rehearsals,
            at: GameTime::default(),
            speaker: "gm".into(),
            episode_ids: vec![],
            entities: vec![],
            slot: None,
            invalid_at: None,
            invalidated_by: None,
        }
    }

    #[test]
    fn gm_narration_is_certain_at_any_age() {
        for s in [0, 1, 10, 100] {
            let age = Age {
                sessions: s,
                days: Some(s * 30),
            };
            assert_eq!(confidence(Source::Gm, age), 1.0);
            assert_eq!(confidence(Source::Game, age), 1.0);
        }
    }

    #[test]
    fn player_observations_start_at_09_and_decay_towards_07() {
        let fresh = confidence(Source::Player, Age::default());
        assert!((fresh - 0.9).abs() < 1e-9);
        let mut last = fresh;
        for s in 1..40 {
            let c = confidence(
                Source::Player,
                Age {
                    sessions: s,
                    days: None,
                },
            );
            assert!(c < last && c > 0.7, "session {s}: {c}");
            last = c;
        }
        assert!(last < 0.71);
    }

    #[test]
    fn character_interpretations_start_at_07_and_decay_faster_towards_05() {
        let fresh = confidence(Source::Character, Age::default());
        assert!((fresh - 0.7).abs() < 1e-9);
        let age = Age {
            sessions: 3,
            days: None,
        };
        let c = confidence(Source::Character, age);
        assert!(c > 0.5 && c < 0.6, "{c}");
        // Faster: after 3 sessions a character has lost more of its excess than a player.
        let p = confidence(Source::Player, age);
        assert!((c - 0.5) / 0.2 < (p - 0.7) / 0.2);
    }

    #[test]
    fn corruption_follows_the_seed_formula() {
        // Seed 000's example: detail-oriented 0.9, base 0.3, 90 days, importance 0.5, strength 0.5.
        let who = Rememberer {
            detail_oriented: 0.9,
            emotional_memory: 0.4,
            base_decay_rate: 0.3,
        };
        let p = corruption_probability(&who, 90, 0.5, 0, 0.5);
        // 0.3 × 0.6 × (1 − e^(−90/365)) × 1.0 × 1.0 × 0.5 ≈ 0.0196. (The seed's comment says
        // "~15%", which its own formula does not give; the formula is what we implement.)
        let expected = 0.3 * 0.6 * (1.0 - (-90.0f64 / 365.0).exp()) * 0.5;
        assert!((p - expected).abs() < 1e-12, "{p} vs {expected}");
    }

    #[test]
    fn corruption_is_capped_and_rehearsal_makes_immune() {
        let careless = Rememberer {
            detail_oriented: 0.0,
            emotional_memory: 1.0,
            base_decay_rate: 1.0,
        };
        let p = corruption_probability(&careless, 100_000, 0.0, 0, 1.0);
        assert_eq!(p, 0.95);
        assert_eq!(corruption_probability(&careless, 1000, 0.0, 20, 1.0), 0.0);
        assert_eq!(corruption_probability(&careless, 0, 0.0, 0, 1.0), 0.0);
        assert_eq!(corruption_probability(&careless, 1000, 0.0, 0, 0.0), 0.0);
    }

    #[test]
    fn corruption_is_deterministic_and_keeps_the_original() {
        let who = Rememberer {
            detail_oriented: 0.1,
            emotional_memory: 0.8,
            base_decay_rate: 1.0,
        };
        let f = fact("Galvin sold us 40 units of fuel for 300 credits.", 0.1, 0);
        let mut corrupted = 0;
        for seed in 0..200u64 {
            let a = corrupt(&f, &who, 3000, 1.0, seed, Some("The reactor leaked."));
            let b = corrupt(&f, &who, 3000, 1.0, seed, Some("The reactor leaked."));
            assert_eq!(a, b);
            if let Some(c) = a {
                corrupted += 1;
                assert_ne!(c.text, f.text, "{:?}", c.kind);
                assert!(c.probability <= 0.95);
            }
        }
        // p = 0.95 here: nearly every recall is corrupted, never all by construction.
        assert!((170..200).contains(&corrupted), "{corrupted}");
        assert!(corrupt(&f, &who, 3000, 0.0, 1, None).is_none());
    }

    #[test]
    fn drift_changes_a_number() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t = drift("The vault code is 4471.", &mut rng);
        assert_ne!(t, "The vault code is 4471.");
        assert!(t.starts_with("The vault code is "));
    }
}
