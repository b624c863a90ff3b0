//! `troupe serve`: open (or reopen) a campaign's table for people's browsers, print a link per
//! seat, and serve it. The server itself is `troupe_serve`; this only gathers the campaign,
//! the model and the log, as `troupe play` and `troupe resume` do.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use troupe_campaign::{Campaign, GmSeatKind, SeatTaker};
use troupe_lasers::online::{GmChair, LasersGame, Start, TakeBack, TakenBack};
use troupe_lasers::{SessionSetup, Store, served_calls};
use troupe_seat::offer::Offer;
use troupe_serve::{Link, TableFile, TableRun};

use crate::play::{GmChoice, SeatArgs};
use crate::sessions::{self, CampaignLock};
pub use crate::tables::{Opened, ServeArgs, on_end};
use crate::{models, play};

pub async fn serve(
    file: Option<&Path>,
    dir: Option<&Path>,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    if let Some(root) = &args.host {
        return host(root, args, model_args).await;
    }
    // The flags name a game's file (`--encounter SPEC`, `--scene FILE`) or none (the campaign's
    // Lasers & Feelings session); then it opens as the host's page opens it.
    let (game, file, dir) = match (&args.encounter, &args.scene) {
        (Some(spec), _) => (
            &ENCOUNTER,
            spec.clone(),
            sessions::dir_of(dir.map(Path::to_path_buf)),
        ),
        (None, Some(scene)) => (
            &SCENE,
            scene.clone(),
            sessions::dir_of(dir.map(Path::to_path_buf)),
        ),
        (None, None) => {
            let (file, dir) = sessions::campaign_file(file, dir)?;
            (&LASERS, file, dir)
        }
    };
    let mut opened = (game.open)(&dir, &file, args, model_args)?;
    for seat in &args.new_link {
        let link = troupe_serve::new_link(&mut opened.run.table, seat)?;
        opened.links.push(link);
    }
    if !args.new_link.is_empty() {
        troupe_serve::save_table(&opened.run.dir, &opened.run.table)?;
    }
    let bound = troupe_serve::bind(args.listen).await?;
    print_links(&bound.addr, &opened.run.table, &opened.links);
    let Opened { run, lock, .. } = opened;
    let hand_over = args.hand_over_after.map(Duration::from_secs);
    troupe_serve::run(bound, vec![run], None, hand_over).await?;
    drop(lock);
    Ok(ExitCode::SUCCESS)
}

