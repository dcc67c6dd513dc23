//! Simulation results: the columns of a run, the rows kept in memory as a
//! [`SimulationResult`], or streamed as they are computed to any [`RowSink`], for example as
//! CSV ([`CsvWriter`]); and what a result file says about its run ([`ResultFileInfo`]).
//!
//! Input: the columns (full variable names with their units and descriptions) and rows of
//! `time` plus values. Output: the table in memory with lookups by name, or CSV text on any
//! `io::Write`: a header `time,<names>` and one line per row, numbers in the shortest form
//! that reads back to the same `f64`. Each CSV row is written when it arrives, so a failing or
//! interrupted run keeps everything computed so far (the caller flushes on error). This module
//! does not choose which variables or times to write, and does no IO of its own: the writer
//! it is given does.

use eqm_diag::text::push_number;
use eqm_ir::slot::Slot;
use eqm_sim::simulate::Summary;
use std::io::{self, Write};
use std::sync::Arc;

/// Streams rows as CSV.
pub struct CsvWriter<W: Write> {
    out: W,
    columns: usize,
    line: String,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header `time,<names>`. Names containing a comma or a quote (`x[1,2]`) are
    /// quoted as RFC 4180 says.
    pub fn new<S: AsRef<str>>(mut out: W, names: &[S]) -> io::Result<CsvWriter<W>> {
        let mut line = String::from("time");
        for name in names {
            line.push(',');
            push_field(&mut line, name.as_ref());
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        Ok(CsvWriter {
            out,
            columns: names.len(),
            line: String::new(),
        })
    }

    /// Writes one row; `values` must have one entry per column.
    pub fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        if values.len() != self.columns {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a row has {} values for {} columns", values.len(), self.columns),
            ));
        }
        self.line.clear();
        push_number(&mut self.line, time);
        for &v in values {
            self.line.push(',');
            push_number(&mut self.line, v);
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Appends `name` as one CSV field, quoted when it contains a comma, a quote or a line break.
pub(crate) fn push_field(line: &mut String, name: &str) {
    if name.contains([',', '"', '\n']) {
        line.push('"');
        line.push_str(&name.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(name);
    }
}

/// One result column: a variable with its unit and description, and where a run reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The full variable name (`mass.v`, `der(x)`).
    pub name: String,
    pub unit: Option<Arc<str>>,
    pub description: Option<Arc<str>>,
    /// Where the column's value is at run time (only a model's own columns have one).
    pub(crate) slot: Slot,
}

/// Where a run's rows go as they are computed: each row is the time and one value per column.
/// An error stops the run.
pub trait RowSink {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()>;

    /// A line the model printed (`Modelica.Utilities.Streams.print`) at `time`, handed over
    /// before the first row after it. A sink that does not take them leaves them in the run's
    /// summary (`summary.events.printed`) only.
    fn print(&mut self, time: f64, line: &str) -> io::Result<()> {
        let _ = (time, line);
        Ok(())
    }
}

/// A [`RowSink`] as the simulation's sink of rows and printed lines; `rows` counts the rows.
pub(crate) struct ForwardSink<'s> {
    pub(crate) sink: &'s mut dyn RowSink,
    pub(crate) rows: usize,
}

impl eqm_sim::simulate::RunSink for ForwardSink<'_> {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        self.rows += 1;
        self.sink.row(time, values)
    }

    fn print(&mut self, time: f64, line: &str) -> io::Result<()> {
        self.sink.print(time, line)
    }
}

impl<F: FnMut(f64, &[f64]) -> io::Result<()>> RowSink for F {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        self(time, values)
    }
}

impl<W: Write> RowSink for CsvWriter<W> {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        CsvWriter::row(self, time, values)
    }
}

/// The rows of a run in memory, with lookups by column name; see the module documentation.
#[derive(Debug, Clone)]
pub struct SimulationResult {
    columns: Vec<Column>,
    time: Vec<f64>,
    /// Row-major: row `i` is `values[i * columns.len()..(i + 1) * columns.len()]`.
    values: Vec<f64>,
    /// How the run went: steps, evaluations, events, the back end.
    pub summary: Summary,
}

