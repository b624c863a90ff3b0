//! A campaign directory with the smithy encounter (the examples' party, spec and recorded
//! replies), its table opened as `troupe serve --encounter` opens one, and a bot pointed at the
//! fake.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use troupe_campaign::CampaignDir;
use troupe_discord::{Bot, Config, Token};
use troupe_encounter::log::fold;
use troupe_encounter::table::online::EncounterGame;
use troupe_encounter::table::start::{Opening, SeatSpec, begin, campaign_in, window_of};
use troupe_llm::{ChatModel, Gateway, RetryPolicy, TokioSleeper};
use troupe_serve::TableRun;

use crate::fake::{CHANNEL, Fake, TOKEN};

pub use troupe_test_support::examples;

/// The examples' party as the campaign, and the smithy spec with its recorded replies.
pub fn campaign() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples().join("party.json"),
        dir.path().join("campaign.json"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("encounters")).unwrap();
    for f in ["smithy.yaml", "smithy.replay.jsonl"] {
        std::fs::copy(
            examples().join("encounters").join(f),
            dir.path().join("encounters").join(f),
        )
        .unwrap();
    }
    dir
}

fn model(dir: &Path) -> Arc<dyn ChatModel> {
    Arc::new(
        troupe_llm::ReplayModel::from_file(dir.join("encounters/smithy.replay.jsonl")).unwrap(),
    )
}

/// A new smithy run at a table (Mara a person at p1, two AI players), as `troupe serve
/// --encounter encounters/smithy.yaml --players human:Mara,ai,ai --seed 12` opens it.
pub fn open_smithy(dir: &Path) -> TableRun {
    let text = std::fs::read_to_string(dir.join("encounters/smithy.yaml")).unwrap();
    let spec = troupe_encounter::check::check(&text).unwrap();
    let cdir = CampaignDir::new(dir);
    let campaign = campaign_in(&cdir);
    let memory = troupe_memory::MemoryStore::open(&cdir.db()).unwrap();
    let model = model(dir);
    let players = vec![
        SeatSpec::Person {
            name: Some("Mara".into()),
        },
        SeatSpec::Ai { agent: None },
        SeatSpec::Ai { agent: None },
    ];
    let opening = Opening {
        spec: &spec,
        scene: None,
        players: &players,
        seed: 12,
        window: window_of(model.as_ref()),
        campaign: campaign.as_ref(),
    };
    let begun = begin(&cdir, &memory, opening).unwrap();
    let state = fold(&begun.store.events(begun.run).unwrap()).unwrap();
    let mut labels: Vec<(String, String)> = state
        .seats
        .iter()
        .map(|s| (s.id.clone(), format!("{} ({})", s.player, s.character)))
        .collect();
    labels.push(("gm".into(), "Game master's commands".into()));
    labels.push(("join".into(), "Invitation".into()));
    labels.push(("watch".into(), "Watching".into()));
    let (table, _links) = troupe_serve::new_table(
        troupe_encounter::offer::OFFER.game,
        begun.run,
        &labels,
        None,
    )
    .unwrap();
    troupe_serve::save_table(dir, &table).unwrap();
    table_run(dir, table, begun.store, model, state.spec.title.clone())
}

fn table_run(
    dir: &Path,
    table: troupe_serve::TableFile,
    store: troupe_encounter::table::EncounterStore,
    model: Arc<dyn ChatModel>,
    title: String,
) -> TableRun {
    let run = table.session;
    let game = Box::new(EncounterGame {
        store,
        run,
        gateway: Gateway::new(model, RetryPolicy::default(), Arc::new(TokioSleeper)),
        prompts: troupe_games::campaign(dir).unwrap(),
        rounds: None,
        finish: Box::new(|_, _| Ok(())),
        gm: true,
    });
    TableRun {
        dir: dir.to_path_buf(),
        title,
        table,
        game,
        on_end: Box::new(|_| {}),
    }
}

pub fn config(fake: &Fake, home: &Path) -> Config {
    Config {
        token: Token::new(TOKEN).unwrap(),
        api: fake.api.clone(),
        gateway: Some(fake.gateway.clone()),
        channel: Some(CHANNEL),
        home: home.to_path_buf(),
        campaign: None,
        hand_over_after: None,
        offers: troupe_games::OFFERS.to_vec(),
    }
}

/// A bot whose `/start encounter` opens the smithy in `dir` (as the binary's opener does).
pub async fn bot_that_opens(fake: &Fake, dir: &Path) -> Arc<Bot> {
    let d = dir.to_path_buf();
    let opener: troupe_serve::host::Opener = Box::new(move |r| {
        assert_eq!(r.game, "encounter");
        assert_eq!(r.file, "encounters/smithy.yaml");
        Ok((open_smithy(&d), Vec::new()))
    });
    let mut c = config(fake, dir);
    c.campaign = Some("smithy-campaign".into());
    Bot::connect(c, Some(opener)).await.unwrap()
}

/// A bot connected to the fake, serving on a task of its own (abort it to stop the bot).
pub async fn bot(fake: &Fake, home: &Path) -> Arc<Bot> {
    Bot::connect(config(fake, home), None).await.unwrap()
}

pub fn serve(bot: Arc<Bot>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let _ = bot.serve().await;
    })
}

/// The thread the bot opened for its table in the tables' channel, once it wrote there.
pub async fn table_thread(fake: &Fake) -> u64 {
    fake.table_thread(CHANNEL).await
}

/// Wait until the fake's gateway has a connection that identified.
pub async fn identified(fake: &Fake) {
    fake.until(|r| (r.identifies > 0).then_some(())).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
}
