//! Retrieval: candidates from several signals, fused into one score.
//!
//! Signals (each can be switched off, for the ablations in `examples/recall.rs`, a generated
//! campaign, and `examples/locomo.rs`, real long conversations):
//! - `bm25`: full-text match over fact text (SQLite FTS5 posting lists, Porter stemming, BM25
//!   computed here with FTS5's statistics); words that only say when ("day 26", "on 3 June,
//!   2023") are left to `time`, and words that only frame a question ("what kind of") dropped;
//! - `proximity`: added to a fact's BM25, question words said close together in it;
//! - `entities`: facts linked to an entity the question names (or an alias of it: "the merchant");
//! - `time`: facts from the session or in-game days the question asks about ("last session",
//!   "on day 26", "three sessions ago", or a calendar date matched against the episodes'
//!   timestamps: "on 3 June, 2023", "in May 2023"): it puts that time's facts forward and lifts
//!   every candidate from then;
//! - `speaker`: lifts candidates said by someone the question names ("what did Bea say…"),
//!   after the neighbours have lent, so the line that asked lends to the named one's answer;
//!   an AI's own lines are lifted half as much when it recalls (player or character layer);
//! - `neighbours`: the best candidates bring in the three lines each side of them in their
//!   turn, and each fact borrows from the best of its turn, halved per line between (pronouns,
//!   answers to a question, split evidence); linear in the candidates;
//! - `session`: every candidate lifted by how well its session as a whole answers (a little:
//!   an answer told over several lines of one conversation);
//! - `recency`: when the question leans to the present ("now", "still", "at the moment") the
//!   newest candidates first, to the beginning ("first", "originally") the oldest; otherwise
//!   newer and more important facts first, gently;
//! - `embeddings` (feature `embeddings`): cosine similarity of MiniLM sentence vectors of the
//!   question and each candidate; in a small memory it also puts forward the nearest facts.
//!
//! `time`, `speaker`, `neighbours`, `proximity`, `session` and `recency` only reorder what the text (or the entities)
//! found: alone they find nothing, by design.

use std::collections::{HashMap, HashSet};

use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use crate::store::{FACT_SELECT, scope_list};
use crate::text::{
    DateRef, Lean, TimeRef, date_ref, fts_query, lean, normalise_name, query_words, time_ref,
    timestamp_date, words,
};
use crate::{Age, Error, Fact, GameTime, MemoryStore, Reader, confidence};

/// Which signals the ranker uses, and how much each weighs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    pub bm25: f64,
    pub entities: f64,
    pub time: f64,
    pub speaker: f64,
    pub neighbours: f64,
    pub recency: f64,
    /// Question words said close together in a fact, added to its BM25 (before normalising).
    #[serde(default)]
    pub proximity: f64,
    /// A candidate's session as a whole: the sum of its best candidates (see `focus_sessions`).
    #[serde(default)]
    pub session: f64,
    /// Cosine similarity of MiniLM sentence vectors (feature `embeddings`, with an embedder
    /// attached; otherwise it finds nothing).
    pub embeddings: f64,
}

impl Signals {
    /// The shipped ranker. Weights chosen on the dev half of the recall benchmark
    /// (`examples/recall.rs`, BENCHMARKS.md); the test half was not used. `entities` weighs 0:
    /// on that set it did not help (the questions name people the text names too, so BM25
    /// finds them already, and lifting every fact about a name lifted its small talk with it:
    /// dev recall@10 0.619 → 0.608 at 0.2, 0.551 at 0.5); it stays built for aliases ("the
    /// old merchant") and the ablation. `embeddings` (1.0, chosen on the same half with the
    /// other weights fixed) counts only in a build with the feature and an embedder attached;
    /// elsewhere it adds nothing. `proximity` and `session`, and `speaker`, `neighbours`
    /// retuned, were chosen on two real conversations (LoCoMo 26 and 41) and checked on three
    /// others and on the generated dev half (BENCHMARKS.md "Recall on real conversations").
    pub const DEFAULT: Signals = Signals {
        bm25: 1.0,
        entities: 0.0,
        time: 1.0,
        speaker: 1.0,
        neighbours: 0.75,
        recency: 0.3,
        proximity: 1.0,
        session: 0.1,
        embeddings: 1.0,
    };

    /// Plain BM25: the baseline.
    pub const BM25_ONLY: Signals = Signals {
        bm25: 1.0,
        entities: 0.0,
        time: 0.0,
        speaker: 0.0,
        neighbours: 0.0,
        recency: 0.0,
        proximity: 0.0,
        session: 0.0,
        embeddings: 0.0,
    };

    /// Every weight zero but this one (named as in the fields).
    pub fn only(name: &str) -> Option<Signals> {
        let mut s = Signals {
            bm25: 0.0,
            ..Signals::BM25_ONLY
        };
        match name {
            "bm25" => s.bm25 = 1.0,
            "entities" => s.entities = 1.0,
            "time" => s.time = 1.0,
            "speaker" => s.speaker = 1.0,
            "neighbours" => s.neighbours = 1.0,
            "recency" => s.recency = 1.0,
            "proximity" => s.proximity = 1.0,
            "session" => s.session = 1.0,
            "embeddings" => s.embeddings = 1.0,
            _ => return None,
        }
        Some(s)
    }
}

impl Default for Signals {
    fn default() -> Self {
        Signals::DEFAULT
    }
}

/// A question to memory.
#[derive(Clone, Debug)]
pub struct Query {
    pub text: String,
    pub reader: Reader,
    pub top_k: usize,
    /// "Now": ages, "last session" and confidence are counted from here.
    pub now: GameTime,
    /// As the memory stood at the end of this session: later facts unseen, facts closed later
    /// still true.
    pub at_session: Option<u32>,
    pub signals: Signals,
}

impl Query {
    pub fn new(text: impl Into<String>, reader: Reader, now: GameTime) -> Query {
        Query {
            text: text.into(),
            reader,
            top_k: 5,
            now,
            at_session: None,
            signals: Signals::DEFAULT,
        }
    }
}

/// One recalled fact.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hit {
    pub fact: Fact,
    /// How well it answers the question (ranking score, not truth).
    pub score: f64,
    /// How sure the rememberer is of it: source authority and age.
    pub confidence: f64,
    /// When it was formed, for people: "3 sessions ago, day 15".
    pub formed_at: String,
    /// Where it came from, for people: "session 5 GM narration".
    pub source: String,
}

