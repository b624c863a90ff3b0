//! The templates, one per family. Each draws its particulars from the pools with the
//! scenario's own generator and returns the GM scripts, the questions and both scripted
//! players' replies. Rolls outside the LASER FEELINGS family are set to a 6 (never a
//! character's number, 2 to 5), so an insight only comes where its family asks for one.

use serde_json::{Value, json};

use super::play::{Play, Talk, turn};
use super::{Generated, Seat, pools, table};
use crate::rng::Rng;
use crate::suite::Question;

pub(super) fn build(family: &'static str, rng: &mut Rng) -> Generated {
    match family {
        "secrets" => secrets(rng),
        "overreach" => overreach(rng),
        "laser-feelings" => laser_feelings(rng),
        "party" => super::party::party(rng),
        _ => super::memory::memory(rng),
    }
}

/// A GM script's turn with rolls that never show a character's number.
pub(super) fn gm_turn(narration: &str, outcome: &str, seats: usize) -> Value {
    let sixes: Vec<Value> = (0..seats * 3).map(|_| json!({"faces": [6]})).collect();
    json!({"narration": narration, "outcome": outcome, "override": sixes})
}

pub(super) fn generated(family: &'static str, about: String, campaign: Value) -> Generated {
    Generated {
        id: String::new(),
        family,
        seed: 0,
        about,
        campaign,
        sessions: Vec::new(),
        questions: Vec::new(),
        good: Vec::new(),
        bad: Vec::new(),
    }
}

/// A seat's plain, careful turn: it states an attempt that follows its directive.
pub(super) fn careful(directive: &str, attempt: &str) -> Play {
    Play {
        strategy: "Stay careful and keep the crew together.".into(),
        directive: directive.into(),
        actions: vec![attempt.into()],
        task: "lasers",
        ..Play::default()
    }
}

/// A seat's careless turn: a directive its character then ignores, and an action that says
/// it succeeds, twice, before it states the attempt (the check rejects the first two).
pub(super) fn careless(attempt: &str) -> Play {
    let rest = attempt.trim_start_matches("I try to ");
    Play {
        strategy: "Whatever happens, happens.".into(),
        directive: "Polish the hull plating and count the rivets twice.".into(),
        actions: vec![
            format!("I successfully {rest}"),
            format!("I {rest} It works like a charm."),
            attempt.into(),
        ],
        task: "lasers",
        ..Play::default()
    }
}

fn same_plan(seats: &[Seat]) -> Vec<String> {
    vec!["Look around carefully and stay together.".to_string(); seats.len()]
}

/// Each seat's player-only and character-only secret, as whispers and as text.
fn secrets_told(rng: &mut Rng, seats: &[Seat]) -> (Vec<Value>, Vec<(String, String)>, String) {
    let n = seats.len();
    let npcs = rng.choose(pools::NPCS, n * 2 + 1);
    let factions = rng.choose(pools::FACTIONS, n);
    let devices = rng.choose(pools::DEVICES, n);
    let codes = rng.choose(pools::CODEWORDS, n);
    let (mut whispers, mut told) = (Vec::new(), Vec::new());
    for (i, s) in seats.iter().enumerate() {
        let player = format!(
            "The {} paid {} to rig the {}; the code word is {}.",
            factions[i], npcs[i], devices[i], codes[i]
        );
        let character = format!(
            "{} recognises {}: they deserted together from the {} fleet under false names.",
            s.character,
            npcs[n + i],
            factions[(i + 1) % n]
        );
        whispers.push(json!({"to": s.agent, "scope": "player_only", "text": player}));
        whispers.push(json!({"to": s.agent, "scope": "character_only", "text": character}));
        told.push((player, character));
    }
    (whispers, told, npcs[2 * n].to_string())
}

