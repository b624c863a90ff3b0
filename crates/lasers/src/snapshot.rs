//! The session fold, cached. A snapshot is the [`Session`] as it stood after a step that ended a
//! turn, written in that step's transaction; resuming reads the newest one and folds only the
//! events after it. A snapshot is only ever a cache: one that is missing, of another format or
//! unreadable is ignored and the whole log is folded instead, with the same result.

use crate::SessionError;
use crate::{Envelope, Error, Session, Store};

/// The encoding of the snapshots this build writes; others are ignored (never misread).
/// 2: the session counts each agent's model calls (the seeds of its next calls).
pub const SNAPSHOT_FORMAT: i64 = 2;

/// The session's state as JSON, for [`Store::append_step`].
pub fn encode(session: &Session) -> Result<String, Error> {
    serde_json::to_string(session).map_err(|e| Error::Encode(e.to_string()))
}

/// The session's state from its newest snapshot (if one can be read) and the standing events
/// after it: the same state as folding every standing event from the start.
pub fn fold_stored(store: &Store, number: u32) -> Result<Session, Error> {
    if let Some((seq, format, body)) = store.latest_snapshot(number)?
        && format == SNAPSHOT_FORMAT
        && let Ok(mut session) = serde_json::from_str::<Session>(&body)
    {
        for env in &store.live_events_after(number, seq)? {
            apply_stored(&mut session, env)?;
        }
        return Ok(session);
    }
    // Without a snapshot the model calls are read too: the fold counts them.
    let events = store.live_events(number)?;
    fold(number, &events)
}

/// Fold stored events from the start of a session.
pub fn fold(number: u32, events: &[Envelope]) -> Result<Session, Error> {
    fold_with(number, events, |_, _| {})
}

/// Fold stored events from the start of a session, handing each event and the session as it
/// stands after it to `each` (the table server rebuilds its streams this way).
pub fn fold_with(
    number: u32,
    events: &[Envelope],
    mut each: impl FnMut(&Envelope, &Session),
) -> Result<Session, Error> {
    let id = events
        .first()
        .map(|e| e.session_id.clone())
        .unwrap_or_default();
    let mut session = Session::new(id, number);
    for env in events {
        apply_stored(&mut session, env)?;
        each(env, &session);
    }
    Ok(session)
}

/// Fold one stored event; one that cannot be folded is named, never a crash.
pub fn apply_stored(session: &mut Session, env: &Envelope) -> Result<(), Error> {
    crate::guard::guard(|| session.apply(env)).map_err(|message| {
        SessionError::Poisoned {
            session: env.session_number,
            what: describe(env),
            message,
            saved: "Everything before it is saved.",
        }
        .into()
    })
}

/// "event 12 (character_action, turn 3)": an event as the user can find it in the log.
pub fn describe(env: &Envelope) -> String {
    format!(
        "event {} ({}, turn {})",
        env.seq,
        env.event.event_type(),
        env.turn_number
    )
}