/// Words for when a memory formed, relative to now.
pub fn formed_at(at: GameTime, now: GameTime) -> String {
    let ago = now.session.saturating_sub(at.session);
    let when = match ago {
        0 => format!("this session, turn {}", at.turn),
        1 => format!("last session (session {}), turn {}", at.session, at.turn),
        n => format!(
            "{n} sessions ago (session {}), turn {}",
            at.session, at.turn
        ),
    };
    match at.day {
        Some(d) => format!("{when}, day {d}"),
        None => when,
    }
}

/// How many facts each signal may put forward.
const CANDIDATES: usize = 100;
/// How many postings of one word BM25 reads: its newest. A word in more facts than this is
/// common and weighs little; reading all of it made every recall grow with the campaign (a
/// word the GM uses every turn, at turn 1,000), where now a recall costs the same at any size.
const POSTINGS: usize = 512;
/// How many of an entity's links (newest first) the entity signal reads.
const ENTITY_LINKS: usize = 2_000;
/// How many of the best candidates bring in the lines around them.
const NEIGHBOUR_SOURCES: usize = 5;
/// How many lines each side of a source it brings in (a line further away borrows under
/// an eighth of its score).
const NEIGHBOUR_SPAN: usize = 3;
/// How much less a fact borrows from a turn-mate for each line between them.
const NEIGHBOUR_DECAY: f64 = 0.5;
/// How much an AI's own lines are lifted, as a share of a named speaker's lift: a player
/// remembers its own plan (in play, its plan about the drone ranked under the GM's answer
/// about the docking bay, which matched no word of the question). Not measured on a
/// benchmark: neither set is read as an AI (LoCoMo as everyone, the generated set as the
/// party), so their figures do not move.
const OWN_LINES: f64 = 0.5;
/// How many of a session's best candidates make its score for the session focus.
const SESSION_BEST: usize = 3;
/// The recency prior's share when the question does not lean to a time.
const PRIOR: f64 = 1.0;
/// BM25's parameters. FTS5 sets k1 = 1.2; 0.8 (a repeated word counts for less) was better on
/// both the generated campaign and the real conversations it was tuned on (LoCoMo recall@10
/// 0.745 → 0.754, generated dev 0.631 → 0.633, its recall@5 0.510 → 0.528).
const K1: f64 = 0.8;
const B: f64 = 0.75;

/// One question word as BM25 ranks with it: (word, IDF, posting list ascending).
type Term<'w> = (&'w str, f64, Vec<i64>);

/// What the ranker needs of a candidate fact (the full fact is read for the hits only).
struct Meta {
    session: u32,
    turn: u32,
    day: Option<u32>,
    importance: f64,
    speaker: String,
    text: String,
}

/// One candidate's signal values, each 0–1.
#[derive(Clone, Copy, Default)]
struct Values {
    bm25: f64,
    entities: f64,
    time: f64,
    embeddings: f64,
}

impl MemoryStore {
    /// The facts that best answer a question, best first; empty when nothing is known.
    ///
    /// Each signal puts forward its best facts the reader may see; the candidates are scored
    /// on every signal, fused, and only the best `top_k` are read in full.
    pub fn search(&self, q: &Query) -> Result<Vec<Hit>, Error> {
        self.search_counting(q, &mut Work::default())
    }

    /// [`MemoryStore::search`], counting its work (the tests hold it linear in the candidates).
    fn search_counting(&self, q: &Query, work: &mut Work) -> Result<Vec<Hit>, Error> {
        let s = q.signals;
        let filter = self.visibility(q);
        let mut seen = Seen::default();
        // A calendar date ("on 3 June, 2023") belongs to the time signal, not the text.
        let dated = if s.time > 0.0 {
            date_ref(&q.text)
        } else {
            None
        };
        let mut values: HashMap<i64, Values> = HashMap::new();
        if s.bm25 > 0.0 {
            let mut qw = query_words(&q.text);
            if let Some((_, named)) = &dated {
                qw.retain(|w| !named.contains(w));
            }
            for (id, v) in self.bm25(&qw, s.proximity, &filter, &mut seen)? {
                values.entry(id).or_default().bm25 = v;
            }
        }
        if s.entities > 0.0 {
            for (id, v) in self.entity_candidates(&q.text, &filter, &mut seen)? {
                values.entry(id).or_default().entities = v;
            }
        }
        let when = if s.time > 0.0 {
            time_ref(&q.text, q.now.session, q.now.day)
        } else {
            None
        };
        if let Some(t) = when {
            for id in self.time_candidates(t, &filter, &mut seen)? {
                values.entry(id).or_default();
            }
        }
        let held = match &dated {
            Some((date, _)) => self.sessions_held_on(*date, &values, &seen)?,
            None => Vec::new(),
        };
        // A day names one session: all of it comes forward, as "session 4" does.
        if dated.as_ref().is_some_and(|d| d.0.day.is_some()) {
            for n in &held {
                for id in self.time_candidates(TimeRef::Session(*n), &filter, &mut seen)? {
                    values.entry(id).or_default();
                }
            }
        }
        #[cfg(feature = "embeddings")]
        if s.embeddings > 0.0 {
            self.embedding_values(&q.text, &filter, &mut seen, &mut values)?;
        }
        if values.is_empty() {
            return Ok(Vec::new());
        }
        mark_time(when, &held, &seen, &mut values);
        let mut ranked = content(q, &values);
        if s.neighbours > 0.0 {
            self.lend_to_neighbours(&mut ranked, s.neighbours, &filter, &mut seen, work)?;
        }
        work.fetched = seen.fetched;
        if s.session > 0.0 {
            focus_sessions(&mut ranked, s.session, &seen);
        }
        let ranked = speaker_and_recency(q, ranked, &seen);
        self.hits(q, ranked)
    }

