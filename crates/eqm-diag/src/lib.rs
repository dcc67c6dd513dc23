//! Where things are in the source, and what is wrong with them: the source map and spans every
//! stage attaches to what it produces, diagnostics as data with their one renderer, and the
//! registry of diagnostic codes.
//!
//! Input: source texts (added by the front end) and diagnostics (made by any stage).
//! Output: spans that resolve to `file:line:col`, and rendered diagnostics.
//! This crate knows nothing about the language: it neither lexes nor parses.

mod diagnostic;
pub mod source;
mod suggest;
pub mod text;
pub mod timing;

pub use diagnostic::*;
pub use suggest::did_you_mean;
