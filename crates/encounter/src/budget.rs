//! The GM's prompt, assembled within budget zones (seed 003's `CONTEXT_BUDGET`).
//!
//! A window is split into four zones: the **system** prompt (the spec, the rules, the GM's
//! instructions), **pinned** entries (never trimmed: the opening, NPC memories, canonical
//! facts), the **history** (the conversation, trimmed oldest first), and a **safety** margin left
//! free for the model's reply and for the error of the token estimate. Seed 003 gives
//! 4,000 / 2,000 / 118,000 / 3,500 of 128,000 tokens; [`Budget::for_window`] keeps those
//! proportions for any window (the seed leaves 500 tokens of 128,000 unassigned; so do we).
//!
//! Assembly is one backward pass to find the oldest history entry that still fits and one
//! forward pass to copy the kept entries: O(n) in the number of entries, no token counting
//! (each [`Entry`] counts its tokens once, when it is made).

use serde::{Deserialize, Serialize};

/// Token budgets of the four zones of a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    pub system: usize,
    pub pinned: usize,
    pub history: usize,
    pub safety: usize,
    /// The model's whole context window.
    pub window: usize,
}

impl Budget {
    /// Seed 003's zones scaled to `window_tokens` (rounded down): system 1/32, pinned 1/64,
    /// history 59/64, safety 7/256. A 128,000-token window gives exactly the seed's numbers.
    pub fn for_window(window_tokens: usize) -> Budget {
        let part = |num: u128, den: u128| {
            usize::try_from(window_tokens as u128 * num / den).unwrap_or(usize::MAX)
        };
        Budget {
            system: part(1, 32),
            pinned: part(1, 64),
            history: part(59, 64),
            safety: part(7, 256),
            window: window_tokens,
        }
    }
}

/// A cheap token estimate: UTF-8 bytes / 4, rounded up. No tokenizer.
///
/// For English that is the usual "four characters a token". Other scripts take two to four
/// bytes a character in UTF-8 and more tokens a character in real tokenizers too, so counting
/// bytes errs on the side of more tokens rather than fewer. O(1). The safety zone absorbs the
/// rest of the error.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Who said an entry: the harness (tool results, corrections, joins), a player, or the GM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One message of an encounter's history, with its token estimate counted once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub role: Role,
    pub text: String,
    /// Never trimmed (seed 003's `pinned`).
    pub pinned: bool,
    /// [`estimate_tokens`] of `text`.
    pub tokens: usize,
}

impl Entry {
    pub fn new(role: Role, text: impl Into<String>, pinned: bool) -> Entry {
        let text = text.into();
        let tokens = estimate_tokens(&text);
        Entry {
            role,
            text,
            pinned,
            tokens,
        }
    }
}

/// Tokens used in each zone by an assembled prompt (for the log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneTokens {
    pub system: usize,
    pub pinned: usize,
    pub history: usize,
}

/// A prompt ready for the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Assembled {
    /// The system prompt first, then the kept entries in their original order.
    pub messages: Vec<(Role, String)>,
    pub zones: ZoneTokens,
    /// History entries left out (the oldest ones).
    pub trimmed: usize,
    /// Zones whose content is larger than their budget yet was kept whole: `"system"`,
    /// `"pinned"`. Empty when everything fits.
    pub over: Vec<&'static str>,
}

/// Builds the prompt: `system`, then every pinned entry and the newest history entries that fit,
/// in their original order.
///
/// The history gets its zone, or less when the system prompt and pinned entries overflow theirs
/// (so the prompt stays within `window − safety` whenever the history is what can give). The
/// kept history is always a run of the newest entries: an old entry is never kept while a newer
/// one is dropped, so the conversation has no holes.
pub fn assemble(system: &str, entries: &[Entry], budget: &Budget) -> Assembled {
    let system_tokens = estimate_tokens(system);
    let pinned_tokens: usize = entries.iter().filter(|e| e.pinned).map(|e| e.tokens).sum();
    let room = budget
        .window
        .saturating_sub(budget.safety)
        .saturating_sub(system_tokens)
        .saturating_sub(pinned_tokens)
        .min(budget.history);
    let (first_kept, history_tokens) = oldest_history_that_fits(entries, room);
    let mut messages = Vec::with_capacity(entries.len().saturating_sub(first_kept) + 1);
    messages.push((Role::System, system.to_string()));
    let mut trimmed = 0;
    for (i, e) in entries.iter().enumerate() {
        if e.pinned || i >= first_kept {
            messages.push((e.role, e.text.clone()));
        } else {
            trimmed += 1;
        }
    }
    let mut over = Vec::new();
    if system_tokens > budget.system {
        over.push("system");
    }
    if pinned_tokens > budget.pinned {
        over.push("pinned");
    }
    Assembled {
        messages,
        zones: ZoneTokens {
            system: system_tokens,
            pinned: pinned_tokens,
            history: history_tokens,
        },
        trimmed,
        over,
    }
}