    /// Facts linked to an entity the question names, scored by the share of those entities
    /// they link.
    fn entity_candidates(
        &self,
        question: &str,
        filter: &str,
        seen: &mut Seen,
    ) -> Result<Vec<(i64, f64)>, Error> {
        let ents = self.entities_named(question)?;
        if ents.is_empty() {
            return Ok(Vec::new());
        }
        let mut counts: HashMap<i64, u32> = HashMap::new();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT fact FROM memory_fact_entities WHERE entity = ?1
                 ORDER BY fact DESC LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        for e in &ents {
            let rows = stmt
                .query_map(rusqlite::params![e, ENTITY_LINKS as i64], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(|e| self.err(e))?;
            for id in rows {
                *counts.entry(id.map_err(|e| self.err(e))?).or_default() += 1;
            }
        }
        let n = ents.len() as f64;
        let mut ranked: Vec<(i64, f64)> = counts
            .into_iter()
            .map(|(id, c)| (id, f64::from(c) / n))
            .collect();
        self.best_visible(&mut ranked, filter, seen)
    }

    /// The most important facts of the time the question asks about (every candidate from
    /// then is lifted later, in [`mark_time`]).
    fn time_candidates(
        &self,
        t: TimeRef,
        filter: &str,
        seen: &mut Seen,
    ) -> Result<Vec<i64>, Error> {
        let (cond, lo, hi) = match t {
            TimeRef::Session(n) => ("f.session BETWEEN ?1 AND ?2", n, n),
            TimeRef::Days(a, b) => ("f.day BETWEEN ?1 AND ?2", a, b),
        };
        let sql = format!(
            "SELECT f.id, f.importance FROM memory_facts f WHERE {cond} {filter}
             ORDER BY f.importance DESC, f.id LIMIT {CANDIDATES}"
        );
        let ids: Vec<i64> = self
            .pairs(&sql, rusqlite::params![lo, hi])?
            .into_iter()
            .map(|p| p.0)
            .collect();
        seen.fetch(self, &ids, filter)?;
        Ok(ids)
    }

    /// The sessions among the candidates' that were held on a calendar date (their episodes'
    /// timestamps): one lookup per session, through the first episode of one of its facts.
    fn sessions_held_on(
        &self,
        date: DateRef,
        values: &HashMap<i64, Values>,
        seen: &Seen,
    ) -> Result<Vec<u32>, Error> {
        let mut sessions: HashMap<u32, i64> = HashMap::new();
        for id in values.keys() {
            if let Some(Some(m)) = seen.meta.get(id) {
                sessions.entry(m.session).or_insert(*id);
            }
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT e.timestamp FROM memory_facts f
                 JOIN memory_episodes e ON e.id = json_extract(f.episode_ids, '$[0]')
                 WHERE f.id = ?1",
            )
            .map_err(|e| self.err(e))?;
        let mut held = Vec::new();
        for (session, fact) in sessions {
            let ts: Option<String> = stmt
                .query_row([fact], |r| r.get(0))
                .optional()
                .map_err(|e| self.err(e))?;
            if ts
                .as_deref()
                .and_then(timestamp_date)
                .is_some_and(|d| date.matches(d))
            {
                held.push(session);
            }
        }
        held.sort_unstable();
        Ok(held)
    }

    /// Cosine similarity of the question's sentence vector with every candidate (and, in a
    /// small memory, the nearest facts as candidates too).
    #[cfg(feature = "embeddings")]
    fn embedding_values(
        &self,
        question: &str,
        filter: &str,
        seen: &mut Seen,
        values: &mut HashMap<i64, Values>,
    ) -> Result<(), Error> {
        let Some(qv) = self.question_vector(question)? else {
            return Ok(());
        };
        let (rows, _) = self.fts_totals()?;
        let near = self.nearest(&qv, filter, rows, CANDIDATES)?;
        let ids: Vec<i64> = near.iter().map(|n| n.0).collect();
        seen.fetch(self, &ids, filter)?;
        for id in ids {
            values.entry(id).or_default();
        }
        let ids: Vec<i64> = values.keys().copied().collect();
        // Normalised like BM25: the most similar candidate scores 1 (sentence cosines sit in a
        // narrow band, so raw values barely separate the answer from the rest).
        let cos = self.cosines(&qv, &ids)?;
        let top = cos.values().copied().fold(0.0f64, f64::max).max(1e-9);
        for (id, c) in cos {
            if let Some(v) = values.get_mut(&id) {
                v.embeddings = (c / top).max(0.0);
            }
        }
        Ok(())
    }

    /// Neighbouring lines: the best candidates bring in the lines said just before and after
    /// them in their turn, and every candidate borrows from the best of its turn, less the
    /// further apart they were said (the answer is often the next line: "She spent twenty
    /// years…" after the line that names her).
    ///
    /// Linear in the candidates, whatever a turn holds (an imported session without turn
    /// numbers is one turn of thousands of facts): a source reads at most `NEIGHBOUR_SPAN`
    /// lines each side, and the borrowing is two sweeps over each turn's candidates in order,
    /// not a comparison of every pair (which cost 83% of a question at 100k notes).
    fn lend_to_neighbours(
        &self,
        ranked: &mut Vec<(f64, i64)>,
        weight: f64,
        filter: &str,
        seen: &mut Seen,
        work: &mut Work,
    ) -> Result<(), Error> {
        ranked.sort_by(best_first);
        let sources: Vec<(i64, u32, u32)> = ranked
            .iter()
            .take(NEIGHBOUR_SOURCES)
            .filter(|r| r.0 > 0.0)
            .filter_map(|r| {
                let m = seen.meta.get(&r.1)?.as_ref()?;
                Some((r.1, m.session, m.turn))
            })
            .collect();
        let mut known: HashSet<i64> = ranked.iter().map(|r| r.1).collect();
        let mut extra: Vec<i64> = Vec::new();
        for (id, session, turn) in sources {
            for id in self.turn_mates(id, session, turn, filter)? {
                if known.insert(id) {
                    extra.push(id);
                }
            }
        }
        seen.fetch(self, &extra, filter)?;
        ranked.extend(extra.into_iter().map(|id| (0.0, id)));

        let mut by_turn: HashMap<(u32, u32), Vec<(i64, f64)>> = HashMap::new();
        for (score, id) in ranked.iter() {
            if let Some(Some(m)) = seen.meta.get(id) {
                by_turn
                    .entry((m.session, m.turn))
                    .or_default()
                    .push((*id, *score));
            }
        }
        let mut lent: HashMap<i64, f64> = HashMap::with_capacity(ranked.len());
        for list in by_turn.values_mut() {
            list.sort_by_key(|e| e.0);
            lent.extend(borrowings(list, &mut work.lending_steps));
        }
        for (score, id) in ranked.iter_mut() {
            let borrowed = lent.get(id).copied().unwrap_or(0.0);
            *score += weight * (borrowed - *score).max(0.0);
        }
        Ok(())
    }

    /// Up to `NEIGHBOUR_SPAN` facts of the same turn the reader may see, on each side of `id`.
    fn turn_mates(
        &self,
        id: i64,
        session: u32,
        turn: u32,
        filter: &str,
    ) -> Result<Vec<i64>, Error> {
        let mut out = Vec::new();
        for (cmp, order) in [("<", "DESC"), (">", "ASC")] {
            let sql = format!(
                "SELECT f.id, 0.0 FROM memory_facts f
                 WHERE f.session = ?1 AND f.turn = ?2 AND f.id {cmp} ?3 {filter}
                 ORDER BY f.id {order} LIMIT {NEIGHBOUR_SPAN}"
            );
            let rows = self.pairs(&sql, rusqlite::params![session, turn, id])?;
            out.extend(rows.into_iter().map(|p| p.0));
        }
        Ok(out)
    }

    /// The best `top_k` of the ranked candidates, read in full.
    fn hits(&self, q: &Query, mut ranked: Vec<(f64, i64)>) -> Result<Vec<Hit>, Error> {
        ranked.retain(|(score, _)| *score > 0.0);
        ranked.sort_by(best_first);
        ranked.truncate(q.top_k);
        let ids: Vec<i64> = ranked.iter().map(|r| r.1).collect();
        let mut facts: HashMap<i64, Fact> = self
            .facts_by_id(&ids)?
            .into_iter()
            .map(|f| (f.id, f))
            .collect();
        Ok(ranked
            .into_iter()
            .filter_map(|(score, id)| {
                let fact = facts.remove(&id)?;
                let age = Age {
                    sessions: q.now.session.saturating_sub(fact.at.session),
                    days: match (q.now.day, fact.at.day) {
                        (Some(n), Some(d)) => Some(n.saturating_sub(d)),
                        _ => None,
                    },
                };
                Some(Hit {
                    confidence: confidence(fact.source, age),
                    formed_at: formed_at(fact.at, q.now),
                    source: format!("session {} {}", fact.at.session, fact.source.describe()),
                    score,
                    fact,
                })
            })
            .collect())
    }

    /// BM25 over fact text, normalised so the best visible fact scores 1.
    ///
    /// FTS5's own `bm25()` costs about a microsecond and a half per matching row, and a common
    /// word matches thousands of facts in a long campaign. So the ranking is done here, in two
    /// steps: each word's posting list (row ids only, cheap to read) gives its document
    /// frequency and a first score, the sum of the IDFs of the words a fact contains; the best
    /// of those the reader may see are then scored with the full BM25 formula (FTS5's IDF,
    /// k1 = 0.8, b = 0.75), counting term frequency and length in their text.
    fn bm25(
        &self,
        words: &[String],
        proximity_weight: f64,
        filter: &str,
        seen: &mut Seen,
    ) -> Result<Vec<(i64, f64)>, Error> {
        // FTS5's own statistics: its row count and total tokens (the averages record), and
        // each fact's length in tokens (docsize), as its bm25() reads them.
        let (rows, tokens) = self.fts_totals()?;
        let n = rows.max(1) as f64;
        let terms = self.postings(words, n)?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut first = idf_sums(&terms);
        // Full BM25 for the best of them the reader may see (a margin over CANDIDATES, as
        // length and repeats can reorder them).
        let avg_len = (tokens as f64 / n).max(1.0);
        let best = self.best_visible_n(&mut first, filter, seen, CANDIDATES * 2)?;
        let mut scored: Vec<(i64, f64)> = best
            .into_iter()
            .filter_map(|(id, _)| {
                let m = seen.meta.get(&id)?.as_ref()?;
                Some((
                    id,
                    full_bm25(id, &m.text, &terms, avg_len, proximity_weight),
                ))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        scored.truncate(CANDIDATES);
        let top = scored.first().map(|r| r.1).unwrap_or(1.0).max(1e-9);
        Ok(scored.into_iter().map(|(id, v)| (id, v / top)).collect())
    }

    /// BM25's first step: the question's words some fact contains, each with its IDF among
    /// the `n` facts and its posting list (ascending), newest [`POSTINGS`] only: a common word
    /// reads no more rows than a rare one.
    fn postings<'w>(&self, words: &'w [String], n: f64) -> Result<Vec<Term<'w>>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        let newest = self.newest_fact_id()?;
        let mut terms: Vec<Term> = Vec::new();
        for w in words {
            let Some(m) = fts_query(std::slice::from_ref(w)) else {
                continue;
            };
            let mut ids = stmt
                .query_map(rusqlite::params![m, POSTINGS as i64], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(|e| self.err(e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.err(e))?;
            ids.reverse();
            let Some(oldest) = ids.first().copied() else {
                continue;
            };
            let df = if ids.len() < POSTINGS {
                ids.len() as f64
            } else {
                // Only the newest postings were read: the word's frequency in the window they
                // span stands for its frequency in the whole memory (ids grow with time).
                let window = (newest - oldest + 1).max(1) as f64;
                (ids.len() as f64 * n / window).clamp(ids.len() as f64, n)
            };
            let idf = ((n - df + 0.5) / (df + 0.5)).ln().max(1e-6);
            terms.push((w.as_str(), idf, ids));
        }
        Ok(terms)
    }

    /// The latest session and in-game day any fact (closed ones too) formed in: `None` each
    /// when nothing is known. Two index lookups, the same at any size (reading every fact for
    /// this cost 75 ms of a question at 10,000 facts).
    pub fn latest(&self) -> Result<(Option<u32>, Option<u32>), Error> {
        let max = |sql: &str| -> Result<Option<u32>, Error> {
            self.conn
                .query_row(sql, [], |r| r.get(0))
                .map_err(|e| self.err(e))
        };
        Ok((
            max("SELECT MAX(session) FROM memory_facts")?,
            max("SELECT MAX(day) FROM memory_facts WHERE day IS NOT NULL")?,
        ))
    }

    /// The newest fact's id (0 in an empty memory).
    fn newest_fact_id(&self) -> Result<i64, Error> {
        self.conn
            .query_row("SELECT IFNULL(MAX(id), 0) FROM memory_facts", [], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))
    }

    /// FTS5's row count and total tokens, from its averages record.
    fn fts_totals(&self) -> Result<(u64, u64), Error> {
        let block: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT block FROM memory_fts_data WHERE id = 1")
            .and_then(|mut st| st.query_row([], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))?;
        let Some(block) = block else {
            return Ok((0, 0));
        };
        let Some((rows, used)) = varint(&block) else {
            return Ok((0, 0));
        };
        let tokens = block.get(used..).and_then(varint).map_or(0, |t| t.0);
        Ok((rows, tokens))
    }

    /// The best `CANDIDATES` of a scored list that the reader may see, best first.
    fn best_visible(
        &self,
        ranked: &mut Vec<(i64, f64)>,
        filter: &str,
        seen: &mut Seen,
    ) -> Result<Vec<(i64, f64)>, Error> {
        self.best_visible_n(ranked, filter, seen, CANDIDATES)
    }

    /// The best `want` of a scored list (ties: newest first) that the reader may see, best
    /// first; reads only as many as it needs.
    fn best_visible_n(
        &self,
        ranked: &mut Vec<(i64, f64)>,
        filter: &str,
        seen: &mut Seen,
        want: usize,
    ) -> Result<Vec<(i64, f64)>, Error> {
        let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
        let mut out = Vec::with_capacity(want);
        let mut rest: &mut [(i64, f64)] = ranked.as_mut_slice();
        while out.len() < want && !rest.is_empty() {
            // Take the next block of the best (a partial sort), keep the visible ones.
            let block = (want - out.len()).max(32) * 3 / 2;
            let (head, tail) = if rest.len() > block {
                rest.select_nth_unstable_by(block, order);
                rest.split_at_mut(block)
            } else {
                let len = rest.len();
                rest.split_at_mut(len)
            };
            head.sort_by(order);
            let ids: Vec<i64> = head.iter().map(|r| r.0).collect();
            seen.fetch(self, &ids, filter)?;
            for r in head.iter() {
                if out.len() < want && matches!(seen.meta.get(&r.0), Some(Some(_))) {
                    out.push(*r);
                }
            }
            rest = tail;
        }
        Ok(out)
    }

    /// The SQL condition for what this query may see, starting with " AND".
    fn visibility(&self, q: &Query) -> String {
        let mut f = String::new();
        if let Some(scopes) = q.reader.scopes() {
            f.push_str(&format!(" AND f.scope IN ({})", scope_list(&scopes)));
        }
        match q.at_session {
            Some(n) => f.push_str(&format!(
                " AND f.session <= {n} AND (f.invalid_session IS NULL OR f.invalid_session > {n})"
            )),
            None => f.push_str(" AND f.invalid_session IS NULL"),
        }
        f
    }

    fn pairs<P: rusqlite::Params>(&self, sql: &str, p: P) -> Result<Vec<(i64, f64)>, Error> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(p, |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    fn facts_by_id(&self, ids: &[i64]) -> Result<Vec<Fact>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.query_facts(
            &format!("{FACT_SELECT} WHERE f.id IN rarray(?1)"),
            [crate::store::id_array(ids)],
        )
    }

    /// Entities the question names, by any of their known names (one to three words).
    fn entities_named(&self, text: &str) -> Result<Vec<i64>, Error> {
        let ws = words(text);
        let mut grams: Vec<String> = Vec::new();
        for n in 1..=3 {
            for w in ws.windows(n) {
                let g = normalise_name(&w.join(" "));
                if !(g.is_empty() || grams.contains(&g) || n == 1 && crate::text::is_stopword(&g)) {
                    grams.push(g);
                }
            }
        }
        if grams.is_empty() {
            return Ok(Vec::new());
        }
        let list = grams
            .iter()
            .map(|g| format!("'{}'", g.replace('\'', "''")))
            .collect::<Vec<_>>()
            .join(",");
        let sql =
            format!("SELECT DISTINCT entity, 0.0 FROM memory_aliases WHERE alias IN ({list})");
        Ok(self.pairs(&sql, [])?.into_iter().map(|p| p.0).collect())
    }
}

/// Candidates' metadata read so far: `None` for a fact the reader may not see.
#[derive(Default)]
struct Seen {
    meta: HashMap<i64, Option<Meta>>,
    /// How many facts' metadata was read.
    fetched: usize,
}

impl Seen {
    /// Read what the ranker needs of these facts (those not read yet), under the filter.
    fn fetch(&mut self, store: &MemoryStore, ids: &[i64], filter: &str) -> Result<(), Error> {
        let todo: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| !self.meta.contains_key(id))
            .collect();
        if todo.is_empty() {
            return Ok(());
        }
        self.fetched += todo.len();
        // The ids go in as one array parameter, not as SQL text: a list of 300 ids written
        // out was parsed anew at every call (a tenth of a question's CPU at 100k facts).
        let sql = format!(
            "SELECT f.id, f.session, f.turn, f.importance, lower(f.speaker), f.text, f.day
             FROM memory_facts f WHERE f.id IN rarray(?1) {filter}"
        );
        let mut stmt = store.conn.prepare_cached(&sql).map_err(|e| store.err(e))?;
        let rows = stmt
            .query_map([crate::store::id_array(&todo)], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    Meta {
                        session: r.get(1)?,
                        turn: r.get(2)?,
                        importance: r.get(3)?,
                        speaker: r.get(4)?,
                        text: r.get(5)?,
                        day: r.get(6)?,
                    },
                ))
            })
            .map_err(|e| store.err(e))?;
        for id in ids {
            self.meta.entry(*id).or_insert(None);
        }
        for row in rows {
            let (id, m) = row.map_err(|e| store.err(e))?;
            self.meta.insert(id, Some(m));
        }
        Ok(())
    }
}

