//! Where things are in the source, and what is wrong with them: the source map and spans every
//! stage attaches to what it produces, diagnostics as data with their one renderer, and the
//! registry of diagnostic codes.
//!
//! Input: source texts (added by the front end), diagnostics (made by any stage) and their codes.
//! Output: spans that resolve to `file:line:col`, rendered diagnostics, and what each code means
//! ([`codes`]); and the text every stage's output is written in: numbers and names ([`text`]),
//! JSON ([`json`]) and SVG documents ([`svg`]).
//! This crate knows nothing about the language beyond the words describing the codes: it neither
//! lexes nor parses.

pub mod codes;
mod diagnostic;
pub mod json;
pub mod source;
mod suggest;
pub mod svg;
pub mod text;
pub mod timing;

pub use diagnostic::*;
pub use suggest::did_you_mean;
