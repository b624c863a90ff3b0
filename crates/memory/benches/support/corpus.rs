//! Campaign text for the memory benchmarks: a long Lasers & Feelings campaign, generated from
//! word pools with a seeded RNG, streamed in batches so a million facts never sit in memory at
//! once. GM narration (NPCs met, deals, secrets, moves, places, items, factions), players' out of
//! character talk and characters' in-character actions; party, player and character scopes;
//! sessions 1..N with turns and in-game days. Shared by `benches/memory.rs` and
//! `examples/memory_speed.rs`.

#![allow(dead_code)]

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use troupe_memory::{Episode, Scope};

const FIRST: &[&str] = &[
    "Galvin", "Mirela", "Tobek", "Sashi", "Orrin", "Vexa", "Dunmore", "Ilsa", "Quill", "Raddo",
    "Brisk", "Hollis", "Yarrow", "Temmet", "Nix", "Cordra", "Pell", "Ambrose", "Juniper", "Krell",
    "Maddox", "Sefa", "Torvin", "Ulla", "Wren", "Zeller", "Fenn", "Lira", "Marlo", "Odessa",
    "Petrik", "Rhoda", "Stellan", "Tamsin", "Vosk", "Alder", "Bexley", "Cato", "Delphine", "Ezra",
    "Hesper", "Idris", "Jory", "Kasimir", "Lomax", "Mercer", "Nadia", "Osric", "Pia", "Rurik",
    "Sabine", "Thane", "Uriel", "Vanya", "Wystan", "Xanthe", "Yusuf", "Zinnia", "Bram", "Cressida",
];
const LAST: &[&str] = &[
    "Tarrow",
    "Quell",
    "Maris",
    "Dunne",
    "Okoro",
    "Vance",
    "Strand",
    "Holloway",
    "Krane",
    "Solano",
    "Brightwater",
    "Ashgrove",
    "Corvin",
    "Delacroix",
    "Everly",
    "Fairbanks",
    "Grell",
    "Hargrove",
    "Ingram",
    "Jaskolski",
    "Kettering",
    "Lindqvist",
    "Morrow",
    "Nakamura",
    "Oyelaran",
    "Pryce",
    "Quintero",
    "Rasmussen",
    "Sorensen",
    "Thackery",
    "Underhill",
    "Valdez",
    "Whitlock",
    "Xu",
    "Yoshida",
    "Zamora",
    "Blackwood",
    "Carraway",
    "Drummond",
    "Ellery",
    "Fitzroy",
    "Galloway",
    "Hawthorne",
    "Iverson",
    "Jandt",
    "Kowalczyk",
    "Larkspur",
    "Montague",
    "Nightingale",
    "Orme",
];
const ROLES: &[(&str, &str)] = &[
    ("merchant", "trader"),
    ("mechanic", "engineer"),
    ("smuggler", "contrabandist"),
    ("diplomat", "envoy"),
    ("doctor", "physician"),
    ("pilot", "flyer"),
    ("priest", "cleric"),
    ("guard captain", "security chief"),
    ("scientist", "researcher"),
    ("bartender", "barkeep"),
    ("bounty hunter", "mercenary"),
    ("archivist", "librarian"),
];
const PLACE_A: &[&str] = &[
    "Port", "Calyx", "Harrow", "Nadir", "Kesh", "Orison", "Solace", "Tarn", "Vell", "Drift",
    "Cinder", "Glass", "Umber", "Sable", "Argent", "Helix", "Morrow", "Quasar", "Rime", "Zenith",
];
const PLACE_B: &[&str] = &[
    "Meridian", "Moon", "Station", "Reach", "Prime", "Dock", "Hab", "Relay", "Rings", "Market",
    "Belt", "Nebula", "Outpost", "Spire", "Gate", "Haven",
];
const PLACE_DESC: &[&str] = &[
    "a trading station",
    "an icy moon",
    "an asteroid belt",
    "a floating bazaar",
    "a mining outpost",
    "a frontier colony",
    "a shimmering nebula",
    "a jungle world",
    "a shipyard",
    "a hospital habitat",
    "a derelict relay",
    "a desert planet",
];
const ITEM_A: &[&str] = &[
    "plasma", "quantum", "void", "signal", "star", "med", "data", "fuel", "cloaking", "gravity",
    "ion", "neural", "ancient", "cargo", "sensor",
];
const ITEM_B: &[&str] = &[
    "coil", "chart", "kit", "crystal", "cell", "emitter", "chip", "beacon", "patch", "idol",
    "drive", "key", "core", "map", "relay",
];
const FACTIONS: &[&str] = &[
    "the Hive Armada",
    "the Consortium",
    "Zorgon's raiders",
    "the Free Traders Guild",
    "the Cyber Zombies",
    "the Quiet Choir",
    "the Ember Syndicate",
    "the Meridian Watch",
];
const ADJ: &[&str] = &[
    "nervous",
    "cheerful",
    "suspicious",
    "exhausted",
    "furious",
    "calm",
    "secretive",
    "friendly",
    "desperate",
    "arrogant",
    "curious",
    "wary",
];
const NUMBERS: &[&str] = &[
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "eighty",
    "a hundred",
    "two hundred",
    "three hundred",
    "five hundred",
    "a thousand",
];
const FILLER_GM: &[&str] = &[
    "The Raptor hums quietly as the crew runs the usual checks.",
    "A long stretch of empty space passes without incident.",
    "The galley coffee machine sputters again; someone kicks it until it works.",
    "Stars wheel past the viewport while the autopilot holds course.",
    "Static crackles on the comms, then fades.",
    "The crew takes a few hours to rest between jumps.",
    "Maintenance alarms chirp about a sticky airlock, nothing serious.",
    "Somewhere aft, a loose panel rattles with every burn.",
    "The sensors sweep an empty sector and report nothing of note.",
    "The ship's lights dim for a moment as the circuit breakers complain.",
];
const FILLER_OOC: &[&str] = &[
    "I think we should keep moving, honestly.",
    "Can we take a short break after this scene?",
    "I'm fine with whatever the group wants here.",
    "Let's not split the party this time, please.",
    "Good idea, I'll back you up.",
    "Does anyone remember how much fuel we have left?",
    "I want my character to have a quiet moment here.",
    "Let's be careful, the last time we rushed it went badly.",
];
const FILLER_IC: &[&str] = &[
    "I check the readouts one more time.",
    "I lean back in the pilot seat and stretch.",
    "I tidy up the workbench and sort the tools.",
    "I keep watch by the airlock.",
    "I hum an old colony song while I work.",
    "I run a diagnostic on the sensor array.",
];
/// (agent, character) pairs: players talk out of character, characters act in it.
pub const SEATS: &[(&str, &str)] = &[("alex", "zara"), ("bea", "kip"), ("cy", "oona")];

