#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fuzz target: the overreach validator (`check`, `auto_correct`, `feedback`) on what a model
//! or a person may write as an action.

use proptest::prelude::*;
use troupe_fuzz::{config, nasty_text};
use troupe_validator::{auto_correct, check, feedback};

/// Words the validator's rules look for, and the suffixes its lemmatiser strips, so random
/// text reaches the clause, verb and inflection code.
const VOCAB: &[&str] = &[
    "I",
    "i",
    "we",
    "my",
    "Zara-7",
    "he",
    "she",
    "the",
    "a",
    "guard",
    "goblin",
    "pirate",
    "door",
    "button",
    "it",
    "kill",
    "kills",
    "killed",
    "shoot",
    "shoots",
    "at",
    "hit",
    "hits",
    "see",
    "find",
    "open",
    "opens",
    "falls",
    "slumps",
    "drop",
    "stop",
    "stopped",
    "try",
    "to",
    "and",
    "but",
    "then",
    "if",
    "while",
    "until",
    "will",
    "won't",
    "I'll",
    "I'm",
    "can",
    "so that",
    "is",
    "was",
    "unlocked",
    "down",
    "dead",
    "successfully",
    "manages",
    "unseen",
    "out cold",
    "there's",
    "behind",
    "under",
    "ed",
    "ing",
    "s",
    "es",
    "ies",
    "ied",
    "d",
    "ly",
    "n't",
    "’ll",
    "\"",
    "“",
    "”",
    "«",
    "»",
    "*",
];

/// Every excerpt of a verdict is a piece of the text, and the verdict agrees with itself.
fn check_all(text: &str) -> Result<(), TestCaseError> {
    let verdict = check(text);
    prop_assert_eq!(verdict.flagged, !verdict.violations.is_empty());
    for v in &verdict.violations {
        prop_assert!(
            text.contains(&v.excerpt),
            "excerpt {:?} not in {:?}",
            v.excerpt,
            text
        );
    }
    let fb = feedback(&verdict);
    prop_assert_eq!(fb.is_empty(), !verdict.flagged);
    // What `removed` quotes is not checked against the text: a later correction pass quotes the
    // text as the earlier one left it (capitalised, joined over a cut, or "tries to" rewritten),
    // which the inputs kept below showed.
    let corrected = auto_correct(text);
    // Correcting twice must not panic either: the correction is what the log keeps.
    let _ = check(&corrected.text);
    let _ = auto_correct(&corrected.text);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn validator_never_panics(text in nasty_text(VOCAB, 40)) {
        check_all(&text)?;
    }
}

/// Inputs that once broke the validator.
#[test]
fn regressions() {
    for text in [
        // lemma_candidates cut "倀" (E5 80 80) between its two equal last bytes.
        "I 倀ed.",
        "I 倀ing the guard",
        "We 𐀀ed",
        // A later correction pass quotes what it removes from the tidied text.
        "successfully out cold",
        "shoot\r\nb.kill\u{200f}",
        "ı。kill .kill",
        "guardII:kill \nout cold。",
        "倀I\n,ＡＢＣ kill ",
    ] {
        check_all(text).unwrap();
    }
}
