//! `troupe encounter check`: an encounter spec's YAML (seed 003's keys) walked once, every
//! mistake collected with its line and column, and the [`Spec`] built when there are none.
//!
//! The walk is one function per section of the file; cross-references (placeholders, name keys)
//! are checked last, once every key is known.

use std::collections::BTreeMap;

use troupe_scene::Problem;
use troupe_scene::yaml::{Loc, Node, Report, Value, join, parse};

use crate::names;
use crate::spec::{
    Goal, Goals, NameSource, Npc, Randomizable, RulesKind, Setting, SkillCheck, Spec,
};
use crate::tools::{ENCOUNTER_TOOLS, SCENE_TOOLS};

const ROOT: &[&str] = &[
    "encounterId",
    "title",
    "tone",
    "rules",
    "setting",
    "openingNarrative",
    "npcs",
    "goals",
    "sportsmanshipRules",
    "skillChecks",
    "randomizable",
    "dmNotes",
    "gmNotes",
    "tools",
    "scene",
];
const SETTING: &[&str] = &["location", "mood", "ambientNpcs"];
const NPC: &[&str] = &["id", "name", "nameKey", "role", "persona", "memoryKey"];
const GOALS: &[&str] = &["hidden", "primary", "secondary"];
const GOAL: &[&str] = &["id", "label"];
const RANDOMIZABLE: &[&str] = &["key", "source", "category", "query", "fallback"];
/// Seed 003: 1 to 5 NPCs.
const MAX_NPCS: usize = 5;
/// A difficulty class: d20 checks top out well below 40; a 0 or a 99 is a typo.
const DC_RANGE: (i64, i64) = (1, 40);

/// Check an encounter spec's text: the spec, or every problem in it, in file order.
pub fn check(text: &str) -> Result<Spec, Vec<Problem>> {
    let root = parse(text).map_err(|(at, message)| {
        let first = message.lines().next().unwrap_or_default();
        vec![problem(at, "(file)", format!("not valid YAML: {first}"))]
    })?;
    if !matches!(root.value, Value::Map(_) | Value::Null) {
        let message = format!(
            "an encounter spec is a mapping of keys ({}, …), not {}",
            quoted(ROOT.get(..3).unwrap_or_default()),
            root.value.describe()
        );
        return Err(vec![problem(root.at, "(file)", message)]);
    }
    let mut c = Checker {
        text,
        problems: Vec::new(),
    };
    let spec = c.spec(&root);
    c.cross_check(&spec, &root);
    if c.problems.is_empty() {
        Ok(spec)
    } else {
        c.problems.sort_by_key(|p| (p.line, p.column));
        Err(c.problems)
    }
}

fn problem(at: Loc, path: &str, message: impl Into<String>) -> Problem {
    Problem {
        line: at.line,
        column: at.column,
        path: path.to_string(),
        message: message.into(),
    }
}

/// A key a `{{placeholder}}` can name: not blank, no spaces, no braces.
fn is_key(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c == '{' || c == '}')
}

fn quoted(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

struct Checker<'t> {
    /// The file's text, to find where a key (not its value) was written.
    text: &'t str,
    problems: Vec<Problem>,
}

impl Report for Checker<'_> {
    fn bad(&mut self, at: Loc, path: &str, message: impl Into<String>) {
        self.problems.push(problem(at, path, message));
    }
}

