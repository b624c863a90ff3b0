//! Checks of a game master's words (the AI GM's): does the narration decide what a player
//! character does or feels, does an outcome contradict the dice, does it read a private note
//! out word for word. Word-list heuristics, like the overreach check: cheap, explainable, and
//! meant to catch the obvious cases before the table sees them, not to judge style.

/// Verbs of choosing, feeling and thinking: the GM never decides these for a character.
const MIND: &[&str] = &[
    "decide", "choose", "agree", "refuse", "feel", "fear", "think", "believe", "want", "hope",
    "realize", "realise", "remember", "wonder", "love", "hate", "panic", "hesitate", "resolve",
    "trust", "regret",
];
/// Verbs of doing: in a scene's narration the GM does not make a character act.
const DEED: &[&str] = &[
    "draw", "shoot", "fire", "attack", "punch", "grab", "run", "flee", "jump", "dive", "say",
    "shout", "yell", "whisper", "reply", "answer", "nod", "smile", "laugh", "cry", "sigh", "reach",
    "take", "open", "press", "hack", "pilot", "steer", "walk", "step", "move", "turn", "kiss",
    "charge", "sneak", "climb", "hide", "ask", "tell", "order", "activate", "aim",
];
/// Words that say an attempt went badly without failing outright: a cost, a near miss (with
/// [`WRONG`], every word that says it did not go cleanly).
const COSTLY: &[&str] = &[
    "failing",
    "collapse",
    "collapses",
    "lost",
    "lose",
    "loses",
    "slip",
    "slips",
    "slipped",
    "too",
    "alarm",
    "alarms",
    "hurt",
    "injured",
    "wounded",
    "damage",
    "damaged",
    "cost",
    "costs",
    "but",
    "however",
    "unfortunately",
    "complication",
    "nearly",
    "almost",
    "barely",
];
/// Words that say an attempt went cleanly.
const CLEAN: &[&str] = &[
    "succeed",
    "succeeds",
    "succeeded",
    "success",
    "successfully",
    "perfectly",
    "flawlessly",
    "effortlessly",
    "easily",
    "triumph",
    "triumphantly",
    "cleanly",
    "works",
    "worked",
];
/// Words that say it went clearly wrong (not merely "with a cost").
const WRONG: &[&str] = &[
    "fail",
    "fails",
    "failed",
    "miss",
    "misses",
    "missed",
    "wrong",
    "worse",
    "botch",
    "botched",
    "backfire",
    "backfires",
    "backfired",
];

/// Lowercase words of `text` (letters and digits; an apostrophe splits "Zara's").
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The sentences of `text`, each as its own string.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if matches!(c, '.' | '!' | '?' | '\n') {
            out.push(std::mem::take(&mut cur));
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `w` is a form of one of `verbs` (base, -s, -es, -ed, -d, -ing).
fn verb_in(verbs: &[&str], w: &str) -> bool {
    verbs.iter().any(|v| {
        w == *v
            || w.strip_prefix(v)
                .is_some_and(|rest| matches!(rest, "s" | "es" | "ed" | "d" | "ing"))
            || (v.ends_with('e') && w.strip_suffix("ing") == v.strip_suffix('e'))
    })
}

/// Where `needle` occurs as consecutive words in `hay`: the index after it.
fn ends_of(hay: &[String], needle: &[String]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return Vec::new();
    }
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i + needle.len())
        .collect()
}

/// The first sentence where a character (by full or first name) is the one who chooses, feels
/// or, with `deeds`, acts: "Zara decides…", "Zara quickly draws…". `you` counts as a character
/// ("You feel…"). A question asks the players ("What do you think?"): it decides nothing.
pub fn decides_for(text: &str, names: &[String], deeds: bool) -> Option<String> {
    decides(text, names, true, deeds)
}

/// The first sentence where a named character (not `you`) acts, chooses or feels: for GMs who
/// narrate in the second person, where "you push the door open" tells the result of what a
/// player attempted, but "Zara draws her blaster" makes Zara do what her player never said.
pub fn named_deeds(text: &str, names: &[String]) -> Option<String> {
    decides(text, names, false, true)
}

