//! What of a session goes into memory, and when: the turns not stored yet, the storage
//! trigger, and the episodes (each in the memory it belongs to) of the turns being stored.

use troupe_memory::extract::Moment;
use troupe_memory::{Episode, Scope, Source};

use crate::events::{Envelope, Event};
use crate::session::Session;

/// The episodes of the given turns, from the session's standing events: what was said and done
/// at the table, each in the memory it belongs to.
///
/// - GM narration, answers, outcomes and LASER FEELINGS answers: the party's, canon.
/// - Each character's accepted action and dialogue: the party's (everyone heard it).
/// - Dice: the party's, a game record.
/// - A player's strategy: that player's alone (never its character's).
/// - A character's reaction (its feelings): that character's alone.
pub fn episodes_of(
    s: &Session,
    events: &[Envelope],
    turns: &[u32],
) -> Vec<(Episode, Source, Moment)> {
    let mut scratch = Session::new(s.id.clone(), s.number);
    // The events may start mid-session: what came before them and the episodes need (the seats,
    // the whispers told earlier) comes from the session itself.
    scratch.campaign = s.campaign.clone();
    let told_in_range = events
        .iter()
        .filter(|e| matches!(e.event, Event::Whisper { .. }))
        .count();
    scratch.whispers = s
        .whispers
        .iter()
        .take(s.whispers.len().saturating_sub(told_in_range))
        .cloned()
        .collect();
    // Likewise the day the events begin on: today's, less the days they let pass.
    let passed_in_range: u32 = events
        .iter()
        .map(|e| match e.event {
            Event::TimePassed { days } => days,
            _ => 0,
        })
        .sum();
    scratch.day = s.day().saturating_sub(passed_in_range);
    let mut out = Vec::new();
    for env in events {
        let completing = matches!(env.event, Event::TurnCompleted);
        if completing && turns.contains(&env.turn_number) {
            out.extend(turn_episodes(&scratch));
        }
        if let Event::Whisper { to, scope, text } = &env.event
            && turns.contains(&env.turn_number)
        {
            let day = scratch.day();
            out.extend(whisper_episodes(s, env, day, to.as_deref(), *scope, text));
        }
        scratch.apply(env);
    }
    // The turn in progress (storage runs before the turn completes).
    if scratch.in_turn && turns.contains(&scratch.turn_number) {
        out.extend(turn_episodes(&scratch));
    }
    out
}

/// A whisper goes into the memory of exactly the layers it was told to: player-only into the
/// player's, character-only into the character's, both into both.
fn whisper_episodes(
    s: &Session,
    env: &Envelope,
    day: u32,
    to: Option<&str>,
    scope: crate::WhisperScope,
    text: &str,
) -> Vec<(Episode, Source, Moment)> {
    use troupe_agents::Layer;
    let agents = match to {
        Some(a) => vec![a.to_string()],
        None => s.agent_ids(),
    };
    let mut out = Vec::new();
    for agent in agents {
        for (layer, memory_scope) in [
            (Layer::Player, Scope::Player(agent.clone())),
            (Layer::Character, Scope::Character(agent.clone())),
        ] {
            if !scope.reaches(layer) {
                continue;
            }
            let layer_key = if layer == Layer::Player { "p" } else { "c" };
            out.push((
                Episode {
                    id: format!(
                        "s{}-t{}-whisper{}-{agent}-{layer_key}",
                        s.number, env.turn_number, env.seq
                    ),
                    session: s.number,
                    turn: env.turn_number,
                    day: Some(day),
                    timestamp: String::new(),
                    speaker: "gm".into(),
                    text: format!("The GM told me in private: {text}"),
                    scope: memory_scope,
                },
                Source::Gm,
                Moment::Answer,
            ));
        }
    }
    out
}

