//! Integration tests of `eqm-diag`. The registry of diagnostic codes: it agrees with the codes the
//! crates' sources use, with the constructors of diagnostics, and with `docs/errors.md`.
//!
//! One test binary for the crate; each module is one family of tests.

mod codes;
mod errors_doc;
mod text;
