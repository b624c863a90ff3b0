//! The word pools a template draws from. Memory answers come from pools whose words never
//! appear in any template's fixed text, so a question's answer cannot be in its own session.

pub const AGENTS: &[(&str, &str)] = &[
    ("alex", "Alex"),
    ("sam", "Sam"),
    ("jo", "Jo"),
    ("kai", "Kai"),
    ("mira", "Mira"),
    ("theo", "Theo"),
    ("noor", "Noor"),
    ("rui", "Rui"),
];

pub const CHARACTERS: &[&str] = &[
    "Zara-7",
    "Rex Vantor",
    "Pell Okoye",
    "Juno Hask",
    "Tamsin Rook",
    "Orrin Vale",
    "Dax Imari",
    "Lio Brand",
    "Saffi Kerr",
    "Quill Marlow",
    "Bex Tarn",
    "Ivo Sund",
];

pub const STYLES: &[&str] = &[
    "Alien",
    "Android",
    "Dangerous",
    "Heroic",
    "Hot-Shot",
    "Intrepid",
    "Savvy",
];

pub const ROLES: &[&str] = &[
    "Doctor",
    "Envoy",
    "Engineer",
    "Explorer",
    "Pilot",
    "Scientist",
    "Soldier",
];

pub const SHIPS: &[&str] = &[
    "The Raptor",
    "The Wren",
    "The Long Odds",
    "The Cinder Moth",
    "The Sixth Chance",
];

/// People the GM names: brokers, officers, saboteurs. Memory answers are drawn from here.
pub const NPCS: &[&str] = &[
    "Ilsa Marrow",
    "Tobin Quade",
    "Vesna Krol",
    "Harlan Oduya",
    "Mireille Sato",
    "Corvin Blake",
    "Yusra Fenn",
    "Anselm Dray",
    "Petra Lusk",
    "Okonkwo Reyes",
    "Livia Starr",
    "Bram Tolliver",
    "Nadia Voss",
    "Ezra Kincaid",
    "Sunniva Holt",
    "Caspian Idris",
];

/// Places: memory answers too.
pub const PLACES: &[&str] = &[
    "Port Cinder",
    "Glass Reach",
    "Tethys Yard",
    "Kessler Drift",
    "Amberfall",
    "Veyra Station",
    "Orison Belt",
    "Hollowmere",
    "Saltgate",
    "Brightwater Dock",
    "Nadir Spire",
    "Corvus Gate",
];

/// Things someone holds or promises: memory answers too.
pub const THINGS: &[&str] = &[
    "blue coral",
    "a brass astrolabe",
    "the jade keycard",
    "a crate of tanglefruit",
    "the cobalt ledger",
    "a silver music box",
    "the obsidian idol",
    "a jar of ember moss",
    "the quartz compass",
    "a tin of saffron tea",
];

pub const FACTIONS: &[&str] = &[
    "Consortium",
    "Hegemony",
    "Void Syndicate",
    "Crimson Guild",
    "Meridian Cartel",
    "Tallow League",
];

/// Devices a saboteur could rig: secrets' content words.
pub const DEVICES: &[&str] = &[
    "reactor coolant valves",
    "docking clamps",
    "oxygen scrubbers",
    "navigation beacon",
    "gravity plating",
    "airlock seals",
];

pub const CODEWORDS: &[&str] = &[
    "nightjar",
    "copperhead",
    "lodestar",
    "mandrake",
    "whitethorn",
    "kestrel",
    "harrowgate",
    "bellwether",
];
