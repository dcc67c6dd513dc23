//! Result files for the data tools: the formats `eqm run --out` writes, chosen by the file's
//! extension, and one writer per format that takes a run's rows as they are computed.
//!
//! Input: the result columns (names, units, descriptions), what the file says about the run
//! ([`ResultFileInfo`]: the model and its experiment), and the rows. Output: CSV
//! ([`CsvWriter`]), Parquet and the Arrow IPC file format ([`ArrowFileWriter`]: units and
//! descriptions as field metadata, the model and the experiment as file metadata, bounded
//! batches written while the run goes) or MAT v4 in the layout of Modelica tools' result files
//! ([`MatWriter`]). Every writer is a [`RowSink`] and a [`ResultWriter`], whose
//! [`ResultWriter::finish`] completes the file (a Parquet or Arrow footer, the row count of a
//! MAT file); a front end calls it also after a failed run, so the rows before the failure
//! are kept in a file the tools can open. This module does no IO of its own: the front end
//! opens the file and hands over the writer.

mod arrow;
mod mat;
mod sweep_table;

pub use arrow::ArrowFileWriter;
pub use mat::MatWriter;

use crate::model::Model;
pub use crate::results::ResultFileInfo;
use crate::results::{Column, CsvWriter, RowSink, SimulationResult};
use crate::run::RunSettings;
use eqm_diag::text::format_number;
use std::io::{self, Seek, Write};

/// A file format for a run's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultFormat {
    /// Comma-separated text: a header `time,<names>`, numbers that read back to the same value.
    Csv,
    /// Apache Parquet: one `double` column per variable, uncompressed.
    Parquet,
    /// The Arrow IPC file format (Feather version 2).
    ArrowIpc,
    /// MAT v4 in the layout Modelica tools write for results (`Aclass`, `name`,
    /// `description`, `dataInfo`, `data_1`, `data_2`).
    Mat,
}

impl ResultFormat {
    /// Every format, in the order messages list them.
    pub const ALL: [ResultFormat; 4] = [
        ResultFormat::Csv,
        ResultFormat::Parquet,
        ResultFormat::ArrowIpc,
        ResultFormat::Mat,
    ];

    /// The file extension of the format, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ResultFormat::Csv => "csv",
            ResultFormat::Parquet => "parquet",
            ResultFormat::ArrowIpc => "arrow",
            ResultFormat::Mat => "mat",
        }
    }

    /// The format of a file with extension `extension` (without the dot, any case), or `None`.
    pub fn from_extension(extension: &str) -> Option<ResultFormat> {
        ResultFormat::ALL
            .into_iter()
            .find(|f| f.extension().eq_ignore_ascii_case(extension))
    }

    /// The supported extensions for a message: `.csv, .parquet, .arrow, .mat`.
    pub fn extensions_list() -> String {
        ResultFormat::ALL
            .iter()
            .map(|f| format!(".{}", f.extension()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether a parameter sweep can be written in this format: MAT v4 result files hold one
    /// trajectory, so a sweep's many runs do not fit them.
    pub fn holds_sweeps(self) -> bool {
        self != ResultFormat::Mat
    }
}

impl Model {
    /// What a result file of a run with `settings` says about it: the model's name and the
    /// experiment as the run resolves it (start, stop, interval, solver, tolerance; the
    /// experiment annotation's values where `settings` leaves them out). Settings that cannot
    /// be used give the model's name alone: such a run does not start.
    pub fn result_file_info(&self, settings: &RunSettings) -> ResultFileInfo {
        let mut experiment = Vec::new();
        if let Ok((options, _)) = settings.resolve(&self.compiled.experiment) {
            experiment.push(("start".to_string(), format_number(options.start)));
            experiment.push(("stop".to_string(), format_number(options.stop)));
            if let Some(interval) = options.interval {
                experiment.push(("interval".to_string(), format_number(interval)));
            }
            experiment.push(("solver".to_string(), options.method.name().to_string()));
            experiment.push(("tolerance".to_string(), format_number(options.integrator.rtol)));
        }
        ResultFileInfo {
            model: self.name().to_string(),
            experiment,
        }
    }
}

/// A [`RowSink`] that writes a file, which [`ResultWriter::finish`] completes.
pub trait ResultWriter: RowSink {
    /// Writes what closes the file (a footer, a row count) and flushes it. A writer that is not
    /// finished may leave a file the tools cannot open; after `finish` it takes no more rows.
    fn finish(&mut self) -> io::Result<()>;
}

impl<W: Write> ResultWriter for CsvWriter<W> {
    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

impl SimulationResult {
    /// Writes the result as a file of `format` on `out`, as `eqm run --out` would have
    /// written its rows.
    pub fn write_file<W: Write + Seek + Send + 'static>(
        &self,
        format: ResultFormat,
        out: W,
        info: &ResultFileInfo,
    ) -> io::Result<()> {
        let mut writer = result_writer(format, out, self.columns(), info)?;
        for i in 0..self.len() {
            if let Some((t, values)) = self.row(i) {
                writer.row(t, values)?;
            }
        }
        writer.finish()
    }
}

/// The writer of a file of `format` on `out` with `columns`, its header already written.
/// `out` must be seekable because a MAT file's matrix headers give the row count, known only
/// when the run ends.
pub fn result_writer<W: Write + Seek + Send + 'static>(
    format: ResultFormat,
    out: W,
    columns: &[Column],
    info: &ResultFileInfo,
) -> io::Result<Box<dyn ResultWriter>> {
    Ok(match format {
        ResultFormat::Csv => {
            let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            Box::new(CsvWriter::new(out, &names)?)
        }
        ResultFormat::Parquet => Box::new(ArrowFileWriter::parquet(out, columns, info)?),
        ResultFormat::ArrowIpc => Box::new(ArrowFileWriter::arrow_ipc(out, columns, info)?),
        ResultFormat::Mat => Box::new(MatWriter::new(out, columns)?),
    })
}
