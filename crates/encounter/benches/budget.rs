//! Context assembly (seed 003's budget zones): a 100,000-token and a 1,000,000-token history
//! assembled into a 128k and an 8k window. Bar: under 5 ms for the 100k history.
//!
//! `cargo bench -p troupe-encounter --bench budget`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use troupe_encounter::budget::{Budget, Entry, Role, assemble};

/// A history of `total_tokens`, in turns of about 100 tokens (a player's line and the GM's
/// narration alternating), with a pinned entry (an NPC memory, a fact) every 50 turns.
fn history(total_tokens: usize) -> Vec<Entry> {
    let line = "The smuggler leans closer, eyes on the door, and lowers her voice to a rasp. ";
    let turns = total_tokens / 100;
    (0..turns)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            let mut text = format!("turn {i}: ");
            while text.len() < 400 {
                text.push_str(line);
            }
            text.truncate(400);
            Entry::new(role, text, i % 50 == 0)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("assemble");
    for tokens in [100_000usize, 1_000_000] {
        let entries = history(tokens);
        for window in [128_000usize, 8_000] {
            let budget = Budget::for_window(window);
            // A system prompt filling three quarters of its zone.
            let system = "x".repeat(budget.system * 3);
            let id = BenchmarkId::new(format!("{}k_history", tokens / 1000), window);
            group.bench_with_input(id, &entries, |b, entries| {
                b.iter(|| assemble(black_box(&system), black_box(entries), &budget))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