/// `--host ROOT`: every open table in ROOT's campaign directories, in one process.
async fn host(
    root: &Path,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
) -> anyhow::Result<ExitCode> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .with_context(|| format!("cannot read {}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| troupe_campaign::CampaignDir::new(d).table().is_file())
        .collect();
    dirs.sort();
    let mut opened = Vec::new();
    for dir in &dirs {
        match reopen(dir, args, model_args) {
            Ok(Some(o)) => opened.push((dir.clone(), o)),
            Ok(None) => println!("{}: its table's game has ended; not served", dir.display()),
            // One campaign that cannot open does not keep the others from being served.
            Err(e) => eprintln!("troupe: {}: {e:#}; not served", dir.display()),
        }
    }
    let bound = troupe_serve::bind(args.listen).await?;
    let host_key = troupe_serve::keys::new_key()?;
    println!(
        "Open new tables at http://{}/host#key={host_key} (the host's link: keep it to yourself)",
        bound.addr
    );
    println!("Serving {} tables at http://{}/", opened.len(), bound.addr);
    let locks = Arc::new(Mutex::new(Vec::new()));
    let mut runs = Vec::new();
    for (dir, o) in opened {
        println!("  table {}: {}", o.run.table.id, dir.display());
        runs.push(o.run);
        locks
            .lock()
            .map_err(|_| anyhow::anyhow!("a lock list poisoned"))?
            .push(o.lock);
    }
    let opener = opener(root, args, model_args, locks.clone());
    let host = troupe_serve::host::Host::new(
        troupe_serve::keys::hash(&host_key),
        opener,
        troupe_games::OFFERS,
    );
    let hand_over = args.hand_over_after.map(Duration::from_secs);
    troupe_serve::run(bound, runs, Some(host), hand_over).await?;
    drop(locks);
    Ok(ExitCode::SUCCESS)
}

/// How the host's page opens a table: in ROOT's campaign directory of that name, as `troupe
/// serve --campaign ROOT/NAME …` would (the campaign's lock held while the process serves).
pub(crate) fn opener(
    root: &Path,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
    locks: Arc<Mutex<Vec<CampaignLock>>>,
) -> troupe_serve::host::Opener {
    let (root, args, model_args) = (root.to_path_buf(), args.clone(), model_args.clone());
    Box::new(move |r: &troupe_serve::host::Opening| {
        let dir = root.join(&r.campaign);
        if !dir.is_dir() {
            return Err(format!(
                "there is no campaign directory {} in the host's ROOT",
                r.campaign
            ));
        }
        let mut args = args.clone();
        args.seed = r.seed;
        // Each game's options, as its offer names them (`troupe_games::OFFERS`).
        args.persons = r.values.list("persons").to_vec();
        args.gm = if r.values.text("gm") == "ai" {
            GmChoice::Ai
        } else {
            GmChoice::Person
        };
        let players = r.values.list("players");
        if !players.is_empty() {
            args.players = players.to_vec();
        }
        args.speaker = if r.values.text("speaker") == "ai" {
            crate::tables::SpeakerKind::Ai
        } else {
            crate::tables::SpeakerKind::Person
        };
        let file = dir.join(if r.file.is_empty() {
            "campaign.json"
        } else {
            &r.file
        });
        let game = served(r.game).ok_or_else(|| format!("{} is no game served here", r.game))?;
        let opened = (game.open)(&dir, &file, &args, &model_args).map_err(|e| format!("{e:#}"))?;
        println!(
            "  table {}: {} (opened from the host's page)",
            opened.run.table.id,
            dir.display()
        );
        if let Ok(mut held) = locks.lock() {
            held.push(opened.lock);
        }
        Ok((opened.run, opened.links))
    })
}

/// The campaign directory's open table, reopened; None when its game has ended.
pub(crate) fn reopen(
    dir: &Path,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
) -> anyhow::Result<Option<Opened>> {
    let table = troupe_serve::load_table(dir)?.context("no table.json")?;
    let Some(game) = SERVED.iter().find(|g| plays(&table, g.offer)) else {
        anyhow::bail!(
            "{}'s table plays \"{}\", a game this troupe does not have (a newer troupe opened \
             it): serve it with that troupe",
            dir.display(),
            table.game
        )
    };
    (game.reopen)(dir, args, model_args)
}

/// How `troupe serve`, the host's page and Discord open and reopen a table of one game.
pub(crate) struct Served {
    pub offer: &'static Offer,
    /// A table of the game in the campaign directory, from its file (the campaign, a spec, a
    /// scene): the campaign's open table of it reopened, else a new one with new links.
    pub open: fn(&Path, &Path, &ServeArgs, &models::ModelArgs) -> anyhow::Result<Opened>,
    /// The campaign directory's open table of the game; None when its game has ended.
    pub reopen: fn(&Path, &ServeArgs, &models::ModelArgs) -> anyhow::Result<Option<Opened>>,
}

const LASERS: Served = Served {
    offer: &troupe_lasers::offer::OFFER,
    open: |dir, file, args, model_args| {
        open_lasers(file, dir, args, model_args, false)?.context("the campaign's table has ended")
    },
    reopen: |dir, args, model_args| {
        let (file, dir) = sessions::campaign_file(None, Some(dir))?;
        open_lasers(&file, &dir, args, model_args, true)
    },
};

const ENCOUNTER: Served = Served {
    offer: &troupe_encounter::offer::OFFER,
    open: open_encounter,
    reopen: crate::encounter::serve::reopen,
};

const SCENE: Served = Served {
    offer: &troupe_scene::offer::OFFER,
    open: crate::scene::serve_open,
    reopen: crate::scene::serve_reopen,
};

/// Every game a table is served for, one line each (a test checks it is every game troupe
/// offers, `troupe_games::OFFERS`).
pub(crate) const SERVED: &[&Served] = &[&LASERS, &ENCOUNTER, &SCENE];

/// The served game of this name.
fn served(game: &str) -> Option<&'static Served> {
    SERVED.iter().copied().find(|g| g.offer.game == game)
}

/// Whether a table file plays the offered game (a table written before tables named their
/// game is a Lasers & Feelings session's).
pub(crate) fn plays(table: &TableFile, offer: &Offer) -> bool {
    table.game == offer.game
        || (table.game.is_empty() && offer.game == troupe_lasers::offer::OFFER.game)
}