/// What one search did, counted: the tests hold it linear in the candidates.
#[derive(Debug, Default)]
struct Work {
    /// Candidates whose metadata was read.
    fetched: usize,
    /// Steps of the neighbours' sweeps.
    lending_steps: usize,
}

/// Higher score first; ties: the newer fact first.
fn best_first(a: &(f64, i64), b: &(f64, i64)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(b.1.cmp(&a.1))
}

/// Lift candidates from the time the question names: a session, in-game days, or sessions
/// held on the calendar date it names (`held`).
fn mark_time(when: Option<TimeRef>, held: &[u32], seen: &Seen, values: &mut HashMap<i64, Values>) {
    if when.is_none() && held.is_empty() {
        return;
    }
    for (id, v) in values.iter_mut() {
        let Some(Some(m)) = seen.meta.get(id) else {
            continue;
        };
        let inside = held.contains(&m.session)
            || match when {
                Some(TimeRef::Session(n)) => m.session == n,
                Some(TimeRef::Days(a, b)) => m.day.is_some_and(|d| (a..=b).contains(&d)),
                None => false,
            };
        if inside {
            v.time = 1.0;
        }
    }
}

/// What each candidate says that answers the question: text, entities, time, vectors.
fn content(q: &Query, values: &HashMap<i64, Values>) -> Vec<(f64, i64)> {
    let s = q.signals;
    values
        .iter()
        .map(|(id, v)| {
            let c = s.bm25 * v.bm25
                + s.entities * v.entities
                + s.time * v.time
                + s.embeddings * v.embeddings;
            (c, *id)
        })
        .collect()
}

