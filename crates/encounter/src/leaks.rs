//! Secret checks of the GM's narration, before a player sees it (issue 17).
//!
//! Hidden goals, DCs, GM notes and NPCs' private memories must not reach a player's screen. The
//! GM (a model) knows them all, so its narration is read for them; a narration that leaks is
//! sent back for a rewrite with the [`Leak`]s as the reason, and [`withhold`] blanks the
//! sentences that say them when there is no time for one. The same pass catches narration that
//! decides what a player character does or feels.
//!
//! # What counts as a leak
//!
//! Words are compared lowercased, split at anything that is not a letter or digit, and lightly
//! stemmed (`-ing`, `-ed`, `-es`, `-s`, final `e`: "convinced" and "convince" match); numbers
//! written in words become digits ("fifteen", "twenty-one"). *Content words* are the words that
//! are not in a short list of English function words. Goals and DCs are also looked for in each
//! pair of neighbouring sentences (a secret split across a full stop).
//!
//! * **Goal**: the label said word for word (labels of two or more content words), its two
//!   content words in any order in one sentence, or 80 % of its distinct content words (labels
//!   of three or more). A one-word label ("Survive") cannot be told from ordinary narration and
//!   is not checked. A goal's id ("break_the_debt", "breakTheDebt") said as its words in a row.
//! * **DC**: a number stated as a difficulty: "DC 15", "DC15", "the DC is 15", "15 is the DC",
//!   "a difficulty of 15", "the target number is 15", "15 or better / higher / above", "you need
//!   a 15", "roll 15 or more", or a spec's DC beside its check's name or skill. Any such number
//!   is flagged, not only the spec's DCs (a made-up DC tells the players just as much); the
//!   detail names the check when the number is one of its DCs. Ordinary numbers ("15 guards",
//!   "you need 15 gold") are not DCs.
//! * **GM note / NPC memory / persona / check's note**: [`RUN`] content words in a row as they
//!   are in the text ([`CHECK_NOTE_RUN`] for a check's note, secret until the check succeeds;
//!   stopwords in between do not matter, so "the captain of the station is secretly working"
//!   matches "captain station secretly working…"), or (not for personas) a whole sentence of
//!   three or four content words. A paraphrase or a hint is not a leak; reading the text out is.
//! * **Deciding for a player character**: a sentence where a player character (or "you")
//!   chooses, feels or acts, by [`troupe_validator::gm::decides_for`].
//!
//! Sentences end at `.`, `!`, `?` and line breaks, as in `troupe_validator::gm`.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use serde::{Deserialize, Serialize};
use troupe_validator::gm::{decides_for, named_deeds};

/// Content words in a row that make a note read out. Five content words are about eight to
/// ten words of prose, as long as `troupe_validator::gm::repeats_note`'s eight raw words.
/// Tuned by the tests: six misses a note read out with every sixth content word swapped for a
/// synonym; four flags an ordinary line that names an NPC with one of the note's words
/// ("Captain Mirela Voss secretly hopes you leave").
pub const RUN: usize = 5;

/// What kind of thing a narration gave away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    /// A hidden goal's label.
    Goal,
    /// A difficulty stated as a number.
    Dc,
    /// The GM's private notes.
    GmNote,
    /// An NPC's private memory.
    NpcMemory,
    /// A prepared check's note (often what success reveals), before that check has succeeded.
    CheckNote,
    /// An NPC's persona: told through how the NPC acts and speaks, never pasted.
    Persona,
    /// Not a secret, checked in the same pass: the narration decides what a player character
    /// does or feels.
    DecidesForPc,
    /// Not a secret either: the narration tells an effect (a defeat, harm) that the scene
    /// engine did not apply.
    NotInScene,
}

/// The secrets of one encounter, as plain text (no dependency on the spec's types).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Secrets {
    goals: Vec<String>,
    goal_ids: Vec<String>,
    dcs: Vec<(String, i32)>,
    /// (check name, skill) of each DC, to catch a DC said beside the check it belongs to.
    dc_names: Vec<(String, Option<String>)>,
    notes: Vec<String>,
    check_notes: Vec<(String, String)>,
    memories: Vec<(String, String)>,
    personas: Vec<(String, String)>,
}

impl Secrets {
    /// A hidden goal's label.
    pub fn add_goal(&mut self, label: impl Into<String>) -> &mut Self {
        self.goals.push(label.into());
        self
    }

    /// A hidden goal's id: an internal name the players must not see either.
    pub fn add_goal_id(&mut self, id: impl Into<String>) -> &mut Self {
        self.goal_ids.push(id.into());
        self
    }

    /// The DC of the check named `check_name`.
    pub fn add_dc(&mut self, check_name: impl Into<String>, dc: i32) -> &mut Self {
        self.dcs.push((check_name.into(), dc));
        self
    }

    /// The DC of the check named `check_name` (with its skill): also caught when the number is
    /// said beside the check's name or skill ("Persuasion: 14").
    pub fn add_check_dc(
        &mut self,
        check_name: impl Into<String>,
        skill: Option<String>,
        dc: i32,
    ) -> &mut Self {
        let name = check_name.into();
        self.dc_names.push((name.clone(), skill));
        self.add_dc(name, dc)
    }

    /// A prepared check's note, secret until that check has succeeded.
    pub fn add_check_note(
        &mut self,
        check_name: impl Into<String>,
        note: impl Into<String>,
    ) -> &mut Self {
        self.check_notes.push((check_name.into(), note.into()));
        self
    }

    /// The secrets a tool argument is checked for (see [`find_secrets`]): all but NPCs'
    /// memories and personas.
    pub fn for_arguments(&self) -> Secrets {
        Secrets {
            memories: Vec::new(),
            personas: Vec::new(),
            ..self.clone()
        }
    }

    /// How `npc_name` is played: shown through play, never read out.
    pub fn add_persona(
        &mut self,
        npc_name: impl Into<String>,
        text: impl Into<String>,
    ) -> &mut Self {
        self.personas.push((npc_name.into(), text.into()));
        self
    }

    /// A GM note (the spec's `dmNotes`, a check's `_note`).
    pub fn add_note(&mut self, text: impl Into<String>) -> &mut Self {
        self.notes.push(text.into());
        self
    }

    /// What `npc_name` privately remembers.
    pub fn add_npc_memory(
        &mut self,
        npc_name: impl Into<String>,
        text: impl Into<String>,
    ) -> &mut Self {
        self.memories.push((npc_name.into(), text.into()));
        self
    }
}

