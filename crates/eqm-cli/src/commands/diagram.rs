//! `eqm diagram`: the model's component diagram, laid out by the library and written as SVG.

use crate::args::ModelArgs;
use crate::load;
use crate::output::{EXIT_USAGE, color, finish, print_timings};
use std::path::Path;
use std::process::ExitCode;

/// Runs `eqm diagram`, writing the drawing to `path`; see the module documentation.
pub(crate) fn main(args: &ModelArgs, path: &Path, timings: bool) -> ExitCode {
    let color = color();
    let (mut session, options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let diagram = if session.has_errors() {
        None
    } else {
        session.diagram(args.model.as_deref(), &options)
    };
    let drawn = diagram.map(|diagram| {
        let started = std::time::Instant::now();
        let svg = eqm::diagram::svg(&diagram);
        session.record_time("draw", started.elapsed());
        (diagram, svg)
    });
    let code = finish(&mut session, color);
    if timings {
        print_timings(&session);
    }
    let Some((diagram, svg)) = drawn else {
        return code;
    };
    match std::fs::write(path, svg) {
        Ok(()) => {
            eprintln!(
                "wrote {} ({} components, {} connectors, {} connections)",
                path.display(),
                diagram.components.len(),
                diagram.connectors.len(),
                diagram.connections.len()
            );
            code
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            ExitCode::from(EXIT_USAGE)
        }
    }
}
