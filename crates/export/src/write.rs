//! The tables to Parquet files, with the parquet crate's low-level column writer (no arrow):
//! every column optional (null where a row has no value), snappy pages, the export's schema
//! version in the file's key-value metadata.
//!
//! Written as the rows come: each file is open from the start, rows are added a session or a
//! game run at a time, and a row group is written whenever enough rows are waiting, so an
//! export holds at most one session's rows plus one row group per table, never the batch.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::parser::parse_message_type;

use serde_json::Value;

use crate::table::{Column, Kind, Row};
use crate::{Error, SCHEMA_VERSION, SCHEMA_VERSION_KEY};

/// Rows per row group at most: readers load a group at a time, so a batch of a million events
/// is not one block.
const ROW_GROUP: usize = 65_536;

/// The memory a row group's waiting rows may take, roughly, in bytes: a table of long rows (the
/// events' JSON, prompts included) or of many short ones (the model calls: two dozen small
/// values a row, each a map entry) writes its group before its rows grow large in memory.
const GROUP_BYTES: usize = 16 << 20;

/// What a row's map entry costs beside its text: the key's string and the value in a B-tree
/// node, about 90 bytes (measured: rows counted by text alone let 56,702 model calls of ~200
/// bytes of text each wait whole, 140 MB, in a 1,000-session batch).
const ENTRY_BYTES: usize = 96;

/// One table's file, open: rows wait in memory until a row group's worth is there.
pub struct TableWriter {
    path: PathBuf,
    columns: Vec<Column>,
    writer: SerializedFileWriter<File>,
    waiting: Vec<Row>,
    waiting_bytes: usize,
    rows: usize,
}

impl TableWriter {
    /// Create (or truncate) `path` for a table with these columns.
    pub fn create(name: &str, columns: &[Column], path: &Path) -> Result<TableWriter, Error> {
        let fail = failed(path);
        let schema = parse_message_type(&message_type(name, columns)).map_err(&fail)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("troupe {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(vec![KeyValue::new(
                SCHEMA_VERSION_KEY.to_string(),
                SCHEMA_VERSION.to_string(),
            )]))
            .build();
        let file = File::create(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        Ok(TableWriter {
            path: path.to_path_buf(),
            columns: columns.to_vec(),
            writer: SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props))
                .map_err(&fail)?,
            waiting: Vec::new(),
            waiting_bytes: 0,
            rows: 0,
        })
    }

    /// Add rows (of this table's columns), writing a row group when enough are waiting.
    pub fn add(&mut self, rows: Vec<Row>) -> Result<(), Error> {
        for row in rows {
            self.waiting_bytes += row_bytes(&row);
            self.waiting.push(row);
            if self.waiting.len() >= ROW_GROUP || self.waiting_bytes >= GROUP_BYTES {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Write the waiting rows as a row group.
    fn flush(&mut self) -> Result<(), Error> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let fail = failed(&self.path);
        let mut group = self.writer.next_row_group().map_err(&fail)?;
        for column in &self.columns {
            let Some(mut out) = group.next_column().map_err(&fail)? else {
                break;
            };
            write_column(&mut out, &self.waiting, column).map_err(&fail)?;
            out.close().map_err(&fail)?;
        }
        group.close().map_err(&fail)?;
        self.rows += self.waiting.len();
        self.waiting.clear();
        self.waiting_bytes = 0;
        Ok(())
    }

    /// Write what is waiting and the file's footer; the rows written. A table without rows is
    /// still written: its schema, in a file readers open as empty.
    pub fn close(mut self) -> Result<usize, Error> {
        self.flush()?;
        self.writer.close().map_err(failed(&self.path))?;
        Ok(self.rows)
    }
}

fn failed(path: &Path) -> impl Fn(parquet::errors::ParquetError) -> Error + '_ {
    move |e| Error::Parquet {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Roughly the memory a row takes: its text and its entries.
fn row_bytes(row: &Row) -> usize {
    row.iter()
        .map(|(k, v)| ENTRY_BYTES + k.len() + v.as_str().map_or(0, str::len))
        .sum()
}

/// Write `table` to `path` (created or truncated) at once.
#[cfg(test)]
pub fn write(table: &crate::table::Table, path: &Path) -> Result<(), Error> {
    let mut w = TableWriter::create(table.name, &table.columns, path)?;
    w.add(table.rows.clone())?;
    w.close().map(|_| ())
}

/// The Parquet schema, in its text form.
fn message_type(name: &str, columns: &[Column]) -> String {
    let fields: Vec<String> = columns
        .iter()
        .map(|c| {
            let ty = match c.kind {
                Kind::Text => "binary {} (STRING)",
                Kind::Int => "int64 {}",
                Kind::Float => "double {}",
                Kind::Bool => "boolean {}",
                Kind::Timestamp => "int64 {} (TIMESTAMP(MICROS,true))",
            };
            format!("  optional {};", ty.replace("{}", c.name))
        })
        .collect();
    format!("message {name} {{\n{}\n}}", fields.join("\n"))
}

fn write_column(
    out: &mut SerializedColumnWriter<'_>,
    rows: &[Row],
    column: &Column,
) -> parquet::errors::Result<()> {
    let name = column.name;
    match column.kind {
        Kind::Text => {
            let values = texts(rows, name).into_iter();
            put::<ByteArrayType>(out, values.map(|t| t.map(ByteArray::from)).collect())
        }
        Kind::Int => put::<Int64Type>(out, ints(rows, name)),
        Kind::Timestamp => put::<Int64Type>(out, timestamps(rows, name)),
        Kind::Float => put::<DoubleType>(out, floats(rows, name)),
        Kind::Bool => put::<BoolType>(out, bools(rows, name)),
    }
}

/// An optional column's values: the present ones, and a definition level per row (1 present,
/// 0 null).
fn put<T: DataType>(
    out: &mut SerializedColumnWriter<'_>,
    values: Vec<Option<T::T>>,
) -> parquet::errors::Result<()> {
    let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
    let present: Vec<T::T> = values.into_iter().flatten().collect();
    out.typed::<T>()
        .write_batch(&present, Some(&levels), None)
        .map(|_| ())
}

/// The values of one column over these rows, typed; null where a row has none of this type.
fn ints(rows: &[Row], column: &str) -> Vec<Option<i64>> {
    rows.iter()
        .map(|r| r.get(column).and_then(Value::as_i64))
        .collect()
}

fn floats(rows: &[Row], column: &str) -> Vec<Option<f64>> {
    rows.iter()
        .map(|r| r.get(column).and_then(Value::as_f64))
        .collect()
}

fn bools(rows: &[Row], column: &str) -> Vec<Option<bool>> {
    rows.iter()
        .map(|r| r.get(column).and_then(Value::as_bool))
        .collect()
}

fn texts<'a>(rows: &'a [Row], column: &str) -> Vec<Option<&'a str>> {
    rows.iter()
        .map(|r| r.get(column).and_then(Value::as_str))
        .collect()
}