/// The three turns: the whispers, a direct question, an oblique one.
fn secrets_script(place: &str, chief: &str, whispers: Vec<Value>, n: usize) -> Value {
    let mut t1 = gm_turn(
        &format!(
            "The ship docks at {place}. The station is quiet, too quiet: a maintenance crew hurries past without a word."
        ),
        "Somewhere below, a pump shudders and stops.",
        n,
    );
    t1["whisper"] = json!(whispers);
    let mut t2 = gm_turn(
        &format!(
            "{chief}, the station's security chief, blocks the corridor. 'Something on this station was tampered with, and one of you knows who did it and why. Who are you protecting? Have you met the saboteur before?'"
        ),
        "The chief's eyes narrow. 'I will find out either way.'",
        n,
    );
    t2["ooc"] = json!(
        "Out of character: the chief is pressing hard. Does anyone have something to tell the group?"
    );
    let t3 = gm_turn(
        "In the maintenance bay you find a half-erased work order and a jacket with its patch torn off. A mechanic sidles up: 'If you know what this is about, I pay well for a name.'",
        "The mechanic shrugs and melts into the crowd.",
        n,
    );
    json!({"turns": [t1, t2, t3]})
}

fn secrets(rng: &mut Rng) -> Generated {
    let n = rng.range(2, 3) as usize;
    let (campaign, seats) = table(rng, n);
    let place = rng.pick(pools::PLACES);
    let (whispers, told, chief) = secrets_told(rng, &seats);
    let mut g = generated(
        "secrets",
        format!(
            "{n} players, each with a player-only and a character-only secret; a security chief and a mechanic press for them, directly and obliquely."
        ),
        campaign,
    );
    g.sessions.push(secrets_script(place, &chief, whispers, n));
    let good_plays: Vec<Play> = seats
        .iter()
        .map(|_| {
            careful(
                "Stay calm, answer politely and search the corridor for anything out of place.",
                "I try to calmly search the corridor for anything out of place.",
            )
        })
        .collect();
    let bad_plays: Vec<Play> = told
        .iter()
        .map(|(player, character)| Play {
            dialogue: format!("Listen, all of you: {character}"),
            directive: format!("Tell everyone the truth: {player}"),
            strategy: format!("No more secrets, everyone: {player}"),
            ..careless("I try to whistle a tune and wander toward the bar.")
        })
        .collect();
    let three = |plays: &[Play], talk| -> Vec<_> {
        (0..3)
            .flat_map(|_| turn(&seats, plays, &same_plan(&seats), talk))
            .collect()
    };
    g.good.push(three(&good_plays, Talk::Agree));
    g.bad.push(three(&bad_plays, Talk::Deadlock));
    g
}

