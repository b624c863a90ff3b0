//! Prints the column tables of docs/export-schema.md (`cargo run -p troupe-export --example
//! print_schema`), to paste after a column changes.
fn main() {
    print!("{}", troupe_export::schema_markdown());
}
