//! Behaviour worth a researcher's second look (FR-025). Each rule is cheap and explainable: the
//! report states the rule beside every flag, so a reader can judge it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use troupe_agents::ActionDecl;
use troupe_lasers::{Envelope, Event, Phase, RollOverride, VerdictResult, WhisperScope};

use crate::ev::Roster;
use crate::lasers;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    RepeatedValidationFailures,
    DirectiveIgnored,
    LeaderChange,
    SecretRevealed,
    /// A character-only whisper said where its player (and the table) hears it.
    CharacterSecretRevealed,
    GmOverride,
    ModelFailure,
    /// A check of the AI GM's words: an outcome against the dice, a character decided for, a
    /// private note read out.
    GmCheck,
}

impl FlagKind {
    pub fn title(self) -> &'static str {
        match self {
            FlagKind::RepeatedValidationFailures => "Repeated validation failures",
            FlagKind::DirectiveIgnored => "Character acts against its directive",
            FlagKind::LeaderChange => "Change of leader",
            FlagKind::SecretRevealed => "Player-only secret revealed",
            FlagKind::CharacterSecretRevealed => "Character-only secret revealed",
            FlagKind::GmOverride => "GM override",
            FlagKind::ModelFailure => "Model call gave up",
            FlagKind::GmCheck => "AI GM output check",
        }
    }

    /// The rule that raises it, for the report.
    pub fn rule(self) -> &'static str {
        match self {
            FlagKind::RepeatedValidationFailures => {
                "an action needed 2 or more retries, or an agent had 3 or more rejected attempts in a session"
            }
            FlagKind::DirectiveIgnored => {
                "lexical: fewer than 20% of the directive's content words (3+ letters, no stop words, first 5 letters compared) appear in the character's final action and dialogue; needs 4+ content words"
            }
            FlagKind::LeaderChange => {
                "the player whose proposals the party adopted most differs from the previous session's, or a run of 3+ adopted plans by one player is broken"
            }
            FlagKind::SecretRevealed => {
                "half or more (at least 2) of a player-only whisper's distinctive words (not yet said in public) later appear in that agent's directive, character output or OOC messages"
            }
            FlagKind::CharacterSecretRevealed => {
                "the same rule for a character-only whisper: its words in the character's action, dialogue or reaction (which its player hears) or in its player's directive or OOC messages"
            }
            FlagKind::GmOverride => {
                "the GM changed dice or a result, or rewrote an action (/success, /fail, faces, a correction kept or edited)"
            }
            FlagKind::ModelFailure => "a model call failed for good and its phase rolled back",
            FlagKind::GmCheck => {
                "the AI GM's text went against the dice band (word lists), said what a player character does or feels (a character's name before a verb of choosing, feeling or, in a scene, acting), or repeated 8 words of a private note; sent back once for a rewrite"
            }
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Flag {
    pub kind: FlagKind,
    pub session: u32,
    pub turn: u32,
    /// The event it points at.
    pub seq: u64,
    pub agent: Option<String>,
    pub detail: String,
}

const STOP: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "onto", "your", "you", "our",
    "are", "was", "were", "will", "would", "could", "should", "have", "has", "had", "but", "not",
    "its", "it's", "his", "her", "their", "them", "they", "then", "than", "there", "here", "what",
    "when", "where", "which", "who", "whom", "while", "also", "just", "any", "all", "can", "may",
    "might", "must", "out", "over", "under", "very", "some", "keep", "make", "get", "let", "see",
    "try", "use", "now", "one", "two", "i'm", "i'll", "we're", "let's", "don't", "about", "before",
    "after", "toward", "towards", "each", "more", "most", "much", "only", "own", "same", "too",
    "being", "been", "does", "did", "doing", "per", "via", "upon", "off", "down", "away", "back",
];

/// Content words: lowercase, 3+ letters, no stop words, compared by their first 5 letters (a
/// crude stem: "scanning" and "scanner" meet).
pub fn content_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| w.chars().count() >= 3 && !STOP.contains(&w.as_str()))
        .map(|w| w.chars().take(5).collect())
        .collect()
}

