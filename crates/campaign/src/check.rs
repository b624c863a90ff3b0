//! The walk over a campaign file's JSON that collects every problem instead of stopping at one.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::str::FromStr;

use serde_json::{Map, Value};
use troupe_rules::{
    CharacterNumber, PLAYER_GOAL, Role, STANDARD_KIT, ShipProblem, ShipStrength, Style,
};

use crate::prices::{Limit, Price, PriceTable, SpendLimits};
use crate::{
    Campaign, CharacterProfile, CharacterSheet, DEFAULT_SHIP_NAME, GmSeatKind, GmSettings, MISSING,
    MemoryServer, ModelSettings, PROVIDERS, Personality, PlayerProfile, Problem, Scenario, Seat,
    SeatTaker, Ship,
};

const ROOT_FIELDS: &[&str] = &[
    "campaign_name",
    "gm_name",
    "dm_name",
    "party",
    "model",
    "characters",
    "corruption_strength",
    "memory",
    "gm",
    "prices",
    "spend_limit",
    "profiles",
];
const PROFILE_FIELDS: &[&str] = &["pronouns", "class", "ancestry", "level", "backstory"];
const PRICE_FIELDS: &[&str] = &["input", "cached_input", "cache_write", "output"];
const SPEND_LIMIT_FIELDS: &[&str] = &["session", "batch"];
const LIMIT_FIELDS: &[&str] = &["usd", "tokens"];
const GM_FIELDS: &[&str] = &["seat", "model", "scenario"];
const SCENARIO_FIELDS: &[&str] = &["text", "notes"];
const MEMORY_FIELDS: &[&str] = &["extraction", "backend", "url", "graph"];
const PARTY_FIELDS: &[&str] = &["ship_name", "ship_strengths", "ship_problem"];
const MODEL_FIELDS: &[&str] = &[
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "replay_file",
    "context_tokens",
];
const ENTRY_FIELDS: &[&str] = &["player", "character", "seat"];
const TRAITS: [&str; 9] = [
    "analytical_score",
    "risk_tolerance",
    "detail_oriented",
    "emotional_memory",
    "assertiveness",
    "cooperativeness",
    "openness",
    "rule_adherence",
    "roleplay_intensity",
];
const PLAYER_FIELDS: &[&str] = &[
    "agent_id",
    "player_name",
    "player_goal",
    "analytical_score",
    "risk_tolerance",
    "detail_oriented",
    "emotional_memory",
    "assertiveness",
    "cooperativeness",
    "openness",
    "rule_adherence",
    "roleplay_intensity",
];
const CHARACTER_FIELDS: &[&str] = &[
    "character_id",
    "name",
    "style",
    "role",
    "number",
    "character_goal",
    "equipment",
    "speech_patterns",
    "mannerisms",
];
const MAX_SEATS: usize = 4;

const NON_EMPTY: &str = "must be a non-empty string";
const ID_RULE: &str = "must be a non-empty id of lowercase letters, digits, '_' and '-' \
                       (it is used in file names and commands)";
const TRAIT_RULE: &str = "must be a number from 0.0 to 1.0";
const NUMBER_RULE: &str = "must be a whole number from 2 to 5 (2–3 lean FEELINGS, 4–5 lean LASERS)";
const LIST_RULE: &str = "must be a list of non-empty strings, e.g. [\"Multi-tool\"]";

/// Validates the whole file; `Err` holds every problem found.
pub(crate) fn campaign(root: &Value) -> Result<Campaign, Vec<Problem>> {
    let mut c = Checker::default();
    let built = c.root(root);
    match (built, c.problems.is_empty()) {
        (Some(campaign), true) => Ok(campaign),
        (_, false) => Err(c.problems),
        // Every path that yields None reports a problem first; this keeps that promise visible.
        (None, true) => Err(vec![Problem {
            path: "(file)".into(),
            value: render(root),
            allowed: "could not be read as a campaign".into(),
        }]),
    }
}

