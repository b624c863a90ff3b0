//! The scene's table loop: the speaker (a person through any seat of the seat protocol, or an
//! AI player) says what the character whose turn it is does; the planner (the rules, or a model
//! choosing from the menu) turns it into one tool call; the engine decides; each line's events
//! and the count of lines read are committed in one transaction before anyone is shown them, so
//! a killed run resumes exactly where it stopped. At a served table an AI speaker whose model
//! fails gives the seat back to its person (a `seat_handed` with why) and the scene plays on.

use std::sync::{Arc, Mutex};

use crate::planner::plan;
use crate::view::{character_view, gm_view};
use crate::{
    Caller, Effect, Envelope, Scene, SceneEvent, State, ToolCall, Truth, WorldDelta, held_by_person,
};
use serde_json::Value;
use tokio::sync::Notify;
use troupe_engine::Watch;
use troupe_engine::attempts::For;
use troupe_llm::{CallTag, ChatRequest, Gateway, GatewayReply, Message, ResponseSchema};
use troupe_seat::{Answer, Ask, Seat, Values, check};

use super::ai_speaker::AiAtTheSeat;
use super::{GM, SPEAKER, gm_ask, help, line_ask};
use troupe_engine::{Error, Prompts};

use super::{SceneStore, SceneTableError};

/// Who turns the speaker's words into a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlannerKind {
    /// The deterministic rules planner.
    Rules,
    /// A model picks from the menu (a JSON schema); its reply is checked like any other call.
    Model,
}

/// The models a scene may use: the planner's, the polish (a rewrite of each narration that is
/// refused when it adds or contradicts a fact) and the AI speaker's, all through one gateway.
pub struct SceneModels {
    pub gateway: Option<Gateway>,
    /// The campaign's prompt registry: the speaker's, the polish's and the planner's templates
    /// (`scene_*.md`), its overrides on top.
    pub prompts: Prompts,
    pub planner: PlannerKind,
    pub polish: bool,
}

/// The AI at the speaker's seat: a name and a goal, and how many lines it may still say.
pub struct AiSpeaker {
    pub name: Option<String>,
    pub goal: String,
    pub lines_left: u32,
}

/// Who sees the scene as it is played, as every game's table is watched (each committed event
/// with the state after the line that made it; the model calls: [`SPEAKER`]'s for the AI
/// speaker's line, [`GM`]'s for the engine's own, the planner and the polish), and what only a
/// scene tells.
pub trait SceneWatch: Watch<State, Envelope> {
    /// The AI speaker said this line at this prompt.
    fn spoke(&mut self, _prompt: &str, _line: &str) {}
    /// A line's events are committed.
    fn after_line(&mut self, _state: &State) {}
    /// The scene ended with these changes to the world (the binary keeps world knowledge and
    /// memory); an error is why they could not be kept.
    fn scene_ended(&mut self, _state: &State, _deltas: &[WorldDelta]) -> Result<(), String> {
        Ok(())
    }
}

/// Why the loop stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum SceneStop {
    Ended,
    /// The speaker stopped (`/quit`); the line was counted.
    Quit,
    /// No more lines (the input ended, the AI said all it may).
    OutOfInput,
}

/// One scene run at its table.
pub struct SceneTable<P> {
    store: SceneStore,
    run: u32,
    scene: Scene,
    /// Lines read so far (a script's lines already played are skipped on resume).
    inputs: u64,
    speaker: P,
    ai: Option<AiSpeaker>,
    /// Whether the AI holds the seat until a hand-over says otherwise (at the terminal's
    /// `--player ai`); at a served table the log says who holds it.
    ai_from_start: bool,
    /// The lines an AI may say each time it is given the seat.
    ai_lines: u32,
    /// Where hand-overs arrive, at a table whose seat changes hands.
    hand_overs: Option<HandOvers>,
    models: SceneModels,
    /// Calls made and not yet in the scene's log: (agent, purpose, the gateway's attempts).
    calls: Vec<(String, String, Vec<Value>)>,
    watch: Box<dyn SceneWatch>,
    /// Whether the speaker has the GM's commands (at the terminal, the one person is both).
    gm: bool,
    /// The person who runs the scene from a seat of their own (at the web table): their
    /// commands act while the speaker is asked for a line.
    gm_seat: Option<Box<dyn Seat>>,
    pause: troupe_engine::pause::CrashPause,
}