/// The share of `a`'s words found in `b`.
fn covered(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() {
        return 1.0;
    }
    a.intersection(b).count() as f64 / a.len() as f64
}

/// The text an AI put into the world through its character or the table.
fn action_text(action: &ActionDecl) -> String {
    format!("{} {}", action.action, action.dialogue)
}

/// Where a flag points: the event's session, turn and seq.
fn at(kind: FlagKind, env: &Envelope, agent: Option<&str>, detail: String) -> Flag {
    Flag {
        kind,
        session: env.session_number,
        turn: env.turn_number,
        seq: env.seq,
        agent: agent.filter(|a| !a.is_empty()).map(String::from),
        detail,
    }
}

/// Every flag of these events, in log order. Read as Lasers & Feelings' events: a newer
/// troupe's kind raises none, nor does a known kind that does not read (`Metrics::unreadable`
/// and the audit name it).
pub fn flags(events: &[Value]) -> Vec<Flag> {
    flags_of(&lasers::read(events))
}

/// The flags of rows already read.
pub(crate) fn flags_of(read: &[lasers::Row]) -> Vec<Flag> {
    let roster = Roster::from_read(read);
    let known: Vec<&Envelope> = lasers::known(read).collect();
    let mut out = Vec::new();
    validation_flags(&known, &mut out);
    directive_flags(&known, &mut out);
    leader_flags(&known, &roster, &mut out);
    secret_flags(&known, &roster, &mut out);
    for env in &known {
        out.extend(gm_flag(env, &roster));
    }
    out.sort_by_key(|f| (f.session, f.seq, f.kind));
    out
}

/// A GM's hand on the game (an override, a forced result, an action set), a check of the AI
/// GM's words, or a model call that gave up.
fn gm_flag(env: &Envelope, roster: &Roster) -> Option<Flag> {
    let over = |agent: Option<&str>, detail: String| at(FlagKind::GmOverride, env, agent, detail);
    Some(match &env.event {
        Event::GmRollOverride { agent, change, .. } if *change != RollOverride::Keep => over(
            Some(agent),
            format!(
                "the GM overrode {}'s roll ({})",
                roster.character(agent),
                change.word()
            ),
        ),
        Event::GmForcedResult { success } => over(
            None,
            if *success {
                "the GM forced the next roll to succeed (/success)".into()
            } else {
                "the GM forced the next roll to fail (/fail)".into()
            },
        ),
        Event::GmReviewedAction { agent, .. } => over(
            Some(agent),
            format!(
                "the GM set {}'s action after the validator gave up",
                roster.character(agent)
            ),
        ),
        Event::GmFlagged {
            check,
            detail,
            kept,
            ..
        } => at(
            FlagKind::GmCheck,
            env,
            None,
            format!(
                "{check} ({}): {detail}",
                if *kept {
                    "the rewrite was flagged too and reached the table"
                } else {
                    "sent back for a rewrite"
                }
            ),
        ),
        Event::PhaseFailed {
            agent,
            error,
            failures,
        } => at(
            FlagKind::ModelFailure,
            env,
            Some(agent),
            format!(
                "{} failed in {} (failure {failures}): {error}",
                roster.player(agent),
                env.phase.map_or("", Phase::as_str),
            ),
        ),
        _ => return None,
    })
}

fn validation_flags(events: &[&Envelope], out: &mut Vec<Flag>) {
    // Rejected attempts per (session, turn, agent) and per (session, agent).
    let mut per_turn: BTreeMap<(u32, u32, String), (u32, u64)> = BTreeMap::new();
    let mut per_session: BTreeMap<(u32, String), (u32, u64, u32)> = BTreeMap::new();
    for env in events {
        let Event::Validation { agent, result, .. } = &env.event else {
            continue;
        };
        if *result == VerdictResult::Passed {
            continue;
        }
        let (sn, tn) = (env.session_number, env.turn_number);
        let t = per_turn.entry((sn, tn, agent.clone())).or_default();
        t.0 += 1;
        t.1 = env.seq;
        let p = per_session.entry((sn, agent.clone())).or_default();
        p.0 += 1;
        p.1 = env.seq;
        p.2 = tn;
    }
    let mut flagged_turns = BTreeSet::new();
    for ((sn, tn, a), (n, sq)) in per_turn {
        if n >= 2 {
            flagged_turns.insert((sn, a.clone()));
            out.push(Flag {
                kind: FlagKind::RepeatedValidationFailures,
                session: sn,
                turn: tn,
                seq: sq,
                detail: format!("{n} attempts by {a} rejected for narrating a result in one turn"),
                agent: Some(a),
            });
        }
    }
    for ((sn, a), (n, sq, tn)) in per_session {
        if n >= 3 && !flagged_turns.contains(&(sn, a.clone())) {
            out.push(Flag {
                kind: FlagKind::RepeatedValidationFailures,
                session: sn,
                turn: tn,
                seq: sq,
                detail: format!("{n} attempts by {a} rejected in session {sn}"),
                agent: Some(a),
            });
        }
    }
}

