//! `eqm explain`: the structural analysis in words (states, aliases removed, which equation
//! solves for which unknown, the sorted assignments, the algebraic loops with their tearing),
//! with `--steps` the colouring of the equation/variable graph step by step, and with `--svg`
//! that graph drawn with its matching.

use crate::args::ModelArgs;
use crate::load;
use crate::output::{EXIT_USAGE, color, finish, print_timings};
use eqm::{GraphView, TooLarge};
use std::path::Path;
use std::process::ExitCode;

/// The drawing of `--svg` (or why it is too large) with its numbers of equations and
/// variables.
type Drawing = (Result<String, TooLarge>, usize, usize);

/// Runs `eqm explain`; see the module documentation.
pub(crate) fn main(args: &ModelArgs, keep_aliases: bool, steps: bool, svg: Option<&Path>, timings: bool) -> ExitCode {
    let color = color();
    let (mut session, mut options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    options.keep_aliases = keep_aliases;
    // The drawing is written after the text is printed.
    let mut drawing: Option<Drawing> = None;
    let text = if session.has_errors() {
        None
    } else {
        session
            .analyze_explained(args.model.as_deref(), &options)
            .map(|(analysis, mut text)| {
                if steps || svg.is_some() {
                    let view = GraphView::new(&analysis);
                    if steps {
                        text.push('\n');
                        text.push_str(&view.steps());
                    }
                    if svg.is_some() {
                        drawing = Some((view.svg(), view.equations.len(), view.variables.len()));
                    }
                }
                text
            })
    };
    let code = finish(&mut session, color);
    if timings {
        print_timings(&session);
    }
    if let Some(text) = text {
        print!("{text}");
    }
    if let (Some(path), Some((result, equations, variables))) = (svg, drawing) {
        match result {
            Ok(svg) => match std::fs::write(path, svg) {
                Ok(()) => eprintln!(
                    "wrote {} ({equations} equations, {variables} variables)",
                    path.display()
                ),
                Err(e) => {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    return ExitCode::from(EXIT_USAGE);
                }
            },
            // Too large is an answer, not a failure: the text output above still holds.
            Err(too_large) => eprintln!("note: {too_large}; no SVG written"),
        }
    }
    code
}
