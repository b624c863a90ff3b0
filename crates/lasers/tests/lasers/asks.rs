//! The seat protocol at the Lasers & Feelings table: a GM and a person who answer only asks
//! (nothing of the game in the seat) play the same session, event for event, as the game's own
//! seats; a seat that changes hands mid-decision is recorded and the AI decides in its place.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use troupe_agents::PromptSet;
use troupe_engine::watch::Unwatched;
use troupe_lasers::asks::{AskedGm, AskedPlayers};
use troupe_lasers::*;
use troupe_llm::{Gateway, ReplayEntry, ReplayModel, RetryPolicy, ScaledSleeper};
use troupe_seat::{Answer, Ask, Seat, check};

use crate::support::*;

/// Seats changing hands, shared with the driver: (agent, to a person).
type Hands = Arc<Mutex<Vec<(String, bool)>>>;

/// A seat that knows nothing of the game: for each ask it takes the next answer queued for
/// that decision, and keeps every ask it was shown.
#[derive(Default)]
struct Scripted {
    answers: VecDeque<(&'static str, Answer)>,
    asks: Arc<Mutex<Vec<Ask>>>,
    /// Before answering an ask of this decision, hand this seat over (agent, to a person).
    hand_over_at: Option<(&'static str, Hands, String)>,
}

fn decide(v: Value) -> Answer {
    let values: Map<String, Value> = v.as_object().cloned().unwrap_or_default();
    Answer::Decide { values }
}

#[async_trait]
impl Seat for Scripted {
    async fn decide(&mut self, ask: &Ask) -> Answer {
        self.asks.lock().unwrap().push(ask.clone());
        if let Some((decision, hands, agent)) = &self.hand_over_at
            && ask.decision == *decision
        {
            hands.lock().unwrap().push((agent.clone(), false));
            self.hand_over_at = None;
            return Answer::Handed;
        }
        let at = self.answers.iter().position(|(d, _)| *d == ask.decision);
        let answer = match at.and_then(|i| self.answers.remove(i)) {
            Some((_, a)) => a,
            None => Answer::Leave,
        };
        assert_eq!(check(ask, &answer), Ok(()), "{ask:?}");
        answer
    }
}

fn table(replies: Vec<ReplayEntry>) -> Table {
    Table::new(
        Gateway::new(
            Arc::new(ReplayModel::from_entries(replies)),
            RetryPolicy::default(),
            Arc::new(ScaledSleeper { factor: 0.0 }),
        ),
        PromptSet::embedded(),
        StoreMemory::in_memory().unwrap(),
    )
}

/// Play a session in a fresh directory; the log's events without their times.
async fn play(
    campaign: troupe_campaign::Campaign,
    gm: &mut dyn GmSeat,
    people: Option<&mut dyn PlayerSeat>,
    replies: Vec<ReplayEntry>,
) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let path = session_log_path(dir.path(), 1);

    let table = table(replies);
    let (clock, mut quiet) = (FixedClock, Unwatched);
    let setup = SessionSetup {
        campaign,
        session_number: 1,
        seed: 3,
        day: 1,
    };
    {
        let mut driver = Driver::start(setup, store, gm, &table, &mut quiet, &clock).unwrap();
        if let Some(p) = people {
            driver.seat_people(p);
        }
        driver.run().await.unwrap();
    }
    read_log(&path)
        .unwrap()
        .into_iter()
        .map(|e| {
            let mut v = serde_json::to_value(&e).unwrap();
            v.as_object_mut().unwrap().remove("timestamp");
            v.as_object_mut().unwrap().remove("session_id");
            v
        })
        .collect()
}

fn gm_answers() -> VecDeque<(&'static str, Answer)> {
    VecDeque::from([
        (
            "narration",
            decide(json!({"text": "Scene 1: a door, a guard, a choice."})),
        ),
        ("answers", decide(json!({"finish": true}))),
        ("adjudicate", decide(json!({"ruling": "accept"}))),
        ("override", decide(json!({"override": "keep"}))),
        (
            "outcome",
            decide(json!({"text": "It goes as the dice say."})),
        ),
    ])
}

#[tokio::test]
async fn a_gm_that_only_answers_asks_plays_the_same_session_as_the_games_own_seat() {
    let mut queue = QueueGm::turns(1);
    let by_the_game = play(campaign("campaign.json"), &mut queue, None, plain_turn()).await;

    let asks = Arc::new(Mutex::new(Vec::new()));
    let mut asked = AskedGm {
        seat: Scripted {
            answers: gm_answers(),
            asks: asks.clone(),
            ..Default::default()
        },
    };
    let by_asks = play(campaign("campaign.json"), &mut asked, None, plain_turn()).await;
    assert_eq!(by_asks, by_the_game);

    // Every ask carries the GM's view and a form whose schema follows from it; the GM's table
    // commands are offered at each one.
    let asks = asks.lock().unwrap();
    let decisions: Vec<&str> = asks.iter().map(|a| a.decision.as_str()).collect();
    assert_eq!(
        decisions[..4],
        ["narration", "adjudicate", "override", "outcome"]
    );
    for a in asks.iter() {
        assert_eq!(a.seat, "gm");
        assert_eq!(a.view["campaign_name"], "Voyage of the Raptor");
        assert!(a.commands.iter().any(|c| c.name == "whisper"));
        // What a chat surface registers up front is the game's offer: every command an ask
        // offers is in it.
        for c in &a.commands {
            assert!(
                troupe_lasers::offer::OFFER
                    .table_commands
                    .iter()
                    .any(|(name, _)| *name == c.name),
                "/{} is offered at {} and not in the game's offer",
                c.name,
                a.decision
            );
        }
    }
}

#[tokio::test]
async fn a_gm_command_sent_as_an_answer_is_performed_and_the_gm_asked_again() {
    let mut answers = gm_answers();
    let whisper = Answer::Command {
        name: "whisper".into(),
        values: json!({"to": "alex", "scope": "player_only", "text": "The guard is bribed."})
            .as_object()
            .cloned()
            .unwrap(),
    };
    answers.push_front(("narration", whisper));
    let mut asked = AskedGm {
        seat: Scripted {
            answers,
            ..Default::default()
        },
    };
    let log = play(campaign("campaign.json"), &mut asked, None, plain_turn()).await;
    let whispers: Vec<&Value> = log
        .iter()
        .filter(|e| e["event_type"] == "whisper")
        .collect();
    assert_eq!(whispers.len(), 1);
    assert_eq!(whispers[0]["scope"], "player_only");
    assert_eq!(whispers[0]["to"], "alex");
    assert!(log.iter().any(|e| e["event_type"] == "gm_narration"));
}

fn with_person(agent: &str) -> troupe_campaign::Campaign {
    let mut c = campaign("campaign.json");
    for s in &mut c.seats {
        if s.player.agent_id == agent {
            s.taken_by = troupe_campaign::SeatTaker::Human;
        }
    }
    c
}

#[tokio::test]
async fn a_person_answers_through_asks_and_their_answer_is_recorded_as_an_ais_would_be() {
    let mut gm = QueueGm::turns(1);
    let asks = Arc::new(Mutex::new(Vec::new()));
    let mut person = AskedPlayers {
        seat: Scripted {
            answers: VecDeque::from([
                ("questions", decide(json!({"questions": []}))),
                ("plan", decide(json!({"plan": "Talk our way past."}))),
                (
                    "action",
                    decide(
                        json!({"action": "I show the guard my badge.", "dialogue": "",
                    "task_type": "feelings", "prepared": false, "expert": true, "helping": ""}),
                    ),
                ),
                ("reaction", decide(json!({"reaction": "I exhale."}))),
            ]),
            asks: asks.clone(),
            ..Default::default()
        },
        hand_overs: Default::default(),
    };
    let log = play(with_person("alex"), &mut gm, Some(&mut person), vec![]).await;
    let declared: Vec<&Value> = log
        .iter()
        .filter(|e| e["event_type"] == "character_action")
        .collect();
    let types: Vec<&Value> = log.iter().map(|e| &e["event_type"]).collect();
    assert_eq!(declared.len(), 1, "{types:?}");
    assert_eq!(
        declared[0]["action"]["action"],
        "I show the guard my badge."
    );
    assert_eq!(declared[0]["action"]["task_type"], "feelings");
    // The character's decisions are asked through the character's view, the player's through
    // the player's.
    let asks = asks.lock().unwrap();
    let action = asks.iter().find(|a| a.decision == "action").unwrap();
    assert!(action.view.get("directive").is_some());
    let plan = asks.iter().find(|a| a.decision == "plan").unwrap();
    assert!(plan.view.get("player").is_some());
}

#[tokio::test]
async fn a_seat_handed_to_an_ai_mid_decision_is_logged_and_the_ai_decides_it() {
    let mut gm = QueueGm::turns(1);
    let hands = Arc::new(Mutex::new(Vec::new()));
    let mut person = AskedPlayers {
        seat: Scripted {
            answers: VecDeque::from([
                ("questions", decide(json!({"questions": []}))),
                ("plan", decide(json!({"plan": "Talk our way past."}))),
            ]),
            hand_over_at: Some(("action", hands.clone(), "alex".into())),
            ..Default::default()
        },
        hand_overs: hands,
    };
    // The AI's replies for what is left of the turn once it holds the seat.
    let replies = vec![
        action("I raise my empty hands and step toward the guard."),
        reaction(),
    ];
    let log = play(with_person("alex"), &mut gm, Some(&mut person), replies).await;
    let types: Vec<&str> = log
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    let handed = types
        .iter()
        .position(|t| *t == "seat_handed")
        .expect("a hand-over");
    assert_eq!(log[handed]["agent"], "alex");
    assert_eq!(log[handed]["person"], false);
    let declared = log
        .iter()
        .find(|e| e["event_type"] == "character_action")
        .unwrap();
    assert_eq!(
        declared["action"]["action"],
        "I raise my empty hands and step toward the guard."
    );
    assert!(
        types[handed..].contains(&"model_call"),
        "the AI was called after the hand-over"
    );
}

/// Every GM decision, answered in the game's terms by the game's own seats (an AI, a script, a
/// recording, the terminal), goes through the protocol and reads back the same, texts byte for
/// byte (a recorded session replays exactly).
#[test]
fn a_decision_sent_as_the_protocols_answer_reads_back_as_it_was_made() {
    let view = gm_view_at_start("campaign.json");
    let action = troupe_agents::ActionDecl {
        action: "I pick the lock.".into(),
        dialogue: String::new(),
        task_type: troupe_rules::TaskType::Lasers,
        prepared: false,
        expert: true,
        helping: None,
        justification: "Technician.".into(),
    };
    let text = |t: &str| GmReply::Answer(GmDecision::Text(t.into()));
    let mut cases: Vec<(GmAsk, GmReply<GmDecision>)> = vec![
        (GmAsk::Narration, text("  A door.\n\nA guard.\n")),
        (GmAsk::Outcome, text("It jams.")),
        (GmAsk::Narration, GmReply::Roll("2d6+1".parse().unwrap())),
        (GmAsk::Narration, GmReply::Force(false)),
        (
            GmAsk::Narration,
            GmReply::Whisper {
                to: Some("alex".into()),
                scope: WhisperScope::PlayerOnly,
                text: "The guard is bribed.".into(),
            },
        ),
        (
            GmAsk::Outcome,
            GmReply::Whisper {
                to: None,
                scope: WhisperScope::Both,
                text: "A hum.".into(),
            },
        ),
        (
            GmAsk::Narration,
            GmReply::Mark(StoryMark::TimePassed { days: 3 }),
        ),
        (
            GmAsk::Narration,
            GmReply::Mark(StoryMark::scene_ended(Some("The heist"))),
        ),
        (
            GmAsk::Narration,
            GmReply::Mark(StoryMark::scene_ended(None)),
        ),
        (
            GmAsk::Narration,
            GmReply::End("a natural stopping point".into()),
        ),
        (GmAsk::Narration, GmReply::Quit),
        (GmAsk::Narration, GmReply::Handed),
        (
            GmAsk::Narration,
            GmReply::Fail("the model failed twice".into()),
        ),
        (
            GmAsk::Answers {
                round: 1,
                questions: vec![("a".into(), "Who?".into()), ("b".into(), "Why?".into())],
            },
            GmReply::Answer(GmDecision::Answers(Answers::Answered(vec![
                "Nobody.".into(),
                String::new(),
            ]))),
        ),
        (
            GmAsk::Answers {
                round: 2,
                questions: vec![("a".into(), "Who?".into())],
            },
            GmReply::Answer(GmDecision::Answers(Answers::Finish)),
        ),
        (
            GmAsk::Adjudicate {
                agent: "a".into(),
                action: action.clone(),
            },
            GmReply::Answer(GmDecision::Ruling(Ruling::Roll {
                task: troupe_rules::TaskType::Feelings,
                prepared: true,
                expert: false,
            })),
        ),
        (
            GmAsk::Adjudicate {
                agent: "a".into(),
                action: action.clone(),
            },
            GmReply::Answer(GmDecision::Ruling(Ruling::NoRoll {
                note: String::new(),
            })),
        ),
        (
            GmAsk::Adjudicate {
                agent: "a".into(),
                action,
            },
            GmReply::Answer(GmDecision::Ruling(Ruling::Revise {
                note: "Say how. ".into(),
            })),
        ),
        (
            GmAsk::Interject { round: 2 },
            GmReply::Answer(GmDecision::Interjection(Some("Decide!".into()))),
        ),
        (
            GmAsk::Interject { round: 2 },
            GmReply::Answer(GmDecision::Interjection(None)),
        ),
        (
            GmAsk::Failure {
                phase: Phase::CharacterAction,
                agent: "a".into(),
                error: "timeout".into(),
            },
            GmReply::Answer(GmDecision::Failure(FailureChoice::TakeOver {
                text: "I wait.".into(),
            })),
        ),
        (
            GmAsk::Insight {
                agent: "a".into(),
                question: "Is he lying?".into(),
            },
            text("Yes."),
        ),
    ];
    let review = GmAsk::Review {
        agent: "a".into(),
        original: "I pick the lock and it opens.".into(),
        corrected: "I pick the lock.".into(),
        verdict: troupe_validator::check("I pick the lock and it opens."),
    };
    for kept in [
        "I pick the lock and it opens.",
        "I pick the lock.",
        "I try the lock. ",
    ] {
        cases.push((review.clone(), text(kept)));
    }
    for (decision, reply) in cases {
        let question = GmQuestion {
            decision: &decision,
            view: &view,
            error: None,
            seeds: Default::default(),
        };
        let answer = asks::gm_answer(&decision, reply.clone());
        assert_eq!(question.read(answer.clone()), Ok(reply), "{answer:?}");
    }
}

#[tokio::test]
async fn an_answer_that_does_not_read_is_sent_back_with_why_and_the_seat_asked_again() {
    let mut answers = gm_answers();
    // "Ask to revise" without saying what: the form takes it, the game cannot.
    answers.push_front(("adjudicate", decide(json!({"ruling": "revise"}))));
    let asks = Arc::new(Mutex::new(Vec::new()));
    let mut asked = AskedGm {
        seat: Scripted {
            answers,
            asks: asks.clone(),
            ..Default::default()
        },
    };
    let log = play(campaign("campaign.json"), &mut asked, None, plain_turn()).await;
    let asks = asks.lock().unwrap();
    let adjudications: Vec<&Ask> = asks.iter().filter(|a| a.decision == "adjudicate").collect();
    assert_eq!(adjudications.len(), 2);
    assert_eq!(adjudications[0].error, None);
    assert_eq!(
        adjudications[1].error.as_deref(),
        Some("say what to revise")
    );
    let rulings: Vec<&Value> = log
        .iter()
        .filter(|e| e["event_type"] == "gm_adjudication")
        .collect();
    assert_eq!(rulings.len(), 1, "only the answer that read is recorded");
}

/// A person's decision as a recording holds it (the decision their answer was read into, as the
/// log's event serializes it) is sent again as the protocol's answer, and reads back the same:
/// a replay of their session records it byte for byte.
#[test]
fn a_persons_recorded_decision_sent_again_as_an_answer_reads_back_as_it_was_made() {
    use troupe_lasers::asks::player_answer;
    use troupe_lasers::visibility::{character_view, player_view};
    let session = session_at_start("party.json");
    let agent = "alex".to_string();
    let mut player = player_view(&session, &agent).unwrap();
    player.proposals = vec![(agent.clone(), "Talk our way past.".into())];
    let character = character_view(&session, &agent).unwrap();
    let helped = character
        .others
        .first()
        .cloned()
        .expect("another character to help");
    let views = |call: &CallSpec| SeatView {
        turn: 1,
        layer: match call {
            CallSpec::Action { .. }
            | CallSpec::InsightQuestion { .. }
            | CallSpec::Reaction { .. } => LayerView::Character(character.clone()),
            _ => LayerView::Player(player.clone()),
        },
    };
    let a = || agent.clone();
    let cases: Vec<(CallSpec, Value)> = vec![
        (
            CallSpec::Questions {
                agent: a(),
                round: 1,
            },
            json!({"questions": ["Who?", "Why?"]}),
        ),
        (
            CallSpec::Questions {
                agent: a(),
                round: 2,
            },
            json!({"questions": []}),
        ),
        (
            CallSpec::Intent { agent: a() },
            json!({"plan": "Talk our way past."}),
        ),
        (
            CallSpec::Discussion {
                agent: a(),
                round: 1,
            },
            json!({"message": "Agreed.", "on": "alex"}),
        ),
        (
            CallSpec::Discussion {
                agent: a(),
                round: 2,
            },
            json!({"message": "Hm.", "on": ""}),
        ),
        (CallSpec::Vote { agent: a() }, json!({"vote": "alex"})),
        (
            CallSpec::PartyDirective { agent: a() },
            json!({"directive": "Smile at the guard."}),
        ),
        (
            CallSpec::InsightDecision { agent: a() },
            json!({"change_action": true}),
        ),
        (
            CallSpec::InsightQuestion { agent: a() },
            json!({"question": "Is he lying?"}),
        ),
        (
            CallSpec::Reaction { agent: a() },
            json!({"reaction": "I exhale."}),
        ),
        (
            CallSpec::Action {
                agent: a(),
                attempt: 1,
                feedback: String::new(),
            },
            json!({"action": "I show my badge.", "dialogue": "Easy now.", "task_type": "feelings",
                   "prepared": true, "expert": false, "helping": helped}),
        ),
        (
            CallSpec::Action {
                agent: a(),
                attempt: 1,
                feedback: String::new(),
            },
            json!({"action": "I wait.", "dialogue": "", "task_type": "lasers",
                   "prepared": false, "expert": false, "helping": ""}),
        ),
    ];
    for (call, values) in cases {
        let view = views(&call);
        let question = PlayerQuestion {
            call: &call,
            view: &view,
            error: None,
            again: None,
        };
        let values = values.as_object().unwrap().clone();
        let Ok(GmReply::Answer(made)) = question.read(Answer::Decide { values }) else {
            panic!("{call:?}: the form's answer does not read");
        };
        let answer = player_answer(&call, &as_recorded(&made));
        assert_eq!(check(&question.ask(), &answer), Ok(()), "{call:?}");
        assert_eq!(question.read(answer), Ok(GmReply::Answer(made)), "{call:?}");
    }
}

/// A player's decision as its event holds it in the log (the fields the recorded seat reads).
fn as_recorded(decision: &PlayerDecision) -> Value {
    fn value(x: &impl serde::Serialize) -> Value {
        serde_json::to_value(x).unwrap()
    }
    match decision {
        PlayerDecision::Questions(q) => json!({ "questions": q }),
        PlayerDecision::Intent(i) => value(i),
        PlayerDecision::Action(a) => value(a),
        PlayerDecision::InsightQuestion(q) => json!({ "question": q }),
        PlayerDecision::InsightDecision(d) => value(d),
        PlayerDecision::Reaction(r) => json!({ "reaction": r }),
        PlayerDecision::Discussion(r) => value(r),
        PlayerDecision::Vote(r) => value(r),
        PlayerDecision::PartyDirective(d) => json!({ "directive": d }),
    }
}
