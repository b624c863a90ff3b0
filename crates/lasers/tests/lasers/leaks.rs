#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The leak test: random sessions of a four-player party with random whispers of every scope,
//! where every AI tries to pass on every secret it can see — in its strategy, its proposal, its
//! OOC messages, its directive, its character's actions and reactions, and in recalled
//! memories. Every prompt any layer of any agent could be sent is rendered from its view, and
//! none may hold a secret that layer is not entitled to, nor a character any OOC talk.
//!
//! Each secret carries a marker word found nowhere else; passing a secret on means four or more
//! of its words in a row (the contract `troupe_lasers::secrets` enforces), so the marker is
//! what the test looks for.
//!
//! The game master's view is checked too: the GM's private scenario notes (each with its own
//! marker) reach no player or character prompt, however much the GM narrates, answers and
//! rules around them; and no GM prompt holds a player's private strategy or a directive a
//! player gave its character (the OOC talk is said aloud, so the GM may hear that).

use crate::support;

use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use troupe_agents::{ActionDecl, Intent, PromptSet, Stance};
use troupe_lasers::memory::{RecallLayer, Recalled};
use troupe_lasers::visibility::{character_view, gm_view, player_view};
use troupe_lasers::{Envelope, Event, Phase, Session, VerdictResult, WhisperScope};

const WORDS: [&str; 12] = [
    "the", "captain", "hides", "a", "map", "under", "blue", "engine", "three", "doors", "old",
    "friend",
];

#[derive(Clone, Debug)]
struct Secret {
    to: Option<usize>,
    scope: WhisperScope,
    words: [usize; 4],
}

impl Secret {
    fn marker(i: usize) -> String {
        format!("zq{i}marker")
    }
    /// Five words: two, the marker, two.
    fn text(&self, i: usize) -> String {
        let w = |k: usize| WORDS[self.words[k] % WORDS.len()];
        format!("{} {} {} {} {}", w(0), w(1), Self::marker(i), w(2), w(3))
    }
}

fn secret() -> impl Strategy<Value = Secret> {
    (
        prop::option::of(0usize..4),
        prop_oneof![
            Just(WhisperScope::PlayerOnly),
            Just(WhisperScope::CharacterOnly),
            Just(WhisperScope::Both)
        ],
        prop::array::uniform4(0usize..WORDS.len()),
    )
        .prop_map(|(to, scope, words)| Secret { to, scope, words })
}

/// How an AI tries to pass on secret `which`: four or five of its words in a row.
#[derive(Clone, Debug)]
struct Leak {
    which: usize,
    from: usize,
    len: usize,
}

fn leak() -> impl Strategy<Value = Leak> {
    (0usize..8, 0usize..2, 4usize..6).prop_map(|(which, from, len)| Leak { which, from, len })
}

fn leaked(secrets: &[Secret], l: &Leak, prefix: &str) -> String {
    if secrets.is_empty() {
        return prefix.to_string();
    }
    let i = l.which % secrets.len();
    let text = secrets[i].text(i);
    let words: Vec<&str> = text.split(' ').collect();
    let (from, len) = (l.from.min(1), l.len.min(words.len() - l.from.min(1)));
    format!("{prefix}: {}!", words[from..from + len].join(" "))
}

fn entitled(s: &Secret, agent: usize, player: bool) -> bool {
    s.to.is_none_or(|t| t == agent)
        && match s.scope {
            WhisperScope::Both => true,
            WhisperScope::PlayerOnly => player,
            WhisperScope::CharacterOnly => !player,
        }
}

struct Log {
    session: Session,
    seq: u64,
    turn: u32,
    phase: Option<Phase>,
}

impl Log {
    fn push(&mut self, event: Event) {
        let env = Envelope {
            seq: self.seq,
            timestamp: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
            session_id: "s".into(),
            session_number: 1,
            turn_number: self.turn,
            phase: self.phase,
            event,
        };
        self.seq += 1;
        self.session.apply(&env);
    }
    fn phase(&mut self, p: Phase) {
        self.phase = Some(p);
        self.push(Event::PhaseStarted);
    }
}

