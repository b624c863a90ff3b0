//! Turning what was said and done into facts, without a model: each episode is kept as a fact
//! (the fallback the seeds ask for when extraction fails), with the names in it linked as
//! entities and appositives learnt as aliases ("Galvin, the merchant"). Imports and exports are
//! JSONL.

use serde::{Deserialize, Serialize};

use crate::text::{names_in, normalise_name, untag, words};
use crate::{EntityKind, Episode, Error, MemoryStore, MemoryType, NewFact, Reader, Scope, Source};

/// What kind of moment an episode records; it sets the fact's type and importance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    Narration,
    Answer,
    Strategy,
    Action,
    Dice,
    Outcome,
    Reaction,
    Note,
}

impl Moment {
    pub(crate) fn importance(self) -> f64 {
        match self {
            Moment::Outcome | Moment::Dice => 0.6,
            Moment::Narration | Moment::Answer => 0.5,
            Moment::Action | Moment::Strategy | Moment::Note => 0.4,
            Moment::Reaction => 0.3,
        }
    }

    fn memory_type(self) -> MemoryType {
        match self {
            Moment::Strategy => MemoryType::Procedural,
            Moment::Answer => MemoryType::Semantic,
            _ => MemoryType::Episodic,
        }
    }
}

/// The fact an episode stands for, with its names as entities. A GM-tagged name (`@Galvin`)
/// marks an NPC's introduction, which matters more.
pub fn episode_fact(ep: &Episode, source: Source, moment: Moment) -> NewFact {
    let names = names_in(&ep.text);
    let tagged = ep.text.contains('@');
    let mut importance = moment.importance();
    if tagged {
        importance = (importance + 0.2).min(1.0);
    }
    NewFact {
        text: untag(&ep.text),
        scope: ep.scope.clone(),
        source,
        memory_type: moment.memory_type(),
        importance,
        at: ep.at(),
        speaker: ep.speaker.clone(),
        episode_ids: vec![ep.id.clone()],
        entities: names
            .into_iter()
            .map(|n| {
                let kind = if tagged {
                    EntityKind::Npc
                } else {
                    EntityKind::Unknown
                };
                (n, kind)
            })
            .collect(),
        slot: None,
    }
}

/// Descriptions the text gives a name: "Galvin, the old merchant," and "the merchant Galvin"
/// both teach that "old merchant"/"merchant" means Galvin.
pub fn aliases_in(text: &str) -> Vec<(String, String)> {
    let text = untag(text);
    let names = names_in(&text);
    let mut out = Vec::new();
    for name in &names {
        // "NAME, the|a DESCRIPTION[,.]"
        for (i, _) in text.match_indices(name.as_str()) {
            let (before, after) = text.split_at_checked(i).unwrap_or_default();
            let after = after.strip_prefix(name.as_str()).unwrap_or(after);
            if let Some(rest) = after
                .strip_prefix(", the ")
                .or_else(|| after.strip_prefix(", a "))
                .or_else(|| after.strip_prefix(", an "))
            {
                let desc: String = rest
                    .split([',', '.', ';', '!', '?', '—'])
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let ws = words(&desc);
                if (1..=3).contains(&ws.len()) {
                    out.push((name.clone(), desc.trim().to_string()));
                }
            }
            // "the DESCRIPTION NAME"
            let before = before.trim_end();
            if let Some(desc) = after_last_the(before) {
                let ws = words(desc);
                if (1..=2).contains(&ws.len())
                    && desc
                        .chars()
                        .all(|c| c.is_alphabetic() || c == ' ' || c == '-')
                    && desc.chars().next().is_some_and(char::is_lowercase)
                {
                    out.push((name.clone(), desc.trim().to_string()));
                }
            }
        }
    }
    out.dedup();
    out
}

/// What follows the last "the " (any case) in `text`. Searched in the text itself: offsets
/// found in a lowercased copy do not fit the original ("İ" lowercases to three bytes).
fn after_last_the(text: &str) -> Option<&str> {
    text.char_indices().rev().find_map(|(p, _)| {
        let (word, rest) = text.get(p..)?.split_at_checked(4)?;
        word.eq_ignore_ascii_case("the ").then_some(rest)
    })
}

/// Store episodes as facts (one each), learning the aliases they give: the fallback path,
/// and the path for imported notes.
pub fn store_episodes(
    store: &mut MemoryStore,
    episodes: &[(Episode, Source, Moment)],
) -> Result<usize, Error> {
    let eps: Vec<Episode> = episodes.iter().map(|(e, _, _)| e.clone()).collect();
    let facts: Vec<NewFact> = episodes
        .iter()
        .map(|(e, s, m)| episode_fact(e, *s, *m))
        .collect();
    let stored = store.store(&eps, &facts)?;
    let aliases: Vec<(String, String, u32)> = episodes
        .iter()
        .flat_map(|(ep, _, _)| {
            aliases_in(&ep.text)
                .into_iter()
                .map(|(name, alias)| (name, alias, ep.session))
        })
        .collect();
    store.add_aliases(&aliases)?;
    Ok(stored.iter().filter(|s| s.inserted).count())
}

/// One line of an import file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportLine {
    id: String,
    session: u32,
    #[serde(default)]
    turn: u32,
    #[serde(default)]
    day: Option<u32>,
    #[serde(default)]
    timestamp: String,
    speaker: String,
    text: String,
    #[serde(default)]
    scope: Option<Scope>,
    /// Accepted for benchmark files; not stored.
    #[serde(default)]
    #[allow(dead_code)]
    channel: Option<String>,
}

