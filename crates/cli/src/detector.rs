//! The overreach check's learned second opinion (issue 18): registered for every command, loaded
//! at the first action checked. `TROUPE_DETECTOR=pattern` leaves the rules alone.

/// The environment variable that chooses the detector: `hybrid` (the default) or `pattern`.
pub const ENV: &str = "TROUPE_DETECTOR";

/// Registers the learned classifier unless the rules alone were asked for.
pub fn register() {
    match std::env::var(ENV).as_deref() {
        Ok("pattern") => {}
        Ok("hybrid") | Ok("") | Err(_) => enable(),
        Ok(other) => {
            eprintln!("{ENV}={other:?} is not a detector (use hybrid or pattern); using hybrid");
            enable();
        }
    }
}

#[cfg(feature = "detector")]
fn enable() {
    troupe_validator::opinion::use_second_opinion(load);
}

#[cfg(not(feature = "detector"))]
fn enable() {}

#[cfg(feature = "detector")]
fn load() -> Result<Box<dyn troupe_validator::opinion::SecondOpinion>, String> {
    troupe_validator::learned::Detector::boxed().inspect_err(|e| {
        eprintln!(
            "\n{bar}\nThe learned overreach detector is unavailable, so the rules alone check \
             actions (they miss more results phrased in unusual words).\n{e}\n{bar}\n",
            bar = "!".repeat(78)
        );
    })
}
