//! `troupe serve --encounter SPEC`: an encounter run at the table server, a link per seat (the
//! people's and the AI players', which a person may claim), one for the GM's commands beside the
//! AI GM, and one to watch. A table whose run did not finish is reopened as it was, with the
//! same links (one opened before it had a GM link gets one with `--new-link gm`).

use std::path::Path;
use std::sync::Arc;

use troupe_campaign::{Campaign, CampaignDir};
use troupe_encounter::Spec;
use troupe_encounter::log::{Envelope, SeatKind, fold};
use troupe_encounter::table::EncounterStore;
use troupe_encounter::table::online::{EncounterGame, Finish};
use troupe_encounter::table::start::{Opening, campaign_in, window_of};
use troupe_engine::Prompts;
use troupe_llm::{ChatModel, Gateway};
use troupe_serve::{Link, TableFile, TableRun};

use troupe_encounter::table::asks::GM;

use super::{run, start};
use crate::models::ModelArgs;
use crate::sessions::CampaignLock;
use crate::tables::{Opened, ServeArgs};

/// The encounter table of this campaign: its open run reopened, or a new run of `spec` (a d20
/// encounter's, read from `spec_path`) with new links.
pub fn open(
    dir: &Path,
    spec_path: &Path,
    spec: Spec,
    args: &ServeArgs,
    model_args: &ModelArgs,
) -> anyhow::Result<Opened> {
    std::fs::create_dir_all(dir)?;
    let lock = CampaignLock::take(dir)?;
    // Read once: the model, and a new run's memory and seats, all come from it.
    let campaign = campaign_in(&CampaignDir::new(dir));
    let model = start::choose_model(model_args, campaign.as_ref(), dir)?;
    // A broken override stops the table before a run begins.
    let prompts = crate::play::prompts(dir)?;
    let (table, links, store) = match open_table(dir, args)? {
        Some((table, store)) => (table, Vec::new(), store),
        None => open_new(dir, spec_path, &spec, args, &model, campaign.as_ref())?,
    };
    let ai = Ai { model, prompts };
    table_for(dir, (table, store), links, lock, ai, args)
}

/// The campaign's open encounter table, reopened; None when it has none.
pub fn reopen(
    dir: &Path,
    args: &ServeArgs,
    model_args: &ModelArgs,
) -> anyhow::Result<Option<Opened>> {
    let lock = CampaignLock::take(dir)?;
    let Some(open) = open_table(dir, args)? else {
        return Ok(None);
    };
    let campaign = campaign_in(&CampaignDir::new(dir));
    let ai = Ai {
        model: start::choose_model(model_args, campaign.as_ref(), dir)?,
        prompts: crate::play::prompts(dir)?,
    };
    table_for(dir, open, Vec::new(), lock, ai, args).map(Some)
}

/// The table file, when it is an encounter's whose run has not finished, and the store its run
/// was looked up in (kept: the table plays from it). A table opened before encounters had a GM
/// link gets one when `--new-link gm` asks for it (the key is set with the new link).
fn open_table(dir: &Path, args: &ServeArgs) -> anyhow::Result<Option<(TableFile, EncounterStore)>> {
    let Some(mut t) = troupe_serve::load_table(dir)? else {
        return Ok(None);
    };
    if args.new_link.iter().any(|s| s == GM) && !t.seats.iter().any(|s| s.seat == GM) {
        t.seats.push(troupe_serve::StoredSeat {
            seat: GM.to_string(),
            label: GM_LABEL.to_string(),
            key_sha256: String::new(),
        });
    }
    if !crate::serve::plays(&t, &troupe_encounter::offer::OFFER) {
        return Ok(None);
    }
    let store = super::open_store(dir)?;
    let unfinished = store.run(t.session)?.is_some_and(|r| !r.ended);
    if unfinished {
        println!(
            "Reopening the table of encounter run {} in {}: the links printed when it opened \
             still work.",
            t.session,
            dir.display()
        );
    }
    Ok(unfinished.then_some((t, store)))
}