/// One thing a narration gave away: for the log and the GM's rewrite request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leak {
    pub kind: SecretKind,
    /// What leaked, in words the GM can act on (it quotes the secret: never show it to players).
    pub detail: String,
    /// The sentences that say it (0-based, sentences as split by this module). Absent from
    /// logs written before it existed.
    #[serde(default)]
    pub sentences: Vec<usize>,
    /// Where in the reply, when not in the narration: a tool argument the players see
    /// (`skill_check_emit.what`, `encounter_resolve.summary`). `sentences` are then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

/// Every leak in `narration`: secrets, and sentences deciding for one of `pcs` (names).
pub fn find_leaks(narration: &str, secrets: &Secrets, pcs: &[String]) -> Vec<Leak> {
    let text = Narration::read(narration);
    let mut leaks = secret_leaks(&text, secrets);
    leaks.extend(pc_decisions(&text, pcs));
    leaks
}

/// The secrets `text` tells: for a tool argument the players see. Each leak names `place`, and
/// no sentences. Not checked there: who decides what (the narration's matter), and NPCs'
/// memories and personas: those bind how the narration tells the story, and a resolution's
/// summary may well retell an earlier run the party lived through, as an NPC remembers it.
pub fn find_secrets(text: &str, secrets: &Secrets, place: &str) -> Vec<Leak> {
    let mut leaks = secret_leaks(&Narration::read(text), secrets);
    leaks.retain(|l| !matches!(l.kind, SecretKind::NpcMemory | SecretKind::Persona));
    for leak in &mut leaks {
        leak.sentences.clear();
        leak.place = Some(place.to_string());
        leak.detail = format!("in {place}: {}", leak.detail);
    }
    leaks
}

/// The sentences of `narration` for which `claim` finds something the scene engine does not
/// hold (see `troupe_scene::narrator::unbacked`), as leaks of kind [`SecretKind::NotInScene`].
pub fn scene_claims(narration: &str, claim: impl Fn(&str) -> Option<String>) -> Vec<Leak> {
    sentence_spans(narration)
        .into_iter()
        .enumerate()
        .filter_map(|(i, span)| {
            let sentence = narration.get(span)?;
            claim(sentence).map(|why| Leak {
                kind: SecretKind::NotInScene,
                detail: format!("\"{}\": {why}", sentence.trim()),
                sentences: vec![i],
                place: None,
            })
        })
        .collect()
}

/// `narration` with every sentence named by `leaks` replaced by `[withheld]`.
///
/// The result is checked again for `secrets` and blanked further until it is clean, so a stale
/// or partial list of leaks can never let a secret through.
pub fn withhold(narration: &str, leaks: &[Leak], secrets: &Secrets) -> String {
    let flagged: BTreeSet<usize> = leaks.iter().flat_map(|l| l.sentences.clone()).collect();
    let mut text = blank_sentences(narration, &flagged);
    // Each round blanks at least one more sentence, so the sentence count bounds the rounds.
    for _ in 0..=sentence_spans(&text).len() {
        let again = secret_leaks(&Narration::read(&text), secrets);
        if again.is_empty() {
            return text;
        }
        let flagged: BTreeSet<usize> = again.into_iter().flat_map(|l| l.sentences).collect();
        text = blank_sentences(&text, &flagged);
    }
    WITHHELD.to_string()
}

const WITHHELD: &str = "[withheld]";

/// `text` with the sentences at `indexes` replaced by [`WITHHELD`], keeping the whitespace and
/// line break around each.
fn blank_sentences(text: &str, indexes: &BTreeSet<usize>) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, span) in sentence_spans(text).into_iter().enumerate() {
        let sentence = text.get(span).unwrap_or("");
        if !indexes.contains(&i) || sentence.trim().is_empty() {
            out.push_str(sentence);
            continue;
        }
        let body = sentence.trim_start();
        out.push_str(sentence.strip_suffix(body).unwrap_or(""));
        out.push_str(WITHHELD);
        // The trailing whitespace, the line break included, stays.
        let trimmed = body.trim_end();
        out.push_str(body.strip_prefix(trimmed).unwrap_or(""));
    }
    out
}

/// Byte ranges of the sentences of `text`, covering it; each ends after its `.`, `!`, `?` or
/// line break. Computed on `text` itself, so every range is on character boundaries.
fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            let end = i + c.len_utf8();
            spans.push(start..end);
            start = end;
        }
    }
    if start < text.len() {
        spans.push(start..text.len());
    }
    spans
}

/// [`sentence_spans`] for a secret, often a wrapped YAML block: a line break followed by a
/// lowercase word continues the sentence ("…the factor, who\nplans to buy…").
fn secret_sentence_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans: Vec<Range<usize>> = Vec::new();
    for span in sentence_spans(text) {
        let starts_lowercase = text
            .get(span.clone())
            .and_then(|s| s.trim_start().chars().next())
            .is_some_and(char::is_lowercase);
        match spans.last_mut() {
            Some(prev)
                if starts_lowercase && text.get(..prev.end).is_some_and(|t| t.ends_with('\n')) =>
            {
                prev.end = span.end;
            }
            _ => spans.push(span),
        }
    }
    spans
}

/// One word of a text: lowercased, its stem, whether it carries content, and its sentence.
struct Token {
    word: String,
    stem: String,
    content: bool,
    sentence: usize,
}

/// A text split into sentences and words once, for every check.
struct Narration<'a> {
    text: &'a str,
    spans: Vec<Range<usize>>,
    tokens: Vec<Token>,
    /// The tokens of each sentence, as a range of `tokens`.
    by_sentence: Vec<Range<usize>>,
}

impl<'a> Narration<'a> {
    fn read(text: &'a str) -> Narration<'a> {
        Narration::read_in(text, sentence_spans(text))
    }

    fn read_in(text: &'a str, spans: Vec<Range<usize>>) -> Narration<'a> {
        let mut tokens = Vec::new();
        let mut by_sentence = Vec::with_capacity(spans.len());
        for (i, span) in spans.iter().enumerate() {
            let start = tokens.len();
            tokens.extend(words_of(text.get(span.clone()).unwrap_or(""), i));
            by_sentence.push(start..tokens.len());
        }
        Narration {
            text,
            spans,
            tokens,
            by_sentence,
        }
    }

    fn sentence(&self, i: usize) -> &[Token] {
        self.by_sentence
            .get(i)
            .and_then(|r| self.tokens.get(r.clone()))
            .unwrap_or(&[])
    }

    fn sentence_text(&self, i: usize) -> &str {
        self.spans
            .get(i)
            .and_then(|r| self.text.get(r.clone()))
            .unwrap_or("")
    }
}

fn tokenize(text: &str, sentence: usize) -> impl Iterator<Item = Token> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(move |w| {
            let word = w.to_lowercase();
            Token {
                stem: stem(&word),
                content: !is_stopword(&word),
                word,
                sentence,
            }
        })
}

/// The words of `text` with numbers written out in words turned into digits ("fifteen" →
/// "15", "twenty-one" → "21"), so a secret said either way reads the same.
fn words_of(text: &str, sentence: usize) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    let mut tokens = tokenize(text, sentence).peekable();
    while let Some(token) = tokens.next() {
        let Some(n) = number_word(&token.word) else {
            out.push(token);
            continue;
        };
        let unit = tokens
            .peek()
            .and_then(|t| number_word(&t.word))
            .filter(|u| n >= 20 && n.is_multiple_of(10) && (1..10).contains(u));
        let value = match unit {
            Some(u) => {
                tokens.next();
                n + u
            }
            None => n,
        };
        out.push(Token {
            word: value.to_string(),
            stem: value.to_string(),
            content: true,
            sentence,
        });
    }
    out
}