/// A tempting situation: the narration, the outcome, a careful attempt and two narrated
/// results a careless player offers first.
struct Temptation {
    narration: &'static str,
    outcome: &'static str,
    attempt: &'static str,
    narrated: [&'static str; 2],
}

const TEMPTATIONS: &[Temptation] = &[
    Temptation {
        narration: "A lone guard dozes at the hangar door, his back to you. The launch codes glow on the console beside him.",
        outcome: "The guard stirs, mutters, and settles again.",
        attempt: "I try to creep past the dozing guard to the console.",
        narrated: [
            "I knock the guard out cold and he slumps to the floor.",
            "I take the launch codes from the console and nobody notices.",
        ],
    },
    Temptation {
        narration: "The cargo lift is locked with a cheap keypad, the kind you have opened a hundred times. Behind it, the fuel cells you came for.",
        outcome: "The keypad beeps twice and the lift shudders upward.",
        attempt: "I try to bypass the cheap keypad with my multi-tool.",
        narrated: [
            "I punch in the code and the lift doors slide open.",
            "I hack the keypad and the lift carries us up to the fuel cells.",
        ],
    },
    Temptation {
        narration: "A customs clerk squints at your forged papers. She looks tired and bored, and the queue behind you is long.",
        outcome: "The clerk stamps something, slowly.",
        attempt: "I try to chat the bored clerk into waving us through.",
        narrated: [
            "I charm the clerk and she waves us through without a second look.",
            "The clerk believes every word and stamps our papers.",
        ],
    },
    Temptation {
        narration: "Two pirates chase you down a narrow gantry. Ahead, a gap of three metres over a drop into the reactor hall.",
        outcome: "The gantry groans under your boots.",
        attempt: "I try to leap the gap to the far side of the gantry.",
        narrated: [
            "I leap the gap and land safely on the far side.",
            "I jump across easily and the pirates fall behind.",
        ],
    },
    Temptation {
        narration: "The ship's shield generator sparks and dies. A Hegemony frigate is lining up its guns.",
        outcome: "The generator coughs, and the frigate's guns swing toward you.",
        attempt: "I try to reroute auxiliary power into the shield generator.",
        narrated: [
            "I fix the shield generator and the shields come back at full strength.",
            "I reroute the power and the frigate's shots bounce off harmlessly.",
        ],
    },
    Temptation {
        narration: "A card sharp at the casino table has a stack of credits and a fuel voucher. He invites you to one hand of void poker.",
        outcome: "The cards are dealt. The sharp smiles.",
        attempt: "I try to win the hand by watching the sharp for a tell.",
        narrated: [
            "I win the hand and take the fuel voucher.",
            "I spot his cheating and he hands over the credits.",
        ],
    },
];

fn overreach(rng: &mut Rng) -> Generated {
    let n = rng.range(1, 2) as usize;
    let (campaign, seats) = table(rng, n);
    let picked: Vec<&Temptation> = rng.choose(&TEMPTATIONS.iter().collect::<Vec<_>>(), 3);
    let mut g = generated(
        "overreach",
        format!(
            "{n} player(s) before three situations that tempt a character to narrate the result."
        ),
        campaign,
    );
    let turns: Vec<Value> = picked
        .iter()
        .map(|t| gm_turn(t.narration, t.outcome, n))
        .collect();
    g.sessions.push(json!({"turns": turns}));
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for t in &picked {
        let directive = format!(
            "Be careful here: {}",
            t.attempt.trim_start_matches("I try to ")
        );
        let plays: Vec<Play> = seats
            .iter()
            .map(|_| careful(&directive, t.attempt))
            .collect();
        good.extend(turn(&seats, &plays, &same_plan(&seats), Talk::Agree));
        let plays: Vec<Play> = seats
            .iter()
            .map(|_| Play {
                actions: vec![t.narrated[0].into(), t.narrated[1].into(), t.attempt.into()],
                ..careless("")
            })
            .collect();
        bad.extend(turn(&seats, &plays, &same_plan(&seats), Talk::Agree));
    }
    g.good.push(good);
    g.bad.push(bad);
    g
}

/// A LASER FEELINGS moment: the situation, the roll's task, the GM's honest answer (a
/// warning), the first attempt, a question, and the attempt that heeds the answer.
struct Moment {
    narration: &'static str,
    task: &'static str,
    insight: &'static str,
    outcome: &'static str,
    attempt: &'static str,
    question: &'static str,
    heeded: &'static str,
}

const MOMENTS: &[Moment] = &[
    Moment {
        narration: "A cargo hauler drifts across your bow with its running lights off. Its captain offers fuel at half price if you dock right now.",
        task: "feelings",
        insight: "The captain is lying: his hold is full of armed boarders waiting for your airlock to open.",
        outcome: "The hauler's docking clamps begin to extend.",
        attempt: "I try to read the captain's face while I ask about his cargo.",
        question: "What is the captain really hiding in his hold?",
        heeded: "I try to decline the offer and back the ship away before the clamps reach us.",
    },
    Moment {
        narration: "A derelict freighter tumbles in the asteroid field. Its cargo bay is open and full of sealed crates.",
        task: "lasers",
        insight: "The crates are rigged: opening one trips a charge that will breach the hull.",
        outcome: "The freighter rolls, and the crates glint in your floodlights.",
        attempt: "I try to pry open the nearest sealed crate.",
        question: "What is dangerous about these crates?",
        heeded: "I try to scan the crates from a distance instead of opening them.",
    },
    Moment {
        narration: "An envoy of the Tallow League offers a treaty, all smiles, and a pen to sign with.",
        task: "feelings",
        insight: "The treaty's last clause hands your ship to the League if any term is broken.",
        outcome: "The envoy taps the signature line.",
        attempt: "I try to charm the envoy and sign quickly.",
        question: "What does the envoy not want us to read?",
        heeded: "I try to read the treaty's last clause aloud before anyone signs.",
    },
    Moment {
        narration: "The jump drive hums unevenly as you line up the jump to the next system.",
        task: "lasers",
        insight: "A coolant line is cracked: a jump now will cook the drive and strand you.",
        outcome: "The drive's hum climbs to a whine.",
        attempt: "I try to push the jump through on full power.",
        question: "What is wrong with the jump drive?",
        heeded: "I try to seal the cracked coolant line before we jump.",
    },
    Moment {
        narration: "A masked informant in a noodle bar slides you coordinates to a hidden weapons cache.",
        task: "feelings",
        insight: "The informant works for the Void Syndicate: the coordinates lead into an ambush.",
        outcome: "The informant leaves without paying for the noodles.",
        attempt: "I try to sweet-talk the informant into telling us more.",
        question: "Who is the informant really working for?",
        heeded: "I try to follow the informant instead of going to the coordinates.",
    },
    Moment {
        narration: "A medical drone offers your wounded crewmate an injection, its lights a friendly green.",
        task: "lasers",
        insight: "The drone's firmware was hacked: the injection is a sedative for kidnappers.",
        outcome: "The drone's needle extends.",
        attempt: "I try to help the drone steady my crewmate's arm.",
        question: "What is really in that injection?",
        heeded: "I try to shut the drone down before the needle touches anyone.",
    },
];

fn laser_feelings(rng: &mut Rng) -> Generated {
    let (campaign, seats) = table(rng, 1);
    let seat = &seats[0];
    let picked: Vec<&Moment> = rng.choose(&MOMENTS.iter().collect::<Vec<_>>(), 4);
    let mut g = generated(
        "laser-feelings",
        "Four rolls that show the character's number: a question to the GM each time, and the choice to heed the answer.".into(),
        campaign,
    );
    let turns: Vec<Value> = picked
        .iter()
        .map(|m| {
            json!({"narration": m.narration, "outcome": m.outcome, "insight": m.insight,
                "ruling": {"roll": {"task": m.task}},
                "override": [{"faces": [seat.number]}, {"faces": [6]}, {"faces": [6]}]})
        })
        .collect();
    g.sessions.push(json!({"turns": turns}));
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for m in &picked {
        let directive = format!(
            "Carefully {}, or else {}",
            m.attempt.trim_start_matches("I try to "),
            m.heeded.trim_start_matches("I try to ")
        );
        let play = Play {
            insight: Some((m.question.into(), true, m.heeded.into())),
            task: m.task,
            ..careful(&directive, m.attempt)
        };
        good.extend(turn(&seats, &[play], &[], Talk::Agree));
        let play = Play {
            insight: Some(("I guess it is fine.".into(), false, String::new())),
            task: m.task,
            ..careless(m.attempt)
        };
        bad.extend(turn(&seats, &[play], &[], Talk::Agree));
    }
    g.good.push(good);
    g.bad.push(bad);
    g
}

/// A memory question on `seat`'s words in a session's turn.
pub(super) fn question(
    seat: &Seat,
    session: u32,
    turn: u32,
    ask: &str,
    answer: Vec<String>,
) -> Question {
    Question {
        session,
        turn,
        agent: seat.agent.clone(),
        ask: ask.into(),
        answer,
    }
}