/// The index from which every history (unpinned) entry is kept, walking back from the newest
/// until one does not fit in `room`; and the tokens kept. `entries.len()` when none fits.
fn oldest_history_that_fits(entries: &[Entry], room: usize) -> (usize, usize) {
    let mut used = 0usize;
    let mut first = entries.len();
    for (i, e) in entries.iter().enumerate().rev() {
        if e.pinned {
            continue;
        }
        match used.checked_add(e.tokens) {
            Some(total) if total <= room => {
                used = total;
                first = i;
            }
            _ => break,
        }
    }
    (first, used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A message of exactly `tokens` estimated tokens, tagged so it can be told apart.
    fn text(tag: &str, tokens: usize) -> String {
        let mut s = format!("{tag} ");
        while s.len() < tokens * 4 {
            s.push('x');
        }
        s
    }

    fn history(tag: &str, tokens: usize) -> Entry {
        Entry::new(Role::User, text(tag, tokens), false)
    }

    fn pinned(tag: &str, tokens: usize) -> Entry {
        Entry::new(Role::System, text(tag, tokens), true)
    }

    fn tags(a: &Assembled) -> Vec<&str> {
        a.messages
            .iter()
            .skip(1)
            .map(|(_, t)| t.split(' ').next().unwrap_or(""))
            .collect()
    }

    #[test]
    fn a_128k_window_gets_seed_003s_zones() {
        assert_eq!(
            Budget::for_window(128_000),
            Budget {
                system: 4_000,
                pinned: 2_000,
                history: 118_000,
                safety: 3_500,
                window: 128_000,
            }
        );
        let small = Budget::for_window(8_000);
        assert_eq!(
            (small.system, small.pinned, small.history, small.safety),
            (250, 125, 7_375, 218)
        );
        assert_eq!(Budget::for_window(0).history, 0);
        assert_eq!(Budget::for_window(usize::MAX).window, usize::MAX);
    }

    #[test]
    fn tokens_are_bytes_over_four_rounded_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        // Three UTF-8 bytes a character: CJK costs more than Latin, as it does in tokenizers.
        assert_eq!(estimate_tokens("倀倀倀倀"), 3);
        assert_eq!(Entry::new(Role::User, "abcdefgh", false).tokens, 2);
    }

    #[test]
    fn everything_fits_in_order_with_system_first() {
        let entries = vec![history("h1", 10), pinned("p1", 5), history("h2", 10)];
        let a = assemble("rules", &entries, &Budget::for_window(128_000));
        assert_eq!(a.messages[0], (Role::System, "rules".to_string()));
        assert_eq!(tags(&a), ["h1", "p1", "h2"]);
        assert_eq!(a.messages[2].0, Role::System, "an entry keeps its role");
        assert_eq!(
            a.zones,
            ZoneTokens {
                system: 2,
                pinned: 5,
                history: 20
            }
        );
        assert_eq!(a.trimmed, 0);
        assert!(a.over.is_empty());
    }

    fn budget(history: usize) -> Budget {
        Budget {
            system: 100,
            pinned: 100,
            history,
            safety: 0,
            window: 10_000,
        }
    }

    #[test]
    fn history_is_trimmed_oldest_first_and_pinned_entries_stay() {
        let entries = vec![
            pinned("opening", 50),
            history("old", 30),
            history("mid", 30),
            pinned("memory", 20),
            history("new", 30),
        ];
        let a = assemble("sys", &entries, &budget(59));
        assert_eq!(tags(&a), ["opening", "memory", "new"]);
        assert_eq!(a.trimmed, 2);
        assert_eq!(a.zones.history, 30);
        assert_eq!(a.zones.pinned, 70);
        let a = assemble("sys", &entries, &budget(60));
        assert_eq!(tags(&a), ["opening", "mid", "memory", "new"]);
        assert_eq!(a.trimmed, 1);
    }

    #[test]
    fn a_large_entry_ends_the_history_instead_of_leaving_a_hole() {
        let entries = vec![history("small", 5), history("huge", 500), history("new", 5)];
        let a = assemble("sys", &entries, &budget(100));
        assert_eq!(tags(&a), ["new"], "'small' fits but would follow a hole");
        assert_eq!(a.trimmed, 2);
    }

    #[test]
    fn oversized_system_and_pinned_are_kept_flagged_and_squeeze_the_history() {
        let b = Budget {
            system: 10,
            pinned: 10,
            history: 100,
            safety: 20,
            window: 150,
        };
        let entries = vec![pinned("memory", 40), history("old", 20), history("new", 20)];
        let sys = text("sys", 50);
        let a = assemble(&sys, &entries, &b);
        assert_eq!(a.over, ["system", "pinned"]);
        // 150 − 20 safety − 50 system − 40 pinned leaves 40 for history: both entries fit.
        assert_eq!(tags(&a), ["memory", "old", "new"]);
        let a = assemble(&text("sys", 70), &entries, &b);
        assert_eq!(tags(&a), ["memory", "new"], "20 tokens left for history");
        assert_eq!(a.messages[0].1.len(), 280, "the system prompt is never cut");
        let a = assemble(&text("sys", 500), &entries, &b);
        assert_eq!(tags(&a), ["memory"]);
        assert_eq!(a.trimmed, 2);
    }

    #[test]
    fn a_100k_token_history_into_8k_keeps_the_newest_within_the_zone() {
        let entries: Vec<Entry> = (0..1_000).map(|i| history(&format!("m{i}"), 100)).collect();
        let b = Budget::for_window(8_000);
        let a = assemble("sys", &entries, &b);
        assert_eq!(a.zones.history, 7_300);
        assert_eq!(a.trimmed, 927);
        assert_eq!(tags(&a).last(), Some(&"m999"));
        assert_eq!(tags(&a).first(), Some(&"m927"));
    }

    #[test]
    fn the_zone_report_serializes_for_the_log() {
        let a = assemble("sys", &[history("h", 3)], &Budget::for_window(1_000));
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["zones"]["history"], 3);
        assert_eq!(json["messages"][1][0], "user");
    }

    fn entry() -> impl Strategy<Value = Entry> {
        (0usize..60, any::<bool>(), 0u8..3).prop_map(|(tokens, pin, role)| {
            let role = [Role::System, Role::User, Role::Assistant][usize::from(role)];
            Entry::new(role, "y".repeat(tokens * 4), pin)
        })
    }

    /// The model the assembly must agree with: the longest run of the newest history entries
    /// whose tokens sum to at most `room`, plus every pinned entry, in order.
    fn expected(system: &str, entries: &[Entry], room: usize) -> Vec<(Role, String)> {
        let history: Vec<usize> = (0..entries.len()).filter(|&i| !entries[i].pinned).collect();
        let mut keep_from = history.len();
        while keep_from > 0 {
            let sum: usize = history[keep_from - 1..]
                .iter()
                .map(|&i| entries[i].tokens)
                .sum();
            if sum > room {
                break;
            }
            keep_from -= 1;
        }
        let kept_history = &history[keep_from..];
        let mut out = vec![(Role::System, system.to_string())];
        for (i, e) in entries.iter().enumerate() {
            if e.pinned || kept_history.contains(&i) {
                out.push((e.role, e.text.clone()));
            }
        }
        out
    }

    proptest! {
        #[test]
        fn assembly_keeps_pinned_and_the_newest_history_that_fits(
            entries in prop::collection::vec(entry(), 0..40),
            window in 0usize..2_000,
            sys_tokens in 0usize..200,
        ) {
            let b = Budget::for_window(window);
            let sys = "s".repeat(sys_tokens * 4);
            let a = assemble(&sys, &entries, &b);
            let pinned_total: usize = entries.iter().filter(|e| e.pinned).map(|e| e.tokens).sum();
            let room = b.window.saturating_sub(b.safety + sys_tokens + pinned_total).min(b.history);
            prop_assert_eq!(&a.messages, &expected(&sys, &entries, room));
            prop_assert!(a.zones.history <= room);
            prop_assert_eq!(a.zones.pinned, pinned_total);
            let history_count = entries.iter().filter(|e| !e.pinned).count();
            let pinned_count = entries.len() - history_count;
            prop_assert_eq!(a.trimmed, entries.len() + 1 - a.messages.len());
            prop_assert!(a.messages.len() > pinned_count);
            prop_assert_eq!(a.over.contains(&"system"), sys_tokens > b.system);
            prop_assert_eq!(a.over.contains(&"pinned"), pinned_total > b.pinned);
        }
    }
}