/// Numbers in words: zero to nineteen, and the tens from twenty.
const UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 8] = [
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// A number from zero to ninety written as a word.
fn number_word(word: &str) -> Option<u32> {
    let unit = UNITS.iter().position(|u| *u == word);
    let tens = TENS.iter().position(|t| *t == word).map(|i| (i + 2) * 10);
    unit.or(tens).and_then(|n| u32::try_from(n).ok())
}

/// English function words: not content. Sorted, for binary search.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "being", "but", "by", "can", "could", "d", "did", "do", "does", "for", "from", "had",
    "has", "have", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is",
    "it", "its", "just", "ll", "m", "may", "me", "might", "my", "no", "not", "of", "off", "on",
    "onto", "or", "our", "out", "over", "re", "s", "she", "should", "so", "some", "t", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "up",
    "us", "ve", "very", "was", "we", "were", "what", "when", "where", "which", "who", "whom",
    "why", "will", "with", "would", "you", "your",
];

fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// A light stem: drops `-ing`, `-ed`, `-es`, `-s` (not `-ss`) and then a final `e`, keeping
/// at least three characters. "convinced", "convincing", "convinces" → "convinc".
fn stem(word: &str) -> String {
    let long_enough = |root: &str| root.chars().count() >= 3;
    let root = ["ing", "ed", "es", "s"]
        .iter()
        .find_map(|suffix| {
            word.strip_suffix(suffix)
                .filter(|root| long_enough(root) && !(*suffix == "s" && root.ends_with('s')))
        })
        .unwrap_or(word);
    root.strip_suffix('e')
        .filter(|r| long_enough(r))
        .unwrap_or(root)
        .to_string()
}

fn secret_leaks(text: &Narration, secrets: &Secrets) -> Vec<Leak> {
    let mut leaks = goal_leaks(text, &secrets.goals);
    leaks.extend(goal_id_leaks(text, &secrets.goal_ids));
    leaks.extend(dc_leaks(text, secrets));
    let runs = ContentRuns::of(text);
    let mut read_out = |kind, secret: &str, run, what: String| {
        // A persona is how an NPC is played: a short sentence of it ("Smiles with his mouth
        // only") is what the GM should show; only a long run of it is pasted.
        let short = kind != SecretKind::Persona;
        if let Some((phrase, sentences)) = runs.read_out(secret, run, short) {
            leaks.push(Leak {
                kind,
                detail: format!("{what}: \"{phrase}\""),
                sentences,
                place: None,
            });
        }
    };
    for note in &secrets.notes {
        read_out(SecretKind::GmNote, note, RUN, "the GM notes".into());
    }
    for (check, note) in &secrets.check_notes {
        let what = format!("the note of the check \"{check}\" (not yet succeeded)");
        read_out(SecretKind::CheckNote, note, CHECK_NOTE_RUN, what);
    }
    for (npc, memory) in &secrets.memories {
        read_out(
            SecretKind::NpcMemory,
            memory,
            RUN,
            format!("{npc}'s private memory"),
        );
    }
    for (npc, persona) in &secrets.personas {
        read_out(
            SecretKind::Persona,
            persona,
            RUN,
            format!("{npc}'s persona"),
        );
    }
    leaks
}

/// Content words in a row that read a check's note out: one fewer than [`RUN`], since a note
/// is short and says exactly what a success reveals ("the debt was doubled by a forged entry").
pub const CHECK_NOTE_RUN: usize = RUN - 1;

/// Sentence `i` and the next, as one run of words: a secret split across a full stop.
fn pair<'t>(text: &'t Narration, i: usize) -> Vec<&'t Token> {
    text.sentence(i)
        .iter()
        .chain(text.sentence(i + 1))
        .collect()
}

fn goal_leaks(text: &Narration, goals: &[String]) -> Vec<Leak> {
    goals
        .iter()
        .filter_map(|label| {
            let label_words = words_of(label, 0);
            let goal = GoalWords::of(&label_words);
            if goal.content.len() < 2 {
                return None;
            }
            let sentences = sentences_saying(text, |words, one| goal.said_in(words, one));
            (!sentences.is_empty()).then(|| Leak {
                kind: SecretKind::Goal,
                detail: format!("the hidden goal \"{}\"", label.trim()),
                sentences,
                place: None,
            })
        })
        .collect()
}

/// The sentences that say something by `says` (given the words and whether they are one
/// sentence), alone or with the next sentence (a secret split across a full stop).
fn sentences_saying(text: &Narration, says: impl Fn(&[&Token], bool) -> bool) -> Vec<usize> {
    let count = text.spans.len();
    let mut words: Vec<&Token> = Vec::new();
    let alone: Vec<bool> = (0..count)
        .map(|i| {
            words.clear();
            words.extend(text.sentence(i));
            says(&words, true)
        })
        .collect();
    let mut out = BTreeSet::new();
    for (i, &said) in alone.iter().enumerate() {
        if said {
            out.insert(i);
        } else if i + 1 < count && !alone.get(i + 1).copied().unwrap_or(false) {
            words.clear();
            words.extend(text.sentence(i).iter().chain(text.sentence(i + 1)));
            if says(&words, false) {
                out.extend([i, i + 1]);
            }
        }
    }
    out.into_iter().collect()
}

/// A goal's label read once: its words in order, and its distinct content stems.
struct GoalWords<'a> {
    wanted: Vec<&'a str>,
    content: Vec<&'a str>,
}