/// The most of a failed model's error a hand-over's reason keeps.
const REASON_CHARS: usize = 300;

/// What the loop does next with the speaker's seat.
enum Turn {
    /// The speaker's answer, to act on.
    Answer(Answer),
    /// Ask again (a GM's command came first, the seat changed hands).
    Again,
    /// No more lines: the input ended, or the AI said all it may.
    Stop,
}

/// Where a served table's hand-overs of the speaker's seat arrive: (seat, a person?) in the
/// order they were asked, and a wake for a table whose AI waits to be relieved.
pub struct HandOvers {
    pub queue: Arc<Mutex<Vec<(String, bool)>>>,
    pub wake: Arc<Notify>,
}

/// Whose answer the loop took.
enum Whose {
    Speaker(Answer),
    Gm(Box<Ask>, Answer),
}

impl<P: Seat> SceneTable<P> {
    /// A table for a scene run whose log holds `scene`'s events (a new run's start, or a
    /// resumed run's events) and `inputs` lines read.
    pub fn new(
        store: SceneStore,
        run: u32,
        scene: Scene,
        inputs: u64,
        speaker: P,
        watch: Box<dyn SceneWatch>,
    ) -> Self {
        SceneTable {
            store,
            run,
            scene,
            inputs,
            speaker,
            ai: None,
            ai_from_start: false,
            ai_lines: 0,
            hand_overs: None,
            models: SceneModels {
                gateway: None,
                prompts: troupe_prompts::Prompts::embedded(&[crate::prompts::TEMPLATES]),
                planner: PlannerKind::Rules,
                polish: false,
            },
            calls: Vec::new(),
            watch,
            gm: true,
            gm_seat: None,
            pause: troupe_engine::pause::CrashPause::default(),
        }
    }

    /// The scene's models, and the AI that holds the speaker's seat from the start, if any.
    pub fn models(&mut self, models: SceneModels, ai: Option<AiSpeaker>) {
        self.models = models;
        self.ai_from_start = ai.is_some();
        self.ai_lines = ai.as_ref().map_or(0, |a| a.lines_left);
        self.ai = ai;
    }

    /// The speaker's seat changes hands (at a served table): hand-overs arrive through
    /// `hand_overs`, and `ai` (when there is one) speaks while an AI holds the seat. Who holds
    /// it is the log's: a person, unless its last hand-over gave it to an AI.
    /// A resumed table's AI has its lines left since it was last given the seat, as the log
    /// counts them: a restart neither adds lines nor takes any away.
    pub fn hand_overs(&mut self, hand_overs: HandOvers, ai: Option<AiSpeaker>) {
        self.hand_overs = Some(hand_overs);
        self.ai_from_start = false;
        self.ai_lines = ai.as_ref().map_or(0, |a| a.lines_left);
        let said = ai_lines_since_handed(&self.scene.events);
        self.ai = ai.map(|a| AiSpeaker {
            lines_left: a.lines_left.saturating_sub(said),
            ..a
        });
    }

    /// Whether the speaker has the GM's commands.
    pub fn speaker_is_gm(&mut self, gm: bool) {
        self.gm = gm;
    }

    /// A GM of the scene at a seat of their own: the speaker then has no GM commands.
    pub fn gm_seat(&mut self, seat: Box<dyn Seat>) {
        self.gm = false;
        self.gm_seat = Some(seat);
    }

    /// Where to stop and wait until the process is killed (the crash tests).
    pub fn pause_at(&mut self, pause: troupe_engine::pause::CrashPause) {
        self.pause = pause;
    }

    pub fn state(&self) -> &State {
        &self.scene.state
    }

    pub fn events(&self) -> &[Envelope] {
        &self.scene.events
    }