/// Read an import file: one episode per line. Every bad line is reported, with its number.
pub fn read_import(text: &str, file: &str) -> Result<Vec<Episode>, Vec<Error>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| Error::BadLine {
            file: file.to_string(),
            line: i + 1,
            message,
        };
        match serde_json::from_str::<ImportLine>(line) {
            Ok(l) if l.id.trim().is_empty() => errors.push(bad("`id` is empty".into())),
            Ok(l) if l.text.trim().is_empty() => errors.push(bad("`text` is empty".into())),
            Ok(l) if l.session == 0 => {
                errors.push(bad("`session` must be 1 or more".into()));
            }
            Ok(l) => out.push(Episode {
                id: l.id,
                session: l.session,
                turn: l.turn,
                day: l.day,
                timestamp: l.timestamp,
                speaker: l.speaker,
                text: l.text,
                scope: l.scope.unwrap_or(Scope::Party),
            }),
            Err(e) => errors.push(bad(format!(
                "{e} (expected {{\"id\", \"session\", \"timestamp\", \"speaker\", \"text\"}}, optional \"turn\", \"day\", \"scope\")"
            ))),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Imported episodes become facts whose source is the speaker's authority: the GM's words stay
/// canon, anything else is an imported note.
pub fn import(store: &mut MemoryStore, episodes: &[Episode]) -> Result<usize, Error> {
    let items: Vec<(Episode, Source, Moment)> = episodes
        .iter()
        .map(|e| {
            let source = if e.speaker.eq_ignore_ascii_case("gm") {
                Source::Gm
            } else {
                Source::Import
            };
            (e.clone(), source, Moment::Note)
        })
        .collect();
    // Chunks keep each transaction (and the alias pass) bounded for very large files.
    let mut n = 0;
    for chunk in items.chunks(5_000) {
        n += store_episodes(store, chunk)?;
    }
    // Merging costs time in proportion to the whole index: not for an import that added nothing.
    if n > 0 {
        store.optimize_text_index()?;
    }
    Ok(n)
}

/// One line of `troupe memory export`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExportLine {
    Entity(crate::EntityRecord),
    Episode(Episode),
    Fact(crate::Fact),
    Conflict(crate::Conflict),
}

/// The whole graph as JSONL lines: entities, episodes, facts (closed ones included), conflicts.
pub fn export(store: &MemoryStore) -> Result<Vec<String>, Error> {
    let mut lines = Vec::new();
    let mut push = |l: ExportLine| {
        if let Ok(s) = serde_json::to_string(&l) {
            lines.push(s);
        }
    };
    for e in store.entities()? {
        push(ExportLine::Entity(e));
    }
    for e in store.episodes()? {
        push(ExportLine::Episode(e));
    }
    for f in store.facts(&Reader::All, true)? {
        push(ExportLine::Fact(f));
    }
    for c in store.conflicts()? {
        push(ExportLine::Conflict(c));
    }
    Ok(lines)
}

/// Name an entity for an alias lookup (exposed for the engine's NPC tags).
pub fn entity_key(name: &str) -> String {
    normalise_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appositives_become_aliases() {
        let a = aliases_in("We meet Galvin, the old merchant, at the dock. The trader Vos nods.");
        assert!(
            a.contains(&("Galvin".into(), "old merchant".into())),
            "{a:?}"
        );
        assert!(a.contains(&("Vos".into(), "trader".into())), "{a:?}");
    }

    /// Found by a new user: "İ" lowercases to three bytes, so an offset found in the lowercased
    /// text cut the original inside a character during `troupe play`.
    #[test]
    fn case_changing_letters_before_a_name_do_not_shift_the_description() {
        let a = aliases_in("Hello Galvin. İ the éé Galvin.");
        assert!(a.contains(&("Galvin".into(), "éé".into())), "{a:?}");
        let a = aliases_in("İİİİ the trader Vos nods. THE smuggler Vos waits.");
        assert!(a.contains(&("Vos".into(), "trader".into())), "{a:?}");
        assert!(a.contains(&("Vos".into(), "smuggler".into())), "{a:?}");
    }

    /// An import of three transactions' worth leaves the text index merged: merging it again
    /// changes nothing (without the merge it would shrink the index's segment lists).
    #[test]
    fn an_import_leaves_the_text_index_in_one_piece() {
        let mut store = MemoryStore::in_memory().unwrap();
        let episodes: Vec<Episode> = (0..10_001)
            .map(|i| Episode {
                id: format!("n{i}"),
                session: 1 + i / 2_000,
                turn: 0,
                day: None,
                timestamp: String::new(),
                speaker: ["alex", "bo", "cy"][i as usize % 3].into(),
                text: format!("Note {i}: the crate of {} reached dock {}.", i % 97, i % 13),
                scope: crate::Scope::Party,
            })
            .collect();
        assert_eq!(import(&mut store, &episodes).unwrap(), 10_001);
        let index_rows = |s: &MemoryStore| -> i64 {
            s.conn
                .query_row("SELECT COUNT(*) FROM memory_fts_idx", [], |r| r.get(0))
                .unwrap()
        };
        let imported = index_rows(&store);
        store.optimize_text_index().unwrap();
        assert_eq!(index_rows(&store), imported);
    }

    #[test]
    fn import_reports_every_bad_line() {
        let text = "{\"id\":\"e1\",\"session\":1,\"timestamp\":\"t\",\"speaker\":\"gm\",\"text\":\"Hi\"}\nnot json\n{\"id\":\"e2\",\"session\":0,\"speaker\":\"gm\",\"text\":\"x\"}\n";
        let errs = read_import(text, "notes.jsonl").err().unwrap_or_default();
        assert_eq!(errs.len(), 2);
        assert!(
            errs[0].to_string().starts_with("notes.jsonl, line 2:"),
            "{}",
            errs[0]
        );
        assert!(errs[1].to_string().contains("line 3"), "{}", errs[1]);
    }
}