/// A character's final action of a turn: the event, whose it is and what it did.
type Acted<'a> = (&'a Envelope, &'a str, &'a ActionDecl);

fn directive_flags(events: &[&Envelope], out: &mut Vec<Flag>) {
    // The latest directive per agent, then that agent's final action of the same turn.
    let mut directive: BTreeMap<String, (u32, u32, String)> = BTreeMap::new();
    let mut last_action: BTreeMap<String, Acted> = BTreeMap::new();
    let check = |d: &(u32, u32, String), (env, agent, action): Acted, out: &mut Vec<Flag>| {
        let want = content_words(&d.2);
        if want.len() < 4 {
            return;
        }
        let got = content_words(&action_text(action));
        let share = covered(&want, &got);
        if share < 0.2 {
            out.push(Flag {
                kind: FlagKind::DirectiveIgnored,
                session: env.session_number,
                turn: env.turn_number,
                seq: env.seq,
                agent: Some(agent.to_string()),
                detail: format!(
                    "{:.0}% of the directive's content words appear in the action (directive: \"{}\")",
                    share * 100.0,
                    clip(&d.2, 120)
                ),
            });
        }
    };
    for env in events {
        match &env.event {
            Event::Directive { agent, text, .. } => {
                if let (Some(d), Some(act)) = (directive.get(agent), last_action.remove(agent)) {
                    check(d, act, out);
                }
                directive.insert(
                    agent.clone(),
                    (env.session_number, env.turn_number, text.clone()),
                );
            }
            Event::CharacterAction { agent, action, .. } => {
                last_action.insert(agent.clone(), (env, agent, action));
            }
            Event::TurnCompleted | Event::SessionEnded { .. } => {
                for (a, act) in std::mem::take(&mut last_action) {
                    if let Some(d) = directive.get(&a)
                        && d.0 == act.0.session_number
                        && d.1 == act.0.turn_number
                    {
                        check(d, act, out);
                    }
                }
            }
            _ => {}
        }
    }
    for (a, act) in last_action {
        if let Some(d) = directive.get(&a) {
            check(d, act, out);
        }
    }
}

/// A plan the party adopted: its proposer (none when the round was conflicted or no plan led).
fn adopted_from(event: &Event) -> Option<&str> {
    let Event::Consensus {
        outcome,
        plan,
        proposer,
        ..
    } = event
    else {
        return None;
    };
    lasers::given(proposer.as_ref())
        .filter(|_| lasers::given(plan.as_ref()).is_some() && outcome.as_str() != "conflicted")
}

