//! Helpers shared by the integration tests and the benchmarks of several crates: generated
//! models and incidences, closed-form reference solutions, stiff reference problems, the
//! pipeline from text to programs for the crates below the library API, the UI-test harness,
//! an SVG reader and a runner of the `eqm` binary.
//!
//! Input: what each test asks for (sizes, texts, diagnostics). Output: models, problems and
//! checks. It is a dev-dependency only and deliberately holds no test of the product itself;
//! its own test binary holds the tidy tests, which read the repository's sources. A helper that
//! needs a crate of the pipeline sits behind a feature named in `Cargo.toml`, so that each test
//! binary builds only what it already depends on.

/// The repository root, where the examples, the corpus and the standard library live.
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

pub mod chain;
pub mod cli;
pub mod models;
pub mod pendulum;
pub mod svg;

#[cfg(feature = "integrators")]
pub mod chain_system;
#[cfg(feature = "dae-chain")]
pub mod dae_chain;
#[cfg(feature = "pipeline")]
pub mod pipeline;
#[cfg(feature = "stiff")]
pub mod stiff;
#[cfg(feature = "structural")]
pub mod structural_chain;
#[cfg(feature = "ui")]
pub mod ui_harness;
