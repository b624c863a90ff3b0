//! A scene played online (on a [`Surface`]: the web table, Discord): the scene's table loop with
//! its speaker on a page (or an AI, when the seat is handed to one: the GM's page hands it over
//! and back, its person claims it from their own, each hand-over a `seat_handed` event), and the
//! scene's events as every seat sees them (what the terminal shows its player). The speaker's
//! seat has no GM commands and their sheet is their character's view only. A table opened with a
//! GM seat gives its person the GM's commands and the GM's view (hidden entities, every card):
//! that view, and the notes and truths the GM sets on cards, reach the GM's stream alone. An AI
//! whose model fails gives the seat back to its person (the table's doing); every page is told,
//! the GM's page why.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use troupe_engine::surface::{
    Audience, Draft, GmShown, Playable, Surface, SurfaceCalls, SurfaceSeat, Update, numbered,
};
use troupe_engine::{CallWatch, Watch};

use super::{
    AiSpeaker, GM, HandOvers, SPEAKER, SceneModels, SceneStop, SceneStore, SceneTable, SceneWatch,
    polished, shown,
};
use crate::tools::Caller;
use crate::view::{character_view, gm_view};
use crate::{Envelope, Scene, SceneEvent, State, WorldDelta, held_by_person};

/// Keeps an ended scene's changes in the world (the binary's: world knowledge and memory).
pub type KeepWorld = Box<dyn FnMut(&State, &[WorldDelta]) -> Result<(), String> + Send>;

/// Everything a scene table needs, built by the binary. The run's log has begun.
pub struct SceneGame {
    pub store: SceneStore,
    pub run: u32,
    pub models: SceneModels,
    /// The AI that speaks while the speaker's seat is handed to one (None: the table has no
    /// model for it, and the seat stays with people). Who holds the seat is the log's.
    pub ai: Option<AiSpeaker>,
    /// Whether the table has a GM seat (tables opened before it had one do not).
    pub gm: bool,
    pub keep_world: KeepWorld,
}

#[async_trait(?Send)]
impl Playable for SceneGame {
    /// Play the scene until it ends or its speaker stops: why, or the error that stopped it.
    async fn play(self: Box<Self>, surface: Arc<dyn Surface>) -> Result<String, String> {
        let SceneGame {
            store,
            run,
            models,
            ai,
            gm,
            keep_world,
        } = *self;
        let stored = store.run(run).map_err(troupe_engine::error_chain)?;
        let inputs = stored.map_or(0, |r| r.inputs);
        let events = store.events(run).map_err(troupe_engine::error_chain)?;
        let scene = Scene::resume(events).map_err(|e| e.to_string())?;
        let on_call = ai.is_some();
        replay_into(surface.as_ref(), &scene, gm, on_call);
        let watch = Box::new(SurfaceWatch {
            surface: surface.clone(),
            calls: SurfaceCalls::new(surface.clone(), GM_SHOWN),
            keep_world,
            gm,
            on_call,
        });
        // What the speaker's line decided and its leaving the inbox are one commit.
        let mut store = store;
        store.consume_answers(surface.received());
        let speaker = SurfaceSeat(surface.clone());
        let mut table = SceneTable::new(store, run, scene, inputs, speaker, watch);
        table.models(models, None);
        let hand_overs = HandOvers {
            queue: surface.hand_overs(),
            wake: surface.handed(),
        };
        table.hand_overs(hand_overs, ai);
        table.speaker_is_gm(false);
        if gm {
            table.gm_seat(Box::new(SurfaceSeat(surface.clone())));
        }
        let stop = table.play().await.map_err(troupe_engine::error_chain)?;
        Ok(match stop {
            SceneStop::Ended => "the scene has ended".into(),
            SceneStop::Quit => "the player stopped it here (saved)".into(),
            SceneStop::OutOfInput => "the speaker left".into(),
        })
    }
}

/// The streams as they were: the same lines with the same ids, the sheets, who holds the
/// speaker's seat; then the pages may read them.
fn replay_into(surface: &dyn Surface, scene: &Scene, gm: bool, on_call: bool) {
    let hidden = polished(&scene.events);
    for env in scene.events.iter().filter(|e| !hidden.contains(&e.seq)) {
        publish(surface, env, on_call);
    }
    surface.publish(sheet(&scene.state, gm));
    if on_call {
        let person = held_by_person(&scene.events, SPEAKER).unwrap_or(true);
        surface.publish(holder(person));
    }
    surface.mark_ready();
}

/// The planner's and the polish's calls are the table's own, shown as the narrator's; their
/// drafts (which may name what only the GM's view holds) show on the GM's page, which sees
/// everything. The AI speaker's draft shows on the speaker's page.
const GM_SHOWN: GmShown = GmShown {
    name: "The narrator",
    draft: Draft::Shown,
};