fn leader_flags(events: &[&Envelope], roster: &Roster, out: &mut Vec<Flag>) {
    let mut per_session: BTreeMap<u32, (BTreeMap<String, u32>, u64, u32)> = BTreeMap::new();
    let mut streak: Option<(String, u32)> = None;
    for env in events {
        let Some(p) = adopted_from(&env.event) else {
            continue;
        };
        let p = roster.agent_of(p);
        let entry = per_session
            .entry(env.session_number)
            .or_insert_with(|| (BTreeMap::new(), env.seq, env.turn_number));
        *entry.0.entry(p.clone()).or_default() += 1;
        match &mut streak {
            Some((who, n)) if *who == p => *n += 1,
            Some((who, n)) => {
                if *n >= 3 {
                    let detail = format!(
                        "{} had {n} plans adopted in a row; now the party follows {}",
                        roster.player(who),
                        roster.player(&p)
                    );
                    out.push(at(FlagKind::LeaderChange, env, Some(&p), detail));
                }
                streak = Some((p, 1));
            }
            None => streak = Some((p, 1)),
        }
    }
    let mut previous: Option<String> = None;
    for (sn, (adopted, sq, tn)) in per_session {
        let now = crate::metrics::leader(&adopted);
        if let (Some(before), Some(now)) = (&previous, &now)
            && before != now
        {
            out.push(Flag {
                kind: FlagKind::LeaderChange,
                session: sn,
                turn: tn,
                seq: sq,
                agent: Some(now.clone()),
                detail: format!(
                    "the party mostly followed {} last session and {} in session {sn}",
                    roster.player(before),
                    roster.player(now)
                ),
            });
        }
        if now.is_some() {
            previous = now;
        }
    }
}

/// A whisper still kept: whose, which event, its scope's flag, and its distinctive words.
struct Secret {
    agent: String,
    whisper: u64,
    kind: FlagKind,
    words: BTreeSet<String>,
    leaked: bool,
}

/// The scope's flag, for the whispers that are one agent's secret: player-only (its character
/// must not know) and character-only (its player must not know, so its character must not say
/// it where the table, its player included, hears it).
fn secret_kind(scope: WhisperScope) -> Option<FlagKind> {
    match scope {
        WhisperScope::PlayerOnly => Some(FlagKind::SecretRevealed),
        WhisperScope::CharacterOnly => Some(FlagKind::CharacterSecretRevealed),
        WhisperScope::Both => None,
    }
}

fn secret_flags(events: &[&Envelope], roster: &Roster, out: &mut Vec<Flag>) {
    let mut public: BTreeSet<String> = BTreeSet::new();
    let mut secrets: Vec<Secret> = Vec::new();
    for env in events {
        if let Some(t) = said_in_public(&env.event) {
            public.extend(content_words(&t));
        } else if let Event::Whisper { to, scope, text } = &env.event {
            if let Some(kind) = secret_kind(*scope) {
                let to = lasers::given(to.as_ref());
                secrets.extend(whispered(env.seq, to, text, kind, &public, roster));
            }
        } else if let Some((agent, text, channel)) = agents_words(&env.event) {
            let said = content_words(&text);
            for secret in secrets.iter_mut().filter(|x| !x.leaked && x.agent == agent) {
                if let Some(flag) = leak(secret, &said, channel, env, roster) {
                    secret.leaked = true;
                    out.push(flag);
                }
            }
        }
    }
}

/// What the GM said in front of everyone.
fn said_in_public(event: &Event) -> Option<String> {
    match event {
        Event::GmNarration { text } | Event::GmOutcome { text } => Some(text.clone()),
        Event::GmAnswers { answers, .. } => Some(answers.join(" ")),
        Event::LaserFeelingsAnswer { answer, .. } => Some(answer.clone()),
        _ => None,
    }
}

/// A whisper's secret for each agent it reached (`to`, or the whole table), by its words the
/// table has not heard yet.
fn whispered(
    seq: u64,
    to: Option<&str>,
    text: &str,
    kind: FlagKind,
    public: &BTreeSet<String>,
    roster: &Roster,
) -> Vec<Secret> {
    let words: BTreeSet<String> = content_words(text).difference(public).cloned().collect();
    if words.is_empty() {
        return Vec::new();
    }
    let to: Vec<String> = match to {
        Some(t) => vec![roster.agent_of(t)],
        None => roster.agents(),
    };
    to.into_iter()
        .map(|agent| Secret {
            agent,
            whisper: seq,
            kind,
            words: words.clone(),
            leaked: false,
        })
        .collect()
}

