//! The front end: text to AST.
//!
//! Input: a source text and its [`FileId`].
//! Output: an [`ast::StoredDefinition`] and lexical/syntax diagnostics (`E01xx`).
//! Invariant: parsing never fails and never panics; broken input yields diagnostics next to
//! the part of the AST that could be built. The crate deliberately knows only syntax: no name is
//! resolved and no type is checked (that is the flattener's work).

pub mod ast;
pub mod kept;
pub mod lexer;
pub mod normalize;
pub mod parser;
pub mod pretty;
pub mod stack;
pub mod visit;

/// The source locations every syntax tree node carries, so that a user of this crate alone can
/// name the file it parses.
pub use eqm_diag::source::{FileId, Span};
pub use kept::{TreeCache, parse_file_kept};
pub use parser::{parse_expr, parse_file};
pub use stack::with_compiler_stack;
