//! The memory's extraction call: the facts a storage step's free text states, as
//! `{subject, attribute, value, statement}` with the line each came from. The engine makes the
//! call through the gateway like any other and hands the facts to the memory.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use troupe_llm::{CallTag, ChatRequest, Message, ResponseSchema};

use crate::{Error, PromptSet};

/// Who makes extraction calls in the log and in replay files.
pub const EXTRACT_AGENT: &str = "memory";
/// The call's purpose, in the log and in replay files.
pub const EXTRACT_PURPOSE: &str = "extract_facts";
/// At most this many facts per storage step: the reply stays small, even for a small model.
pub const MAX_FACTS: u32 = 12;

/// One line offered to the model: its number in the prompt, who said it, and what.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExtractionLine {
    pub number: usize,
    pub speaker: String,
    pub text: String,
}

/// A name memory already knows, with its other names, so subjects come back normalised.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnownName {
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// One fact as the model gave it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ExtractedFact {
    /// The number of the line it came from.
    pub episode: usize,
    pub subject: String,
    pub attribute: String,
    pub value: String,
    pub statement: String,
}

#[derive(Deserialize)]
struct Reply {
    facts: Vec<ExtractedFact>,
}

fn text(min: u32) -> Value {
    json!({"type": "string", "minLength": min})
}

/// The reply's schema.
pub fn extraction_schema() -> ResponseSchema {
    ResponseSchema {
        name: EXTRACT_PURPOSE.to_string(),
        schema: json!({"type": "object", "properties": {"facts": {
            "type": "array", "maxItems": MAX_FACTS,
            "items": {"type": "object", "properties": {
                "episode": {"type": "integer", "minimum": 1},
                "subject": text(1), "attribute": text(1), "value": text(1), "statement": text(3)},
                "required": ["episode", "subject", "attribute", "value", "statement"]}}},
            "required": ["facts"]}),
    }
}

impl PromptSet {
    /// The extraction call for a storage step's lines.
    pub fn extract_facts(
        &self,
        lines: &[ExtractionLine],
        known: &[KnownName],
    ) -> Result<ChatRequest, Error> {
        let user = self.render(
            "extract_facts.md",
            json!({"episodes": lines, "entities": known, "max_facts": MAX_FACTS}),
        )?;
        let system = self.render("extract_facts_system.md", json!({}))?;
        Ok(ChatRequest {
            tag: CallTag::new(EXTRACT_AGENT, EXTRACT_PURPOSE),
            messages: vec![Message::system(system), Message::user(user)],
            schema: Some(extraction_schema()),
            max_tokens: 500,
            // Extraction wants the likeliest reading, not variety.
            temperature: 0.1,
            seed: None,
            stop: Vec::new(),
            structured: troupe_llm::StructuredOutput::default(),
            cache_prefix: None,
        })
    }
}

/// The facts of a validated reply, or why the reply cannot be used.
pub fn read_extracted(value: &Value) -> Result<Vec<ExtractedFact>, Error> {
    let reply: Reply = serde_json::from_value(value.clone()).map_err(|e| Error::Reply {
        purpose: EXTRACT_PURPOSE.to_string(),
        message: e.to_string(),
    })?;
    Ok(reply.facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extraction call's messages, whole (a change to its templates shows here as a diff).
    #[test]
    fn the_extraction_prompt() {
        let req = PromptSet::embedded()
            .extract_facts(
                &[
                    ExtractionLine {
                        number: 1,
                        speaker: "GM".into(),
                        text: "Galvin is the harbour master.".into(),
                    },
                    ExtractionLine {
                        number: 2,
                        speaker: "Zara-7".into(),
                        text: "I ask Galvin about the relay.".into(),
                    },
                ],
                &[KnownName {
                    name: "Galvin".into(),
                    aliases: vec!["old merchant".into()],
                }],
            )
            .unwrap();
        let shown: Vec<String> = req
            .messages
            .iter()
            .map(|m| format!("=== {} ===\n{}", m.role.as_str(), m.content))
            .collect();
        insta::assert_snapshot!(shown.join("\n"));
    }

    #[test]
    fn the_prompt_numbers_the_lines_and_lists_the_known_names() {
        let set = PromptSet::embedded();
        let req = set
            .extract_facts(
                &[ExtractionLine {
                    number: 1,
                    speaker: "GM".into(),
                    text: "Galvin is the harbour master.".into(),
                }],
                &[KnownName {
                    name: "Galvin".into(),
                    aliases: vec!["old merchant".into()],
                }],
            )
            .unwrap();
        let user = &req.messages[1].content;
        assert!(
            user.contains("[1] GM: Galvin is the harbour master."),
            "{user}"
        );
        assert!(
            user.contains("- Galvin (also called: old merchant)"),
            "{user}"
        );
        assert_eq!(req.tag.purpose, "extract_facts");
        assert!(req.schema.is_some());
    }

    #[test]
    fn a_reply_without_facts_is_unusable() {
        assert!(read_extracted(&json!({"facts": "none"})).is_err());
        let got = read_extracted(&json!({"facts": [{"episode": 1, "subject": "Galvin",
            "attribute": "role", "value": "governor", "statement": "Galvin is the governor."}]}))
        .unwrap();
        assert_eq!(got[0].subject, "Galvin");
    }
}
