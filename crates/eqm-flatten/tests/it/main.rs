//! Integration tests of `eqm-flatten`. Flattening: the flat model of every example, the spring–mass
//! example's equations one by one, the diagnostics of names, instantiation and connections, and
//! dense parameter matrices built by array constructors, deep chains of components and of
//! `extends`.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::ui_harness;

mod dense;
mod diagram;
mod expandable;
mod flatten;
mod nesting;
mod ui;

pub use eqm_testkit::REPO;
