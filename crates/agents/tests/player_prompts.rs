#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The AI players' and characters' prompts: a snapshot per purpose, rendered from the views of
//! a party of two in the middle of a turn (Alex plays Zara-7, Sam plays Rex Nova; the GM
//! whispered to Alex, who also recalls a memory and gave Zara a directive), and the layout
//! prompt caching needs: every call of a layer opens with the same system and story messages,
//! byte for byte, whoever makes it; then the seat's own part, the same for each of its calls
//! this turn; the ask last. Nothing private is in the shared part.
//!
//!     INSTA_UPDATE=always cargo test -p troupe-agents --test player_prompts   # then read the diff

use troupe_agents::{
    AgentCall, CharacterView, Insight, OocLine, PartyMember, PartyPlan, PlayerView, PromptSet,
    QuestionAnswer, TurnRecap, temperament,
};
use troupe_campaign::Campaign;

const CAMPAIGN: &str = r#"{
  "campaign_name": "The Silent Relay",
  "gm_name": "Ryan",
  "party": {"ship_name": "The Raptor", "ship_strengths": ["Nimble", "Cloaking Device"],
            "ship_problem": "Horrible Circuit Breakers"},
  "characters": [
    {"player": {"agent_id": "alex", "player_name": "Alex", "player_goal": "Solve the puzzle",
                "analytical_score": 0.8, "risk_tolerance": 0.3, "detail_oriented": 0.5, "emotional_memory": 0.5, "assertiveness": 0.5, "cooperativeness": 0.7, "openness": 0.5, "rule_adherence": 0.5, "roleplay_intensity": 0.5},
     "character": {"character_id": "zara", "name": "Zara-7", "style": "Android",
                   "role": "Engineer", "number": 5, "character_goal": "Solve Weird Space Mysteries",
                   "speech_patterns": ["Speaks formally"], "mannerisms": ["Tilts head when confused"]}},
    {"player": {"agent_id": "sam", "player_name": "Sam", "player_goal": "Make it loud",
                "analytical_score": 0.5, "risk_tolerance": 0.9, "detail_oriented": 0.5, "emotional_memory": 0.5, "assertiveness": 0.8, "cooperativeness": 0.5, "openness": 0.5, "rule_adherence": 0.5, "roleplay_intensity": 0.5},
     "character": {"character_id": "rex", "name": "Rex Nova", "style": "Hot-Shot",
                   "role": "Pilot", "number": 2, "character_goal": "Prove Yourself"}}
  ]
}"#;

/// Only Alex knows it (a player-only whisper).
const SECRET: &str = "The drone's power light flickers amber.";
/// Only Alex recalls it.
const MEMORY: &str = "Session 1: the relay's keeper owed Alex a favour.";
/// What Alex told Zara to do.
const DIRECTIVE: &str = "Offer the drone a spare power cell.";

fn campaign() -> Campaign {
    troupe_campaign::parse(CAMPAIGN, "player_prompts.json").unwrap()
}

fn story() -> Vec<TurnRecap> {
    vec![TurnRecap {
        turn: 1,
        narration: "The relay looms out of the dark, its lights dead.".into(),
        action: Some("Rex Nova: I dock hard against the station's ring.".into()),
        outcome: Some("The clamps catch, but a breaker on the Raptor blows.".into()),
    }]
}

