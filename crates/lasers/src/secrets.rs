//! Keeping whispers where they were sent. Views show a layer only what it may know; text written
//! by someone who knows a secret (a directive, an OOC message, an action, a memory) is checked
//! before anyone else reads it, and any run of the secret's words in it is withheld.
//!
//! A run is four consecutive words of the secret (all of it when it is shorter), compared
//! case-insensitively, ignoring punctuation. That catches a secret passed on word for word or
//! nearly so; a paraphrase is a matter for the research flags, not for this filter.

use troupe_agents::Layer;

use crate::session::Whispered;

/// What replaces withheld words.
pub const WITHHELD: &str = "[withheld]";

/// Words of a secret in a row that count as passing it on.
const RUN: usize = 4;

/// Whether this layer of `agent` may know this whisper.
pub fn entitled(w: &Whispered, agent: &str, layer: Layer) -> bool {
    w.to.as_deref().is_none_or(|to| to == agent) && w.scope.reaches(layer)
}

/// The whispers this layer of `agent` may not know.
pub fn kept_from<'a>(whispers: &'a [Whispered], agent: &str, layer: Layer) -> Vec<&'a str> {
    whispers
        .iter()
        .filter(|w| !entitled(w, agent, layer))
        .map(|w| w.text.as_str())
        .collect()
}

/// Words with their byte spans, lowercased, letters and digits only.
fn words(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i, text.get(s..i).unwrap_or_default().to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((
            s,
            text.len(),
            text.get(s..).unwrap_or_default().to_lowercase(),
        ));
    }
    out
}

/// `text` with every run of any secret's words replaced by [`WITHHELD`].
pub fn withhold(text: &str, secrets: &[&str]) -> String {
    if secrets.is_empty() || text.is_empty() {
        return text.to_string();
    }
    let tw = words(text);
    // Byte spans to withhold.
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for secret in secrets {
        let sw: Vec<String> = words(secret).into_iter().map(|w| w.2).collect();
        if sw.is_empty() {
            continue;
        }
        let need = RUN.min(sw.len());
        for i in 0..tw.len() {
            for j in 0..sw.len() {
                let mut n = 0;
                while i + n < tw.len() && j + n < sw.len() && tw[i + n].2 == sw[j + n] {
                    n += 1;
                }
                if n >= need {
                    cut.push((tw[i].0, tw[i + n - 1].1));
                }
            }
        }
    }
    if cut.is_empty() {
        return text.to_string();
    }
    cut.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, b) in cut {
        if b <= at {
            continue;
        }
        if a >= at {
            out.push_str(text.get(at..a).unwrap_or_default());
            out.push_str(WITHHELD);
        }
        at = b;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

/// Whether `text` passes on any of `secrets` (the check [`withhold`] acts on).
pub fn reveals(text: &str, secrets: &[&str]) -> bool {
    withhold(text, secrets) != text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WhisperScope;

    #[test]
    fn runs_of_four_words_are_withheld_and_the_rest_kept() {
        let s = ["The vault code is 4471 and Galvin knows it"];
        assert_eq!(
            withhold("I whisper: the VAULT code is 4471! Then I run.", &s),
            "I whisper: [withheld]! Then I run."
        );
        // Three words in a row are ordinary speech.
        assert_eq!(withhold("Galvin knows it.", &s), "Galvin knows it.");
        // A short secret is withheld whole, wherever it appears.
        assert_eq!(
            withhold("Say zq-77 twice", &["zq 77"]),
            "Say [withheld] twice"
        );
        assert_eq!(withhold("nothing here", &[]), "nothing here");
        assert!(reveals("code is 4471 and", &s));
        assert!(!reveals("the code", &s));
    }

    #[test]
    fn overlapping_runs_and_two_secrets() {
        let s = ["a b c d e f", "x y z w"];
        assert_eq!(withhold("a b c d e f g", &s), "[withheld] g");
        assert_eq!(
            withhold("q c d e f x y z w q", &s),
            "q [withheld] [withheld] q"
        );
    }

    #[test]
    fn entitlement_follows_scope_and_recipient() {
        let w = |to: Option<&str>, scope| Whispered {
            to: to.map(String::from),
            scope,
            text: "t".into(),
        };
        let po = w(Some("kai"), WhisperScope::PlayerOnly);
        assert!(entitled(&po, "kai", Layer::Player));
        assert!(!entitled(&po, "kai", Layer::Character));
        assert!(!entitled(&po, "mira", Layer::Player));
        let co = w(Some("kai"), WhisperScope::CharacterOnly);
        assert!(!entitled(&co, "kai", Layer::Player));
        assert!(entitled(&co, "kai", Layer::Character));
        let table = w(None, WhisperScope::Both);
        assert!(entitled(&table, "mira", Layer::Character));
    }
}
