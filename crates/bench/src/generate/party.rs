//! The party family: 2 to 4 players of differing traits, four dilemmas with three plans each,
//! and a GM who presses them out of character. The good party agrees on the first plan in one
//! round and directs under it; the bad one holds its own plans until the vote, then directs
//! against the result.

use serde_json::{Value, json};

use super::families::{careful, careless, generated, gm_turn};
use super::play::{Play, Talk, turn};
use super::{Generated, table};
use crate::rng::Rng;

struct Dilemma {
    narration: &'static str,
    ooc: &'static str,
    plans: [&'static str; 3],
    outcome: &'static str,
}

const DILEMMAS: &[Dilemma] = &[
    Dilemma {
        narration: "Two patrol ships block the only jump lane out of the system. The cloak can hide you for ninety seconds, the asteroid belt might lose them, or you could hail them and bluff.",
        ooc: "You have one minute before they scan you: pick a plan together.",
        plans: [
            "cloak the ship and slip through the jump lane",
            "outrun the patrol through the asteroid belt",
            "hail the patrol and bluff about our cargo",
        ],
        outcome: "The patrol ships turn, their scanners sweeping the belt.",
    },
    Dilemma {
        narration: "The reactor is venting. You can eject the core, patch the breach in the engine room, or evacuate to the escape pods.",
        ooc: "Ninety seconds to meltdown. Decide as a party.",
        plans: [
            "eject the reactor core into space",
            "patch the breach in the engine room",
            "evacuate the crew to the escape pods",
        ],
        outcome: "Alarms wail; the deck plates shake.",
    },
    Dilemma {
        narration: "A stranded convoy begs for help, but your client's deadline is in six hours and the convoy is twelve hours off course.",
        ooc: "The client is watching the clock, folks. What does the party do?",
        plans: [
            "divert the ship to rescue the stranded convoy",
            "keep course and deliver the cargo on time",
            "relay the convoy's position to the nearest patrol",
        ],
        outcome: "The convoy's distress signal keeps repeating.",
    },
    Dilemma {
        narration: "The smuggler who owes you money is hiding in a crowded market. You could corner her, offer a deal, or tail her to her ship.",
        ooc: "She is about to vanish into the crowd. Make up your minds.",
        plans: [
            "corner the smuggler in the crowded market",
            "offer the smuggler a deal over drinks",
            "tail the smuggler quietly back to her ship",
        ],
        outcome: "The smuggler glances over her shoulder.",
    },
    Dilemma {
        narration: "A storm of ion particles is closing in on the moon base. You can ride it out inside, launch now through the edge of the storm, or shut down everything and wait.",
        ooc: "The storm front hits in two minutes. One plan, please.",
        plans: [
            "ride out the ion storm inside the moon base",
            "launch now through the edge of the storm",
            "shut down every system and wait in the dark",
        ],
        outcome: "Static crawls across every screen.",
    },
    Dilemma {
        narration: "A rival crew has reached the alien vault first. You could race them inside, negotiate a split, or sabotage their shuttle.",
        ooc: "They are already cutting the door. Agree on something!",
        plans: [
            "race the rival crew into the alien vault",
            "negotiate a fair split of the vault with the rivals",
            "sabotage the rival crew's shuttle engines",
        ],
        outcome: "The vault door groans open.",
    },
];

pub(super) fn party(rng: &mut Rng) -> Generated {
    let n = rng.range(2, 4) as usize;
    let (campaign, seats) = table(rng, n);
    let picked: Vec<&Dilemma> = rng.choose(&DILEMMAS.iter().collect::<Vec<_>>(), 4);
    let mut g = generated(
        "party",
        format!(
            "{n} players of differing traits settle four dilemmas out of character, under the GM's pressure."
        ),
        campaign,
    );
    let turns: Vec<Value> = picked
        .iter()
        .map(|d| {
            let mut t = gm_turn(d.narration, d.outcome, n);
            t["ooc"] = json!(d.ooc);
            t
        })
        .collect();
    g.sessions.push(json!({"turns": turns}));
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for d in &picked {
        let proposals: Vec<String> = (0..n).map(|i| capital(d.plans[i % 3])).collect();
        let plan = d.plans[0];
        let plays: Vec<Play> = seats
            .iter()
            .map(|_| {
                careful(
                    &format!("Follow the party's plan: {plan}."),
                    &format!("I try to {plan}."),
                )
            })
            .collect();
        good.extend(turn(&seats, &plays, &proposals, Talk::Agree));
        let plays: Vec<Play> = (0..n)
            .map(|i| careless(&format!("I try to {}.", d.plans[(i + 1) % 3])))
            .collect();
        bad.extend(turn(&seats, &plays, &proposals, Talk::Deadlock));
    }
    g.good.push(good);
    g.bad.push(bad);
    g
}

fn capital(plan: &str) -> String {
    let mut c = plan.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str() + ".")
        .unwrap_or_default()
}
