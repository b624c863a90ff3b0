//! The schema a grammar is generated from, adapted to generation by a small model.

use serde_json::{Map, Value};

/// The fewest characters a free string is given, however tight the token budget.
const MIN_STRING_CHARS: u32 = 16;

/// The schema text the grammar is generated from, adapted to generation by a small model:
///
/// - an object's properties come in the order of its `required` list (then the others), so the
///   model writes them in the order the prompt asks for them (reasoning before decision), not
///   alphabetically;
/// - every string without a `maxLength` gets one, and arrays may get a lower `maxItems`, so that
///   the longest reply the grammar allows fits in the token budget: a model that rambles must
///   close its strings and its list in time, and the reply is always complete, valid JSON. The
///   caps only narrow the schema; replies still satisfy it.
///
/// The longest reply is counted at one token per character of a string (a 135M model spells
/// "A.T.B.S." a letter at a time) plus the keys and punctuation of every object and item; CI
/// saw a 12-fact extraction run out of its 500 tokens in the middle of the seventh fact when
/// only 40 tokens were set aside for the structure.
pub(super) fn grammar_schema(schema: &Value, max_tokens: u32) -> String {
    let (items, per_string) = fit(schema, max_tokens);
    let mut out = String::new();
    write_schema(
        schema,
        Caps {
            items,
            chars: per_string,
        },
        &mut out,
    );
    out
}

#[derive(Clone, Copy)]
struct Caps {
    /// The most items any array may hold in the grammar (never below its `minItems`).
    items: u64,
    /// The `maxLength` given to a string that has none.
    chars: u32,
}

/// The largest array size, then string length, whose longest reply fits in `max_tokens`:
/// arrays are shortened first until every string can have `MIN_STRING_CHARS`.
fn fit(schema: &Value, max_tokens: u32) -> (u64, u32) {
    let mut items = largest_max_items(schema);
    loop {
        let shape = longest(schema, items);
        let room = max_tokens.saturating_sub(shape.fixed);
        let per_string = room / shape.strings.max(1);
        if per_string >= MIN_STRING_CHARS || items <= 1 {
            return (items, per_string.max(MIN_STRING_CHARS));
        }
        items -= 1;
    }
}

/// The tokens of the longest reply: `fixed` for everything but the free strings' characters,
/// and how many free strings it holds.
#[derive(Default)]
struct Shape {
    fixed: u32,
    strings: u32,
}

impl Shape {
    fn add(&mut self, other: Shape, times: u32) {
        self.fixed = self.fixed.saturating_add(other.fixed.saturating_mul(times));
        self.strings = self
            .strings
            .saturating_add(other.strings.saturating_mul(times));
    }
}

/// Counts the longest instance of `schema` with every array holding at most `items` items.
fn longest(schema: &Value, items: u64) -> Shape {
    let Value::Object(map) = schema else {
        return Shape {
            fixed: 8,
            strings: 0,
        };
    };
    let quotes = 2;
    let mut shape = Shape::default();
    if let Some(Value::Array(options)) = map.get("enum") {
        let widest = options.iter().map(|o| o.to_string().chars().count()).max();
        shape.fixed = to_u32(widest.unwrap_or(1));
        return shape;
    }
    if let Some(c) = map.get("const") {
        shape.fixed = to_u32(c.to_string().chars().count());
        return shape;
    }
    match map.get("type").and_then(Value::as_str) {
        Some("string") => match map.get("maxLength").and_then(Value::as_u64) {
            Some(n) => shape.fixed = quotes + to_u32(n),
            None => {
                shape = Shape {
                    fixed: quotes,
                    strings: 1,
                }
            }
        },
        Some("object") | None if map.contains_key("properties") => {
            shape.fixed = 2; // the braces
            if let Some(Value::Object(props)) = map.get("properties") {
                for (key, sub) in props {
                    // The key's words, its quotes, the colon and the comma.
                    shape.fixed += to_u32(key.chars().count()).div_ceil(3) + 4;
                    shape.add(longest(sub, items), 1);
                }
            }
        }
        Some("array") => {
            shape.fixed = 2; // the brackets
            let n = array_items(map, items);
            if let Some(item) = map.get("items") {
                let mut one = longest(item, items);
                one.fixed += 1; // the comma
                shape.add(one, to_u32(n));
            }
        }
        Some("boolean" | "null") => shape.fixed = 1,
        _ => shape.fixed = 8, // a number, or anything else the grammar allows
    }
    shape
}

/// How many items an array may hold in the grammar: its own `maxItems` (3 if it has none),
/// at most `cap`, never fewer than its `minItems`.
fn array_items(map: &Map<String, Value>, cap: u64) -> u64 {
    let own = map.get("maxItems").and_then(Value::as_u64).unwrap_or(3);
    let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
    own.min(cap).max(min)
}