/// What this turn leaves in memory, in the order it happened: the narration, the answers,
/// each seat's plan, action, dice, insight and reaction, what the party settled on, the outcome.
fn turn_episodes(s: &Session) -> Vec<(Episode, Source, Moment)> {
    let t = &s.turn;
    let mut e = TurnEpisodes::new(s);
    if let Some(text) = &t.narration {
        e.push(
            "narration".into(),
            "gm",
            Scope::Party,
            text.clone(),
            Source::Gm,
            Moment::Narration,
        );
    }
    for (i, qa) in t.clarifications.iter().enumerate() {
        if qa.answer.trim().is_empty() {
            continue;
        }
        let name = character_name(s, &qa.asked_by);
        e.push(
            format!("answer{}", i + 1),
            "gm",
            Scope::Party,
            format!(
                "Asked by {name}: {} The GM answered: {}",
                qa.question, qa.answer
            ),
            Source::Gm,
            Moment::Answer,
        );
    }
    for seat in s.seats() {
        e.seat(seat);
    }
    e.settled();
    if let Some(text) = &t.outcome {
        e.push(
            "outcome".into(),
            "gm",
            Scope::Party,
            text.clone(),
            Source::Gm,
            Moment::Outcome,
        );
    }
    e.out
}

/// A turn's episodes as they are gathered.
struct TurnEpisodes<'a> {
    s: &'a Session,
    /// Every whisper not meant for the whole table in both layers: what shared memory, read
    /// by every player and character, must not hold.
    all: Vec<&'a str>,
    out: Vec<(Episode, Source, Moment)>,
}

impl<'a> TurnEpisodes<'a> {
    fn new(s: &'a Session) -> Self {
        let all = s
            .whispers
            .iter()
            .filter(|w| w.to.is_some() || w.scope != crate::WhisperScope::Both)
            .map(|w| w.text.as_str())
            .collect();
        TurnEpisodes {
            s,
            all,
            out: Vec::new(),
        }
    }

    /// What the AIs wrote goes into memory with every whisper its readers may not know
    /// withheld.
    fn scrub(&self, scope: &Scope, text: &str) -> String {
        use crate::secrets::{kept_from, withhold};
        use troupe_agents::Layer;
        let whispers = &self.s.whispers;
        match scope {
            Scope::Player(a) => withhold(text, &kept_from(whispers, a, Layer::Player)),
            Scope::Character(a) => withhold(text, &kept_from(whispers, a, Layer::Character)),
            _ => withhold(text, &self.all),
        }
    }

    fn push(
        &mut self,
        key: String,
        speaker: &str,
        scope: Scope,
        text: String,
        source: Source,
        moment: Moment,
    ) {
        if text.trim().is_empty() {
            return;
        }
        // The GM's own words are the GM's to share.
        let text = if speaker == "gm" || speaker == "game" {
            text
        } else {
            self.scrub(&scope, &text)
        };
        let s = self.s;
        self.out.push((
            Episode {
                id: format!("s{}-t{}-{}", s.number, s.turn_number, key),
                session: s.number,
                turn: s.turn_number,
                day: Some(s.turn_day()),
                timestamp: String::new(),
                speaker: speaker.to_string(),
                text,
                scope,
            },
            source,
            moment,
        ));
    }

    /// One seat's turn: the player's plan, the character's action, its dice, its LASER
    /// FEELINGS insight and its reaction.
    fn seat(&mut self, seat: &troupe_campaign::Seat) {
        let (s, t) = (self.s, &self.s.turn);
        let agent = &seat.player.agent_id;
        let name = &seat.character.name;
        if let Some(intent) = t.intents.get(agent) {
            self.push(
                format!("strategy-{agent}"),
                agent,
                Scope::Player(agent.clone()),
                format!(
                    "My plan: {} I told {name}: {}",
                    intent.strategy, intent.directive
                ),
                Source::Player,
                Moment::Strategy,
            );
        }
        if let Some(action) = t.actions.get(agent).and_then(|a| a.final_action()) {
            let said = if action.dialogue.trim().is_empty() {
                String::new()
            } else {
                format!(" {name} said: \"{}\"", action.dialogue.trim())
            };
            self.push(
                format!("action-{agent}"),
                &seat.character.character_id,
                Scope::Party,
                format!("{name} attempted: \"{}\"{said}", action.action.trim()),
                Source::Character,
                Moment::Action,
            );
        }
        if let Some(roll) = t.rolls.get(agent) {
            self.push(
                format!("dice-{agent}"),
                "game",
                Scope::Party,
                rolled(name, roll),
                Source::Game,
                Moment::Dice,
            );
        }
        if let Some(i) = s.insight(agent) {
            self.push(
                format!("insight-{agent}"),
                "gm",
                Scope::Party,
                format!(
                    "LASER FEELINGS: {name} asked: {} The GM answered: {}",
                    i.question, i.answer
                ),
                Source::Gm,
                Moment::Answer,
            );
        }
        if let Some(text) = t.reactions.get(agent) {
            self.push(
                format!("reaction-{agent}"),
                &seat.character.character_id,
                Scope::Character(agent.clone()),
                text.clone(),
                Source::Character,
                Moment::Reaction,
            );
        }
    }

