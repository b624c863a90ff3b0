//! troupe on Discord: a bot that is one more surface of the table, beside the web table. Each
//! table is a `troupe_serve` hub with its game on its own thread (the same hubs and games as
//! `troupe serve`, so the same log, resume and walls); the bot only reads each seat's stream
//! from the hub and hands people's answers back to it. It holds no game logic.
//!
//! - A table gets a thread. What a watcher may read (the whole table's lines) is posted there;
//!   what only one seat may read (its whispers, an action sent back, the GM's view) goes to that
//!   seat's person alone, by direct message, and an ask waiting on their seat too (with buttons
//!   when its form has no text). Both are read from the hub already filtered for that seat.
//! - A person's message in the thread is their answer when an answer is asked of them, and is
//!   held for their next ask otherwise; it gets a ✅ only once `Hub::answer` returned Ok (the
//!   answer is on disk). Slash commands are the games' table commands, through the same seat
//!   protocol; `/join`, `/leave`, `/character register` seat people.
//! - What the bot keeps (`discord.json` beside `table.json`): the thread, who sits where, how far
//!   each stream was posted, the message ids taken (none is applied twice after a restart).

pub mod commands;
pub mod forms;
pub mod render;
pub mod rest;
pub mod state;
mod table;
pub mod token;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use twilight_gateway::{ConfigBuilder, Event, EventTypeFlags, Intents, Shard, ShardId, StreamExt};
use twilight_model::id::Id;
use twilight_model::id::marker::{ApplicationMarker, ChannelMarker, UserMarker};

pub use rest::{DISCORD_API, Rest, RestError};
pub use table::Seated;
pub use token::{TOKEN_VAR, Token};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no Discord bot token: set the environment variable {var} to the bot's token (the \
         Developer Portal, your application, Bot, Reset Token); troupe reads it from there only"
    )]
    NoToken { var: String },
    #[error(
        "Discord refused the bot's token (401): it was reset or mistyped; set {TOKEN_VAR} to \
         the token the Developer Portal shows now"
    )]
    TokenRefused,
    #[error("could not reach Discord: {0}")]
    Unreachable(String),
    #[error("a table could not start: {0}")]
    Table(String),
    #[error(
        "Discord's gateway closed the bot's connection for good (an invalid token or intents \
         the application may not use: the Developer Portal, Bot, Privileged Gateway Intents, \
         Message Content)"
    )]
    GatewayClosed,
}

/// Where the bot talks to Discord, and how it opens tables.
pub struct Config {
    pub token: Token,
    /// Discord's REST API ([`DISCORD_API`], or a test's fake).
    pub api: String,
    /// The gateway's websocket URL (`ws://…` of a test's fake); None: Discord's.
    pub gateway: Option<String>,
    /// The channel where a table without a thread gets one (tables opened by `/start encounter`
    /// and the like get theirs where the command was typed).
    pub channel: Option<u64>,
    /// Where the characters people register are kept (the campaign directory, or the root).
    pub home: PathBuf,
    /// The campaign a `/… start` opens when it names none (a bot for one campaign directory).
    pub campaign: Option<String>,
    /// An idle person's seat goes to an AI after this long.
    pub hand_over_after: Option<Duration>,
    /// The games the bot opens (`troupe_games::OFFERS`): their start commands and the table
    /// commands their asks offer are the bot's slash commands.
    pub offers: Vec<&'static troupe_seat::offer::Offer>,
}

/// What the bot sends with: the REST client and each person's direct-message channel.
pub struct Out {
    pub rest: Rest,
    dms: Mutex<HashMap<u64, Id<ChannelMarker>>>,
}

impl Out {
    /// The direct-message channel with `user`.
    pub async fn dm(&self, user: u64) -> Result<Id<ChannelMarker>, RestError> {
        if let Some(c) = self
            .dms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&user)
        {
            return Ok(*c);
        }
        let Some(id) = Id::<UserMarker>::new_checked(user) else {
            return Err(RestError::Reply {
                what: "a user id".into(),
                message: "0".into(),
            });
        };
        let channel = self.rest.dm(id).await?.id;
        self.dms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(user, channel);
        Ok(channel)
    }
}

/// The bot: its tables (by id), how it opens more, and what it sends with.
pub struct Bot {
    config: Config,
    out: Arc<Out>,
    tables: Mutex<BTreeMap<String, Arc<Seated>>>,
    opener: Option<troupe_serve::host::Opener>,
    /// The tasks posting each table's streams: aborted when the bot stops.
    pumps: Mutex<tokio::task::JoinSet<()>>,
    app: Mutex<Option<Id<ApplicationMarker>>>,
    /// The bot's own user id (its own messages are not answers).
    me: Mutex<Option<u64>>,
}

impl Bot {
    /// A bot whose token Discord accepts: a missing or refused token is one clear error, before
    /// any table starts.
    pub async fn connect(
        config: Config,
        opener: Option<troupe_serve::host::Opener>,
    ) -> Result<Arc<Bot>, Error> {
        let rest = Rest::new(&config.api, config.token.clone());
        let me = match rest.me().await {
            Ok(me) => me,
            Err(RestError::Unauthorized) => return Err(Error::TokenRefused),
            Err(e) => return Err(Error::Unreachable(e.to_string())),
        };
        Ok(Arc::new(Bot {
            config,
            out: Arc::new(Out {
                rest,
                dms: Mutex::default(),
            }),
            tables: Mutex::default(),
            opener,
            pumps: Mutex::default(),
            app: Mutex::default(),
            me: Mutex::new(Some(me.id.get())),
        }))
    }