impl Checker<'_> {
    /// The entries of a mapping, reporting keys outside `allowed` where the key was written.
    fn map<'a>(&mut self, node: &'a Node, path: &str, allowed: &[&str]) -> &'a [(String, Node)] {
        match &node.value {
            Value::Map(entries) => {
                for (k, v) in entries {
                    if !allowed.contains(&k.as_str()) {
                        let message =
                            format!("unknown key `{k}`; expected one of {}", quoted(allowed));
                        self.bad(self.key_at(k, v), &join(path, k), message);
                    }
                }
                entries
            }
            Value::Null => &[],
            other => {
                let message = format!("must be a mapping of keys, not {}", other.describe());
                self.bad(node.at, path, message);
                &[]
            }
        }
    }

    /// Checks a section's keys; false when it is not a mapping at all (reported once), so its
    /// fields are not each reported missing as well.
    fn section(&mut self, node: &Node, path: &str, allowed: &[&str]) -> bool {
        self.map(node, path, allowed);
        matches!(node.value, Value::Map(_) | Value::Null)
    }

    /// Text, or `None` when absent (reported as missing when `required`) or not text.
    fn text(
        &mut self,
        node: Option<&Node>,
        parent: Loc,
        path: &str,
        required: bool,
    ) -> Option<String> {
        match node.map(|n| (&n.value, n.at)) {
            Some((Value::Str(s), at)) if s.trim().is_empty() => {
                self.bad(at, path, "must not be empty");
                None
            }
            Some((Value::Str(s), _)) => Some(s.clone()),
            Some((Value::Int(i), _)) => Some(i.to_string()),
            None | Some((Value::Null, _)) => {
                if required {
                    self.bad(parent, path, "is missing");
                }
                None
            }
            Some((other, at)) => {
                let message = format!(
                    "must be text, not {} (put it in quotes if you mean the words)",
                    other.describe()
                );
                self.bad(at, path, message);
                None
            }
        }
    }

    /// A required text field of `node`: empty when missing (and reported).
    fn field(&mut self, node: &Node, key: &str, path: &str) -> String {
        self.text(node.get(key), node.at, &join(path, key), true)
            .unwrap_or_default()
    }

    fn optional(&mut self, node: &Node, key: &str, path: &str) -> Option<String> {
        self.text(node.get(key), node.at, &join(path, key), false)
    }

    fn texts(&mut self, node: Option<&Node>, path: &str) -> Vec<String> {
        let items = self.list(node, path);
        items
            .iter()
            .enumerate()
            .filter_map(|(i, n)| self.text(Some(n), n.at, &format!("{path}[{i}]"), true))
            .collect()
    }

    /// A key's own line and column: the text just before its value, read backwards, up to the key
    /// followed by `:` or a closing quote. The value's place when that cannot be found.
    fn key_at(&self, key: &str, value: &Node) -> Loc {
        let prefix = self
            .text
            .get(..offset_of(self.text, value.at))
            .unwrap_or_default();
        prefix
            .rmatch_indices(key)
            .find(|(i, _)| {
                let after = prefix.get(i + key.len()..).unwrap_or_default();
                after.starts_with([':', '"', '\''])
            })
            .map_or(value.at, |(i, _)| loc_of(self.text, i))
    }

    /// Where the `nth` occurrence of `needle` at or after `from` was written, if it was.
    fn find_after(&self, from: Loc, needle: &str, nth: usize) -> Option<Loc> {
        let start = offset_of(self.text, from);
        let rest = self.text.get(start..)?;
        let (i, _) = rest.match_indices(needle).nth(nth)?;
        Some(loc_of(self.text, start + i))
    }
}

