//! Integration tests of `eqm-cli`. The `eqm` command line as a user runs it: `run`, events, friction, projection, the pendulum against its exact solution, `diagram`, the REPL.
//!
//! One test binary for the crate; each module is one family of tests.

#[path = "../../../../tests/support/cli.rs"]
mod cli;
#[path = "../../../../tests/support/models.rs"]
mod models;
#[path = "../../../../tests/support/pendulum.rs"]
mod pendulum;
#[path = "../../../../tests/support/svg.rs"]
mod svg;

mod analyze;
mod diagram;
mod events;
mod explain;
mod friction;
mod hostile;
mod library;
mod package_check;
mod pendulum_reference;
mod projection;
mod repl;
mod run;
mod sweep;
mod system_dynamics;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
