//! A fake Discord on free local ports: the REST API the bot calls (axum) and a real websocket
//! gateway (tokio-websockets: hello, identify, heartbeat, resume, reconnect, dispatches). Every
//! payload it sends is built from twilight-model's types (the ones the library reads), so the
//! fake cannot drift from what the library parses. It records everything the bot sends, and
//! can rate-limit: a bucket per channel with Discord's headers, and a global 429.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_websockets::Message as WsMessage;
use twilight_model::application::command::CommandType;
use twilight_model::application::interaction::application_command::{
    CommandData, CommandDataOption, CommandOptionValue,
};
use twilight_model::application::interaction::message_component::MessageComponentInteractionData;
use twilight_model::application::interaction::{Interaction, InteractionData, InteractionType};
use twilight_model::channel::message::component::ComponentType;
use twilight_model::channel::message::{Message, MessageType};
use twilight_model::channel::{Channel, ChannelType};
use twilight_model::gateway::ShardId;
use twilight_model::gateway::payload::incoming::{Hello, Ready};
use twilight_model::id::Id;
use twilight_model::oauth::ApplicationIntegrationMap;
use twilight_model::oauth::{ApplicationFlags, PartialApplication};
use twilight_model::user::{CurrentUser, User};
use twilight_model::util::Timestamp;

pub const TOKEN: &str = "fake.token.NEVER-PRINT-ME";
pub const BOT: u64 = 900;
pub const APP: u64 = 901;
pub const GUILD: u64 = 902;
/// The channel tables open their threads in.
pub const CHANNEL: u64 = 903;

/// One message the bot created.
#[derive(Clone, Debug)]
pub struct Posted {
    pub channel: u64,
    pub body: Value,
}

impl Posted {
    /// Every string in the message (its text, each embed's author and description, buttons).
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        strings(&self.body, &mut out);
        out.join("\n")
    }
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[derive(Default)]
pub struct Recorded {
    pub posts: Vec<Posted>,
    pub reactions: Vec<(u64, u64, String)>,
    pub callbacks: Vec<(u64, Value)>,
    pub threads: Vec<(u64, u64, String)>,
    pub dms: HashMap<u64, u64>,
    pub commands: Vec<Value>,
    /// Every request: method, path, when, status.
    pub requests: Vec<(String, String, Instant, u16)>,
    pub identifies: u32,
    pub resumes: u32,
    pub heartbeats: u32,
    /// Every raw request body and header the bot sent (to look for the token).
    pub raw: Vec<String>,
}

#[derive(Default)]
struct Limits {
    /// Messages per channel per window; None: unlimited.
    bucket: Option<(u32, Duration)>,
    windows: HashMap<u64, (Instant, u32)>,
    /// People whose direct messages are closed.
    closed: Vec<u64>,
    /// The next request gets a global 429 with this retry_after.
    global_once: Option<f64>,
}

struct Gw {
    session: String,
    seq: u64,
    /// Dispatches sent so far (seq, frame), for a resume's replay.
    sent: Vec<(u64, Value)>,
    /// The live connection's outbox.
    live: Option<mpsc::UnboundedSender<WsMessage>>,
}

pub struct Fake {
    pub api: String,
    pub gateway: String,
    pub rec: Arc<Mutex<Recorded>>,
    limits: Arc<Mutex<Limits>>,
    gw: Arc<Mutex<Gw>>,
    next: Arc<Mutex<u64>>,
    _tasks: Vec<tokio::task::JoinHandle<()>>,
}

#[derive(Clone)]
struct App {
    rec: Arc<Mutex<Recorded>>,
    limits: Arc<Mutex<Limits>>,
    next: Arc<Mutex<u64>>,
}

fn now() -> Timestamp {
    Timestamp::from_secs(1_764_000_000).unwrap()
}

pub fn user(id: u64, name: &str, bot: bool) -> User {
    User {
        accent_color: None,
        avatar: None,
        avatar_decoration: None,
        avatar_decoration_data: None,
        banner: None,
        bot,
        discriminator: 0,
        email: None,
        flags: None,
        global_name: Some(name.to_string()),
        id: Id::new(id),
        locale: None,
        mfa_enabled: None,
        name: name.to_string(),
        premium_type: None,
        primary_guild: None,
        public_flags: None,
        system: None,
        verified: None,
    }
}

