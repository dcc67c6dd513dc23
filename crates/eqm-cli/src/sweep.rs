//! `eqm run --sweep`: the command line's part of a parameter sweep. It checks the axes, hands
//! them to the library (`eqm::sweep`), writes the one CSV table and the plot, and maps the
//! outcome to an exit code: 2 for a usage error (an axis named twice, too many runs, an
//! unwritable file), 1 for the model's errors, 3 when a run failed (every run's rows are
//! still written).

use crate::{EXIT_SIMULATION, RunArgs, finish, plot, print_timings, usage};
use eqm::sweep::{MAX_SWEEP_RUNS, SweepAxis};
use eqm::{ModelOptions, RunError, RunSettings, Session};
use std::process::ExitCode;

/// The value parser of `--sweep`.
pub(crate) fn parse_axis(s: &str) -> Result<SweepAxis, String> {
    SweepAxis::parse(s)
}

/// The usage errors of sweep axes: a parameter named twice, or also given with `--param`, or
/// more combinations than a sweep may have.
pub(crate) fn check_axes(axes: &[SweepAxis], options: &ModelOptions) -> Result<(), String> {
    for (i, axis) in axes.iter().enumerate() {
        if axes[..i].iter().any(|a| a.name == axis.name) {
            return Err(format!("--sweep names `{}` twice", axis.name));
        }
        if options.parameters.iter().any(|(n, _)| *n == axis.name) {
            return Err(format!("`{}` is given both by --param and by --sweep", axis.name));
        }
    }
    let runs = eqm::sweep::run_count(axes);
    if runs > MAX_SWEEP_RUNS as f64 {
        return Err(format!(
            "the sweep asks for {} runs, more than the {MAX_SWEEP_RUNS} it may run",
            eqm::format_number(runs)
        ));
    }
    Ok(())
}

/// Runs the sweep `run.sweep` of `model` with `settings` (whose variables this completes with
/// the plotted ones).
pub(crate) fn run(
    session: &mut Session,
    model: Option<&str>,
    run: &RunArgs,
    options: &ModelOptions,
    mut settings: RunSettings,
    color: bool,
    timings: bool,
) -> ExitCode {
    let axes = &run.sweep;
    if let Err(message) = check_axes(axes, options) {
        return usage(message);
    }
    if let Some(path) = &run.plot_out
        && path.extension().is_none_or(|e| e != "svg" && e != "png")
    {
        return usage(format!("{}: a plot file must end in .svg or .png", path.display()));
    }
    if let (Some(list), Some(plot)) = (&mut settings.variables, &run.plot) {
        for name in plot {
            if !list.contains(name) {
                list.push(name.clone());
            }
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = std::time::Instant::now();
    let sweep = if session.has_errors() {
        None
    } else {
        eqm::sweep::sweep(session, model, options, axes, &settings, threads)
    };
    let Some(sweep) = sweep else {
        return finish(session, color);
    };
    session.record_time("sweep", started.elapsed());
    for note in &sweep.notes {
        eprintln!("note: {note}");
    }
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
    let written = match &run.out {
        Some(path) => std::fs::File::create(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
            .and_then(|f| sweep.write_csv(f).map_err(|e| format!("cannot write the results: {e}"))),
        None => sweep
            .write_csv(std::io::stdout().lock())
            .map_err(|e| format!("cannot write the results: {e}")),
    };
    if let Err(message) = written {
        return usage(message);
    }
    // How the runs ended: the model's warnings once each, then every failure.
    let mut failed = 0;
    let mut reported: Vec<String> = Vec::new();
    let label = |values: &[f64]| -> String {
        axes.iter()
            .zip(values)
            .map(|(a, v)| format!("{}={}", a.name, eqm::format_number(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
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
            Err(RunError::Settings(message)) => return usage(message.clone()),
            Err(RunError::Model(d)) => {
                session.push_diagnostic((**d).clone());
                return finish(session, color);
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: the run with {} failed: {e}", label(&r.values));
            }
        }
    }
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
                    name: format!("{name} ({})", label(&r.values)),
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
