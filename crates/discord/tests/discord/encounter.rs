//! The smithy encounter played from a Discord thread: Mara's person sits down with `/join`, her
//! messages in the thread are her actions, her roll is a button in her direct messages; the AI
//! players' and the AI GM's lines reach the thread under their names; her whisper reaches her
//! alone.

use crate::fake::{Fake, user};
use crate::support::{bot, bot_that_opens, campaign, identified, open_smithy, serve, table_thread};

/// What the GM's prompt and the spec hold that no one may read (as the web table's test).
const SECRETS: [&str; 6] = [
    "Easier (DC 11)",
    "forged entry",
    "The forge burns again, with the smith's blessing",
    "trusts people who offer to work",
    "fireball",
    "DC 14",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_smithy_encounter_is_played_from_a_thread_end_to_end() {
    let fake = Fake::start().await;
    let dir = campaign();
    let bot = bot(&fake, dir.path()).await;
    let table = bot.open(open_smithy(dir.path())).unwrap();
    let task = serve(bot.clone());
    identified(&fake).await;

    // The table gets a thread in the bot's channel; the story so far is posted there.
    let thread = table_thread(&fake).await;
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.channel == thread && p.text().contains("Rain needles"))
            .then_some(())
    })
    .await;

    // Whoever runs the table beside the AI GM sits at the GM's seat: a player's peer.
    let runner = user(1002, "table-runner", false);
    let sat = fake.slash(&runner, thread, "join", None, &[("seat", "gm")]);
    assert!(fake.reply_to(sat).await.contains("seat gm"));
    // Mara's person sits at her seat, whispers, and acts by a message in the thread.
    let mara = user(1001, "mara-player", false);
    let joined = fake.slash(&mara, thread, "join", None, &[("seat", "p1")]);
    let reply = fake.reply_to(joined).await;
    assert!(reply.contains("seat p1"), "{reply}");
    // Her ask comes to her directly.
    let dm = fake.until(|r| r.dms.get(&1001).copied()).await;
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.channel == dm && p.text().contains("Answer with your next message"))
            .then_some(())
    })
    .await;
    let whisper = fake.slash(
        &mara,
        thread,
        "whisper",
        None,
        &[("args", "Mara hides a spare key 7f3a")],
    );
    let reply = fake.reply_to(whisper).await;
    assert!(reply.contains("done"), "{reply}");
    let said = wait_taken(&fake, &mara, thread, "I offer to work the bellows myself").await;
    assert!(said);

    // Her roll: a button in her direct messages.
    let button = fake
        .until(|r| {
            r.posts.iter().filter(|p| p.channel == dm).find_map(|p| {
                p.body["components"][0]["components"][0]["custom_id"]
                    .as_str()
                    .map(str::to_string)
            })
        })
        .await;
    let pressed = fake.press(&mara, dm, &button);
    let reply = fake.reply_to(pressed).await;
    assert_eq!(reply, "Done.");

    // Her second action, then the encounter resolves.
    assert!(wait_taken(&fake, &mara, thread, "I keep pumping the bellows").await);
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.channel == thread && p.text().contains("The table has ended"))
            .then_some(())
    })
    .await;

    let thread_text: Vec<String> = fake.posts_in(thread).iter().map(|p| p.text()).collect();
    let all = thread_text.join("\n");
    // The AI GM and the AI players post under their names.
    let authors: Vec<String> = fake
        .posts_in(thread)
        .iter()
        .flat_map(|p| p.body["embeds"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e["author"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(authors.iter().any(|a| a == "GM"), "{authors:?}");
    assert!(authors.iter().any(|a| a == "Mara"), "{authors:?}");
    assert!(
        authors
            .iter()
            .filter(|a| *a != "GM" && *a != "Mara")
            .count()
            > 0,
        "{authors:?}"
    );
    assert!(all.contains("I offer to work the bellows myself"), "{all}");
    assert!(
        all.contains("Mara rolls d20 [5, 15] → 15: success"),
        "{all}"
    );
    // The whisper reached Mara's person alone.
    assert!(!all.contains("7f3a"), "the thread read the whisper");
    let dm_text: String = fake.posts_in(dm).iter().map(|p| p.text()).collect();
    assert!(
        dm_text.contains("You whispered to the GM: Mara hides a spare key 7f3a"),
        "{dm_text}"
    );
    // (The sent-back action is there to be leaked: in Zara-7's seat's stream.)
    assert!(
        table
            .hub
            .seat_feed("alex", None)
            .to_string()
            .contains("confesses")
    );
    for p in fake.posts() {
        // Mara's whisper reached her alone; Zara-7's action sent back reached no one (an AI
        // holds her seat).
        assert!(
            !p.text().contains("7f3a") || p.channel == dm,
            "{}",
            p.channel
        );
        assert!(!p.text().contains("confesses"), "{}", p.channel);
        for s in SECRETS {
            assert!(!p.text().contains(s), "{} read {s:?}", p.channel);
        }
    }
    // The log is the table's, as at every surface.
    assert!(table.hub.seat_feed("watch", None)["state"]["ended"].is_string());
    task.abort();
}

/// Mara says `text` in the thread; true once the bot put its ✅ on it.
async fn wait_taken(
    fake: &Fake,
    who: &twilight_model::user::User,
    thread: u64,
    text: &str,
) -> bool {
    // The table may not be asking her yet: a message sent early is held (⏳) and taken by her
    // next ask, which also ends in a ✅.
    let id = fake.say(who, thread, text, true);
    fake.until(|r| {
        r.reactions
            .iter()
            .any(|(c, m, e)| *c == thread && *m == id && e == "✅")
            .then_some(true)
    })
    .await
}

/// `/start encounter` in a channel opens the table in a new thread there, its story posted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encounter_started_from_discord_opens_in_a_thread_of_that_channel() {
    let fake = Fake::start().await;
    let dir = campaign();
    let bot = bot_that_opens(&fake, dir.path()).await;
    let task = serve(bot.clone());
    identified(&fake).await;
    let gm = user(1101, "gm-person", false);
    let elsewhere = 4242;
    let i = fake.slash(
        &gm,
        elsewhere,
        "start",
        Some("encounter"),
        &[
            ("spec", "encounters/smithy.yaml"),
            ("players", "human:Mara,ai,ai"),
        ],
    );
    let reply = fake.reply_to(i).await;
    assert!(reply.contains("The Cold Forge"), "{reply}");
    let thread = fake
        .until(|r| {
            r.threads
                .iter()
                .find(|(p, _, _)| *p == elsewhere)
                .map(|(_, t, _)| *t)
        })
        .await;
    fake.until(|r| {
        r.posts
            .iter()
            .any(|p| p.channel == thread && p.text().contains("Rain needles"))
            .then_some(())
    })
    .await;
    assert!(
        fake.rec
            .lock()
            .unwrap()
            .threads
            .iter()
            .all(|(p, _, _)| *p == elsewhere),
        "one thread, where the command was typed"
    );
    task.abort();
}
