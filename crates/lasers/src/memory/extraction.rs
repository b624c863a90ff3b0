//! The storage step's model call: the free text offered to the model, the call through the
//! gateway, and its log events.

use std::sync::Mutex;

use troupe_agents::{
    EXTRACT_AGENT, EXTRACT_PURPOSE, ExtractedFact, ExtractionLine, KnownName, Layer, PromptSet,
    read_extracted,
};
use troupe_engine::attempts;
use troupe_llm::{AttemptRecord, Gateway};
use troupe_memory::claims::Claim;
use troupe_memory::extract::Moment;
use troupe_memory::{Episode, Scope, Source};

use super::campaign::CampaignMemory;
use super::types::Extraction;
use crate::events::Event;
use crate::session::Session;

/// The storage step's free text offered to the model: numbered lines, and for each line the
/// episode it is and the memory its facts go to.
pub struct ExtractionOffer {
    pub lines: Vec<ExtractionLine>,
    pub targets: Vec<(String, Scope)>,
}

impl ExtractionOffer {
    /// The model's facts as claims on their episodes; a line number the offer does not have
    /// names no episode, and the memory drops it.
    pub fn claims(&self, facts: Vec<ExtractedFact>) -> Vec<Claim> {
        facts
            .into_iter()
            .map(|f| {
                let (episode_id, scope) = f
                    .episode
                    .checked_sub(1)
                    .and_then(|i| self.targets.get(i))
                    .cloned()
                    .unwrap_or_else(|| (format!("line {}", f.episode), Scope::Party));
                Claim {
                    episode_id,
                    subject: f.subject,
                    attribute: f.attribute,
                    value: f.value,
                    statement: f.statement,
                    scope,
                }
            })
            .collect()
    }
}

/// The free text of these turns worth extracting facts from, and where the facts go:
///
/// - the GM's narration, answers and outcomes: the party's memory, canon;
/// - a character's action and dialogue: that character's own memory (everyone heard it, but a
///   character's claim is its belief, not the world's);
/// - a character's reaction: that character's own memory, as its episode is.
///
/// Dice are structured (stored as they are); a player's strategy and the GM's whispers are never
/// offered: private knowledge stays out of the prompt, so no fact drawn from it can reach a
/// memory that should not hold it.
pub fn extraction_offer(
    s: &Session,
    items: &[(Episode, Source, Moment)],
) -> Option<ExtractionOffer> {
    let mut offer = ExtractionOffer {
        lines: Vec::new(),
        targets: Vec::new(),
    };
    for (ep, _, moment) in items {
        let (speaker, scope) = match moment {
            // A whisper is the GM's too, but only its listeners' memory holds it: it stays
            // out of this shared prompt (its raw episode is already in the right memories).
            Moment::Narration | Moment::Answer | Moment::Outcome if ep.scope == Scope::Party => {
                ("GM".to_string(), Scope::Party)
            }
            Moment::Narration | Moment::Answer | Moment::Outcome => continue,
            Moment::Action | Moment::Reaction => {
                let Some(agent) = s.agent_of_character(&ep.speaker) else {
                    continue;
                };
                let name = s
                    .seat(&agent)
                    .map_or_else(|| ep.speaker.clone(), |x| x.character.name.clone());
                (name, Scope::Character(agent))
            }
            Moment::Dice | Moment::Strategy | Moment::Note => continue,
        };
        offer.lines.push(ExtractionLine {
            number: offer.lines.len() + 1,
            speaker,
            text: ep.text.clone(),
        });
        offer.targets.push((ep.id.clone(), scope));
    }
    (!offer.lines.is_empty()).then_some(offer)
}

/// What an extraction came to, with what the log needs to replay it.
pub struct Drawn {
    pub extraction: Extraction,
    /// The call's attempts.
    pub calls: Vec<AttemptRecord>,
    /// The names memory gave for the prompt; None when it was not asked.
    pub known: Option<Vec<KnownName>>,
}

/// Draw facts from the free text of these turns with the model, through the gateway like every
/// call. Extraction is off when the campaign says so; a failed call or an unusable reply is a
/// fallback, never an error.
pub async fn extract(
    gateway: &Gateway,
    prompts: &PromptSet,
    memory: &Mutex<Box<dyn CampaignMemory>>,
    s: &Session,
    items: &[(Episode, Source, Moment)],
) -> Drawn {
    let without_prompt = |extraction| Drawn {
        extraction,
        calls: Vec::new(),
        known: None,
    };
    if s.campaign.as_ref().is_some_and(|c| !c.memory_extraction) {
        return without_prompt(Extraction::Off);
    }
    let Some(offer) = extraction_offer(s, items) else {
        return without_prompt(Extraction::Nothing);
    };
    let known = match memory.lock() {
        Ok(mut m) => m.known_names(s),
        Err(_) => Vec::new(),
    };
    let mut request = match prompts.extract_facts(&offer.lines, &known) {
        Ok(r) => r,
        // The names were asked for: recorded, a replay's memory answers this step and not the
        // next one.
        Err(e) => {
            return Drawn {
                extraction: Extraction::Failed(e.to_string()),
                calls: Vec::new(),
                known: Some(known),
            };
        }
    };
    request.seed = Some(s.call_seeds(EXTRACT_AGENT).nth(EXTRACT_AGENT, 0));
    // Made between turns: nobody watches it.
    let whose = attempts::For {
        seat: EXTRACT_AGENT,
        doing: "remembering the turn",
    };
    let made = attempts::make(gateway, &request, whose, &mut attempts::Unwatched).await;
    let extraction = match made.reply {
        Err(e) => Extraction::Failed(e.to_string()),
        Ok(reply) => match reply.json.as_ref().map(read_extracted) {
            Some(Ok(facts)) => Extraction::Claims(offer.claims(facts)),
            Some(Err(e)) => Extraction::Failed(e.to_string()),
            None => Extraction::Failed("the reply was not JSON".into()),
        },
    };
    Drawn {
        extraction,
        calls: made.attempts.into_iter().map(|a| a.record).collect(),
        known: Some(known),
    }
}

/// The log event for one attempt of an extraction call.
pub fn extraction_call(record: AttemptRecord) -> Event {
    Event::ModelCall {
        agent: EXTRACT_AGENT.to_string(),
        layer: Layer::Memory,
        purpose: EXTRACT_PURPOSE.to_string(),
        record,
    }
}
