//! Integration tests of `eqm-cli`. The `eqm` command line as a user runs it: `run`, events, friction, projection, the pendulum against its exact solution, `diagram`, the REPL.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::models;
use eqm_testkit::pendulum;
use eqm_testkit::svg;

mod analyze;
mod compare;
mod diagram;
mod events;
mod explain;
mod fmu;
mod friction;
mod friction_modes;
mod hostile;
mod library;
mod msl_complex;
mod msl_examples;
mod msl_matrices;
mod package_check;
mod pendulum_reference;
mod printing;
mod projection;
mod repl;
mod result_files;
mod run;
mod sd_files;
mod serve;
mod strings;
mod sweep;
mod system_dynamics;

pub use eqm_testkit::REPO;

/// The Modelica Standard Library installed beside the repository, or `None` (saying that the
/// test is skipped) where it is not.
pub fn installed_msl() -> Option<std::path::PathBuf> {
    let library = std::path::Path::new(REPO).join("../shared/msl");
    if library.join("Modelica/package.mo").is_file() {
        return Some(library);
    }
    eprintln!(
        "skipped: the Modelica Standard Library is not installed in {}",
        library.display()
    );
    None
}

/// The `eqm` binary of this crate run as a user runs it (only this test binary knows its path).
mod cli {
    pub use eqm_testkit::cli::Table;

    /// Runs `eqm` with `args` in the repository root; returns (exit code, stdout, stderr).
    pub fn eqm(args: &[&str]) -> (i32, String, String) {
        eqm_testkit::cli::eqm(env!("CARGO_BIN_EXE_eqm"), args)
    }

    /// Runs `eqm` with `args` successfully and parses the CSV.
    pub fn run(args: &[&str]) -> Table {
        eqm_testkit::cli::run(env!("CARGO_BIN_EXE_eqm"), args)
    }
}
