//! A bug in the pure core (the fold, the turn machine) must not brick a campaign: a panic while
//! processing an event is caught at the edge and becomes an error that names the event, so
//! `troupe resume` explains instead of crashing again, and `troupe undo` can take the event back.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Run `f`; a panic inside it comes back as its message.
pub fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    // AssertUnwindSafe: after a panic the caller stops using the state `f` touched (the
    // session ends with the error), so a half-updated state is never read.
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into())
    })
}

#[cfg(test)]
mod tests {
    use super::guard;

    #[test]
    fn a_panic_becomes_its_message() {
        #[allow(clippy::panic)]
        let got = guard(|| -> u32 { panic!("byte index 2 is not a char boundary") });
        assert_eq!(got, Err("byte index 2 is not a char boundary".to_string()));
        assert_eq!(guard(|| 7), Ok(7));
    }
}
