//! Where FalkorDB's Cypher and Neo4j's differ, in one place. The statements themselves
//! ([`crate::schema`]) are written once, in the Cypher both accept; what differs is:
//!
//! 1. parameters: Neo4j takes them as JSON beside the statement; FalkorDB as a `CYPHER k=v …`
//!    prefix of Cypher literals (so strings are escaped here, and floats always keep a decimal
//!    point: `1` would be an integer);
//! 2. index creation: Neo4j's `CREATE INDEX name IF NOT EXISTS FOR … ON …`; FalkorDB has no
//!    `IF NOT EXISTS` (it answers "already indexed") and no index names;
//! 3. answers: FalkorDB's compact RESP rows of `[type, value]` pairs (doubles as text); Neo4j's
//!    JSON `{"data": {"fields": […], "values": [[…]]}}` or `{"errors": […]}`.

use serde_json::{Map, Value};

use crate::Statement;
use crate::resp::Reply;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    FalkorDb,
    Neo4j,
}

/// Every node label troupe writes, with the properties that identify a node of it.
pub const KEYS: &[(&str, &str)] = &[
    ("Episode", "row"),
    ("Entity", "id"),
    ("Alias", "row"),
    ("Fact", "id"),
    ("Conflict", "id"),
    ("Recall", "row"),
    ("Scope", "key"),
];

impl Dialect {
    /// The statements that index every label on (campaign, key), and episodes on their id
    /// too (facts find their episodes by it).
    pub fn index_statements(self) -> Vec<String> {
        let mut pairs: Vec<(&str, &str)> = KEYS.to_vec();
        pairs.push(("Episode", "id"));
        pairs
            .into_iter()
            .map(|(label, key)| match self {
                Dialect::FalkorDb => {
                    format!("CREATE INDEX FOR (n:{label}) ON (n.campaign, n.{key})")
                }
                Dialect::Neo4j => format!(
                    "CREATE INDEX troupe_{}_{key} IF NOT EXISTS FOR (n:{label}) ON (n.campaign, n.{key})",
                    label.to_lowercase()
                ),
            })
            .collect()
    }

    /// Whether an index statement failed only because the index is there already.
    pub fn already_indexed(self, message: &str) -> bool {
        match self {
            Dialect::FalkorDb => message.contains("already indexed"),
            Dialect::Neo4j => message.contains("EquivalentSchemaRuleAlreadyExists"),
        }
    }
}

/// FalkorDB's query text: the parameters as a `CYPHER` prefix, then the statement.
pub fn falkordb_query(st: &Statement) -> String {
    if st.params.is_empty() {
        return st.cypher.clone();
    }
    let mut out = String::from("CYPHER");
    for (k, v) in &st.params {
        out.push(' ');
        out.push_str(k);
        out.push('=');
        literal(v, &mut out);
    }
    out.push(' ');
    out.push_str(&st.cypher);
    out
}

/// A JSON value as a Cypher literal.
fn literal(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            // `{:?}` keeps the decimal point and the shortest digits that read back the same.
            (None, Some(f)) if f.is_finite() => out.push_str(&format!("{f:?}")),
            _ => out.push_str("null"),
        },
        Value::String(s) => {
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\'' => out.push_str("\\'"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                literal(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // Keys are troupe's own property names; backticks make any of them safe.
                out.push('`');
                out.push_str(&k.replace('`', "``"));
                out.push_str("`:");
                literal(item, out);
            }
            out.push('}');
        }
    }
}

/// Neo4j's query API request body.
pub fn neo4j_body(st: &Statement) -> Value {
    serde_json::json!({ "statement": st.cypher, "parameters": Value::Object(st.params.clone()) })
}

/// The rows of a FalkorDB `GRAPH.QUERY … --compact` reply: `[header, rows, stats]` (a write
/// without RETURN answers `[stats]` alone).
pub fn falkordb_rows(reply: Reply) -> Result<Vec<Vec<Value>>, String> {
    let parts = match reply {
        Reply::Error(e) => return Err(e),
        Reply::Array(Some(parts)) => parts,
        other => return Err(format!("expected a result set, got {other:?}")),
    };
    if parts.len() < 3 {
        return Ok(Vec::new());
    }
    let Some(Reply::Array(Some(rows))) = parts.into_iter().nth(1) else {
        return Err("result set without rows".into());
    };
    rows.into_iter()
        .map(|row| match row {
            Reply::Array(Some(cells)) => cells.into_iter().map(compact_value).collect(),
            other => Err(format!("expected a row, got {other:?}")),
        })
        .collect()
}