/// Episodes per turn and turns per session: 200 facts a session.
pub const PER_TURN: usize = 5;
pub const TURNS: u32 = 40;

struct Npc {
    name: String,
    role: usize,
    place: usize,
    item: usize,
    faction: usize,
}

/// A seeded campaign of `total` episodes, produced batch by batch.
pub struct Campaign {
    rng: ChaCha8Rng,
    total: usize,
    produced: usize,
    npcs: Vec<Npc>,
    places: Vec<String>,
    items: Vec<String>,
    session: u32,
    turn: u32,
    in_turn: usize,
    day: u32,
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, xs: &'a [T]) -> &'a T {
    &xs[(rng.next_u64() % xs.len() as u64) as usize]
}

fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
}

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

impl Campaign {
    pub fn new(total: usize, seed: u64) -> Campaign {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // A campaign meets more people the longer it runs: about one NPC per 100 facts.
        let n_npcs = (total / 100).clamp(20, FIRST.len() * LAST.len());
        let mut names: Vec<String> = FIRST
            .iter()
            .flat_map(|f| LAST.iter().map(move |l| format!("{f} {l}")))
            .collect();
        // Shuffle the names (Fisher–Yates) so a small campaign is not all Galvins.
        for i in (1..names.len()).rev() {
            let j = below(&mut rng, i + 1);
            names.swap(i, j);
        }
        let places: Vec<String> = PLACE_A
            .iter()
            .flat_map(|a| PLACE_B.iter().map(move |b| format!("{a} {b}")))
            .collect();
        let items: Vec<String> = ITEM_A
            .iter()
            .flat_map(|a| ITEM_B.iter().map(move |b| format!("{a} {b}")))
            .collect();
        let npcs = names
            .into_iter()
            .take(n_npcs)
            .map(|name| Npc {
                name,
                role: below(&mut rng, ROLES.len()),
                place: below(&mut rng, places.len()),
                item: below(&mut rng, items.len()),
                faction: below(&mut rng, FACTIONS.len()),
            })
            .collect();
        Campaign {
            rng,
            total,
            produced: 0,
            npcs,
            places,
            items,
            session: 1,
            turn: 1,
            in_turn: 0,
            day: 1,
        }
    }

