//! The spend limit of a `troupe simulate` batch: a watcher that adds up what the batch's runs
//! have spent (their logs, priced as `troupe stats` prices them) and, once the limit is
//! reached, stops the batch from starting another run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use troupe_campaign::Limit;

/// The batch's spend limit from `troupe simulate`'s command line, over the campaign files'
/// `spend_limit.batch`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct BatchSpendArgs {
    /// Start no further run once the batch's model calls have cost this many US dollars (at
    /// the campaign files' prices, else troupe's list prices); the runs under way finish
    #[arg(long, value_name = "USD")]
    pub max_spend: Option<f64>,
    /// Start no further run once the batch's model calls have used this many tokens (input
    /// plus output); the runs under way finish
    #[arg(long, value_name = "TOKENS")]
    pub max_tokens: Option<u64>,
}

impl BatchSpendArgs {
    pub fn limit(&self) -> Limit {
        Limit {
            usd: self.max_spend,
            tokens: self.max_tokens,
        }
    }
}

/// What the batch has spent: dollars and tokens.
pub fn spent(out: &Path) -> (f64, u64) {
    match troupe_report::load_batch(out) {
        Ok(events) => {
            let total = troupe_report::costs(&events).total;
            (total.usd, total.tokens())
        }
        // No run has logged anything yet.
        Err(_) => (0.0, 0),
    }
}

pub fn reached(limit: &Limit, (usd, tokens): (f64, u64)) -> bool {
    limit.usd.is_some_and(|max| usd >= max) || limit.tokens.is_some_and(|max| tokens >= max)
}

/// Raises `reached_flag` (and `stop`, so no new run starts) once the batch under `out` has
/// spent `limit`. Checks ten times a second until `done`.
pub fn watch(
    out: PathBuf,
    limit: Limit,
    stop: Arc<AtomicBool>,
    reached_flag: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
) {
    let check = move || {
        while !done.load(Ordering::SeqCst) {
            if reached(&limit, spent(&out)) {
                reached_flag.store(true, Ordering::SeqCst);
                stop.store(true, Ordering::SeqCst);
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let _ = std::thread::Builder::new()
        .name("batch-spend".into())
        .spawn(check);
}

/// The batch's limit: the command line's bounds, else the smallest each campaign file sets.
pub fn batch_limit(cli: Limit, campaigns: &[PathBuf]) -> Limit {
    let mut file = Limit::default();
    for path in campaigns {
        let Ok(c) = troupe_campaign::load(path) else {
            continue;
        };
        let b = c.spend_limit.batch;
        file.usd = min_of(file.usd, b.usd);
        file.tokens = min_of(file.tokens, b.tokens);
    }
    cli.or(file)
}

fn min_of<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y < x { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The line simulate prints when the limit stopped the batch.
pub fn stopped_message(limit: &Limit, (usd, tokens): (f64, u64)) -> String {
    let bound = match (limit.usd, limit.tokens) {
        (Some(u), Some(t)) => format!("${u:.2} or {t} tokens"),
        (Some(u), None) => format!("${u:.2}"),
        (None, Some(t)) => format!("{t} tokens"),
        (None, None) => "none".into(),
    };
    format!(
        "Batch spend limit reached: the runs spent ${usd:.4} and {tokens} tokens (limit {bound}); \
         no further run was started (the runs under way finished). Raise --max-spend / \
         --max-tokens and simulate the runs not started into a new --out to go on."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_bound_stops_the_batch() {
        let limit = Limit {
            usd: Some(1.0),
            tokens: Some(1000),
        };
        assert!(!reached(&limit, (0.99, 999)));
        assert!(reached(&limit, (1.0, 0)));
        assert!(reached(&limit, (0.0, 1000)));
        assert!(!reached(&Limit::default(), (1e9, u64::MAX)));
    }

    #[test]
    fn the_smaller_file_bound_wins_under_the_command_line() {
        assert_eq!(min_of(Some(2.0), Some(1.0)), Some(1.0));
        assert_eq!(min_of(None, Some(3)), Some(3));
        let cli = Limit {
            usd: Some(5.0),
            tokens: None,
        };
        let merged = cli.or(Limit {
            usd: Some(1.0),
            tokens: Some(10),
        });
        assert_eq!((merged.usd, merged.tokens), (Some(5.0), Some(10)));
    }
}
