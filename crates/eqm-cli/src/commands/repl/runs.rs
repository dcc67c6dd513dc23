//! The REPL's runs: `:run` (one simulation kept in memory by name, planned by the library as
//! `eqm run` plans it: [`eqm::Model::plan_run`]) and `:sweep` (every combination of parameter
//! values, printed as a table of final values).

use super::commands::{restore, series, short, write_result};
use super::help::print_clap;
use super::{Repl, Run};
use crate::args::{RunArgs, parse_param};
use crate::commands::sweep;
use crate::load;
use crate::output::{PrintingSink, failure, print_notes, print_timings, report_run};
use crate::plot;
use clap::Parser;
use eqm::{RunError, RunReport, SimulationResult, SweepAxis, SweepError};
use std::sync::atomic::Ordering;

/// `:run`'s options: those of `eqm run`.
#[derive(Parser)]
#[command(
    name = ":run",
    no_binary_name = true,
    disable_version_flag = true,
    about = "Simulate the current model with the options of `eqm run`, keeping the run in memory \
             (`:run ... as NAME`; the latest is `last`); --out also writes it (.csv, .parquet, .arrow or .mat)"
)]
struct RunLine {
    #[command(flatten)]
    run: Box<RunArgs>,
    /// A parameter value for this run only (repeatable); `:set` keeps one for the next runs.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    params: Vec<(String, f64)>,
}

/// What a `:run` computed: its rows (also of a run that stopped or failed part way), how it
/// ended when it reported, and its wall time.
struct Computed {
    result: SimulationResult,
    report: Option<RunReport>,
    elapsed: std::time::Duration,
    /// What a result file of the run says about it: the model and the experiment.
    info: eqm::ResultFileInfo,
}

impl Repl {
    /// `:run [options] [as NAME]`.
    pub(super) fn run(&mut self, mut args: Vec<String>) {
        let mut name = None;
        if args.len() >= 2 && args[args.len() - 2] == "as" {
            name = args.pop();
            args.pop();
        }
        let line = match RunLine::try_parse_from(&args) {
            Ok(line) => line,
            Err(e) => return print_clap(&e),
        };
        let (run, once) = (line.run, line.params);
        let settings = match load::run_settings(&run) {
            Ok(s) => s,
            Err(message) => return eprintln!("error: {message}"),
        };
        if !run.sweep.is_empty() {
            let options = self.options();
            sweep::run(
                &mut self.session,
                self.current.as_deref(),
                &run,
                &options,
                settings,
                self.color,
                self.timings,
            );
            self.session.take_diagnostics();
            return;
        }
        let name = name.unwrap_or_else(|| format!("run{}", self.runs.len() + 1));
        if name == "last" {
            return eprintln!("error: `last` always names the latest run; choose another name");
        }
        let mut changes = self.changes();
        for (n, v) in &once {
            let sep = if changes.is_empty() { "" } else { ", " };
            changes.push_str(&format!("{sep}{n}={}", eqm::format_number(*v)));
        }
        let Some(computed) = self.simulate(&settings, &once, run.plot.as_deref().unwrap_or_default()) else {
            return;
        };
        self.keep(name, changes, computed, &run);
    }

    /// Simulates the current model with `settings`, the parameter values `once` for this run
    /// only, and the variables `plotted` among the columns; `None` when it did not start.
    fn simulate(
        &mut self,
        settings: &eqm::RunSettings,
        once: &[(String, f64)],
        plotted: &[String],
    ) -> Option<Computed> {
        let (kept_parameters, kept_starts) = (self.parameters.clone(), self.starts.clone());
        let interrupted = self.interrupted.clone();
        self.compiled()?;
        // The model and the session are separate fields, used together below.
        let model = self.model.as_mut()?;
        for (n, v) in once {
            if model.parameters().iter().any(|p| p.name == *n && p.structural) {
                eprintln!("error: `{n}` is structural: `:set {n}={v}` compiles the model again with it");
                return None;
            }
            if let Err(d) = model.set_parameter(n, *v) {
                restore(model, &kept_parameters, &kept_starts);
                self.session.push_diagnostic(d);
                self.report();
                return None;
            }
        }
        let (notes, plan) = model.plan_run(settings, plotted);
        print_notes(&notes);
        let plan = match plan {
            Ok(plan) => plan,
            Err(e) => {
                restore(model, &kept_parameters, &kept_starts);
                match e {
                    RunError::Model(d) => self.session.push_diagnostic(*d),
                    e => eprintln!("error: {e}"),
                }
                self.report();
                return None;
            }
        };
        let (mut time, mut values) = (Vec::new(), Vec::new());
        interrupted.store(false, Ordering::SeqCst);
        let started = std::time::Instant::now();
        let rows = |t: f64, row: &[f64]| {
            if interrupted.load(Ordering::SeqCst) {
                return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
            }
            time.push(t);
            values.extend_from_slice(row);
            Ok(())
        };
        // The session keeps the rows, so the lines the model prints take standard output.
        let mut sink = PrintingSink { rows, to_stdout: true };
        // Ctrl-C also stops the run between steps, when its next row is far away.
        let cancellable = eqm::RunSettings {
            cancel: Some(interrupted.clone()),
            ..plan.settings.clone()
        };
        let result = model.simulate_into(&cancellable, &plan.columns, &mut sink);
        let elapsed = started.elapsed();
        let info = model.result_file_info(&plan.settings);
        if !once.is_empty() {
            restore(model, &kept_parameters, &kept_starts);
        }
        let report = match result {
            Ok(report) => {
                report_run(&mut self.session, model, &report, self.timings);
                Some(report)
            }
            Err(_) if interrupted.load(Ordering::SeqCst) => {
                eprintln!("interrupted: the {} rows computed so far are kept", time.len());
                None
            }
            Err(RunError::Model(d)) => {
                self.session.push_diagnostic(*d);
                None
            }
            Err(failed @ RunError::Failed { .. }) => {
                failure(&mut self.session, self.color, failed, "simulation");
                None
            }
            Err(e) => {
                eprintln!("error: {e}");
                None
            }
        };
        self.report();
        let summary = report.as_ref().map(|r| r.summary.clone()).unwrap_or_default();
        let result = SimulationResult::from_rows(plan.columns, time, values, summary);
        Some(Computed {
            result,
            report,
            elapsed,
            info,
        })
    }