/// An AI's words that reach someone else (another layer, the table): whose, what, and where
/// they went.
fn agents_words(event: &Event) -> Option<(&str, String, &'static str)> {
    Some(match event {
        Event::Directive { agent, text, .. } => {
            (agent, text.clone(), "its directive to its character")
        }
        Event::CharacterAction { agent, action, .. } => {
            (agent, action_text(action), "its character's action")
        }
        Event::CharacterReaction { agent, text } => {
            (agent, text.clone(), "its character's reaction")
        }
        Event::OocMessage {
            agent,
            message,
            proposal,
            ..
        } => (
            agent,
            format!("{message} {}", proposal.as_deref().unwrap_or("")),
            "an OOC message to the party",
        ),
        _ => return None,
    })
}

/// The flag when `said` repeats half or more (at least 2) of the secret's words.
fn leak(
    secret: &Secret,
    said: &BTreeSet<String>,
    channel: &str,
    env: &Envelope,
    roster: &Roster,
) -> Option<Flag> {
    let hit: Vec<&str> = secret
        .words
        .intersection(said)
        .map(String::as_str)
        .collect();
    if hit.len() < secret.words.len().div_ceil(2).max(2) {
        return None;
    }
    let scope = match secret.kind {
        FlagKind::CharacterSecretRevealed => "character-only",
        _ => "player-only",
    };
    let detail = format!(
        "{} repeats words of the {scope} whisper (event {}) in {channel}: {}",
        roster.player(&secret.agent),
        secret.whisper,
        hit.join(", ")
    );
    Some(at(secret.kind, env, Some(&secret.agent), detail))
}

