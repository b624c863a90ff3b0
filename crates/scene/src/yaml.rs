//! YAML read into a tree that remembers where every value was written, so the checker can report
//! each mistake with its line and column (and all of them at once, not the first serde meets).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// Where a value was written: 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loc {
    pub line: u64,
    pub column: u64,
}

/// A YAML value and its place in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    pub at: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Keys in file order.
    Map(Vec<(String, Node)>),
}

impl Value {
    /// What the value is, for messages ("a list", "the number 3").
    pub fn describe(&self) -> String {
        match self {
            Value::Null => "nothing".into(),
            Value::Bool(b) => format!("{b}"),
            Value::Int(i) => format!("the number {i}"),
            Value::Float(f) => format!("the number {f}"),
            Value::Str(s) => format!("'{s}'"),
            Value::Seq(_) => "a list".into(),
            Value::Map(_) => "a mapping".into(),
        }
    }
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Parse YAML text into a located tree; a syntax error comes back with its location.
pub fn parse(text: &str) -> Result<Node, (Loc, String)> {
    serde_saphyr::from_str::<Node>(text).map_err(|e| {
        let at = e
            .location()
            .map(|l| Loc {
                line: l.line(),
                column: l.column(),
            })
            .unwrap_or_default();
        (at, e.to_string())
    })
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<Value>::deserialize(d)?;
        Ok(Node {
            at: Loc {
                line: spanned.referenced.line(),
                column: spanned.referenced.column(),
            },
            value: spanned.value,
        })
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(node) = seq.next_element::<Node>()? {
            items.push(node);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, node)) = map.next_entry::<String, Node>()? {
            entries.push((key, node));
        }
        Ok(Value::Map(entries))
    }
}

/// `path.key` (or `key` at the top): where a value sits, as checkers name it.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A checker of a located tree: it reports each mistake at its place and keeps going, so a file
/// gets all its problems at once. The scene checker and the encounter spec checker share the
/// readers here; each adds its own.
pub trait Report {
    /// Note one mistake.
    fn bad(&mut self, at: Loc, path: &str, message: impl Into<String>);

    /// A list's items; nothing (reported, unless absent or null) when it is not a list.
    fn list<'a>(&mut self, node: Option<&'a Node>, path: &str) -> &'a [Node] {
        match node.map(|n| (&n.value, n.at)) {
            Some((Value::Seq(items), _)) => items,
            None | Some((Value::Null, _)) => &[],
            Some((other, at)) => {
                self.bad(
                    at,
                    path,
                    format!("must be a list, not {}", other.describe()),
                );
                &[]
            }
        }
    }

    /// A true/false value, or `default` when absent (a wrong value is reported).
    fn flag(&mut self, node: Option<&Node>, path: &str, default: bool) -> bool {
        match node.map(|n| (&n.value, n.at)) {
            None | Some((Value::Null, _)) => default,
            Some((Value::Bool(b), _)) => *b,
            Some((other, at)) => {
                let message = format!("must be true or false, not {}", other.describe());
                self.bad(at, path, message);
                default
            }
        }
    }
}
