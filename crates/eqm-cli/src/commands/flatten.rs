//! `eqm flatten`: print the flat model, its variables with their attributes and every scalar
//! equation tagged with where it came from.

use crate::args::ModelArgs;
use crate::load;
use crate::output::{color, finish, print_timings};
use std::process::ExitCode;

/// Runs `eqm flatten`; see the module documentation.
pub(crate) fn main(args: &ModelArgs, timings: bool) -> ExitCode {
    let color = color();
    let (mut session, options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let text = if session.has_errors() {
        None
    } else {
        session.flatten(args.model.as_deref(), &options).map(|f| f.print())
    };
    let code = finish(&mut session, color);
    if timings {
        print_timings(&session);
    }
    if let Some(text) = text {
        print!("{text}");
    }
    code
}