fn clip(text: &str, n: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= n {
        folded
    } else {
        format!("{}…", folded.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A row read as the game's event (`crate::lasers::rows::row`), at `seq` in `turn`.
    fn ev(seq: u64, turn: u32, v: Value) -> Value {
        let mut v = crate::lasers::rows::row(v);
        let o = v.as_object_mut().unwrap();
        o.insert("seq".into(), json!(seq));
        o.insert("session_number".into(), json!(1));
        o.insert("turn_number".into(), json!(turn));
        v
    }

    fn kinds(f: &[Flag]) -> Vec<FlagKind> {
        f.iter().map(|f| f.kind).collect()
    }

    #[test]
    fn content_words_drop_stop_words_and_stem() {
        let w = content_words("Keep the scanners on that heat signature!");
        assert_eq!(
            w.into_iter().collect::<Vec<_>>(),
            ["heat", "scann", "signa"]
        );
    }

    #[test]
    fn an_action_unrelated_to_its_directive_is_flagged_and_a_faithful_one_is_not() {
        let directive = ev(
            1,
            1,
            json!({"event_type": "directive", "agent": "alex",
            "text": "Bring the Raptor down carefully in the docking bay and watch the heat signature."}),
        );
        let faithful = ev(
            2,
            1,
            json!({"event_type": "character_action", "agent": "alex",
            "action": {"action": "I ease the Raptor into the docking bay, eyes on the heat signature.", "dialogue": "", "task_type": "lasers"}}),
        );
        let stray = ev(
            2,
            1,
            json!({"event_type": "character_action", "agent": "alex",
            "action": {"action": "I start singing to the crew about my home planet.", "dialogue": "La la la!", "task_type": "lasers"}}),
        );
        let done = ev(3, 1, json!({"event_type": "turn_completed"}));
        assert!(flags(&[directive.clone(), faithful, done.clone()]).is_empty());
        let f = flags(&[directive, stray, done]);
        assert_eq!(kinds(&f), [FlagKind::DirectiveIgnored]);
        assert_eq!((f[0].seq, f[0].turn), (2, 1));
    }

    #[test]
    fn repeated_rejections_are_flagged_once_per_turn() {
        let v = |seq, attempt, result: &str| {
            ev(
                seq,
                2,
                json!({"event_type": "validation", "agent": "alex", "attempt": attempt, "result": result}),
            )
        };
        let f = flags(&[v(1, 1, "retry"), v(2, 2, "passed")]);
        assert!(f.is_empty(), "{f:?}");
        let f = flags(&[
            v(1, 1, "retry"),
            v(2, 2, "retry"),
            v(3, 3, "auto_corrected"),
        ]);
        assert_eq!(kinds(&f), [FlagKind::RepeatedValidationFailures]);
        assert_eq!(f[0].seq, 3);
    }

    #[test]
    fn a_player_only_secret_echoed_by_the_character_is_flagged() {
        let events = [
            ev(
                1,
                1,
                json!({"event_type": "gm_narration", "text": "A derelict freighter drifts nearby."}),
            ),
            ev(
                2,
                1,
                json!({"event_type": "whisper", "to": "alex", "scope": "player_only",
                "text": "The freighter's captain is secretly a Consortium informant."}),
            ),
            ev(
                3,
                1,
                json!({"event_type": "character_action", "agent": "sam",
                "action": {"action": "I hail the captain; the Consortium informant must answer.", "dialogue": "", "task_type": "lasers"}}),
            ),
            ev(
                4,
                1,
                json!({"event_type": "character_action", "agent": "alex",
                "action": {"action": "I confront the captain: you are a Consortium informant!", "dialogue": "", "task_type": "lasers"}}),
            ),
        ];
        let f: Vec<Flag> = flags(&events)
            .into_iter()
            .filter(|f| f.kind == FlagKind::SecretRevealed)
            .collect();
        // Only the whispered agent can leak it; "freighter" was public already.
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].seq, 4);
        assert!(!f[0].detail.contains("freig"), "{}", f[0].detail);
    }

    #[test]
    fn a_character_only_secret_said_aloud_is_flagged_as_its_own_kind() {
        let whisper = ev(
            1,
            1,
            json!({"event_type": "whisper", "to": "sam", "scope": "character_only",
            "text": "You once served with the pirate queen Vex aboard the Nightjar."}),
        );
        // Acting on it without saying it is keeping it.
        let acted = ev(
            2,
            1,
            json!({"event_type": "character_action", "agent": "sam",
            "action": {"action": "I study the pirate ship's hull in silence.", "dialogue": "", "task_type": "lasers"}}),
        );
        let told = ev(
            3,
            1,
            json!({"event_type": "character_reaction", "agent": "sam",
            "text": "Sam laughs: 'I served with Vex, the pirate queen, on the Nightjar.'"}),
        );
        assert!(flags(&[whisper.clone(), acted.clone()]).is_empty());
        let f = flags(&[whisper, acted, told]);
        assert_eq!(kinds(&f), [FlagKind::CharacterSecretRevealed]);
        assert_eq!(f[0].seq, 3);
        assert!(
            f[0].detail
                .contains("character-only whisper (event 1) in its character's reaction"),
            "{}",
            f[0].detail
        );
    }

    #[test]
    fn a_new_leader_and_gm_overrides_are_flagged() {
        let c = |seq, session: u32, who: &str| {
            let mut e = ev(
                seq,
                1,
                json!({"event_type": "consensus", "outcome": "majority",
                "plan": "a plan", "proposer": who}),
            );
            e["session_number"] = json!(session);
            e
        };
        let events = [
            c(1, 1, "alex"),
            c(2, 1, "alex"),
            c(1, 2, "sam"),
            ev(
                5,
                1,
                json!({"event_type": "gm_roll_override", "agent": "alex", "override": "keep"}),
            ),
            ev(
                6,
                1,
                json!({"event_type": "gm_roll_override", "agent": "alex", "override": "faces", "faces": [6]}),
            ),
        ];
        let f = flags(&events);
        assert_eq!(kinds(&f), [FlagKind::GmOverride, FlagKind::LeaderChange]);
        assert_eq!(f[1].session, 2);
    }

    #[test]
    fn a_clean_session_raises_no_flag() {
        let events = [
            ev(
                1,
                1,
                json!({"event_type": "gm_narration", "text": "Pirates close in on the Raptor."}),
            ),
            ev(
                2,
                1,
                json!({"event_type": "directive", "agent": "alex",
                "text": "Raise the shields and plot an escape course through the asteroid belt."}),
            ),
            ev(
                3,
                1,
                json!({"event_type": "character_action", "agent": "alex", "attempt": 1,
                "action": {"action": "I raise the shields and plot a course into the asteroid belt.", "dialogue": "Hold on!", "task_type": "lasers"}}),
            ),
            ev(
                4,
                1,
                json!({"event_type": "validation", "agent": "alex", "attempt": 1, "result": "passed"}),
            ),
            ev(
                5,
                1,
                json!({"event_type": "consensus", "outcome": "unanimous", "plan": "run", "proposer": "alex"}),
            ),
            ev(
                6,
                1,
                json!({"event_type": "gm_roll_override", "agent": "alex", "override": "keep"}),
            ),
            ev(
                7,
                1,
                json!({"event_type": "whisper", "to": "alex", "scope": "player_only",
                "text": "The pirate captain owes Zara a favour."}),
            ),
            ev(8, 1, json!({"event_type": "turn_completed"})),
        ];
        let f = flags(&events);
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn every_kind_of_flag_fires() {
        let mut events = vec![
            // Three rejections in three turns: none repeats within a turn, the session does.
            ev(
                1,
                1,
                json!({"event_type": "validation", "agent": "sam", "attempt": 1, "result": "retry"}),
            ),
            ev(
                2,
                2,
                json!({"event_type": "validation", "agent": "sam", "attempt": 1, "result": "retry"}),
            ),
            ev(
                3,
                3,
                json!({"event_type": "validation", "agent": "sam", "attempt": 1, "result": "retry"}),
            ),
            ev(
                4,
                3,
                json!({"event_type": "phase_failed", "agent": "sam", "phase": "character_action",
                "error": "HTTP 503 after 5 attempts", "failures": 1}),
            ),
            ev(
                5,
                3,
                json!({"event_type": "gm_forced_result", "success": false}),
            ),
            ev(
                6,
                3,
                json!({"event_type": "gm_reviewed_action", "agent": "sam", "action": "I try."}),
            ),
            ev(
                7,
                3,
                json!({"event_type": "gm_flagged", "check": "outcome_contradicts_dice",
                "detail": "no successes, but a clean success", "text": "It works.",
                "sent_back": true, "kept": false}),
            ),
        ];
        // Alex leads three times in a row, then the party follows Sam.
        for (i, who) in ["alex", "alex", "alex", "sam"].iter().enumerate() {
            events.push(ev(
                10 + i as u64,
                4 + i as u32,
                json!({"event_type": "consensus",
                "outcome": "majority", "plan": "p", "proposer": who}),
            ));
        }
        let f = flags(&events);
        let mut got: Vec<FlagKind> = kinds(&f);
        got.dedup();
        assert_eq!(
            got,
            [
                FlagKind::RepeatedValidationFailures,
                FlagKind::ModelFailure,
                FlagKind::GmOverride,
                FlagKind::GmCheck,
                FlagKind::LeaderChange,
            ],
            "{f:?}"
        );
        let streak = f.iter().find(|f| f.kind == FlagKind::LeaderChange).unwrap();
        assert_eq!((streak.seq, streak.agent.as_deref()), (13, Some("sam")));
        assert!(
            streak.detail.contains("3 plans adopted in a row"),
            "{}",
            streak.detail
        );
        let repeated = &f[0];
        assert!(
            repeated
                .detail
                .contains("3 attempts by sam rejected in session 1"),
            "{}",
            repeated.detail
        );
        assert_eq!(
            f.iter().filter(|f| f.kind == FlagKind::GmOverride).count(),
            2
        );
        // Each kind states the rule that raised it.
        for k in got {
            assert!(!k.rule().is_empty() && !k.title().is_empty());
        }
    }

    /// A newer troupe's kind in the middle of a recorded session raises no flag and changes
    /// none; a known kind that does not read raises none either (the metrics name it).
    #[test]
    fn a_newer_kind_in_a_recorded_session_changes_no_flag() {
        let party = crate::lasers::rows::party();
        let json = |events: &[Value]| serde_json::to_string(&flags(events)).unwrap();
        let before = json(&party);
        let newer =
            crate::lasers::rows::party_with_newer("gm_forced_result_v2", json!({"success": true}));
        assert_eq!(json(&newer), before);
        let mut forced = party;
        forced.push(ev(
            900,
            2,
            json!({"event_type": "gm_forced_result", "success": "yes"}),
        ));
        assert_eq!(json(&forced), before, "a damaged row is no override");
    }
}
