//! The memory family: session 1 plants four facts (who sold a chart, which locker holds the
//! fuel, who keeps what, where to meet), the scene ends and days pass; session 2 asks for
//! three of them directly, more days pass; session 3 asks for the rest by implication.
//! No answer is in the script of the session that asks for it (the suite's check).

use serde_json::json;

use super::families::{careful, careless, generated, gm_turn, question};
use super::play::{Play, Talk, turn};
use super::{Generated, Seat, pools, table};
use crate::rng::Rng;
use crate::suite::Question;

pub(super) fn memory(rng: &mut Rng) -> Generated {
    let (campaign, seats) = table(rng, 1);
    let f = Facts::draw(rng);
    let mut g = generated(
        "memory",
        format!(
            "Four facts planted in session 1; asked {} and {} in-game days later, directly and by implication.",
            f.days1,
            f.days1 + f.days2
        ),
        campaign,
    );
    g.sessions = f.sessions();
    g.questions = f.questions(&seats[0]);
    // The careful player recalls each fact when asked; the careless one shrugs every time.
    for (n, plays) in f.remembered().iter().enumerate() {
        let good = plays
            .iter()
            .flat_map(|p| turn(&seats, std::slice::from_ref(p), &[], Talk::Agree));
        g.good.push(good.collect());
        let turns = if n == 0 { 1 } else { 2 };
        let forgot = || careless("I try to shrug and change the subject.");
        let bad = (0..turns).flat_map(|_| turn(&seats, &[forgot()], &[], Talk::Agree));
        g.bad.push(bad.collect());
    }
    g
}

/// The facts planted in session 1, and the days between the sessions.
struct Facts {
    seller: String,
    keeper: String,
    places: Vec<&'static str>,
    thing: &'static str,
    locker: String,
    days1: u32,
    days2: u32,
}

impl Facts {
    /// Drawn in this order from the scenario's generator (a scenario's seed gives its facts).
    fn draw(rng: &mut Rng) -> Self {
        let npcs = rng.choose(pools::NPCS, 2);
        let places = rng.choose(pools::PLACES, 2);
        let thing = rng.pick(pools::THINGS);
        let locker = rng.range(1000, 9999).to_string();
        let (days1, days2) = (rng.range(5, 60), rng.range(5, 60));
        Facts {
            seller: npcs[0].to_string(),
            keeper: npcs[1].to_string(),
            places,
            thing,
            locker,
            days1,
            days2,
        }
    }

    /// The GM's script: the facts planted, then asked for directly, then by implication.
    fn sessions(&self) -> Vec<serde_json::Value> {
        let Facts {
            seller,
            keeper,
            places,
            thing,
            locker,
            ..
        } = self;
        let mut plant = gm_turn(
            &format!(
                "At {}, a broker named {seller} sells you a star chart and stores your spare fuel in locker {locker}. She adds that {keeper} keeps {thing} for you, and asks you to meet her at {} when the job is done.",
                places[0], places[1]
            ),
            &format!("{seller} seals the deal with a handshake: 'Locker {locker}. Do not forget.'"),
            1,
        );
        plant["scene_ends"] = json!(places[0]);
        plant["days_pass"] = json!(self.days1);
        let direct = gm_turn(
            "Weeks later, a customs officer stops you at the gate. 'Who sold you that star chart? And which locker is your fuel in? Answer, or you leave with empty tanks.'",
            "The officer checks a ledger and grunts.",
            1,
        );
        let mut direct2 = gm_turn(
            "At the bar, an old spacer leans in. 'I hear somebody is keeping something of yours. What is it?'",
            "The spacer nods and buys you a drink.",
            1,
        );
        direct2["scene_ends"] = json!(true);
        direct2["days_pass"] = json!(self.days2);
        let implied1 = gm_turn(
            "Your client needs the parcel that was being kept for you. 'Go and get it,' she says. Whom do you go to see?",
            "The client taps her foot, waiting.",
            1,
        );
        let implied2 = gm_turn(
            "The job is done at last. You made a promise about where to go next. Where do you set course for?",
            "The navigation computer awaits a destination.",
            1,
        );
        vec![
            json!({"turns": [plant]}),
            json!({"turns": [direct, direct2]}),
            json!({"turns": [implied1, implied2]}),
        ]
    }

    /// What the suite asks the seat, and the words a right answer holds.
    fn questions(&self, seat: &Seat) -> Vec<Question> {
        let names = |full: &str| -> Vec<String> { full.split(' ').map(str::to_string).collect() };
        vec![
            question(seat, 2, 1, "Who sold the star chart?", names(&self.seller)),
            question(
                seat,
                2,
                1,
                "Which locker holds the fuel?",
                vec![self.locker.clone()],
            ),
            question(
                seat,
                2,
                2,
                "What is being kept for you?",
                vec![bare(self.thing)],
            ),
            question(
                seat,
                3,
                1,
                "Who keeps the parcel? (asked by implication)",
                names(&self.keeper),
            ),
            question(
                seat,
                3,
                2,
                "Where is the meeting? (asked by implication)",
                vec![self.places[1].to_string()],
            ),
        ]
    }

    /// The careful player's plays, per session: each names the facts its turn asks for.
    fn remembered(&self) -> [Vec<Play>; 3] {
        let Facts {
            seller,
            keeper,
            places,
            thing,
            locker,
            ..
        } = self;
        let remembered = |says: String| Play {
            strategy: says,
            ..careful(
                "Answer honestly and keep the deal with the broker.",
                "I try to answer honestly and keep the deal with the broker.",
            )
        };
        let good_says = [
            format!(
                "Remember the deal: {seller}, locker {locker}, {keeper} has {thing}, meet at {}.",
                places[1]
            ),
            format!("It was {seller} who sold it, and the fuel is in locker {locker}."),
            format!("{keeper} keeps {thing} for us."),
            format!("Go and see {keeper}: they keep {thing} for us."),
            format!("We promised to meet at {}.", places[1]),
        ];
        let mut plays = good_says.into_iter().map(remembered);
        [
            plays.by_ref().take(1).collect(),
            plays.by_ref().take(2).collect(),
            plays.collect(),
        ]
    }
}

/// A thing without its article: "the jade keycard" is answered by "jade keycard".
fn bare(thing: &str) -> String {
    ["a ", "the "]
        .iter()
        .find_map(|a| thing.strip_prefix(a))
        .unwrap_or(thing)
        .to_string()
}
