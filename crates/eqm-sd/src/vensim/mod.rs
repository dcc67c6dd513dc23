//! The reader of Vensim's text format (`.mdl`) into the shared representation.
//!
//! Input: the text of one `.mdl` file and its [`FileId`]. Output: an [`SdFile`] (dialect
//! [`Dialect::Vensim`]) and diagnostics located at their line in the file. The reader takes
//! the equation section (`name = expression ~ units ~ comment |`, groups, `:MACRO:` blocks,
//! subscript ranges, mappings and equivalences, lookups named and inline, `:EXCEPT:`, lists
//! of numbers and `TABBED ARRAY`), the variables' positions from the sketch and the
//! integration settings; it evaluates `INITIAL TIME`, `FINAL TIME`, `TIME STEP` and `SAVEPER`
//! into [`SimSpecs`] and keeps them as ordinary variables as well. The sketch's arrows,
//! clouds, fonts and views are display only and are left out. Data from files (`GET XLS`,
//! `GET DIRECT`, `:=` data equations), `:NA:`, subscripted lookup calls and the vector and
//! allocation functions are E1002 diagnostics naming the construct, never left out silently;
//! so is a control variable that changes during the run and integration settings other than
//! Euler. The model's name is left empty: the caller knows the file's name.

mod builtins;
mod define;
mod dims;
mod entry;
mod lexer;
mod model;
mod parser;
mod sections;
mod specs;

use crate::ir::{Dialect, SdFile};
use eqm_diag::Diagnostic;
use eqm_diag::source::FileId;

/// Reads a Vensim `.mdl` file. The file is `None` when an error leaves no model to give; with
/// only warnings, or errors that leave the rest of the model readable, it is given together
/// with the diagnostics (a caller must not run a model read with errors).
pub fn read(file: FileId, text: &str) -> (Option<SdFile>, Vec<Diagnostic>) {
    let layout = sections::layout(text);
    let mut diagnostics = Vec::new();
    let sd = model::build(file, text, &layout, &mut diagnostics);
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
