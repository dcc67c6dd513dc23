//! Result writing: simulation rows as CSV, streamed as they are computed.
//!
//! Input: the column names (full variable names) and rows of `time` plus values. Output: CSV
//! text on any `io::Write`: a header `time,<names>` and one line per row, numbers in the
//! shortest form that reads back to the same `f64`. Each row is written when it arrives, so a
//! failing or interrupted run keeps everything computed so far (the caller flushes on error).
//! This module does not choose which variables or times to write.

use eqm_diag::text::push_number;
use std::io::{self, Write};

/// Streams rows as CSV.
pub struct CsvWriter<W: Write> {
    out: W,
    columns: usize,
    line: String,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header `time,<names>`. Names containing a comma or a quote (`x[1,2]`) are
    /// quoted as RFC 4180 says.
    pub fn new(mut out: W, names: &[String]) -> io::Result<CsvWriter<W>> {
        let mut line = String::from("time");
        for name in names {
            line.push(',');
            push_field(&mut line, name);
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

fn push_field(line: &mut String, name: &str) {
    if name.contains([',', '"', '\n']) {
        line.push('"');
        line.push_str(&name.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(name);
    }
}
