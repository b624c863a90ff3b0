//! Copying a campaign's memory between the embedded store and a graph server, checked: the
//! copy is read back and compared row by row with the original, and a sample of recalls is
//! asked of both.

use troupe_memory::{GameTime, MemoryStore, Query, Reader, Snapshot};

use crate::{Error, Target, schema, timeout};

/// What a migration copied and how it was checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// (kind, how many) in the copy, read back from where it went.
    pub counts: Vec<(String, usize)>,
    /// Recalls asked of both memories, all of which answered the same.
    pub recalls_compared: usize,
}

/// Rows per statement when copying: a few thousand keeps each query well under the servers'
/// limits while the copy of 10k facts takes a few dozen round trips.
pub const CHUNK: usize = 1_000;

/// Copy `store`'s memory into the graph. A campaign already in the graph is refused unless
/// `replace`, which deletes it first.
pub fn to_graph(store: &MemoryStore, target: &Target, replace: bool) -> Result<Report, Error> {
    let mut client = target.connect(timeout())?;
    schema::ensure_indexes(client.as_mut())?;
    let existing: i64 = schema::counts(client.as_mut(), &target.campaign)?
        .iter()
        .map(|(_, n)| n)
        .sum();
    if existing > 0 {
        if !replace {
            return Err(Error::Refused {
                target: target.describe(),
                message: format!(
                    "campaign {:?} already has {existing} nodes there; nothing was copied (--replace deletes them first)",
                    target.campaign
                ),
            });
        }
        schema::delete_campaign(client.as_mut(), &target.campaign)?;
    }
    let source = store.snapshot()?;
    schema::write_snapshot(client.as_mut(), &source, &target.campaign, CHUNK)?;
    let copy = schema::load(client.as_mut(), &target.campaign)?;
    let mut copied = MemoryStore::in_memory()?;
    copied.restore(&copy)?;
    check(&source, &copy, store, &copied, &target.describe())
}

/// Copy the graph's memory of the campaign into `store`, which must hold no memory yet.
pub fn from_graph(target: &Target, store: &mut MemoryStore) -> Result<Report, Error> {
    let mut client = target.connect(timeout())?;
    let source = schema::load(client.as_mut(), &target.campaign)?;
    if source.is_empty() {
        return Err(Error::Refused {
            target: target.describe(),
            message: format!("campaign {:?} has no memory there", target.campaign),
        });
    }
    store.restore(&source)?;
    let copy = store.snapshot()?;
    let mut original = MemoryStore::in_memory()?;
    original.restore(&source)?;
    check(
        &source,
        &copy,
        &original,
        store,
        &store.path().display().to_string(),
    )
}

/// The copy must hold the same rows, and answer a sample of recalls the same.
fn check(
    source: &Snapshot,
    copy: &Snapshot,
    a: &MemoryStore,
    b: &MemoryStore,
    target: &str,
) -> Result<Report, Error> {
    let differs = |what: &str| Error::Answer {
        target: target.to_string(),
        message: format!("the copy differs from the original in its {what}; see docs"),
    };
    if let Some(what) = first_difference(source, copy) {
        return Err(differs(what));
    }
    let now = source
        .facts
        .iter()
        .map(|f| GameTime {
            session: u32::try_from(f.session).unwrap_or(0),
            turn: u32::try_from(f.turn).unwrap_or(0) + 1,
            day: None,
        })
        .max()
        .unwrap_or_default();
    let step = (source.facts.len() / 8).max(1);
    let mut compared = 0;
    for f in source.facts.iter().step_by(step).take(8) {
        let question: String = f
            .text
            .split_whitespace()
            .take(6)
            .collect::<Vec<_>>()
            .join(" ");
        let q = Query::new(question, Reader::All, now);
        let ids = |s: &MemoryStore| -> Result<Vec<i64>, Error> {
            Ok(s.search(&q)?.into_iter().map(|h| h.fact.id).collect())
        };
        if ids(a)? != ids(b)? {
            return Err(differs("answers to a recall"));
        }
        compared += 1;
    }
    Ok(Report {
        counts: vec![
            ("episodes".into(), copy.episodes.len()),
            ("entities".into(), copy.entities.len()),
            ("aliases".into(), copy.aliases.len()),
            ("facts".into(), copy.facts.len()),
            ("conflicts".into(), copy.conflicts.len()),
            ("recalls".into(), copy.rehearsals.len()),
        ],
        recalls_compared: compared,
    })
}

/// The first kind of row that differs. Importance is compared to 1e-12: FalkorDB prints
/// doubles with 15 significant digits.
pub fn first_difference(a: &Snapshot, b: &Snapshot) -> Option<&'static str> {
    if a.episodes != b.episodes {
        return Some("episodes");
    }
    if a.entities != b.entities {
        return Some("entities");
    }
    if a.aliases != b.aliases {
        return Some("aliases");
    }
    let same_fact = |x: &troupe_memory::mirror::FactRow, y: &troupe_memory::mirror::FactRow| {
        let mut y = y.clone();
        if (x.importance - y.importance).abs() <= 1e-12 {
            y.importance = x.importance;
        }
        *x == y
    };
    if a.facts.len() != b.facts.len() || !a.facts.iter().zip(&b.facts).all(|(x, y)| same_fact(x, y))
    {
        return Some("facts");
    }
    if a.conflicts != b.conflicts {
        return Some("conflicts");
    }
    if a.rehearsals != b.rehearsals {
        return Some("recalls");
    }
    None
}
