//! The memory as a graph, and the Cypher that writes and reads it (the same text for FalkorDB
//! and Neo4j; see [`crate::dialect`] for what differs).
//!
//! Nodes (every one carries `campaign`, so campaigns can share a graph):
//! - `(:Episode {row, id, session, turn, day, timestamp, speaker, scope, text})`: what was said;
//! - `(:Entity {id, name, kind, first_session, last_session})`, and `(:Alias {row, alias,
//!   entity})-[:NAMES]->(:Entity)` for each name it goes by;
//! - `(:Fact {id, key, text, scope, source, truth, memory_type, importance, rehearsals, session,
//!   turn, day, speaker, episode_ids, slot, invalid_session, invalid_turn, invalid_day,
//!   invalidated_by})`: valid from (session, turn, day), invalid from `invalid_*` when closed;
//!   `-[:IN]->(:Scope {key, kind, owner})` (party, player, character, npc), `-[:ABOUT]->(:Entity)`,
//!   `-[:FROM]->(:Episode)` (provenance), `-[:INVALIDATED_BY]->(:Fact)`;
//! - `(:Conflict {id, slot, resolution, session, turn, day, old_fact, new_fact})` with `-[:OLD]->`
//!   and `-[:NEW]->` the two facts;
//! - `(:Recall {row, session, turn, reader, fact})-[:OF]->(:Fact)`: one counted rehearsal.

use serde_json::{Map, Value, json};
use troupe_memory::mirror::{AliasRow, ConflictRow, EntityRow, EpisodeRow, FactRow, RehearsalRow};
use troupe_memory::{Changes, Scope, Snapshot, Source};

use crate::{Client, Error, Statement};

/// The statement that writes one transaction's changes: deletions first, then nodes, then the
/// relationships between them, chained so the server applies it as one query.
pub fn write(changes: &Changes, campaign: &str) -> Statement {
    let mut b = Builder::new(campaign);
    let d = &changes.deleted;
    for (name, label, key, ids) in [
        ("d_rec", "Recall", "row", &d.rehearsals),
        ("d_con", "Conflict", "id", &d.conflicts),
        ("d_fact", "Fact", "id", &d.facts),
        ("d_alias", "Alias", "row", &d.aliases),
        ("d_ent", "Entity", "id", &d.entities),
        ("d_ep", "Episode", "row", &d.episodes),
    ] {
        let cypher = format!(
            "UNWIND ${name} AS k MATCH (n:{label} {{campaign: $c, {key}: k}}) DETACH DELETE n"
        );
        b.section(name, ids.iter().map(|i| json!(i)).collect(), &cypher);
    }
    let u = &changes.upserts;
    b.section(
        "ep",
        u.episodes.iter().map(episode).collect(),
        &upsert("ep", "Episode", "row", ""),
    );
    b.section(
        "ent",
        u.entities.iter().map(entity).collect(),
        &upsert("ent", "Entity", "id", ""),
    );
    b.section(
        "alias",
        u.aliases.iter().map(alias).collect(),
        &upsert(
            "alias",
            "Alias",
            "row",
            " WITH n, r MATCH (e:Entity {campaign: $c, id: r.p.entity}) MERGE (n)-[:NAMES]->(e)",
        ),
    );
    facts(&mut b, &u.facts);
    b.section(
        "con",
        u.conflicts.iter().map(conflict).collect(),
        &upsert("con", "Conflict", "id", " WITH n, r MATCH (o:Fact {campaign: $c, id: r.p.old_fact}), (w:Fact {campaign: $c, id: r.p.new_fact}) MERGE (n)-[:OLD]->(o) MERGE (n)-[:NEW]->(w)"),
    );
    b.section(
        "rec",
        u.rehearsals.iter().map(rehearsal).collect(),
        &upsert(
            "rec",
            "Recall",
            "row",
            " WITH n, r MATCH (f:Fact {campaign: $c, id: r.p.fact}) MERGE (n)-[:OF]->(f)",
        ),
    );
    b.finish()
}

