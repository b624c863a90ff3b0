//! The sampling seed of every model request, in every game: derived from the session's (or the
//! run's) seed and the call's place among its game's calls, so two runs with the same seed send
//! the same seeds (a server that honours `seed` then samples the same replies at any
//! temperature), and no two calls of a run send the same one. The seed travels in the request
//! (the OpenAI-compatible `seed` field, the embedded model's sampler) and into the model-call
//! record of every attempt. A call's retries and its repair re-ask send the call's seed again.

use troupe_llm::ChatRequest;

/// The largest seed sent: 2^53 − 1. Every JSON reader keeps it exact (JavaScript's numbers, a
/// server that parses doubles) and every server's integer type takes it (vLLM's and OpenAI's
/// signed 64 bits; llama-server keeps its low 32).
pub const MAX_CALL_SEED: u64 = (1 << 53) - 1;

/// The seed of the call named `identity` (its agent, purpose and ordinal, say) in a session or
/// run seeded with `seed`. Stable across builds and platforms: FNV-1a of the identity, mixed
/// with the seed by the dice's own mixer.
pub fn call_seed(seed: u64, identity: &str) -> u64 {
    troupe_rules::roll_seed(seed, fnv1a(identity)) & MAX_CALL_SEED
}

/// Put the seed of the call named `identity` on `req`.
pub fn seed_request(req: &mut ChatRequest, seed: u64, identity: &str) {
    req.seed = Some(call_seed(seed, identity));
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Where a Lasers & Feelings session's calls take their seeds: the session's seed and how many
/// calls each agent has made so far (counted in the log, see `Session::calls`). An agent's
/// calls are numbered on their own, so a replay whose GM answers from the log (making none of
/// the AI GM's calls) still gives every player call the seed it had.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallSeeds {
    pub seed: u64,
    /// The agent's calls the log holds.
    pub logged: u64,
}

impl CallSeeds {
    /// The seed of the agent's call `logged + k` (k counts the calls made but not yet logged).
    pub fn nth(&self, agent: &str, k: u64) -> u64 {
        call_seed(self.seed, &format!("{agent} call {}", self.logged + k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Computed apart (Python, from the definitions above).
    const PINNED: u64 = 2_556_299_401_755_670;

    #[test]
    fn a_seed_is_the_same_for_the_same_call_and_differs_between_calls_and_seeds() {
        let one = call_seed(7, "alex call 0");
        assert_eq!(one, call_seed(7, "alex call 0"));
        assert_ne!(one, call_seed(7, "alex call 1"));
        assert_ne!(one, call_seed(7, "sam call 0"));
        assert_ne!(one, call_seed(8, "alex call 0"));
        // Pinned: a change of derivation changes every seed a batch sends (say so when it does).
        assert_eq!(one, PINNED);
        let seeds = CallSeeds { seed: 7, logged: 3 };
        assert_eq!(seeds.nth("alex", 1), call_seed(7, "alex call 4"));
    }

    #[test]
    fn every_seed_fits_in_53_bits() {
        for i in 0..2_000u64 {
            let s = call_seed(u64::MAX - i, &format!("gm call {i}"));
            assert!(s <= MAX_CALL_SEED, "{s}");
        }
        // The mask matters: unmasked, seeds above 2^53 are the rule.
        let above = (0..64u64)
            .filter(|i| troupe_rules::roll_seed(*i, fnv1a("x")) > MAX_CALL_SEED)
            .count();
        assert!(above > 32, "{above}");
    }
}