fn player_view(agent: &str) -> PlayerView {
    let c = campaign();
    let seat = c.seats.iter().find(|s| s.player.agent_id == agent).unwrap();
    let alex = agent == "alex";
    PlayerView {
        agent_id: agent.into(),
        gm_name: c.gm_name.clone(),
        ship: c.ship.clone(),
        player: seat.player.clone(),
        character: seat.character.clone(),
        day: 4,
        recent: story(),
        narration: "Inside, a drone with welding arms rolls out of the shadows. What do you do?"
            .into(),
        clarifications: vec![QuestionAnswer {
            asked_by: "alex".into(),
            question: "Is the drone armed?".into(),
            answer: "Only with its welding arms.".into(),
        }],
        memories: if alex { vec![MEMORY.into()] } else { vec![] },
        insight: Some(Insight {
            question: "What does the drone really want?".into(),
            answer: "Power: its cells are nearly dry.".into(),
        }),
        party: c
            .seats
            .iter()
            .filter(|s| s.player.agent_id != agent)
            .map(|s| PartyMember {
                agent_id: s.player.agent_id.clone(),
                player_name: s.player.name.clone(),
                character_name: s.character.name.clone(),
                temperament: temperament(&s.player.traits),
            })
            .collect(),
        proposals: vec![
            (
                "alex".into(),
                "Zara hails the drone while Rex covers her.".into(),
            ),
            ("sam".into(), "Rex blasts the drone's optics.".into()),
        ],
        discussion: vec![OocLine {
            round: 1,
            speaker: "sam".into(),
            message: "Talking is slow. I say we shoot.".into(),
            proposal: None,
            stance: Some("disagree".into()),
            on: Some("alex".into()),
        }],
        plan: Some(PartyPlan {
            plan: "Zara hails the drone while Rex covers her.".into(),
            proposer: "alex".into(),
            outcome: "majority".into(),
        }),
        secrets: if alex { vec![SECRET.into()] } else { vec![] },
    }
}

fn character_view(agent: &str) -> CharacterView {
    let p = player_view(agent);
    let c = campaign();
    CharacterView {
        agent_id: p.agent_id.clone(),
        ship: p.ship.clone(),
        character: p.character.clone(),
        day: p.day,
        recent: p.recent.clone(),
        narration: p.narration.clone(),
        clarifications: p.clarifications.clone(),
        // A character recalls its own layer's memories, never its player's.
        memories: vec![],
        directive: if agent == "alex" {
            DIRECTIVE.into()
        } else {
            "Keep the blaster on the drone.".into()
        },
        others: c
            .seats
            .iter()
            .filter(|s| s.player.agent_id != agent)
            .map(|s| s.character.character_id.clone())
            .collect(),
        gm_note: None,
        insight: p.insight.clone(),
        action: Some("I hold out a spare power cell to the drone.".into()),
        roll: Some("feelings, number 5: [6] → 1 success (complication)".into()),
        outcome: Some("The drone takes the cell and lowers its arms, but its alarm chirps.".into()),
        secrets: vec![],
    }
}

/// Every call each layer of `agent` can make now.
fn calls(agent: &str) -> Vec<AgentCall> {
    let p = PromptSet::embedded();
    let (pv, cv) = (player_view(agent), character_view(agent));
    vec![
        p.questions(&pv, 2).unwrap(),
        p.intent(&pv).unwrap(),
        p.discussion(&pv, 2).unwrap(),
        p.vote(&pv, 3).unwrap(),
        p.party_directive(&pv).unwrap(),
        p.insight_decision(&pv).unwrap(),
        p.action(&cv, 1, "").unwrap(),
        p.insight_question(&cv).unwrap(),
        p.reaction(&cv).unwrap(),
    ]
}

/// The messages as the model gets them, with the cache prefix the call names.
fn shown(call: &AgentCall) -> String {
    let messages: Vec<String> = call
        .request
        .messages
        .iter()
        .map(|m| format!("=== {} ===\n{}", m.role.as_str(), m.content))
        .collect();
    format!(
        "cache prefix: {:?} messages\n{}",
        call.request.cache_prefix,
        messages.join("\n")
    )
}

#[test]
fn the_player_and_character_prompts_of_alex() {
    for call in calls("alex") {
        insta::assert_snapshot!(call.purpose.as_str(), shown(&call));
    }
}

