//! The reader of Vensim's text format (`.mdl`) into the shared representation.
//!
//! Input: the text of one `.mdl` file and its [`FileId`]. Output: an [`SdFile`] (dialect
//! [`Dialect::Vensim`]) and diagnostics located at their line in the file.
//!
//! What it reads: the equation section (`name = expression ~ units ~ comment |`, groups,
//! `:MACRO:` blocks, subscript ranges with numbered runs, subranges, mappings and
//! equivalences, lookups named and inline, `:EXCEPT:`, lists of numbers and `TABBED ARRAY`,
//! ranges and elements used as values, data read from files by the `GET` functions, data
//! equations `:=` and their options), the variables' positions from the sketch, and the
//! integration settings. `INITIAL TIME`, `FINAL TIME`, `TIME STEP` and `SAVEPER` are
//! evaluated into [`SimSpecs`](crate::ir::SimSpecs) and kept as ordinary variables as well.
//! Vensim's functions are mapped onto the representation's builtins in the `builtins` module.
//! Names are kept as the file writes them (quotes and escapes included, as Vensim reports
//! them), white space collapsed.
//!
//! What it leaves out, and why: the sketch's arrows, clouds, fonts and views are display only;
//! reality checks (`:THE CONDITION:`, `:TEST INPUT:`) take no part in a run and are named by a
//! warning (W1001). Everything else it does not read is an E1002 diagnostic naming the
//! construct at its line, never a silent omission: data variables without an equation (their
//! values from another model's run), `GET TIME VALUE` of anything but the current time in
//! the model's units, the vector functions (but `INVERT MATRIX`, `VECTOR SELECT`,
//! `VECTOR SORT ORDER`, `VECTOR RANK` and `VECTOR REORDER`), a control variable other than `FINAL TIME` that changes
//! during the run (and a `FINAL TIME` that reads a stock or calls a function), integration settings other than Euler (the reader does not guess at the
//! meaning of their fields), and expressions nested deeper or longer than its limits. The
//! model's name is left empty: the caller knows the file's name.

mod builtins;
mod data;
mod define;
mod dims;
mod entry;
mod lexer;
mod model;
mod parser;
mod sections;
mod specs;

pub(crate) use parser::VENSIM_NA;

use crate::data::DataFiles;
use crate::ir::{Dialect, SdFile};
use eqm_diag::Diagnostic;
use eqm_diag::source::FileId;
use std::rc::Rc;

/// Reads a Vensim `.mdl` file. The file is `None` when an error leaves no model to give; with
/// only warnings, or errors that leave the rest of the model readable, it is given together
/// with the diagnostics (a caller must not run a model read with errors). A model that reads
/// data files has each reported unreadable (see [`read_with_data`]).
pub fn read(file: FileId, text: &str) -> (Option<SdFile>, Vec<Diagnostic>) {
    read_with_data(file, text, Rc::default())
}

/// [`read`] with the data files the model's `GET` functions read.
pub fn read_with_data(file: FileId, text: &str, data: Rc<DataFiles>) -> (Option<SdFile>, Vec<Diagnostic>) {
    let layout = sections::layout(text);
    let mut diagnostics = Vec::new();
    let sd = model::build(file, text, &layout, data, &mut diagnostics);
    let sd = sd.map(|(specs, dimensions, models, macros, doc)| SdFile {
        dialect: Dialect::Vensim,
        name: String::new(),
        specs,
        dimensions,
        models,
        macros,
        doc,
    });
    (sd, diagnostics)
}