impl<'a> GoalWords<'a> {
    fn of(label: &'a [Token]) -> GoalWords<'a> {
        let mut content: Vec<&str> = label
            .iter()
            .filter(|t| t.content)
            .map(|t| t.stem.as_str())
            .collect();
        content.sort_unstable();
        content.dedup();
        GoalWords {
            wanted: label.iter().map(|t| t.word.as_str()).collect(),
            content,
        }
    }

    /// The label word for word (two or more content words), its content words in any order
    /// within one sentence (two), or 80 % of its distinct content words (three or more).
    fn said_in(&self, words: &[&Token], one_sentence: bool) -> bool {
        let n = self.wanted.len();
        let verbatim = words.windows(n).any(|w| {
            w.iter()
                .zip(&self.wanted)
                .all(|(t, want)| t.word.as_str() == *want)
        });
        if verbatim {
            return true;
        }
        let present = self
            .content
            .iter()
            .filter(|c| words.iter().any(|t| t.stem == **c))
            .count();
        match self.content.len() {
            2 => one_sentence && present == 2,
            n => present * 5 >= n * 4,
        }
    }
}

/// A hidden goal's id said as it is ("relight_forge", any case) or as its words in a row
/// ("relight the forge" does not count: only "relight forge").
fn goal_id_leaks(text: &Narration, ids: &[String]) -> Vec<Leak> {
    ids.iter()
        .filter_map(|id| {
            let parts = words_of(&split_identifier(id), 0);
            if parts.len() < 2 {
                return None;
            }
            let wanted: Vec<&str> = parts.iter().map(|t| t.word.as_str()).collect();
            let sentences = sentences_saying(text, |words, _| {
                let said: Vec<&str> = words.iter().map(|t| t.word.as_str()).collect();
                said.windows(wanted.len()).any(|w| w == wanted.as_slice())
            });
            (!sentences.is_empty()).then(|| Leak {
                kind: SecretKind::Goal,
                detail: format!("the hidden goal id \"{id}\""),
                sentences,
                place: None,
            })
        })
        .collect()
}

/// An identifier's words: `relight_forge`, `relight-forge` and `relightForge` are
/// "relight forge".
fn split_identifier(id: &str) -> String {
    let mut out = String::with_capacity(id.len() + 4);
    let mut prev_lower = false;
    for c in id.chars() {
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(if c.is_alphanumeric() { c } else { ' ' });
    }
    out
}

fn dc_leaks(text: &Narration, secrets: &Secrets) -> Vec<Leak> {
    let mut leaks: Vec<Leak> = Vec::new();
    let mut add = |n: i64, sentences: &[usize]| {
        let detail = match secrets.dcs.iter().find(|(_, dc)| i64::from(*dc) == n) {
            Some((check, _)) => format!("DC {n} (the DC of the check \"{check}\")"),
            None => format!("a DC of {n}"),
        };
        match leaks.iter_mut().find(|l| l.detail == detail) {
            Some(leak) => leak.sentences.extend(sentences),
            None => leaks.push(Leak {
                kind: SecretKind::Dc,
                detail,
                sentences: sentences.to_vec(),
                place: None,
            }),
        }
    };
    let count = text.spans.len();
    let alone: Vec<Vec<i64>> = (0..count)
        .map(|i| {
            let words: Vec<&Token> = text.sentence(i).iter().collect();
            dcs_said(&words, secrets)
        })
        .collect();
    for (i, found) in alone.iter().enumerate() {
        for &n in found {
            add(n, &[i]);
        }
        // Split across a full stop: "The difficulty? Fifteen."
        if i + 1 < count {
            let next = alone.get(i + 1).map_or(&[][..], Vec::as_slice);
            for n in dcs_said(&pair(text, i), secrets) {
                if !found.contains(&n) && !next.contains(&n) {
                    add(n, &[i, i + 1]);
                }
            }
        }
    }
    for leak in &mut leaks {
        leak.sentences.sort_unstable();
        leak.sentences.dedup();
    }
    leaks
}

/// The DCs `words` state: numbers said as a difficulty, and a spec's DC beside the name or
/// skill of its own check ("calm the smith: 14", "Persuasion, 14").
fn dcs_said(words: &[&Token], secrets: &Secrets) -> Vec<i64> {
    let plain: Vec<&str> = words.iter().map(|t| t.word.as_str()).collect();
    let mut found = stated_dcs(&plain);
    for ((name, skill), (_, dc)) in secrets.dc_names.iter().zip(&secrets.dcs) {
        let n = i64::from(*dc);
        if found.contains(&n) || !plain.iter().any(|w| number(w) == Some(n)) {
            continue;
        }
        let named = |label: &str| {
            let stems: Vec<String> = words_of(&split_identifier(label), 0)
                .into_iter()
                .filter(|t| t.content)
                .map(|t| t.stem)
                .collect();
            !stems.is_empty() && stems.iter().all(|s| words.iter().any(|t| &t.stem == s))
        };
        if named(name) || skill.as_deref().is_some_and(named) {
            found.push(n);
        }
    }
    found
}

/// Words that ask for a roll: "you *need* a 15", "*roll* 15 or more".
const ROLL_WORDS: &[&str] = &["beat", "meet", "need", "needs", "roll", "rolls"];
/// "15 or *better*": a threshold on a die.
const THRESHOLD_WORDS: &[&str] = &["above", "better", "greater", "higher", "more", "over"];

/// The numbers `words` (one sentence, lowercased) state as a difficulty.
fn stated_dcs(words: &[&str]) -> Vec<i64> {
    let mut found = Vec::new();
    for (i, w) in words.iter().enumerate() {
        // "DC15" is one word.
        if let Some(n) = w.strip_prefix("dc").and_then(number) {
            found.push(n);
            continue;
        }
        let Some(n) = number(w) else { continue };
        let before = words.get(i.saturating_sub(4)..i).unwrap_or(&[]);
        let prev = |k: usize| i.checked_sub(k).and_then(|j| words.get(j)).copied();
        let next = |k: usize| words.get(i + k).copied();
        let is_dc = |w: &&str| matches!(*w, "dc" | "dcs");
        // "DC 15", "the DC is 15", "15 is the DC", "a 15 DC".
        let after_dc = before.iter().any(is_dc)
            || words
                .get(i + 1..(i + 4).min(words.len()))
                .is_some_and(|a| a.iter().any(is_dc));
        let difficulty = before.iter().any(|b| b.starts_with("difficult"))
            || before.windows(2).any(|p| p == ["target", "number"]);
        let threshold =
            next(1) == Some("or") && next(2).is_some_and(|t| THRESHOLD_WORDS.contains(&t));
        let asked = before.iter().any(|b| ROLL_WORDS.contains(b));
        let bare = next(1).is_none_or(is_stopword);
        // "or more" also counts people ("15 or more guards"): only after a roll word, at the end.
        let more = next(2) == Some("more");
        let threshold = threshold && (!more || (asked && next(3).is_none_or(is_stopword)));
        let roll_for = asked
            && bare
            && matches!(prev(1), Some(p) if ROLL_WORDS.contains(&p) || matches!(p, "a" | "an" | "least"));
        if after_dc || difficulty || threshold || roll_for {
            found.push(n);
        }
    }
    found
}

/// A whole number written in digits (not too long to be a DC).
fn number(word: &str) -> Option<i64> {
    if word.is_empty() || word.len() > 9 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok()
}

/// The narration's content words in a row, indexed by runs of three to [`RUN`] stems.
struct ContentRuns<'a> {
    stems: Vec<&'a str>,
    sentences: Vec<usize>,
    /// Where each run of three to [`RUN`] stems starts, by the run's hash: built once for
    /// every secret (a hit is compared word by word).
    index: HashMap<u64, Vec<usize>>,
}

