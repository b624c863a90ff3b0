//! What model calls cost: a price table per model, in US dollars per million tokens, with the
//! providers' list prices as defaults and the campaign file's `prices` block over them.
//!
//! The defaults are list prices as of 2025-10, taken from the providers' pricing pages
//! (openai.com/api/pricing, anthropic.com/pricing, docs.anthropic.com prompt caching) from
//! memory, without network access. Check them before relying on them; a campaign file's
//! `prices` block overrides any of them (see the README, "Cost").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// When the default prices were taken; shown beside every figure that uses them.
pub const PRICES_TAKEN: &str = "2025-10";

/// Providers that run on the player's own machine or answer from a recording: nothing billed.
pub const FREE_PROVIDERS: &[&str] = &["ollama", "local", "replay"];

/// One model's prices, in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Input tokens neither read from nor written to a prompt cache.
    pub input: f64,
    /// Input tokens read from the prompt cache.
    pub cached_input: f64,
    /// Input tokens written to the prompt cache (Anthropic: 1.25× input for the 5-minute
    /// cache); the input price where the provider charges nothing extra.
    pub cache_write: f64,
    pub output: f64,
}

impl Price {
    const fn of(input: f64, cached_input: f64, cache_write: f64, output: f64) -> Self {
        Self {
            input,
            cached_input,
            cache_write,
            output,
        }
    }

    /// Dollars for these token counts. `input` counts the whole prompt, `cached` and
    /// `written` the parts of it read from and written to the cache.
    pub fn cost(&self, input: u64, cached: u64, written: u64, output: u64) -> f64 {
        let plain = input.saturating_sub(cached).saturating_sub(written);
        let per_million = |n: u64, price: f64| n as f64 * price / 1_000_000.0;
        per_million(plain, self.input)
            + per_million(cached, self.cached_input)
            + per_million(written, self.cache_write)
            + per_million(output, self.output)
    }
}

/// The list prices troupe knows, by model-name prefix (the longest matching prefix wins, so
/// `gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`, not `gpt-4o`).
/// List prices as of [`PRICES_TAKEN`]; check before relying on them.
const DEFAULTS: &[(&str, Price)] = &[
    // OpenAI: cached input is billed at a discount, cache writes cost nothing extra.
    ("gpt-5", Price::of(1.25, 0.125, 1.25, 10.0)),
    ("gpt-5-mini", Price::of(0.25, 0.025, 0.25, 2.0)),
    ("gpt-5-nano", Price::of(0.05, 0.005, 0.05, 0.40)),
    ("gpt-4.1", Price::of(2.0, 0.50, 2.0, 8.0)),
    ("gpt-4.1-mini", Price::of(0.40, 0.10, 0.40, 1.60)),
    ("gpt-4.1-nano", Price::of(0.10, 0.025, 0.10, 0.40)),
    ("gpt-4o", Price::of(2.50, 1.25, 2.50, 10.0)),
    ("gpt-4o-mini", Price::of(0.15, 0.075, 0.15, 0.60)),
    ("o3", Price::of(2.0, 0.50, 2.0, 8.0)),
    ("o3-mini", Price::of(1.10, 0.55, 1.10, 4.40)),
    ("o4-mini", Price::of(1.10, 0.275, 1.10, 4.40)),
    // Anthropic: cache reads at 0.1× input, 5-minute cache writes at 1.25× input.
    ("claude-opus-4", Price::of(15.0, 1.50, 18.75, 75.0)),
    ("claude-opus-4-5", Price::of(5.0, 0.50, 6.25, 25.0)),
    ("claude-sonnet-4", Price::of(3.0, 0.30, 3.75, 15.0)),
    ("claude-3-7-sonnet", Price::of(3.0, 0.30, 3.75, 15.0)),
    ("claude-3-5-sonnet", Price::of(3.0, 0.30, 3.75, 15.0)),
    ("claude-haiku-4-5", Price::of(1.0, 0.10, 1.25, 5.0)),
    ("claude-3-5-haiku", Price::of(0.80, 0.08, 1.0, 4.0)),
    ("claude-3-haiku", Price::of(0.25, 0.03, 0.30, 1.25)),
];

/// The campaign file's `prices` block: model-name prefix → price. Empty means the defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PriceTable {
    pub overrides: BTreeMap<String, Price>,
}

/// What a call costs, as far as troupe can tell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Priced {
    /// A local model or a recording: nothing billed.
    Free,
    /// At this price; `default` when it is troupe's list price rather than the campaign's.
    At { price: Price, default: bool },
    /// A hosted model troupe has no price for: tokens are counted, money is not.
    Unknown,
}

impl PriceTable {
    /// The price of `model` on `provider` (the provider label: `openai`, `anthropic`,
    /// `ollama`…). The campaign's prices come first, then the defaults; the longest
    /// matching model-name prefix wins within each.
    pub fn lookup(&self, provider: &str, model: &str) -> Priced {
        if let Some(price) =
            longest_prefix(self.overrides.iter().map(|(k, p)| (k.as_str(), p)), model)
        {
            return Priced::At {
                price,
                default: false,
            };
        }
        if FREE_PROVIDERS.contains(&provider) {
            return Priced::Free;
        }
        match longest_prefix(DEFAULTS.iter().map(|(k, p)| (*k, p)), model) {
            Some(price) => Priced::At {
                price,
                default: true,
            },
            None => Priced::Unknown,
        }
    }

