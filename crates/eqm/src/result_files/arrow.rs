//! Parquet and Arrow IPC result files: a table of `double` columns written in record batches of
//! bounded size while the run goes.
//!
//! Input: the table's fields (name, unit, description; a sweep's fields may be empty in a row),
//! the file metadata and the rows. Output: a Parquet file (uncompressed, no dictionary: the
//! values of a trajectory barely repeat) or an Arrow IPC file, each field with the metadata
//! `unit` and `description` where it has them, the schema with `model` and `experiment.*`.
//! Rows are gathered into a batch of about [`BATCH_BYTES`] and handed to the format's writer
//! when it is full; the Parquet writer closes a row group every [`ROW_GROUP_ROWS`] rows or
//! [`ROW_GROUP_BYTES`], so memory stays bounded however long the run. This module does not
//! choose the columns and does no IO of its own.

use super::{ResultFileInfo, ResultWriter};
use crate::results::{Column, RowSink};
use arrow_array::builder::Float64Builder;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::writer::FileWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

/// About how many bytes of values one record batch holds before it is written.
const BATCH_BYTES: usize = 1 << 20;

/// The most rows of one record batch, also of a narrow table (readers stream by batch).
const MAX_BATCH_ROWS: usize = 8192;

/// About how many bytes of a Parquet row group are kept before it is written, and its most
/// rows: whichever comes first closes the row group.
const ROW_GROUP_BYTES: usize = 64 << 20;
const ROW_GROUP_ROWS: usize = 1 << 16;

/// One column of a table file.
#[derive(Debug, Clone)]
pub(crate) struct TableField {
    pub(crate) name: String,
    pub(crate) unit: Option<Arc<str>>,
    pub(crate) description: Option<Arc<str>>,
    /// Whether a row may have no value here (a sweep's variable that a run does not have).
    pub(crate) nullable: bool,
}

impl TableField {
    /// A column that every row has, without unit or description.
    pub(crate) fn plain(name: &str) -> TableField {
        TableField {
            name: name.to_string(),
            unit: None,
            description: None,
            nullable: false,
        }
    }

    /// The `time` column: seconds.
    pub(crate) fn time() -> TableField {
        TableField {
            name: "time".to_string(),
            unit: Some(Arc::from("s")),
            description: Some(Arc::from("Simulation time")),
            nullable: false,
        }
    }

    /// The field of a result column, which every row has.
    pub(crate) fn of_column(column: &Column) -> TableField {
        TableField {
            name: column.name.clone(),
            unit: column.unit.clone(),
            description: column.description.clone(),
            nullable: false,
        }
    }
}

/// Where the batches go.
enum Output<W: Write + Send> {
    Parquet(Box<ArrowWriter<W>>),
    Ipc(Box<FileWriter<W>>),
    /// The file is complete.
    Finished,
}

/// Writes a run's rows as Parquet or as an Arrow IPC file; see the module documentation.
pub struct ArrowFileWriter<W: Write + Send> {
    schema: SchemaRef,
    builders: Vec<Float64Builder>,
    /// The rows of a full batch.
    batch_rows: usize,
    /// The rows in the builders.
    pending: usize,
    output: Output<W>,
}

impl<W: Write + Send> ArrowFileWriter<W> {
    /// A Parquet file of `time` and `columns` on `out`.
    pub fn parquet(out: W, columns: &[Column], info: &ResultFileInfo) -> io::Result<ArrowFileWriter<W>> {
        ArrowFileWriter::parquet_table(out, &run_fields(columns), info)
    }

    /// An Arrow IPC file of `time` and `columns` on `out`.
    pub fn arrow_ipc(out: W, columns: &[Column], info: &ResultFileInfo) -> io::Result<ArrowFileWriter<W>> {
        ArrowFileWriter::ipc_table(out, &run_fields(columns), info)
    }

    /// A Parquet file of the table `fields` on `out`.
    pub(crate) fn parquet_table(
        out: W,
        fields: &[TableField],
        info: &ResultFileInfo,
    ) -> io::Result<ArrowFileWriter<W>> {
        let schema = schema(fields, info);
        let key_values = info
            .key_values()
            .into_iter()
            .map(|(k, v)| KeyValue::new(k, v))
            .collect();
        let properties = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_key_value_metadata(Some(key_values))
            .build();
        let writer = ArrowWriter::try_new(out, schema.clone(), Some(properties)).map_err(io::Error::other)?;
        Ok(ArrowFileWriter::with_output(schema, Output::Parquet(Box::new(writer))))
    }