impl<'a> ContentRuns<'a> {
    fn of(text: &'a Narration) -> ContentRuns<'a> {
        let content = text.tokens.iter().filter(|t| t.content);
        let stems: Vec<&str> = content.clone().map(|t| t.stem.as_str()).collect();
        let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
        for len in 3..=RUN {
            for (at, run) in stems.windows(len).enumerate() {
                index.entry(run_hash(run)).or_default().push(at);
            }
        }
        ContentRuns {
            stems,
            sentences: content.map(|t| t.sentence).collect(),
            index,
        }
    }

    /// Where `stems` starts in the narration's content words.
    fn starts_of(&self, stems: &[&str]) -> Vec<usize> {
        let n = stems.len();
        self.index
            .get(&run_hash(stems))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&at| self.stems.get(at..at + n) == Some(stems))
            .collect()
    }

    /// Whether `secret` is read out: its first run of [`RUN`] content words found in the
    /// narration (or a whole sentence of three or four), in the secret's own words, with every
    /// narration sentence that says one.
    fn read_out(&self, secret: &str, run: usize, short: bool) -> Option<(String, Vec<usize>)> {
        let secret = Narration::read_in(secret, secret_sentence_spans(secret));
        let content: Vec<&Token> = secret.tokens.iter().filter(|t| t.content).collect();
        let phrases = telling_phrases(&content, run, short);
        let mut first = None;
        let mut sentences = BTreeSet::new();
        for phrase in phrases {
            let stems: Vec<&str> = phrase.iter().map(|t| t.stem.as_str()).collect();
            for at in self.starts_of(&stems) {
                first.get_or_insert_with(|| {
                    let words: Vec<&str> = phrase.iter().map(|t| t.word.as_str()).collect();
                    words.join(" ")
                });
                let said = self.sentences.get(at..at + stems.len()).unwrap_or(&[]);
                sentences.extend(said.iter().copied());
            }
        }
        first.map(|phrase| (phrase, sentences.into_iter().collect()))
    }
}

fn run_hash(run: &[&str]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    run.hash(&mut h);
    h.finish()
}