/// The largest item count any array of the schema may reach (1 if it has no array).
fn largest_max_items(schema: &Value) -> u64 {
    let Value::Object(map) = schema else { return 1 };
    let own = match map.get("type").and_then(Value::as_str) {
        Some("array") => array_items(map, u64::MAX),
        _ => 1,
    };
    let props = match map.get("properties") {
        Some(Value::Object(props)) => props.values().map(largest_max_items).max(),
        _ => None,
    };
    let items = map.get("items").map(largest_max_items);
    own.max(props.unwrap_or(1)).max(items.unwrap_or(1))
}

fn to_u32(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

fn free_string(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("string")
        && !map.contains_key("enum")
        && !map.contains_key("const")
        && !map.contains_key("maxLength")
}

fn write_schema(value: &Value, caps: Caps, out: &mut String) {
    let Value::Object(map) = value else {
        out.push_str(&value.to_string());
        return;
    };
    let is_string = free_string(map);
    let is_array = map.get("type").and_then(Value::as_str) == Some("array");
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
                        write_schema(sub, caps, out);
                    }
                }
                out.push('}');
            }
            ("items" | "additionalProperties", sub) => write_schema(sub, caps, out),
            ("maxItems", _) if is_array => out.push_str(&array_items(map, caps.items).to_string()),
            _ => out.push_str(&v.to_string()),
        }
    }
    if is_string {
        key("maxLength", out);
        out.push_str(&caps.chars.to_string());
    }
    if is_array && !map.contains_key("maxItems") {
        key("maxItems", out);
        out.push_str(&array_items(map, caps.items).to_string());
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
        let back: Value = serde_json::from_str(&text).unwrap();
        let props = &back["properties"];
        // Braces 2; keys "action" 2+4, "dialogue" 3+4, "task_type" 3+4, "short" 2+4;
        // the enum's widest value 10; the capped string 2+5; two free strings' quotes 4.
        let fixed = 2 + 6 + 7 + 7 + 6 + 10 + 7 + 4;
        let cap = (300 - fixed) / 2;
        assert_eq!(props["action"]["maxLength"], cap);
        assert_eq!(props["action"]["minLength"], 8);
        assert_eq!(props["dialogue"]["maxLength"], cap);
        assert!(props["task_type"].get("maxLength").is_none());
        assert_eq!(props["short"]["maxLength"], 5);
        let at = |k: &str| text.find(&format!("\"{k}\":{{")).unwrap();
        assert!(at("task_type") < at("dialogue") && at("dialogue") < at("action"));
        assert!(at("action") < at("short"), "{text}");
    }

    fn facts(max_items: u64) -> Value {
        serde_json::json!({"type": "object", "properties": {"facts": {
            "type": "array", "maxItems": max_items,
            "items": {"type": "object", "properties": {
                "episode": {"type": "integer", "minimum": 1},
                "subject": {"type": "string"}, "value": {"type": "string"}},
                "required": ["episode", "subject", "value"]}}},
            "required": ["facts"]})
    }

    /// What CI saw: twelve facts do not fit in 500 tokens when a small model spells its
    /// strings a character at a time, so the grammar allows fewer, each with room to say
    /// something, and its longest reply fits.
    #[test]
    fn a_list_that_cannot_fit_the_budget_gets_fewer_items() {
        let text = grammar_schema(&facts(12), 500);
        let back: Value = serde_json::from_str(&text).unwrap();
        let list = &back["properties"]["facts"];
        let items = list["maxItems"].as_u64().unwrap();
        let chars = list["items"]["properties"]["value"]["maxLength"]
            .as_u64()
            .unwrap();
        assert!((1..12).contains(&items), "{text}");
        assert!(chars >= u64::from(MIN_STRING_CHARS), "{text}");
        // One more item would not have left every string its minimum.
        let shape = longest(&facts(12), items + 1);
        assert!((500 - shape.fixed) / shape.strings < MIN_STRING_CHARS);
        let shape = longest(&back, u64::MAX);
        assert!(shape.fixed <= 500 && shape.strings == 0, "{text}");
    }

    #[test]
    fn a_list_that_fits_keeps_its_items_and_a_list_without_a_limit_gets_one() {
        let text = grammar_schema(&facts(2), 500);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["properties"]["facts"]["maxItems"], 2, "{text}");
        let open = serde_json::json!({"type": "array", "items": {"type": "string"}});
        let back: Value = serde_json::from_str(&grammar_schema(&open, 100)).unwrap();
        assert_eq!(back["maxItems"], 3);
        assert_eq!(back["items"]["maxLength"], (100 - 2 - 3 * 3) / 3);
    }
}
