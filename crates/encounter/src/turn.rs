//! What a GM reply does to the encounter: checked, checked for secrets, and turned into the
//! events that record it. Pure: the runner brings the model's reply and the clock.

use serde_json::Value;
use troupe_scene::{Caller, Scene, SceneEvent};

use crate::Error;
use crate::leaks::{Leak, Secrets, find_leaks, find_secrets, scene_claims, withhold};
use crate::log::{EncounterEvent, GM_ATTEMPTS, State};
use crate::names::npc_name;
use crate::tools::{Call, GmReply, Table, read_reply};

/// What became of a GM reply.
#[derive(Debug, PartialEq)]
pub enum GmStep {
    /// Record these (a rejection to re-ask, or the accepted reply and its tools' results).
    Events(Vec<EncounterEvent>),
    /// The reply failed its checks for the last allowed time: the step fails, saved, and a
    /// resume asks again.
    Failed(Vec<String>),
}

/// Everything the players must not learn: goals (when hidden: labels and ids), DCs, the notes
/// of checks not yet succeeded, GM notes, NPC memories and personas.
pub fn secrets(state: &State) -> Secrets {
    secrets_but(state, None)
}

/// The secrets, less the goal a reply resolves (its narration may well tell that it is reached).
fn secrets_but(state: &State, resolved: Option<&str>) -> Secrets {
    let mut s = Secrets::default();
    let spec = &state.spec;
    if spec.goals.hidden {
        for g in spec.goals().chain(&state.extra_goals) {
            if Some(g.id.as_str()) != resolved {
                s.add_goal(&g.label).add_goal_id(&g.id);
            }
        }
    }
    for c in &spec.checks {
        s.add_check_dc(&c.name, c.skill.clone(), c.dc);
        match &c.note {
            Some(note) if !state.succeeded.contains(&c.name) => {
                s.add_check_note(&c.name, note);
            }
            _ => {}
        }
    }
    if let Some(n) = &spec.gm_notes {
        s.add_note(n);
    }
    for npc in &spec.npcs {
        s.add_persona(npc_name(npc, &state.names), &npc.persona);
    }
    for m in &state.memories {
        let name = spec
            .npc(&m.npc)
            .map_or(m.npc.clone(), |n| npc_name(n, &state.names));
        for line in &m.lines {
            s.add_npc_memory(&name, line);
        }
    }
    s
}

/// The scene as it stands: its file's scene replayed through the GM's calls so far.
pub fn scene(state: &State) -> Result<Option<Scene>, Error> {
    let Some(text) = &state.scene else {
        return Ok(None);
    };
    let def = troupe_scene::check(text).map_err(|problems| Error::Scene { problems })?;
    let mut scene = Scene::start(def, state.seed);
    for call in &state.scene_calls {
        scene.act("gm", call.clone(), Caller::Gm);
    }
    Ok(Some(scene))
}

/// Take the GM's reply: reject it (with the reasons) if it fails the tools' checks, send it
/// back once if it tells a secret (the second time the leaking sentences are withheld), else
/// record its narration and run its tools. `now` names the summary file of a resolution.
pub fn gm_reply(state: &State, json: &Value, now: &str) -> GmStep {
    let (seats, has_scene) = crate::prompt::table(state);
    let table = Table {
        spec: &state.spec,
        extra_goals: &state.extra_goals,
        seats: &seats,
        has_scene,
    };
    let reply = match read_reply(json, &table) {
        Ok(r) => r,
        Err(problems) if state.rejected + 1 >= GM_ATTEMPTS => return GmStep::Failed(problems),
        Err(problems) => {
            return GmStep::Events(vec![EncounterEvent::GmRejected {
                problems,
                reply: None,
            }]);
        }
    };
    let resolved = reply.calls.iter().find_map(|c| match c {
        Call::EncounterResolve { goal, .. } => Some(goal.as_str()),
        _ => None,
    });
    let secrets = secrets_but(state, resolved);
    let pcs: Vec<String> = state.seats.iter().map(|s| s.character.clone()).collect();
    let mut leaks = find_leaks(&reply.narration, &secrets, &pcs);
    for (place, text) in shown_arguments(&reply.calls) {
        leaks.extend(find_secrets(text, &secrets, place));
    }
    let (tools, after) = match tool_events(state, &reply, now) {
        Ok(t) => t,
        Err(e) => return GmStep::Failed(vec![e.to_string()]),
    };
    if let Some(scene) = after {
        leaks.extend(unbacked_claims(&reply.narration, &scene, &tools));
    }
    let mut events = Vec::new();
    let mut reply = reply;
    let mut tools = tools;
    if !leaks.is_empty() {
        let withheld = state.rewriting;
        events.push(EncounterEvent::LeakCaught {
            leaks: leaks.clone(),
            withheld,
        });
        if !withheld {
            return GmStep::Events(events);
        }
        reply.narration = withhold(&reply.narration, &leaks, &secrets);
        withhold_arguments(&mut reply.calls, &secrets.for_arguments());
        // A withheld argument changes what the tools record.
        tools = match tool_events(state, &reply, now) {
            Ok((more, _)) => more,
            Err(e) => return GmStep::Failed(vec![e.to_string()]),
        };
    }
    events.push(EncounterEvent::Narrated {
        text: reply.narration.clone(),
        facts: reply.facts.clone(),
    });
    events.extend(tools);
    GmStep::Events(events)
}