fn current_user() -> CurrentUser {
    CurrentUser {
        accent_color: None,
        avatar: None,
        banner: None,
        bot: true,
        discriminator: 0,
        email: None,
        flags: None,
        global_name: Some("troupe".into()),
        id: Id::new(BOT),
        locale: None,
        mfa_enabled: false,
        name: "troupe".into(),
        premium_type: None,
        public_flags: None,
        verified: None,
    }
}

pub fn channel(id: u64, kind: ChannelType, parent: Option<u64>, name: Option<String>) -> Channel {
    Channel {
        application_id: None,
        applied_tags: None,
        available_tags: None,
        bitrate: None,
        default_auto_archive_duration: None,
        default_forum_layout: None,
        default_reaction_emoji: None,
        default_sort_order: None,
        default_thread_rate_limit_per_user: None,
        flags: None,
        guild_id: (kind != ChannelType::Private).then(|| Id::new(GUILD)),
        icon: None,
        id: Id::new(id),
        invitable: None,
        kind,
        last_message_id: None,
        last_pin_timestamp: None,
        managed: None,
        member: None,
        member_count: None,
        message_count: None,
        name,
        newly_created: None,
        nsfw: None,
        owner_id: None,
        parent_id: parent.map(Id::new),
        permission_overwrites: None,
        position: None,
        rate_limit_per_user: None,
        recipients: None,
        rtc_region: None,
        thread_metadata: None,
        topic: None,
        total_message_sent: None,
        user_limit: None,
        video_quality_mode: None,
    }
}

#[allow(deprecated)]
pub fn message(id: u64, channel: u64, author: User, content: &str, guild: bool) -> Message {
    Message {
        activity: None,
        application: None,
        application_id: None,
        attachments: Vec::new(),
        author,
        call: None,
        channel_id: Id::new(channel),
        components: Vec::new(),
        content: content.to_string(),
        edited_timestamp: None,
        embeds: Vec::new(),
        flags: None,
        guild_id: guild.then(|| Id::new(GUILD)),
        id: Id::new(id),
        interaction: None,
        interaction_metadata: None,
        kind: MessageType::Regular,
        member: None,
        mention_channels: Vec::new(),
        mention_everyone: false,
        mention_roles: Vec::new(),
        mentions: Vec::new(),
        message_snapshots: Vec::new(),
        pinned: false,
        poll: None,
        reactions: Vec::new(),
        reference: None,
        referenced_message: None,
        role_subscription_data: None,
        sticker_items: Vec::new(),
        timestamp: now(),
        thread: None,
        tts: false,
        webhook_id: None,
    }
}

#[allow(deprecated)]
fn interaction(
    id: u64,
    kind: InteractionType,
    who: User,
    channel_id: u64,
    guild: bool,
    data: InteractionData,
) -> Interaction {
    Interaction {
        app_permissions: None,
        application_id: Id::new(APP),
        attachment_size_limit: 8_000_000,
        authorizing_integration_owners: ApplicationIntegrationMap {
            guild: None,
            user: None,
        },
        channel: Some(channel(
            channel_id,
            if guild {
                ChannelType::PublicThread
            } else {
                ChannelType::Private
            },
            None,
            None,
        )),
        channel_id: None,
        context: None,
        data: Some(data),
        entitlements: Vec::new(),
        guild: None,
        guild_id: guild.then(|| Id::new(GUILD)),
        guild_locale: None,
        id: Id::new(id),
        kind,
        locale: None,
        member: None,
        message: None,
        token: format!("interaction-token-{id}"),
        user: Some(who),
    }
}

impl Fake {
    pub async fn start() -> Fake {
        let rec = Arc::new(Mutex::new(Recorded::default()));
        let limits = Arc::new(Mutex::new(Limits::default()));
        let next = Arc::new(Mutex::new(10_000u64));
        let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ws = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (http_addr, ws_addr) = (http.local_addr().unwrap(), ws.local_addr().unwrap());
        let gateway = format!("ws://{ws_addr}");
        let gw = Arc::new(Mutex::new(Gw {
            session: "fake-session-1".into(),
            seq: 0,
            sent: Vec::new(),
            live: None,
        }));
        let app = App {
            rec: rec.clone(),
            limits: limits.clone(),
            next: next.clone(),
        };
        let router = Router::new()
            .route("/api/v10/users/@me", get(me))
            .route("/api/v10/users/@me/channels", post(dm))
            .route("/api/v10/channels/{id}/messages", post(create_message))
            .route("/api/v10/channels/{id}/threads", post(create_thread))
            .route(
                "/api/v10/channels/{c}/messages/{m}/reactions/{e}/@me",
                put(react),
            )
            .route(
                "/api/v10/interactions/{id}/{token}/callback",
                post(callback),
            )
            .route("/api/v10/applications/{app}/commands", put(commands))
            .with_state(app);
        let t1 = tokio::spawn(async move {
            let _ = axum::serve(http, router).await;
        });
        let t2 = tokio::spawn(gateway_server(ws, gw.clone(), rec.clone(), gateway.clone()));
        Fake {
            api: format!("http://{http_addr}/api/v10"),
            gateway,
            rec,
            limits,
            gw,
            next,
            _tasks: vec![t1, t2],
        }
    }