    /// Sessions the whole campaign spans.
    pub fn sessions(total: usize) -> u32 {
        (total.div_ceil(PER_TURN * TURNS as usize)) as u32
    }

    /// NPCs met so far: they arrive evenly over the campaign.
    fn met(&self) -> usize {
        let n = self.npcs.len();
        ((self.produced * n) / self.total.max(1) + 1).min(n)
    }

    /// The next batch of at most `n` episodes; empty at the end.
    pub fn next_batch(&mut self, n: usize) -> Vec<Episode> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n && self.produced < self.total {
            out.push(self.next_episode());
        }
        out
    }

    fn next_episode(&mut self) -> Episode {
        if self.in_turn == PER_TURN {
            self.in_turn = 0;
            self.turn += 1;
            if self.turn % 3 == 1 {
                self.day += 1 + below(&mut self.rng, 2) as u32;
            }
            if self.turn > TURNS {
                self.turn = 1;
                self.session += 1;
            }
        }
        let met = self.met();
        // Mostly people met lately, sometimes an old acquaintance.
        let who = if chance(&mut self.rng, 0.7) {
            met - 1 - below(&mut self.rng, met.min(15))
        } else {
            below(&mut self.rng, met)
        };
        let introducing = self.npcs.len() > 1 && met > 1 && who == met - 1;
        let (speaker, scope, text) = match self.in_turn {
            0 | 1 => (
                "gm".to_string(),
                Scope::Party,
                self.gm_line(who, introducing),
            ),
            2 => {
                let (agent, _) = *pick(&mut self.rng, SEATS);
                let scope = if chance(&mut self.rng, 0.2) {
                    Scope::Player(agent.to_string())
                } else {
                    Scope::Party
                };
                (agent.to_string(), scope, self.ooc_line(who))
            }
            3 => {
                let (_, ch) = *pick(&mut self.rng, SEATS);
                let scope = if chance(&mut self.rng, 0.2) {
                    Scope::Character(ch.to_string())
                } else {
                    Scope::Party
                };
                (ch.to_string(), scope, self.ic_line(who))
            }
            _ => ("gm".to_string(), Scope::Party, self.gm_line(who, false)),
        };
        self.in_turn += 1;
        self.produced += 1;
        Episode {
            id: format!("s{}-t{}-e{}", self.session, self.turn, self.in_turn),
            session: self.session,
            turn: self.turn,
            day: Some(self.day),
            timestamp: format!("2026-01-01T{:02}:{:02}:00Z", self.turn % 24, self.in_turn),
            speaker,
            text,
            scope,
        }
    }

    fn gm_line(&mut self, who: usize, introducing: bool) -> String {
        let r = &mut self.rng;
        let npc = &self.npcs[who];
        let name = &npc.name;
        let (role, _) = ROLES[npc.role];
        let place = &self.places[npc.place];
        let other_place = pick(r, &self.places);
        let desc = pick(r, PLACE_DESC);
        let item = &self.items[npc.item];
        let any_item = pick(r, &self.items);
        let faction = FACTIONS[npc.faction];
        let num = pick(r, NUMBERS);
        let adj = pick(r, ADJ);
        if introducing {
            return match below(r, 3) {
                0 => format!("At {place}, {desc}, a {role} named @{{{name}}} waves the crew over."),
                1 => format!(
                    "You dock at {place}. A {role} called @{{{name}}} is waiting by the airlock."
                ),
                _ => format!(
                    "In the crowded corridors of {place}, @{{{name}}}, the {role}, bumps into Kip and apologises."
                ),
            };
        }
        match below(r, 16) {
            0 => format!("{name} the {role} offers {num} credits for the {item}."),
            1 => format!("Over drinks, {name} admits to secretly working for {faction}."),
            2 => format!(
                "Word reaches you that {name} has left {place} and set up shop on {other_place}."
            ),
            3 => format!("{name} warns the crew about {faction} patrols near {other_place}."),
            4 => format!(
                "The {any_item} in the hold starts to whine after the jump to {other_place}."
            ),
            5 => format!("{name} seems {adj} today and keeps asking about the {item}."),
            6 => format!("A coded message on {name}'s datapad reveals ties to {faction}."),
            7 => format!("Customs officers at {other_place} search the Raptor for a {any_item}."),
            8 => format!("{name} will pay {num} credits if you hand over the {item}."),
            9 => format!("A {adj} {role} at {other_place} tries to sell you a used {any_item}."),
            10 => format!("Rumours say the {any_item} trade around {other_place} is drying up."),
            11 => format!("{name} gives the crew a map to a hidden cache near {other_place}."),
            12 => format!("Ships from {faction} shadow the Raptor on the way to {other_place}."),
            _ => pick(r, FILLER_GM).to_string(),
        }
    }

    fn ooc_line(&mut self, who: usize) -> String {
        let r = &mut self.rng;
        let npc = &self.npcs[who];
        let name = &npc.name;
        let item = &self.items[npc.item];
        let place = &self.places[npc.place];
        match below(r, 8) {
            0 => format!("Honestly I don't trust {name}; we should watch our backs."),
            1 => format!("I think {name} is our best lead, we should ask about the {item} again."),
            2 => format!("My plan: keep {name} talking while Zara scans the ship."),
            3 => format!("I say we sell the {item}, we need the money for fuel."),
            4 => format!("Let's head back to {place} before anyone notices."),
            _ => pick(r, FILLER_OOC).to_string(),
        }
    }

    fn ic_line(&mut self, who: usize) -> String {
        let r = &mut self.rng;
        let npc = &self.npcs[who];
        let name = &npc.name;
        let item = &self.items[npc.item];
        match below(r, 6) {
            0 => format!("I hand {name} the {item} and watch their hands."),
            1 => format!("I ask {name} where they were last night."),
            2 => format!("I hide the {item} under the cargo netting."),
            _ => pick(r, FILLER_IC).to_string(),
        }
    }

    /// A realistic mix of questions about this campaign (asked after its last session):
    /// names, paraphrases, time ("last session", "on day N", "N sessions ago") and who said what.
    pub fn questions(&self, n: usize, seed: u64) -> Vec<(String, &'static str)> {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        let met = self.npcs.len().min(self.met().max(1));
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let npc = &self.npcs[below(&mut r, met)];
            let first = npc.name.split(' ').next().unwrap_or_default();
            let (_, role_syn) = ROLES[npc.role];
            let item = &self.items[npc.item];
            let (agent, _) = *pick(&mut r, SEATS);
            let q = match i % 4 {
                0 => (
                    match below(&mut r, 3) {
                        0 => format!("What do we know about {}?", npc.name),
                        1 => format!("Who is {first}?"),
                        _ => format!("Where did we meet {}?", npc.name),
                    },
                    "name",
                ),
                1 => (
                    match below(&mut r, 3) {
                        0 => format!("Which {role_syn} wanted to buy the {item}?"),
                        1 => format!("Who secretly works for {}?", pick(&mut r, FACTIONS)),
                        _ => format!("How much money was offered for the {item}?"),
                    },
                    "paraphrase",
                ),
                2 => (
                    match below(&mut r, 3) {
                        0 => "What happened last session?".to_string(),
                        1 => format!(
                            "What did we learn on day {}?",
                            1 + below(&mut r, self.day as usize)
                        ),
                        _ => format!(
                            "Who did we meet {} sessions ago?",
                            pick(&mut r, &["two", "three", "five"])
                        ),
                    },
                    "temporal",
                ),
                _ => (
                    match below(&mut r, 2) {
                        0 => format!("What did {} say about {first}?", cap(agent)),
                        _ => format!("What did {} think about the {item}?", cap(agent)),
                    },
                    "who_said",
                ),
            };
            out.push(q);
        }
        out
    }
}
