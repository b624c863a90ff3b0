//! What the model calls cost: tokens (input, cached input, cache writes, output) and dollars,
//! per turn, per session and per model, from each session's price table (troupe's list prices
//! under the campaign file's `prices`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use troupe_campaign::prices::{PRICES_TAKEN, split_gateway_name};
use troupe_campaign::{PriceTable, Priced, TokenCounts};

use troupe_lasers::{Envelope, Event};
use troupe_llm::AttemptRecord;

use crate::ev::num;
use crate::lasers;

/// Tokens and money over some model calls.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Spend {
    /// Model attempts (`model_call` events).
    pub calls: u32,
    /// The whole prompts, cached parts included.
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    /// Dollars for the calls troupe has a price for.
    pub usd: f64,
    /// Calls to a local model or a recording: nothing billed.
    pub free_calls: u32,
    /// Calls to a hosted model troupe has no price for: not in `usd`.
    pub unpriced_calls: u32,
    /// Some calls were priced at troupe's default list prices (not the campaign's).
    pub default_prices: bool,
}

impl Spend {
    fn add(&mut self, t: &TokenCounts, priced: Priced) {
        self.calls += 1;
        self.input_tokens += t.input;
        self.cached_input_tokens += t.cached_input;
        self.cache_write_tokens += t.cache_write;
        self.output_tokens += t.output;
        match priced {
            Priced::Free => self.free_calls += 1,
            Priced::Unknown => self.unpriced_calls += 1,
            Priced::At { default, .. } => self.default_prices |= default,
        }
        self.usd += priced.usd(t).unwrap_or(0.0);
    }

    /// Adds another spend to this one.
    pub fn merge(&mut self, o: &Spend) {
        self.calls += o.calls;
        self.input_tokens += o.input_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
        self.output_tokens += o.output_tokens;
        self.usd += o.usd;
        self.free_calls += o.free_calls;
        self.unpriced_calls += o.unpriced_calls;
        self.default_prices |= o.default_prices;
    }

    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Share of the input read from a cache, when there was input.
    pub fn cached_share(&self) -> Option<f64> {
        (self.input_tokens > 0).then(|| self.cached_input_tokens as f64 / self.input_tokens as f64)
    }

    /// The money as a person reads it: `$0.0123`, `$0 (local model)`, or with the calls it
    /// leaves out when some had no price.
    pub fn money(&self) -> String {
        if self.calls > 0 && self.free_calls == self.calls {
            return "$0 (local model or recording)".to_string();
        }
        let mut out = usd(self.usd);
        if self.unpriced_calls > 0 {
            out.push_str(&format!(
                " + {} call{} with no price (set \"prices\" in the campaign file)",
                self.unpriced_calls,
                if self.unpriced_calls == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// Dollars with enough digits for a cheap call to show: `$0.0042`, `$1.27`.
pub fn usd(x: f64) -> String {
    if x == 0.0 {
        "$0".to_string()
    } else if x < 0.01 {
        format!("${x:.4}")
    } else {
        format!("${x:.2}")
    }
}

/// One turn's spend.
#[derive(Clone, Debug, Serialize)]
pub struct TurnSpend {
    pub session: u32,
    pub turn: u32,
    pub spend: Spend,
}

/// The spend of a set of events, cut three ways.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Costs {
    pub total: Spend,
    pub per_session: BTreeMap<u32, Spend>,
    /// Turn 0 holds what happened before the first turn (and memory writes at session end).
    pub per_turn: Vec<TurnSpend>,
    /// By `provider:model`, as the gateway named it (without its URL).
    pub per_model: BTreeMap<String, Spend>,
    /// When troupe's default list prices were taken.
    pub prices_taken: &'static str,
}

/// The token counts an attempt record as logged holds (0 where an older log has none): for the
/// readers of the other games' logs, whose calls keep their attempts as logged.
pub fn token_counts(e: &Value) -> TokenCounts {
    let u = e.get("usage").unwrap_or(&Value::Null);
    TokenCounts {
        input: num(u, "input_tokens"),
        cached_input: num(u, "cached_input_tokens"),
        cache_write: num(u, "cache_write_tokens"),
        output: num(u, "output_tokens"),
    }
}

/// The token counts a model call's attempt records.
fn attempt_counts(record: &AttemptRecord) -> TokenCounts {
    let u = &record.usage;
    TokenCounts {
        input: u64::from(u.input_tokens),
        cached_input: u64::from(u.cached_input_tokens),
        cache_write: u64::from(u.cache_write_tokens),
        output: u64::from(u.output_tokens),
    }
}

/// Each session's price table, from the campaign its `session_started` recorded.
fn price_tables<'a>(events: &[&'a Envelope]) -> BTreeMap<u32, &'a PriceTable> {
    events
        .iter()
        .filter_map(|env| match &env.event {
            Event::SessionStarted { campaign, .. } => Some((env.session_number, &campaign.prices)),
            _ => None,
        })
        .collect()
}

/// What the sessions' model calls cost, from the events this build knows: a newer troupe's
/// kind costs nothing here, and a known kind that does not read is no call counted
/// (`Metrics::unreadable` and the audit name it).
pub fn costs(events: &[Value]) -> Costs {
    costs_of(&lasers::read(events))
}

/// The costs of rows already read.
pub(crate) fn costs_of(read: &[lasers::Row]) -> Costs {
    let known: Vec<&Envelope> = lasers::known(read).collect();
    let tables = price_tables(&known);
    let default_table = PriceTable::default();
    let mut out = Costs {
        prices_taken: PRICES_TAKEN,
        ..Costs::default()
    };
    let mut turns: BTreeMap<(u32, u32), Spend> = BTreeMap::new();
    for env in known {
        let Event::ModelCall { record, .. } = &env.event else {
            continue;
        };
        let sn = env.session_number;
        let provider = record.provider.as_str();
        let table = tables.get(&sn).copied().unwrap_or(&default_table);
        let priced = table.lookup_named(provider);
        let t = attempt_counts(record);
        out.total.add(&t, priced);
        out.per_session.entry(sn).or_default().add(&t, priced);
        turns
            .entry((sn, env.turn_number))
            .or_default()
            .add(&t, priced);
        let (label, model) = split_gateway_name(provider);
        let key = if label.is_empty() {
            model.to_string()
        } else {
            format!("{label}:{model}")
        };
        out.per_model.entry(key).or_default().add(&t, priced);
    }
    out.per_turn = turns
        .into_iter()
        .map(|((session, turn), spend)| TurnSpend {
            session,
            turn,
            spend,
        })
        .collect();
    out
}

/// The cost section of `troupe stats`: per session, per model, then per turn.
pub fn render_costs(c: &Costs) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    if c.total.calls == 0 {
        return o;
    }
    let _ = writeln!(
        o,
        "\nCost (tokens in = whole prompts; cached = read from the provider's cache)"
    );
    let header = |o: &mut String, first: &str| {
        let _ = writeln!(
            o,
            "  {first:<38} {:>10} {:>10} {:>9} {:>9}  money",
            "tokens in", "cached", "written", "out"
        );
    };
    let line = |o: &mut String, k: &str, s: &Spend| {
        let _ = writeln!(
            o,
            "  {k:<38} {:>10} {:>10} {:>9} {:>9}  {}",
            s.input_tokens,
            s.cached_input_tokens,
            s.cache_write_tokens,
            s.output_tokens,
            s.money()
        );
    };
    header(&mut o, "");
    line(&mut o, "all", &c.total);
    for (sn, s) in &c.per_session {
        line(&mut o, &format!("session {sn}"), s);
    }
    for (model, s) in &c.per_model {
        line(&mut o, model, s);
    }
    let _ = writeln!(o, "\n  Per turn");
    header(&mut o, "");
    for t in &c.per_turn {
        let name = if t.turn == 0 {
            format!("session {}, before turn 1", t.session)
        } else {
            format!("session {}, turn {}", t.session, t.turn)
        };
        line(&mut o, &name, &t.spend);
    }
    if c.total.default_prices {
        let _ = writeln!(
            o,
            "  (troupe's list prices as of {}: check them before relying on them; a campaign file's \"prices\" overrides them)",
            c.prices_taken
        );
    }
    o
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    /// (Read as the game's event: `crate::lasers::rows::row` fills in its other fields.)
    fn call(session: u32, turn: u32, provider: &str, usage: Value) -> Value {
        crate::lasers::rows::row(
            json!({"event_type": "model_call", "session_number": session, "turn_number": turn,
               "provider": provider, "usage": usage, "attempt": 1}),
        )
    }

