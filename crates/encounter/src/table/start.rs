//! Starting an encounter run: who sits at the table (each seat asked for as a [`SeatSpec`]),
//! the names drawn, what the NPCs remember, the `started` event in the log. Also who joins a
//! running encounter, and which of its model calls the log already answered.

use std::collections::BTreeMap;

use crate::Spec;
use crate::log::{EncounterEvent, Envelope, Seat, SeatKind, live};
use troupe_campaign::{Campaign, CampaignDir, CharacterProfile};
use troupe_llm::{CallTag, ChatModel};
use troupe_memory::MemoryStore;

use super::{now, outcome};
use troupe_engine::{Error, StoredRun};

use super::{EncounterError, EncounterStore};

/// The GM model's window when the provider does not say (seed 003's 128,000 tokens).
pub const DEFAULT_WINDOW: usize = 128_000;

/// Characters for AI seats when the campaign has no file (or too few AI players in it).
const STAND_INS: &[(&str, &str)] = &[
    ("Ash", "a wary scout"),
    ("Brin", "a cheerful tinkerer"),
    ("Cato", "a blunt bodyguard"),
    ("Dell", "a curious scholar"),
];

/// One seat as asked for: a person (by name, else "Player N"), or an AI player (the campaign
/// file's agent of that id, else its next AI player nobody plays, else a stand-in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatSpec {
    Person { name: Option<String> },
    Ai { agent: Option<String> },
}

/// The campaign file the directory holds, read loosely: a table without one (or with one that
/// does not load) seats stand-ins, as it always has.
pub fn campaign_in(dir: &CampaignDir) -> Option<Campaign> {
    troupe_campaign::load(&dir.campaign_file()?).ok()
}

/// The GM model's context window in tokens: what the provider says, else [`DEFAULT_WINDOW`].
pub fn window_of(model: &dyn ChatModel) -> usize {
    model
        .context_tokens()
        .map_or(DEFAULT_WINDOW, |t| t as usize)
}

/// Seat the table in turn order, the campaign file's AI players and character profiles first.
pub fn seats(specs: &[SeatSpec], campaign: Option<&Campaign>) -> Result<Vec<Seat>, EncounterError> {
    let mut ai_pool: Vec<Seat> = campaign.map(ai_players).unwrap_or_default();
    let mut out: Vec<Seat> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let seat = match spec {
            SeatSpec::Person { name } => person(i, name.as_deref()),
            SeatSpec::Ai { agent } => ai_seat(&mut ai_pool, agent.as_deref(), i, &out)?,
        };
        out.push(seat);
    }
    if out.is_empty() {
        return Err(EncounterError::NoPlayers);
    }
    if let Some(c) = campaign {
        for seat in &mut out {
            with_profile(seat, &c.profiles);
        }
    }
    Ok(out)
}

/// The campaign file's AI players as seats, in file order.
fn ai_players(campaign: &Campaign) -> Vec<Seat> {
    campaign
        .seats
        .iter()
        .map(|s| Seat {
            id: s.player.agent_id.clone(),
            character: s.character.name.clone(),
            player: s.player.name.clone(),
            kind: SeatKind::Ai,
            about: format!("{} {}", s.character.style, s.character.role),
        })
        .collect()
}

/// The seat's character's profile from the campaign (`profiles`, by character name, any
/// case), first in what the GM and the table read about them: pronouns above all.
fn with_profile(seat: &mut Seat, profiles: &BTreeMap<String, CharacterProfile>) {
    let Some(profile) = profiles
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(&seat.character))
        .map(|(_, p)| p.describe())
        .filter(|p| !p.is_empty())
    else {
        return;
    };
    seat.about = if seat.about.is_empty() {
        profile
    } else {
        format!("{profile}; {}", seat.about)
    };
}

fn person(i: usize, name: Option<&str>) -> Seat {
    let name = match name {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("Player {}", i + 1),
    };
    Seat {
        id: format!("p{}", i + 1),
        character: name.clone(),
        player: name,
        kind: SeatKind::Person,
        about: String::new(),
    }
}

fn ai_seat(
    pool: &mut Vec<Seat>,
    agent: Option<&str>,
    i: usize,
    taken: &[Seat],
) -> Result<Seat, EncounterError> {
    if let Some(agent) = agent.filter(|a| !a.is_empty()) {
        let at = (pool.iter().position(|s| s.id == agent))
            .ok_or_else(|| EncounterError::NoSuchAiPlayer(agent.to_string()))?;
        return Ok(pool.remove(at));
    }
    if !pool.is_empty() {
        return Ok(pool.remove(0));
    }
    let free = STAND_INS
        .iter()
        .find(|(n, _)| !taken.iter().any(|s| s.character == *n))
        .copied()
        .unwrap_or(("Echo", "a quiet wanderer"));
    Ok(Seat {
        id: format!("ai{}", i + 1),
        character: free.0.to_string(),
        player: format!("AI player {}", i + 1),
        kind: SeatKind::Ai,
        about: free.1.to_string(),
    })
}

