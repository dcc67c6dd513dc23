//! System-dynamics files into EQM: Stella/iThink and OASIS XMILE (`.xmile`, `.stmx`) and Vensim
//! (`.mdl`) models read into one representation, [`ir::SdFile`], and written as an `.eqm` model
//! built on the standard library's `SystemDynamics` package.
//!
//! Input: the text of one file, its [`FileId`](eqm_diag::FileId) in the session's source map
//! and its format. Output: the `.eqm` text of the model, the names its results are reported
//! under (the variables' names as the file writes them) and the diagnostics, each at its line
//! in the file read (the XML line for XMILE).
//!
//! This crate reads no files and runs nothing: the front ends read the file, the library
//! compiles and runs the `.eqm` text like any other model. Every construct a reader does not
//! support is a diagnostic (E1002) naming it; nothing is left out silently.

pub mod ir;
pub mod names;
pub mod vensim;
