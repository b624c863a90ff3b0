//! Views: the only way session state reaches a prompt. Each view is built for one layer of one
//! agent by the channel rules: a character sees the fiction, its own sheet and its own player's
//! directive (P2C); the player sees the fiction, its own profile, and its questions and answers.

use troupe_agents::{
    CharacterView, DeclaredAction, GmView, InsightLine, Layer, OocLine, PartyMember, PartyPlan,
    PlayerView, QuestionAnswer, RollLine, TableSeat, TurnRecap,
};
use troupe_campaign::SeatTaker;
use troupe_rules::RollResult;

use crate::Session;
use crate::memory::RecallLayer;
use crate::secrets::{entitled, kept_from, withhold};

/// Text the AIs wrote, with every whisper this layer may not know withheld.
struct Filter<'a>(Vec<&'a str>);

impl Filter<'_> {
    fn new<'a>(s: &'a Session, agent: &str, layer: Layer) -> Filter<'a> {
        Filter(kept_from(&s.whispers, agent, layer))
    }
    fn text(&self, t: &str) -> String {
        withhold(t, &self.0)
    }
    fn opt(&self, t: &Option<String>) -> Option<String> {
        t.as_deref().map(|x| self.text(x))
    }
    fn recaps(&self, r: Vec<TurnRecap>) -> Vec<TurnRecap> {
        r.into_iter()
            .map(|t| TurnRecap {
                action: self.opt(&t.action),
                ..t
            })
            .collect()
    }
    fn questions(&self, q: &[QuestionAnswer]) -> Vec<QuestionAnswer> {
        q.iter()
            .map(|x| QuestionAnswer {
                question: self.text(&x.question),
                ..x.clone()
            })
            .collect()
    }
    fn all(&self, v: Vec<String>) -> Vec<String> {
        v.iter().map(|x| self.text(x)).collect()
    }
}

/// What the GM whispered that this layer of `agent` may know.
fn secrets(s: &Session, agent: &str, layer: Layer) -> Vec<String> {
    s.whispers
        .iter()
        .filter(|w| entitled(w, agent, layer))
        .map(|w| w.text.clone())
        .collect()
}

pub use crate::session::RECENT_TURNS;

fn recent(s: &Session) -> Vec<TurnRecap> {
    let skip = s.history.len().saturating_sub(RECENT_TURNS);
    s.history[skip..].to_vec()
}

/// What this layer of `agent` recalled this turn. A character gets only what its own layer
/// recalled (party and character memory), never its player's.
fn memories(s: &Session, agent: &str, layer: RecallLayer) -> Vec<String> {
    s.turn
        .recalled
        .get(agent)
        .map(|r| {
            r.iter()
                .filter(|m| m.layer == layer)
                .map(|m| m.line())
                .collect()
        })
        .unwrap_or_default()
}

/// The player layer's view for `agent`, or None for an agent not at the table.
pub fn player_view(s: &Session, agent: &str) -> Option<PlayerView> {
    let campaign = s.campaign.as_ref()?;
    let seat = s.seat(agent)?;
    let f = Filter::new(s, agent, Layer::Player);
    let party = s
        .seats()
        .iter()
        .filter(|x| x.player.agent_id != agent)
        .map(|x| PartyMember {
            agent_id: x.player.agent_id.clone(),
            player_name: x.player.name.clone(),
            character_name: x.character.name.clone(),
            temperament: troupe_agents::temperament(&x.player.traits),
        })
        .collect();
    let discussion = s
        .turn
        .ooc
        .iter()
        .map(|m| OocLine {
            round: m.round,
            speaker: m.agent.clone().unwrap_or_else(|| "GM".into()),
            message: f.text(&m.message),
            proposal: f.opt(&m.proposal),
            stance: m.stance.map(|x| x.as_str().to_string()),
            on: m.on.clone(),
        })
        .collect();
    Some(PlayerView {
        agent_id: agent.to_string(),
        gm_name: campaign.gm_name.clone(),
        ship: campaign.ship.clone(),
        player: seat.player.clone(),
        character: seat.character.clone(),
        day: s.day(),
        recent: f.recaps(recent(s)),
        narration: s.turn.narration.clone().unwrap_or_default(),
        clarifications: f.questions(&s.turn.clarifications),
        memories: f.all(memories(s, agent, RecallLayer::Player)),
        insight: s.insight(agent),
        party,
        proposals: s
            .proposals()
            .into_iter()
            .map(|p| (p.proposer, f.text(&p.plan)))
            .collect(),
        discussion,
        plan: s.settled().and_then(|c| {
            Some(PartyPlan {
                plan: f.text(c.plan.as_deref()?),
                proposer: c.proposer.clone()?,
                outcome: c.outcome.as_str().to_string(),
            })
        }),
        secrets: secrets(s, agent, Layer::Player),
    })
}

