//! `eqm run --sweep` (and the REPL's `:run --sweep`): the command line's part of a parameter
//! sweep. It hands the axes to the library (`eqm::sweep`, which checks them and decides the
//! threads and the stop time), writes the one table (CSV, Parquet or Arrow IPC by the extension
//! of `--out`) and the plot, and maps the outcome to an exit code: 2 for a usage error (an axis
//! named twice, too many runs, an unwritable file, a `.mat` file), 1 for the model's errors, 3
//! when a run failed (every run's rows are still written).

use crate::args::RunArgs;
use crate::commands::run::{check_plot_file, result_format};
use crate::output::{EXIT_SIMULATION, finish, print_notes, print_timings, usage};
use crate::plot;
use eqm::{ModelOptions, RunError, RunSettings, Session, SweepAxis, SweepError};
use std::process::ExitCode;

/// Runs the sweep `run.sweep` of `model` with `settings` (those of `run`), the plotted
/// variables among the columns.
pub(crate) fn run(
    session: &mut Session,
    model: Option<&str>,
    run: &RunArgs,
    options: &ModelOptions,
    settings: RunSettings,
    color: bool,
    timings: bool,
) -> ExitCode {
    let settings = settings.with_plotted(run.plot.as_deref().unwrap_or_default());
    let axes = &run.sweep;
    if let Err(code) = check_plot_file(run.plot_out.as_deref()) {
        return code;
    }
    let format = match result_format(run.out.as_deref()) {
        Ok(format) if format.holds_sweeps() => format,
        Ok(format) => {
            return usage(format!(
                "a sweep cannot be written as .{}: a MAT v4 result file holds one run; write the \
                 sweep as {}",
                format.extension(),
                sweep_extensions()
            ));
        }
        Err(message) => return usage(message),
    };
    let started = std::time::Instant::now();
    let sweep = match eqm::sweep::sweep(session, model, options, axes, &settings, None) {
        Ok(sweep) => sweep,
        Err(SweepError::Axes(message)) => return usage(message),
        Err(SweepError::Model) => return finish(session, color),
    };
    session.record_time("sweep", started.elapsed());
    print_notes(&sweep.notes);
    if timings {
        eprintln!(
            "{} runs on {} thread(s), {} compilation(s)",
            sweep.runs.len(),
            sweep.threads,
            sweep.compilations
        );
    }
    // The plotted variables must be columns of the runs.
    let columns = sweep.columns();
    if let Some(missing) = run.plot.iter().flatten().find(|name| !columns.contains(name)) {
        return usage(format!("there is no variable `{missing}` to plot"));
    }
    let info = sweep.info.clone();
    let written = match &run.out {
        Some(path) => std::fs::File::create(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
            .and_then(|f| {
                sweep
                    .write_file(format, std::io::BufWriter::new(f), &info)
                    .map_err(|e| format!("cannot write the results: {e}"))
            }),
        None => sweep
            .write_csv(std::io::stdout().lock())
            .map_err(|e| format!("cannot write the results: {e}")),
    };
    if let Err(message) = written {
        return usage(message);
    }
    // How the runs ended: the model's warnings once each, then every failure.
    let failed = match report_outcomes(session, &sweep, color) {
        Ok(failed) => failed,
        Err(code) => return code,
    };
    let mut code = finish(session, color);
    if failed > 0 {
        eprintln!("error: {failed} of {} runs failed", sweep.runs.len());
        code = ExitCode::from(EXIT_SIMULATION);
    }
    if let Some(path) = &run.plot_out {
        let mut series = Vec::new();
        for name in run.plot.iter().flatten() {
            for r in &sweep.runs {
                let Some(values) = r.column(name) else { continue };
                series.push(plot::Series {
                    name: format!("{name} ({})", label(&sweep.axes, &r.values)),
                    unit: None,
                    points: r.time.iter().copied().zip(values).collect(),
                });
            }
        }
        match plot::write(&series, path) {
            Ok(()) => eprintln!("wrote {}", path.display()),
            Err(e) if code == ExitCode::SUCCESS => return usage(format!("no plot written: {e}")),
            Err(e) => eprintln!("error: no plot written: {e}"),
        }
    }
    if timings {
        print_timings(session);
    }
    code
}

/// The extensions of the formats a sweep can be written in, for a message.
fn sweep_extensions() -> String {
    eqm::ResultFormat::ALL
        .iter()
        .filter(|f| f.holds_sweeps())
        .map(|f| format!(".{}", f.extension()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The values of a run of the sweep over `axes`, for messages and legends: `k=1, m=2`.
fn label(axes: &[SweepAxis], values: &[f64]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{}={}", a.name, eqm::format_number(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reports how the runs of `sweep` ended: the model's warnings once each (kept in the session),
/// and a line for every run that failed. Returns the number of failed runs, or the exit code
/// when a run was refused for a setting or for the model's error (which every run shares).
fn report_outcomes(session: &mut Session, sweep: &eqm::Sweep, color: bool) -> Result<usize, ExitCode> {
    let mut failed = 0;
    let mut reported: Vec<String> = Vec::new();
    for r in &sweep.runs {
        let warnings = match &r.outcome {
            Ok(summary) => summary.warnings.clone(),
            Err(RunError::Failed { warnings, .. }) => warnings.clone(),
            Err(_) => Vec::new(),
        };
        for w in warnings {
            if !reported.contains(&w.message) {
                reported.push(w.message.clone());
                session.push_diagnostic(w);
            }
        }
        match &r.outcome {
            Ok(_) => {}
            Err(RunError::Settings(message)) => return Err(usage(message.clone())),
            Err(RunError::Model(d)) => {
                session.push_diagnostic((**d).clone());
                return Err(finish(session, color));
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: the run with {} failed: {e}", label(&sweep.axes, &r.values));
            }
        }
    }
    Ok(failed)
}