    /// [`PriceTable::lookup`] for a model as the gateway names it:
    /// `provider:model@base-url` (e.g. `openai:gpt-4o-mini@https://api.openai.com/v1`).
    pub fn lookup_named(&self, gateway_name: &str) -> Priced {
        let (provider, model) = split_gateway_name(gateway_name);
        self.lookup(provider, model)
    }
}

/// The token counts of one model call (or a sum of them), as the log records them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// The whole prompt, cached parts included.
    pub input: u64,
    pub cached_input: u64,
    pub cache_write: u64,
    pub output: u64,
}

impl TokenCounts {
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

impl Priced {
    /// Dollars for these tokens: `Some(0.0)` when free, `None` when the price is unknown.
    pub fn usd(&self, t: &TokenCounts) -> Option<f64> {
        match self {
            Priced::Free => Some(0.0),
            Priced::At { price, .. } => {
                Some(price.cost(t.input, t.cached_input, t.cache_write, t.output))
            }
            Priced::Unknown => None,
        }
    }
}

/// `openai:gpt-4o-mini@https://…` → (`openai`, `gpt-4o-mini`); a replay's file name after the
/// colon is taken as its model, which never matters (a replay is free).
pub fn split_gateway_name(name: &str) -> (&str, &str) {
    let (provider, rest) = name.split_once(':').unwrap_or(("", name));
    let model = rest.rsplit_once('@').map_or(rest, |(m, _)| m);
    (provider, model)
}

fn longest_prefix<'a>(
    entries: impl Iterator<Item = (&'a str, &'a Price)>,
    model: &str,
) -> Option<Price> {
    entries
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, p)| *p)
}

/// The default prices, for the README and `--help`-style listings.
pub fn default_prices() -> impl Iterator<Item = (&'static str, Price)> {
    DEFAULTS.iter().map(|(k, p)| (*k, *p))
}

/// How much one session (or one batch of sessions) may spend before it stops, saved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// US dollars, at the price table's prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
    /// Input plus output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

impl Limit {
    pub fn is_none(&self) -> bool {
        self.usd.is_none() && self.tokens.is_none()
    }

    /// Each bound of `over` where set, this one's elsewhere (the command line over the file).
    pub fn or(self, under: Limit) -> Limit {
        Limit {
            usd: self.usd.or(under.usd),
            tokens: self.tokens.or(under.tokens),
        }
    }
}

/// The campaign file's `spend_limit` block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpendLimits {
    #[serde(default, skip_serializing_if = "Limit::is_none")]
    pub session: Limit,
    /// Over every session of one `troupe simulate` batch.
    #[serde(default, skip_serializing_if = "Limit::is_none")]
    pub batch: Limit,
}

impl SpendLimits {
    pub fn is_none(&self) -> bool {
        self.session.is_none() && self.batch.is_none()
    }
}

impl PriceTable {
    pub fn is_empty(&self) -> bool {
        self.overrides.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins_and_dated_names_match() {
        let table = PriceTable::default();
        let mini = table.lookup("openai", "gpt-4o-mini-2024-07-18");
        assert!(matches!(mini, Priced::At { price, default: true } if price.input == 0.15));
        let opus45 = table.lookup("anthropic", "claude-opus-4-5-20251101");
        assert!(matches!(opus45, Priced::At { price, .. } if price.input == 5.0));
        let opus41 = table.lookup("anthropic", "claude-opus-4-1-20250805");
        assert!(matches!(opus41, Priced::At { price, .. } if price.input == 15.0));
    }

    #[test]
    fn local_models_and_recordings_cost_nothing_and_unknown_models_say_so() {
        let table = PriceTable::default();
        assert_eq!(table.lookup("ollama", "llama3.2"), Priced::Free);
        assert_eq!(
            table.lookup_named("replay:examples/party.replay.jsonl"),
            Priced::Free
        );
        assert_eq!(
            table.lookup("openai-compatible", "my-finetune"),
            Priced::Unknown
        );
    }

    #[test]
    fn the_campaign_overrides_the_defaults_even_for_a_local_server() {
        let mut table = PriceTable::default();
        table
            .overrides
            .insert("gpt-4o-mini".into(), Price::of(1.0, 0.5, 1.0, 2.0));
        table
            .overrides
            .insert("llama".into(), Price::of(0.1, 0.1, 0.1, 0.1));
        let named = table.lookup_named("openai:gpt-4o-mini@https://api.openai.com/v1");
        assert!(matches!(named, Priced::At { price, default: false } if price.input == 1.0));
        assert!(matches!(
            table.lookup("ollama", "llama3.2"),
            Priced::At { .. }
        ));
    }

    #[test]
    fn cost_bills_each_kind_of_token_at_its_price() {
        let price = Price::of(3.0, 0.30, 3.75, 15.0);
        // 1M prompt tokens: 600k cached, 100k written, 300k plain; 100k output.
        let usd = price.cost(1_000_000, 600_000, 100_000, 100_000);
        let expected = 0.3 * 3.0 + 0.6 * 0.30 + 0.1 * 3.75 + 0.1 * 15.0;
        assert!((usd - expected).abs() < 1e-9, "{usd} vs {expected}");
    }
}