    /// Start a table's game (as `troupe serve` does) and serve it here.
    pub fn open(&self, run: troupe_serve::TableRun) -> Result<Arc<Seated>, Error> {
        self.open_in(run, None)
    }

    /// The same, its thread opened in `channel` (where the command that opened it was typed)
    /// rather than the bot's channel, unless it has one already.
    pub fn open_in(
        &self,
        run: troupe_serve::TableRun,
        channel: Option<u64>,
    ) -> Result<Arc<Seated>, Error> {
        let (id, dir, title) = (run.table.id.clone(), run.dir.clone(), run.title.clone());
        let seats = run
            .table
            .seats
            .iter()
            .map(|s| (s.seat.clone(), s.label.clone()))
            .collect();
        let hub = troupe_serve::serve_table(run, self.config.hand_over_after)
            .map_err(|e| Error::Table(e.to_string()))?;
        let seated = Seated::new(id, dir, title, hub, seats).map_err(Error::Table)?;
        if let Some(c) = channel {
            seated
                .update(|b| {
                    if b.thread.is_none() {
                        b.channel = Some(c);
                    }
                })
                .map_err(Error::Table)?;
        }
        self.attach(seated)
    }

    /// Serve a table whose hub is already playing (a bot started again beside a running game).
    pub fn attach(&self, seated: Seated) -> Result<Arc<Seated>, Error> {
        let seated = Arc::new(seated);
        self.tables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(seated.id.clone(), seated.clone());
        let (out, t, channel) = (self.out.clone(), seated.clone(), self.config.channel);
        self.pumps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spawn(table::pump_forever(out, t, channel));
        Ok(seated)
    }

    pub fn table(&self, id: &str) -> Option<Arc<Seated>> {
        self.tables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    fn tables(&self) -> Vec<Arc<Seated>> {
        self.tables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Listen to Discord's gateway until it closes the bot out for good: each message and
    /// interaction handed to its table. The gateway connection resumes, or identifies again,
    /// as Discord asks (twilight-gateway).
    pub async fn serve(self: Arc<Bot>) -> Result<(), Error> {
        let intents = Intents::GUILDS
            | Intents::GUILD_MESSAGES
            | Intents::MESSAGE_CONTENT
            | Intents::DIRECT_MESSAGES;
        let mut config = ConfigBuilder::new(self.config.token.bare(), intents);
        if let Some(url) = &self.config.gateway {
            config = config.proxy_url(url.trim_end_matches('/').to_string());
        }
        // The session an earlier run of the bot had: resumed, so nothing said meanwhile is lost.
        if let Some(saved) = state::load_gateway(&self.config.home) {
            config = config
                .session(twilight_gateway::Session::new(saved.sequence, saved.id))
                .resume_url(saved.resume_url);
        }
        let mut shard = Shard::with_config(ShardId::ONE, config.build());
        let mut kept = state::GatewaySession::default();
        let mut sends = tokio::task::JoinSet::new();
        let wanted = EventTypeFlags::READY
            | EventTypeFlags::MESSAGE_CREATE
            | EventTypeFlags::INTERACTION_CREATE;
        while let Some(item) = shard.next_event(wanted).await {
            while sends.try_join_next().is_some() {}
            match item {
                Ok(Event::Ready(ready)) => {
                    let app = ready.application.id;
                    *self.app.lock().unwrap_or_else(|e| e.into_inner()) = Some(app);
                    *self.me.lock().unwrap_or_else(|e| e.into_inner()) = Some(ready.user.id.get());
                    let out = self.out.clone();
                    let commands = commands::all(&self.config.offers);
                    sends.spawn(async move {
                        if let Err(e) = out.rest.commands(app, &commands).await {
                            eprintln!("troupe discord: could not register the slash commands: {e}");
                        }
                    });
                }
                Ok(Event::MessageCreate(m)) => self.on_message(m.message, &mut sends),
                Ok(Event::InteractionCreate(i)) => self.on_interaction(i.0, &mut sends),
                Ok(_) => {}
                // twilight reconnects (resuming when it can) on its own; a fatal close ends the
                // stream.
                Err(e) => eprintln!("troupe discord: gateway: {e}"),
            }
            keep_session(&shard, &self.config.home, &mut kept);
        }
        Err(Error::GatewayClosed)
    }

    fn is_me(&self, user: u64) -> bool {
        *self.me.lock().unwrap_or_else(|e| e.into_inner()) == Some(user)
    }
}

/// Write the gateway's session down once an event is handled (claimed and handed to its
/// table): a kill before this replays that event on the resume, and its id, already taken, is
/// not applied twice.
fn keep_session(shard: &Shard, home: &std::path::Path, kept: &mut state::GatewaySession) {
    let (Some(session), Some(url)) = (shard.session(), shard.resume_url()) else {
        return;
    };
    let now = state::GatewaySession {
        id: session.id().to_string(),
        sequence: session.sequence(),
        resume_url: url.to_string(),
    };
    if now != *kept {
        if let Err(e) = state::save_gateway(home, &now) {
            eprintln!("troupe discord: could not keep the gateway session: {e}");
        }
        *kept = now;
    }
}

mod inbound;