/// The byte offset of a 1-based line and (character) column in `text`; the end when past it.
fn offset_of(text: &str, at: Loc) -> usize {
    let mut line = 1;
    let mut column = 1;
    for (i, c) in text.char_indices() {
        if line == at.line && column == at.column {
            return i;
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    text.len()
}

/// The 1-based line and character column of byte offset `offset` (a char boundary) in `text`.
fn loc_of(text: &str, offset: usize) -> Loc {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_text = before.get(line_start..).unwrap_or_default();
    Loc {
        line: 1 + before.matches('\n').count() as u64,
        column: 1 + line_text.chars().count() as u64,
    }
}

/// The sections of the file, one function each.
impl Checker<'_> {
    fn spec(&mut self, root: &Node) -> Spec {
        self.map(root, "", ROOT);
        Spec {
            id: self.field(root, "encounterId", ""),
            title: self.field(root, "title", ""),
            tone: self.optional(root, "tone", ""),
            rules: self.rules(root.get("rules")),
            setting: self.setting(root),
            opening: self.field(root, "openingNarrative", ""),
            npcs: self.npcs(root),
            goals: self.goals(root),
            sportsmanship: self.texts(root.get("sportsmanshipRules"), "sportsmanshipRules"),
            checks: self.skill_checks(root.get("skillChecks")),
            randomizable: self.randomizables(root.get("randomizable")),
            gm_notes: self.gm_notes(root),
            tools: self.tools(root),
            scene: self.optional(root, "scene", ""),
        }
    }

    fn rules(&mut self, node: Option<&Node>) -> RulesKind {
        let at = node.map(|n| n.at).unwrap_or_default();
        match self.text(node, at, "rules", false).as_deref() {
            None | Some("d20") => RulesKind::D20,
            Some("lasers-feelings") => RulesKind::LasersFeelings,
            Some(other) => {
                let message = format!("must be `d20` or `lasers-feelings`, not `{other}`");
                self.bad(at, "rules", message);
                RulesKind::D20
            }
        }
    }

    fn setting(&mut self, root: &Node) -> Setting {
        let Some(node) = root.get("setting") else {
            self.bad(
                root.at,
                "setting",
                "is missing (location, mood, ambientNpcs)",
            );
            return empty_setting();
        };
        if !self.section(node, "setting", SETTING) {
            return empty_setting();
        }
        Setting {
            location: self.field(node, "location", "setting"),
            mood: self.field(node, "mood", "setting"),
            ambient_npcs: self.field(node, "ambientNpcs", "setting"),
        }
    }

    fn npcs(&mut self, root: &Node) -> Vec<Npc> {
        let items = self.list(root.get("npcs"), "npcs");
        if items.is_empty() {
            let at = root.get("npcs").map_or(root.at, |n| n.at);
            self.bad(at, "npcs", format!("needs 1 to {MAX_NPCS} NPCs"));
        }
        if let Some(extra) = items.get(MAX_NPCS) {
            let message = format!("at most {MAX_NPCS} NPCs; this is number {}", MAX_NPCS + 1);
            self.bad(extra.at, &format!("npcs[{MAX_NPCS}]"), message);
        }
        let mut seen = BTreeMap::new();
        let mut out = Vec::new();
        for (i, node) in items.iter().enumerate() {
            let path = format!("npcs[{i}]");
            let npc = self.npc(node, &path);
            self.unique(&mut seen, &npc.id, node.get("id"), &join(&path, "id"));
            out.push(npc);
        }
        out
    }

    fn npc(&mut self, node: &Node, path: &str) -> Npc {
        if !self.section(node, path, NPC) {
            return Npc {
                id: String::new(),
                name: String::new(),
                name_key: None,
                role: String::new(),
                persona: String::new(),
                memory_key: None,
            };
        }
        let name_key = self.optional(node, "nameKey", path);
        if let (Some(key), Some(at)) = (&name_key, node.get("nameKey"))
            && !is_key(key)
        {
            self.bad(
                at.at,
                &join(path, "nameKey"),
                "must be one word with no braces",
            );
        }
        Npc {
            id: self.field(node, "id", path),
            name: self.field(node, "name", path),
            name_key,
            role: self.field(node, "role", path),
            persona: self.field(node, "persona", path),
            memory_key: self.optional(node, "memoryKey", path),
        }
    }

    /// Reports `id` when `seen` already has it; remembers where it was first used.
    fn unique(
        &mut self,
        seen: &mut BTreeMap<String, String>,
        id: &str,
        node: Option<&Node>,
        path: &str,
    ) {
        let (Some(node), false) = (node, id.is_empty()) else {
            return;
        };
        match seen.get(id) {
            Some(first) => {
                let message = format!("`{id}` is already used at {first}");
                self.bad(node.at, path, message);
            }
            None => {
                seen.insert(id.to_string(), path.to_string());
            }
        }
    }

    fn goals(&mut self, root: &Node) -> Goals {
        let Some(node) = root.get("goals") else {
            self.bad(root.at, "goals", "is missing (primary: at least one goal)");
            return Goals {
                hidden: true,
                primary: Vec::new(),
                secondary: Vec::new(),
            };
        };
        if !self.section(node, "goals", GOALS) {
            return Goals {
                hidden: true,
                primary: Vec::new(),
                secondary: Vec::new(),
            };
        }
        let mut seen = BTreeMap::new();
        let primary = self.goal_list(node, "primary", &mut seen);
        if primary.is_empty() {
            let at = node.get("primary").map_or(node.at, |n| n.at);
            self.bad(at, "goals.primary", "needs at least one goal");
        }
        Goals {
            hidden: self.flag(node.get("hidden"), "goals.hidden", true),
            primary,
            secondary: self.goal_list(node, "secondary", &mut seen),
        }
    }

    /// `goals.<which>`; goal ids are unique across primary and secondary (`seen` spans both).
    fn goal_list(
        &mut self,
        goals: &Node,
        which: &str,
        seen: &mut BTreeMap<String, String>,
    ) -> Vec<Goal> {
        let list_path = join("goals", which);
        let items = self.list(goals.get(which), &list_path);
        let mut out = Vec::new();
        for (i, node) in items.iter().enumerate() {
            let path = format!("{list_path}[{i}]");
            if !self.section(node, &path, GOAL) {
                continue;
            }
            let goal = Goal {
                id: self.field(node, "id", &path),
                label: self.field(node, "label", &path),
            };
            self.unique(seen, &goal.id, node.get("id"), &join(&path, "id"));
            out.push(goal);
        }
        out
    }

    fn gm_notes(&mut self, root: &Node) -> Option<String> {
        let dm = self.optional(root, "dmNotes", "");
        let gm = self.optional(root, "gmNotes", "");
        if let (Some(_), Some(_), Some(node)) = (&dm, &gm, root.get("gmNotes")) {
            let at = self.key_at("gmNotes", node);
            self.bad(
                at,
                "gmNotes",
                "give `dmNotes` or `gmNotes` (the same thing), not both",
            );
        }
        dm.or(gm)
    }
}

/// `skillChecks`: a flat map grouped by name from `<name>_dc`, `<name>_skill`, `<name>_note`.
impl Checker<'_> {
    fn skill_checks(&mut self, node: Option<&Node>) -> Vec<SkillCheck> {
        let entries = match node.map(|n| (&n.value, n.at)) {
            Some((Value::Map(entries), _)) => entries.as_slice(),
            None | Some((Value::Null, _)) => &[],
            Some((other, at)) => {
                let message = format!(
                    "must be a mapping like `haggle_dc: 12`, not {}",
                    other.describe()
                );
                self.bad(at, "skillChecks", message);
                &[]
            }
        };
        // Each check: its parts so far, where its first key was written, whether it has a DC.
        let mut checks: Vec<(SkillCheck, Loc, bool)> = Vec::new();
        for (key, value) in entries {
            let path = join("skillChecks", key);
            let at = self.key_at(key, value);
            let Some((name, suffix)) = split_check_key(key) else {
                let message = format!(
                    "unknown key `{key}`; a skill check key is <name>_dc, <name>_skill or <name>_note"
                );
                self.bad(at, &path, message);
                continue;
            };
            let index = checks.iter().position(|(c, _, _)| c.name == name);
            let index = index.unwrap_or_else(|| {
                checks.push((empty_check(name), at, false));
                checks.len() - 1
            });
            if let Some((check, _, has_dc)) = checks.get_mut(index) {
                self.check_part(check, suffix, value, &path);
                *has_dc |= suffix == "dc";
            }
        }
        for (check, at, has_dc) in &checks {
            if !has_dc {
                let message = format!(
                    "skill check `{0}` has no `{0}_dc` (a whole number from {1} to {2})",
                    check.name, DC_RANGE.0, DC_RANGE.1
                );
                self.bad(*at, &format!("skillChecks.{}_dc", check.name), message);
            }
        }
        checks.into_iter().map(|(c, _, _)| c).collect()
    }

    /// One `<name>_<suffix>` value folded into its check.
    fn check_part(&mut self, check: &mut SkillCheck, suffix: &str, value: &Node, path: &str) {
        match suffix {
            "dc" => check.dc = self.dc(value, path),
            "skill" => check.skill = self.text(Some(value), value.at, path, true),
            _ => check.note = self.text(Some(value), value.at, path, true),
        }
    }

    fn dc(&mut self, value: &Node, path: &str) -> i32 {
        match &value.value {
            Value::Int(i) if (DC_RANGE.0..=DC_RANGE.1).contains(i) => *i as i32,
            other => {
                let message = format!(
                    "a DC must be a whole number from {} to {}, not {}",
                    DC_RANGE.0,
                    DC_RANGE.1,
                    other.describe()
                );
                self.bad(value.at, path, message);
                0
            }
        }
    }
}

