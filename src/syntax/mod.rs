//! The front end: text to AST.
//!
//! Input: a source text and its [`FileId`](crate::source::FileId).
//! Output: an [`ast::StoredDefinition`] and lexical/syntax diagnostics (`E01xx`).
//! Invariant: parsing never fails and never panics; broken input yields diagnostics next to
//! the part of the AST that could be built.

pub mod ast;
pub mod lexer;
pub mod normalize;
pub mod parser;
pub mod pretty;

pub use parser::{parse_expr, parse_file};
