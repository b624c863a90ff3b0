//! Taking back the last GM decision (or the whole turn) of a session: the undo is recorded
//! (`events_undone`), and the events it takes back are marked undone (kept in the log) in the
//! same transaction, as every game's undo is (see `store/mod.rs`). The
//! session then resumes from there and asks for the decision again. What the undone turns put
//! into memory is the caller's to forget (from [`Undone::from_turn`]); the JSONL mirror gets the
//! undo from the store, as every commit.

use crate::{Envelope, Error, Event, Store, Unreadable};

/// What an undo took back.
pub struct Undone {
    /// "the narration (turn 3)", for people.
    pub what: String,
    /// How many events were marked undone.
    pub events: usize,
    /// The first turn the undo reaches into.
    pub from_turn: u32,
    /// The recorded undo.
    pub marker: Envelope,
    /// An event that could not be read, which the undo started before.
    pub unreadable: Option<Unreadable>,
}

/// Is this a decision the GM made (or a command the GM typed)?
pub fn gm_decision(event: &Event) -> Option<&'static str> {
    Some(match event {
        Event::GmNarration { .. } => "the narration",
        Event::GmAnswers { .. } => "the answers to the AI's questions",
        Event::GmReviewedAction { .. } => "the review of an action",
        Event::GmAdjudication { .. } => "the ruling on an action",
        Event::GmRollOverride { .. } => "the roll override",
        Event::LaserFeelingsAnswer { .. } => "the answer to a LASER FEELINGS question",
        Event::GmOutcome { .. } => "the outcome narration",
        Event::GmForcedResult { .. } => "the forced result",
        Event::GmRoll { .. } => "the /roll",
        Event::SceneEnded { .. } => "the scene's end",
        Event::TimePassed { .. } => "the days that passed",
        Event::GmFailureDecision { .. } => "the decision on a failed phase",
        _ => return None,
    })
}

/// Take back session `number`'s last GM decision (with `whole_turn`, its last turn); None when
/// there is nothing to take back.
pub fn undo_last(
    store: &mut Store,
    number: u32,
    whole_turn: bool,
) -> Result<Option<Undone>, Error> {
    // A damaged event cannot be read, so it cannot be the decision taken back: the undo starts
    // at the last GM decision before it, and takes the damaged event back with the rest.
    let (live, unreadable) = store.readable_live_events(number)?;
    let target = if whole_turn {
        live.iter()
            .rposition(|e| matches!(e.event, Event::TurnStarted))
            .map(|i| (i, format!("turn {}", live[i].turn_number)))
    } else {
        live.iter()
            .rposition(|e| gm_decision(&e.event).is_some())
            .map(|i| {
                let what = gm_decision(&live[i].event).unwrap_or("a GM decision");
                (i, format!("{what} (turn {})", live[i].turn_number))
            })
    };
    let Some((mut index, what)) = target else {
        return Ok(None);
    };
    // An AI GM's calls (and its checks' flags) led to the decision: they go back with it, so
    // the decision is made again, not read from a reply already used.
    while index > 0
        && live.get(index - 1).is_some_and(|e| {
            matches!(&e.event, Event::ModelCall { agent, .. } if agent == troupe_agents::GM_AGENT)
                || matches!(e.event, Event::GmFlagged { .. })
        })
    {
        index -= 1;
    }
    let from_seq = live[index].seq;
    let to_seq = match unreadable {
        // The damaged event is not in `live`: the undo reaches the log's last stored event.
        Some(_) => store.next_seq(number)?.saturating_sub(1),
        None => live.last().map_or(from_seq, |e| e.seq),
    };
    let state = crate::snapshot::fold(number, &live[..index])?;
    let marker = Envelope {
        seq: store.next_seq(number)?,
        timestamp: chrono::Utc::now(),
        session_id: state.id.clone(),
        session_number: number,
        turn_number: state.turn_number,
        phase: state.phase,
        event: Event::EventsUndone {
            from_seq,
            to_seq,
            what: what.clone(),
        },
    };
    // One transaction: the marker and the marks it makes (see `Store::append_undo`), so a
    // process killed here leaves the undo whole or not begun.
    let events = store.append_undo(number, &marker)?;
    Ok(Some(Undone {
        what,
        events,
        from_turn: live[index].turn_number.max(1),
        marker,
        unreadable,
    }))
}
