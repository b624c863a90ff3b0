//! Discord's HTTP API, the few calls the bot makes, on reqwest. Rate limits are obeyed here: a
//! route whose `X-RateLimit-Remaining` reached 0 waits `X-RateLimit-Reset-After`; a 429 waits
//! its `retry_after` (every route when it is global) and is tried again, at most
//! [`MAX_TRIES`] times. Bodies and replies are twilight-model's types.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use twilight_model::application::command::Command;
use twilight_model::channel::message::{AllowedMentions, Component, Embed, MessageFlags};
use twilight_model::channel::{Channel, Message};
use twilight_model::http::interaction::InteractionResponse;
use twilight_model::id::Id;
use twilight_model::id::marker::{
    ApplicationMarker, ChannelMarker, InteractionMarker, MessageMarker, UserMarker,
};
use twilight_model::user::CurrentUser;

use crate::token::Token;

/// Discord's API, version 10.
pub const DISCORD_API: &str = "https://discord.com/api/v10";
/// Tries of one request that Discord rate-limits (each after waiting what it said).
pub const MAX_TRIES: usize = 6;
/// The longest wait a 429 may ask for before the bot gives up on that request.
const MAX_WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum RestError {
    /// The token was refused (401): nothing more is sent with it.
    #[error("Discord refused the bot's token (401 Unauthorized)")]
    Unauthorized,
    #[error("Discord answered {status} to {what}: {message}")]
    Status {
        status: u16,
        what: String,
        message: String,
    },
    #[error("Discord kept rate-limiting {what} (429, {tries} tries)")]
    RateLimited { what: String, tries: usize },
    #[error("could not reach Discord for {what}: {message}")]
    Unreachable { what: String, message: String },
    #[error("Discord's reply to {what} was not what troupe reads: {message}")]
    Reply { what: String, message: String },
}

/// A new message: its text, embeds and buttons (twilight-model's), never pinging anyone.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NewMessage {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub embeds: Vec<Embed>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<Component>,
    pub allowed_mentions: AllowedMentions,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<MessageFlags>,
}

#[derive(Default)]
struct Limits {
    /// Every request waits until then (a global 429).
    global_until: Option<Instant>,
    /// A route waits until then (its bucket ran out, or it was rate-limited).
    routes: HashMap<String, Instant>,
}

pub struct Rest {
    http: reqwest::Client,
    base: String,
    token: Token,
    limits: Mutex<Limits>,
    /// Set once the token is refused: no request is sent with it again.
    refused: std::sync::atomic::AtomicBool,
}