/// Facts, their scope, the entities they are about, the episodes they came from, and what
/// closed them (replaced on every write: a fact closed by a later one opens again on undo).
fn facts(b: &mut Builder, facts: &[FactRow]) {
    b.section(
        "fact",
        facts.iter().map(fact).collect(),
        &upsert("fact", "Fact", "id", " WITH n, r MERGE (s:Scope {campaign: $c, key: r.p.scope}) ON CREATE SET s.kind = r.kind, s.owner = r.owner MERGE (n)-[:IN]->(s)"),
    );
    b.section(
        "closed",
        facts.iter().map(|f| json!(f.id)).collect(),
        "UNWIND $closed AS k MATCH (n:Fact {campaign: $c, id: k})-[x:INVALIDATED_BY]->() DELETE x",
    );
    let by = facts
        .iter()
        .filter_map(|f| f.invalidated_by.map(|by| json!({"f": f.id, "by": by})))
        .collect();
    b.section("by", by, "UNWIND $by AS r MATCH (a:Fact {campaign: $c, id: r.f}), (b:Fact {campaign: $c, id: r.by}) MERGE (a)-[:INVALIDATED_BY]->(b)");
    let about = facts
        .iter()
        .flat_map(|f| f.entities.iter().map(|e| json!({"f": f.id, "e": e})))
        .collect();
    b.section("about", about, "UNWIND $about AS r MATCH (f:Fact {campaign: $c, id: r.f}), (e:Entity {campaign: $c, id: r.e}) MERGE (f)-[:ABOUT]->(e)");
    let from = facts
        .iter()
        .flat_map(|f| f.episode_ids.iter().map(|e| json!({"f": f.id, "e": e})))
        .collect();
    b.section("from", from, "UNWIND $from AS r MATCH (f:Fact {campaign: $c, id: r.f}), (e:Episode {campaign: $c, id: r.e}) MERGE (f)-[:FROM]->(e)");
}

fn upsert(param: &str, label: &str, key: &str, then: &str) -> String {
    format!(
        "UNWIND ${param} AS r MERGE (n:{label} {{campaign: $c, {key}: r.{key}}}) SET n += r.p{then}"
    )
}

/// Sections of one statement, each a list parameter and the Cypher that unwinds it; empty
/// sections are left out.
struct Builder {
    parts: Vec<String>,
    params: Map<String, Value>,
}

impl Builder {
    fn new(campaign: &str) -> Builder {
        let mut params = Map::new();
        params.insert("c".into(), json!(campaign));
        Builder {
            parts: Vec::new(),
            params,
        }
    }

    fn section(&mut self, name: &str, rows: Vec<Value>, cypher: &str) {
        if rows.is_empty() {
            return;
        }
        self.params.insert(name.to_string(), Value::Array(rows));
        self.parts.push(cypher.to_string());
    }

    /// The sections chained: `count(*)` ends each one in exactly one row, whatever it matched.
    fn finish(self) -> Statement {
        let mut cypher = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                cypher.push_str(&format!(" WITH count(*) AS _{i} "));
            }
            cypher.push_str(part);
        }
        Statement {
            cypher,
            params: self.params,
        }
    }
}

fn episode(e: &EpisodeRow) -> Value {
    json!({"row": e.row, "p": {"row": e.row, "id": e.id, "session": e.session, "turn": e.turn,
        "day": e.day, "timestamp": e.timestamp, "speaker": e.speaker, "scope": e.scope, "text": e.text}})
}

fn entity(e: &EntityRow) -> Value {
    json!({"id": e.id, "p": {"id": e.id, "name": e.name, "kind": e.kind,
        "first_session": e.first_session, "last_session": e.last_session}})
}

fn alias(a: &AliasRow) -> Value {
    json!({"row": a.row, "p": {"row": a.row, "alias": a.alias, "entity": a.entity}})
}

fn fact(f: &FactRow) -> Value {
    let truth = Source::parse(&f.source)
        .and_then(|s| serde_json::to_value(s.truth()).ok())
        .unwrap_or(Value::Null);
    let (kind, owner) = match Scope::parse(&f.scope) {
        Some(Scope::Party) | None => ("party", None),
        Some(Scope::Player(a)) => ("player", Some(a)),
        Some(Scope::Character(a)) => ("character", Some(a)),
        Some(Scope::Npc(k)) => ("npc", Some(k)),
    };
    json!({"id": f.id, "kind": kind, "owner": owner, "p": {
        "id": f.id, "key": f.key, "text": f.text, "scope": f.scope, "source": f.source,
        "truth": truth, "memory_type": f.memory_type, "importance": f.importance,
        "rehearsals": f.rehearsals, "session": f.session, "turn": f.turn, "day": f.day,
        "speaker": f.speaker, "episode_ids": f.episode_ids, "slot": f.slot,
        "invalid_session": f.invalid_session, "invalid_turn": f.invalid_turn,
        "invalid_day": f.invalid_day, "invalidated_by": f.invalidated_by}})
}

fn conflict(c: &ConflictRow) -> Value {
    json!({"id": c.id, "p": {"id": c.id, "slot": c.slot, "old_fact": c.old_fact,
        "new_fact": c.new_fact, "resolution": c.resolution, "session": c.session,
        "turn": c.turn, "day": c.day}})
}

fn rehearsal(r: &RehearsalRow) -> Value {
    json!({"row": r.row, "p": {"row": r.row, "session": r.session, "turn": r.turn,
        "reader": r.reader, "fact": r.fact}})
}

