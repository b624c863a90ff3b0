//! The scene's table loop with a model at the speaker's seat: the AI speaker's reply streams to
//! the watch as the speaker's, the polish's as the GM's (the engine's own call, which may name
//! what only the GM's view holds); and a model that fails past its retries at a table whose
//! seat changes hands gives the seat back to its person, with why, instead of stopping.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use troupe_engine::CallWatch;
use troupe_llm::{
    ChatModel, ChatReply, ChatRequest, Gateway, Progress, ProviderError, RetryPolicy, TokioSleeper,
    Usage,
};
use troupe_scene::table::SceneStore;
use troupe_scene::table::{
    AiSpeaker, GM, HandOvers, PlannerKind, SPEAKER, SceneModels, SceneStop, SceneTable, SceneWatch,
};
use troupe_scene::{Envelope, Scene, SceneEvent, State};
use troupe_seat::{Answer, Ask, Seat};

/// What the watch heard: each call's seat as it began, each piece of progress (seat, text),
/// each committed event.
#[derive(Default)]
struct Heard {
    thinking: Vec<String>,
    progress: Vec<(String, String)>,
    events: Vec<SceneEvent>,
}

struct Watch(Arc<Mutex<Heard>>);

impl troupe_engine::Watch<State, Envelope> for Watch {
    fn on_event(&mut self, _state: &State, env: &Envelope) {
        self.0.lock().unwrap().events.push(env.event.clone());
    }
}
impl CallWatch for Watch {
    fn thinking(&mut self, seat: &str, _doing: &str) {
        self.0.lock().unwrap().thinking.push(seat.to_string());
    }
    fn progress(&mut self, seat: &str, progress: &Progress) {
        let heard = (seat.to_string(), progress.text_delta.clone());
        self.0.lock().unwrap().progress.push(heard);
    }
}
impl SceneWatch for Watch {}

/// A model that answers by purpose: the speaker's line, the polish's rewrite.
struct Speaks;

#[async_trait]
impl ChatModel for Speaks {
    fn name(&self) -> String {
        "speaks".into()
    }
    async fn complete(&self, r: &ChatRequest) -> Result<ChatReply, ProviderError> {
        let content = match r.tag.purpose.as_str() {
            "scene_player" => "go to the mill yard",
            _ => "Wren walks into the mill yard.",
        };
        Ok(ChatReply {
            content: content.into(),
            usage: Usage::default(),
            model: "speaks".into(),
        })
    }
}

/// A model server that is down: every call fails, counted.
struct Down(AtomicU32);

#[async_trait]
impl ChatModel for Down {
    fn name(&self) -> String {
        "down".into()
    }
    async fn complete(&self, _r: &ChatRequest) -> Result<ChatReply, ProviderError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(ProviderError::Server {
            status: 503,
            body: "model is loading".into(),
        })
    }
}

/// The person at the speaker's seat: stops the scene (saved) when asked for a line.
struct Quits(Arc<AtomicU32>);

#[async_trait]
impl Seat for Quits {
    async fn decide(&mut self, _ask: &Ask) -> Answer {
        self.0.fetch_add(1, Ordering::SeqCst);
        Answer::Command {
            name: "quit".into(),
            values: Default::default(),
        }
    }
}

fn gateway(model: Arc<dyn ChatModel>) -> Gateway {
    let policy = RetryPolicy {
        delays: vec![Duration::ZERO],
        max_attempts: 3,
        ..RetryPolicy::default()
    };
    Gateway::new(model, policy, Arc::new(TokioSleeper))
}

fn models(model: Arc<dyn ChatModel>, polish: bool) -> SceneModels {
    SceneModels {
        gateway: Some(gateway(model)),
        prompts: troupe_prompts::Prompts::embedded(&[troupe_scene::prompts::TEMPLATES]),
        planner: PlannerKind::Rules,
        polish,
    }
}

fn ai(lines: u32) -> AiSpeaker {
    AiSpeaker {
        name: None,
        goal: "move the scene on".into(),
        lines_left: lines,
    }
}

/// The mill's scene begun in a fresh store, with an AI holding the speaker's seat (as `troupe
/// serve --speaker ai` begins it).
fn begun(dir: &std::path::Path) -> (SceneStore, u32, Scene) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mill.scene.yaml"
    );
    let def = troupe_scene::check(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut store = SceneStore::open(dir).unwrap();
    let run = store.begin(&def.id, "2025-01-01T00:00:00Z", &[]).unwrap();
    let mut scene = Scene::start(def, 7);
    scene.hand_over(SPEAKER, false);
    store.append(run, &scene.events, 0).unwrap();
    (store, run, scene)
}

#[tokio::test]
async fn the_ai_speakers_reply_streams_as_the_speakers_and_the_polish_as_the_gms() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run, scene) = begun(dir.path());
    let heard = Arc::new(Mutex::new(Heard::default()));
    let asked = Arc::new(AtomicU32::new(0));
    let watch = Box::new(Watch(heard.clone()));
    let mut table = SceneTable::new(store, run, scene, 0, Quits(asked), watch);
    table.models(models(Arc::new(Speaks), true), Some(ai(1)));
    assert_eq!(table.play().await.unwrap(), SceneStop::OutOfInput);
    let heard = heard.lock().unwrap();
    assert_eq!(heard.thinking, [SPEAKER, GM], "the line, then its polish");
    assert_eq!(
        heard.progress,
        [
            (SPEAKER.to_string(), "go to the mill yard".to_string()),
            (GM.to_string(), "Wren walks into the mill yard.".to_string()),
        ]
    );
}

#[tokio::test]
async fn a_failing_ai_speaker_gives_the_seat_back_to_its_person_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run, scene) = begun(dir.path());
    let heard = Arc::new(Mutex::new(Heard::default()));
    let asked = Arc::new(AtomicU32::new(0));
    let watch = Box::new(Watch(heard.clone()));
    let mut table = SceneTable::new(store, run, scene, 0, Quits(asked.clone()), watch);
    let model = Arc::new(Down(AtomicU32::new(0)));
    table.models(models(model.clone(), false), None);
    let hand_overs = HandOvers {
        queue: Arc::default(),
        wake: Arc::default(),
    };
    table.hand_overs(hand_overs, Some(ai(3)));
    // The person is asked once the seat is back with them: their `/quit` stops it, saved.
    assert_eq!(table.play().await.unwrap(), SceneStop::Quit);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(
        model.0.load(Ordering::SeqCst),
        3,
        "every attempt, then no more"
    );
    let events: Vec<&SceneEvent> = table.events().iter().map(|e| &e.event).collect();
    let [.., called, handed] = events.as_slice() else {
        panic!("{events:?}");
    };
    let SceneEvent::ModelCalled { attempts, .. } = called else {
        panic!("the failed call is in the log: {events:?}");
    };
    assert_eq!(attempts.len(), 3);
    assert!(
        attempts.iter().all(|a| !a["error"].is_null()),
        "{attempts:?}"
    );
    let SceneEvent::SeatHanded {
        seat,
        person: true,
        reason: Some(why),
    } = handed
    else {
        panic!("the seat went back to its person: {events:?}");
    };
    assert_eq!(seat, SPEAKER);
    assert!(why.contains("model is loading"), "{why}");
    assert!(heard.lock().unwrap().events.contains(handed));
    // The same log, read again, replays byte for byte.
    let replayed = troupe_scene::replay(table.events()).unwrap();
    assert_eq!(replayed.events, table.events());
}
