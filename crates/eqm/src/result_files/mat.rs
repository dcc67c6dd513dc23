//! MAT v4 result files in the layout Modelica tools write for a simulation's results, so their
//! plot tools and readers (DyMat, `scipy.io.loadmat`) open EQM's results.
//!
//! Input: the result columns and the rows. Output: six MAT v4 matrices, little-endian, in
//! this order:
//! - `Aclass`: 4 × 11 characters, the rows `Atrajectory`, `1.1`, `` and `binTrans`: the
//!   matrices below are stored transposed ("binTrans"), one variable per column of the file's
//!   column-major storage, so one time point's values are contiguous and rows are appended as
//!   they come;
//! - `name` and `description`: characters, `length × variables`, each variable's text in one
//!   column, padded with NUL; `time` first, then the columns; a description ends with the unit
//!   in brackets (`Speed [m/s]`) as those tools write it;
//! - `dataInfo`: 32-bit integers, `4 × variables`: the matrix holding the variable (0 for time,
//!   1 for `data_1`, 2 for `data_2`), its 1-based row there (negative for a negated alias;
//!   EQM writes each column's own values, so never), the interpolation (0: linear) and what
//!   holds outside the time range (-1: undefined, for time and trajectories; 0: the value is
//!   kept, for constants);
//! - `data_1`: doubles, `constants × 2`: the start and stop time, then each run-time parameter's
//!   value in the first and in the last row;
//! - `data_2`: doubles, `trajectories × rows`: each row's time and its values of the other
//!   columns.
//!
//! The row count is known only when the run ends, so the writer takes `Write + Seek`: `data_1`
//! and `data_2`'s header are written with placeholders and patched by [`MatWriter::finish`],
//! and the rows go to the file as they come (memory stays bounded, as in the tools that write
//! this layout). This module does no IO of its own and no other MAT version.

use super::ResultWriter;
use crate::results::{Column, RowSink};
use eqm_ir::slot::Slot;
use std::io::{self, Seek, SeekFrom, Write};

/// The type codes of a MAT v4 header (little-endian IEEE, full matrix): doubles, 32-bit signed
/// integers, and text stored as 8-bit unsigned integers.
const TYPE_DOUBLE: i32 = 0;
const TYPE_INT32: i32 = 20;
const TYPE_TEXT: i32 = 51;

/// The `dataInfo` values of what holds outside the time range.
const UNDEFINED_OUTSIDE: i32 = -1;
const KEPT_OUTSIDE: i32 = 0;

/// Where a result column's values go.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// Row `k` of `data_1` (0 is time): a run-time parameter, constant over the run.
    Constant(usize),
    /// Row `k` of `data_2` (0 is time).
    Trajectory(usize),
}

/// Writes a run's rows as a MAT v4 result file; see the module documentation.
pub struct MatWriter<W: Write + Seek> {
    out: W,
    places: Vec<Place>,
    /// The rows of `data_1` and `data_2`, time included.
    constants: usize,
    trajectories: usize,
    /// Where the values of `data_1` start and where the header of `data_2` starts.
    data_1_at: u64,
    data_2_header_at: u64,
    rows: usize,
    /// `data_1`'s two columns: the values in the first and in the last row.
    first: Vec<f64>,
    last: Vec<f64>,
    /// One row of `data_2` as bytes.
    line: Vec<u8>,
    finished: bool,
}

impl<W: Write + Seek> MatWriter<W> {
    /// Writes every matrix but the rows of `data_2` for `columns` (a column of a run-time
    /// parameter goes to `data_1`, every other to `data_2`), with `data_1`'s values and
    /// `data_2`'s row count to be filled in by [`MatWriter::finish`].
    pub fn new(mut out: W, columns: &[Column]) -> io::Result<MatWriter<W>> {
        let (mut constants, mut trajectories) = (1, 1);
        let places: Vec<Place> = columns
            .iter()
            .map(|c| {
                if matches!(c.slot, Slot::Param(_)) {
                    constants += 1;
                    Place::Constant(constants - 1)
                } else {
                    trajectories += 1;
                    Place::Trajectory(trajectories - 1)
                }
            })
            .collect();
        let variables = columns.len() + 1;
        let mut names = vec!["time".to_string()];
        names.extend(columns.iter().map(|c| c.name.clone()));
        let mut descriptions = vec!["Simulation time [s]".to_string()];
        descriptions.extend(columns.iter().map(description));
        let mut info: Vec<i32> = vec![0, 1, 0, UNDEFINED_OUTSIDE];
        for place in &places {
            info.extend_from_slice(&match *place {
                Place::Constant(k) => [1, index(k)?, 0, KEPT_OUTSIDE],
                Place::Trajectory(k) => [2, index(k)?, 0, UNDEFINED_OUTSIDE],
            });
        }
        write_text(&mut out, "Aclass", &["Atrajectory", "1.1", "", "binTrans"], false)?;
        write_text(&mut out, "name", &names, true)?;
        write_text(&mut out, "description", &descriptions, true)?;
        write_header(&mut out, "dataInfo", TYPE_INT32, 4, variables)?;
        for v in info {
            out.write_all(&v.to_le_bytes())?;
        }
        write_header(&mut out, "data_1", TYPE_DOUBLE, constants, 2)?;
        let data_1_at = out.stream_position()?;
        // Placeholders until the run ends: not a number, as no row has come yet.
        for _ in 0..2 * constants {
            out.write_all(&f64::NAN.to_le_bytes())?;
        }
        let data_2_header_at = out.stream_position()?;
        write_header(&mut out, "data_2", TYPE_DOUBLE, trajectories, 0)?;
        Ok(MatWriter {
            out,
            places,
            constants,
            trajectories,
            data_1_at,
            data_2_header_at,
            rows: 0,
            first: vec![f64::NAN; constants],
            last: vec![f64::NAN; constants],
            line: Vec::with_capacity(8 * trajectories),
            finished: false,
        })
    }