/// Make sure every label is indexed on (campaign, key): without it each MERGE scans its label.
pub fn ensure_indexes(client: &mut dyn Client) -> Result<(), Error> {
    let dialect = client.dialect();
    for cypher in dialect.index_statements() {
        let st = Statement {
            cypher,
            params: Map::new(),
        };
        match client.run(&st) {
            Ok(_) => {}
            Err(Error::Query { message, .. }) if dialect.already_indexed(&message) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn read(client: &mut dyn Client, campaign: &str, cypher: &str) -> Result<Vec<Vec<Value>>, Error> {
    let mut params = Map::new();
    params.insert("c".into(), json!(campaign));
    client.run(&Statement {
        cypher: cypher.to_string(),
        params,
    })
}

/// A campaign's whole memory, read from the graph.
pub fn load(client: &mut dyn Client, campaign: &str) -> Result<Snapshot, Error> {
    let mut s = Snapshot::default();
    let q = |label: &str, key: &str, fields: &str| {
        let cols: Vec<String> = fields
            .split(',')
            .map(|f| format!("n.{}", f.trim()))
            .collect();
        format!(
            "MATCH (n:{label} {{campaign: $c}}) RETURN {} ORDER BY n.{key}",
            cols.join(", ")
        )
    };
    for r in read(
        client,
        campaign,
        &q(
            "Episode",
            "row",
            "row, id, session, turn, day, timestamp, speaker, scope, text",
        ),
    )? {
        let mut c = Cells::new(r);
        s.episodes.push(EpisodeRow {
            row: c.int()?,
            id: c.text()?,
            session: c.int()?,
            turn: c.int()?,
            day: c.opt_int()?,
            timestamp: c.text()?,
            speaker: c.text()?,
            scope: c.text()?,
            text: c.text()?,
        });
    }
    for r in read(
        client,
        campaign,
        &q(
            "Entity",
            "id",
            "id, name, kind, first_session, last_session",
        ),
    )? {
        let mut c = Cells::new(r);
        s.entities.push(EntityRow {
            id: c.int()?,
            name: c.text()?,
            kind: c.text()?,
            first_session: c.int()?,
            last_session: c.int()?,
        });
    }
    for r in read(client, campaign, &q("Alias", "row", "row, alias, entity"))? {
        let mut c = Cells::new(r);
        s.aliases.push(AliasRow {
            row: c.int()?,
            alias: c.text()?,
            entity: c.int()?,
        });
    }
    s.facts = load_facts(client, campaign, &q)?;
    for r in read(
        client,
        campaign,
        &q(
            "Conflict",
            "id",
            "id, slot, old_fact, new_fact, resolution, session, turn, day",
        ),
    )? {
        let mut c = Cells::new(r);
        s.conflicts.push(ConflictRow {
            id: c.int()?,
            slot: c.text()?,
            old_fact: c.int()?,
            new_fact: c.int()?,
            resolution: c.text()?,
            session: c.int()?,
            turn: c.int()?,
            day: c.opt_int()?,
        });
    }
    for r in read(
        client,
        campaign,
        &q("Recall", "row", "row, session, turn, reader, fact"),
    )? {
        let mut c = Cells::new(r);
        s.rehearsals.push(RehearsalRow {
            row: c.int()?,
            session: c.int()?,
            turn: c.int()?,
            reader: c.text()?,
            fact: c.int()?,
        });
    }
    Ok(s)
}

fn load_facts(
    client: &mut dyn Client,
    campaign: &str,
    q: &dyn Fn(&str, &str, &str) -> String,
) -> Result<Vec<FactRow>, Error> {
    let fields = "id, key, text, scope, source, memory_type, importance, rehearsals, session, turn, day, speaker, episode_ids, slot, invalid_session, invalid_turn, invalid_day, invalidated_by";
    let mut facts = Vec::new();
    for r in read(client, campaign, &q("Fact", "id", fields))? {
        let mut c = Cells::new(r);
        facts.push(FactRow {
            id: c.int()?,
            key: c.text()?,
            text: c.text()?,
            scope: c.text()?,
            source: c.text()?,
            memory_type: c.text()?,
            importance: c.float()?,
            rehearsals: c.int()?,
            session: c.int()?,
            turn: c.int()?,
            day: c.opt_int()?,
            speaker: c.text()?,
            episode_ids: c.texts()?,
            slot: c.opt_text()?,
            invalid_session: c.opt_int()?,
            invalid_turn: c.opt_int()?,
            invalid_day: c.opt_int()?,
            invalidated_by: c.opt_int()?,
            entities: Vec::new(),
        });
    }
    let links = read(
        client,
        campaign,
        "MATCH (f:Fact {campaign: $c})-[:ABOUT]->(e:Entity) RETURN f.id, e.id ORDER BY f.id, e.id",
    )?;
    let mut by_id: std::collections::HashMap<i64, usize> =
        facts.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
    for r in links {
        let mut c = Cells::new(r);
        let (f, e) = (c.int()?, c.int()?);
        if let Some(fact) = by_id.get_mut(&f).and_then(|i| facts.get_mut(*i)) {
            fact.entities.push(e);
        }
    }
    Ok(facts)
}

/// How many nodes of each kind a campaign has in the graph: (label, count).
pub fn counts(client: &mut dyn Client, campaign: &str) -> Result<Vec<(String, i64)>, Error> {
    let mut out = Vec::new();
    for (label, _) in crate::dialect::KEYS {
        let rows = read(
            client,
            campaign,
            &format!("MATCH (n:{label} {{campaign: $c}}) RETURN count(n)"),
        )?;
        let n = rows
            .into_iter()
            .next()
            .map(Cells::new)
            .map(|mut c| c.int())
            .transpose()?
            .unwrap_or(0);
        out.push((label.to_string(), n));
    }
    Ok(out)
}

/// Write a whole snapshot (a migration), in chunks of `chunk` rows: entities and episodes
/// before the facts that link them.
pub fn write_snapshot(
    client: &mut dyn Client,
    s: &Snapshot,
    campaign: &str,
    chunk: usize,
) -> Result<(), Error> {
    let chunk = chunk.max(1);
    let mut batches: Vec<Snapshot> = Vec::new();
    for c in s.episodes.chunks(chunk) {
        batches.push(Snapshot {
            episodes: c.to_vec(),
            ..Snapshot::default()
        });
    }
    for c in s.entities.chunks(chunk) {
        batches.push(Snapshot {
            entities: c.to_vec(),
            ..Snapshot::default()
        });
    }
    for c in s.aliases.chunks(chunk) {
        batches.push(Snapshot {
            aliases: c.to_vec(),
            ..Snapshot::default()
        });
    }
    // Facts twice: a fact may be closed by a later one, whose node must exist for the edge.
    for _ in 0..2 {
        for c in s.facts.chunks(chunk) {
            batches.push(Snapshot {
                facts: c.to_vec(),
                ..Snapshot::default()
            });
        }
    }
    for c in s.conflicts.chunks(chunk) {
        batches.push(Snapshot {
            conflicts: c.to_vec(),
            ..Snapshot::default()
        });
    }
    for c in s.rehearsals.chunks(chunk) {
        batches.push(Snapshot {
            rehearsals: c.to_vec(),
            ..Snapshot::default()
        });
    }
    for upserts in batches {
        let changes = Changes {
            upserts,
            ..Changes::default()
        };
        client.run(&write(&changes, campaign))?;
    }
    Ok(())
}

/// A row's cells, read left to right.
struct Cells(std::vec::IntoIter<Value>);

impl Cells {
    fn new(row: Vec<Value>) -> Cells {
        Cells(row.into_iter())
    }

    fn next(&mut self) -> Result<Value, String> {
        self.0
            .next()
            .ok_or_else(|| "a row is shorter than expected".to_string())
    }

    fn int(&mut self) -> Result<i64, String> {
        let v = self.next()?;
        v.as_i64()
            .ok_or_else(|| format!("expected an integer, got {v}"))
    }

    fn opt_int(&mut self) -> Result<Option<i64>, String> {
        match self.next()? {
            Value::Null => Ok(None),
            v => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("expected an integer, got {v}")),
        }
    }

    fn float(&mut self) -> Result<f64, String> {
        let v = self.next()?;
        v.as_f64()
            .ok_or_else(|| format!("expected a number, got {v}"))
    }

    fn text(&mut self) -> Result<String, String> {
        match self.next()? {
            Value::String(s) => Ok(s),
            v => Err(format!("expected a string, got {v}")),
        }
    }

    fn opt_text(&mut self) -> Result<Option<String>, String> {
        match self.next()? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            v => Err(format!("expected a string, got {v}")),
        }
    }

    fn texts(&mut self) -> Result<Vec<String>, String> {
        match self.next()? {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    v => Err(format!("expected a string, got {v}")),
                })
                .collect(),
            v => Err(format!("expected a list, got {v}")),
        }
    }
}

/// A row that does not read as troupe wrote it.
impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::Answer {
            target: "the graph".into(),
            message,
        }
    }
}

/// Delete every node of a campaign (a migration with `--replace`, tests).
pub fn delete_campaign(client: &mut dyn Client, campaign: &str) -> Result<(), Error> {
    for (label, _) in crate::dialect::KEYS {
        read(
            client,
            campaign,
            &format!("MATCH (n:{label} {{campaign: $c}}) DETACH DELETE n"),
        )?;
    }
    Ok(())
}
