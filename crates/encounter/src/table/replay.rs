//! An encounter's replay: every event the engine derives (the GM's prompt zones, what its reply
//! did, the dice, the AI players' actions) is derived again from the recorded inputs (the
//! model's replies, the people's answers, the seed) and compared byte for byte.

use crate::log::{EncounterEvent, Envelope, State, fold, live};
use crate::prompt::gm_messages;
use crate::turn::{GmStep, gm_reply, player_reply};
use troupe_rules::d20::{D20Check, roll_d20};

use troupe_engine::{Error, Prompts};

use super::EncounterError;

/// Replay a run's events with the campaign's prompts (the GM's prompt zones are derived from
/// them): the lines the players saw, in order, when every derived event comes out the same;
/// otherwise where it diverged.
pub fn replay(run: u32, events: &[Envelope], prompts: &Prompts) -> Result<Vec<String>, Error> {
    let fail = |message: String| Error::from(EncounterError::Replay { run, message });
    let live: Vec<Envelope> = live(events).into_iter().cloned().collect();
    let mut state =
        fold(live.get(..1).unwrap_or_default()).ok_or(EncounterError::NotAnEncounter(run))?;
    let mut shown = Vec::new();
    let mut i = 1;
    while i < live.len() {
        let expected = derive(prompts, &state, &live, i).map_err(&fail)?;
        for (k, want) in expected.iter().enumerate() {
            let Some(got) = live.get(i + k) else {
                return Err(fail(format!(
                    "the log ends where the replay derives {}",
                    json(want)?
                )));
            };
            if json(&got.event)? != json(want)? {
                return Err(fail(format!(
                    "replay diverged at event {}:\n  log:    {}\n  replay: {}",
                    got.seq,
                    json(&got.event)?,
                    json(want)?
                )));
            }
        }
        let n = expected.len().max(1);
        for e in live.iter().skip(i).take(n) {
            state.apply(e);
            shown.extend(super::shown(&state, &e.event, false));
        }
        i += n;
    }
    Ok(shown)
}

fn json(event: &EncounterEvent) -> Result<String, Error> {
    serde_json::to_string(event).map_err(|e| Error::Encode(e.to_string()))
}

/// What the engine makes of the input at `live[i]`: the events it derives, starting with the
/// input itself; an input nothing is derived from comes back alone.
fn derive(
    prompts: &Prompts,
    state: &State,
    live: &[Envelope],
    i: usize,
) -> Result<Vec<EncounterEvent>, String> {
    let Some(env) = live.get(i) else {
        return Ok(Vec::new());
    };
    Ok(match &env.event {
        // Replies the gateway refused for their shape come before the call they belong to:
        // the prompt and the reply's effects were worked out before any of them was recorded.
        EncounterEvent::GmRejected { reply: Some(_), .. } => {
            let mut out: Vec<EncounterEvent> = live
                .iter()
                .skip(i)
                .take_while(|e| {
                    matches!(e.event, EncounterEvent::GmRejected { reply: Some(_), .. })
                })
                .map(|e| e.event.clone())
                .collect();
            let called = i + out.len();
            if matches!(
                live.get(called).map(|e| &e.event),
                Some(EncounterEvent::GmCalled { .. })
            ) {
                out.extend(derive(prompts, state, live, called)?);
            }
            out
        }
        EncounterEvent::GmCalled { call, .. } => {
            let assembled = gm_messages(prompts, state).map_err(|e| e.to_string())?;
            let mut out = vec![EncounterEvent::GmCalled {
                call: call.clone(),
                zones: assembled.zones,
                trimmed: assembled.trimmed,
            }];
            let at = resolved_at(live, i + 1);
            match gm_reply(state, &call.json, &at) {
                GmStep::Events(more) => out.extend(more),
                GmStep::Failed(problems) => out.push(EncounterEvent::GmRejected {
                    problems,
                    reply: None,
                }),
            }
            out
        }
        EncounterEvent::PlayerCalled { call } => vec![
            env.event.clone(),
            player_reply(state, &call.agent, &call.json),
        ],
        EncounterEvent::CheckRolled { seat, .. } => {
            let Some(check) = &state.pending else {
                return Err(format!("event {}: a roll with no check pending", env.seq));
            };
            let d20 = D20Check {
                dc: check.dc,
                modifier: check.modifier,
                edge: check.edge,
            };
            let roll = roll_d20(&d20, troupe_rules::roll_seed(state.seed, state.rolls));
            vec![EncounterEvent::CheckRolled {
                seat: seat.clone(),
                roll,
            }]
        }
        other => vec![other.clone()],
    })
}

/// The time a resolution recorded, if the events derived from this reply include one.
fn resolved_at(live: &[Envelope], from: usize) -> String {
    live.iter()
        .skip(from)
        .take_while(|e| !matches!(e.event, EncounterEvent::GmCalled { .. }))
        .find_map(|e| match &e.event {
            EncounterEvent::Resolved { at, .. } => Some(at.clone()),
            _ => None,
        })
        .unwrap_or_default()
}