/// The value as compact JSON, shortened so a huge object does not flood the terminal.
fn render(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        let head: String = text.chars().take(57).collect();
        format!("{head}...")
    } else {
        text
    }
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    // One row of the table at a time: `prev[j]` is the distance from the previous prefix of
    // `a` to `b[..j]`.
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for ((cb, diagonal), above) in b.iter().zip(&prev).zip(prev.iter().skip(1)) {
            let left = cur.last().copied().unwrap_or(0);
            let substitute = diagonal + usize::from(ca != *cb);
            cur.push(substitute.min(above + 1).min(left + 1));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// The closest allowed name, if it is close enough to be a typo or a shortening
/// (`api_key` for `api_key_env`).
fn suggest<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let key = key.to_ascii_lowercase();
    let close = allowed
        .iter()
        .map(|&a| (edit_distance(&key, a), a))
        .filter(|&(d, a)| d <= 2 || d * 4 <= a.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, a)| a);
    close.or_else(|| {
        allowed
            .iter()
            .copied()
            .find(|a| key.len() >= 4 && (a.starts_with(&key) || key.starts_with(a)))
    })
}

fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

#[derive(Default)]
struct Checker {
    problems: Vec<Problem>,
    /// Paths of fields some unknown key was probably meant to be; their absence is the same
    /// mistake, already reported once with the suggestion.
    misspelt: HashSet<String>,
}

impl Checker {
    fn push(&mut self, path: String, value: String, allowed: impl Into<String>) {
        self.problems.push(Problem {
            path,
            value,
            allowed: allowed.into(),
        });
    }

    fn bad(&mut self, path: String, value: &Value, allowed: impl Into<String>) {
        self.push(path, render(value), allowed);
    }

