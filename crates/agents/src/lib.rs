//! The two layers of an AI at the table.
//!
//! The *player* thinks out of character: it asks the GM questions, picks a strategy and gives its
//! character a directive. The *character* acts in character: it interprets the directive, states
//! what it attempts (never what happens), asks its LASER FEELINGS question and reacts to outcomes.
//!
//! Every function here takes a *view* (what that layer may see, built by the engine from the
//! session log) and a [`troupe_llm::Gateway`]; none can reach the raw session state.

pub mod consensus;
mod decisions;
mod extract;
mod gm;
mod layers;
mod prompts;
mod views;

pub use consensus::{Outcome, Proposal, Stance};
pub use decisions::{
    ActionDecl, InsightDecision, Intent, OocReply, PartyDirective, Schemas, VoteReply,
};
pub use extract::{
    EXTRACT_AGENT, EXTRACT_PURPOSE, ExtractedFact, ExtractionLine, KnownName, MAX_FACTS,
    extraction_schema, read_extracted,
};
pub use gm::{
    DeclaredAction, GM_AGENT, GmCall, GmOutcomeReply, GmPurpose, GmRulingReply, GmView,
    InsightLine, RollLine, TableSeat,
};
pub use layers::{AgentCall, Layer, Purpose, temperament};
pub use prompts::{PromptSet, RenderedPrompt, TEMPLATES};
pub use views::{
    CharacterView, Insight, OocLine, PartyMember, PartyPlan, PlayerView, QuestionAnswer, TurnRecap,
};

/// Everything that can go wrong while an agent decides.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("model call failed")]
    Gateway(#[from] troupe_llm::GatewayError),
    #[error(transparent)]
    Prompt(#[from] troupe_prompts::Error),
    #[error("the model's reply does not fit the {purpose} format: {message}")]
    Reply { purpose: String, message: String },
}
