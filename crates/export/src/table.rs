//! A table as the export builds it: named, typed columns and rows of JSON values, before any
//! file format. Building the rows needs no Parquet writer, so it is tested (and compiled) in
//! every build; only `write` turns a table into a file.

use serde_json::{Map, Value};

/// A column's type, as readers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text.
    Text,
    /// A signed 64-bit integer (a count above `i64::MAX`, only in a damaged log, is null).
    Int,
    /// A 64-bit float.
    Float,
    Bool,
    /// An instant in UTC, to the microsecond, from an RFC 3339 string.
    Timestamp,
}

impl Kind {
    /// The name the column document uses for this type.
    pub fn doc_name(self) -> &'static str {
        match self {
            Kind::Text => "string",
            Kind::Int => "int64",
            Kind::Float => "double",
            Kind::Bool => "bool",
            Kind::Timestamp => "timestamp (µs, UTC)",
        }
    }
}

/// One column: its name, its type and what it holds (docs/export-schema.md says the same).
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub meaning: &'static str,
}

pub const fn col(name: &'static str, kind: Kind, meaning: &'static str) -> Column {
    Column {
        name,
        kind,
        meaning,
    }
}

/// A table: its file stem (`events` → `events.parquet`), its columns, and one JSON object per
/// row keyed by column name (a missing key or a value of another type is null).
#[derive(Clone, Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

impl Table {
    pub fn new(name: &'static str, columns: Vec<Column>) -> Table {
        Table {
            name,
            columns,
            rows: Vec::new(),
        }
    }

    /// Add a row: a JSON object (anything else adds an empty row).
    pub fn push(&mut self, row: Value) {
        self.rows.push(match row {
            Value::Object(map) => map,
            _ => Map::new(),
        });
    }
}

/// One row: column name to value.
pub type Row = Map<String, Value>;