    pub async fn play(&mut self) -> Result<SceneStop, Error> {
        let mut answered: Vec<String> = Vec::new();
        let mut gm_answered: Vec<String> = Vec::new();
        loop {
            if self.scene.state.ended {
                return Ok(SceneStop::Ended);
            }
            self.record_hand_overs()?;
            // What the last command answered stays shown until the speaker answers: a GM's
            // command that comes first asks the speaker again.
            let ask = line_ask(&self.scene, answered.clone(), self.gm);
            let answer = match self.next_turn(&ask, &mut gm_answered).await? {
                Turn::Answer(answer) => answer,
                Turn::Again => continue,
                Turn::Stop => return Ok(SceneStop::OutOfInput),
            };
            answered.clear();
            if let Err(e) = check(&ask, &answer) {
                answered.push(format!("({e})"));
                continue;
            }
            self.inputs += 1;
            let before = self.scene.events.len();
            match answer {
                Answer::Leave | Answer::Handed | Answer::Fail { .. } => {
                    self.inputs -= 1;
                    return Ok(SceneStop::OutOfInput);
                }
                Answer::Command { name, .. } if name == "quit" => {
                    self.store.append(self.run, &[], self.inputs)?;
                    return Ok(SceneStop::Quit);
                }
                Answer::Command { name, values } => {
                    answered.extend(self.command(&name, &values.text("args")));
                }
                Answer::Decide { values } => self.words(&values.text("line")).await?,
            }
            self.commit(before)?;
        }
    }

    /// The speaker's next answer from whoever holds the seat: the AI's line, or the person's
    /// answer (or the GM's command, acted on, which asks again). An AI that has said all it may
    /// at a table whose seat changes hands waits for a person to claim it.
    async fn next_turn(&mut self, ask: &Ask, gm_answered: &mut Vec<String>) -> Result<Turn, Error> {
        if self.ai_holds() {
            return self.ai_turn(ask, gm_answered).await;
        }
        Ok(match self.next_answer(ask, gm_answered.clone()).await {
            // The seat went to an AI while the person was asked: recorded at the loop's top.
            Whose::Speaker(Answer::Handed) => Turn::Again,
            Whose::Speaker(answer) => Turn::Answer(answer),
            Whose::Gm(gm_ask, answer) => {
                *gm_answered = self.gm_answer(&gm_ask, answer)?;
                Turn::Again
            }
        })
    }

    /// The AI's turn at the seat: its line; or, its lines all said at a table whose seat changes
    /// hands, a wait for a person to claim the seat. A model that fails (past the gateway's
    /// retries) at such a table hands the seat back instead of stopping the table.
    async fn ai_turn(&mut self, ask: &Ask, gm_answered: &mut Vec<String>) -> Result<Turn, Error> {
        match self.ask_ai(ask).await {
            Ok(Answer::Leave) => {}
            Ok(answer) => return Ok(Turn::Answer(answer)),
            Err(e) => match SceneTableError::model_failure(&e) {
                Some(why) if self.hand_overs.is_some() => {
                    self.hand_back(why.to_string())?;
                    return Ok(Turn::Again);
                }
                _ => return Err(e),
            },
        }
        if self.hand_overs.is_none() {
            return Ok(Turn::Stop);
        }
        if let Some((gm_ask, answer)) = self.until_handed(gm_answered.clone()).await {
            *gm_answered = self.gm_answer(&gm_ask, answer)?;
        }
        Ok(Turn::Again)
    }

    /// The AI's model failed: its failed call goes to the log, and the seat goes back to its
    /// person (who speaks from their link, or claims it when they come), with why. Nothing the
    /// scene holds is lost, and the GM can hand the seat to the AI again once the model is back.
    fn hand_back(&mut self, why: String) -> Result<(), Error> {
        let before = self.scene.events.len();
        self.log_model_calls();
        // The whole error is in the failed call's attempts; a page needs its gist.
        let why: String = why.chars().take(REASON_CHARS).collect();
        self.scene.hand_over_because(SPEAKER, true, Some(why));
        self.commit(before)
    }

