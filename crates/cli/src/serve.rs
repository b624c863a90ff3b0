//! `troupe serve`: open (or reopen) a campaign's table for people's browsers, print a link per
//! seat, and serve it. The server itself is `troupe_serve`; this only gathers the campaign,
//! the model and the log, as `troupe play` and `troupe resume` do.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use troupe_campaign::{Campaign, GmSeatKind, SeatTaker};
use troupe_engine::{EventLog, Record, SessionSetup, served_calls, session_log_path};
use troupe_serve::{Game, GmChair, LasersGame, Link, Start, TableFile, TableGame};

use crate::play::{GmChoice, SeatArgs};
use crate::sessions::{self, CampaignLock};
use crate::{models, play};

#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// Where to listen. Loopback by default; to let others in, listen on a public address
    /// behind a TLS reverse proxy (see the README)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Who runs the game: a person (at the GM's link) or ai
    #[arg(long, value_name = "person|ai", default_value = "person")]
    pub gm: GmChoice,
    /// A person plays this character from their browser (its agent id; repeat). The other
    /// characters start with an AI; anyone with a seat's link can claim it
    #[arg(long = "person", value_name = "AGENT")]
    pub persons: Vec<String>,
    /// Dice seed (recorded in the log)
    #[arg(long)]
    pub seed: Option<u64>,
    /// End the session once this turn is played (an encounter: stop, saved, after this many
    /// rounds)
    #[arg(long)]
    pub turns: Option<u32>,
    /// When a person has not answered for this many seconds, an AI plays their seat until
    /// they take it back
    #[arg(long, value_name = "SECONDS")]
    pub hand_over_after: Option<u64>,
    /// Serve an encounter run of this spec (YAML) instead of a Lasers & Feelings session: the
    /// AI GM runs it; `--players` seats the table
    #[arg(long, value_name = "SPEC")]
    pub encounter: Option<PathBuf>,
    /// With --encounter: who sits at the table, in turn order: `human:NAME` for a person at
    /// their own link, `ai` (or `ai:AGENT`) for an AI player. Every seat gets a link: a person
    /// can claim a seat an AI holds
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "human",
        requires = "encounter"
    )]
    pub players: Vec<String>,
}

pub async fn serve(
    file: Option<&Path>,
    dir: Option<&Path>,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    if let Some(spec) = &args.encounter {
        let dir = sessions::dir_of(dir.map(Path::to_path_buf));
        return crate::encounter::serve::serve(&dir, spec, args, model_args).await;
    }
    let (file, dir) = sessions::campaign_file(file, dir)?;
    let _lock = CampaignLock::take(&dir)?;
    let store = sessions::create_store(&dir)?;
    sessions::repair_last_mirror(&dir, &store)?;
    let open = match troupe_serve::load_table(&dir)? {
        Some(t)
            if store
                .session(t.session)?
                .is_some_and(|s| s.ended_reason.is_none()) =>
        {
            Some(t)
        }
        _ => None,
    };
    let (table_file, links, campaign, start, record) = match open {
        Some(t) => reopen(&dir, store, t)?,
        None => open_new(&file, &dir, store, args)?,
    };
    let model = models::choose(model_args, campaign.model.as_ref(), &dir)?;
    if let Start::Resume { events, .. } = &start
        && model.replays_served()
    {
        let calls: Vec<_> = events
            .iter()
            .filter(|e| e.event.event_type() == "model_call")
            .cloned()
            .collect();
        model.skip_served(&served_calls(&calls));
    }
    let gm = match campaign.gm.seat {
        GmSeatKind::Ai => GmChair::Seat(Box::new(play::ai_gm(&campaign, &model, &dir)?)),
        GmSeatKind::Person => GmChair::Person,
    };
    let ai = play::table(&dir, model.clone(), play::campaign_memory(&dir, &campaign)?)?;
    let bound = troupe_serve::bind(args.listen).await?;
    print_links(&bound.addr, &table_file, &links);
    let game = Game::Lasers(Box::new(LasersGame {
        start,
        record,
        table: ai,
        gm,
        turns: args.turns.or(table_file.last_turn),
    }));
    run(bound, &campaign.name, &table_file, game, args).await
}

