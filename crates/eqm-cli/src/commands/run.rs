//! `eqm run`: simulate a model and write its rows as CSV (to standard output or `--out`), or as
//! Parquet, Arrow IPC or MAT v4 by the extension of `--out`, with a progress bar on a terminal
//! and the plot `--plot-out` asks for; with `--sweep` the sweep (`commands::sweep`). Every
//! decision about the run (the stop time, the settings' check, the columns with the plotted
//! ones) is the library's, [`eqm::Model::plan_run`], as for the REPL's `:run`; this module
//! opens the files, streams the rows and prints. Exit codes: 1 for the model's errors, 2 for
//! usage errors (an unwritable file, an unknown result file extension, a setting that cannot
//! be used), 3 when the simulation fails (the rows before the failure are written).

use crate::args::{ModelArgs, RunArgs};
use crate::commands::sweep;
use crate::load;
use crate::output::{PrintingSink, color, failure, finish, print_notes, print_timings, report_run, usage};
use crate::plot;
use eqm::{Model, ModelOptions, ResultFormat, ResultWriter, RunError, RunPlan, RunReport, RunSettings, Session};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

/// Runs `eqm run`; see the module documentation.
pub(crate) fn main(args: &ModelArgs, run: &RunArgs, timings: bool) -> ExitCode {
    let color = color();
    let (mut session, mut options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    options.index_form = run.index_reduction;
    let settings = match load::run_settings(run) {
        Ok(settings) => settings,
        Err(message) => return usage(message),
    };
    // The result file's format is known before anything is compiled or run.
    if let Err(message) = result_format(run.out.as_deref()) {
        return usage(message);
    }
    let model = args.model.as_deref();
    if !run.sweep.is_empty() {
        return sweep::run(&mut session, model, run, &options, settings, color, timings);
    }
    simulate(&mut session, model, run, &options, &settings, color, timings)
}

/// The format of the result file `path` by its extension (CSV for standard output and for a
/// file without extension, such as `/dev/null`), or the message naming the supported ones.
pub(crate) fn result_format(path: Option<&Path>) -> Result<ResultFormat, String> {
    let Some(extension) = path.and_then(Path::extension) else {
        return Ok(ResultFormat::Csv);
    };
    let extension = extension.to_string_lossy();
    ResultFormat::from_extension(&extension).ok_or_else(|| {
        format!(
            "{}: EQM writes no result file ending in .{extension}; the supported extensions are {}",
            path.map(|p| p.display().to_string()).unwrap_or_default(),
            ResultFormat::extensions_list()
        )
    })
}

/// Whether `path` names a plot file EQM can write (`.svg` or `.png`); the usage error if not.
pub(crate) fn check_plot_file(path: Option<&Path>) -> Result<(), ExitCode> {
    match path {
        Some(path) if path.extension().is_none_or(|e| e != "svg" && e != "png") => Err(usage(format!(
            "{}: a plot file must end in .svg or .png",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Compiles `model`, plans the run with `settings`, and streams its rows to the output; see
/// the module documentation.
fn simulate(
    session: &mut Session,
    model: Option<&str>,
    run: &RunArgs,
    options: &ModelOptions,
    settings: &RunSettings,
    color: bool,
    timings: bool,
) -> ExitCode {
    let compiled = if session.has_errors() {
        None
    } else {
        session.compile(model, options)
    };
    let Some(mut model) = compiled else {
        return finish(session, color);
    };
    let plotted = run.plot.clone().unwrap_or_default();
    let (notes, plan) = model.plan_run(settings, &plotted);
    print_notes(&notes);
    let plan = match plan {
        Ok(plan) => plan,
        // A value of the model's experiment annotation is the model's error, at its location.
        Err(RunError::Model(d)) => {
            session.push_diagnostic(*d);
            return finish(session, color);
        }
        Err(e) => return usage(e.to_string()),
    };
    if let Err(code) = check_plot_file(run.plot_out.as_deref()) {
        return code;
    }
    let mut writer = match open_writer(&model, &plan, run.out.as_deref()) {
        Ok(writer) => writer,
        Err(message) => return usage(message),
    };
    let mut series: Vec<plot::Series> = plan
        .plotted
        .iter()
        .map(|&k| plot::Series {
            name: plan.columns[k].name.clone(),
            unit: plan.columns[k].unit.as_deref().map(str::to_string),
            points: Vec::new(),
        })
        .collect();
    // The lines the model prints take standard output unless the results do.
    let result = stream(&mut model, &plan, &mut series, writer.as_mut(), run.out.is_some());
    // Rows computed before a failure are kept: complete the file whatever happens.
    let flushed = writer.finish();
    let code = match result {
        Ok(report) => {
            session.record_time("jacobian", report.jacobian_time);
            session.record_time("simulate", report.simulate_time);
            session.record_time("jit compile", report.compile_time);
            report_run(session, &model, &report, timings);
            finish(session, color)
        }
        Err(RunError::Model(d)) => {
            session.push_diagnostic(*d);
            finish(session, color)
        }
        Err(failed @ RunError::Failed { .. }) => failure(session, color, failed, "simulation"),
        // The reader of the rows went away (`eqm run m.eqm | head`): nobody is left to tell.
        Err(RunError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            return ExitCode::from(crate::output::EXIT_CLOSED_OUTPUT);
        }
        Err(e @ (RunError::Io(_) | RunError::Settings(_))) => usage(e.to_string()),
    };
    match flushed {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            return ExitCode::from(crate::output::EXIT_CLOSED_OUTPUT);
        }
        Err(e) => return usage(format!("cannot write the results: {e}")),
        Ok(()) => {}
    }
    // The plot shows what was computed, also when the run failed part way.
    if let Some(path) = &run.plot_out {
        match plot::write(&series, path) {
            Ok(()) => eprintln!("wrote {}", path.display()),
            // The results are written; the plot that was asked for is not: a usage error,
            // unless the run itself failed (its exit code stands).
            Err(e) if code == ExitCode::SUCCESS => {
                if timings {
                    print_timings(session);
                }
                return usage(format!("no plot written: {e}"));
            }
            Err(e) => eprintln!("error: no plot written: {e}"),
        }
    }
    if timings {
        print_timings(session);
    }
    code
}

/// The writer of the results of `plan` to `path` in the format of its extension, or as CSV to
/// standard output; the message if the file cannot be written.
fn open_writer(model: &Model, plan: &RunPlan, path: Option<&Path>) -> Result<Box<dyn ResultWriter>, String> {
    let cannot = |e: std::io::Error| format!("cannot write the results: {e}");
    let Some(path) = path else {
        let names: Vec<&str> = plan.columns.iter().map(|c| c.name.as_str()).collect();
        let out = std::io::BufWriter::new(std::io::stdout().lock());
        return Ok(Box::new(eqm::CsvWriter::new(out, &names).map_err(cannot)?));
    };
    let format = result_format(Some(path))?;
    let file = std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let info = model.result_file_info(&plan.settings);
    eqm::result_writer(format, std::io::BufWriter::new(file), &plan.columns, &info).map_err(cannot)
}

/// Runs `plan`, writing each row to `writer` and the plotted values into `series`, with a
/// progress bar on a terminal once a run has taken about a second (so short runs print nothing
/// extra); its position is the simulated time.
fn stream(
    model: &mut Model,
    plan: &RunPlan,
    series: &mut [plot::Series],
    writer: &mut dyn ResultWriter,
    print_to_stdout: bool,
) -> Result<RunReport, RunError> {
    let (start, stop) = model.time_span(&plan.settings);
    let started = std::time::Instant::now();
    let show_progress = std::io::stderr().is_terminal();
    let mut progress: Option<indicatif::ProgressBar> = None;
    let rows = |t: f64, values: &[f64]| {
        for (k, series) in plan.plotted.iter().zip(series.iter_mut()) {
            series.points.push((t, values[*k]));
        }
        if show_progress {
            let done = ((t - start) / (stop - start) * 1000.0).clamp(0.0, 1000.0) as u64;
            match &progress {
                Some(bar) => bar.set_position(done),
                None if started.elapsed().as_secs_f64() > 1.0 => {
                    let bar = indicatif::ProgressBar::new(1000);
                    bar.set_style(
                        indicatif::ProgressStyle::with_template("{bar:40} {msg} (elapsed {elapsed}, about {eta} left)")
                            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                    );
                    bar.set_position(done);
                    progress = Some(bar);
                }
                None => {}
            }
            if let Some(bar) = &progress {
                bar.set_message(format!("t = {}", eqm::format_number(t)));
            }
        }
        writer.row(t, values)
    };
    let mut sink = PrintingSink {
        rows,
        to_stdout: print_to_stdout,
    };
    let result = model.simulate_into(&plan.settings, &plan.columns, &mut sink);
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    result
}
