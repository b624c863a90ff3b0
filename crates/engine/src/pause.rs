//! Where a game's loop stops on purpose and waits to be killed: how the crash tests catch the
//! binary at a chosen point of any game's log (`TROUPE_PAUSE_AFTER_EVENT`,
//! `TROUPE_PAUSE_BEFORE_COMMIT`). One rule for the three games, checked where each commits.

use std::time::Duration;

/// The points a loop pauses at; none by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrashPause {
    /// Once the log holds this many events, all of them committed.
    pub after_events: Option<u64>,
    /// Just before committing the step that holds event `seq`, after everything else the step
    /// did (a recall, a memory write): between a step's side effects and its commit.
    pub before_commit: Option<u64>,
}

impl CrashPause {
    /// The pause the crash tests ask of this process, from its environment: the binary sets it
    /// on whichever game it plays, so the variables mean the same in each.
    pub fn from_env() -> CrashPause {
        let var = |name| std::env::var(name).ok().and_then(|v| v.parse().ok());
        CrashPause {
            after_events: var("TROUPE_PAUSE_AFTER_EVENT"),
            before_commit: var("TROUPE_PAUSE_BEFORE_COMMIT"),
        }
    }

    /// Whether the log, now holding `events` committed events, has reached the pause.
    pub fn after(&self, events: u64) -> bool {
        self.after_events.is_some_and(|n| events >= n)
    }

    /// Whether a step whose events have these seqs is where to pause before committing.
    pub fn before(&self, mut seqs: impl Iterator<Item = u64>) -> bool {
        self.before_commit.is_some_and(|n| seqs.any(|seq| seq >= n))
    }
}

/// Say on standard error that the process paused after `events` events: the crash tests wait
/// for this line, then kill the process. Every game's terminal says it the same way.
pub fn announce(events: u64) {
    eprintln!("troupe: paused after {events} events (TROUPE_PAUSE_AFTER_EVENT or _BEFORE_COMMIT)");
}

/// Wait until the process is killed.
pub fn hold() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Wait until the process is killed, without blocking the runtime's other tasks (a Ctrl-C
/// handler, a served table's streams).
pub async fn hold_async() -> ! {
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_point_is_reached_at_its_event_and_not_before() {
        let none = CrashPause::default();
        assert!(!none.after(u64::MAX) && !none.before([0, u64::MAX].into_iter()));
        let at = CrashPause {
            after_events: Some(5),
            before_commit: Some(7),
        };
        assert!(!at.after(4) && at.after(5) && at.after(6));
        assert!(!at.before([5, 6].into_iter()));
        assert!(at.before([6, 7].into_iter()));
        assert!(!at.before(std::iter::empty()));
    }
}
