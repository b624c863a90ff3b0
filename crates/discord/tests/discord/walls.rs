//! The walls, adversarially: a table whose hub carries a line of every audience (the whole
//! table, the seated players, the GM's view, a player's plan, a whisper for one seat alone, an
//! action sent back), each with its own marker, and an ask per seat with a marker in its prompt.
//! Every message the bot sends, to the thread or to anyone, is read for every marker it may not
//! carry. No game runs: the hub is the one the games publish to, so this is exactly what the bot
//! reads from a game.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use troupe_discord::Seated;
use troupe_seat::{Ask, form};
use troupe_serve::feed::{Audience, Line};
use troupe_serve::hub::{Hub, SeatSpec, Update};

use crate::fake::{Fake, user};
use crate::support::{bot, identified, serve, table_thread};

pub fn hub(title: &str) -> Arc<Hub> {
    let spec = |seat: &str| SeatSpec {
        seat: seat.into(),
        label: seat.into(),
        key_hash: String::new(),
    };
    let hub = Arc::new(Hub::new(
        title,
        vec![spec("gm"), spec("p1"), spec("p2"), spec("watch")],
    ));
    hub.mark_ready();
    hub
}

pub fn line(id: u64, audience: Audience, text: &str) -> Line {
    Line {
        id,
        kind: "gm",
        text: text.into(),
        audience,
    }
}

pub fn publish(hub: &Hub, lines: Vec<Line>) {
    hub.publish(Update {
        lines,
        ..Update::default()
    });
}

pub fn ask(seat: &str, prompt: &str) -> Ask {
    Ask {
        seat: seat.into(),
        decision: "action".into(),
        prompt: prompt.into(),
        shown: vec![format!("{prompt} (shown)")],
        view: Value::Null,
        fields: vec![form::line("action", "Action")],
        commands: Vec::new(),
        error: None,
        prefill: Default::default(),
    }
}

pub fn seats() -> Vec<(String, String)> {
    ["gm", "p1", "p2", "watch"]
        .iter()
        .map(|s| (s.to_string(), s.to_string()))
        .collect()
}