struct SurfaceWatch {
    surface: Arc<dyn Surface>,
    /// Whose model works, its tokens and drafts, as every game's table shows them.
    calls: SurfaceCalls,
    keep_world: KeepWorld,
    gm: bool,
    /// Whether an AI can take the speaker's seat (the pages then offer the hand-over).
    on_call: bool,
}

impl Watch<State, Envelope> for SurfaceWatch {
    fn on_event(&mut self, _state: &State, env: &Envelope) {
        publish(self.surface.as_ref(), env, self.on_call);
    }
}

impl CallWatch for SurfaceWatch {
    fn thinking(&mut self, seat: &str, doing: &str) {
        self.calls.thinking(seat, doing);
    }
    fn progress(&mut self, seat: &str, progress: &troupe_llm::Progress) {
        self.calls.progress(seat, progress);
    }
    fn idle(&mut self) {
        self.calls.idle();
    }
}

impl SceneWatch for SurfaceWatch {
    fn after_line(&mut self, state: &State) {
        self.surface.publish(sheet(state, self.gm));
    }

    fn scene_ended(&mut self, state: &State, deltas: &[WorldDelta]) -> Result<(), String> {
        (self.keep_world)(state, deltas)
    }
}

/// An event to the pages. A seat the AI gave back because its model failed is not given to it
/// again for being idle until someone hands it over (the surface's rule), after a restart too:
/// the log says so.
fn publish(surface: &dyn Surface, env: &Envelope, on_call: bool) {
    match &env.event {
        SceneEvent::SeatHanded {
            seat,
            reason: Some(_),
            ..
        } => surface.ai_failed(seat, true),
        SceneEvent::SeatHanded {
            seat,
            person: false,
            ..
        } => surface.ai_failed(seat, false),
        _ => {}
    }
    surface.publish(update(env, on_call));
}

/// Who holds the speaker's seat, for the pages' hand-over buttons.
fn holder(person: bool) -> Update {
    Update {
        holders: vec![(SPEAKER.to_string(), person)],
        ..Update::default()
    }
}

/// An event's line: every seat reads what the terminal's player reads; a hand-over also says
/// who holds the seat now (when an AI can hold it).
pub fn update(env: &Envelope, on_call: bool) -> Update {
    let ended = match &env.event {
        SceneEvent::SceneEnded { .. } => Some(shown(&env.event)),
        _ => None,
    };
    let kind = match &env.event {
        SceneEvent::ToolApplied { .. } | SceneEvent::NarrationPolished { .. } => "gm",
        SceneEvent::Rejected { .. } => "problem",
        SceneEvent::SeatHanded { .. } => "seat",
        _ => "session",
    };
    // What the GM writes on the cards is the GM's bookkeeping, not the world's; a GM's call the
    // table refused is the GM's to read (its reason may name what only the GM's view holds: a
    // hidden entity, a card); an applied one is the world's and its narration the table's.
    let audience = match &env.event {
        SceneEvent::Noted { .. } | SceneEvent::TruthChanged { .. } => Audience::Gm,
        SceneEvent::Rejected {
            caller: Caller::Gm, ..
        } => Audience::Gm,
        _ => Audience::Table,
    };
    let mut lines: Vec<_> = shown(&env.event)
        .map(|text| (audience, kind, text))
        .into_iter()
        .collect();
    // Why the table handed the seat back on its own: the GM's to know and act on.
    if let SceneEvent::SeatHanded {
        reason: Some(why), ..
    } = &env.event
    {
        lines.push((Audience::Gm, "problem", handed_back(why)));
    }
    let holders = match &env.event {
        SceneEvent::SeatHanded { person, .. } if on_call => holder(*person).holders,
        _ => Vec::new(),
    };
    Update {
        lines: numbered(env.seq, lines),
        ended,
        holders,
        ..Update::default()
    }
}

/// What the GM's page says when the AI's model failed and the seat went back to its person.
fn handed_back(why: &str) -> String {
    format!(
        "The AI speaker's model failed, so the seat went back to its person ({why}). \
         Hand it to the AI again once the model works."
    )
}

/// The speaker's sheet: what the character whose turn it is perceives; and, at a table with a
/// GM seat, the GM's: everything.
pub fn sheet(state: &State, gm: bool) -> Update {
    let actor = state.current_actor();
    let turn = format!("It is {}'s turn.", state.name_of(actor));
    let info = format!("{turn}\n{}", character_view(state, actor).trim_end());
    let mut sheets = vec![(SPEAKER.to_string(), json!({ "info": info }))];
    if gm {
        let everything = format!("{turn}\n{}", gm_view(state).trim_end());
        sheets.push((GM.to_string(), json!({ "info": everything })));
    }
    Update {
        sheets,
        ..Update::default()
    }
}