impl Rest {
    /// A client of the API at `base` (Discord's is [`DISCORD_API`]; a test's fake elsewhere).
    pub fn new(base: &str, token: Token) -> Rest {
        Rest {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(20))
                .build()
                .unwrap_or_default(),
            base: base.trim_end_matches('/').to_string(),
            token,
            limits: Mutex::default(),
            refused: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Who the token is: a refused token is [`RestError::Unauthorized`].
    pub async fn me(&self) -> Result<CurrentUser, RestError> {
        self.call(reqwest::Method::GET, "users/@me", "users/@me", None)
            .await
    }

    pub async fn send(
        &self,
        channel: Id<ChannelMarker>,
        message: &NewMessage,
    ) -> Result<Message, RestError> {
        let path = format!("channels/{channel}/messages");
        self.call(reqwest::Method::POST, &path, &path, Some(json(message)?))
            .await
    }

    /// A public thread in `channel` for a table.
    pub async fn thread(
        &self,
        channel: Id<ChannelMarker>,
        name: &str,
    ) -> Result<Channel, RestError> {
        let path = format!("channels/{channel}/threads");
        let name: String = name.chars().take(100).collect();
        let body = serde_json::json!({"name": name, "type": 11, "auto_archive_duration": 10080});
        self.call(reqwest::Method::POST, &path, &path, Some(body))
            .await
    }

    /// The direct-message channel with a person.
    pub async fn dm(&self, user: Id<UserMarker>) -> Result<Channel, RestError> {
        let body = serde_json::json!({"recipient_id": user.to_string()});
        self.call(
            reqwest::Method::POST,
            "users/@me/channels",
            "users/@me/channels",
            Some(body),
        )
        .await
    }

    /// React to a message (the bot's ✓ that an answer was taken).
    pub async fn react(
        &self,
        channel: Id<ChannelMarker>,
        message: Id<MessageMarker>,
        emoji: &str,
    ) -> Result<(), RestError> {
        let encoded: String = emoji
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect::<Vec<_>>()
            .concat();
        let path = format!("channels/{channel}/messages/{message}/reactions/{encoded}/@me");
        let route = format!("channels/{channel}/messages/reactions");
        self.call_empty(reqwest::Method::PUT, &path, &route, None)
            .await
    }

    /// Answer an interaction (a slash command, a button).
    pub async fn respond(
        &self,
        id: Id<InteractionMarker>,
        token: &str,
        response: &InteractionResponse,
    ) -> Result<(), RestError> {
        let path = format!("interactions/{id}/{token}/callback");
        self.call_empty(
            reqwest::Method::POST,
            &path,
            "interactions/callback",
            Some(json(response)?),
        )
        .await
    }

    /// The bot's slash commands, all at once (Discord replaces the old set).
    pub async fn commands(
        &self,
        application: Id<ApplicationMarker>,
        commands: &[Command],
    ) -> Result<(), RestError> {
        let path = format!("applications/{application}/commands");
        let _: Value = self
            .call(reqwest::Method::PUT, &path, &path, Some(json(&commands)?))
            .await?;
        Ok(())
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        route: &str,
        body: Option<Value>,
    ) -> Result<T, RestError> {
        let text = self.request(method, path, route, body).await?;
        serde_json::from_str(&text).map_err(|e| RestError::Reply {
            what: what(route),
            message: e.to_string(),
        })
    }

    async fn call_empty(
        &self,
        method: reqwest::Method,
        path: &str,
        route: &str,
        body: Option<Value>,
    ) -> Result<(), RestError> {
        self.request(method, path, route, body).await.map(|_| ())
    }

    /// One request, waiting out the rate limits: the reply's body.
    async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        route: &str,
        body: Option<Value>,
    ) -> Result<String, RestError> {
        let what = what(route);
        for _ in 0..MAX_TRIES {
            if self.refused.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(RestError::Unauthorized);
            }
            self.wait_for(route).await;
            let mut req = self
                .http
                .request(method.clone(), format!("{}/{path}", self.base))
                .header("Authorization", self.token.header())
                .header("User-Agent", "DiscordBot (https://github.com/troupe, 0.1)");
            req = match &body {
                Some(b) => req.json(b),
                None => req.header("Content-Length", "0"),
            };
            // The URL holds an interaction's token on a callback: the error keeps none of it.
            let reply = req.send().await.map_err(|e| RestError::Unreachable {
                what: what.clone(),
                message: e.without_url().to_string(),
            })?;
            let status = reply.status().as_u16();
            self.note_bucket(route, reply.headers());
            let global_header = header(reply.headers(), "x-ratelimit-global").as_deref()
                == Some("true")
                || header(reply.headers(), "x-ratelimit-scope").as_deref() == Some("global");
            let retry_header = header(reply.headers(), "retry-after");
            let text = reply.text().await.unwrap_or_default();
            match status {
                200..=299 => return Ok(text),
                401 => {
                    self.refused
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                    return Err(RestError::Unauthorized);
                }
                429 => {
                    let parsed: Value = serde_json::from_str(&text).unwrap_or_default();
                    let secs = parsed["retry_after"]
                        .as_f64()
                        .or_else(|| retry_header.and_then(|h| h.parse().ok()))
                        .unwrap_or(1.0);
                    let wait = Duration::from_secs_f64(secs.clamp(0.0, 3600.0));
                    if wait > MAX_WAIT {
                        return Err(RestError::RateLimited { what, tries: 1 });
                    }
                    let global = parsed["global"].as_bool().unwrap_or(false) || global_header;
                    self.hold(route, global, wait);
                }
                _ => {
                    let parsed: Value = serde_json::from_str(&text).unwrap_or_default();
                    let message = parsed["message"]
                        .as_str()
                        .map_or_else(|| text.chars().take(200).collect(), str::to_string);
                    return Err(RestError::Status {
                        status,
                        what,
                        message,
                    });
                }
            }
        }
        Err(RestError::RateLimited {
            what,
            tries: MAX_TRIES,
        })
    }

    /// Wait until neither the whole API nor this route is held back.
    async fn wait_for(&self, route: &str) {
        loop {
            let until = {
                let limits = self.limits.lock().unwrap_or_else(|e| e.into_inner());
                [limits.global_until, limits.routes.get(route).copied()]
                    .into_iter()
                    .flatten()
                    .max()
            };
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t.into()).await,
                _ => return,
            }
        }
    }

    fn hold(&self, route: &str, global: bool, wait: Duration) {
        let until = Instant::now() + wait;
        let mut limits = self.limits.lock().unwrap_or_else(|e| e.into_inner());
        if global {
            limits.global_until = Some(until);
        } else {
            limits.routes.insert(route.to_string(), until);
        }
    }

    /// A bucket that has run out holds its route until it resets.
    fn note_bucket(&self, route: &str, headers: &reqwest::header::HeaderMap) {
        let remaining = header(headers, "x-ratelimit-remaining");
        let reset = header(headers, "x-ratelimit-reset-after").and_then(|r| r.parse::<f64>().ok());
        if remaining.as_deref() == Some("0")
            && let Some(secs) = reset
        {
            self.hold(
                route,
                false,
                Duration::from_secs_f64(secs.clamp(0.0, 3600.0)),
            );
        }
    }
}

fn header(headers: &reqwest::header::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// A route as an error names it: no ids, no interaction token.
fn what(route: &str) -> String {
    route
        .split('/')
        .map(|part| {
            if part.chars().all(|c| c.is_ascii_digit()) && !part.is_empty() {
                "{id}"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn json<T: Serialize>(value: &T) -> Result<Value, RestError> {
    serde_json::to_value(value).map_err(|e| RestError::Reply {
        what: "a request body".into(),
        message: e.to_string(),
    })
}