    /// An Arrow IPC file of the table `fields` on `out`.
    pub(crate) fn ipc_table(out: W, fields: &[TableField], info: &ResultFileInfo) -> io::Result<ArrowFileWriter<W>> {
        let schema = schema(fields, info);
        let writer = FileWriter::try_new(out, &schema).map_err(io::Error::other)?;
        Ok(ArrowFileWriter::with_output(schema, Output::Ipc(Box::new(writer))))
    }

    fn with_output(schema: SchemaRef, output: Output<W>) -> ArrowFileWriter<W> {
        let width = schema.fields().len().max(1);
        let batch_rows = (BATCH_BYTES / (8 * width)).clamp(1, MAX_BATCH_ROWS);
        ArrowFileWriter {
            builders: (0..width).map(|_| Float64Builder::with_capacity(batch_rows)).collect(),
            schema,
            batch_rows,
            pending: 0,
            output,
        }
    }

    /// Adds one row, a value (or none, in a nullable field) per field; a full batch is written.
    pub(crate) fn push_row(&mut self, values: &[Option<f64>]) -> io::Result<()> {
        self.check_width(values.len())?;
        self.append(values.iter().copied())
    }

    /// Whether a row of `width` values fits the table and the file is still open.
    fn check_width(&self, width: usize) -> io::Result<()> {
        if width != self.schema.fields().len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a row has {width} values for {} columns", self.schema.fields().len()),
            ));
        }
        if matches!(self.output, Output::Finished) {
            return Err(io::Error::other("the result file is already complete"));
        }
        Ok(())
    }

    /// Appends a row of values that [`ArrowFileWriter::check_width`] accepted.
    fn append(&mut self, values: impl Iterator<Item = Option<f64>>) -> io::Result<()> {
        for ((builder, field), value) in self.builders.iter_mut().zip(self.schema.fields()).zip(values) {
            match value {
                Some(v) => builder.append_value(v),
                None if field.is_nullable() => builder.append_null(),
                None => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("a row has no value for `{}`", field.name()),
                    ));
                }
            }
        }
        self.pending += 1;
        if self.pending >= self.batch_rows {
            self.write_batch()?;
        }
        Ok(())
    }

    /// Writes the rows in the builders as one record batch.
    fn write_batch(&mut self) -> io::Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self
            .builders
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef)
            .collect();
        self.pending = 0;
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(io::Error::other)?;
        match &mut self.output {
            Output::Parquet(writer) => writer.write(&batch).map_err(io::Error::other),
            Output::Ipc(writer) => writer.write(&batch).map_err(io::Error::other),
            Output::Finished => Err(io::Error::other("the result file is already complete")),
        }
    }
}

impl<W: Write + Send> RowSink for ArrowFileWriter<W> {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        self.check_width(values.len() + 1)?;
        self.append(std::iter::once(Some(time)).chain(values.iter().map(|&v| Some(v))))
    }
}

impl<W: Write + Send> ResultWriter for ArrowFileWriter<W> {
    fn finish(&mut self) -> io::Result<()> {
        self.write_batch()?;
        match std::mem::replace(&mut self.output, Output::Finished) {
            Output::Parquet(mut writer) => {
                writer.finish().map_err(io::Error::other)?;
                writer.inner_mut().flush()
            }
            Output::Ipc(mut writer) => {
                writer.finish().map_err(io::Error::other)?;
                writer.get_mut().flush()
            }
            Output::Finished => Ok(()),
        }
    }
}

/// The fields of a run's file: `time`, then one per column.
fn run_fields(columns: &[Column]) -> Vec<TableField> {
    std::iter::once(TableField::time())
        .chain(columns.iter().map(TableField::of_column))
        .collect()
}

/// The Arrow schema of `fields`, with the file metadata of `info`.
fn schema(fields: &[TableField], info: &ResultFileInfo) -> SchemaRef {
    let fields: Vec<Field> = fields
        .iter()
        .map(|f| {
            let mut metadata = HashMap::new();
            if let Some(unit) = &f.unit {
                metadata.insert("unit".to_string(), unit.to_string());
            }
            if let Some(description) = &f.description {
                metadata.insert("description".to_string(), description.to_string());
            }
            Field::new(&f.name, DataType::Float64, f.nullable).with_metadata(metadata)
        })
        .collect();
    let metadata: HashMap<String, String> = info.key_values().into_iter().collect();
    Arc::new(Schema::new_with_metadata(fields, metadata))
}