/// `haggle_dc` → (`haggle`, `dc`); `None` without a known suffix or a name before it.
fn split_check_key(key: &str) -> Option<(&str, &str)> {
    ["dc", "skill", "note"].into_iter().find_map(|suffix| {
        let name = key.strip_suffix(suffix)?.strip_suffix('_')?;
        (!name.is_empty()).then_some((name, suffix))
    })
}

fn empty_setting() -> Setting {
    Setting {
        location: String::new(),
        mood: String::new(),
        ambient_npcs: String::new(),
    }
}

fn empty_check(name: &str) -> SkillCheck {
    SkillCheck {
        name: name.to_string(),
        dc: 0,
        skill: None,
        note: None,
    }
}

/// `randomizable`, `tools` and the cross-references between sections.
impl Checker<'_> {
    fn randomizables(&mut self, node: Option<&Node>) -> Vec<Randomizable> {
        let items = self.list(node, "randomizable");
        let mut seen = BTreeMap::new();
        let mut out = Vec::new();
        for (i, node) in items.iter().enumerate() {
            let path = format!("randomizable[{i}]");
            if !self.section(node, &path, RANDOMIZABLE) {
                continue;
            }
            let entry = self.randomizable(node, &path);
            self.unique(&mut seen, &entry.key, node.get("key"), &join(&path, "key"));
            out.push(entry);
        }
        out
    }

    fn randomizable(&mut self, node: &Node, path: &str) -> Randomizable {
        let key = self.field(node, "key", path);
        if !key.is_empty() && !is_key(&key) {
            let at = node.get("key").map_or(node.at, |n| n.at);
            self.bad(at, &join(path, "key"), "must be one word with no braces");
        }
        let source = self.source(node, path);
        let category = self.optional(node, "category", path);
        if source == NameSource::Vocabulary {
            self.category(node, category.as_deref(), path);
        }
        // Memory is asked the query; the vocabulary needs only its category.
        let query = self.text(
            node.get("query"),
            node.at,
            &join(path, "query"),
            source == NameSource::Memory,
        );
        Randomizable {
            key,
            source,
            category,
            query: query.unwrap_or_default(),
            fallback: self.field(node, "fallback", path),
        }
    }

    fn source(&mut self, node: &Node, path: &str) -> NameSource {
        let path = join(path, "source");
        let at = node.get("source").map_or(node.at, |n| n.at);
        match self.text(node.get("source"), at, &path, false).as_deref() {
            None | Some("memory" | "graphmcp") => NameSource::Memory,
            Some("vocabulary") => NameSource::Vocabulary,
            Some(other) => {
                let message = format!(
                    "must be `memory`, `vocabulary` or `graphmcp` (= memory), not `{other}`"
                );
                self.bad(at, &path, message);
                NameSource::Memory
            }
        }
    }

    fn category(&mut self, node: &Node, category: Option<&str>, path: &str) {
        let path = join(path, "category");
        let known = names::categories();
        match category {
            Some(c) if known.contains(&c) => {}
            Some(c) => {
                let at = node.get("category").map_or(node.at, |n| n.at);
                let message = format!(
                    "unknown vocabulary category `{c}`; known: {}",
                    quoted(&known)
                );
                self.bad(at, &path, message);
            }
            None if node.get("category").is_none() => {
                let message = format!(
                    "is missing (a vocabulary entry needs one of {})",
                    quoted(&known)
                );
                self.bad(node.at, &path, message);
            }
            None => {}
        }
    }

    fn tools(&mut self, root: &Node) -> Vec<String> {
        let items = self.list(root.get("tools"), "tools");
        let has_scene = matches!(root.get("scene").map(|n| &n.value), Some(Value::Str(_)));
        let mut seen = BTreeMap::new();
        let mut out = Vec::new();
        for (i, node) in items.iter().enumerate() {
            let path = format!("tools[{i}]");
            let Some(tool) = self.text(Some(node), node.at, &path, true) else {
                continue;
            };
            if SCENE_TOOLS.contains(&tool.as_str()) && !has_scene {
                let message = format!("`{tool}` is a scene tool; it needs a `scene:` file");
                self.bad(node.at, &path, message);
            } else if !ENCOUNTER_TOOLS.contains(&tool.as_str())
                && !SCENE_TOOLS.contains(&tool.as_str())
            {
                let known: Vec<&str> = ENCOUNTER_TOOLS.iter().chain(SCENE_TOOLS).copied().collect();
                let message = format!("unknown tool `{tool}`; known: {}", quoted(&known));
                self.bad(node.at, &path, message);
            }
            self.unique(&mut seen, &tool, Some(node), &path);
            out.push(tool);
        }
        out
    }

    /// Placeholders in the opening name something drawn; every nameKey is drawn.
    fn cross_check(&mut self, spec: &Spec, root: &Node) {
        let keys: Vec<&str> = spec.randomizable.iter().map(|r| r.key.as_str()).collect();
        self.name_keys(spec, root, &keys);
        let Some(opening) = root.get("openingNarrative") else {
            return;
        };
        let mut known: Vec<&str> = keys.clone();
        known.extend(spec.npcs.iter().filter_map(|n| n.name_key.as_deref()));
        known.sort_unstable();
        known.dedup();
        let mut written: BTreeMap<String, usize> = BTreeMap::new();
        for raw in names::placeholders(&spec.opening) {
            let nth = written.entry(raw.raw.to_string()).or_default();
            let at = self
                .find_after(opening.at, raw.raw, *nth)
                .unwrap_or(opening.at);
            *nth += 1;
            if !known.contains(&raw.key) {
                let message = match known.is_empty() {
                    true => format!(
                        "unknown placeholder `{{{{{}}}}}`; no randomizable keys or nameKeys are defined",
                        raw.key
                    ),
                    false => format!(
                        "unknown placeholder `{{{{{}}}}}`; known: {}",
                        raw.key,
                        quoted(&known)
                    ),
                };
                self.bad(at, "openingNarrative", message);
            }
        }
    }

    fn name_keys(&mut self, spec: &Spec, root: &Node, keys: &[&str]) {
        let Some(Value::Seq(nodes)) = root.get("npcs").map(|n| &n.value) else {
            return;
        };
        let mut seen = BTreeMap::new();
        for (i, (npc, node)) in spec.npcs.iter().zip(nodes).enumerate() {
            let (Some(key), Some(key_node)) = (&npc.name_key, node.get("nameKey")) else {
                continue;
            };
            let path = format!("npcs[{i}].nameKey");
            if !keys.contains(&key.as_str()) {
                let message = format!(
                    "nameKey `{key}` has no randomizable entry (add one with `key: {key}`)"
                );
                self.bad(key_node.at, &path, message);
            }
            self.unique(&mut seen, key, Some(key_node), &path);
        }
    }
}