/// The text of the first `n` messages of a call, joined as a provider reads them.
fn leading(call: &AgentCall, n: usize) -> String {
    call.request.messages[..n]
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many leading bytes two texts share.
fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

#[test]
fn two_players_calls_in_a_turn_share_a_byte_identical_prefix() {
    let (alex, sam) = (calls("alex"), calls("sam"));
    let story = alex[0].request.messages[1].content.clone();
    for call in alex.iter().chain(&sam) {
        // System, story and seat part are the prefix every call names.
        assert_eq!(call.request.cache_prefix, Some(3), "{:?}", call.purpose);
        // The story is the same for every call of the turn, both layers, both seats.
        assert_eq!(
            call.request.messages[1].content, story,
            "{:?}",
            call.purpose
        );
    }
    // Two players' calls share the system message and the story, byte for byte (and so do
    // their characters'), whatever the purpose.
    for (a, s) in alex.iter().zip(&sam) {
        assert_eq!(leading(a, 2), leading(s, 2), "{:?}", a.purpose);
    }
    for (a, b) in alex.iter().zip(alex.iter().skip(1)) {
        if a.purpose.layer() == b.purpose.layer() {
            // One seat's calls of a layer share its own part too.
            assert_eq!(
                leading(a, 3),
                leading(b, 3),
                "{:?} {:?}",
                a.purpose,
                b.purpose
            );
        }
    }
    // Which the wire keeps as a prefix: the whole texts agree at least that far.
    let whole = |c: &AgentCall| leading(c, c.request.messages.len());
    assert!(common_prefix(&whole(&alex[1]), &whole(&sam[2])) >= leading(&alex[1], 2).len());
}

#[test]
fn a_players_own_material_stays_out_of_the_shared_part_and_out_of_the_others_prompts() {
    let (alex, sam) = (calls("alex"), calls("sam"));
    for call in alex.iter().chain(&sam) {
        let shared = leading(call, 2);
        for private in [SECRET, MEMORY, DIRECTIVE, "Alex", "Sam", "Keep the blaster"] {
            assert!(!shared.contains(private), "{private:?} in {shared}");
        }
    }
    for call in &sam {
        let text = call.prompt.text();
        for private in [SECRET, MEMORY, DIRECTIVE] {
            assert!(!text.contains(private), "{private:?} reached Sam: {text}");
        }
    }
    // Alex's own calls carry them, in the seat's part and the ask.
    let seat = alex[1].prompt.seat.clone();
    assert!(seat.contains(SECRET) && seat.contains(MEMORY), "{seat}");
    let action = alex[6].prompt.user.clone();
    assert!(action.contains(DIRECTIVE), "{action}");
    // The character layer gets none of its player's secrets or memories.
    for call in &alex[6..] {
        let text = call.prompt.text();
        assert!(!text.contains(SECRET) && !text.contains(MEMORY), "{text}");
    }
}

#[test]
fn a_reaction_continues_an_action_prompt_long_enough_to_be_cached() {
    let p = PromptSet::embedded();
    let short = character_view("alex");
    // A short action prompt is not cached: the reaction stays short.
    let reaction = p.reaction(&short).unwrap();
    assert_eq!(reaction.request.messages.len(), 4);
    // A long one (here, many memories) is: the reaction repeats it whole, then asks on.
    let mut long = character_view("alex");
    long.memories = (1..=40)
        .map(|i| format!("Turn {i}: the relay's lights flickered and went out again."))
        .collect();
    let action = p.action(&long, 1, "").unwrap();
    let reaction = p.reaction(&long).unwrap();
    let n = action.request.messages.len();
    assert_eq!(reaction.request.messages[..n], action.request.messages[..]);
    let answer = &reaction.request.messages[n];
    assert_eq!(answer.role, troupe_llm::Role::Assistant);
    assert_eq!(Some(answer.content.clone()), long.action);
    assert!(
        reaction.request.messages[n + 1]
            .content
            .contains("React in character")
    );
}
