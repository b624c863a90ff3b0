//! A bot stopped at any moment and started again posts nothing twice and applies no message
//! twice (what it took is in `discord.json` before the hub has it); the gateway's reconnect is a
//! resume; rate limits are waited out; a refused or missing token is one clear error.

use std::time::{Duration, Instant};

use troupe_discord::{Bot, Error, Seated, Token};
use troupe_serve::feed::Audience;

use crate::fake::{Fake, TOKEN, user};
use crate::support::{bot, config, identified, serve, table_thread};
use crate::walls::{ask, hub, line, publish, seats};

fn count(fake: &Fake, channel: u64, marker: &str) -> usize {
    fake.posts_in(channel)
        .iter()
        .filter(|p| p.text().contains(marker))
        .count()
}

async fn reacted(fake: &Fake, message: u64, emoji: &str) {
    fake.until(|r| {
        r.reactions
            .iter()
            .any(|(_, m, e)| *m == message && e == emoji)
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_started_again_posts_nothing_twice_and_applies_no_message_twice() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let hub = hub("Again");
    let seated = || {
        Seated::new(
            "again".into(),
            dir.path().to_path_buf(),
            "Again".into(),
            hub.clone(),
            seats(),
        )
        .unwrap()
    };
    let first = bot(&fake, dir.path()).await;
    first.attach(seated()).unwrap();
    let task = serve(first.clone());
    identified(&fake).await;
    let thread = table_thread(&fake).await;
    let alex = user(3001, "alex", false);
    let i = fake.slash(&alex, thread, "join", None, &[("seat", "p1")]);
    fake.reply_to(i).await;
    publish(&hub, vec![line(40, Audience::Table, "GM: FIRST-LINE")]);
    let h = hub.clone();
    let asked = tokio::spawn(async move { h.ask_and_wait(ask("p1", "FIRST-ASK")).await });
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.text().contains("FIRST-ASK"))
            .then_some(())
    })
    .await;
    let said = fake.say(&alex, thread, "I open the hatch", true);
    reacted(&fake, said, "✅").await;
    let answer = asked.await.unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&answer).unwrap()["values"]["action"],
        "I open the hatch"
    );

    // Stopped; the table goes on meanwhile, and Alex speaks (Discord holds it for the
    // session); Discord also delivers his first message again. Started again: it resumes.
    task.abort();
    drop(first);
    fake.disconnected().await;
    publish(&hub, vec![line(41, Audience::Table, "GM: SECOND-LINE")]);
    let h = hub.clone();
    let asked = tokio::spawn(async move { h.ask_and_wait(ask("p1", "SECOND-ASK")).await });
    fake.say_again(said, &alex, thread, "I open the hatch");
    let while_down = fake.say(&alex, thread, "I close the hatch", true);
    let again = bot(&fake, dir.path()).await;
    again.attach(seated()).unwrap();
    let task = serve(again.clone());
    fake.until(|r| (r.resumes >= 1).then_some(())).await;
    reacted(&fake, while_down, "✅").await;
    let answer = asked.await.unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&answer).unwrap()["values"]["action"],
        "I close the hatch",
        "the message taken before the restart was applied twice, or the one said while the bot was down was lost"
    );
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.text().contains("SECOND-LINE"))
            .then_some(())
    })
    .await;
    assert_eq!(
        fake.rec.lock().unwrap().identifies,
        1,
        "the session was resumed"
    );

    assert_eq!(
        fake.rec.lock().unwrap().threads.len(),
        1,
        "one thread for the table"
    );
    assert_eq!(count(&fake, thread, "FIRST-LINE"), 1);
    assert_eq!(count(&fake, thread, "SECOND-LINE"), 1);
    let dm = fake.rec.lock().unwrap().dms[&3001];
    assert_eq!(count(&fake, dm, "FIRST-ASK"), 1, "an ask is sent once");
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_asks_for_a_reconnect_and_the_bot_resumes_its_session() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let hub = hub("Resume");
    let bot = bot(&fake, dir.path()).await;
    bot.attach(
        Seated::new(
            "resume".into(),
            dir.path().to_path_buf(),
            "Resume".into(),
            hub.clone(),
            seats(),
        )
        .unwrap(),
    )
    .unwrap();
    let task = serve(bot.clone());
    identified(&fake).await;
    let thread = table_thread(&fake).await;
    let alex = user(3002, "alex", false);
    let i = fake.slash(&alex, thread, "join", None, &[("seat", "p2")]);
    fake.reply_to(i).await;
    fake.ask_reconnect();
    // Said while the bot reconnects: Discord replays it on the resume.
    let said = fake.say(&alex, thread, "held through a reconnect", true);
    fake.until(|r| (r.resumes == 1).then_some(())).await;
    reacted(&fake, said, "⏳").await;
    // Heartbeats go on on the resumed connection.
    let beats = fake.rec.lock().unwrap().heartbeats;
    fake.until(|r| (r.heartbeats > beats).then_some(())).await;
    assert_eq!(
        fake.rec.lock().unwrap().identifies,
        1,
        "resumed, not identified again"
    );
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_waited_out_and_long_streams_split_within_discords_limits() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let hub = hub("Limits");
    fake.bucket(2, Duration::from_millis(700));
    let bot = bot(&fake, dir.path()).await;
    bot.attach(
        Seated::new(
            "limits".into(),
            dir.path().to_path_buf(),
            "Limits".into(),
            hub.clone(),
            seats(),
        )
        .unwrap(),
    )
    .unwrap();
    let task = serve(bot.clone());
    identified(&fake).await;
    let thread = table_thread(&fake).await;
    let lines = (0..12)
        .map(|n| {
            line(
                100 + n,
                Audience::Table,
                &format!("GM: {} END-{n}!", "word ".repeat(700)),
            )
        })
        .collect();
    publish(&hub, lines);
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.text().contains("END-11!"))
            .then_some(())
    })
    .await;
    {
        let rec = fake.rec.lock().unwrap();
        let thread_path = format!("channels/{thread}/messages");
        let hits: Vec<&(String, String, Instant, u16)> = rec
            .requests
            .iter()
            .filter(|(_, p, _, _)| *p == thread_path)
            .collect();
        assert!(hits.len() >= 4, "{}", hits.len());
        assert!(
            hits.iter().all(|(_, _, _, s)| *s != 429),
            "the bot waited out its bucket instead of being refused"
        );
        for p in rec.posts.iter().filter(|p| p.channel == thread) {
            // The thread's first line is plain content; the table's lines are embeds.
            let Some(embeds) = p.body["embeds"].as_array() else {
                continue;
            };
            assert!(embeds.len() <= 10);
            let total: usize = embeds
                .iter()
                .map(|e| {
                    e["description"].as_str().unwrap_or("").chars().count()
                        + e["author"]["name"].as_str().unwrap_or("").chars().count()
                })
                .sum();
            assert!(total <= 6000, "{total}");
        }
    }
    for n in 0..12 {
        assert_eq!(count(&fake, thread, &format!("END-{n}!")), 1);
    }

    // A global 429: nothing is sent before its retry_after has passed.
    fake.global_429(0.6);
    publish(&hub, vec![line(200, Audience::Table, "GM: AFTER-GLOBAL")]);
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.text().contains("AFTER-GLOBAL"))
            .then_some(())
    })
    .await;
    let rec = fake.rec.lock().unwrap();
    let limited = rec
        .requests
        .iter()
        .position(|(_, _, _, s)| *s == 429)
        .unwrap();
    let (at, next) = (rec.requests[limited].2, rec.requests[limited + 1].2);
    assert!(
        next.duration_since(at) >= Duration::from_millis(590),
        "{:?}",
        next.duration_since(at)
    );
    drop(rec);
    task.abort();
}

#[tokio::test]
async fn a_refused_or_missing_token_is_one_clear_error_that_never_shows_it() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&fake, dir.path());
    c.token = Token::new("wrong.token.SHOULD-NOT-SHOW").unwrap();
    let Err(e) = Bot::connect(c, None).await else {
        panic!("a refused token connected");
    };
    assert!(matches!(e, Error::TokenRefused));
    assert!(
        !e.to_string().contains("SHOULD-NOT-SHOW") && !format!("{e:?}").contains("SHOULD-NOT-SHOW")
    );
    assert!(e.to_string().contains("TROUPE_DISCORD_TOKEN"), "{e}");
    let e = Token::from_env("TROUPE_DISCORD_TOKEN_UNSET_IN_TESTS").unwrap_err();
    assert!(
        e.to_string()
            .contains("TROUPE_DISCORD_TOKEN_UNSET_IN_TESTS"),
        "{e}"
    );
    // Nothing the bot sent carries the token but its Authorization header.
    let rec = fake.rec.lock().unwrap();
    assert!(
        rec.raw
            .iter()
            .all(|r| !r.contains("SHOULD-NOT-SHOW") && !r.contains(TOKEN))
    );
}