    /// The writer the file went to.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write + Seek> RowSink for MatWriter<W> {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        if values.len() != self.places.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a row has {} values for {} columns", values.len(), self.places.len()),
            ));
        }
        if self.finished {
            return Err(io::Error::other("the result file is already complete"));
        }
        if self.rows >= i32::MAX as usize {
            return Err(io::Error::other(format!(
                "a MAT v4 file holds at most {} rows",
                i32::MAX
            )));
        }
        self.line.clear();
        self.line.extend_from_slice(&time.to_le_bytes());
        let first_row = self.rows == 0;
        self.last[0] = time;
        if first_row {
            self.first[0] = time;
        }
        for (place, &v) in self.places.iter().zip(values) {
            match *place {
                Place::Constant(k) => {
                    self.last[k] = v;
                    if first_row {
                        self.first[k] = v;
                    }
                }
                Place::Trajectory(_) => self.line.extend_from_slice(&v.to_le_bytes()),
            }
        }
        self.out.write_all(&self.line)?;
        self.rows += 1;
        Ok(())
    }
}

impl<W: Write + Seek> ResultWriter for MatWriter<W> {
    fn finish(&mut self) -> io::Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let end = self.out.stream_position()?;
        self.out.seek(SeekFrom::Start(self.data_1_at))?;
        for v in self.first.iter().chain(&self.last) {
            self.out.write_all(&v.to_le_bytes())?;
        }
        self.out.seek(SeekFrom::Start(self.data_2_header_at))?;
        write_header(&mut self.out, "data_2", TYPE_DOUBLE, self.trajectories, self.rows)?;
        self.out.seek(SeekFrom::Start(end))?;
        debug_assert_eq!(self.first.len(), self.constants);
        self.out.flush()
    }
}

/// A column's description as Modelica tools write it: the text, then the unit in brackets.
fn description(column: &Column) -> String {
    let text = column.description.as_deref().unwrap_or("");
    match column.unit.as_deref() {
        Some(unit) if text.is_empty() => format!("[{unit}]"),
        Some(unit) => format!("{text} [{unit}]"),
        None => text.to_string(),
    }
}

/// The 1-based index of row `k` as `dataInfo` holds it.
fn index(k: usize) -> io::Result<i32> {
    i32::try_from(k + 1).map_err(|_| io::Error::other("too many columns for a MAT v4 file"))
}

/// Writes the header of matrix `name`: its type, rows, columns, no imaginary part, and the
/// name with its terminating NUL.
fn write_header(out: &mut impl Write, name: &str, kind: i32, rows: usize, columns: usize) -> io::Result<()> {
    let dimension = |n: usize| i32::try_from(n).map_err(|_| io::Error::other("a matrix too large for a MAT v4 file"));
    for v in [
        kind,
        dimension(rows)?,
        dimension(columns)?,
        0,
        dimension(name.len() + 1)?,
    ] {
        out.write_all(&v.to_le_bytes())?;
    }
    out.write_all(name.as_bytes())?;
    out.write_all(&[0])
}

/// Writes `texts` as the character matrix `name`. Transposed (`name`, `description`), each
/// text is one column of the file's column-major storage, padded with NUL to the longest plus
/// one, as the tools that write this layout do; otherwise (`Aclass`) each text is a row.
fn write_text<S: AsRef<str>>(out: &mut impl Write, name: &str, texts: &[S], transposed: bool) -> io::Result<()> {
    let width = texts.iter().map(|t| t.as_ref().len()).max().unwrap_or(0) + usize::from(transposed);
    let width = width.max(1);
    let mut padded = vec![0u8; width * texts.len()];
    for (i, text) in texts.iter().enumerate() {
        for (j, &byte) in text.as_ref().as_bytes().iter().enumerate() {
            // Transposed, text `i` is column `i`: its bytes are contiguous; otherwise text `i`
            // is row `i` and its bytes are `texts.len()` apart.
            let at = if transposed { i * width + j } else { j * texts.len() + i };
            padded[at] = byte;
        }
    }
    if transposed {
        write_header(out, name, TYPE_TEXT, width, texts.len())?;
    } else {
        write_header(out, name, TYPE_TEXT, texts.len(), width)?;
    }
    out.write_all(&padded)
}