    /// Checks `value` is an object and reports every field not in `fields`.
    fn object<'a>(
        &mut self,
        value: &'a Value,
        path: &str,
        fields: &[&str],
        expected: &str,
    ) -> Option<&'a Map<String, Value>> {
        let Some(map) = value.as_object() else {
            let at = if path.is_empty() { "(file)" } else { path };
            self.bad(at.to_string(), value, expected);
            return None;
        };
        for (key, v) in map {
            if fields.contains(&key.as_str()) {
                continue;
            }
            let hint = match suggest(key, fields) {
                Some(s) => {
                    self.misspelt.insert(join(path, s));
                    format!(" (did you mean \"{s}\"?)")
                }
                None => String::new(),
            };
            let allowed = format!("unknown field{hint}; allowed fields: {}", fields.join(", "));
            self.bad(join(path, key), v, allowed);
        }
        Some(map)
    }

    /// A field that must be present; reports it as missing otherwise.
    fn required<'a>(
        &mut self,
        obj: &'a Map<String, Value>,
        path: &str,
        key: &str,
        rule: &str,
    ) -> Option<&'a Value> {
        let v = obj.get(key);
        if v.is_none() {
            self.missing(join(path, key), rule);
        }
        v
    }

    /// Reports an absent required field, unless a misspelling of it was already reported.
    fn missing(&mut self, path: String, rule: &str) {
        if !self.misspelt.contains(&path) {
            self.push(path, MISSING.to_string(), rule);
        }
    }

    fn string_value(&mut self, v: &Value, path: String) -> Option<String> {
        match v.as_str() {
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            _ => {
                self.bad(path, v, NON_EMPTY);
                None
            }
        }
    }

    fn string(&mut self, obj: &Map<String, Value>, path: &str, key: &str) -> Option<String> {
        let v = self.required(obj, path, key, NON_EMPTY)?;
        self.string_value(v, join(path, key))
    }

    /// An optional string: absent or null gives `Ok(None)`, a bad value gives `Err(())`.
    fn optional_string(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        key: &str,
    ) -> Result<Option<String>, ()> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.string_value(v, join(path, key)).map(Some).ok_or(()),
        }
    }

    fn id(&mut self, obj: &Map<String, Value>, path: &str, key: &str) -> Option<String> {
        let v = self.required(obj, path, key, ID_RULE)?;
        match v.as_str() {
            Some(s) if is_id(s) => Some(s.to_string()),
            _ => {
                self.bad(join(path, key), v, ID_RULE);
                None
            }
        }
    }

    fn word<T: FromStr>(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        key: &str,
        kind: &str,
        allowed: &str,
    ) -> Option<T> {
        let v = self.required(obj, path, key, &format!("required; allowed: {allowed}"))?;
        let parsed = v.as_str().and_then(|s| s.parse().ok());
        if parsed.is_none() {
            self.bad(
                join(path, key),
                v,
                format!("not a {kind}; allowed: {allowed}"),
            );
        }
        parsed
    }

    fn list(&mut self, obj: &Map<String, Value>, path: &str, key: &str) -> Option<Vec<String>> {
        let v = obj.get(key)?;
        let path = join(path, key);
        let Some(items) = v.as_array() else {
            self.bad(path, v, LIST_RULE);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.string_value(item, format!("{path}[{i}]")) {
                Some(s) => out.push(s),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn root(&mut self, root: &Value) -> Option<Campaign> {
        let expected = "must be a JSON object with campaign_name, gm_name, party and characters";
        let obj = self.object(root, "", ROOT_FIELDS, expected)?;

        let name = self.string(obj, "", "campaign_name");
        let gm_name = self.gm_name(obj);
        let ship = match self.required(
            obj,
            "",
            "party",
            "must be an object with ship_strengths and ship_problem",
        ) {
            Some(v) => self.party(v),
            None => None,
        };
        let model = match obj.get("model") {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.model(v, "model").map(Some).ok_or(()),
        };
        let gm = match obj.get("gm") {
            None | Some(Value::Null) => Some(GmSettings::default()),
            Some(v) => self.gm(v),
        };
        let seats = self.characters(obj);
        let corruption_strength = match obj.get("corruption_strength") {
            None | Some(Value::Null) => Some(0.0),
            Some(v) => {
                let x = v.as_f64().filter(|x| (0.0..=1.0).contains(x));
                if x.is_none() {
                    self.bad(
                        "corruption_strength".into(),
                        v,
                        "must be a number from 0.0 (memories never corrupt; the default) to 1.0",
                    );
                }
                x
            }
        };
        let (memory_extraction, memory_server) = match obj.get("memory") {
            None | Some(Value::Null) => (Some(true), Ok(None)),
            Some(v) => (self.memory(v), self.memory_server(v)),
        };

        let prices = match obj.get("prices") {
            None | Some(Value::Null) => Some(PriceTable::default()),
            Some(v) => self.prices(v),
        };
        let spend_limit = match obj.get("spend_limit") {
            None | Some(Value::Null) => Some(SpendLimits::default()),
            Some(v) => self.spend_limit(v),
        };

        Some(Campaign {
            name: name?,
            gm_name: gm_name?,
            ship: ship?,
            seats: seats?,
            model: model.ok()?,
            corruption_strength: corruption_strength?,
            memory_extraction: memory_extraction?,
            memory_server: memory_server.ok()?,
            gm: gm?,
            prices: prices?,
            spend_limit: spend_limit?,
            profiles: self.profiles(obj)?,
        })
    }

    /// `profiles`: an object of character name → profile (every field optional).
    fn profiles(&mut self, obj: &Map<String, Value>) -> Option<BTreeMap<String, CharacterProfile>> {
        let Some(v) = obj.get("profiles").filter(|v| !v.is_null()) else {
            return Some(BTreeMap::new());
        };
        let rule = "must be an object of character name → profile, e.g. {\"Mara\": {\"pronouns\": \"she/her\"}}";
        let Some(map) = v.as_object() else {
            self.bad("profiles".into(), v, rule);
            return None;
        };
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (name, p) in map {
            match self.profile(p, &join("profiles", name)) {
                Some(profile) => {
                    out.insert(name.clone(), profile);
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn profile(&mut self, v: &Value, path: &str) -> Option<CharacterProfile> {
        let expected = "must be an object with any of pronouns, class, ancestry, level, backstory";
        let obj = self.object(v, path, PROFILE_FIELDS, expected)?;
        let pronouns = self.optional_string(obj, path, "pronouns");
        let class = self.optional_string(obj, path, "class");
        let ancestry = self.optional_string(obj, path, "ancestry");
        let backstory = self.optional_string(obj, path, "backstory");
        let level = match obj.get("level") {
            None | Some(Value::Null) => Ok(None),
            Some(l) => match l.as_u64().filter(|n| (1..=30).contains(n)) {
                Some(n) => u32::try_from(n).map(Some).map_err(|_| ()),
                None => {
                    self.bad(
                        join(path, "level"),
                        l,
                        "must be a whole number from 1 to 30",
                    );
                    Err(())
                }
            },
        };
        Some(CharacterProfile {
            pronouns: pronouns.ok()?,
            class: class.ok()?,
            ancestry: ancestry.ok()?,
            level: level.ok()?,
            backstory: backstory.ok()?,
        })
    }

    /// `prices`: model-name prefix → dollars per million tokens.
    fn prices(&mut self, v: &Value) -> Option<PriceTable> {
        let Some(map) = v.as_object() else {
            self.bad(
                "prices".into(),
                v,
                "must be an object from model name (or name prefix) to prices, e.g. {\"gpt-4o-mini\": {\"input\": 0.15, \"cached_input\": 0.075, \"output\": 0.60}}",
            );
            return None;
        };
        let mut table = PriceTable::default();
        let mut ok = true;
        for (model, price) in map {
            let path = format!("prices[\"{model}\"]");
            if model.trim().is_empty() {
                self.bad("prices".into(), v, "a model name must not be empty");
                ok = false;
                continue;
            }
            match self.price(price, &path) {
                Some(p) => {
                    table.overrides.insert(model.clone(), p);
                }
                None => ok = false,
            }
        }
        ok.then_some(table)
    }

    fn price(&mut self, v: &Value, path: &str) -> Option<Price> {
        let obj = self.object(
            v,
            path,
            PRICE_FIELDS,
            "must be an object with input and output (and optional cached_input, cache_write): US dollars per million tokens",
        )?;
        let input = self.dollars(obj, path, "input", true);
        let output = self.dollars(obj, path, "output", true);
        let cached = self.dollars(obj, path, "cached_input", false);
        let write = self.dollars(obj, path, "cache_write", false);
        let (input, output) = (input??, output??);
        Some(Price {
            input,
            cached_input: cached?.unwrap_or(input),
            cache_write: write?.unwrap_or(input),
            output,
        })
    }

    /// A price field: `Some(Some(x))` when valid, `Some(None)` when absent and optional,
    /// `None` when bad or missing.
    fn dollars(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        key: &str,
        required: bool,
    ) -> Option<Option<f64>> {
        const RULE: &str =
            "must be a number of US dollars per million tokens, 0 or more (e.g. 0.15)";
        let v = match obj.get(key) {
            None | Some(Value::Null) if required => {
                self.missing(join(path, key), &format!("required; {RULE}"));
                return None;
            }
            None | Some(Value::Null) => return Some(None),
            Some(v) => v,
        };
        match v.as_f64().filter(|x| x.is_finite() && *x >= 0.0) {
            Some(x) => Some(Some(x)),
            None => {
                self.bad(join(path, key), v, RULE);
                None
            }
        }
    }

    /// `spend_limit`: `session` and `batch`, each in `usd` and/or `tokens`.
    fn spend_limit(&mut self, v: &Value) -> Option<SpendLimits> {
        let obj = self.object(
            v,
            "spend_limit",
            SPEND_LIMIT_FIELDS,
            "must be an object with session and/or batch, e.g. {\"session\": {\"usd\": 2.50}, \"batch\": {\"tokens\": 2000000}}",
        )?;
        let mut limit = |key: &str| match obj.get(key) {
            None | Some(Value::Null) => Some(Limit::default()),
            Some(l) => self.limit(l, &join("spend_limit", key)),
        };
        let session = limit("session");
        let batch = limit("batch");
        Some(SpendLimits {
            session: session?,
            batch: batch?,
        })
    }

    fn limit(&mut self, v: &Value, path: &str) -> Option<Limit> {
        let obj = self.object(
            v,
            path,
            LIMIT_FIELDS,
            "must be an object with usd (dollars) and/or tokens (input plus output)",
        )?;
        let usd = match obj.get("usd") {
            None | Some(Value::Null) => Some(None),
            Some(x) => match x.as_f64().filter(|d| d.is_finite() && *d > 0.0) {
                Some(d) => Some(Some(d)),
                None => {
                    self.bad(
                        join(path, "usd"),
                        x,
                        "must be a number of US dollars above 0, e.g. 2.50",
                    );
                    None
                }
            },
        };
        let tokens = match obj.get("tokens") {
            None | Some(Value::Null) => Some(None),
            Some(x) => match x.as_u64().filter(|&n| n > 0) {
                Some(n) => Some(Some(n)),
                None => {
                    self.bad(
                        join(path, "tokens"),
                        x,
                        "must be a whole number of tokens above 0, e.g. 200000",
                    );
                    None
                }
            },
        };
        Some(Limit {
            usd: usd?,
            tokens: tokens?,
        })
    }

    /// The `gm` block: who runs the game, with which model, from which scenario.
    fn gm(&mut self, v: &Value) -> Option<GmSettings> {
        let obj = self.object(
            v,
            "gm",
            GM_FIELDS,
            "must be an object with seat (\"person\" or \"ai\") and optional model and scenario",
        )?;
        let seat = match obj.get("seat") {
            None | Some(Value::Null) => Some(GmSeatKind::Person),
            Some(s) => match s.as_str().map(str::trim) {
                Some("person") => Some(GmSeatKind::Person),
                Some("ai") => Some(GmSeatKind::Ai),
                _ => {
                    self.bad(
                        "gm.seat".into(),
                        s,
                        "must be \"person\" (you run the game; the default) or \"ai\" (an AI game master)",
                    );
                    None
                }
            },
        };
        let model = match obj.get("model") {
            None | Some(Value::Null) => Ok(None),
            Some(m) => self.model(m, "gm.model").map(Some).ok_or(()),
        };
        let scenario = match obj.get("scenario") {
            None | Some(Value::Null) => Ok(None),
            Some(s) => self.scenario(s).map(Some).ok_or(()),
        };
        Some(GmSettings {
            seat: seat?,
            model: model.ok()?,
            scenario: scenario.ok()?,
        })
    }

    /// `gm.scenario`: the adventure's premise, and the GM's private notes.
    fn scenario(&mut self, v: &Value) -> Option<Scenario> {
        let path = "gm.scenario";
        let obj = self.object(
            v,
            path,
            SCENARIO_FIELDS,
            "must be an object with text (the premise) and optional notes (the GM's secrets)",
        )?;
        let text = self.string(obj, path, "text");
        let notes = match obj.get("notes") {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(_) => self.list(obj, path, "notes"),
        };
        Some(Scenario {
            text: text?,
            notes: notes?,
        })
    }

    /// The `memory` block: for now only whether facts are extracted with the model.
    fn memory(&mut self, v: &Value) -> Option<bool> {
        let obj = self.object(
            v,
            "memory",
            MEMORY_FIELDS,
            "must be an object with optional extraction (true or false), backend, url and graph",
        )?;
        match obj.get("extraction") {
            None | Some(Value::Null) => Some(true),
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.bad(
                    "memory.extraction".into(),
                    other,
                    "must be true (draw facts from free text with the model; the default) or false (store each episode as one fact)",
                );
                None
            }
        }
    }

    /// Where the memory lives: `backend` sqlite (the default: campaign.db), or falkordb or
    /// neo4j with the server's `url` and an optional `graph`.
    fn memory_server(&mut self, v: &Value) -> Result<Option<MemoryServer>, ()> {
        let Some(obj) = v.as_object() else {
            return Ok(None);
        };
        let backend = self.optional_string(obj, "memory", "backend")?;
        let url = self.optional_string(obj, "memory", "url")?;
        let graph = self.optional_string(obj, "memory", "graph")?;
        match backend.as_deref() {
            None | Some("sqlite") if url.is_none() => Ok(None),
            Some(b @ ("falkordb" | "neo4j")) => match url {
                Some(url) => Ok(Some(MemoryServer {
                    backend: b.to_string(),
                    url,
                    graph,
                })),
                None => {
                    self.bad("memory.url".into(), &Value::Null, "is required with backend falkordb or neo4j: the server's address, e.g. redis://localhost:6379 or http://localhost:7474");
                    Err(())
                }
            },
            _ => {
                let v = obj.get("backend").unwrap_or(&Value::Null);
                self.bad(
                    "memory.backend".into(),
                    v,
                    "must be sqlite (campaign.db; the default), falkordb or neo4j (with url)",
                );
                Err(())
            }
        }
    }

    /// `gm_name`, or its alias `dm_name` from the original system's files; not both.
    fn gm_name(&mut self, obj: &Map<String, Value>) -> Option<String> {
        match (obj.get("gm_name"), obj.get("dm_name")) {
            (Some(gm), None) => self.string_value(gm, "gm_name".into()),
            (None, Some(dm)) => self.string_value(dm, "dm_name".into()),
            (Some(_), Some(dm)) => {
                self.bad(
                    "dm_name".into(),
                    dm,
                    "dm_name is another name for gm_name, and gm_name is also given; keep one",
                );
                None
            }
            (None, None) => {
                if !self.misspelt.contains("dm_name") {
                    self.missing(
                        "gm_name".into(),
                        "must be a non-empty string: the GM's name (dm_name is accepted too)",
                    );
                }
                None
            }
        }
    }

    fn party(&mut self, v: &Value) -> Option<Ship> {
        let path = "party";
        let obj = self.object(
            v,
            path,
            PARTY_FIELDS,
            "must be an object with ship_name, ship_strengths and ship_problem",
        )?;
        let name = self.optional_string(obj, path, "ship_name");
        let strengths = self.strengths(obj);
        let problem = self.word(
            obj,
            path,
            "ship_problem",
            "ship problem",
            &ShipProblem::allowed(),
        );
        Some(Ship {
            name: name.ok()?.unwrap_or_else(|| DEFAULT_SHIP_NAME.to_string()),
            strengths: strengths?,
            problem: problem?,
        })
    }

    fn strengths(&mut self, obj: &Map<String, Value>) -> Option<Vec<ShipStrength>> {
        let path = "party.ship_strengths";
        let allowed = ShipStrength::allowed();
        let count_rule =
            format!("must list exactly 2 different ship strengths; allowed: {allowed}");
        let v = self.required(obj, "party", "ship_strengths", &count_rule)?;
        let Some(items) = v.as_array() else {
            self.bad(path.into(), v, count_rule);
            return None;
        };
        let mut ok = true;
        if items.len() != 2 {
            self.bad(path.into(), v, count_rule);
            ok = false;
        }
        let mut seen: Vec<(ShipStrength, usize)> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = format!("{path}[{i}]");
            match item.as_str().and_then(|s| s.parse::<ShipStrength>().ok()) {
                None => {
                    self.bad(at, item, format!("not a ship strength; allowed: {allowed}"));
                    ok = false;
                }
                Some(s) => match seen.iter().find(|(t, _)| *t == s) {
                    Some((_, first)) => {
                        self.bad(
                            at,
                            item,
                            format!(
                                "same as ship_strengths[{first}]; the two strengths must differ; allowed: {allowed}"
                            ),
                        );
                        ok = false;
                    }
                    None => seen.push((s, i)),
                },
            }
        }
        ok.then(|| seen.into_iter().map(|(s, _)| s).collect())
    }

    fn model(&mut self, v: &Value, path: &str) -> Option<ModelSettings> {
        let obj = self.object(
            v,
            path,
            MODEL_FIELDS,
            "must be an object with provider and optional model, base_url, api_key_env, replay_file, context_tokens",
        )?;
        let providers = PROVIDERS.join(", ");
        let provider = self
            .required(
                obj,
                path,
                "provider",
                &format!("required; allowed: {providers}"),
            )
            .and_then(|p| {
                let found = p
                    .as_str()
                    .map(|s| s.trim().to_ascii_lowercase())
                    .filter(|s| PROVIDERS.contains(&s.as_str()));
                if found.is_none() {
                    self.bad(
                        join(path, "provider"),
                        p,
                        format!("not a provider; allowed: {providers}"),
                    );
                }
                found
            });
        let model = self.optional_string(obj, path, "model");
        let base_url = self.optional_string(obj, path, "base_url");
        let api_key_env = self.optional_string(obj, path, "api_key_env");
        let replay_file = self.optional_string(obj, path, "replay_file");
        let context_tokens = match obj.get("context_tokens") {
            None | Some(Value::Null) => Ok(None),
            Some(t) => match t
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|&n| n > 0)
            {
                Some(n) => Ok(Some(n)),
                None => {
                    self.bad(
                        join(path, "context_tokens"),
                        t,
                        "must be a positive whole number of tokens, e.g. 8192",
                    );
                    Err(())
                }
            },
        };
        Some(ModelSettings {
            provider: provider?,
            model: model.ok()?,
            base_url: base_url.ok()?,
            api_key_env: api_key_env.ok()?,
            replay_file: replay_file.ok()?,
            context_tokens: context_tokens.ok()?,
        })
    }

    fn characters(&mut self, obj: &Map<String, Value>) -> Option<Vec<Seat>> {
        let count_rule = format!(
            "must list 1 to {MAX_SEATS} entries, each {{\"player\": {{...}}, \"character\": {{...}}}}"
        );
        let v = self.required(obj, "", "characters", &count_rule)?;
        let Some(items) = v.as_array() else {
            self.bad("characters".into(), v, count_rule);
            return None;
        };
        let mut ok = true;
        if items.is_empty() || items.len() > MAX_SEATS {
            self.bad("characters".into(), v, count_rule);
            ok = false;
        }
        let mut seats = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match self.seat(item, &format!("characters[{i}]")) {
                Some(s) => seats.push(s),
                None => ok = false,
            }
        }
        ok &= self.unique(items, "player", "agent_id");
        ok &= self.unique(items, "character", "character_id");
        ok.then_some(seats)
    }

    /// Reports every well-formed id that repeats an earlier one, even in entries with other
    /// problems; true if none repeat.
    fn unique(&mut self, items: &[Value], layer: &str, key: &str) -> bool {
        let mut first: HashMap<&str, usize> = HashMap::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let id = item
                .get(layer)
                .and_then(|l| l.get(key))
                .and_then(Value::as_str);
            let Some(id) = id.filter(|s| is_id(s)) else {
                continue;
            };
            match first.get(id) {
                Some(&j) => {
                    self.push(
                        format!("characters[{i}].{layer}.{key}"),
                        render(&Value::from(id)),
                        format!("already used by characters[{j}].{layer}.{key}; each {key} must be unique"),
                    );
                    ok = false;
                }
                None => {
                    first.insert(id, i);
                }
            }
        }
        ok
    }

    fn seat(&mut self, v: &Value, path: &str) -> Option<Seat> {
        let obj = self.object(
            v,
            path,
            ENTRY_FIELDS,
            "must be an object with \"player\" and \"character\"",
        )?;
        let player = self
            .required(
                obj,
                path,
                "player",
                "must be an object: the AI player's profile",
            )
            .and_then(|p| self.player(p, &join(path, "player")));
        let character = self
            .required(
                obj,
                path,
                "character",
                "must be an object: the character sheet",
            )
            .and_then(|c| self.character(c, &join(path, "character")));
        let taken_by = match obj.get("seat") {
            None | Some(Value::Null) => Some(SeatTaker::Ai),
            Some(s) => match s.as_str().map(str::trim) {
                Some("ai") => Some(SeatTaker::Ai),
                Some("human") => Some(SeatTaker::Human),
                _ => {
                    self.bad(
                        join(path, "seat"),
                        s,
                        "must be \"ai\" (an AI plays this character; the default) or \"human\" (a person at the terminal)",
                    );
                    None
                }
            },
        };
        Some(Seat {
            player: player?,
            character: character?,
            taken_by: taken_by?,
        })
    }

    fn player(&mut self, v: &Value, path: &str) -> Option<PlayerProfile> {
        let obj = self.object(
            v,
            path,
            PLAYER_FIELDS,
            "must be an object with agent_id, player_name and the nine personality traits",
        )?;
        let agent_id = self.id(obj, path, "agent_id");
        let name = self.string(obj, path, "player_name");
        let goal = self.optional_string(obj, path, "player_goal");
        let mut values = [0.0; 9];
        let mut traits_ok = true;
        for (slot, key) in values.iter_mut().zip(TRAITS) {
            match self.trait_value(obj, path, key) {
                Some(x) => *slot = x,
                None => traits_ok = false,
            }
        }
        let [
            analytical_score,
            risk_tolerance,
            detail_oriented,
            emotional_memory,
            assertiveness,
            cooperativeness,
            openness,
            rule_adherence,
            roleplay_intensity,
        ] = values;
        traits_ok.then_some(())?;
        Some(PlayerProfile {
            agent_id: agent_id?,
            name: name?,
            player_goal: goal.ok()?.unwrap_or_else(|| PLAYER_GOAL.to_string()),
            traits: Personality {
                analytical_score,
                risk_tolerance,
                detail_oriented,
                emotional_memory,
                assertiveness,
                cooperativeness,
                openness,
                rule_adherence,
                roleplay_intensity,
            },
        })
    }

    fn trait_value(&mut self, obj: &Map<String, Value>, path: &str, key: &str) -> Option<f64> {
        let v = self.required(obj, path, key, TRAIT_RULE)?;
        let x = v.as_f64().filter(|x| (0.0..=1.0).contains(x));
        if x.is_none() {
            self.bad(join(path, key), v, TRAIT_RULE);
        }
        x
    }

    fn character(&mut self, v: &Value, path: &str) -> Option<CharacterSheet> {
        let obj = self.object(
            v,
            path,
            CHARACTER_FIELDS,
            "must be an object with character_id, name, style, role, number and character_goal",
        )?;
        let character_id = self.id(obj, path, "character_id");
        let name = self.string(obj, path, "name");
        let style = self.word::<Style>(obj, path, "style", "style", &Style::allowed());
        let role = self.word::<Role>(obj, path, "role", "role", &Role::allowed());
        let number = self.number(obj, path);
        let character_goal = self.string(obj, path, "character_goal");
        // An absent list is a default; a present but bad one has been reported.
        let equipment = self.list(obj, path, "equipment");
        let equipment_ok = equipment.is_some() || !obj.contains_key("equipment");
        let speech = self.list(obj, path, "speech_patterns");
        let speech_ok = speech.is_some() || !obj.contains_key("speech_patterns");
        let mannerisms = self.list(obj, path, "mannerisms");
        let mannerisms_ok = mannerisms.is_some() || !obj.contains_key("mannerisms");
        (equipment_ok && speech_ok && mannerisms_ok).then_some(())?;
        Some(CharacterSheet {
            character_id: character_id?,
            name: name?,
            style: style?,
            role: role?,
            number: number?,
            character_goal: character_goal?,
            equipment: equipment
                .unwrap_or_else(|| STANDARD_KIT.iter().map(|s| s.to_string()).collect()),
            speech_patterns: speech.unwrap_or_default(),
            mannerisms: mannerisms.unwrap_or_default(),
        })
    }

    fn number(&mut self, obj: &Map<String, Value>, path: &str) -> Option<CharacterNumber> {
        let v = self.required(obj, path, "number", NUMBER_RULE)?;
        // 4.0 is accepted as 4: JSON does not distinguish the two for a person writing it.
        let n = v
            .as_f64()
            .filter(|x| x.fract() == 0.0 && (2.0..=5.0).contains(x))
            .and_then(|x| CharacterNumber::new(x as u8).ok());
        if n.is_none() {
            self.bad(join(path, "number"), v, NUMBER_RULE);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_catch_typos_but_not_unrelated_words() {
        assert_eq!(
            suggest("risk_tolerence", PLAYER_FIELDS),
            Some("risk_tolerance")
        );
        assert_eq!(suggest("Number", CHARACTER_FIELDS), Some("number"));
        assert_eq!(suggest("api_key", MODEL_FIELDS), Some("api_key_env"));
        assert_eq!(
            suggest("corruption_strenght", ROOT_FIELDS),
            Some("corruption_strength")
        );
        assert_eq!(suggest("weather", ROOT_FIELDS), None);
    }

    #[test]
    fn ids_are_lowercase_file_safe() {
        assert!(is_id("agent_alex-01"));
        assert!(!is_id("Alex"));
        assert!(!is_id("a b"));
        assert!(!is_id("../x"));
        assert!(!is_id(""));
    }
}