/// Microseconds since the Unix epoch; null for a time that does not parse.
fn timestamps(rows: &[Row], column: &str) -> Vec<Option<i64>> {
    texts(rows, column)
        .into_iter()
        .map(|t| {
            t.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.timestamp_micros())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;
    use crate::table::{Table, col};
    use serde_json::json;

    /// Past one row group, with nulls: the rows and groups are all there, and the version.
    /// (The real reading back is pyarrow's, in troupe-cli's export test.)
    #[test]
    fn a_long_table_is_split_into_row_groups() {
        let dir = tempfile::tempdir().unwrap();
        let columns = vec![col("n", Kind::Int, ""), col("s", Kind::Text, "")];
        let mut table = Table::new("t", columns);
        for n in 0..(ROW_GROUP + 10) {
            table.push(if n % 2 == 0 {
                json!({"n": n})
            } else {
                json!({"s": "x"})
            });
        }
        let path = dir.path().join("t.parquet");
        write(&table, &path).unwrap();
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.file_metadata().num_rows(), (ROW_GROUP + 10) as i64);
        assert_eq!(meta.num_row_groups(), 2);
        let kv = meta.file_metadata().key_value_metadata().unwrap();
        assert!(
            kv.iter()
                .any(|k| k.key == SCHEMA_VERSION_KEY && k.value.as_deref() == Some("2"))
        );
        let empty = Table::new("e", vec![col("n", Kind::Int, "")]);
        write(&empty, &dir.path().join("e.parquet")).unwrap();
    }

    fn groups(path: &Path) -> Vec<i64> {
        let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        let meta = reader.metadata();
        meta.row_groups().iter().map(|g| g.num_rows()).collect()
    }

    /// Rows added a session at a time are gathered into row groups (not one per session), and
    /// a group is written as soon as its rows' memory reaches GROUP_BYTES, so rows never wait
    /// in memory by the hundred megabytes.
    #[test]
    fn rows_added_piece_by_piece_are_written_in_bounded_groups() {
        let dir = tempfile::tempdir().unwrap();
        let columns = [col("n", Kind::Int, ""), col("s", Kind::Text, "")];
        let path = dir.path().join("small.parquet");
        let mut w = TableWriter::create("small", &columns, &path).unwrap();
        for piece in 0..100 {
            w.add(rows(&[json!({"n": piece}), json!({"n": piece, "s": "x"})]))
                .unwrap();
        }
        assert_eq!(w.close().unwrap(), 200);
        assert_eq!(groups(&path), [200]);

        let path = dir.path().join("long.parquet");
        let mut w = TableWriter::create("long", &columns, &path).unwrap();
        let long = "y".repeat(1 << 20);
        for _ in 0..40 {
            w.add(rows(&[json!({"s": long})])).unwrap();
            assert!(w.waiting_bytes < GROUP_BYTES + long.len());
        }
        assert_eq!(w.close().unwrap(), 40);
        assert_eq!(groups(&path), [16, 16, 8]);

        // Short rows of many values (a model call's) count their entries, not only their text.
        let path = dir.path().join("wide.parquet");
        let mut w = TableWriter::create("wide", &columns, &path).unwrap();
        let wide = rows(&[(0..24).map(|i| (format!("c{i}"), json!(i))).collect()]);
        let one = row_bytes(&wide[0]);
        for _ in 0..20_000 {
            w.add(wide.clone()).unwrap();
            assert!(w.waiting_bytes < GROUP_BYTES + one);
        }
        assert_eq!(w.close().unwrap(), 20_000);
        assert!(groups(&path).len() > 1, "{:?}", groups(&path));
    }

    fn rows(values: &[Value]) -> Vec<Row> {
        values
            .iter()
            .filter_map(|v| v.as_object().cloned())
            .collect()
    }

    #[test]
    fn values_of_another_type_or_missing_read_as_null() {
        let rows = rows(&[
            json!({"n": 3, "at": "2026-01-02T03:04:05.000006Z"}),
            json!({"n": "three", "at": "yesterday"}),
            json!({"n": u64::MAX}),
        ]);
        assert_eq!(ints(&rows, "n"), [Some(3), None, None]);
        assert_eq!(
            timestamps(&rows, "at"),
            [Some(1_767_323_045_000_006), None, None]
        );
    }
}