    /// Whether the AI speaks for the seat now: the log's last hand-over says so, or (none
    /// recorded) the AI was at the seat from the start.
    fn ai_holds(&self) -> bool {
        self.ai.is_some()
            && held_by_person(&self.scene.events, SPEAKER).map_or(self.ai_from_start, |p| !p)
    }

    /// Record the hand-overs asked since the last step, each one that changes who holds the
    /// seat (a hand-over to an AI only when the table has one to give it to). An AI given the
    /// seat may say its full count of lines again.
    fn record_hand_overs(&mut self) -> Result<(), Error> {
        let asked: Vec<(String, bool)> = match self.hand_overs.as_ref().map(|h| h.queue.lock()) {
            Some(Ok(mut queue)) => queue.drain(..).collect(),
            _ => Vec::new(),
        };
        for (seat, person) in asked {
            if seat != SPEAKER || self.ai.is_none() || self.ai_holds() != person {
                continue;
            }
            if let Some(ai) = self.ai.as_mut().filter(|_| !person) {
                ai.lines_left = self.ai_lines;
            }
            let before = self.scene.events.len();
            self.scene.hand_over(SPEAKER, person);
            self.commit(before)?;
        }
        Ok(())
    }

    /// Wait until someone asks for a hand-over, taking the GM's command meanwhile (returned
    /// with its ask, for the loop to act on).
    async fn until_handed(&mut self, gm_shown: Vec<String>) -> Option<(Ask, Answer)> {
        let wake = self.hand_overs.as_ref()?.wake.clone();
        let Some(gm) = self.gm_seat.as_mut() else {
            wake.notified().await;
            return None;
        };
        let gm_ask = gm_ask(&self.scene.state, gm_shown);
        tokio::select! {
            () = wake.notified() => None,
            answer = gm.decide(&gm_ask) => Some((gm_ask, answer)),
        }
    }

    /// The speaker's answer, or the GM's command when the GM has a seat and acts first (the
    /// speaker's ask is then asked again, with the scene as the command left it).
    async fn next_answer(&mut self, ask: &Ask, gm_shown: Vec<String>) -> Whose {
        let Some(gm) = self.gm_seat.as_mut() else {
            return Whose::Speaker(self.speaker.decide(ask).await);
        };
        let gm_ask = gm_ask(&self.scene.state, gm_shown);
        tokio::select! {
            answer = self.speaker.decide(ask) => Whose::Speaker(answer),
            answer = gm.decide(&gm_ask) => Whose::Gm(Box::new(gm_ask), answer),
        }
    }

    /// Act on the GM's command and commit what it did: what it answers the GM.
    fn gm_answer(&mut self, ask: &Ask, answer: Answer) -> Result<Vec<String>, Error> {
        if let Err(e) = check(ask, &answer) {
            return Ok(vec![format!("({e})")]);
        }
        let before = self.scene.events.len();
        let shown = match answer {
            Answer::Command { name, values } => self.command(&name, &values.text("args")),
            // The GM's page closed (the table is closing): the scene goes on without it.
            Answer::Leave | Answer::Handed | Answer::Fail { .. } => {
                self.gm_seat = None;
                Vec::new()
            }
            Answer::Decide { .. } => Vec::new(),
        };
        self.commit(before)?;
        Ok(shown)
    }

    /// Ask the AI at the seat, as a person is asked: its line, or [`Answer::Leave`] when there
    /// is no AI (or no model) or it has said all it may; the error when its model failed.
    async fn ask_ai(&mut self, ask: &Ask) -> Result<Answer, Error> {
        let (Some(ai), Some(gateway)) = (self.ai.as_mut(), self.models.gateway.as_ref()) else {
            return Ok(Answer::Leave);
        };
        let mut seat = AiAtTheSeat {
            ai,
            gateway,
            prompts: &self.models.prompts,
            scene: &self.scene,
            calls: &mut self.calls,
            watch: self.watch.as_mut(),
            failure: None,
        };
        let answer = seat.decide(ask).await;
        match seat.failure {
            Some(e) => Err(e),
            None => Ok(answer),
        }
    }

