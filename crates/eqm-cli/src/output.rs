//! What the commands share about output: the exit codes, the printing of diagnostics and
//! usage errors, of a failed run, of the report of a finished run (`-v`) and of the stages'
//! times. Input: the session and what the library returned. Output: text on standard error and
//! an exit code. Nothing here decides anything about a model or reads files.

use eqm::{Model, RunError, RunReport, Session};
use std::io::IsTerminal;
use std::process::ExitCode;

/// Exit code for a model with errors (diagnostics printed).
pub(crate) const EXIT_MODEL_ERROR: u8 = 1;
/// Exit code for a usage error (bad flags, unreadable files).
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit code for a simulation that failed (results up to the failure are written).
pub(crate) const EXIT_SIMULATION: u8 = 3;
/// The exit status of a command whose standard output was closed by its reader (128 + SIGPIPE,
/// what a shell reports for a command stopped by the signal): `eqm run m.eqm | head`.
pub(crate) const EXIT_CLOSED_OUTPUT: u8 = 141;

/// Whether diagnostics on standard error are coloured: on a terminal, unless `NO_COLOR` is set.
pub(crate) fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// What a finished run reports besides its rows, as `eqm run` and the REPL's `:run` print it:
/// the report with `-v` (`timings`), the note of a model that called `terminate`, and the
/// run's warnings (kept in the session, printed with its other diagnostics).
pub(crate) fn report_run(session: &mut Session, model: &Model, report: &RunReport, timings: bool) {
    if timings {
        print_report(model, report);
    }
    if let Some((time, message)) = &report.summary.terminated {
        eprintln!("note: the model called terminate at time {time}: {message}");
    }
    for warning in &report.summary.warnings {
        session.push_diagnostic(warning.clone());
    }
}

/// A sink of a run's rows (handed to `rows`) that prints each line the model prints
/// (`Modelica.Utilities.Streams.print`) when the run reaches it: to standard output, or to
/// standard error when standard output takes the results (`to_stdout` false).
pub(crate) struct PrintingSink<F> {
    pub(crate) rows: F,
    pub(crate) to_stdout: bool,
}

impl<F: FnMut(f64, &[f64]) -> std::io::Result<()>> eqm::RowSink for PrintingSink<F> {
    fn row(&mut self, time: f64, values: &[f64]) -> std::io::Result<()> {
        (self.rows)(time, values)
    }

    fn print(&mut self, _time: f64, line: &str) -> std::io::Result<()> {
        use std::io::Write;
        if self.to_stdout {
            writeln!(std::io::stdout().lock(), "{line}")
        } else {
            writeln!(std::io::stderr().lock(), "{line}")
        }
    }
}

/// Prints the notes of a run's plan (`note: ...`).
pub(crate) fn print_notes(notes: &[String]) {
    for note in notes {
        eprintln!("note: {note}");
    }
}

/// What `-v` prints about a finished run.
fn print_report(model: &Model, report: &RunReport) {
    let summary = &report.summary;
    for note in &summary.initialization {
        eprintln!("{note}");
    }
    eprintln!(
        "{} rows; {} steps, {} rejected, {} right-hand-side evaluations by the {}",
        summary.rows, summary.stats.steps, summary.stats.rejected, summary.stats.rhs_evals, summary.backend
    );
    if summary.stats.jacobians > 0 {
        eprintln!(
            "{} Jacobians ({} symbolic, {} sparse), {} LU factorisations",
            summary.stats.jacobians,
            summary.stats.symbolic_jacobians,
            summary.stats.sparse_jacobians,
            summary.stats.factorizations
        );
    }
    if let Some(note) = &report.jacobian {
        eprintln!("  {note}");
    }
    if let Some(form) = model.form() {
        eprintln!("high-index model: {}", form.reason());
    }
    if let Some(r) = &summary.invariants {
        match r.gain {
            Some((k, source)) => eprintln!(
                "{} invariant(s) kept by projection with K = {} ({source}), rank of G {}",
                r.invariants,
                eqm::format_number(k),
                r.rank
            ),
            None => eprintln!("{} invariant(s), not projected", r.invariants),
        }
        eprintln!(
            "  constraint residual max|g|: {:.3e} at the end, {:.3e} at most over the rows",
            r.final_residual, r.max_residual
        );
    }
    if summary.events.events > 0 {
        eprintln!("{} events", summary.events.events);
    }
    for note in summary.events.notes.iter().chain(&summary.solver_notes) {
        eprintln!("  {note}");
    }
    if let Some(path) = &summary.homotopy {
        eprintln!("{path}");
    }
}

/// Reports a usage error: the message, and the exit code of a usage error.
pub(crate) fn usage(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Reports a failed run (`RunError::Failed`: the warnings before it, its diagnostic, and a line
/// naming `what` failed and when) and gives the exit code of a failed simulation.
pub(crate) fn failure(session: &mut Session, color: bool, failed: RunError, what: &str) -> ExitCode {
    let RunError::Failed {
        time,
        message,
        diagnostic,
        warnings,
    } = failed
    else {
        eprintln!("error: {failed}");
        return ExitCode::from(EXIT_USAGE);
    };
    // What the run warned about before it failed comes first.
    for warning in warnings {
        session.push_diagnostic(warning);
    }
    if let Some(d) = diagnostic {
        session.push_diagnostic(*d);
    }
    finish(session, color);
    let time = eqm::format_number(time);
    eprintln!("error: the {what} failed at time {time}: {message}");
    ExitCode::from(EXIT_SIMULATION)
}

/// Prints the session's diagnostics (sorted, with excerpts, in colour when `color`) and gives
/// the exit code they call for: that of a model error when one is an error, else success.
pub(crate) fn finish(session: &mut Session, color: bool) -> ExitCode {
    let rendered = session.render_diagnostics(color);
    eprint!("{rendered}");
    if session.has_errors() {
        ExitCode::from(EXIT_MODEL_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints each stage's wall time (`-v`).
pub(crate) fn print_timings(session: &Session) {
    for t in session.timings().stages() {
        eprintln!("{:>12}: {:>10.3} ms", t.stage, t.time.as_secs_f64() * 1e3);
    }
}
