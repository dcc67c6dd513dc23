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
/// component with its local balance); a single model that failed is told by its diagnostics
/// alone.
fn summary(session: &mut Session, model: Option<&str>, options: &ModelOptions) -> Option<String> {
    let checks = session.check_classes(model, options);
    let mut lines = eqm::check_lines(&checks);
    // The branches chosen at translation and the unknowns dropped for zero coefficients, after
    // the lines of the classes, as notes (each naming its class when several were checked).
    let several = checks.len() > 1;
    for check in &checks {
        if let eqm::ClassVerdict::Model(Ok(summary)) = &check.verdict {
            let notes = summary.branch_choices.iter().chain(&summary.zero_coefficients);
            lines.extend(notes.map(|note| match several {
                true => format!("note: {}: {note}", check.name),
                false => format!("note: {note}"),
            }));
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}