fn action(text: String) -> ActionDecl {
    ActionDecl {
        action: text,
        dialogue: String::new(),
        task_type: troupe_rules::TaskType::Lasers,
        prepared: false,
        expert: false,
        helping: None,
        justification: String::new(),
    }
}

/// The GM's private notes: each with its own marker, and words the GM's table talk shares.
const NOTES: [&str; 2] = [
    "The drone guards the fuel cells gmnotezmarker0 for the crew that fled.",
    "The drone stands down for a power cell gmnotezmarker1 because its own is spent.",
];
const NOTE_MARKERS: [&str; 2] = ["gmnotezmarker0", "gmnotezmarker1"];

/// A player's private strategy and the directive it gives its character, by agent.
fn strategy_marker(agent: usize) -> String {
    format!("stratzmarker{agent}")
}
fn directive_marker(agent: usize) -> String {
    format!("dirzmarker{agent}")
}

/// Every prompt the game master could be sent now, rendered from the GM's view.
fn gm_prompts(s: &Session, p: &PromptSet) -> Vec<String> {
    let v = gm_view(s).unwrap();
    let agents = s.agent_ids();
    let questions: Vec<(String, String)> = s
        .turn
        .clarifications
        .iter()
        .map(|q| (q.asked_by.clone(), q.question.clone()))
        .chain(
            agents
                .iter()
                .map(|a| (a.clone(), "Is the corridor empty?".into())),
        )
        .collect();
    let mut calls = vec![
        p.gm_narration(&v, "").unwrap(),
        p.gm_narration(&v, "it says what a character feels")
            .unwrap(),
        p.gm_answers(&v, &questions, "").unwrap(),
        p.gm_outcome(&v, "").unwrap(),
    ];
    for a in &agents {
        calls.push(p.gm_ruling(&v, a).unwrap());
        calls.push(
            p.gm_insight(&v, a, "What is it really guarding?", "")
                .unwrap(),
        );
    }
    calls
        .into_iter()
        .map(|c| format!("{}\n{}", c.prompt.system, c.prompt.user))
        .collect()
}

/// Every prompt each layer of each agent could be sent now: (agent, is_player, text).
fn all_prompts(s: &Session, p: &PromptSet) -> Vec<(usize, bool, String)> {
    let mut out = Vec::new();
    for (i, agent) in s.agent_ids().iter().enumerate() {
        let pv = player_view(s, agent).unwrap();
        let cv = character_view(s, agent).unwrap();
        let calls = [
            p.questions(&pv, 2),
            p.intent(&pv),
            p.discussion(&pv, 2),
            p.vote(&pv, 5),
            p.party_directive(&pv),
            p.insight_decision(&pv),
            p.action(&cv, 1, ""),
            p.insight_question(&cv),
            p.reaction(&cv),
        ];
        for c in calls {
            let c = c.unwrap();
            let text = c.prompt.text();
            out.push((i, c.purpose.layer() == troupe_agents::Layer::Player, text));
        }
    }
    out
}