/// The fused score: what a candidate says (with what its neighbours lent it), lifted when the
/// question names its speaker, plus recency. The speaker comes after the neighbours: the line
/// that asks ("How was the camping trip, Mel?") lends to the answer what it matched, and the
/// answer is lifted as Mel's (measured on real conversations: 0.69 → 0.73).
///
/// When the question leans to the present or the beginning, recency ranks by time, newest (or
/// oldest) first; otherwise it is a gentle prior for newer and more important facts.
fn speaker_and_recency(q: &Query, ranked: Vec<(f64, i64)>, seen: &Seen) -> Vec<(f64, i64)> {
    let s = q.signals;
    // Who said it only matters together with what was said: a speaker's facts are lifted
    // where other signals found them, never added on their own (measured: adding them crowded
    // out the answer with small talk).
    let asked = if s.speaker > 0.0 {
        words(&q.text)
    } else {
        Vec::new()
    };
    let lean = lean(&q.text);
    let span = {
        let keys = ranked
            .iter()
            .filter_map(|r| seen.meta.get(&r.1)?.as_ref().map(time_key));
        let (lo, hi) = keys.fold((u64::MAX, 0), |(lo, hi), k| (lo.min(k), hi.max(k)));
        (lo, hi.max(lo))
    };
    let max_session = q.now.session.max(1) as f64;
    // An AI's own lines: the reader is the subject of its recall ("what do I remember of…").
    let me = match &q.reader {
        Reader::Player(a) | Reader::Character(a) => Some(a.to_lowercase()),
        _ => None,
    };
    ranked
        .into_iter()
        .filter_map(|(content, id)| {
            let m = seen.meta.get(&id)?.as_ref()?;
            let recency = match lean {
                Some(l) => {
                    let x = (time_key(m) - span.0) as f64 / (span.1 - span.0).max(1) as f64;
                    if l == Lean::Latest { x } else { 1.0 - x }
                }
                None => (f64::from(m.session) / max_session * 0.5 + m.importance * 0.5) * PRIOR,
            };
            let named = m.speaker != "gm" && asked.contains(&m.speaker);
            let own = me.as_deref() == Some(m.speaker.as_str());
            let lift = match (named, own) {
                (true, _) => 1.0 + s.speaker,
                (false, true) => 1.0 + s.speaker * OWN_LINES,
                (false, false) => 1.0,
            };
            Some((content * lift + s.recency * recency, id))
        })
        .collect()
}