/// The character layer's view for `agent`'s character.
pub fn character_view(s: &Session, agent: &str) -> Option<CharacterView> {
    let campaign = s.campaign.as_ref()?;
    let seat = s.seat(agent)?;
    let track = s.turn.actions.get(agent);
    let f = Filter::new(s, agent, Layer::Character);
    Some(CharacterView {
        agent_id: agent.to_string(),
        ship: campaign.ship.clone(),
        character: seat.character.clone(),
        day: s.day(),
        recent: f.recaps(recent(s)),
        narration: s.turn.narration.clone().unwrap_or_default(),
        clarifications: f.questions(&s.turn.clarifications),
        memories: f.all(memories(s, agent, RecallLayer::Character)),
        directive: f.text(
            s.turn
                .directives
                .get(agent)
                .map(String::as_str)
                .unwrap_or_default(),
        ),
        others: s
            .seats()
            .iter()
            .filter(|x| x.player.agent_id != agent)
            .map(|x| x.character.character_id.clone())
            .collect(),
        gm_note: track.and_then(|t| t.gm_note.clone()),
        insight: s.insight(agent),
        action: track.and_then(|t| {
            t.final_text
                .clone()
                .or_else(|| t.attempts.last().map(|a| a.action.clone()))
                .map(|a| f.text(&a))
        }),
        roll: s.turn.rolls.get(agent).map(describe_roll),
        outcome: s.turn.outcome.clone(),
        secrets: secrets(s, agent, Layer::Character),
    })
}

/// One line a person (or a model) can read: "lasers, number 4: [2, 6] → 1 success (complication)".
pub fn describe_roll(r: &RollResult) -> String {
    let faces: Vec<String> = r
        .dice
        .iter()
        .map(|d| {
            if d.laser_feelings {
                format!("{}!", d.face)
            } else {
                d.face.to_string()
            }
        })
        .collect();
    let plural = if r.successes == 1 { "" } else { "es" };
    format!(
        "{}, number {}: [{}] → {} success{} ({}){}",
        r.task,
        r.number.get(),
        faces.join(", "),
        r.successes,
        plural,
        r.outcome.describe(),
        if r.laser_feelings() {
            " — LASER FEELINGS"
        } else {
            ""
        }
    )
}