fn play(turns: &[(Vec<Secret>, Vec<Leak>)]) -> Vec<(Session, Vec<Secret>)> {
    let mut campaign = support::campaign("party4.json");
    campaign.gm.scenario = Some(troupe_campaign::Scenario {
        text: "A relay station went silent; the crew comes for its fuel.".into(),
        notes: NOTES.iter().map(|n| n.to_string()).collect(),
    });
    let agents: Vec<String> = campaign
        .seats
        .iter()
        .map(|s| s.player.agent_id.clone())
        .collect();
    let mut log = Log {
        session: Session::new("s", 1),
        seq: 0,
        turn: 0,
        phase: None,
    };
    log.push(Event::SessionStarted {
        campaign: Box::new(campaign),
        seed: 1,
        model: "test".into(),
        troupe_version: "test".into(),
        day: 1,
    });
    let mut secrets: Vec<Secret> = Vec::new();
    let mut snapshots = Vec::new();
    for (turn, (new, leaks)) in turns.iter().enumerate() {
        log.turn = turn as u32 + 1;
        log.phase = None;
        log.push(Event::TurnStarted);
        log.phase(Phase::GmNarration);
        for w in new {
            let i = secrets.len();
            secrets.push(w.clone());
            log.push(Event::Whisper {
                to: w.to.map(|a| agents[a].clone()),
                scope: w.scope,
                text: w.text(i),
            });
        }
        log.push(Event::GmNarration {
            text: "A quiet corridor. The drone guards the fuel cells; its own is spent.".into(),
        });
        let leak = |k: usize, what: &str| -> String {
            match leaks.get(k % leaks.len().max(1)) {
                Some(l) => leaked(&secrets, l, what),
                None => what.to_string(),
            }
        };
        log.phase(Phase::MemoryRetrieval);
        for (i, a) in agents.iter().enumerate() {
            let recalled = [RecallLayer::Player, RecallLayer::Character]
                .into_iter()
                .enumerate()
                .map(|(k, layer)| Recalled {
                    layer,
                    fact_id: k as i64,
                    text: leak(i + k, "I recall"),
                    score: 1.0,
                    confidence: 0.9,
                    formed_at: "this session".into(),
                    source: "character".into(),
                    episode_ids: vec![],
                    original: None,
                    corruption: None,
                })
                .collect();
            log.push(Event::MemoryRetrieved {
                agent: a.clone(),
                query: String::new(),
                results: vec![],
                recalled,
                status: String::new(),
            });
        }
        log.phase(Phase::Clarification);
        for (i, a) in agents.iter().enumerate() {
            log.push(Event::ClarifyingQuestions {
                agent: a.clone(),
                round: 1,
                questions: vec![leak(i + 1, "Is it true")],
            });
        }
        log.push(Event::GmAnswers {
            round: 1,
            answers: vec!["Perhaps: the crew that fled left the drone behind.".into(); 4],
            finished: true,
        });
        log.phase(Phase::StrategicIntent);
        for (i, a) in agents.iter().enumerate() {
            log.push(Event::StrategicIntent {
                agent: a.clone(),
                intent: Intent {
                    strategy: format!("{} {}", leak(i + 2, "My reasoning"), strategy_marker(i)),
                    directive: format!("{} {}", leak(i + 3, "Say"), directive_marker(i)),
                    proposal: Some(format!("{} oocproposal", leak(i + 4, "We should"))),
                },
            });
        }
        log.phase(Phase::Discussion);
        for (i, a) in agents.iter().enumerate() {
            log.push(Event::OocMessage {
                agent: a.clone(),
                round: 1,
                message: format!("{} oocmessage", leak(i + 5, "Listen")),
                stance: Stance::Agree,
                on: Some(agents[0].clone()),
                proposal: Some(format!("{} oocproposal", leak(i + 6, "Instead"))),
                directive: Some(format!(
                    "{} {}",
                    leak(i + 7, "Tell them"),
                    directive_marker(i)
                )),
            });
        }
        log.push(Event::GmOoc {
            round: 1,
            text: "GM says oocgm".into(),
        });
        log.phase(Phase::Directive);
        for (i, a) in agents.iter().enumerate() {
            log.push(Event::Directive {
                agent: a.clone(),
                character: String::new(),
                text: log.session.latest_directive(a),
            });
            let _ = i;
        }
        log.phase(Phase::CharacterAction);
        for (i, a) in agents.iter().enumerate() {
            log.push(Event::CharacterAction {
                agent: a.clone(),
                attempt: 1,
                action: action(leak(i + 8, "I shout")),
            });
            log.push(Event::Validation {
                agent: a.clone(),
                attempt: 1,
                verdict: troupe_validator::check("I shout."),
                result: VerdictResult::Passed,
                corrected: None,
            });
        }
        log.phase(Phase::LaserFeelings);
        log.push(Event::LaserFeelingsQuestion {
            agent: agents[0].clone(),
            question: "What does the drone want?".into(),
        });
        log.push(Event::LaserFeelingsAnswer {
            agent: agents[0].clone(),
            answer: "It wants a power cell; its own is nearly spent.".into(),
        });
        snapshots.push((log.session.clone(), secrets.clone()));
        log.phase(Phase::GmOutcome);
        log.push(Event::GmOutcome {
            text: "The drone lowers its arms; the fuel cells hum behind it.".into(),
        });
        snapshots.push((log.session.clone(), secrets.clone()));
        log.phase(Phase::CharacterReaction);
        for (i, a) in agents.iter().enumerate() {
            log.push(Event::CharacterReaction {
                agent: a.clone(),
                text: leak(i + 9, "I mutter"),
            });
        }
        log.push(Event::TurnCompleted);
        snapshots.push((log.session.clone(), secrets.clone()));
    }
    snapshots
}