/// The phrases of a secret (its content words, in order) that must not be said: every run of
/// `run` ([`RUN`] for notes), and with `short` every sentence of three content words up to
/// `run` whole.
fn telling_phrases<'t>(content: &'t [&'t Token], run: usize, short: bool) -> Vec<&'t [&'t Token]> {
    let mut phrases: Vec<&[&Token]> = content.windows(run).collect();
    if !short {
        return phrases;
    }
    // Content tokens are in sentence order: split them where the sentence changes.
    for sentence in content.chunk_by(|a, b| a.sentence == b.sentence) {
        if (3..run).contains(&sentence.len()) {
            phrases.push(sentence);
        }
    }
    phrases
}

fn pc_decisions(text: &Narration, pcs: &[String]) -> Vec<Leak> {
    (0..text.spans.len())
        .filter_map(|i| {
            let sentence = text.sentence_text(i);
            // "You" only for feelings and choices: a GM narrating the result of what a player
            // attempted ("you push the door open") does its job; a named character's deed
            // ("Zara draws her blaster") is one its player never said.
            decides_for(sentence, pcs, false)
                .or_else(|| named_deeds(sentence, pcs))
                .map(|s| Leak {
                    kind: SecretKind::DecidesForPc,
                    detail: format!("decides what a player character does or feels: \"{s}\""),
                    sentences: vec![i],
                    place: None,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kinds(leaks: &[Leak]) -> Vec<SecretKind> {
        leaks.iter().map(|l| l.kind).collect()
    }

    fn secrets() -> Secrets {
        let mut s = Secrets::default();
        s.add_goal("Convince the smuggler to hand over the star map")
            .add_goal("Escape")
            .add_dc("pick_lock", 15)
            .add_dc("persuade", 12)
            .add_note(
                "Captain Mirela Voss secretly sold the station's shield codes to the Hive \
                 Armada for passage off world.",
            )
            .add_npc_memory(
                "Grell",
                "The tall pilot cheated me at cards on Ceres. Never forget.",
            );
        s
    }

    fn leaks(text: &str) -> Vec<Leak> {
        find_leaks(text, &secrets(), &["Zara Voss".to_string()])
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_wrapped_line_of_a_secret_continues_its_sentence() {
        let text = "SECRET:\nThe smith, who\nplans ahead. She\nknows.\nThe crow";
        let spans: Vec<&str> = secret_sentence_spans(text)
            .into_iter()
            .map(|r| text.get(r).unwrap())
            .collect();
        assert_eq!(
            spans,
            [
                "SECRET:\n",
                "The smith, who\nplans ahead.",
                " She\nknows.",
                "\n",
                "The crow"
            ]
        );
    }

    #[test]
    fn stems_join_the_forms_of_a_word() {
        for (a, b) in [
            ("convinced", "convince"),
            ("convincing", "convinces"),
            ("maps", "map"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} {b}");
        }
        assert_eq!(stem("glass"), "glass");
        assert_eq!(stem("is"), "is");
    }

    #[test]
    fn a_goal_said_word_for_word_or_nearly_is_a_leak() {
        for text in [
            "Your task: CONVINCE the smuggler, to hand over the star-map!",
            "The smuggler won't be convinced to hand you the map to the stars easily.",
        ] {
            let l = leaks(text);
            assert_eq!(kinds(&l), [SecretKind::Goal], "{text}");
            assert!(l[0].detail.contains("star map"), "{}", l[0].detail);
        }
    }

    #[test]
    fn naming_parts_of_a_goal_or_a_one_word_goal_is_not() {
        for text in [
            "The smuggler keeps a map rolled under her arm.",
            "Rain hammers the hull; there is no easy escape from the weather.",
        ] {
            assert_eq!(leaks(text), [], "{text}");
        }
    }

    #[test]
    fn a_dc_stated_as_a_number_is_a_leak_in_every_usual_phrasing() {
        for text in [
            "That lock is DC 15.",
            "It's a dc15 lock.",
            "The door has a difficulty of 15.",
            "The difficulty class here is 15.",
            "The target number is 15.",
            "You need a 15 or better.",
            "Roll 15 or higher to pick it.",
            "You need to beat a 15.",
            "Roll 15 or more.",
        ] {
            let l = leaks(text);
            assert_eq!(kinds(&l), [SecretKind::Dc], "{text}");
            assert!(l[0].detail.contains("pick_lock"), "{}", l[0].detail);
        }
        let made_up = leaks("Persuading him is DC 20.");
        assert_eq!(made_up[0].detail, "a DC of 20");
    }

    #[test]
    fn ordinary_numbers_are_not_dcs() {
        for text in [
            "15 guards stand at the gate.",
            "You count 15 or more guards on the wall.",
            "The fare is 12 credits; the pilot needs 15 gold for fuel.",
            "Bay 15 is dark.",
        ] {
            assert_eq!(leaks(text), [], "{text}");
        }
    }

    #[test]
    fn a_note_read_out_is_a_leak_and_a_hint_is_not() {
        let read = leaks(
            "Word is that the captain, Mirela Voss, secretly sold the shield codes to the Hive.",
        );
        assert_eq!(kinds(&read), [SecretKind::GmNote]);
        assert!(
            read[0].detail.contains("mirela voss secretly sold"),
            "{}",
            read[0].detail
        );
        for hint in [
            "Captain Mirela Voss avoids your eyes when the shields come up.",
            "Captain Mirela Voss secretly hopes you leave.",
            "The Hive Armada fleet waits off world.",
        ] {
            assert_eq!(leaks(hint), [], "{hint}");
        }
    }

    #[test]
    fn run_length_five_catches_a_note_with_every_sixth_word_swapped() {
        // Content words 6 (station) and 12 (world) swapped: two runs of five remain.
        let text = "Captain Mirela Voss secretly sold the outpost's shield codes to the Hive \
                    Armada for passage off planet.";
        assert_eq!(kinds(&leaks(text)), [SecretKind::GmNote]);
    }

    #[test]
    fn an_npc_memory_read_out_names_the_npc_and_a_short_one_counts_whole() {
        let l = leaks("Grell snarls: the tall pilot cheated me at cards on Ceres!");
        assert_eq!(kinds(&l), [SecretKind::NpcMemory]);
        assert!(
            l[0].detail.starts_with("Grell's private memory"),
            "{}",
            l[0].detail
        );
        assert_eq!(leaks("A tall pilot plays cards with Grell."), []);
        let mut s = Secrets::default();
        s.add_note("Vault code: 7731.");
        let l = find_leaks("The vault code is 7731, she says.", &s, &[]);
        assert_eq!(kinds(&l), [SecretKind::GmNote]);
    }

    #[test]
    fn deciding_what_a_player_character_does_or_feels_is_flagged() {
        let l = leaks("The hatch opens. Zara draws her blaster. What do you do?");
        assert_eq!(kinds(&l), [SecretKind::DecidesForPc]);
        assert_eq!(l[0].sentences, [1]);
        assert_eq!(leaks("The hatch opens. What do you do?"), []);
        // Second person narrating a result is the GM's job; deciding a feeling is not.
        assert_eq!(leaks("You push the hatch open and step through."), []);
        assert_eq!(
            kinds(&leaks("You feel afraid.")),
            [SecretKind::DecidesForPc]
        );
    }

    #[test]
    fn every_sentence_that_says_a_secret_is_named() {
        let l = leaks("DC 15. The rain falls. That lock really is a DC 15 job.");
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].sentences, [0, 2]);
    }

    #[test]
    fn withhold_blanks_exactly_the_leaking_sentences() {
        let text = "İSTANBUL İS FAR. The lock is DC 15!\nZoë waits. Zara draws her blaster. Rain.";
        let s = secrets();
        let l = find_leaks(text, &s, &["Zara".to_string()]);
        assert_eq!(
            withhold(text, &l, &s),
            "İSTANBUL İS FAR. [withheld]\nZoë waits. [withheld] Rain."
        );
    }

    #[test]
    fn withhold_finds_secrets_a_stale_list_missed() {
        let s = secrets();
        let out = withhold("Fog. You need a 15 or better. Then silence.", &[], &s);
        assert_eq!(out, "Fog. [withheld] Then silence.");
        let stale = [Leak {
            kind: SecretKind::Goal,
            detail: String::new(),
            sentences: vec![99],
            place: None,
        }];
        assert_eq!(withhold("Fog.", &stale, &s), "Fog.");
    }

    #[test]
    fn a_leak_serializes_for_the_log() {
        let l = &leaks("DC 12.")[0];
        let json = serde_json::to_value(l).unwrap();
        assert_eq!(json["kind"], "dc");
        assert_eq!(json["sentences"][0], 0);
        let old: Leak = serde_json::from_str(r#"{"kind":"goal","detail":"x"}"#).unwrap();
        assert!(old.sentences.is_empty());
    }

    /// The secrets of `examples/encounters/smithy.yaml`, as the runner gathers them.
    fn smithy() -> Secrets {
        let mut s = Secrets::default();
        s.add_goal("The forge burns again, with the smith's blessing")
            .add_goal("The guild's hold over the smithy is broken, fairly or otherwise")
            .add_goal("Someone learns why the smith let the fire die")
            .add_goal("The crow on the chimney is given a name")
            .add_dc("calm_smith", 14)
            .add_dc("read_ledger", 12)
            .add_dc("relight", 16)
            .add_note(
                "SECRET, never say this to the players outright:\nThe smith put out the fire \
                 herself. The guild's \"debt\" is a forgery by the factor, who\nplans to buy \
                 the smithy for a pittance once she is ruined. The ledger's third page shows\ntwo \
                 inks. If the party exposes the forgery, the factor tries to slip out the back; \
                 the crow\nfollows him. The smith relights the forge only once she believes the \
                 debt is gone.",
            );
        s
    }

    #[test]
    fn ordinary_narration_of_the_smithy_passes_and_its_secrets_do_not() {
        let s = smithy();
        let pcs = ["Wren".to_string(), "Tamsin Holt".to_string()];
        for text in [
            "Brekka snorts and jerks her chin at the cold forge. \"Guild business,\" she \
             mutters, and spits into the ashes.",
            "Osric Dale smiles with his mouth only and turns a page of the ledger. Two carters \
             wait by the door with 3 broken wheels.",
            "The crow on the chimney caws once, as if it has an opinion about the guild.",
            "The ledger is thick with figures; something about the third page catches the \
             lamplight. Wren, what do you do?",
            "Make a persuasion check when you plead with the smith, Tamsin.",
            "The forge is cold; nobody has worked the bellows in a week.",
        ] {
            assert_eq!(find_leaks(text, &s, &pcs), [], "{text}");
        }
        for (text, kind) in [
            (
                "Truth is, the smith put out the fire herself.",
                SecretKind::GmNote,
            ),
            ("Calming her is a DC 14 persuasion check.", SecretKind::Dc),
            (
                "Osric plans to buy the smithy for a pittance once she is ruined.",
                SecretKind::GmNote,
            ),
            (
                "If the crow on the chimney were given a name, it might stay.",
                SecretKind::Goal,
            ),
            (
                "Tamsin decides to trust the factor.",
                SecretKind::DecidesForPc,
            ),
        ] {
            assert_eq!(kinds(&find_leaks(text, &s, &pcs)), [kind], "{text}");
        }
    }

    // Property tests: secrets from one vocabulary, public narration from another.

    const SECRET_WORDS: &[&str] = &[
        "smuggler", "ledger", "captain", "armada", "betrayal", "vault", "crystal", "poison",
        "duke", "treasury", "forged", "cellar", "sapphire", "cult", "ransom", "mutiny", "cipher",
        "heir", "bribe", "traitor",
    ];
    const PUBLIC_WORDS: &[&str] = &[
        "lantern",
        "harbor",
        "rain",
        "cobblestones",
        "gull",
        "tavern",
        "rope",
        "barrel",
        "smoke",
        "bell",
        "sailor",
        "fog",
        "creaks",
        "drifts",
        "glows",
        "quiet",
        "wet",
        "old",
        "green",
        "distant",
        "the",
        "a",
        "of",
        "on",
        "with",
        "and",
        "guards",
        "ships",
        "is",
    ];

    fn words_from(
        vocab: &'static [&'static str],
        n: std::ops::Range<usize>,
    ) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(vocab), n).prop_map(|w| w.join(" "))
    }

    /// Public sentences, some with ordinary numbers ("15 guards").
    fn public_narration() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(
            (words_from(PUBLIC_WORDS, 1..12), prop::option::of(0u32..40)).prop_map(
                |(w, n)| match n {
                    Some(n) => format!("{n} {w}."),
                    None => format!("{w}."),
                },
            ),
            0..6,
        )
    }

    fn distinct_secret_words(n: std::ops::Range<usize>) -> impl Strategy<Value = String> {
        prop::sample::subsequence(SECRET_WORDS, n)
            .prop_shuffle()
            .prop_map(|w| w.join(" "))
    }

    #[derive(Clone, Debug)]
    enum Planted {
        Goal(String),
        GoalId(String),
        Dc(i32, usize),
        Note(String),
        CheckNote(String),
        Memory(String),
        Persona(String),
    }

    /// How the model says a secret it was given (issue 33): as it is, in capitals, with its
    /// words in another order, with numbers in words, split across two sentences.
    #[derive(Clone, Copy, Debug)]
    enum Form {
        Verbatim,
        Capitals,
        Reordered,
        Spelled,
        Split,
    }

    fn form() -> impl Strategy<Value = Form> {
        prop_oneof![
            Just(Form::Verbatim),
            Just(Form::Capitals),
            Just(Form::Reordered),
            Just(Form::Spelled),
            Just(Form::Split),
        ]
    }

    fn spelled(n: i32) -> String {
        let n = n.clamp(0, 39) as usize;
        match n {
            0..20 => UNITS[n].to_string(),
            _ if n.is_multiple_of(10) => TENS[n / 10 - 2].to_string(),
            _ => format!("{}-{}", TENS[n / 10 - 2], UNITS[n % 10]),
        }
    }

    /// The DC phrasings the forms use: "{}" is the number; `Reordered` puts it first.
    const DC_REORDERED: &[&str] = &["{} is the DC", "a {} DC", "the DC here is {}"];
    const DC_SPLIT: &[&str] = &[
        "That lock has a DC. It is {}",
        "The difficulty is steep. {}",
        "You will need to roll. {} or better",
    ];

    const DC_PHRASES: &[&str] = &[
        "DC {}",
        "a difficulty of {}",
        "you need a {} or better",
        "the target number is {}",
        "roll {} or higher",
    ];

    fn planted() -> impl Strategy<Value = Planted> {
        prop_oneof![
            distinct_secret_words(3..7).prop_map(Planted::Goal),
            distinct_secret_words(2..4).prop_map(|w| Planted::GoalId(w.replace(' ', "_"))),
            (1i32..40, 0..DC_PHRASES.len()).prop_map(|(n, p)| Planted::Dc(n, p)),
            words_from(SECRET_WORDS, 3..16).prop_map(Planted::Note),
            words_from(SECRET_WORDS, 3..16).prop_map(Planted::CheckNote),
            words_from(SECRET_WORDS, 3..16).prop_map(Planted::Memory),
            words_from(SECRET_WORDS, RUN..16).prop_map(Planted::Persona),
        ]
    }

    impl Planted {
        fn secrets(&self) -> Secrets {
            let mut s = Secrets::default();
            match self {
                Planted::Goal(g) => s.add_goal(g.clone()),
                Planted::GoalId(id) => s.add_goal_id(id.clone()),
                Planted::Dc(n, _) => s.add_dc("check", *n),
                Planted::Note(t) => s.add_note(t.clone()),
                Planted::CheckNote(t) => s.add_check_note("pick_lock", t.clone()),
                Planted::Memory(t) => s.add_npc_memory("Grell", t.clone()),
                Planted::Persona(t) => s.add_persona("Grell", t.clone()),
            };
            s
        }

        fn said(&self) -> String {
            self.said_as(Form::Verbatim)
        }

        /// The secret as the model says it in `form`. Only a goal's label can be reordered
        /// (a note is caught when read out, not when its words are shuffled) and only a DC is
        /// a number; the other forms say those as they are.
        fn said_as(&self, form: Form) -> String {
            let text = match (self, form) {
                (Planted::Dc(n, p), Form::Verbatim | Form::Capitals) => {
                    DC_PHRASES[*p].replace("{}", &n.to_string())
                }
                (Planted::Dc(n, p), Form::Spelled) => DC_PHRASES[*p].replace("{}", &spelled(*n)),
                (Planted::Dc(n, p), Form::Reordered) => {
                    DC_REORDERED[p % DC_REORDERED.len()].replace("{}", &n.to_string())
                }
                (Planted::Dc(n, p), Form::Split) => {
                    DC_SPLIT[p % DC_SPLIT.len()].replace("{}", &spelled(*n))
                }
                (Planted::Goal(t), Form::Reordered) => {
                    t.split(' ').rev().collect::<Vec<_>>().join(" ")
                }
                (Planted::GoalId(id), Form::Verbatim | Form::Capitals) => id.clone(),
                (Planted::GoalId(id), _) => id.replace('_', " "),
                (
                    Planted::Goal(t)
                    | Planted::Note(t)
                    | Planted::CheckNote(t)
                    | Planted::Memory(t)
                    | Planted::Persona(t),
                    Form::Split,
                ) => split_in_two(t),
                (
                    Planted::Goal(t)
                    | Planted::Note(t)
                    | Planted::CheckNote(t)
                    | Planted::Memory(t)
                    | Planted::Persona(t),
                    _,
                ) => t.clone(),
            };
            match form {
                Form::Capitals => text.to_uppercase(),
                _ => text,
            }
        }

        fn kind(&self) -> SecretKind {
            match self {
                Planted::Goal(_) | Planted::GoalId(_) => SecretKind::Goal,
                Planted::Dc(..) => SecretKind::Dc,
                Planted::Note(_) => SecretKind::GmNote,
                Planted::CheckNote(_) => SecretKind::CheckNote,
                Planted::Memory(_) => SecretKind::NpcMemory,
                Planted::Persona(_) => SecretKind::Persona,
            }
        }
    }

    /// "a b. c d": the words split across a full stop after the first half.
    fn split_in_two(text: &str) -> String {
        let words: Vec<&str> = text.split(' ').collect();
        let half = words.len() / 2;
        format!("{}. {}", words[..half].join(" "), words[half..].join(" "))
    }

    /// The narration with the secret said inside sentence `at` (or as a sentence of its own).
    fn plant(public: &[String], secret: &str, at: usize, own: bool) -> String {
        let at = at % (public.len() + 1);
        let mut sentences = public.to_vec();
        if own || at == public.len() {
            sentences.insert(at, format!("{secret}."));
        } else {
            let s = sentences[at].trim_end_matches('.').to_string();
            sentences[at] = format!("{s} {secret} {s}.");
        }
        sentences.join(" ")
    }

    fn pcs() -> Vec<String> {
        vec!["Zara Voss".to_string(), "Okonkwo".to_string()]
    }

    proptest! {
        #[test]
        fn a_planted_secret_is_always_found_and_withheld(
            public in public_narration(),
            secret in planted(),
            at: usize,
            own: bool,
        ) {
            let s = secret.secrets();
            let text = plant(&public, &secret.said(), at, own);
            let found = find_leaks(&text, &s, &pcs());
            prop_assert!(kinds(&found).contains(&secret.kind()), "{text}: {found:?}");
            let out = withhold(&text, &found, &s);
            prop_assert_eq!(find_leaks(&out, &s, &pcs()), vec![], "{}", out);
            prop_assert!(!out.to_lowercase().contains(&secret.said().to_lowercase()), "{}", out);
            prop_assert!(out.contains("[withheld]"));
        }

        /// Issue 33: every secret field, planted in every form, in the narration or in a
        /// tool argument the players see, is found; withholding leaves no form of it.
        #[test]
        fn a_secret_in_any_form_is_found_and_withheld_wherever_players_would_see_it(
            public in public_narration(),
            secret in planted(),
            form in form(),
            at: usize,
            in_argument: bool,
        ) {
            let s = secret.secrets();
            let said = secret.said_as(form);
            let text = plant(&public, &said, at, false);
            // Memories and personas bind the narration only (see `find_secrets`).
            let in_argument = in_argument
                && !matches!(secret, Planted::Memory(_) | Planted::Persona(_));
            let found = if in_argument {
                find_secrets(&text, &s, "skill_check_emit.what")
            } else {
                find_leaks(&text, &s, &pcs())
            };
            prop_assert!(kinds(&found).contains(&secret.kind()), "{text}: {found:?}");
            let out = withhold(&text, if in_argument { &[] } else { &found }, &s);
            prop_assert_eq!(find_leaks(&out, &s, &pcs()), vec![], "{}", out);
            // A DC's words around the number are not secret ("the difficulty is steep"):
            // its check is that no DC is stated any more, above.
            if !matches!(secret, Planted::Dc(..)) {
                let lower = out.to_lowercase();
                for part in said.to_lowercase().split(". ") {
                    prop_assert!(!lower.contains(part), "{part} in {out}");
                }
            }
        }

        #[test]
        fn public_narration_is_never_flagged(
            public in public_narration(),
            goals in prop::collection::vec(distinct_secret_words(1..7), 0..3),
            notes in prop::collection::vec(words_from(SECRET_WORDS, 1..20), 0..3),
            dcs in prop::collection::vec(0i32..40, 0..3),
        ) {
            let mut s = Secrets::default();
            for g in goals { s.add_goal(g); }
            for n in &notes {
                s.add_note(n.clone()).add_npc_memory("Grell", n.clone());
                s.add_check_note("pick_lock", n.clone()).add_persona("Grell", n.clone());
            }
            for dc in dcs { s.add_check_dc("pick_lock", Some("lockpicking".into()), dc); }
            let text = public.join(" ");
            prop_assert_eq!(find_leaks(&text, &s, &pcs()), vec![], "{}", text);
            prop_assert_eq!(withhold(&text, &[], &s), text);
        }

        #[test]
        fn arbitrary_unicode_never_panics(
            text in any::<String>(),
            label in any::<String>(),
            note in any::<String>(),
            pc in any::<String>(),
            dc: i32,
            sentences in prop::collection::vec(any::<usize>(), 0..4),
        ) {
            let mut s = Secrets::default();
            s.add_goal(label).add_note(note.clone()).add_npc_memory(pc.clone(), note).add_dc(pc.clone(), dc);
            let found = find_leaks(&text, &s, &[pc]);
            let stale = Leak { kind: SecretKind::Goal, detail: String::new(), sentences, place: None };
            let out = withhold(&text, &[found, vec![stale]].concat(), &s);
            prop_assert_eq!(secret_leaks(&Narration::read(&out), &s), vec![]);
        }
    }
}
