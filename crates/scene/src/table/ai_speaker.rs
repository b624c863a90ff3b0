//! The AI at the speaker's seat, asked as a person is: the same line ask, answered with the
//! same answer (the line), which the table plays as it plays a person's. Its prompt is made of
//! the ask's view alone (the character's name and what they see, the scene's goal, the last
//! narration) with the AI's own name and goal; its model call goes to the scene's calls, logged
//! with the line's events. Having said all the lines it may, it leaves the seat ([`Answer::Leave`]);
//! when its model fails past the gateway's retries it cannot answer ([`Answer::Fail`], the error
//! kept for the table, which hands the seat back or stops).

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use troupe_llm::{CallTag, ChatRequest, Gateway, Message};
use troupe_seat::{Answer, Ask, Seat};

use super::SPEAKER;
use super::run::{AiSpeaker, SceneWatch, ask_model};
use crate::Scene;
use troupe_engine::{Error, Prompts};

/// The AI speaker for one ask: what it needs of the table, borrowed.
pub struct AiAtTheSeat<'a> {
    pub ai: &'a mut AiSpeaker,
    pub gateway: &'a Gateway,
    pub prompts: &'a Prompts,
    /// The scene's log, where its call takes its seed.
    pub scene: &'a Scene,
    /// The calls made and not yet in the scene's log.
    pub calls: &'a mut Vec<(String, String, Vec<Value>)>,
    pub watch: &'a mut dyn SceneWatch,
    /// Why it could not answer.
    pub failure: Option<Error>,
}

impl AiAtTheSeat<'_> {
    /// The character's next line: the first line of the model's reply.
    async fn line(&mut self, ask: &Ask) -> Result<String, Error> {
        let view = &ask.view;
        let text = |key: &str| view[key].as_str().unwrap_or_default().to_string();
        let system = self.prompts.render(
            "scene_player.md",
            json!({
                "name": self.ai.name,
                "character": text("name"),
                "goal": self.ai.goal,
                "scene_goal": text("goal"),
            }),
        )?;
        let user = self.prompts.render_exact(
            "scene_player_turn.md",
            json!({ "view": text("character"), "last": text("last") }),
        )?;
        let mut req = ChatRequest::new(
            CallTag::new(text("actor"), "scene_player"),
            vec![Message::system(system), Message::user(user)],
        );
        req.max_tokens = 80;
        let reply = ask_model(
            self.gateway,
            self.scene,
            req,
            self.calls,
            &mut *self.watch,
            SPEAKER,
        )
        .await?;
        let first = reply.content.lines().next().unwrap_or("look around");
        let line = first.trim().to_string();
        self.watch.spoke(&ask.prompt, &line);
        Ok(line)
    }
}

#[async_trait]
impl Seat for AiAtTheSeat<'_> {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        if self.ai.lines_left == 0 {
            return Answer::Leave;
        }
        self.ai.lines_left -= 1;
        match self.line(ask).await {
            Ok(line) => Answer::Decide {
                values: Map::from_iter([("line".to_string(), Value::String(line))]),
            },
            Err(e) => {
                let reason = e.to_string();
                self.failure = Some(e);
                Answer::Fail { reason }
            }
        }
    }
}
