//! The spend limit: what a session has spent on model calls (tokens and dollars, every call
//! the log holds, across resumes) and whether it has reached its limit.

use troupe_campaign::{Limit, PriceTable, TokenCounts};

use crate::{Envelope, Event};

/// What has been spent so far, against a limit.
#[derive(Clone, Debug)]
pub struct SpendMeter {
    limit: Limit,
    prices: PriceTable,
    pub usd: f64,
    pub tokens: u64,
    /// Calls to a model with no known price (their dollars are not in `usd`).
    pub unpriced_calls: u32,
}

/// Why the session stopped: the limit reached and what was spent.
#[derive(Clone, Debug, PartialEq)]
pub struct SpendStop {
    pub usd: f64,
    pub tokens: u64,
    pub limit: Limit,
    /// The bound reached: `"usd"` or `"tokens"`.
    pub reached: &'static str,
}

impl SpendMeter {
    pub fn new(limit: Limit, prices: PriceTable) -> Self {
        Self {
            limit,
            prices,
            usd: 0.0,
            tokens: 0,
            unpriced_calls: 0,
        }
    }

    /// Counts the model calls among `events` (a resumed session's past, a committed step).
    pub fn count(&mut self, events: &[Envelope]) {
        for env in events {
            if let Event::ModelCall { record, .. } = &env.event {
                let u = record.usage;
                let t = TokenCounts {
                    input: u64::from(u.input_tokens),
                    cached_input: u64::from(u.cached_input_tokens),
                    cache_write: u64::from(u.cache_write_tokens),
                    output: u64::from(u.output_tokens),
                };
                self.tokens += t.total();
                match self.prices.lookup_named(&record.provider).usd(&t) {
                    Some(usd) => self.usd += usd,
                    None => self.unpriced_calls += 1,
                }
            }
        }
    }

    /// The limit, once reached.
    pub fn reached(&self) -> Option<SpendStop> {
        let stop = |reached| SpendStop {
            usd: self.usd,
            tokens: self.tokens,
            limit: self.limit,
            reached,
        };
        if self.limit.usd.is_some_and(|max| self.usd >= max) {
            return Some(stop("usd"));
        }
        if self.limit.tokens.is_some_and(|max| self.tokens >= max) {
            return Some(stop("tokens"));
        }
        None
    }
}

impl SpendStop {
    /// What the person reads: how much was spent, against which limit.
    pub fn describe(&self) -> String {
        let limit = match self.reached {
            "usd" => format!("${:.2}", self.limit.usd.unwrap_or_default()),
            _ => format!("{} tokens", self.limit.tokens.unwrap_or_default()),
        };
        format!(
            "spend limit reached: spent ${:.4} and {} tokens (limit {limit})",
            self.usd, self.tokens
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_bound_and_the_dollar_bound_each_stop_it() {
        let mut m = SpendMeter::new(
            Limit {
                usd: None,
                tokens: Some(100),
            },
            PriceTable::default(),
        );
        assert_eq!(m.reached(), None);
        m.tokens = 100;
        assert_eq!(m.reached().map(|s| s.reached), Some("tokens"));
        let mut m = SpendMeter::new(
            Limit {
                usd: Some(0.5),
                tokens: None,
            },
            PriceTable::default(),
        );
        m.usd = 0.49;
        assert_eq!(m.reached(), None);
        m.usd = 0.5;
        let stop = m.reached();
        assert!(
            stop.as_ref()
                .is_some_and(|s| s.describe().contains("limit $0.50")),
            "{stop:?}"
        );
    }
}