/// An encounter's table: a d20 encounter run, or a Lasers & Feelings encounter played as a
/// session whose AI GM runs the spec (its outcome written when the session ends).
fn open_encounter(
    dir: &Path,
    spec_path: &Path,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
) -> anyhow::Result<Opened> {
    let spec = crate::encounter::load_spec(spec_path)?;
    if spec.rules != troupe_encounter::spec::RulesKind::LasersFeelings {
        return crate::encounter::serve::open(dir, spec_path, spec, args, model_args);
    }
    std::fs::create_dir_all(dir)?;
    // A table of this campaign still playing is reopened as it was, not prepared again.
    if troupe_serve::load_table(dir)?.is_some_and(|t| plays(&t, &troupe_lasers::offer::OFFER))
        && let Some(opened) = reopen(dir, args, model_args)?
    {
        return Ok(opened);
    }
    let lock = CampaignLock::take(dir)?;
    let seed = play::seed_or_now(args.seed);
    let players = crate::encounter::seat_specs("--players", &args.players)?;
    let memory_url = args.memory_url.as_deref();
    let (campaign, _) = crate::encounter::lasers::prepare(dir, &spec, seed, &players, memory_url)?;
    println!(
        "{} plays by Lasers & Feelings: the campaign's characters play it, with an AI GM.",
        spec.title
    );
    let mut store = sessions::create_store(dir)?;
    sessions::repair_last_mirror(dir, &mut store)?;
    let session = new_session(campaign, dir, store, args, seed)?;
    lasers_table(dir, session, lock, args, model_args)
}

/// A Lasers & Feelings table: the campaign's open one reopened, or (unless `reopen_only`) a new
/// session with new links.
fn open_lasers(
    file: &Path,
    dir: &Path,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
    reopen_only: bool,
) -> anyhow::Result<Option<Opened>> {
    let lock = CampaignLock::take(dir)?;
    let mut store = sessions::create_store(dir)?;
    sessions::repair_last_mirror(dir, &mut store)?;
    let open = match troupe_serve::load_table(dir)? {
        Some(t)
            if plays(&t, &troupe_lasers::offer::OFFER)
                && store
                    .session(t.session)?
                    .is_some_and(|s| s.ended_reason.is_none()) =>
        {
            Some(t)
        }
        _ => None,
    };
    let session = match open {
        Some(t) => reopen_session(dir, store, t)?,
        None if reopen_only => return Ok(None),
        None => open_new(file, dir, store, args)?,
    };
    lasers_table(dir, session, lock, args, model_args).map(Some)
}

/// The game of a Lasers & Feelings table: its model, the GM's chair and the session's store.
fn lasers_table(
    dir: &Path,
    (table_file, links, campaign, start, store): Session,
    lock: CampaignLock,
    args: &ServeArgs,
    model_args: &models::ModelArgs,
) -> anyhow::Result<Opened> {
    let model = models::choose(model_args, campaign.model.as_ref(), dir)?;
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
        GmSeatKind::Ai => GmChair::Ai(Box::new(play::ai_gm(&campaign, &model, dir)?)),
        GmSeatKind::Person => GmChair::Person,
    };
    let ai = play::table(
        dir,
        model.clone(),
        play::campaign_memory(dir, &campaign, args.memory_url.as_deref())?,
    )?;
    let session = table_file.session;
    let game = Box::new(LasersGame {
        start,
        store,
        table: ai,
        gm,
        turns: args.turns.or(table_file.last_turn),
        take_back: take_back(dir, args.memory_url.clone()),
    });
    let run = TableRun {
        dir: dir.to_path_buf(),
        title: campaign.name.clone(),
        table: table_file,
        game,
        on_end: session_ended(dir, session, args.memory_url.clone()),
    };
    Ok(Opened { run, links, lock })
}

/// When a session's table stops: an encounter's session that has ended writes its outcome (as
/// `troupe resume` would), and the table says why it stopped.
fn session_ended(
    dir: &Path,
    session: u32,
    memory_url: Option<String>,
) -> Box<dyn FnOnce(Result<String, String>) + Send> {
    let say = on_end(dir);
    let dir = dir.to_path_buf();
    Box::new(move |ended| {
        if ended.is_ok()
            && let Err(e) = play::finish_encounter(&dir, session, memory_url.as_deref())
        {
            eprintln!(
                "troupe: {}: the encounter's outcome could not be written: {e:#}",
                dir.display()
            );
        }
        say(ended)
    })
}

