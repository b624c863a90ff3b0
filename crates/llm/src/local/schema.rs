//! The schema a grammar is generated from, adapted to generation by a small model.

/// The schema text the grammar is generated from, adapted to generation by a small model:
///
/// - an object's properties come in the order of its `required` list (then the others), so the
///   model writes them in the order the prompt asks for them (reasoning before decision), not
///   alphabetically;
/// - every string without a `maxLength` gets one, so that the whole object fits in the token
///   budget: a model that rambles inside a string must close it in time, and the reply is
///   always complete, valid JSON. The caps only narrow the schema; replies still satisfy it.
pub(super) fn grammar_schema(schema: &serde_json::Value, max_tokens: u32) -> String {
    let strings = count_strings(schema).max(1);
    // About 40 tokens of keys and punctuation; at least 2 characters per token of what is left.
    let per_string = (max_tokens.saturating_sub(40) * 2 / strings).max(16);
    let mut out = String::new();
    write_schema(schema, per_string, &mut out);
    out
}

/// How many free strings (no enum, const or maxLength) an instance of the schema can hold;
/// arrays count `maxItems` of their items, or 3.
fn count_strings(schema: &serde_json::Value) -> u32 {
    use serde_json::Value;
    let Value::Object(map) = schema else { return 0 };
    let own = u32::from(free_string(map));
    let props: u32 = match map.get("properties") {
        Some(Value::Object(p)) => p.values().map(count_strings).sum(),
        _ => 0,
    };
    let items = match map.get("items") {
        Some(items) => {
            let n = map.get("maxItems").and_then(Value::as_u64).unwrap_or(3);
            count_strings(items).saturating_mul(u32::try_from(n).unwrap_or(u32::MAX))
        }
        None => 0,
    };
    own.saturating_add(props).saturating_add(items)
}

fn free_string(map: &serde_json::Map<String, serde_json::Value>) -> bool {
    map.get("type").and_then(serde_json::Value::as_str) == Some("string")
        && !map.contains_key("enum")
        && !map.contains_key("const")
        && !map.contains_key("maxLength")
}

fn write_schema(value: &serde_json::Value, max_chars: u32, out: &mut String) {
    use serde_json::Value;
    let Value::Object(map) = value else {
        out.push_str(&value.to_string());
        return;
    };
    let is_string = free_string(map);
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push('{');
    let mut first = true;
    let mut key = |k: &str, out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&Value::String(k.to_string()).to_string());
        out.push(':');
    };
    for (k, v) in map {
        key(k, out);
        match (k.as_str(), v) {
            ("properties", Value::Object(props)) => {
                let mut order: Vec<&String> = props.keys().collect();
                order.sort_by_key(|p| required.iter().position(|r| r == p).unwrap_or(usize::MAX));
                out.push('{');
                for (i, p) in order.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String((*p).clone()).to_string());
                    out.push(':');
                    if let Some(sub) = props.get(*p) {
                        write_schema(sub, max_chars, out);
                    }
                }
                out.push('}');
            }
            ("items" | "additionalProperties", sub) => write_schema(sub, max_chars, out),
            _ => out.push_str(&v.to_string()),
        }
    }
    if is_string {
        key("maxLength", out);
        out.push_str(&max_chars.to_string());
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_schema_orders_properties_as_required_and_caps_strings() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "action": {"type": "string", "minLength": 8},
            "dialogue": {"type": "string"},
            "task_type": {"type": "string", "enum": ["lasers", "feelings"]},
            "short": {"type": "string", "maxLength": 5}},
            "required": ["task_type", "dialogue", "action"]});
        let text = grammar_schema(&schema, 300);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        let props = &back["properties"];
        let cap = (300 - 40) * 2 / 2;
        assert_eq!(props["action"]["maxLength"], cap);
        assert_eq!(props["action"]["minLength"], 8);
        assert_eq!(props["dialogue"]["maxLength"], cap);
        assert!(props["task_type"].get("maxLength").is_none());
        assert_eq!(props["short"]["maxLength"], 5);
        let at = |k: &str| text.find(&format!("\"{k}\":{{")).unwrap();
        assert!(at("task_type") < at("dialogue") && at("dialogue") < at("action"));
        assert!(at("action") < at("short"), "{text}");
    }
}