/// The table's AI side: the model, and the campaign's prompts.
struct Ai {
    model: Arc<dyn ChatModel>,
    prompts: Prompts,
}

/// The game of a table whose run has begun, played from the store it was opened with.
fn table_for(
    dir: &Path,
    (table, mut store): (TableFile, EncounterStore),
    links: Vec<Link>,
    lock: CampaignLock,
    ai: Ai,
    args: &ServeArgs,
) -> anyhow::Result<Opened> {
    let Ai { model, prompts } = ai;
    let run = table.session;
    crate::sessions::reopen_mirror_of(&mut store, run)?;
    let events = store.events(run)?;
    if model.replays_served() {
        model.skip_served(&troupe_encounter::table::start::served(&events));
    }
    let title = fold(&events).map_or_else(String::new, |s| s.spec.title.clone());
    let gm = table.seats.iter().any(|s| s.seat == GM);
    let game = Box::new(EncounterGame {
        store,
        run,
        gateway: Gateway::new(model, crate::play::retry_policy(), crate::play::sleeper()),
        prompts,
        rounds: args.turns.or(table.last_turn),
        finish: finish(dir, run, args.memory_url.clone()),
        gm,
    });
    let run = TableRun {
        dir: dir.to_path_buf(),
        title,
        table,
        game,
        on_end: crate::tables::on_end(dir),
    };
    Ok(Opened { run, links, lock })
}

/// A new run, with a link per seat (seated from the campaign file as `open` read it), and the
/// store it began in.
fn open_new(
    dir: &Path,
    spec_path: &Path,
    spec: &Spec,
    args: &ServeArgs,
    model: &Arc<dyn ChatModel>,
    campaign: Option<&Campaign>,
) -> anyhow::Result<(TableFile, Vec<Link>, EncounterStore)> {
    let scene = super::load_scene(spec_path, spec)?;
    let seed = crate::play::seed_or_now(args.seed);
    let players = super::seat_specs("--players", &args.players)?;
    let opening = Opening {
        spec,
        scene,
        players: &players,
        seed,
        window: window_of(model.as_ref()),
        campaign,
    };
    let (store, run) = start::begin(dir, opening, args.memory_url.as_deref())?;
    let state = fold(&store.events(run)?)
        .ok_or_else(|| anyhow::anyhow!("encounter run {run} did not start"))?;
    let mut labels: Vec<(String, String)> = state
        .seats
        .iter()
        .map(|s| (s.id.clone(), troupe_encounter::table::asks::who(s)))
        .collect();
    labels.push((GM.to_string(), GM_LABEL.to_string()));
    // The watcher's link last: it closes the printed list.
    labels.push((
        "join".to_string(),
        "Invitation (anyone joining)".to_string(),
    ));
    labels.push(("watch".to_string(), "Watching".to_string()));
    let (table, links) = troupe_serve::new_table(
        troupe_encounter::offer::OFFER.game,
        run,
        &labels,
        args.turns,
    )?;
    troupe_serve::save_table(dir, &table)?;
    let people: Vec<&str> = state
        .seats
        .iter()
        .filter(|s| s.kind == SeatKind::Person)
        .map(|s| s.character.as_str())
        .collect();
    println!(
        "Table open for encounter run {run} ({}, seed {seed}): the GM is an AI; people play {}.",
        spec.title,
        if people.is_empty() {
            "no one yet".to_string()
        } else {
            people.join(", ")
        }
    );
    Ok((table, links, store))
}

const GM_LABEL: &str = "Game master's commands (the AI runs the game; take back a round)";

/// The summary and the NPCs' memories, once the run resolves.
fn finish(dir: &Path, run: u32, memory_url: Option<String>) -> Finish {
    let dir = dir.to_path_buf();
    Box::new(move |state, events: &[Envelope]| {
        run::finish(&dir, state, events, run, memory_url.as_deref()).map_err(|e| format!("{e:#}"))
    })
}