    /// What the party settled on, remembered by each player; characters never hear OOC talk,
    /// so it stays out of the memory they read.
    fn settled(&mut self) {
        let s = self.s;
        let Some(c) = s.settled() else { return };
        let (Some(plan), Some(proposer)) = (&c.plan, &c.proposer) else {
            return;
        };
        let how = match c.outcome {
            troupe_agents::Outcome::Unanimous => "all agreed",
            troupe_agents::Outcome::Majority => "most agreed",
            _ => "put it to a vote",
        };
        let dissent: Vec<String> = c.dissent.iter().map(|a| character_name(s, a)).collect();
        let dissent = if dissent.is_empty() {
            String::new()
        } else {
            format!(" Not with it: {}.", dissent.join(", "))
        };
        for a in s.agent_ids() {
            self.push(
                format!("consensus-{a}"),
                proposer,
                Scope::Player(a.clone()),
                format!(
                    "The party {how} on {}'s plan (player {proposer}): {plan}{dissent}",
                    character_name(s, proposer)
                ),
                Source::Player,
                Moment::Strategy,
            );
        }
    }
}

/// A roll as memory keeps it, in lower case but for the character's name.
fn rolled(name: &str, roll: &troupe_rules::RollResult) -> String {
    let faces: Vec<String> = roll.dice.iter().map(|d| d.face.to_string()).collect();
    format!(
        "{name} rolled {} for a {:?} task against {}: {} {}, {:?}.",
        faces.join(", "),
        roll.task,
        roll.number.get(),
        roll.successes,
        if roll.successes == 1 {
            "success"
        } else {
            "successes"
        },
        roll.outcome
    )
    .to_lowercase()
    .replacen(&name.to_lowercase(), name, 1)
}

fn character_name(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map(|x| x.character.name.clone())
        .unwrap_or_else(|| agent.to_string())
}

/// Why this turn's memory is stored now, or None to hold it for the next trigger
/// (seed 001 FR-005: every 10 turns, critical events, scene and session end).
pub fn storage_trigger(s: &Session) -> Option<String> {
    let t = &s.turn;
    if t.scene_ended {
        return Some("the GM ended the scene".into());
    }
    if s.turn_number > 0 && s.turn_number.is_multiple_of(10) {
        return Some("every 10 turns".into());
    }
    let texts = [t.narration.as_deref(), t.outcome.as_deref()];
    if texts.iter().flatten().any(|x| x.contains('@')) {
        return Some("critical event: an NPC was introduced".into());
    }
    if !t.rolls.is_empty() {
        return Some("critical event: a risky action was resolved".into());
    }
    let quest = |x: &&str| {
        let l = x.to_lowercase();
        l.contains("quest") || l.contains("mission")
    };
    if texts.iter().flatten().any(quest) {
        return Some("critical event: the quest changed".into());
    }
    let decision = t.intents.values().any(|i| {
        let l = i.strategy.to_lowercase();
        l.contains("decide") || l.contains("commit")
    });
    if decision {
        return Some("critical event: a major decision".into());
    }
    None
}

/// Completed turns of this session not yet in memory (the turn in flight is not counted).
pub fn unstored_turns(s: &Session) -> Vec<u32> {
    let last = if s.in_turn {
        s.turn_number.saturating_sub(1)
    } else {
        s.turn_number
    };
    (s.memory_through + 1..=last).collect()
}