    fn id(&self) -> u64 {
        let mut n = self.next.lock().unwrap();
        *n += 1;
        *n
    }

    /// Messages per channel per window, with Discord's bucket headers; past it, a 429.
    pub fn bucket(&self, per: u32, window: Duration) {
        self.limits.lock().unwrap().bucket = Some((per, window));
    }

    /// This person does not take direct messages: sending to their channel is a 403.
    pub fn close_dms(&self, user: u64) {
        self.limits.lock().unwrap().closed.push(user);
    }

    /// The next request gets a global 429 asking to wait `secs`.
    pub fn global_429(&self, secs: f64) {
        self.limits.lock().unwrap().global_once = Some(secs);
    }

    /// Send a dispatch on the live gateway connection (kept for a resume's replay).
    pub fn dispatch(&self, t: &str, d: Value) {
        let mut gw = self.gw.lock().unwrap();
        gw.seq += 1;
        let frame = json!({"op": 0, "t": t, "s": gw.seq, "d": d});
        let seq = gw.seq;
        gw.sent.push((seq, frame.clone()));
        if let Some(live) = &gw.live {
            let _ = live.send(WsMessage::text(frame.to_string()));
        }
    }

    /// Wait until the bot's gateway connection is gone (a stopped bot).
    pub async fn disconnected(&self) {
        for _ in 0..500 {
            if self.gw.lock().unwrap().live.is_none() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the bot's gateway connection stayed open");
    }

    /// Gateway opcode 7: the bot must reconnect and resume.
    pub fn ask_reconnect(&self) {
        let gw = self.gw.lock().unwrap();
        if let Some(live) = &gw.live {
            let _ = live.send(WsMessage::text(json!({"op": 7, "d": null}).to_string()));
        }
    }

    /// A person says something in a channel (a thread, or a direct message to the bot).
    pub fn say(&self, who: &User, channel: u64, text: &str, guild: bool) -> u64 {
        let id = self.id();
        let m = message(id, channel, who.clone(), text, guild);
        self.dispatch("MESSAGE_CREATE", serde_json::to_value(&m).unwrap());
        id
    }

    /// Discord delivers message `id` again (as a resumed session may).
    pub fn say_again(&self, id: u64, who: &User, channel: u64, text: &str) {
        let m = message(id, channel, who.clone(), text, true);
        self.dispatch("MESSAGE_CREATE", serde_json::to_value(&m).unwrap());
    }

    /// A person invokes a slash command in a channel: (name, subcommand, string options).
    pub fn slash(
        &self,
        who: &User,
        channel: u64,
        name: &str,
        sub: Option<&str>,
        options: &[(&str, &str)],
    ) -> u64 {
        let id = self.id();
        let opts: Vec<CommandDataOption> = options
            .iter()
            .map(|(n, v)| CommandDataOption {
                name: (*n).into(),
                value: CommandOptionValue::String((*v).into()),
            })
            .collect();
        let options = match sub {
            Some(s) => vec![CommandDataOption {
                name: s.into(),
                value: CommandOptionValue::SubCommand(opts),
            }],
            None => opts,
        };
        let data = InteractionData::ApplicationCommand(Box::new(CommandData {
            guild_id: Some(Id::new(GUILD)),
            id: Id::new(1),
            kind: CommandType::ChatInput,
            name: name.into(),
            options,
            resolved: None,
            target_id: None,
        }));
        let i = interaction(
            id,
            InteractionType::ApplicationCommand,
            who.clone(),
            channel,
            true,
            data,
        );
        self.dispatch("INTERACTION_CREATE", serde_json::to_value(&i).unwrap());
        id
    }

    /// A person presses a button (in their direct messages).
    pub fn press(&self, who: &User, channel: u64, custom_id: &str) -> u64 {
        let id = self.id();
        let data = InteractionData::MessageComponent(Box::new(MessageComponentInteractionData {
            component_type: ComponentType::Button,
            custom_id: custom_id.into(),
            resolved: None,
            values: Vec::new(),
        }));
        let i = interaction(
            id,
            InteractionType::MessageComponent,
            who.clone(),
            channel,
            false,
            data,
        );
        self.dispatch("INTERACTION_CREATE", serde_json::to_value(&i).unwrap());
        id
    }

    pub fn posts(&self) -> Vec<Posted> {
        self.rec.lock().unwrap().posts.clone()
    }

    pub fn posts_in(&self, channel: u64) -> Vec<Posted> {
        self.posts()
            .into_iter()
            .filter(|p| p.channel == channel)
            .collect()
    }

    /// The thread a table opened in `parent`, once the bot has written in it. The thread alone
    /// is not enough: Discord shows it as soon as it exists, but the bot learns its id only from
    /// the reply to its request, and a `/join` that arrives between the two is refused ("no
    /// table's thread"). A person joins a thread they see the table's first lines in; so do the
    /// tests (`/join` typed the instant the thread existed failed CI twice).
    pub async fn table_thread(&self, parent: u64) -> u64 {
        self.until(|r| {
            let (_, thread, _) = r.threads.iter().find(|(p, _, _)| *p == parent)?;
            r.posts
                .iter()
                .any(|p| p.channel == *thread)
                .then_some(*thread)
        })
        .await
    }

    /// The reply to an interaction, once the bot sent it.
    pub async fn reply_to(&self, interaction: u64) -> String {
        self.until(|r| {
            r.callbacks
                .iter()
                .find(|(i, _)| *i == interaction)
                .map(|(_, v)| {
                    v["data"]["content"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
        })
        .await
    }

    /// Wait (up to 30 s) until `f` finds something in what was recorded.
    pub async fn until<T>(&self, f: impl Fn(&Recorded) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(v) = f(&self.rec.lock().unwrap()) {
                return v;
            }
            if Instant::now() >= deadline {
                let r = self.rec.lock().unwrap();
                let reqs: Vec<String> = r
                    .requests
                    .iter()
                    .map(|(m, p, _, s)| format!("{m} {p} {s}"))
                    .collect();
                let posts: Vec<String> = r
                    .posts
                    .iter()
                    .map(|p| format!("[{}] {}", p.channel, p.text()))
                    .collect();
                panic!(
                    "the fake waited 30 s in vain; identifies {} resumes {} heartbeats {}\nrequests:\n{}\nposts:\n{}",
                    r.identifies,
                    r.resumes,
                    r.heartbeats,
                    reqs.join("\n"),
                    posts.join("\n---\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn authorized(headers: &HeaderMap) -> bool {
    headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Bot {TOKEN}"))
}

fn record(app: &App, method: &str, path: &str, headers: &HeaderMap, body: &[u8], status: u16) {
    let mut rec = app.rec.lock().unwrap();
    rec.requests
        .push((method.into(), path.into(), Instant::now(), status));
    let heads: Vec<String> = headers
        .iter()
        .filter(|(k, _)| *k != "authorization")
        .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("")))
        .collect();
    rec.raw.push(format!(
        "{method} {path}\n{}\n{}",
        heads.join("\n"),
        String::from_utf8_lossy(body)
    ));
}

/// The rate limits: a global 429 when one is due, a channel's bucket when it is spent.
fn limited(app: &App, channel: Option<u64>) -> Result<Vec<(&'static str, String)>, Box<Response>> {
    let mut l = app.limits.lock().unwrap();
    if let Some(secs) = l.global_once.take() {
        let body =
            json!({"message": "You are being rate limited.", "retry_after": secs, "global": true});
        return Err(Box::new(
            (
                StatusCode::TOO_MANY_REQUESTS,
                [
                    ("x-ratelimit-global", "true".to_string()),
                    ("x-ratelimit-scope", "global".into()),
                    ("retry-after", format!("{}", secs.ceil())),
                ],
                axum::Json(body),
            )
                .into_response(),
        ));
    }
    let (Some((per, window)), Some(c)) = (l.bucket, channel) else {
        return Ok(Vec::new());
    };
    let now = Instant::now();
    let entry = l.windows.entry(c).or_insert((now, 0));
    if now.duration_since(entry.0) >= window {
        *entry = (now, 0);
    }
    let reset = window
        .saturating_sub(now.duration_since(entry.0))
        .as_secs_f64();
    if entry.1 >= per {
        let body = json!({"message": "You are being rate limited.", "retry_after": reset, "global": false});
        return Err(Box::new(
            (
                StatusCode::TOO_MANY_REQUESTS,
                [
                    ("x-ratelimit-scope", "user".to_string()),
                    ("x-ratelimit-remaining", "0".into()),
                    ("x-ratelimit-reset-after", format!("{reset:.3}")),
                ],
                axum::Json(body),
            )
                .into_response(),
        ));
    }
    entry.1 += 1;
    Ok(vec![
        ("x-ratelimit-limit", per.to_string()),
        ("x-ratelimit-remaining", (per - entry.1).to_string()),
        ("x-ratelimit-reset-after", format!("{reset:.3}")),
        ("x-ratelimit-bucket", format!("messages-{c}")),
    ])
}

fn with_headers(status: StatusCode, headers: Vec<(&'static str, String)>, body: Value) -> Response {
    let mut r = (status, axum::Json(body)).into_response();
    for (k, v) in headers {
        r.headers_mut().insert(k, v.parse().unwrap());
    }
    r
}

async fn me(State(app): State<App>, headers: HeaderMap) -> Response {
    let ok = authorized(&headers);
    record(
        &app,
        "GET",
        "users/@me",
        &headers,
        b"",
        if ok { 200 } else { 401 },
    );
    if !ok {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"message": "401: Unauthorized", "code": 0})),
        )
            .into_response();
    }
    axum::Json(serde_json::to_value(current_user()).unwrap()).into_response()
}

async fn dm(State(app): State<App>, headers: HeaderMap, body: Bytes) -> Response {
    record(&app, "POST", "users/@me/channels", &headers, &body, 200);
    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
    let user: u64 = v["recipient_id"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let id = {
        let mut rec = app.rec.lock().unwrap();
        let n = rec.dms.len() as u64;
        *rec.dms.entry(user).or_insert(50_000 + user % 1000 * 10 + n)
    };
    axum::Json(serde_json::to_value(channel(id, ChannelType::Private, None, None)).unwrap())
        .into_response()
}

async fn create_message(
    State(app): State<App>,
    Path(id): Path<u64>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let limits = match limited(&app, Some(id)) {
        Ok(h) => h,
        Err(r) => {
            record(
                &app,
                "POST",
                &format!("channels/{id}/messages"),
                &headers,
                &body,
                429,
            );
            return *r;
        }
    };
    let closed = {
        let l = app.limits.lock().unwrap();
        let rec = app.rec.lock().unwrap();
        rec.dms
            .iter()
            .any(|(u, c)| *c == id && l.closed.contains(u))
    };
    if closed {
        record(
            &app,
            "POST",
            &format!("channels/{id}/messages"),
            &headers,
            &body,
            403,
        );
        let body = json!({"message": "Cannot send messages to this user", "code": 50007});
        return (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    }
    record(
        &app,
        "POST",
        &format!("channels/{id}/messages"),
        &headers,
        &body,
        200,
    );
    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
    let mid = {
        let mut n = app.next.lock().unwrap();
        *n += 1;
        *n
    };
    app.rec.lock().unwrap().posts.push(Posted {
        channel: id,
        body: v.clone(),
    });
    let mut m = message(
        mid,
        id,
        user(BOT, "troupe", true),
        v["content"].as_str().unwrap_or(""),
        false,
    );
    m.embeds = serde_json::from_value(v["embeds"].clone()).unwrap_or_default();
    with_headers(StatusCode::OK, limits, serde_json::to_value(m).unwrap())
}

async fn create_thread(
    State(app): State<App>,
    Path(parent): Path<u64>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(
        &app,
        "POST",
        &format!("channels/{parent}/threads"),
        &headers,
        &body,
        201,
    );
    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
    let name = v["name"].as_str().unwrap_or("").to_string();
    let id = {
        let mut n = app.next.lock().unwrap();
        *n += 1;
        *n
    };
    app.rec
        .lock()
        .unwrap()
        .threads
        .push((parent, id, name.clone()));
    (
        StatusCode::CREATED,
        axum::Json(
            serde_json::to_value(channel(
                id,
                ChannelType::PublicThread,
                Some(parent),
                Some(name),
            ))
            .unwrap(),
        ),
    )
        .into_response()
}

async fn react(
    State(app): State<App>,
    Path((c, m, e)): Path<(u64, u64, String)>,
    headers: HeaderMap,
) -> Response {
    record(
        &app,
        "PUT",
        &format!("channels/{c}/messages/{m}/reactions"),
        &headers,
        b"",
        204,
    );
    app.rec.lock().unwrap().reactions.push((c, m, e));
    StatusCode::NO_CONTENT.into_response()
}

async fn callback(
    State(app): State<App>,
    Path((id, _token)): Path<(u64, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(
        &app,
        "POST",
        &format!("interactions/{id}/callback"),
        &headers,
        &body,
        204,
    );
    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
    app.rec.lock().unwrap().callbacks.push((id, v));
    StatusCode::NO_CONTENT.into_response()
}

async fn commands(State(app): State<App>, headers: HeaderMap, body: Bytes) -> Response {
    record(&app, "PUT", "applications/commands", &headers, &body, 200);
    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
    app.rec.lock().unwrap().commands = v.as_array().cloned().unwrap_or_default();
    axum::Json(json!([])).into_response()
}

/// Discord takes the gateway's token with or without its `Bot ` prefix.
fn gateway_token(frame: &Value) -> bool {
    let t = frame["d"]["token"].as_str().unwrap_or_default();
    t.strip_prefix("Bot ").unwrap_or(t) == TOKEN
}

/// The gateway: one connection at a time, as a shard has.
async fn gateway_server(
    listener: tokio::net::TcpListener,
    gw: Arc<Mutex<Gw>>,
    rec: Arc<Mutex<Recorded>>,
    url: String,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let Ok((_req, ws)) = tokio_websockets::ServerBuilder::new().accept(stream).await else {
            continue;
        };
        let (mut sink, mut source) = ws.split();
        let (tx, mut rx) = mpsc::unbounded_channel::<WsMessage>();
        gw.lock().unwrap().live = Some(tx.clone());
        let hello = json!({"op": 10, "d": serde_json::to_value(Hello { heartbeat_interval: 1000 }).unwrap()});
        let _ = tx.send(WsMessage::text(hello.to_string()));
        let writer = tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                let close = m.is_close();
                if sink.send(m).await.is_err() || close {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        while let Some(Ok(m)) = source.next().await {
            let Some(text) = m.as_text() else {
                if m.is_close() {
                    break;
                }
                continue;
            };
            let v: Value = serde_json::from_str(text).unwrap_or_default();
            match v["op"].as_u64() {
                Some(1) => {
                    rec.lock().unwrap().heartbeats += 1;
                    let _ = tx.send(WsMessage::text(json!({"op": 11}).to_string()));
                }
                Some(2) => {
                    if !gateway_token(&v) {
                        let _ = tx.send(WsMessage::close(
                            Some(tokio_websockets::CloseCode::try_from(4004).unwrap()),
                            "Authentication failed.",
                        ));
                        break;
                    }
                    rec.lock().unwrap().identifies += 1;
                    let ready = Ready {
                        application: PartialApplication {
                            flags: ApplicationFlags::empty(),
                            id: Id::new(APP),
                        },
                        guilds: Vec::new(),
                        resume_gateway_url: url.clone(),
                        session_id: gw.lock().unwrap().session.clone(),
                        shard: Some(ShardId::ONE),
                        user: current_user(),
                        version: 10,
                    };
                    let mut g = gw.lock().unwrap();
                    g.seq += 1;
                    let frame = json!({"op": 0, "t": "READY", "s": g.seq, "d": serde_json::to_value(ready).unwrap()});
                    let seq = g.seq;
                    g.sent.push((seq, frame.clone()));
                    let _ = tx.send(WsMessage::text(frame.to_string()));
                }
                Some(6) => {
                    let ok = gateway_token(&v)
                        && v["d"]["session_id"].as_str()
                            == Some(gw.lock().unwrap().session.as_str());
                    if !ok {
                        let _ = tx.send(WsMessage::text(json!({"op": 9, "d": false}).to_string()));
                        continue;
                    }
                    rec.lock().unwrap().resumes += 1;
                    let after = v["d"]["seq"].as_u64().unwrap_or(0);
                    let mut g = gw.lock().unwrap();
                    for (seq, frame) in g.sent.clone() {
                        if seq > after {
                            let _ = tx.send(WsMessage::text(frame.to_string()));
                        }
                    }
                    g.seq += 1;
                    let frame = json!({"op": 0, "t": "RESUMED", "s": g.seq, "d": {}});
                    let _ = tx.send(WsMessage::text(frame.to_string()));
                }
                _ => {}
            }
        }
        gw.lock().unwrap().live = None;
        drop(tx);
        let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    }
}