fn decides(text: &str, names: &[String], you: bool, deeds: bool) -> Option<String> {
    let mut subjects: Vec<Vec<String>> = names.iter().map(|n| words(n)).collect();
    subjects.extend(
        names
            .iter()
            .filter_map(|n| words(n).into_iter().next().map(|f| vec![f])),
    );
    if you {
        subjects.push(vec!["you".to_string()]);
    }
    subjects.retain(|s| !s.is_empty());
    sentences(text).into_iter().find(|sentence| {
        if sentence.ends_with('?') {
            return false;
        }
        let ws = words(sentence);
        subjects.iter().any(|name| {
            ends_of(&ws, name).into_iter().any(|after| {
                let mut next = ws.iter().skip(after);
                let mut verb = next.next();
                if verb.is_some_and(|v| v.ends_with("ly")) {
                    verb = next.next();
                }
                verb.is_some_and(|v| verb_in(MIND, v) || (deeds && verb_in(DEED, v)))
            })
        })
    })
}

/// Whether an outcome's words go against the dice: a clean success told after no successes,
/// or a clear failure told after two or more. `None` when the dice disagree among themselves
/// (several rolls in different bands) or there were none.
pub fn contradicts_dice(text: &str, successes: &[u32]) -> Option<String> {
    let ws = words(text);
    let has = |list: &[&str]| ws.iter().any(|w| list.contains(&w.as_str()));
    if !successes.is_empty() && successes.iter().all(|&n| n == 0) {
        return (has(CLEAN) && !has(WRONG) && !has(COSTLY)).then(|| {
            "the dice show no successes (it goes wrong, things get worse), but the outcome tells a clean success".to_string()
        });
    }
    if !successes.is_empty() && successes.iter().all(|&n| n >= 2) {
        return (has(WRONG) && !has(CLEAN)).then(|| {
            "the dice show two or more successes (it is done well), but the outcome tells a failure".to_string()
        });
    }
    None
}

/// Words of a note read out in a row: the phrase, when eight words of a note (or a whole note
/// of four to seven words) appear in `text` as they are in the note.
pub fn repeats_note(text: &str, notes: &[String]) -> Option<String> {
    let ws = words(text);
    notes.iter().find_map(|note| {
        note_phrases(note)
            .into_iter()
            .find(|phrase| !ends_of(&ws, phrase).is_empty())
            .map(|phrase| phrase.join(" "))
    })
}

/// The phrases of a note that read it out: every run of eight words, or the whole note when it
/// has four to seven.
fn note_phrases(note: &str) -> Vec<Vec<String>> {
    const RUN: usize = 8;
    let nw = words(note);
    let run = match nw.len() {
        n if n >= RUN => RUN,
        n if n >= 4 => n,
        _ => return Vec::new(),
    };
    nw.windows(run).map(<[String]>::to_vec).collect()
}

/// `text` with every sentence that carries part of a note read out (see [`repeats_note`])
/// replaced by `[withheld]`: what a GM's twice-flagged text becomes before anyone sees it.
pub fn withhold_notes(text: &str, notes: &[String]) -> String {
    // Each word of the text, with the sentence it is in.
    let spans = sentence_spans(text);
    let mut ws: Vec<String> = Vec::new();
    let mut at: Vec<usize> = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        let sentence_words = words(text.get(span.clone()).unwrap_or(""));
        at.extend(std::iter::repeat_n(i, sentence_words.len()));
        ws.extend(sentence_words);
    }
    let mut blank = std::collections::BTreeSet::new();
    for phrase in notes.iter().flat_map(|n| note_phrases(n)) {
        for end in ends_of(&ws, &phrase) {
            let start = end - phrase.len();
            blank.extend(at.get(start..end).unwrap_or(&[]).iter().copied());
        }
    }
    let mut out = String::with_capacity(text.len());
    for (i, span) in spans.into_iter().enumerate() {
        let sentence = text.get(span).unwrap_or("");
        if blank.contains(&i) {
            let body = sentence.trim();
            out.push_str(sentence.replacen(body, "[withheld]", 1).as_str());
        } else {
            out.push_str(sentence);
        }
    }
    out
}

