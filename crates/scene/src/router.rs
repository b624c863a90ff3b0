//! One tool call through the router: validate → execute → apply effects (all or nothing).

use crate::effects::Registry;
use crate::exec::{Outcome, execute};
use crate::model::State;
use crate::tools::{Caller, Rejection, ToolCall, validate};

/// Validate, execute and apply one call. On `Err` the state is exactly as it was: a rejected
/// call and a call whose effects do not all fit change nothing.
pub fn run_tool(
    state: &mut State,
    registry: &Registry,
    call: &ToolCall,
    caller: Caller,
    seed: u64,
) -> Result<Outcome, Rejection> {
    validate(state, call, caller)?;
    let outcome = execute(state, call, seed)?;
    registry
        .apply_all(state, &outcome.effects)
        .map_err(|e| Rejection {
            tool: call.name().to_string(),
            reason: e.to_string(),
        })?;
    Ok(outcome)
}
