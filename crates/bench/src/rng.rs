//! A small seeded generator (splitmix64): the same seed gives the same numbers on every machine
//! and every build, which is what makes a generated suite and its bootstrap reproducible.

/// splitmix64: one `u64` of state, good enough for picking names and resampling scenarios.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator of its own for `label` under `seed`: scenarios drawn apart do not shift
    /// one another when a family or a template is added.
    pub fn derived(seed: u64, label: &str) -> Rng {
        let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
        for b in label.bytes() {
            h = mix(h ^ u64::from(b));
        }
        Rng(h)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next_u64() % u64::from(hi - lo + 1)) as u32
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// `k` different items of `items`, in a random order.
    pub fn choose<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut pool: Vec<T> = items.to_vec();
        let mut out = Vec::new();
        while out.len() < k && !pool.is_empty() {
            let i = self.below(pool.len());
            out.push(pool.swap_remove(i));
        }
        out
    }

    /// A share in `0.0..1.0` with two decimals.
    pub fn share(&mut self) -> f64 {
        (self.next_u64() % 100) as f64 / 100.0
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_draws_and_labels_part_them() {
        let draw = |r: &mut Rng| (0..8).map(|_| r.below(1000)).collect::<Vec<_>>();
        assert_eq!(draw(&mut Rng::new(7)), draw(&mut Rng::new(7)));
        assert_ne!(draw(&mut Rng::new(7)), draw(&mut Rng::new(8)));
        assert_ne!(
            draw(&mut Rng::derived(7, "secrets-1")),
            draw(&mut Rng::derived(7, "secrets-2"))
        );
        let picked = Rng::new(3).choose(&[1, 2, 3, 4, 5], 3);
        assert_eq!(picked.len(), 3);
        assert!(picked.iter().all(|p| (1..=5).contains(p)));
    }
}