    /// A table command: what it answers the speaker, if anything.
    fn command(&mut self, name: &str, args: &str) -> Vec<String> {
        let state = &self.scene.state;
        let refused = |e: crate::Error| vec![format!("({e})")];
        match name {
            "help" => vec![help(self.gm)],
            "state" => vec![
                character_view(state, state.current_actor())
                    .trim_end()
                    .to_string(),
            ],
            "gm" => vec![gm_view(state).trim_end().to_string()],
            "undo" => self.scene.undo().err().map_or_else(Vec::new, refused),
            "end" => self.scene.end().err().map_or_else(Vec::new, refused),
            "note" => match args.split_once(' ') {
                Some((card, text)) => {
                    self.scene.note(card, text.trim());
                    Vec::new()
                }
                None => vec!["(usage: /note CARD TEXT)".to_string()],
            },
            "promote" => {
                let parsed = args
                    .split_once(' ')
                    .and_then(|(card, n)| n.trim().parse::<usize>().ok().map(|n| (card, n)));
                match parsed {
                    Some((card, index)) => self
                        .scene
                        .set_truth(card, index, Truth::Canon)
                        .err()
                        .map_or_else(Vec::new, refused),
                    None => vec!["(usage: /promote CARD N, N counting facts from 0)".to_string()],
                }
            }
            "effects" => match serde_json::from_str::<Vec<Effect>>(args) {
                Ok(effects) => {
                    let line = format!("/effects {args}");
                    self.scene
                        .act(&line, ToolCall::ApplyEffects { effects }, Caller::Gm);
                    Vec::new()
                }
                Err(e) => vec![format!("(not a list of effects: {e})")],
            },
            other => vec![format!("(no command /{other} here)")],
        }
    }

    /// The speaker's words: the planner's call, the engine's decision, the polish.
    async fn words(&mut self, line: &str) -> Result<(), Error> {
        // The AI speaker's call that wrote this line comes first.
        self.log_model_calls();
        if line.is_empty() {
            return Ok(());
        }
        let actor = self.scene.state.current_actor().to_string();
        let (call, reply) = self.plan(&actor, line).await?;
        self.log_model_calls();
        if let Some((model, reply)) = reply {
            self.scene.planner_replied(line, &model, reply);
        }
        let applied = matches!(
            self.scene.act(line, call, Caller::Player).event,
            SceneEvent::ToolApplied { .. }
        );
        if applied {
            self.polish_last().await?;
        }
        Ok(())
    }

    /// One call for the actor's words, and the model's reply when a model chose it.
    async fn plan(
        &mut self,
        actor: &str,
        text: &str,
    ) -> Result<(ToolCall, Option<(String, Value)>), Error> {
        let state = &self.scene.state;
        let gateway = match (&self.models.gateway, self.models.planner) {
            (Some(g), PlannerKind::Model) => g,
            _ => return Ok((plan(state, actor, text), None)),
        };
        let ask = crate::planner::model_ask(&self.models.prompts, state, actor, text)?;
        let mut req = ChatRequest::new(
            CallTag::new(actor, "scene_plan"),
            vec![Message::system(ask.system), Message::user(ask.user)],
        );
        req.schema = Some(ResponseSchema {
            name: "scene_tool_call".into(),
            schema: ask.schema,
        });
        req.temperature = 0.0;
        let reply = ask_model(
            gateway,
            &self.scene,
            req,
            &mut self.calls,
            self.watch.as_mut(),
            GM,
        )
        .await?;
        let json = match reply.json {
            Some(json) => json,
            None => serde_json::from_str(&reply.content).unwrap_or_default(),
        };
        let call = crate::planner::read_reply(state, actor, &json);
        Ok((call, Some((gateway.model_name(), json))))
    }

