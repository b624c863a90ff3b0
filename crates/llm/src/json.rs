//! Finding and checking the JSON object in a model's reply.

use serde_json::Value;

/// At most this many schema problems are reported back to the model and the caller.
const MAX_PROBLEMS: usize = 20;

/// Finds the JSON in a reply, tolerating what small models wrap around it: ```` ```json ````
/// fences and prose before or after one object.
///
/// The whole text is tried first (any JSON value), then each fenced block, then the first `{`
/// from which a complete object parses.
pub fn extract_json(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(text.trim()) {
        return Some(value);
    }
    for block in fenced_blocks(text) {
        if let Ok(value) = serde_json::from_str::<Value>(block.trim()) {
            return Some(value);
        }
    }
    text.match_indices('{').find_map(|(start, _)| {
        let from = text.get(start..)?;
        let mut values = serde_json::Deserializer::from_str(from).into_iter::<Value>();
        match values.next() {
            Some(Ok(value @ Value::Object(_))) => Some(value),
            _ => None,
        }
    })
}

/// The bodies of ```` ``` ```` fenced blocks, without the info string (`json`, …).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some((_, after)) = rest.split_once("```") {
        // The body starts after the info string's line; a fence with no newline has none.
        let body = after.split_once('\n').map_or("", |(_, body)| body);
        match body.split_once("```") {
            Some((block, tail)) => {
                blocks.push(block);
                rest = tail;
            }
            None => {
                blocks.push(body);
                break;
            }
        }
    }
    blocks
}

/// Extracts the reply's JSON and checks it against the schema; on failure, lists the problems
/// in words a model (and a person reading the log) can act on.
pub(crate) fn check(validator: &jsonschema::Validator, reply: &str) -> Result<Value, Vec<String>> {
    let Some(value) = extract_json(reply) else {
        return Err(vec!["the reply contains no JSON object".to_string()]);
    };
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .take(MAX_PROBLEMS)
        .map(|err| {
            let path = err.instance_path().to_string();
            if path.is_empty() {
                err.to_string()
            } else {
                format!("at {path}: {err}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_fenced_and_prose_wrapped_objects_are_found() {
        let want = json!({"action": "I fire the lasers", "n": 2});
        assert_eq!(
            extract_json(r#"{"action": "I fire the lasers", "n": 2}"#),
            Some(want.clone())
        );
        let fenced =
            "Here you go:\n```json\n{\"action\": \"I fire the lasers\", \"n\": 2}\n```\nGood luck!";
        assert_eq!(extract_json(fenced), Some(want.clone()));
        let prose = "Sure! I think {this} is right: {\"action\": \"I fire the lasers\", \"n\": 2} Hope it helps.";
        assert_eq!(extract_json(prose), Some(want));
    }

    #[test]
    fn text_without_json_yields_nothing() {
        assert_eq!(extract_json("I fire the lasers!"), None);
        assert_eq!(extract_json("{\"action\": \"unterminated"), None);
    }

    #[test]
    fn schema_problems_name_the_field() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["action"]});
        let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string());
        let Ok(validator) = validator else {
            panic!("{validator:?}")
        };
        let problems = check(&validator, r#"{"n": "two"}"#)
            .err()
            .unwrap_or_default();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems.iter().any(|p| p.contains("action")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.starts_with("at /n")),
            "{problems:?}"
        );
        assert_eq!(
            check(&validator, "no json").err(),
            Some(vec!["the reply contains no JSON object".into()])
        );
    }
}