/// What the narration tells that the scene (as this reply's tools left it) does not hold.
fn unbacked_claims(narration: &str, scene: &Scene, tools: &[EncounterEvent]) -> Vec<Leak> {
    let applied: Vec<String> = tools
        .iter()
        .filter_map(|e| match e {
            EncounterEvent::SceneActed {
                applied: true,
                outcome,
                ..
            } => Some(outcome.clone()),
            _ => None,
        })
        .collect();
    scene_claims(narration, |sentence| {
        troupe_scene::narrator::unbacked(sentence, &scene.state, &applied)
    })
}

/// The tool arguments the players see, with where they are: what a roll is for (on screen and
/// in the story), and the resolution's summary (on screen, in the summary file and in memory).
fn shown_arguments(calls: &[Call]) -> Vec<(&'static str, &str)> {
    calls
        .iter()
        .filter_map(|c| match c {
            Call::SkillCheckEmit(check) => Some(("skill_check_emit.what", check.what.as_str())),
            Call::EncounterResolve { summary, .. } => {
                Some(("encounter_resolve.summary", summary.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// The arguments of [`shown_arguments`] with every sentence that tells a secret withheld.
fn withhold_arguments(calls: &mut [Call], secrets: &Secrets) {
    for call in calls {
        match call {
            Call::SkillCheckEmit(check) => check.what = withhold(&check.what, &[], secrets),
            Call::EncounterResolve { summary, .. } => *summary = withhold(summary, &[], secrets),
            _ => {}
        }
    }
}

/// The events of the reply's tools, and the scene as they leave it (when there is one).
fn tool_events(
    state: &State,
    reply: &GmReply,
    now: &str,
) -> Result<(Vec<EncounterEvent>, Option<Scene>), Error> {
    let mut scene = scene(state)?;
    let mut out = Vec::new();
    for call in &reply.calls {
        out.push(match call {
            Call::SkillCheckEmit(check) => EncounterEvent::CheckEmitted {
                check: check.clone(),
            },
            Call::ContextRecall { keys } => EncounterEvent::Recalled {
                facts: recall_after(state, reply, keys),
            },
            Call::GoalRegister { goal, primary } => EncounterEvent::GoalRegistered {
                goal: goal.clone(),
                primary: *primary,
            },
            Call::EncounterResolve { goal, summary } => EncounterEvent::Resolved {
                goal: goal.clone(),
                summary: summary.clone(),
                file: summary_file(&state.spec.id, now),
                at: now.to_string(),
            },
            Call::Scene(call) => scene_event(scene.as_mut(), call),
        });
    }
    Ok((out, scene))
}

/// The facts as they stand after this reply settles its own.
fn recall_after(state: &State, reply: &GmReply, keys: &[String]) -> Vec<(String, String)> {
    let mut facts = state.facts.clone();
    for (k, v) in &reply.facts {
        facts.insert(k.clone(), v.clone());
    }
    crate::log::recall(&facts, keys)
}

fn scene_event(scene: Option<&mut Scene>, call: &troupe_scene::ToolCall) -> EncounterEvent {
    let (applied, outcome) = match scene {
        None => (
            false,
            "refused: there is no scene in this encounter".to_string(),
        ),
        Some(scene) => match &scene.act("gm", call.clone(), Caller::Gm).event {
            SceneEvent::ToolApplied { narration, .. } => (true, narration.clone()),
            SceneEvent::Rejected { reason, .. } => (false, format!("refused: {reason}")),
            _ => (false, String::new()),
        },
    };
    EncounterEvent::SceneActed {
        call: call.clone(),
        applied,
        outcome,
    }
}

/// `summaries/{encounterId}-{timestamp}.txt`, the timestamp with dashes for colons.
pub fn summary_file(id: &str, now: &str) -> String {
    format!("summaries/{id}-{}.txt", now.replace(':', "-"))
}

/// An AI player's reply as the table hears it: the attempt, and the words in quotes.
pub fn action_text(json: &Value) -> String {
    let action = json["action"].as_str().unwrap_or_default().trim();
    let dialogue = json["dialogue"].as_str().unwrap_or_default().trim();
    match (action.is_empty(), dialogue.is_empty()) {
        (true, true) => "(waits)".to_string(),
        (false, true) => action.to_string(),
        (true, false) => format!("\"{dialogue}\""),
        (false, false) => format!("{action} \"{dialogue}\""),
    }
}

/// What an AI player's reply does: the action its words make ([`action_text`]), taken as a
/// person's is ([`action_taken`]).
pub fn player_reply(state: &State, seat: &str, json: &Value) -> EncounterEvent {
    action_taken(state, seat, &action_text(json))
}

/// What a player's action does, whoever gave it, a person or an AI: an action that says what
/// happens is sent back once with the validator's feedback; the rewrite is the action, whatever
/// it says (the GM decides the outcome), and an empty rewrite sends the action as it was. An
/// empty action is waiting.
pub fn action_taken(state: &State, seat: &str, line: &str) -> EncounterEvent {
    let acted = |text: &str| EncounterEvent::PlayerActed {
        seat: seat.to_string(),
        text: if text.is_empty() { "(waits)" } else { text }.to_string(),
    };
    if let Some(sent) = state.sent_back_to(seat) {
        return acted(if line.is_empty() { &sent.text } else { line });
    }
    let verdict = troupe_validator::check(line);
    if line.is_empty() || !verdict.flagged {
        return acted(line);
    }
    EncounterEvent::ActionSentBack {
        seat: seat.to_string(),
        text: line.to_string(),
        feedback: troupe_validator::feedback(&verdict),
    }
}
