//! `eqm check`: parse, resolve and flatten the model (or every model of the files) and report
//! every error with its location, then one line per class on standard error, and a note for
//! each if-equation whose branch was chosen at translation.

use crate::args::ModelArgs;
use crate::load;
use crate::output::{color, finish, print_timings};
use eqm::{ModelOptions, Session};
use std::process::ExitCode;

/// Runs `eqm check`; see the module documentation.
pub(crate) fn main(args: &ModelArgs, timings: bool) -> ExitCode {
    let color = color();
    let (mut session, options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let summary = if session.has_errors() {
        None
    } else {
        summary(&mut session, args.model.as_deref(), &options)
    };
    let code = finish(&mut session, color);
    if timings {
        print_timings(&session);
    }
    if let Some(summary) = summary {
        eprintln!("{summary}");
    }
    code
}

/// One line per class checked, as the library words it (a complete model with its counts, a
/// component with its local balance), then the notes of branches chosen at translation and of
/// unknowns dropped for zero coefficients; a single model that failed is told by its
/// diagnostics alone.
fn summary(session: &mut Session, model: Option<&str>, options: &ModelOptions) -> Option<String> {
    let lines = eqm::check_report(&session.check_classes(model, options));
    (!lines.is_empty()).then(|| lines.join("\n"))
}