    #[test]
    fn calls_are_priced_per_model_with_the_cache_discount() {
        let events = vec![
            {
                let mut start = crate::lasers::rows::row(json!({"event_type": "session_started"}));
                start["campaign"]["prices"] = json!({"my-model": {"input": 1.0,
                    "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}});
                start
            },
            call(
                1,
                1,
                "openai-compatible:my-model@http://127.0.0.1:9/v1",
                json!({"input_tokens": 1_000_000, "cached_input_tokens": 500_000,
                        "output_tokens": 1_000_000}),
            ),
            call(
                1,
                2,
                "ollama:llama3.2@http://localhost:11434/v1",
                json!({"input_tokens": 900, "output_tokens": 100}),
            ),
            // An old log: no cache counts, read as nothing cached.
            call(
                1,
                2,
                "openai:gpt-4o-mini@https://api.openai.com/v1",
                json!({"input_tokens": 1_000_000, "output_tokens": 0}),
            ),
        ];
        let c = costs(&events);
        let mine = &c.per_model["openai-compatible:my-model"];
        assert!((mine.usd - (0.5 + 0.25 + 2.0)).abs() < 1e-9, "{mine:?}");
        assert!(!mine.default_prices);
        let local = &c.per_model["ollama:llama3.2"];
        assert_eq!(local.money(), "$0 (local model or recording)");
        let mini = &c.per_model["openai:gpt-4o-mini"];
        assert!((mini.usd - 0.15).abs() < 1e-9 && mini.default_prices);
        assert_eq!(c.per_turn.len(), 2);
        assert!((c.per_turn[1].spend.usd - 0.15).abs() < 1e-9);
        assert_eq!(c.per_session[&1].tokens(), 3_001_000);
        assert_eq!(c.total.cached_input_tokens, 500_000);
    }

    #[test]
    fn a_model_without_a_price_is_counted_but_not_guessed() {
        let events = vec![call(
            1,
            1,
            "openai-compatible:mystery@http://x/v1",
            json!({"input_tokens": 10, "output_tokens": 5}),
        )];
        let c = costs(&events);
        assert_eq!(c.total.unpriced_calls, 1);
        assert!(
            c.total.money().contains("1 call with no price"),
            "{}",
            c.total.money()
        );
    }
}
