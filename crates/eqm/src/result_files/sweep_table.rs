//! A parameter sweep as one Parquet or Arrow IPC table: the swept parameters' columns first,
//! then `time` and the variables, every run's rows one after another, as in the sweep's CSV.
//!
//! Input: a finished [`Sweep`] and the file metadata. Output: the table on any writer, each
//! variable's unit and description as its field's metadata (as in a single run's file); a
//! variable that some run does not have (a structural parameter removed it) is a nullable
//! column, empty in that run's rows. MAT v4 result files hold one trajectory, so a sweep is not
//! written as one. This module does no IO of its own and does not stream: a sweep keeps its
//! runs in memory until it ends.

use super::arrow::{ArrowFileWriter, TableField};
use super::{ResultFileInfo, ResultFormat, ResultWriter};
use crate::results::Column;
use crate::sweep::Sweep;
use std::collections::HashMap;
use std::io::{self, Write};

impl Sweep {
    /// Writes every run as one table in `format` (CSV as [`Sweep::write_csv`]); a sweep cannot
    /// be written as MAT v4 ([`ResultFormat::holds_sweeps`]), which is an
    /// [`io::ErrorKind::Unsupported`] error.
    pub fn write_file<W: Write + Send>(&self, format: ResultFormat, out: W, info: &ResultFileInfo) -> io::Result<()> {
        let columns = self.columns();
        let mut fields: Vec<TableField> = self.axes.iter().map(|a| TableField::plain(&a.name)).collect();
        fields.push(TableField::time());
        // Where each column of the table is among each run's columns.
        let maps: Vec<Vec<Option<usize>>> = self.runs.iter().map(|r| r.positions_of(&columns)).collect();
        // Each variable's unit and description, as a single run's file has them.
        let described: HashMap<&str, &Column> = self.described.iter().map(|c| (c.name.as_str(), c)).collect();
        for (k, name) in columns.iter().enumerate() {
            let mut field = match described.get(name.as_str()) {
                Some(column) => TableField::of_column(column),
                None => TableField::plain(name),
            };
            field.nullable = maps.iter().any(|map| map[k].is_none());
            fields.push(field);
        }
        let mut writer = match format {
            ResultFormat::Csv => return self.write_csv(out),
            ResultFormat::Parquet => ArrowFileWriter::parquet_table(out, &fields, info)?,
            ResultFormat::ArrowIpc => ArrowFileWriter::ipc_table(out, &fields, info)?,
            ResultFormat::Mat => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "a MAT v4 result file holds one run, not a sweep",
                ));
            }
        };
        let mut line: Vec<Option<f64>> = Vec::with_capacity(fields.len());
        for (run, map) in self.runs.iter().zip(&maps) {
            let width = run.columns.len();
            for (i, &t) in run.time.iter().enumerate() {
                let row = &run.rows[i * width..(i + 1) * width];
                line.clear();
                line.extend(run.values.iter().map(|&v| Some(v)));
                line.push(Some(t));
                line.extend(map.iter().map(|k| k.map(|k| row[k])));
                writer.push_row(&line)?;
            }
        }
        writer.finish()
    }
}
