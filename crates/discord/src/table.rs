//! One table as the bot serves it: its hub, its binding (`discord.json`), and the pump that
//! posts what each stream gained: the whole table's lines (what the watch seat reads) to the
//! thread, each seated person's own lines (what their seat reads and a watcher does not) and
//! the ask waiting on them to that person alone.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use troupe_serve::Hub;
use troupe_serve::feed::WATCH;
use troupe_serve::hub::Refused;
use twilight_model::id::Id;
use twilight_model::id::marker::{ChannelMarker, MessageMarker};

use crate::Out;
use crate::render::{self, Shown};
use crate::rest::{NewMessage, RestError};
use crate::state::{Binding, Held};

/// How long a pump waits for the table to change before looking again anyway.
const PUMP_WAIT: Duration = Duration::from_secs(20);
/// After a failed post (Discord down, a refused request), the pump tries again after this.
const RETRY_AFTER: Duration = Duration::from_secs(2);

pub struct Seated {
    pub id: String,
    pub dir: PathBuf,
    pub title: String,
    pub hub: Arc<Hub>,
    /// The table's seats (seat, label) as it opened.
    pub seats: Vec<(String, String)>,
    pub(crate) binding: Mutex<Binding>,
    /// One pump at a time per table (the streams go out in order).
    pumping: tokio::sync::Mutex<()>,
}

impl Seated {
    pub fn new(
        id: String,
        dir: PathBuf,
        title: String,
        hub: Arc<Hub>,
        seats: Vec<(String, String)>,
    ) -> Result<Seated, String> {
        let binding = Binding::load(&dir, &id)?;
        Ok(Seated {
            id,
            dir,
            title,
            hub,
            seats,
            binding: Mutex::new(binding),
            pumping: tokio::sync::Mutex::new(()),
        })
    }

