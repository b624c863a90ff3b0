//! A learned second opinion beside the rules (issue 18, design 3).
//!
//! The rules are precise but miss outcomes phrased in words they do not know ("I ventilate the
//! droid", "the evidence locker is empty now"). A sentence classifier fine-tuned on labelled
//! actions reads those better. This module only holds the seam: the classifier itself lives
//! behind the `model` feature ([`crate::learned`]), so the crate stays pure without it.
//!
//! A program registers a loader once ([`use_second_opinion`]); the classifier is loaded at the
//! first check that needs it, once per process. When loading fails the rules decide alone and
//! [`status`] says why, so the program can tell its user.

use std::sync::{Mutex, OnceLock};

/// A classifier's judgement of whole actions.
pub trait SecondOpinion: Send + Sync {
    /// For each text, the probability (0–1) that it states an outcome.
    fn outcome_probabilities(&self, texts: &[&str]) -> Result<Vec<f64>, String>;
}

/// Builds the classifier; called at most once per process.
pub type Loader = fn() -> Result<Box<dyn SecondOpinion>, String>;

static LOADER: Mutex<Option<Loader>> = Mutex::new(None);
static OPINION: OnceLock<Result<Box<dyn SecondOpinion>, String>> = OnceLock::new();

/// Whether checks get a second opinion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// No loader registered: the rules alone decide (a library user, or `TROUPE_DETECTOR=pattern`).
    Off,
    /// Registered but not needed yet.
    NotLoaded,
    /// Loaded and in use.
    Ready,
    /// Loading failed: the rules alone decide, and this says why.
    Unavailable(String),
}

/// Registers the loader of the second opinion. Later checks ask it (see [`crate::check`]).
pub fn use_second_opinion(loader: Loader) {
    if let Ok(mut slot) = LOADER.lock() {
        *slot = Some(loader);
    }
}

/// Where the second opinion stands.
pub fn status() -> Status {
    match OPINION.get() {
        Some(Ok(_)) => Status::Ready,
        Some(Err(e)) => Status::Unavailable(e.clone()),
        None if registered().is_some() => Status::NotLoaded,
        None => Status::Off,
    }
}

/// Loads the second opinion now (if registered), so a program can report a failure at start
/// rather than at the first action.
pub fn load_now() -> Status {
    let _ = opinion();
    status()
}

fn registered() -> Option<Loader> {
    LOADER.lock().ok().and_then(|slot| *slot)
}

/// The loaded classifier, if one is registered and loads.
pub(crate) fn opinion() -> Option<&'static dyn SecondOpinion> {
    let loader = registered()?;
    match OPINION.get_or_init(loader) {
        Ok(o) => Some(o.as_ref()),
        Err(_) => None,
    }
}