/// What each fact of one turn (in the order said) borrows from the best of the others: its
/// score, halved for each candidate between them (lines that are not candidates are not
/// counted: halving per line said between measured 0.794 → 0.787 on LoCoMo's tuned split).
/// Two sweeps, one each way, carrying the best so far: linear in the turn's candidates
/// (`steps` counts the lines visited).
fn borrowings(turn: &[(i64, f64)], steps: &mut usize) -> Vec<(i64, f64)> {
    let mut lent: Vec<(i64, f64)> = turn.iter().map(|e| (e.0, 0.0)).collect();
    sweep(lent.iter_mut().zip(turn), steps);
    sweep(lent.iter_mut().zip(turn).rev(), steps);
    lent
}

/// One direction of [`borrowings`]: each line takes the best of the lines already passed,
/// halved for each candidate between.
fn sweep<'a>(lines: impl Iterator<Item = (&'a mut (i64, f64), &'a (i64, f64))>, steps: &mut usize) {
    // The best the lines passed so far lend to the next line.
    let mut carry = 0.0f64;
    for (out, &(_, score)) in lines {
        *steps += 1;
        out.1 = out.1.max(carry);
        carry = (carry * NEIGHBOUR_DECAY).max(score);
    }
}

/// A fact's place in the campaign's time, for ordering.
fn time_key(m: &Meta) -> u64 {
    u64::from(m.session) << 32 | u64::from(m.turn)
}

/// BM25's first score, for every fact in the terms' posting lists: the sum of the IDFs of the
/// words it contains, found by merging the sorted lists (ascending by id).
fn idf_sums(terms: &[Term]) -> Vec<(i64, f64)> {
    let mut first: Vec<(i64, f64)> = Vec::new();
    let mut heads = vec![0usize; terms.len()];
    loop {
        let mut min: Option<i64> = None;
        for (t, h) in terms.iter().zip(&heads) {
            if let Some(id) = t.2.get(*h) {
                min = Some(min.map_or(*id, |m: i64| m.min(*id)));
            }
        }
        let Some(id) = min else { break };
        let mut sum = 0.0;
        for (t, h) in terms.iter().zip(heads.iter_mut()) {
            if t.2.get(*h) == Some(&id) {
                sum += t.1;
                *h += 1;
            }
        }
        first.push((id, sum));
    }
    first
}

/// Fact `id`'s full BM25 score (FTS5's IDF, k1 = [`K1`], b = [`B`]) from its `text`: term
/// frequency and length counted there, as FTS5 would, plus `proximity_weight` times how close
/// together the question's words stand in it.
fn full_bm25(id: i64, text: &str, terms: &[Term], avg_len: f64, proximity_weight: f64) -> f64 {
    let tokens = words_of(text);
    // Its length in tokens, split as FTS5's unicode61 tokenizer splits.
    let len = tokens.len() as f64 / avg_len;
    terms
        .iter()
        .filter(|t| t.2.binary_search(&id).is_ok())
        .map(|(w, idf, _)| {
            let stem = rough_stem(w);
            let tf = tokens
                .iter()
                .filter(|t| rough_stem(t) == stem)
                .count()
                .max(1) as f64;
            idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len))
        })
        .sum::<f64>()
        + proximity_weight * proximity(&tokens, terms)
}

