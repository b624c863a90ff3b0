//! Text handling for memory: words for full-text search, names in free text, and the time a
//! question asks about ("last session", "day 15", "three sessions ago").

/// Common English words that carry no meaning for search.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "ago",
    "all",
    "am",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "but",
    "by",
    "can",
    "could",
    "day",
    "days",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "during",
    "each",
    "ever",
    "for",
    "from",
    "get",
    "got",
    "had",
    "happen",
    "happened",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "know",
    "last",
    "me",
    "more",
    "most",
    "my",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "recall",
    "remember",
    "said",
    "same",
    "say",
    "session",
    "sessions",
    "she",
    "should",
    "so",
    "some",
    "something",
    "such",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "through",
    "to",
    "too",
    "turn",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "week",
    "weeks",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
];

pub fn is_stopword(w: &str) -> bool {
    STOPWORDS.binary_search(&w).is_ok()
}

/// Lowercase alphanumeric words of a text (apostrophes dropped: "Galvin's" → "galvins" would
/// hurt recall, so the possessive is cut instead).
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| {
            let w = w.trim_matches('\'');
            let w = w
                .strip_suffix("'s")
                .or_else(|| w.strip_suffix("’s"))
                .unwrap_or(w);
            w.to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The words of a question worth searching for.
pub fn content_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(text) {
        if w.len() > 1 && !is_stopword(&w) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Words that frame a question rather than say what it asks ("what kind of art", "is she
/// likely to"): as text they match small talk ("your kind words"). Not stopwords elsewhere.
const QUESTION_FRAME: &[&str] = &["kind", "kinds", "likely", "sort", "type", "types"];

/// The words of a question worth searching the text for: its content words without the ones
/// that only say when ("day 26", "session 18", "three sessions ago"): those are the time
/// signal's, and as text they match every "Day 26:" log line instead of the answer.
pub fn query_words(text: &str) -> Vec<String> {
    let ws = words(text);
    let when = |i: usize| {
        let w = ws.get(i).map_or("", String::as_str);
        let prev = i.checked_sub(1).and_then(|p| ws.get(p)).map(String::as_str);
        let next = ws.get(i + 1).map(String::as_str);
        let numeric = w.parse::<u32>().is_ok() || number_word(w).is_some();
        numeric
            && (matches!(prev, Some("day" | "session" | "days" | "sessions"))
                || matches!(
                    next,
                    Some("day" | "days" | "session" | "sessions" | "weeks" | "week")
                ))
    };
    let mut out: Vec<String> = Vec::new();
    for (i, w) in ws.iter().enumerate() {
        let frame = QUESTION_FRAME.contains(&w.as_str());
        if w.len() > 1 && !is_stopword(w) && !frame && !when(i) && !out.contains(w) {
            out.push(w.clone());
        }
    }
    out
}

fn number_word(w: &str) -> Option<u32> {
    Some(match w {
        "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        _ => return None,
    })
}

/// Which end of time a question leans to: the present ("now", "currently", "still", "at
/// the moment") or the beginning ("first", "originally").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lean {
    Latest,
    Earliest,
}

pub fn lean(question: &str) -> Option<Lean> {
    let ws = words(question);
    let has = |w: &str| ws.iter().any(|x| x == w);
    let phrase = |a: &str, b: &str| {
        ws.windows(2)
            .any(|p| matches!(p, [x, y] if x == a && y == b))
    };
    if has("now")
        || has("currently")
        || has("current")
        || has("still")
        || has("latest")
        || has("anymore")
        || phrase("the", "moment")
        || phrase("these", "days")
        || phrase("stand", "with")
    {
        return Some(Lean::Latest);
    }
    if has("first") || has("originally") || has("initially") {
        return Some(Lean::Earliest);
    }
    None
}

/// An FTS5 query that matches any of the words (each quoted, so no word is read as syntax).
pub fn fts_query(words: &[String]) -> Option<String> {
    let terms: Vec<String> = words
        .iter()
        .map(|w| w.replace('"', ""))
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

/// Normalised form of a name for entity resolution: lowercase, no leading article or title
/// punctuation, single spaces.
pub fn normalise_name(name: &str) -> String {
    let ws = words(name);
    let mut slice: &[String] = &ws;
    while let Some((first, rest)) = slice.split_first() {
        if matches!(first.as_str(), "the" | "a" | "an") && !rest.is_empty() {
            slice = rest;
        } else {
            break;
        }
    }
    slice.join(" ")
}

/// Names in free text: `@Name` and `@{Two Words}` tags the GM types, and runs of capitalised
/// words that do not start a sentence (a cheap, deterministic guess, no model needed).
pub fn names_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: String| {
        let n = n.trim().to_string();
        if !n.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(&n)) {
            out.push(n);
        }
    };
    // Tags first: the GM's word on what is a name.
    let mut rest = text;
    while let Some((_, after)) = rest.split_once('@') {
        if let Some(inner) = after.strip_prefix('{')
            && let Some((name, tail)) = inner.split_once('}')
        {
            push(name.to_string());
            rest = tail;
            continue;
        }
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        push(name);
        rest = after;
    }
    // Capitalised runs, not at a sentence start, not a lone common word.
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let token = |i: usize| tokens.get(i).copied().unwrap_or_default();
    let mut i = 0;
    while i < tokens.len() {
        let at_start = i == 0 || token(i - 1).ends_with(['.', '!', '?', ':', '"', '“']);
        let bare = |t: &str| {
            t.trim_matches(|c: char| !c.is_alphanumeric() && c != '-')
                .to_string()
        };
        let t = bare(token(i));
        if is_capitalised(&t) && !at_start && !is_stopword(&t.to_lowercase()) && !table_word(&t) {
            let mut run = vec![t];
            let mut j = i + 1;
            while j < tokens.len() {
                let prev_ends = token(j - 1).ends_with([',', '.', '!', '?', ';', ':']);
                let u = bare(token(j));
                if prev_ends || !is_capitalised(&u) {
                    break;
                }
                run.push(u);
                j += 1;
            }
            push(run.join(" "));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// The table's own vocabulary, capitalised in what troupe writes ("The GM answered", "LASER
/// FEELINGS: ...") but never a name in the story.
fn table_word(w: &str) -> bool {
    matches!(
        w.to_ascii_uppercase().as_str(),
        "GM" | "LASER" | "LASERS" | "FEELINGS" | "OOC"
    )
}

fn is_capitalised(w: &str) -> bool {
    let mut c = w.chars();
    matches!(c.next(), Some(f) if f.is_uppercase()) && w.len() > 1 && w != "I'm" && w != "I've"
}

/// Text with the GM's `@` tags turned back into plain names.
pub fn untag(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '@' {
            let after = text.get(i + c.len_utf8()..).unwrap_or_default();
            if let Some(inner) = after.strip_prefix('{')
                && let Some((name, _)) = inner.split_once('}')
            {
                out.push_str(name);
                // Skip '{', the name and '}'.
                let skip = name.chars().count() + 2;
                for _ in 0..skip {
                    chars.next();
                }
                continue;
            }
            if after.starts_with(|c: char| c.is_alphanumeric()) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The part of the campaign's time a question asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeRef {
    /// A session, by number.
    Session(u32),
    /// In-game days, inclusive.
    Days(u32, u32),
}

/// A calendar date a question names ("on 3 June, 2023", "October 13, 2023", "in May 2023"):
/// the real-world date a session was played (or a conversation held), kept as each episode's
/// timestamp. Days and years are optional; the month is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateRef {
    pub year: Option<i32>,
    pub month: u32,
    pub day: Option<u32>,
}

impl DateRef {
    /// Whether a session held on `(year, month, day)` is the one named.
    pub fn matches(&self, (year, month, day): (i32, u32, u32)) -> bool {
        self.month == month
            && self.year.is_none_or(|y| y == year)
            && self.day.is_none_or(|d| d == day)
    }
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The month a word names: a capitalised full name ("May", not the verb "may"), or its first
/// three letters ("Oct", "Sept" too).
fn month_of(word: &str) -> Option<u32> {
    if !is_capitalised(word) {
        return None;
    }
    let w = word.to_lowercase();
    let w = w.strip_suffix('.').unwrap_or(&w);
    MONTHS.iter().zip(1..).find_map(|(m, n)| {
        let short = m.get(..3).unwrap_or(m);
        (*m == w || w == short || (n == 9 && w == "sept")).then_some(n)
    })
}

/// A day of the month as written beside a month name ("13", "13th", "3rd").
fn day_of(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let rest = word.get(digits.len()..).unwrap_or("");
    if !matches!(rest, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn year_of(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| (1900..=2200).contains(y))
}

/// The calendar date a text names, if any, and the words that name it (lowercase, to be
/// left out of the text search: "June" or "2023" as words match small talk, not the day).
pub fn date_ref(text: &str) -> Option<(DateRef, Vec<String>)> {
    let ws: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '.'))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    (0..ws.len()).find_map(|i| date_at(&ws, i))
}

/// The date named by a month at word `i`, with the day and year written beside it.
fn date_at(ws: &[&str], i: usize) -> Option<(DateRef, Vec<String>)> {
    let word = ws.get(i)?;
    let month = month_of(word)?;
    let at = |j: Option<usize>| j.and_then(|j| ws.get(j)).copied();
    let mut named = vec![word.to_lowercase()];
    let mut day = None;
    let mut after = i + 1;
    if let Some(w) = at(i.checked_sub(1)).filter(|w| day_of(w).is_some()) {
        day = day_of(w);
        named.push(w.to_lowercase());
    } else if let Some(w) = at(Some(i + 1)).filter(|w| day_of(w).is_some()) {
        day = day_of(w);
        named.push(w.to_lowercase());
        after = i + 2;
    }
    let year = at(Some(after)).and_then(year_of);
    if let Some(y) = year {
        named.push(y.to_string());
    }
    // "May I…", "March on": these two are words too; alone they name no date.
    if matches!(month, 3 | 5) && day.is_none() && year.is_none() {
        return None;
    }
    Some((DateRef { year, month, day }, named))
}

/// The date a timestamp names: ISO ("2023-05-08T13:56:00Z") or written out ("1:56 pm on
/// 8 May, 2023"); `None` when it names no full date.
pub fn timestamp_date(ts: &str) -> Option<(i32, u32, u32)> {
    let iso = || -> Option<(i32, u32, u32)> {
        let mut parts = ts.get(..10)?.split('-');
        let y = parts.next()?.parse().ok()?;
        let m = parts
            .next()?
            .parse()
            .ok()
            .filter(|m| (1..=12).contains(m))?;
        let d = parts
            .next()?
            .parse()
            .ok()
            .filter(|d| (1..=31).contains(d))?;
        Some((y, m, d))
    };
    iso().or_else(|| {
        let (d, _) = date_ref(ts)?;
        Some((d.year?, d.month, d.day?))
    })
}

/// Read a time reference from a question, relative to the current session and day.
pub fn time_ref(question: &str, now_session: u32, now_day: Option<u32>) -> Option<TimeRef> {
    let ws = words(question);
    let num = |w: &str| -> Option<u32> {
        w.parse().ok().or(match w {
            "one" | "a" => Some(1),
            "two" => Some(2),
            "three" => Some(3),
            "four" => Some(4),
            "five" => Some(5),
            "six" => Some(6),
            "seven" => Some(7),
            "eight" => Some(8),
            "nine" => Some(9),
            "ten" => Some(10),
            _ => None,
        })
    };
    for (i, w) in ws.iter().enumerate() {
        let next = ws.get(i + 1).map(String::as_str);
        let prev = i.checked_sub(1).and_then(|p| ws.get(p)).map(String::as_str);
        match (w.as_str(), next) {
            ("session", Some(n)) if num(n).is_some() && n.parse::<u32>().is_ok() => {
                return num(n).map(TimeRef::Session);
            }
            ("day", Some(n)) if n.parse::<u32>().is_ok() => {
                let d = num(n)?;
                return Some(TimeRef::Days(d, d));
            }
            ("last" | "previous", Some("session" | "time")) => {
                return Some(TimeRef::Session(now_session.saturating_sub(1).max(1)));
            }
            ("this", Some("session")) => return Some(TimeRef::Session(now_session)),
            ("sessions" | "session", Some("ago")) => {
                let n = prev.and_then(num)?;
                return Some(TimeRef::Session(now_session.saturating_sub(n).max(1)));
            }
            ("last", Some("week")) => {
                let d = now_day?;
                return Some(TimeRef::Days(d.saturating_sub(13), d.saturating_sub(7)));
            }
            ("yesterday", _) => {
                let d = now_day?.saturating_sub(1);
                return Some(TimeRef::Days(d, d));
            }
            ("days" | "weeks", Some("ago")) => {
                let n = prev.and_then(num)?;
                let d = now_day?;
                let back = if w == "weeks" { n * 7 } else { n };
                let centre = d.saturating_sub(back);
                let slack = if w == "weeks" { 3 } else { 1 };
                return Some(TimeRef::Days(
                    centre.saturating_sub(slack),
                    (centre + slack).min(d),
                ));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_frame_words_are_not_searched() {
        assert_eq!(
            query_words("What kind of art does Caroline make?"),
            vec!["art", "caroline", "make"]
        );
    }

    #[test]
    fn calendar_dates_are_read_from_questions_and_timestamps() {
        let d = |t: &str| date_ref(t).map(|r| r.0);
        assert_eq!(
            d("What painting did she show on October 13, 2023?"),
            Some(DateRef {
                year: Some(2023),
                month: 10,
                day: Some(13)
            })
        );
        assert_eq!(
            d("What did Maria start, as mentioned on 3 June, 2023?"),
            Some(DateRef {
                year: Some(2023),
                month: 6,
                day: Some(3)
            })
        );
        assert_eq!(
            d("What did John host in May 2023?"),
            Some(DateRef {
                year: Some(2023),
                month: 5,
                day: None
            })
        );
        assert_eq!(
            d("When did she go camping in June?").map(|r| r.month),
            Some(6)
        );
        // "may" the verb, "march" the verb, and a lowercase month are not dates.
        assert_eq!(d("What may the captain march on?"), None);
        assert_eq!(d("Where did they go?"), None);
        let (sept, named) = date_ref("on the 3rd of Sept. 2023").unwrap();
        assert_eq!((sept.month, sept.day, sept.year), (9, None, Some(2023)));
        assert_eq!(named, vec!["sept".to_string(), "2023".to_string()]);
        assert_eq!(d("May I ask what happened in March?"), None);
        assert_eq!(timestamp_date("1:56 pm on 8 May, 2023"), Some((2023, 5, 8)));
        assert_eq!(timestamp_date("2026-11-24T13:48:43Z"), Some((2026, 11, 24)));
        assert_eq!(timestamp_date("turn 4"), None);
        assert_eq!(timestamp_date("Überall 😀 ş"), None);
        let june = DateRef {
            year: None,
            month: 6,
            day: None,
        };
        assert!(june.matches((2023, 6, 27)));
        assert!(!june.matches((2023, 7, 3)));
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        let mut sorted = STOPWORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOPWORDS);
    }

    #[test]
    fn content_words_drop_stopwords_and_possessives() {
        assert_eq!(
            content_words("What do we know about Galvin's ship?"),
            vec!["galvin", "ship"]
        );
    }

    #[test]
    fn names_come_from_tags_and_capitals() {
        let n = names_in(
            "You dock at Port Meridian. The merchant @Galvin waves, and @{Captain Rhee} glares.",
        );
        assert!(n.contains(&"Galvin".to_string()), "{n:?}");
        assert!(n.contains(&"Captain Rhee".to_string()), "{n:?}");
        assert!(n.contains(&"Port Meridian".to_string()), "{n:?}");
        assert!(!n.iter().any(|x| x == "The" || x == "You"), "{n:?}");
    }

    #[test]
    fn the_tables_words_are_not_names() {
        let n = names_in(
            "LASER FEELINGS: Zara-7 asked: What now? The GM answered: Ask Galvin at the OOC desk.",
        );
        assert_eq!(n, vec!["Galvin".to_string()], "{n:?}");
    }

    #[test]
    fn untag_leaves_plain_names() {
        assert_eq!(
            untag("The merchant @Galvin waves at @{Captain Rhee}; mail me @ noon."),
            "The merchant Galvin waves at Captain Rhee; mail me @ noon."
        );
    }

    #[test]
    fn time_references_are_read_relative_to_now() {
        assert_eq!(
            time_ref("What happened last session?", 5, None),
            Some(TimeRef::Session(4))
        );
        assert_eq!(
            time_ref("what did we learn in session 3", 5, None),
            Some(TimeRef::Session(3))
        );
        assert_eq!(
            time_ref("What did we learn on day 15?", 5, Some(40)),
            Some(TimeRef::Days(15, 15))
        );
        assert_eq!(
            time_ref("Who did we meet three sessions ago?", 9, None),
            Some(TimeRef::Session(6))
        );
        assert_eq!(
            time_ref("What happened last week?", 9, Some(30)),
            Some(TimeRef::Days(17, 23))
        );
        assert_eq!(time_ref("What happened last week?", 9, None), None);
        assert_eq!(time_ref("Who is Galvin?", 9, Some(3)), None);
    }

    #[test]
    fn query_words_leave_time_to_the_time_signal() {
        assert_eq!(
            query_words("What did we trade on day 26, and for how much?"),
            vec!["trade", "much"]
        );
        assert_eq!(
            query_words("Who did we meet three sessions ago?"),
            vec!["meet"]
        );
        assert_eq!(
            query_words("Who owns the 26 crates?"),
            vec!["owns", "26", "crates"]
        );
    }

    #[test]
    fn questions_lean_to_the_present_or_the_beginning() {
        assert_eq!(
            lean("Who is holding the data crystal at the moment?"),
            Some(Lean::Latest)
        );
        assert_eq!(lean("Where can we find Galvin now?"), Some(Lean::Latest));
        assert_eq!(
            lean("Where did we first meet Tamsin?"),
            Some(Lean::Earliest)
        );
        assert_eq!(lean("Who is Galvin?"), None);
    }

    #[test]
    fn names_normalise_without_articles() {
        assert_eq!(normalise_name("The Old  Trader"), "old trader");
        assert_eq!(normalise_name("Galvin"), "galvin");
    }

    proptest::proptest! {
        /// Any text, however odd: a date read from it is a real month and day, and the words
        /// it names are words of the text.
        #[test]
        fn dates_read_from_any_text_are_calendar_dates(text in "\\PC{0,60}( [0-9]{1,4})?( (May|June|Oct\\.|Sept)( [0-9]{1,4},?)?)?( [0-9]{4})?") {
            if let Some((d, named)) = date_ref(&text) {
                proptest::prop_assert!((1..=12).contains(&d.month));
                proptest::prop_assert!(d.day.is_none_or(|x| (1..=31).contains(&x)));
                let lower = text.to_lowercase();
                for w in named {
                    proptest::prop_assert!(lower.contains(&w), "{w} not in {lower}");
                }
            }
            if let Some((_, m, d)) = timestamp_date(&text) {
                proptest::prop_assert!((1..=12).contains(&m) && (1..=31).contains(&d));
            }
        }
    }
}