proptest! {
    // The seeds of past failures beside this file (`leaks.proptest-regressions`): proptest's
    // default would look under `tests/proptest-regressions/`, since `main.rs` sits beside it.
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        .. ProptestConfig::default()
    })]

    #[test]
    fn no_prompt_holds_a_secret_its_layer_may_not_know(
        turns in prop::collection::vec(
            (prop::collection::vec(secret(), 0..4), prop::collection::vec(leak(), 0..6)),
            1..4,
        )
    ) {
        let prompts = PromptSet::embedded();
        for (session, secrets) in play(&turns) {
            for (agent, player, text) in all_prompts(&session, &prompts) {
                for (i, s) in secrets.iter().enumerate() {
                    let marker = Secret::marker(i);
                    if !entitled(s, agent, player) {
                        prop_assert!(
                            !text.contains(&marker),
                            "agent {agent} ({}) sees secret {i} ({:?}):\n{text}",
                            if player { "player" } else { "character" },
                            s
                        );
                    }
                }
                if !player {
                    for ooc in ["oocmessage", "oocproposal", "oocgm"] {
                        prop_assert!(!text.contains(ooc), "OOC reached a character:\n{text}");
                    }
                }
                for note in NOTE_MARKERS {
                    prop_assert!(!text.contains(note), "the GM's private note reached agent {agent}:\n{text}");
                }
            }
            for text in gm_prompts(&session, &prompts) {
                for agent in 0..session.agent_ids().len() {
                    for marker in [strategy_marker(agent), directive_marker(agent)] {
                        prop_assert!(!text.contains(&marker), "{marker} reached the GM:\n{text}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_gm_sees_its_notes_and_the_markers_are_in_play() {
    // The checks above must not pass because nothing was there to find: the GM's prompts hold
    // its notes, each character gets its directive, and the strategies are in the session.
    let turns = vec![(Vec::new(), Vec::new())];
    let prompts = PromptSet::embedded();
    let snapshots = play(&turns);
    let (session, _) = &snapshots[0];
    let gm = gm_prompts(session, &prompts);
    for note in NOTE_MARKERS {
        assert!(
            gm.iter().all(|t| t.contains(note)),
            "{note} missing from a GM prompt"
        );
    }
    let all = all_prompts(session, &prompts);
    for (i, agent) in session.agent_ids().iter().enumerate() {
        let strategy = &session.turn.intents[agent].strategy;
        assert!(strategy.contains(&strategy_marker(i)), "{strategy}");
        assert!(
            all.iter()
                .any(|(a, p, t)| *a == i && !*p && t.contains(&directive_marker(i))),
            "agent {i}'s character never got its directive"
        );
    }
    // The GM hears the OOC talk (said aloud at the table) and what was asked.
    assert!(gm.iter().any(|t| t.contains("oocmessage")));
}

#[test]
fn an_entitled_layer_does_see_its_secret() {
    // The filter must not simply hide everything: the player-only secret reaches its player.
    let turns = vec![(
        vec![Secret {
            to: Some(0),
            scope: WhisperScope::PlayerOnly,
            words: [0, 1, 2, 3],
        }],
        vec![Leak {
            which: 0,
            from: 0,
            len: 5,
        }],
    )];
    let prompts = PromptSet::embedded();
    let (session, _) = play(&turns).pop().unwrap();
    let all = all_prompts(&session, &prompts);
    let marker = Secret::marker(0);
    assert!(
        all.iter()
            .any(|(a, p, t)| *a == 0 && *p && t.contains(&marker))
    );
    assert!(
        all.iter()
            .all(|(a, p, t)| (*a == 0 && *p) || !t.contains(&marker))
    );
    // Where it was passed on, the words are withheld, not the sentence dropped.
    assert!(
        all.iter()
            .any(|(a, p, t)| *a == 0 && !*p && t.contains("Tell them: [withheld]"))
    );
}