/// Different question words said close together ("mental health", "pride parade" against a
/// line that says "pride" early and "parade" late): the sum, over each pair of consecutive
/// matches of different words in the text, of the smaller IDF over the squared distance.
/// Linear in the fact's words.
fn proximity(tokens: &[String], terms: &[(&str, f64, Vec<i64>)]) -> f64 {
    let stems: Vec<(&str, f64)> = terms.iter().map(|t| (rough_stem(t.0), t.1)).collect();
    // The last matched word: (its position, which question word).
    let mut last: Option<(usize, usize)> = None;
    let mut bonus = 0.0;
    for (pos, tok) in tokens.iter().enumerate() {
        let st = rough_stem(tok);
        let Some(ti) = stems.iter().position(|s| s.0 == st) else {
            continue;
        };
        if let Some((p, t)) = last
            && t != ti
        {
            let d = (pos - p) as f64;
            let idf = stems
                .get(t)
                .map_or(0.0, |s| s.1)
                .min(stems.get(ti).map_or(0.0, |s| s.1));
            bonus += idf / (d * d);
        }
        last = Some((pos, ti));
    }
    bonus
}

/// Session focus: every candidate is lifted by how well its session as a whole answers (the
/// sum of its best `SESSION_BEST` candidates, the best session's sum counting 1). An answer
/// is often told over several lines of one conversation, and a line of the session that
/// talked about it beats an equal line of a session that mentioned it once.
fn focus_sessions(ranked: &mut [(f64, i64)], weight: f64, seen: &Seen) {
    let mut by_session: HashMap<u32, Vec<f64>> = HashMap::new();
    for (score, id) in ranked.iter() {
        if let Some(Some(m)) = seen.meta.get(id) {
            by_session.entry(m.session).or_default().push(*score);
        }
    }
    let sums: HashMap<u32, f64> = by_session
        .into_iter()
        .map(|(session, mut scores)| {
            scores.sort_by(|a, b| b.total_cmp(a));
            (session, scores.iter().take(SESSION_BEST).sum::<f64>())
        })
        .collect();
    let best = sums.values().copied().fold(0.0f64, f64::max).max(1e-9);
    for (score, id) in ranked.iter_mut() {
        if let Some(Some(m)) = seen.meta.get(id)
            && *score > 0.0
        {
            *score += weight * sums.get(&m.session).copied().unwrap_or(0.0) / best;
        }
    }
}