    pub fn binding(&self) -> Binding {
        self.lock().clone()
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Binding> {
        self.binding.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Change the binding and write it down before anything depends on it.
    pub(crate) fn update<T>(&self, change: impl FnOnce(&mut Binding) -> T) -> Result<T, String> {
        let mut b = self.lock();
        let out = change(&mut b);
        b.save(&self.dir)?;
        Ok(out)
    }

    /// The lines of `seat`'s stream after `after`, and its state.
    pub fn feed(&self, seat: &str, after: u64) -> (Vec<Shown>, Value) {
        let mut feed = self.hub.seat_feed(seat, Some(after));
        let lines = feed["lines"]
            .as_array()
            .map(|ls| {
                ls.iter()
                    .filter_map(|l| {
                        Some(Shown {
                            id: l["id"].as_u64()?,
                            kind: l["kind"].as_str().unwrap_or_default().to_string(),
                            text: l["text"].as_str()?.to_string(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        (lines, feed["state"].take())
    }
}

/// Post each change of the table as it comes, until the bot stops.
pub async fn pump_forever(out: Arc<Out>, t: Arc<Seated>, channel: Option<u64>) {
    t.hub.until_ready(Duration::from_secs(30)).await;
    loop {
        let version = t.hub.version();
        if let Err(e) = pump(&out, &t, channel).await {
            eprintln!("troupe discord: table {}: {e}", t.id);
            tokio::time::sleep(RETRY_AFTER).await;
            continue;
        }
        t.hub.changed_since(version, PUMP_WAIT).await;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PumpError {
    #[error("{0}")]
    Rest(#[from] RestError),
    #[error("{0}")]
    Keep(String),
}

/// Post what the streams gained since they were last posted, then each person's ask.
pub async fn pump(out: &Out, t: &Seated, channel: Option<u64>) -> Result<(), PumpError> {
    let _one = t.pumping.lock().await;
    let bound = t.lock().thread;
    let thread = match bound {
        Some(thread) => Some(thread),
        None => open_thread(out, t, channel).await?,
    };
    if let Some(thread) = thread.and_then(Id::new_checked) {
        post_thread(out, t, thread).await?;
    }
    let people = t.lock().people.clone();
    for (user, person) in people {
        let Ok(user) = user.parse::<u64>() else {
            continue;
        };
        let sent = async {
            post_private(out, t, user, &person.seat).await?;
            post_ask(out, t, user, &person.seat).await
        };
        match sent.await {
            // One person Discord will not let the bot write to (direct messages closed) does
            // not hold up the table: their lines wait, and are tried again at the next change.
            Err(PumpError::Rest(RestError::Status {
                status, message, ..
            })) => eprintln!(
                "troupe discord: table {}: could not write to {} ({status}: {message}); their \
                 lines wait",
                t.id, person.name
            ),
            other => other?,
        }
    }
    Ok(())
}

/// A thread for a table that has none, in the bot's channel.
async fn open_thread(
    out: &Out,
    t: &Seated,
    channel: Option<u64>,
) -> Result<Option<u64>, PumpError> {
    // The channel the table was opened from, else the bot's.
    let opened_in = t.lock().channel;
    let Some(parent) = opened_in
        .or(channel)
        .and_then(Id::<ChannelMarker>::new_checked)
    else {
        return Ok(None);
    };
    let id = out.rest.thread(parent, &t.title).await?.id;
    let thread = id.get();
    t.update(|b| {
        b.thread = Some(thread);
        b.channel = Some(parent.get());
    })
    .map_err(PumpError::Keep)?;
    // Discord shows the thread before the bot has its id; this line says it is ready. (If it
    // fails, the table goes on without it: the thread is bound, and its lines come next.)
    let opening = crate::render::opening(&t.title);
    if let Err(e) = out.rest.send(id, &opening).await {
        eprintln!(
            "troupe discord: table {}: the thread's first line: {e}",
            t.id
        );
    }
    Ok(Some(thread))
}

/// The whole table's new lines to its thread, and its end once.
async fn post_thread(out: &Out, t: &Seated, thread: Id<ChannelMarker>) -> Result<(), PumpError> {
    let posted = t.lock().posted;
    let (lines, state) = t.feed(WATCH, posted);
    for (message, through) in batches(&lines) {
        out.rest.send(thread, &message).await?;
        if let Some(id) = through {
            t.update(|b| b.posted = b.posted.max(id))
                .map_err(PumpError::Keep)?;
        }
    }
    let end = state["ended"]
        .as_str()
        .map(|s| format!("The table has ended: {s}"))
        .or_else(|| {
            state["stopped"]
                .as_str()
                .map(|s| format!("The table stopped: {s}"))
        });
    let told = t.lock().told_end;
    if let Some(end) = end
        && !told
    {
        for message in plain(&end) {
            out.rest.send(thread, &message).await?;
        }
        t.update(|b| b.told_end = true).map_err(PumpError::Keep)?;
    }
    Ok(())
}

/// A person's own lines (their seat reads them, a watcher does not) to them alone.
async fn post_private(out: &Out, t: &Seated, user: u64, seat: &str) -> Result<(), PumpError> {
    let key = user.to_string();
    let after = t.lock().private_posted.get(&key).copied().unwrap_or(0);
    let (lines, _) = t.feed(seat, after);
    let Some(last) = lines.last().map(|l| l.id) else {
        return Ok(());
    };
    let public: BTreeSet<u64> = t.feed(WATCH, after).0.iter().map(|l| l.id).collect();
    let own: Vec<Shown> = lines
        .into_iter()
        .filter(|l| !public.contains(&l.id))
        .collect();
    if !own.is_empty() {
        let dm = out.dm(user).await?;
        for (message, through) in batches(&own) {
            out.rest.send(dm, &message).await?;
            if let Some(id) = through {
                t.update(|b| {
                    let p = b.private_posted.entry(key.clone()).or_default();
                    *p = (*p).max(id);
                })
                .map_err(PumpError::Keep)?;
            }
        }
    }
    t.update(|b| {
        let p = b.private_posted.entry(key.clone()).or_default();
        *p = (*p).max(last);
    })
    .map_err(PumpError::Keep)
}

/// The ask waiting on a person's seat, sent to them once (a message they held answers it
/// instead, when its form takes text).
async fn post_ask(out: &Out, t: &Seated, user: u64, seat: &str) -> Result<(), PumpError> {
    let (_, state) = t.feed(seat, u64::MAX);
    let Some(id) = state["ask"]["id"].as_u64().filter(|id| *id != 0) else {
        return Ok(());
    };
    if state["ask"]["standing"].as_bool() == Some(true) {
        return Ok(());
    }
    let Ok(ask) = serde_json::from_value::<troupe_seat::Ask>(state["ask"]["ask"].clone()) else {
        return Ok(());
    };
    let key = user.to_string();
    let sent = t.lock().asked.get(&key) == Some(&id);
    if sent {
        return Ok(());
    }
    if crate::forms::takes_messages(&ask)
        && let Some(held) = t.update(|b| take_held(b, seat)).map_err(PumpError::Keep)?
    {
        // Out of the held list before it is handed over: a kill in between loses it (it never
        // had its ✅), never applies it twice.
        let answer = crate::forms::fill(&ask, &held.text);
        let channel = Id::<ChannelMarker>::new_checked(held.channel);
        let message = Id::<MessageMarker>::new_checked(held.message);
        let taken = answer
            .map_err(Refused::Invalid)
            .and_then(|a| t.hub.answer(seat, id, a));
        match taken {
            Ok(()) => {
                if let (Some(c), Some(m)) = (channel, message) {
                    out.rest.react(c, m, crate::inbound::TAKEN).await?;
                }
                return Ok(());
            }
            Err(why) => {
                let dm = out.dm(user).await?;
                let text = format!(
                    "Your held message was not taken as your answer ({}): {}",
                    crate::inbound::refusal(&why),
                    held.text
                );
                for m in plain(&text) {
                    out.rest.send(dm, &m).await?;
                }
            }
        }
    }
    let dm = out.dm(user).await?;
    for message in render::ask_messages(&t.title, &t.id, id, &ask) {
        out.rest.send(dm, &message).await?;
    }
    t.update(|b| {
        b.asked.insert(key, id);
    })
    .map_err(PumpError::Keep)
}

fn take_held(b: &mut Binding, seat: &str) -> Option<Held> {
    let i = b.held.iter().position(|h| h.seat == seat)?;
    Some(b.held.remove(i))
}

/// Lines as messages, each with the last line it completes (the stream's cursor after it).
fn batches(lines: &[Shown]) -> Vec<(NewMessage, Option<u64>)> {
    // Rendered line by line into the same batches `render::messages` makes, tracking which
    // line each message ends.
    let messages = render::messages(lines);
    let mut out = Vec::new();
    let mut embeds_seen = 0usize;
    let mut per_line: Vec<(u64, usize)> = Vec::new();
    let mut total = 0usize;
    for l in lines {
        total += render::messages(std::slice::from_ref(l))
            .iter()
            .map(|m| m.embeds.len())
            .sum::<usize>();
        per_line.push((l.id, total));
    }
    for m in messages {
        embeds_seen += m.embeds.len();
        let through = per_line
            .iter()
            .filter(|(_, end)| *end <= embeds_seen)
            .map(|(id, _)| *id)
            .next_back();
        out.push((m, through));
    }
    out
}

/// A plain text, in as many messages as it needs.
pub fn plain(text: &str) -> Vec<NewMessage> {
    render::pieces(text, 1900)
        .into_iter()
        .map(|content| NewMessage {
            content,
            ..NewMessage::default()
        })
        .collect()
}