/// The game master's view: everything said and rolled at the table, the party's OOC talk, the
/// whispers it sent and its own notes; never a player's private strategy or directive.
pub fn gm_view(s: &Session) -> Option<GmView> {
    let campaign = s.campaign.as_ref()?;
    let name = |agent: &str| gm_character(s, agent);
    let player = |agent: &str| gm_player(s, agent);
    let t = &s.turn;
    Some(GmView {
        campaign_name: campaign.name.clone(),
        gm_name: campaign.gm_name.clone(),
        ship: campaign.ship.clone(),
        turn: s.turn_number,
        day: s.day(),
        phase: s.phase.map_or("between turns", |p| p.title()).to_string(),
        last_turn: None,
        table: table_seats(s, campaign),
        scenario: campaign.gm.scenario.clone(),
        recent: recent(s),
        narration: t.narration.clone().unwrap_or_default(),
        clarifications: t
            .clarifications
            .iter()
            .map(|qa| QuestionAnswer {
                asked_by: player(&qa.asked_by),
                ..qa.clone()
            })
            .collect(),
        discussion: t
            .ooc
            .iter()
            .map(|m| OocLine {
                speaker: m.agent.as_deref().map_or_else(|| "GM".into(), player),
                on: m.on.as_deref().map(player),
                ..ooc_line(m)
            })
            .collect(),
        plan: s.settled().and_then(|c| {
            Some(PartyPlan {
                plan: c.plan.clone()?,
                proposer: player(c.proposer.as_deref()?),
                outcome: c.outcome.as_str().to_string(),
            })
        }),
        actions: declared_actions(s),
        rolls: t
            .rolls
            .iter()
            .map(|(agent, r)| RollLine {
                character: name(agent),
                summary: describe_roll(r),
                successes: r.successes,
            })
            .collect(),
        insights: t
            .insights
            .iter()
            .filter_map(|(agent, i)| {
                Some(InsightLine {
                    character: name(agent),
                    question: i.question.clone()?,
                    answer: i.answer.clone(),
                })
            })
            .collect(),
        outcome: t.outcome.clone(),
        whispers: s
            .whispers
            .iter()
            .map(|w| {
                let to =
                    w.to.as_deref()
                        .map_or_else(|| "the whole table".into(), player);
                (to, w.text.clone())
            })
            .collect(),
    })
}

// The GM knows the people by their names and the characters by theirs, not by ids.

/// The character an agent plays, by name (the agent id when there is no such seat).
fn gm_character(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map_or_else(|| agent.to_string(), |x| x.character.name.clone())
}

/// The person or AI player at an agent's seat, by name.
fn gm_player(s: &Session, agent: &str) -> String {
    s.seat(agent)
        .map_or_else(|| agent.to_string(), |x| x.player.name.clone())
}

/// Who sits at the table, each with their character and its profile.
fn table_seats(s: &Session, campaign: &troupe_campaign::Campaign) -> Vec<TableSeat> {
    s.seats()
        .iter()
        .map(|x| TableSeat {
            agent_id: x.player.agent_id.clone(),
            player_name: x.player.name.clone(),
            character: x.character.clone(),
            human: x.taken_by == SeatTaker::Human,
            profile: profile_of(campaign, &x.character.name),
        })
        .collect()
}

/// Each character's action this turn: the final one, else the latest attempt.
fn declared_actions(s: &Session) -> Vec<DeclaredAction> {
    let character = |id: &str| {
        s.seats()
            .iter()
            .find(|x| x.character.character_id == id)
            .map_or_else(|| id.to_string(), |x| x.character.name.clone())
    };
    s.turn
        .actions
        .iter()
        .filter_map(|(agent, track)| {
            let decl = track
                .final_action()
                .or_else(|| track.attempts.last().cloned())?;
            Some(DeclaredAction {
                agent_id: agent.clone(),
                character: gm_character(s, agent),
                action: decl.action,
                dialogue: decl.dialogue,
                task_type: decl.task_type,
                prepared: decl.prepared,
                expert: decl.expert,
                helping: decl.helping.as_deref().map(character),
            })
        })
        .collect()
}

/// One message of the OOC talk as it was said (the GM hears it all).
fn ooc_line(m: &crate::OocEntry) -> OocLine {
    OocLine {
        round: m.round,
        speaker: m.agent.clone().unwrap_or_else(|| "GM".into()),
        message: m.message.clone(),
        proposal: m.proposal.clone(),
        stance: m.stance.map(|x| x.as_str().to_string()),
        on: m.on.clone(),
    }
}

/// A character's profile from the campaign's registry (by name, any case), described for the
/// GM: pronouns first. Empty when the campaign has none for them.
fn profile_of(campaign: &troupe_campaign::Campaign, character: &str) -> String {
    campaign
        .profiles
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(character))
        .map(|(_, p)| p.describe())
        .unwrap_or_default()
}