/// A SQLite varint (as FTS5 writes its statistics): the value and the bytes it took.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, byte) in b.iter().enumerate().take(9) {
        if i == 8 {
            return Some(((v << 8) | u64::from(*byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Words as FTS5's tokenizer splits them (apostrophes split words too), lowercased.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A rough stem, enough to count repeats of a word in one short fact ("offer", "offers",
/// "offered" alike); the match itself is FTS5's Porter stemmer.
fn rough_stem(w: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(stem) = w.strip_suffix(suffix)
            && stem.len() >= 3
        {
            return stem;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;
    use crate::{Episode, Scope, extract};

    const NAMES: [&str; 6] = ["Galvin", "Rhee", "Tamsin", "Vos", "Zara", "Orin"];
    const PLACES: [&str; 4] = ["the dock", "the bar", "the mine", "the bridge"];

    /// An imported session without turn numbers: `n` notes in one turn, the same few names and
    /// places in every line, and one exchange that answers a question only in its second line.
    fn one_turn_store(n: usize) -> MemoryStore {
        let mut store = MemoryStore::in_memory().unwrap();
        let answer_at = n / 2;
        let episodes: Vec<Episode> = (0..n)
            .map(|i| {
                let text = match i {
                    _ if i == answer_at => "Where did Tamsin hide the zircon key?".to_string(),
                    _ if i == answer_at + 1 => "Under the loose plank, behind the stove.".into(),
                    _ => format!(
                        "{} met {} at {} and traded crates.",
                        NAMES[i % 6],
                        NAMES[(i / 6) % 6],
                        PLACES[i % 4]
                    ),
                };
                Episode {
                    id: format!("n{i}"),
                    session: 1,
                    turn: 0,
                    day: None,
                    timestamp: String::new(),
                    speaker: "alex".into(),
                    text,
                    scope: Scope::Party,
                }
            })
            .collect();
        extract::import(&mut store, &episodes).unwrap();
        store
    }

    fn ask(store: &MemoryStore, text: &str) -> (Vec<Hit>, Work) {
        let mut q = Query::new(text, Reader::All, GameTime::default());
        q.top_k = 10;
        let mut work = Work::default();
        let hits = store.search_counting(&q, &mut work).unwrap();
        (hits, work)
    }

    /// The neighbours signal once compared every candidate with every other of its turn and
    /// read the whole turn of its best candidates: 83% of a question at 100k notes. Now the
    /// work is bounded by the candidates, whatever the turn holds.
    #[test]
    fn a_twenty_thousand_fact_turn_costs_what_a_small_one_does() {
        let store = one_turn_store(20_000);
        for question in [
            "What did Galvin trade at the dock?",
            "Who met Rhee?",
            "Where is the zircon key hidden?",
        ] {
            let (hits, work) = ask(&store, question);
            assert!(!hits.is_empty(), "{question}");
            // BM25's candidates (and the margin it reads), the time signal's, and the lines
            // around the best five.
            let bound = 3 * CANDIDATES + 2 * NEIGHBOUR_SOURCES * NEIGHBOUR_SPAN + 64;
            assert!(
                work.fetched <= bound,
                "{question}: read {} candidates, bound {bound}",
                work.fetched
            );
            assert!(
                work.lending_steps <= 2 * work.fetched,
                "{question}: {} lending steps for {} candidates",
                work.lending_steps,
                work.fetched
            );
        }
    }

    /// The line after a strong match comes with it, even in a turn of 20,000 lines.
    #[test]
    fn the_answer_in_the_next_line_is_found_in_a_huge_turn() {
        let store = one_turn_store(20_000);
        let (hits, _) = ask(&store, "Where is the zircon key hidden?");
        let texts: Vec<&str> = hits.iter().map(|h| h.fact.text.as_str()).collect();
        assert_eq!(
            texts.first(),
            Some(&"Where did Tamsin hide the zircon key?")
        );
        assert!(
            texts.contains(&"Under the loose plank, behind the stove."),
            "{texts:?}"
        );
    }

    #[test]
    fn a_line_borrows_from_the_best_of_its_turn_halved_per_line_between() {
        let turn = [(1, 0.0), (2, 1.0), (3, 0.0), (4, 0.0), (5, 0.25), (6, 0.0)];
        let mut steps = 0;
        let lent: Vec<f64> = borrowings(&turn, &mut steps)
            .into_iter()
            .map(|e| e.1)
            .collect();
        assert_eq!(steps, 2 * turn.len());
        // The pairwise definition: the best of score × 0.5^(lines between).
        let pairwise: Vec<f64> = (0..turn.len())
            .map(|i| {
                (0..turn.len())
                    .filter(|&j| j != i)
                    .map(|j| turn[j].1 * NEIGHBOUR_DECAY.powi(i.abs_diff(j) as i32 - 1))
                    .fold(0.0, f64::max)
            })
            .collect();
        assert_eq!(lent, pairwise);
        assert_eq!(lent, vec![1.0, 0.0625, 1.0, 0.5, 0.25, 0.25]);
    }
    /// Episodes of one speaker, one session each, held on the dates given.
    fn dated_store(sessions: &[(&str, &[&str])]) -> MemoryStore {
        let mut store = MemoryStore::in_memory().unwrap();
        let mut episodes = Vec::new();
        for (n, (date, lines)) in sessions.iter().enumerate() {
            for (i, text) in lines.iter().enumerate() {
                episodes.push(Episode {
                    id: format!("s{}:{i}", n + 1),
                    session: n as u32 + 1,
                    turn: 0,
                    day: None,
                    timestamp: format!("7:30 pm on {date}"),
                    speaker: "alex".into(),
                    text: text.to_string(),
                    scope: Scope::Party,
                });
            }
        }
        extract::import(&mut store, &episodes).unwrap();
        store
    }

    fn top_ids(store: &MemoryStore, text: &str, signals: Signals) -> Vec<String> {
        let mut q = Query::new(text, Reader::All, GameTime::default());
        q.top_k = 3;
        q.signals = signals;
        store
            .search(&q)
            .unwrap()
            .into_iter()
            .flat_map(|h| h.fact.episode_ids)
            .collect()
    }

    /// "On 3 June, 2023" names the session held that day (its episodes' timestamp), even when
    /// another session says the question's words more often.
    #[test]
    fn a_calendar_date_finds_the_session_held_that_day() {
        let store = dated_store(&[
            (
                "28 May, 2023",
                &["Market stall, market stall, every market stall."],
            ),
            (
                "3 June, 2023",
                &["At the market we found a brass compass at an old stall by the gate."],
            ),
            ("9 June, 2023", &["The market stall was shut."]),
        ]);
        let asked = "Which market stall did we visit on 3 June, 2023?";
        assert_eq!(
            top_ids(&store, asked, Signals::DEFAULT)
                .first()
                .map(String::as_str),
            Some("s2:0")
        );
        // Without the time signal the date is just words, and the rope wins.
        assert_ne!(
            top_ids(&store, asked, Signals::BM25_ONLY)
                .first()
                .map(String::as_str),
            Some("s2:0")
        );
        // A month names every session held in it.
        let june = top_ids(&store, "Which market stall in June 2023?", Signals::DEFAULT);
        assert_eq!(june.len(), 3);
        assert_eq!(june.last().map(String::as_str), Some("s1:0"), "{june:?}");
    }

    /// Two facts with the same words, the same length: the one that says them together first.
    #[test]
    fn question_words_said_together_rank_first() {
        let store = dated_store(&[(
            "1 May, 2023",
            &[
                "The pride parade downtown was loud and bright and very long.",
                "Pride was all we felt, then later came the long parade.",
            ],
        )]);
        let asked = "Where was the pride parade?";
        let with = Signals {
            proximity: 1.0,
            ..Signals::BM25_ONLY
        };
        assert_eq!(
            top_ids(&store, asked, with).first().map(String::as_str),
            Some("s1:0")
        );
    }

    /// A line of the session that talked about the question beats an equal line of a session
    /// that mentioned it once.
    #[test]
    fn the_session_that_talked_about_it_comes_first() {
        let store = dated_store(&[
            (
                "1 May, 2023",
                &[
                    "The reactor coolant leaked again today.",
                    "We played cards.",
                ],
            ),
            (
                "8 May, 2023",
                &[
                    "The reactor coolant leaked again tonight.",
                    "Vos patched the reactor with tape.",
                    "The coolant pump still rattles.",
                ],
            ),
        ]);
        let asked = "What happened with the reactor coolant?";
        let focus = Signals {
            session: 1.0,
            ..Signals::BM25_ONLY
        };
        assert_eq!(
            top_ids(&store, asked, focus).first().map(String::as_str),
            Some("s2:0")
        );
        // Alone, the newer of the equal lines comes first anyway: check the older session wins
        // when it is the one that talked about it.
        let store = dated_store(&[
            (
                "1 May, 2023",
                &[
                    "The reactor coolant leaked again tonight.",
                    "Vos patched the reactor with tape.",
                    "The coolant pump still rattles.",
                ],
            ),
            (
                "8 May, 2023",
                &[
                    "The reactor coolant leaked again today.",
                    "We played cards.",
                ],
            ),
        ]);
        assert_eq!(
            top_ids(&store, asked, focus).first().map(String::as_str),
            Some("s1:0")
        );
        assert_eq!(
            top_ids(&store, asked, Signals::BM25_ONLY)
                .first()
                .map(String::as_str),
            Some("s2:0")
        );
    }

    /// An AI recalls its own lines a little more readily than another's equal ones; a reader
    /// of everything has no "own".
    #[test]
    fn an_ai_recalls_its_own_plan_first() {
        let mut store = MemoryStore::in_memory().unwrap();
        let line = |id: &str, speaker: &str, text: &str| Episode {
            id: id.into(),
            session: 1,
            turn: 1,
            day: None,
            timestamp: String::new(),
            speaker: speaker.into(),
            text: text.into(),
            scope: Scope::Party,
        };
        let episodes = [
            line(
                "alex-plan",
                "alex",
                "We should talk the drone away from the fuel cells.",
            ),
            line(
                "bea-plan",
                "bea",
                "We should lure the drone away from the fuel cells.",
            ),
        ];
        extract::import(&mut store, &episodes).unwrap();
        let first = |reader: Reader| {
            let mut q = Query::new("the drone and the fuel cells", reader, GameTime::default());
            q.top_k = 2;
            store.search(&q).unwrap()[0].fact.episode_ids[0].clone()
        };
        assert_eq!(first(Reader::Player("alex".into())), "alex-plan");
        assert_eq!(first(Reader::Character("Alex".into())), "alex-plan");
        assert_eq!(first(Reader::Player("bea".into())), "bea-plan");
        // Read by everyone, the newer of two equal lines comes first.
        assert_eq!(first(Reader::All), "bea-plan");
    }
}