    /// Prints what the run `name` computed, writes the files `run` asks for, and keeps it.
    fn keep(&mut self, name: String, changes: String, computed: Computed, run: &RunArgs) {
        let Computed {
            result,
            report,
            elapsed,
            info,
        } = computed;
        let rows = result.len();
        let span = match (result.time().first(), result.time().last()) {
            (Some(a), Some(b)) => format!(" from t = {} to {}", eqm::format_number(*a), eqm::format_number(*b)),
            _ => String::new(),
        };
        println!(
            "{name}: {rows} rows{span} in {:.1} ms{}",
            elapsed.as_secs_f64() * 1e3,
            if changes.is_empty() {
                String::new()
            } else {
                format!(" ({changes})")
            }
        );
        if let Some(path) = &run.out {
            write_result(&result, &info, path);
        }
        if let (Some(plot), Some(path)) = (&run.plot, &run.plot_out) {
            let series = series(&result, plot, None);
            match series.and_then(|s| plot::write(&s, path)) {
                Ok(()) => println!("wrote {}", path.display()),
                Err(e) => eprintln!("error: no plot written: {e}"),
            }
        }
        if self.timings {
            print_timings(&self.session);
        }
        self.runs.retain(|r| r.name != name);
        self.runs.push(Run {
            name,
            result,
            report,
            changes,
            info,
        });
    }

    /// `:sweep NAME=A:STEP:B ...`: every combination, compiled once, with a table of the
    /// final values of the first columns.
    pub(super) fn sweep(&mut self, args: &[String]) {
        let mut axes: Vec<SweepAxis> = Vec::new();
        for arg in args {
            match SweepAxis::parse(arg) {
                Ok(axis) => axes.push(axis),
                Err(message) => return eprintln!("error: {message}"),
            }
        }
        if axes.is_empty() {
            return eprintln!("error: `:sweep` needs NAME=A:STEP:B or NAME=v1,v2,...");
        }
        // The values set in the session give way to the swept ones.
        let options = self.options();
        let options = eqm::ModelOptions {
            parameters: options
                .parameters
                .into_iter()
                .filter(|(n, _)| !axes.iter().any(|a| a.name == *n))
                .collect(),
            ..options
        };
        let settings = eqm::RunSettings::default();
        let swept = eqm::sweep::sweep(
            &mut self.session,
            self.current.as_deref(),
            &options,
            &axes,
            &settings,
            None,
        );
        let sweep = match swept {
            Ok(sweep) => sweep,
            Err(SweepError::Axes(message)) => return eprintln!("error: {message}"),
            Err(SweepError::Model) => {
                self.report();
                return;
            }
        };
        self.report();
        print_notes(&sweep.notes);
        let shown: Vec<String> = sweep.columns().into_iter().take(4).collect();
        let mut header: Vec<String> = axes.iter().map(|a| a.name.clone()).collect();
        header.extend(shown.iter().map(|c| format!("final {c}")));
        println!(
            "{}",
            header.iter().map(|h| format!("{h:>14}")).collect::<Vec<_>>().join(" ")
        );
        for run in &sweep.runs {
            let mut cells: Vec<String> = run.values.iter().map(|v| eqm::format_number(*v)).collect();
            cells.extend(shown.iter().map(|c| run.final_value(c).map_or("-".to_string(), short)));
            if let Err(e) = &run.outcome {
                cells.push(format!("failed: {e}"));
            }
            println!(
                "{}",
                cells.iter().map(|h| format!("{h:>14}")).collect::<Vec<_>>().join(" ")
            );
        }
    }
}