/// The seats of those joining a running encounter, numbered after those at the table: the
/// seated are seated again first (the campaign's AI players by id), so a bare `Ai` takes the
/// next AI player nobody plays yet. Someone already at the table cannot join it.
pub fn joining(
    join: &[SeatSpec],
    seated: &[Seat],
    campaign: Option<&Campaign>,
) -> Result<Vec<Seat>, EncounterError> {
    let already = |seat: &Seat| EncounterError::AlreadySeated {
        player: seat.player.clone(),
        character: seat.character.clone(),
    };
    for spec in join {
        if let SeatSpec::Ai { agent: Some(agent) } = spec
            && let Some(seat) = seated.iter().find(|s| &s.id == agent)
        {
            return Err(already(seat));
        }
    }
    let all: Vec<SeatSpec> = seated_again(seated, campaign)
        .chain(join.iter().cloned())
        .collect();
    let mut seats = seats(&all, campaign)?;
    let new = seats.split_off(seated.len());
    let mut out: Vec<Seat> = Vec::new();
    for seat in new {
        if seated.iter().chain(&out).any(|s| s.id == seat.id) {
            return Err(already(&seat));
        }
        out.push(seat);
    }
    Ok(out)
}

/// The seats at the table as they would be asked for again.
fn seated_again<'a>(
    seated: &'a [Seat],
    campaign: Option<&'a Campaign>,
) -> impl Iterator<Item = SeatSpec> + 'a {
    let in_campaign =
        move |id: &str| campaign.is_some_and(|c| c.seats.iter().any(|s| s.player.agent_id == id));
    seated.iter().map(move |s| match s.kind {
        SeatKind::Ai if in_campaign(&s.id) => SeatSpec::Ai {
            agent: Some(s.id.clone()),
        },
        _ => SeatSpec::Person { name: None },
    })
}

/// What a new run starts from.
pub struct Opening<'a> {
    pub spec: &'a Spec,
    /// The spec's scene file, checked, as text (it goes into the log).
    pub scene: Option<String>,
    pub players: &'a [SeatSpec],
    /// The dice seed; it also draws the NPCs' names.
    pub seed: u64,
    /// The GM model's context window in tokens (see [`window_of`]).
    pub window: usize,
    /// The campaign file as the caller read it (see [`campaign_in`]): its AI players and
    /// profiles take the seats, else stand-ins do. Handed in, not read here: the caller has
    /// read it already (for its model and its memory), and one reading is enough.
    pub campaign: Option<&'a Campaign>,
}

/// A run just begun: its store and number, and the campaign's previous run when it had not
/// finished (a new run was started beside it; `resume --run N` still continues it).
pub struct Begun {
    pub store: EncounterStore,
    pub run: u32,
    pub unfinished: Option<StoredRun>,
}

/// Begin a run (the caller holds the campaign's lock): the seats, the names drawn and what the
/// NPCs remember (from `memory`), the `started` event in the log, the tally counted.
pub fn begin(
    dir: &CampaignDir,
    memory: &MemoryStore,
    opening: Opening<'_>,
) -> Result<Begun, Error> {
    let Opening {
        spec,
        scene,
        players,
        seed,
        window,
        campaign,
    } = opening;
    let seats = seats(players, campaign)?;
    let (names, memories) = outcome::cast(memory, spec, seed)?;
    let at = now();
    let mut store = EncounterStore::open(dir.path())?;
    let unfinished = store.latest()?.filter(|last| !last.ended);
    let started = EncounterEvent::Started {
        spec: Box::new(spec.clone()),
        scene,
        seed,
        seats,
        names,
        memories,
        window,
        at: at.clone(),
    };
    let first = Envelope {
        seq: 0,
        event: started,
    };
    let run = store.begin(&spec.id, &at, std::slice::from_ref(&first))?;
    outcome::bump_tally(dir.path(), &spec.id, &at)?;
    Ok(Begun {
        store,
        run,
        unfinished,
    })
}

/// The model calls a run's live events already answered, in order (a model answering from a
/// recording moves past them on resume).
pub fn served(events: &[Envelope]) -> Vec<CallTag> {
    live(events)
        .iter()
        .filter_map(|e| match &e.event {
            EncounterEvent::GmCalled { call, .. } | EncounterEvent::PlayerCalled { call } => {
                Some(CallTag::new(call.agent.clone(), call.purpose.clone()))
            }
            EncounterEvent::GmRejected { reply: Some(_), .. } => {
                Some(CallTag::new("gm", "encounter_gm"))
            }
            _ => None,
        })
        .collect()
}