/// Serve an opened table until the process is stopped.
pub async fn run(
    bound: troupe_serve::Bound,
    title: &str,
    table: &TableFile,
    game: Game,
    args: &ServeArgs,
) -> anyhow::Result<ExitCode> {
    troupe_serve::run(
        bound,
        title,
        table,
        game,
        args.hand_over_after.map(Duration::from_secs),
        |ended| match ended {
            Ok(why) => println!("The table stopped: {why}. The pages stay up; Ctrl-C closes the table."),
            Err(e) => eprintln!("troupe: the table stopped: {e}. Everything so far is saved; `troupe serve` again continues it."),
        },
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}

type Opened = (TableFile, Vec<Link>, Campaign, Start, Record);

/// The table's session did not end: continue it, with the seats' keys as they were.
fn reopen(dir: &Path, store: troupe_engine::Store, t: TableFile) -> anyhow::Result<Opened> {
    let events = store.live_events(t.session)?;
    let Some(campaign) = troupe_engine::snapshot::fold(t.session, &events)?.campaign else {
        bail!(
            "session {} in {} has no session_started event",
            t.session,
            dir.display()
        );
    };
    let mirror = sessions::mirror_for(dir, &store, t.session)?;
    println!(
        "Reopening the table of session {} in {}: the links printed when it opened still work.",
        t.session,
        dir.display()
    );
    let start = Start::Resume {
        number: t.session,
        events,
    };
    let record = Record {
        store,
        mirror: Some(mirror),
    };
    Ok((t, Vec::new(), campaign, start, record))
}

/// A new session, with a link per seat.
fn open_new(
    file: &Path,
    dir: &Path,
    store: troupe_engine::Store,
    args: &ServeArgs,
) -> anyhow::Result<Opened> {
    let mut campaign = troupe_campaign::load(file).map_err(|e| anyhow::anyhow!("{e}"))?;
    let seed = play::seed_or_now(args.seed);
    let seats = SeatArgs {
        gm: Some(args.gm),
        humans: args.persons.clone(),
        ..Default::default()
    };
    play::seat_table(&mut campaign, &seats, None, seed)?;
    let number = store.next_session_number(dir)?;
    let mut labels = Vec::new();
    if campaign.gm.seat == GmSeatKind::Person {
        labels.push(("gm".to_string(), format!("GM ({})", campaign.gm_name)));
    }
    for s in &campaign.seats {
        labels.push((
            s.player.agent_id.clone(),
            format!("{} ({})", s.player.name, s.character.name),
        ));
    }
    labels.push(("watch".to_string(), "Watching".to_string()));
    let (table, links) = troupe_serve::new_table(TableGame::Lasers, number, &labels, args.turns)?;
    troupe_serve::save_table(dir, &table)?;
    let people: Vec<String> = campaign
        .seats
        .iter()
        .filter(|s| s.taken_by == SeatTaker::Human)
        .map(|s| s.character.name.clone())
        .collect();
    println!(
        "Table open for session {number} of {}: the GM is {}; people play {}.",
        campaign.name,
        if campaign.gm.seat == GmSeatKind::Ai {
            "an AI"
        } else {
            "a person"
        },
        if people.is_empty() {
            "no one yet".to_string()
        } else {
            people.join(", ")
        }
    );
    let mirror = EventLog::create(&session_log_path(dir, number))
        .with_context(|| format!("cannot write the log of session {number}"))?;
    let setup = SessionSetup {
        campaign: campaign.clone(),
        session_number: number,
        seed,
    };
    let record = Record {
        store,
        mirror: Some(mirror),
    };
    Ok((table, links, campaign, Start::New(Box::new(setup)), record))
}

/// Each seat's link, once: the keys are nowhere else.
pub fn print_links(addr: &SocketAddr, table: &TableFile, links: &[Link]) {
    println!("Serving table {} at http://{addr}/", table.id);
    if links.is_empty() {
        return;
    }
    println!(
        "Give each person the link of their seat (it holds the seat's key; anyone with it takes the seat):"
    );
    for l in links {
        println!("  {:<28} http://{addr}{}", l.label, l.path);
    }
}
