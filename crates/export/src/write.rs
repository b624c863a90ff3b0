//! A table to a Parquet file, with the parquet crate's low-level column writer (no arrow):
//! every column optional (null where a row has no value), one row group per 64k rows, snappy
//! pages, the export's schema version in the file's key-value metadata.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::parser::parse_message_type;

use serde_json::Value;

use crate::table::{Column, Kind, Row, Table};
use crate::{Error, SCHEMA_VERSION, SCHEMA_VERSION_KEY};

/// Rows per row group: readers load a group at a time, so a batch of a million events is not
/// one block.
const ROW_GROUP: usize = 65_536;

/// Write `table` to `path` (created or truncated).
pub fn write(table: &Table, path: &Path) -> Result<(), Error> {
    let fail = |e: parquet::errors::ParquetError| Error::Parquet {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let schema = parse_message_type(&message_type(table)).map_err(fail)?;
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
    let mut writer =
        SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).map_err(fail)?;
    // A table without rows is still written: its schema, in a file readers open as empty.
    for rows in table.rows.chunks(ROW_GROUP) {
        let mut group = writer.next_row_group().map_err(fail)?;
        for column in &table.columns {
            let Some(mut out) = group.next_column().map_err(fail)? else {
                break;
            };
            write_column(&mut out, rows, column).map_err(fail)?;
            out.close().map_err(fail)?;
        }
        group.close().map_err(fail)?;
    }
    writer.close().map_err(fail)?;
    Ok(())
}

/// The Parquet schema, in its text form.
fn message_type(table: &Table) -> String {
    let fields: Vec<String> = table
        .columns
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
    format!("message {} {{\n{}\n}}", table.name, fields.join("\n"))
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
    use crate::table::col;
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
                .any(|k| k.key == SCHEMA_VERSION_KEY && k.value.as_deref() == Some("1"))
        );
        let empty = Table::new("e", vec![col("n", Kind::Int, "")]);
        write(&empty, &dir.path().join("e.parquet")).unwrap();
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