    /// Offer the last narration to the model for a rewrite, when polishing is on.
    async fn polish_last(&mut self) -> Result<(), Error> {
        let Some(gateway) = self.models.gateway.as_ref().filter(|_| self.models.polish) else {
            return Ok(());
        };
        let Some(SceneEvent::ToolApplied { narration, .. }) =
            self.scene.events.last().map(|e| &e.event)
        else {
            return Ok(());
        };
        let state = &self.scene.state;
        let system = self
            .models
            .prompts
            .render("scene_polish.md", serde_json::json!({ "tone": state.tone }))?;
        let mut req = ChatRequest::new(
            CallTag::new(state.current_actor(), "scene_polish"),
            vec![Message::system(system), Message::user(narration.clone())],
        );
        req.temperature = 0.3;
        let reply = ask_model(
            gateway,
            &self.scene,
            req,
            &mut self.calls,
            self.watch.as_mut(),
            GM,
        )
        .await?;
        let model = gateway.model_name();
        self.log_model_calls();
        self.scene.polish(&model, &reply.content);
        Ok(())
    }

    /// Append the model calls made since the last time to the scene's log.
    fn log_model_calls(&mut self) {
        for (agent, purpose, attempts) in self.calls.drain(..) {
            self.scene.model_called(&agent, &purpose, attempts);
        }
    }

    /// Save the line's events (and that the line was read) in one transaction, then show them.
    fn commit(&mut self, before: usize) -> Result<(), Error> {
        let new = self.scene.events.get(before..).unwrap_or_default().to_vec();
        if self.pause.before(new.iter().map(|e| e.seq)) {
            self.watch.paused(before as u64);
            troupe_engine::pause::hold();
        }
        self.store.append(self.run, &new, self.inputs)?;
        let polished = super::polished(&new);
        for env in &new {
            if !polished.contains(&env.seq) {
                self.watch.on_event(&self.scene.state, env);
            }
            if let SceneEvent::SceneEnded { deltas } = &env.event {
                self.watch
                    .scene_ended(&self.scene.state, deltas)
                    .map_err(|message| SceneTableError::World { message })?;
            }
        }
        if !new.is_empty() {
            self.watch.after_line(&self.scene.state);
        }
        if self.pause.after(self.scene.events.len() as u64) {
            self.watch.paused(self.scene.events.len() as u64);
            troupe_engine::pause::hold();
        }
        Ok(())
    }
}

/// One model call for `seat` ([`SPEAKER`], or [`GM`] for the engine's own), seeded by its
/// place among the scene's calls (those logged and those waiting in `calls`); the watch is told
/// who thinks and how far the reply has come; its attempts are kept for the log, failed ones
/// included.
pub(super) async fn ask_model(
    gateway: &Gateway,
    scene: &Scene,
    mut req: ChatRequest,
    calls: &mut Vec<(String, String, Vec<Value>)>,
    watch: &mut dyn SceneWatch,
    seat: &str,
) -> Result<GatewayReply, Error> {
    let logged = scene
        .events
        .iter()
        .filter(|e| matches!(e.event, SceneEvent::ModelCalled { .. }))
        .count();
    let identity = format!("{} call {}", req.tag.agent, logged + calls.len());
    let seeded = (scene.seed, identity.as_str());
    let whose = For {
        seat,
        doing: "thinking",
    };
    let made = troupe_engine::attempts::call(gateway, &mut req, seeded, whose, watch).await;
    calls.push((
        req.tag.agent.clone(),
        req.tag.purpose.clone(),
        made.logged(),
    ));
    let reply = made.reply;
    reply.map_err(|e| {
        SceneTableError::Model {
            message: e.to_string(),
        }
        .into()
    })
}

/// The lines the AI speaker has said since the seat was last handed to an AI (each one a
/// `scene_player` model call in the log).
fn ai_lines_since_handed(events: &[Envelope]) -> u32 {
    let handed = events.iter().rposition(
        |e| matches!(&e.event, SceneEvent::SeatHanded { seat, person: false, .. } if seat == SPEAKER),
    );
    let Some(handed) = handed else {
        return 0;
    };
    let said = events
        .iter()
        .skip(handed)
        .filter(|e| {
            matches!(&e.event, SceneEvent::ModelCalled { purpose, .. } if purpose == "scene_player")
        })
        .count();
    u32::try_from(said).unwrap_or(u32::MAX)
}
