//! Integration tests of `eqm-testkit`: the tidy tests, in the style of rust-analyzer's
//! `tidy.rs`. They read the repository's Rust sources (`crates/`, `benches/`, `tests/`) and
//! fail with a list of every violation, each as `path:line`, of the rules of development:
//!
//! - no `.rs` file over 1000 lines, and no function over 150 lines unless a comment of the
//!   form `// Long function: <reason>` stands directly above it or at the top of its body
//!   (`lengths`);
//! - no import circle between the top-level modules of a crate, the crate root counted as a
//!   node (`circles`);
//! - no crate below `eqm-cli` touches the file system, the environment or processes in its
//!   `src/` (`io`);
//! - `unsafe` only in `eqm-jit` and `eqm-cc`, each use with a `// SAFETY:` comment (`unsafe_code`).
//!
//! Each rule also has a test on small made-up sources, so that a check that stopped finding
//! anything would fail too. The sources are read by `source`, which blanks comments and literals
//! so that no rule matches text inside them.
//!
//! One test binary for the crate; each module is one rule.

mod circles;
mod io;
mod lengths;
mod source;
mod unsafe_code;
