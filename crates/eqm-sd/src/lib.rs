//! System-dynamics files into EQM: Stella/iThink and OASIS XMILE (`.xmile`, `.stmx`) and Vensim
//! (`.mdl`) models read into one representation, [`ir::SdFile`], and written as an `.eqm` model
//! built on the standard library's `SystemDynamics` package.
//!
//! Input: the text of one file, its [`FileId`](eqm_diag::FileId) in the session's source map
//! and its format. Output: the `.eqm` text of the model, the names its results are reported
//! under (the variables' names as the file writes them) and the diagnostics, each at its line
//! in the file read (the XML line for XMILE).
//!
//! This crate reads no files and runs nothing: the front ends read the file, and give the
//! bytes of the data files a Vensim model reads (`GET XLS ...`) through a
//! [`ReadData`](data::ReadData) of theirs, which the `data` module parses into cells; the
//! values are written into the `.eqm` text as constants and tables. The library compiles and
//! runs that text like any other model. Every construct a reader does not
//! support is a diagnostic (E1002) naming it; nothing is left out silently.

pub mod data;
pub mod emit;
pub mod ir;
pub mod names;
pub mod vensim;
pub mod xmile;

use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};

/// The format of a system-dynamics file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OASIS XMILE (`.xmile`, `.xml`).
    Xmile,
    /// isee Stella/iThink (`.stmx`, `.itmx`), XMILE with isee's extensions.
    Stella,
    /// Vensim's text format (`.mdl`).
    Vensim,
}

impl Format {
    /// The format of a file by its extension (without the dot, in any case); `None` for an
    /// extension of no system-dynamics format.
    pub fn from_extension(extension: &str) -> Option<Format> {
        match extension.to_ascii_lowercase().as_str() {
            "xmile" | "xml" => Some(Format::Xmile),
            "stmx" | "itmx" | "stm" => Some(Format::Stella),
            "mdl" => Some(Format::Vensim),
            _ => None,
        }
    }

    /// The format a file name's extension names.
    pub fn of_file_name(name: &str) -> Option<Format> {
        let (_, extension) = name.rsplit_once('.')?;
        Format::from_extension(extension)
    }

    /// The names `--format` takes.
    pub const NAMES: &'static [&'static str] = &["xmile", "stella", "vensim"];

    /// The format of a name `--format` takes.
    pub fn from_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "xmile" => Some(Format::Xmile),
            "stella" | "stmx" => Some(Format::Stella),
            "vensim" | "mdl" => Some(Format::Vensim),
            _ => None,
        }
    }

    /// The format's name as `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Xmile => "xmile",
            Format::Stella => "stella",
            Format::Vensim => "vensim",
        }
    }
}

/// A file imported: its `.eqm` text (empty when it could not be written), the model's name,
/// the result columns and the diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The `.eqm` text; `None` when an error stops the import (see the diagnostics).
    pub text: Option<String>,
    /// The name of the model class in the text.
    pub model: String,
    /// The result columns: each the variable's name in the `.eqm` model and its name as the
    /// file writes it.
    pub columns: Vec<(String, String)>,
    /// Where each declared name of the model comes from in the file (a diagram's box links
    /// to the variable's definition through it).
    pub origins: Vec<(String, Span)>,
    pub diagnostics: Vec<Diagnostic>,
    /// The data files the model read (`GET XLS ...`), as the reader was asked for them: the
    /// text holds their values, so it no longer needs them, but the file itself does.
    pub data_files: Vec<std::path::PathBuf>,
}

/// Imports `text`, the file `file` of `format`, named `file_name` (its stem names a model
/// that has no name of its own). A data file the model reads is reported unreadable (see
/// [`import_with_data`]).
pub fn import(file: FileId, file_name: &str, text: &str, format: Format) -> Imported {
    import_with_data(file, file_name, text, format, None)
}

/// [`import`] with the reader of the data files the model reads, each found relative to the
/// directory of `file_name`.
pub fn import_with_data(
    file: FileId,
    file_name: &str,
    text: &str,
    format: Format,
    data: Option<std::sync::Arc<dyn data::ReadData>>,
) -> Imported {
    let mut data_files = Vec::new();
    let (sd, mut diagnostics) = match format {
        Format::Xmile => xmile::read(file, text, ir::Dialect::Xmile),
        Format::Stella => xmile::read(file, text, ir::Dialect::Stella),
        Format::Vensim => {
            let files = std::rc::Rc::new(data::DataFiles::new(data, file_name));
            let read = vensim::read_with_data(file, text, files.clone());
            data_files = files.paths_read();
            read
        }
    };
    let stem = file_name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(file_name)
        .split('.')
        .next()
        .unwrap_or("Model");
    let failed = |diagnostics| Imported {
        text: None,
        model: String::new(),
        columns: Vec::new(),
        origins: Vec::new(),
        diagnostics,
        data_files: data_files.clone(),
    };
    let Some(sd) = sd else {
        return failed(diagnostics);
    };
    if diagnostics.iter().any(|d| d.severity == eqm_diag::Severity::Error) {
        return failed(diagnostics);
    }
    let (emitted, mut more) = emit::emit(&sd, stem);
    diagnostics.append(&mut more);
    match emitted {
        Some(e) => Imported {
            text: Some(e.text),
            model: e.model,
            columns: e.columns,
            origins: e.origins,
            diagnostics,
            data_files,
        },
        None => failed(diagnostics),
    }
}