/// Each marker, and who may read it: the thread ("thread"), or a seat's person.
fn markers() -> BTreeMap<&'static str, Vec<&'static str>> {
    BTreeMap::from([
        ("TABLE-LINE-1", vec!["thread"]),
        ("PLAYERS-OOC-2", vec!["gm", "p1", "p2"]),
        ("GM-VIEW-3", vec!["gm"]),
        ("P1-PLAN-4", vec!["gm", "p1"]),
        ("P1-WHISPER-5", vec!["p1"]),
        ("P2-SENTBACK-6", vec!["p2"]),
        ("GM-OWN-7", vec!["gm"]),
        ("P1-ASK-8", vec!["p1"]),
        ("P2-ASK-9", vec!["p2"]),
        ("P1-LONG-TAIL-10", vec!["p1"]),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_message_the_bot_sends_carries_what_its_reader_may_not_read() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot(&fake, dir.path()).await;
    let hub = hub("The Wall");
    let seated = Seated::new(
        "wall".into(),
        dir.path().to_path_buf(),
        "The Wall".into(),
        hub.clone(),
        seats(),
    )
    .unwrap();
    bot.attach(seated).unwrap();
    let task = serve(bot.clone());
    identified(&fake).await;
    let thread = table_thread(&fake).await;
    let people = [("gm", 2001), ("p1", 2002), ("p2", 2003)];
    for (seat, id) in people {
        let who = user(id, &format!("person-{seat}"), false);
        let i = fake.slash(&who, thread, "join", None, &[("seat", seat)]);
        let reply = fake.reply_to(i).await;
        assert!(reply.contains(&format!("seat {seat}")), "{reply}");
    }
    // A private line longer than any message, its marker at its very end: split, and every
    // piece goes to its one reader.
    let long = format!("{} P1-LONG-TAIL-10", "secret words ".repeat(900));
    publish(
        &hub,
        vec![
            line(40, Audience::Table, "GM: TABLE-LINE-1"),
            line(41, Audience::Players, "Zara: PLAYERS-OOC-2"),
            line(42, Audience::Gm, "GM-VIEW-3"),
            line(43, Audience::Seat("p1".into()), "P1-PLAN-4"),
            line(
                44,
                Audience::Own("p1".into()),
                "You whispered: P1-WHISPER-5",
            ),
            line(
                45,
                Audience::Own("p2".into()),
                "Your action was sent back: P2-SENTBACK-6",
            ),
            line(46, Audience::Own("gm".into()), "GM-OWN-7"),
            line(47, Audience::Own("p1".into()), &long),
        ],
    );
    let (h1, h2) = (hub.clone(), hub.clone());
    let _a1 = tokio::spawn(async move { h1.ask_and_wait(ask("p1", "P1-ASK-8")).await });
    let _a2 = tokio::spawn(async move { h2.ask_and_wait(ask("p2", "P2-ASK-9")).await });

    // Everyone got what is theirs.
    let dm_of = |fake: &Fake, user: u64| fake.rec.lock().unwrap().dms.get(&user).copied();
    for (marker, readers) in markers() {
        for reader in readers {
            let channel = match reader {
                "thread" => thread,
                seat => {
                    let id = people.iter().find(|(s, _)| *s == seat).unwrap().1;
                    fake.until(|r| r.dms.get(&id).copied()).await
                }
            };
            fake.until(|r| {
                r.posts
                    .iter()
                    .any(|p| p.channel == channel && p.text().contains(marker))
                    .then_some(())
            })
            .await;
        }
    }
    // And nothing else: every message read for every marker its channel may not carry.
    let reader_of = |channel: u64| -> &'static str {
        if channel == thread {
            return "thread";
        }
        people
            .iter()
            .find(|(_, id)| dm_of(&fake, *id) == Some(channel))
            .map(|(s, _)| *s)
            .unwrap_or("someone else")
    };
    let posts = fake.posts();
    assert!(posts.len() >= 6, "{}", posts.len());
    for p in &posts {
        let reader = reader_of(p.channel);
        for (marker, readers) in markers() {
            assert!(
                !p.text().contains(marker) || readers.contains(&reader),
                "{reader} read {marker}: {}",
                p.text()
            );
        }
        assert!(
            !p.text().contains("secret words") || reader == "p1",
            "{reader}"
        );
    }
    // The interactions' replies (each seen by its person only) carry no one's marker either.
    for (_, body) in fake.rec.lock().unwrap().callbacks.iter() {
        assert_eq!(
            body["data"]["flags"], 64,
            "every reply is ephemeral: {body}"
        );
        for marker in markers().keys() {
            assert!(!body.to_string().contains(marker), "{body}");
        }
    }
    task.abort();
}

/// A person whose direct messages are closed does not hold up the table: the thread goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_the_bot_cannot_write_to_does_not_hold_up_the_thread() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot(&fake, dir.path()).await;
    let hub = hub("Closed");
    let seated = Seated::new(
        "closed".into(),
        dir.path().to_path_buf(),
        "Closed".into(),
        hub.clone(),
        seats(),
    )
    .unwrap();
    bot.attach(seated).unwrap();
    let task = serve(bot.clone());
    identified(&fake).await;
    let thread = table_thread(&fake).await;
    fake.close_dms(2102);
    let shy = user(2102, "shy", false);
    let i = fake.slash(&shy, thread, "join", None, &[("seat", "p1")]);
    fake.reply_to(i).await;
    // Another person, served after the first: their lines come all the same.
    let open = user(2103, "open", false);
    let i = fake.slash(&open, thread, "join", None, &[("seat", "p2")]);
    fake.reply_to(i).await;
    publish(
        &hub,
        vec![
            line(39, Audience::Own("p2".into()), "FOR-OPEN"),
            line(40, Audience::Own("p1".into()), "FOR-SHY"),
            line(41, Audience::Table, "GM: FIRST"),
        ],
    );
    fake.until(|r| {
        r.requests
            .iter()
            .any(|(_, _, _, s)| *s == 403)
            .then_some(())
    })
    .await;
    publish(&hub, vec![line(42, Audience::Table, "GM: SECOND")]);
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.channel == thread && p.text().contains("SECOND"))
            .then_some(())
    })
    .await;
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.text().contains("FOR-OPEN"))
            .then_some(())
    })
    .await;
    assert!(fake.posts().iter().all(|p| !p.text().contains("FOR-SHY")));
    task.abort();
}