/// Byte ranges of the sentences of `text`, covering it, each ending after its `.`, `!`, `?` or
/// line break.
fn sentence_spans(text: &str) -> Vec<std::ops::Range<usize>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["Zara Voss".to_string(), "Okonkwo".to_string()]
    }

    #[test]
    fn a_note_read_out_twice_is_withheld_sentence_by_sentence() {
        let notes =
            vec!["The captain of the station is secretly working for the Hive Armada.".to_string()];
        let text = "Rain falls. Word is, THE CAPTAIN of the station is secretly working for \
                    the Hive Armada! The bell rings.";
        let out = withhold_notes(text, &notes);
        assert_eq!(out, "Rain falls. [withheld] The bell rings.");
        assert_eq!(repeats_note(&out, &notes), None);
        // A run split across a full stop blanks both halves.
        let split = "The captain of the station. Is secretly working for the Hive Armada.";
        assert_eq!(withhold_notes(split, &notes), "[withheld] [withheld]");
        assert_eq!(withhold_notes("Nothing here.", &notes), "Nothing here.");
    }

    #[test]
    fn a_narration_that_makes_a_character_act_or_feel_is_caught() {
        let n = names();
        for text in [
            "The airlock hisses. Zara quickly draws her blaster.",
            "Okonkwo decides to trust the stranger.",
            "Zara Voss feels a chill.",
            "You feel the weight of the choice.",
        ] {
            assert!(decides_for(text, &n, true).is_some(), "{text}");
        }
        for text in [
            "The airlock hisses open. What do you do?",
            "Zara's console flickers; a Zorgon cruiser drops out of warp.",
            "The guard points at Okonkwo and shouts.",
            "What do you think of them? What do you do?",
        ] {
            assert_eq!(decides_for(text, &n, true), None, "{text}");
        }
        // An outcome restates the declared deed; only minds are off limits there.
        assert_eq!(
            decides_for("Zara fires and the drone drops.", &n, false),
            None
        );
        assert!(decides_for("Zara fires, and she fears the worst.", &n, false).is_none());
        assert!(decides_for("Zara fires. Zara realizes it was a trap.", &n, false).is_some());
    }

    #[test]
    fn an_outcome_against_the_dice_is_caught_and_a_fitting_one_is_not() {
        let clean = "Zara succeeds perfectly: the lock opens.";
        let failed = "The shot misses and the alarm wails.";
        let cost = "The lock opens, but the alarm sounds.";
        assert!(contradicts_dice(clean, &[0]).is_some());
        assert!(contradicts_dice(failed, &[0]).is_none());
        assert!(contradicts_dice(failed, &[2]).is_some());
        assert!(contradicts_dice(clean, &[3]).is_none());
        assert!(contradicts_dice(cost, &[1]).is_none());
        assert!(
            contradicts_dice(clean, &[0, 2]).is_none(),
            "mixed bands are not judged"
        );
        assert!(contradicts_dice(clean, &[]).is_none());
    }

    #[test]
    fn a_private_note_read_out_is_caught_and_a_hint_is_not() {
        let notes = vec![
            "The captain of the station is secretly working for the Hive Armada.".to_string(),
            "Void crystals sing".to_string(),
        ];
        let read_out =
            "Word is the captain of the station is secretly working for the Hive Armada!";
        assert_eq!(
            repeats_note(read_out, &notes).as_deref(),
            Some("the captain of the station is secretly working")
        );
        assert_eq!(
            repeats_note("The station captain avoids your eyes.", &notes),
            None
        );
        assert_eq!(
            repeats_note("void crystals sing", &notes),
            None,
            "short notes"
        );
    }

    #[test]
    fn unicode_text_is_read_without_slicing() {
        let n = vec!["Zoë Ünal".to_string()];
        assert!(decides_for("Zoë décide… Zoë feels ☃ cold.", &n, true).is_some());
        assert_eq!(repeats_note("ÆØÅ 倀 🚀", &["倀 🚀".to_string()]), None);
    }
}