impl SimulationResult {
    /// The result of a run with `columns` whose rows are `rows`.
    pub(crate) fn new(columns: Vec<Column>, rows: Rows, summary: Summary) -> SimulationResult {
        SimulationResult {
            columns,
            time: rows.time,
            values: rows.values,
            summary,
        }
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The time of each row.
    pub fn time(&self) -> &[f64] {
        &self.time
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Row `i`: its time and one value per column.
    pub fn row(&self, i: usize) -> Option<(f64, &[f64])> {
        let n = self.columns.len();
        let t = *self.time.get(i)?;
        Some((t, &self.values[i * n..(i + 1) * n]))
    }

    /// The index of the column of variable `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Every value of variable `name`, one per row.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.column_index(name)?;
        let n = self.columns.len();
        Some(self.values.iter().skip(k).step_by(n.max(1)).copied().collect())
    }

    /// The value of `name` at time `t`, interpolated linearly between the rows around it (at an
    /// event, where two rows share a time, the value after the event); `None` outside the run
    /// or for an unknown name.
    pub fn value_at(&self, name: &str, t: f64) -> Option<f64> {
        let k = self.column_index(name)?;
        let n = self.columns.len();
        let (first, last) = (*self.time.first()?, *self.time.last()?);
        if !(first..=last).contains(&t) {
            return None;
        }
        // The last row at or before `t`.
        let i = self.time.partition_point(|&ti| ti <= t).saturating_sub(1);
        let value = |row: usize| self.values[row * n + k];
        if self.time[i] == t || i + 1 == self.time.len() {
            return Some(value(i));
        }
        let (t0, t1) = (self.time[i], self.time[i + 1]);
        let w = (t - t0) / (t1 - t0);
        Some(value(i) + w * (value(i + 1) - value(i)))
    }

    /// The value of `name` in the last row.
    pub fn final_value(&self, name: &str) -> Option<f64> {
        let k = self.column_index(name)?;
        let last = self.time.len().checked_sub(1)?;
        Some(self.values[last * self.columns.len() + k])
    }

    /// The smallest and largest value of `name` over the rows.
    pub fn range(&self, name: &str) -> Option<(f64, f64)> {
        let values = self.column(name)?;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (!values.is_empty()).then_some((min, max))
    }

    /// Writes the result as CSV, as `eqm run` does.
    pub fn write_csv(&self, out: impl Write) -> io::Result<()> {
        let names: Vec<String> = self.columns.iter().map(|c| c.name.clone()).collect();
        let mut writer = CsvWriter::new(out, &names)?;
        for i in 0..self.len() {
            if let Some((t, values)) = self.row(i) {
                writer.row(t, values)?;
            }
        }
        writer.flush()
    }
}

// Results from rows that a front end collected with its own sink.
impl SimulationResult {
    /// The result of a run with `columns` whose rows a caller collected with its own
    /// [`RowSink`] (one that watches the rows, or stops the run part way): `time[i]` is row
    /// `i`'s time and `values` holds the rows one after another, one value per column. A run
    /// that was stopped before it reported has the default `summary`.
    pub fn from_rows(columns: Vec<Column>, time: Vec<f64>, values: Vec<f64>, summary: Summary) -> SimulationResult {
        let width = columns.len().max(1);
        let rows = time.len().min(values.len() / width);
        let (mut time, mut values) = (time, values);
        time.truncate(rows);
        values.truncate(rows * columns.len());
        SimulationResult {
            columns,
            time,
            values,
            summary,
        }
    }
}

/// Rows collected in memory while a run goes.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    time: Vec<f64>,
    values: Vec<f64>,
}

impl Rows {
    /// The times and the row-major values.
    pub(crate) fn into_parts(self) -> (Vec<f64>, Vec<f64>) {
        (self.time, self.values)
    }
}

impl RowSink for Rows {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        self.time.push(time);
        self.values.extend_from_slice(values);
        Ok(())
    }
}

/// What a result file says about its run beyond the columns: the model and its experiment
/// (`crate::result_files` writes it; a sweep keeps it for its file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultFileInfo {
    /// The model's full name; empty when the front end does not know it.
    pub model: String,
    /// The experiment's settings as text (`start`, `stop`, `interval`, `tolerance`, ...), in the
    /// order given.
    pub experiment: Vec<(String, String)>,
}

impl ResultFileInfo {
    /// The file metadata as key and value: `model` (unless unknown, empty), then
    /// `experiment.<setting>` for each setting.
    pub(crate) fn key_values(&self) -> Vec<(String, String)> {
        let mut all = Vec::new();
        if !self.model.is_empty() {
            all.push(("model".to_string(), self.model.clone()));
        }
        for (key, value) in &self.experiment {
            all.push((format!("experiment.{key}"), value.clone()));
        }
        all
    }
}