/// One compact value: `[type, value]` (1 null, 2 string, 3 integer, 4 boolean, 5 double,
/// 6 array, 10 map).
fn compact_value(cell: Reply) -> Result<Value, String> {
    let Reply::Array(Some(pair)) = cell else {
        return Err(format!("expected a [type, value] pair, got {cell:?}"));
    };
    let mut it = pair.into_iter();
    let (Some(Reply::Int(kind)), Some(v)) = (it.next(), it.next()) else {
        return Err("a value without its type".into());
    };
    Ok(match (kind, v) {
        (1, _) => Value::Null,
        (2, Reply::Bulk(Some(s))) => Value::String(s),
        (3, Reply::Int(i)) => Value::from(i),
        (4, Reply::Bulk(Some(s)) | Reply::Status(s)) => Value::Bool(s == "true"),
        (5, Reply::Bulk(Some(s)) | Reply::Status(s)) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("bad double {s:?}"))?,
        (6, Reply::Array(Some(items))) => Value::Array(
            items
                .into_iter()
                .map(compact_value)
                .collect::<Result<_, _>>()?,
        ),
        (10, Reply::Array(Some(items))) => {
            let mut map = Map::new();
            let mut it = items.into_iter();
            while let (Some(Reply::Bulk(Some(k))), Some(v)) = (it.next(), it.next()) {
                map.insert(k, compact_value(v)?);
            }
            Value::Object(map)
        }
        (kind, v) => return Err(format!("value of type {kind} not expected here: {v:?}")),
    })
}

/// The rows of a Neo4j query API answer, or its first error as `code: message`.
pub fn neo4j_rows(answer: &Value) -> Result<Vec<Vec<Value>>, String> {
    if let Some(e) = answer
        .get("errors")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        let code = e.get("code").and_then(Value::as_str).unwrap_or("error");
        let message = e.get("message").and_then(Value::as_str).unwrap_or("");
        return Err(format!("{code}: {message}"));
    }
    let Some(values) = answer.pointer("/data/values").and_then(Value::as_array) else {
        return Err("no data.values in the answer".into());
    };
    values
        .iter()
        .map(|row| {
            row.as_array()
                .cloned()
                .ok_or_else(|| "a row that is not a list".to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn statement(params: Value) -> Statement {
        Statement {
            cypher: "RETURN $x".into(),
            params: params.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn falkordb_parameters_are_escaped_literals() {
        let q = falkordb_query(&statement(json!({
            "x": [{"t": "it's a \\ back\nslash é", "f": 1.0, "n": null, "i": 3}]
        })));
        assert_eq!(
            q,
            "CYPHER x=[{`f`:1.0,`i`:3,`n`:null,`t`:'it\\'s a \\\\ back\\nslash é'}] RETURN $x"
        );
    }

    #[test]
    fn neo4j_parameters_travel_as_json() {
        let body = neo4j_body(&statement(json!({"x": [1, "a'b"]})));
        assert_eq!(
            body,
            json!({"statement": "RETURN $x", "parameters": {"x": [1, "a'b"]}})
        );
    }

    #[test]
    fn compact_falkordb_values_decode_to_json() {
        let pair = |k: i64, v: Reply| Reply::Array(Some(vec![Reply::Int(k), v]));
        let s = |v: &str| Reply::Bulk(Some(v.to_string()));
        let row = Reply::Array(Some(vec![
            pair(1, Reply::Bulk(None)),
            pair(2, s("é")),
            pair(3, Reply::Int(-4)),
            pair(5, s("0.25")),
            pair(6, Reply::Array(Some(vec![pair(2, s("e1"))]))),
        ]));
        let reply = Reply::Array(Some(vec![
            Reply::Array(Some(vec![])),
            Reply::Array(Some(vec![row])),
            Reply::Array(Some(vec![])),
        ]));
        assert_eq!(
            falkordb_rows(reply),
            Ok(vec![vec![
                Value::Null,
                json!("é"),
                json!(-4),
                json!(0.25),
                json!(["e1"])
            ]])
        );
        assert_eq!(
            falkordb_rows(Reply::Error("errMsg: bad".into())),
            Err("errMsg: bad".into())
        );
    }

    #[test]
    fn neo4j_errors_and_rows_are_told_apart() {
        let ok = json!({"data": {"fields": ["a"], "values": [[1], [2]]}});
        assert_eq!(neo4j_rows(&ok), Ok(vec![vec![json!(1)], vec![json!(2)]]));
        let err = json!({"errors": [{"code": "Neo.ClientError.Statement.SyntaxError", "message": "bad"}]});
        assert_eq!(
            neo4j_rows(&err),
            Err("Neo.ClientError.Statement.SyntaxError: bad".into())
        );
    }
}