/// The GM's undo at the table: as `troupe undo` does it (the mirror and the memory in step),
/// then the session's store reopened to resume on.
fn take_back(dir: &Path, memory_url: Option<String>) -> TakeBack {
    let dir = dir.to_path_buf();
    Box::new(move |number| {
        let undo = || -> anyhow::Result<TakenBack> {
            let mut store = sessions::create_store(&dir)?;
            let undone =
                sessions::take_back(&dir, &mut store, number, false, memory_url.as_deref())?;
            Ok(TakenBack {
                undone: undone.map(|u| (u.what, u.marker)),
                store,
            })
        };
        undo().map_err(|e| format!("{e:#}"))
    })
}

type Session = (TableFile, Vec<Link>, Campaign, Start, Store);

/// The table's session did not end: continue it, with the seats' keys as they were.
fn reopen_session(dir: &Path, mut store: Store, t: TableFile) -> anyhow::Result<Session> {
    let events = store.live_events(t.session)?;
    let Some(campaign) = troupe_lasers::snapshot::fold(t.session, &events)?.campaign else {
        bail!(
            "session {} in {} has no session_started event",
            t.session,
            dir.display()
        );
    };
    sessions::reopen_mirror_of(&mut store, t.session)?;
    println!(
        "Reopening the table of session {} in {}: the links printed when it opened still work.",
        t.session,
        dir.display()
    );
    let start = Start::Resume {
        number: t.session,
        events,
    };
    Ok((t, Vec::new(), campaign, start, store))
}

/// A new session of the campaign file, seated as the arguments say, with a link per seat.
fn open_new(
    file: &Path,
    dir: &Path,
    store: troupe_lasers::Store,
    args: &ServeArgs,
) -> anyhow::Result<Session> {
    let mut campaign = troupe_campaign::load(file)?;
    let seed = play::seed_or_now(args.seed);
    let seats = SeatArgs {
        gm: Some(args.gm),
        humans: args.persons.clone(),
        ..Default::default()
    };
    play::seat_table(&mut campaign, &seats, None, seed)?;
    new_session(campaign, dir, store, args, seed)
}

/// A new session of a seated campaign, with a link per seat.
fn new_session(
    campaign: Campaign,
    dir: &Path,
    mut store: Store,
    args: &ServeArgs,
    seed: u64,
) -> anyhow::Result<Session> {
    let number = store.next_session_number()?;
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
    let (table, links) = match half_opened(dir, number, &labels)? {
        Some(table) => {
            println!(
                "Reopening table {}: the server stopped before its session began; it begins now, \
                 and the links printed then still work.",
                table.id
            );
            (table, Vec::new())
        }
        None => {
            let (table, links) = troupe_serve::new_table(
                troupe_lasers::offer::OFFER.game,
                number,
                &labels,
                args.turns,
            )?;
            troupe_serve::save_table(dir, &table)?;
            (table, links)
        }
    };
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
    store
        .mirror(number)
        .with_context(|| format!("cannot write the log of session {number}"))?;
    let setup = SessionSetup {
        campaign: campaign.clone(),
        session_number: number,
        seed,
        day: store.campaign_day()?,
    };
    Ok((table, links, campaign, Start::New(Box::new(setup)), store))
}

/// The campaign's table file when it was written for session `number` with these seats, and
/// the server stopped before the session's first commit: the table is completed with the links
/// it printed (its keys), not replaced by new ones.
fn half_opened(
    dir: &Path,
    number: u32,
    labels: &[(String, String)],
) -> anyhow::Result<Option<TableFile>> {
    Ok(troupe_serve::load_table(dir)?.filter(|t| {
        let seats: Vec<(String, String)> = t
            .seats
            .iter()
            .map(|s| (s.seat.clone(), s.label.clone()))
            .collect();
        plays(t, &troupe_lasers::offer::OFFER) && t.session == number && seats == labels
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_game_troupe_offers_is_served_once() {
        let offered: Vec<&str> = troupe_games::OFFERS.iter().map(|o| o.game).collect();
        let served: Vec<&str> = SERVED.iter().map(|g| g.offer.game).collect();
        assert_eq!(served, offered);
    }
}
