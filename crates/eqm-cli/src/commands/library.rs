//! `eqm library [PACKAGE]`: the table of the classes below a standard-library package, or
//! without PACKAGE the list of packages.

use crate::load;
use crate::output::usage;
use std::process::ExitCode;

/// Runs `eqm library`; see the module documentation.
pub(crate) fn main(package: Option<&str>) -> ExitCode {
    let (classes, diagnostics) = load::library_classes();
    if !diagnostics.is_empty() {
        eprintln!(
            "the standard library has {} diagnostics; `eqm check` on a model that uses it shows them",
            diagnostics.len()
        );
    }
    let Some(package) = package else {
        for package in eqm::library_doc::packages(&classes) {
            println!("{package}");
        }
        return ExitCode::SUCCESS;
    };
    match eqm::library_doc::package_table(&classes, package) {
        Some(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        None => usage(format!(
            "`{package}` is no package of the standard library; `eqm library` lists them"
        )),
    }
}
