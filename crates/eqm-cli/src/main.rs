//! The `eqm` command line. This is an edge of the system: it parses arguments, reads files,
//! calls the library API (`eqm`), prints what it returns and maps outcomes to exit codes. It
//! computes nothing itself.

mod analyze;
mod plot;
mod repl;
mod sweep;
mod termplot;

use clap::{Parser, Subcommand};
use eqm::{GraphView, IndexForm, Method, ModelOptions, RunError, RunSettings, Session, Stabilize, Tableau, TooLarge};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code for a model with errors (diagnostics printed).
const EXIT_MODEL_ERROR: u8 = 1;
/// Exit code for a usage error (bad flags, unreadable files).
const EXIT_USAGE: u8 = 2;
/// Exit code for a simulation that failed (results up to the failure are written).
const EXIT_SIMULATION: u8 = 3;

#[derive(Parser)]
#[command(
    name = "eqm",
    version,
    about = "EQM: an equation-based modeling language — compiler, simulator and REPL",
    long_about = "EQM compiles Modelica-flavoured `.eqm` models (components with connectors, \
                  acausal equations) and shows what the compiler did.\n\n\
                  Exit codes: 0 success, 1 the model is wrong (diagnostics printed), \
                  2 usage error, 3 the simulation failed."
)]
struct Cli {
    /// Print the wall time of each pipeline stage on stderr.
    #[arg(short = 'v', long = "timings", global = true)]
    timings: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a model: parse, resolve and flatten it, and report every error with its location.
    Check(ModelArgs),
    /// Print the flat model: variables with their attributes and every scalar equation, each
    /// tagged with where it came from.
    Flatten(ModelArgs),
    /// Explain the structural analysis: states, aliases removed, which equation solves for
    /// which unknown, the sorted assignments and the algebraic loops with their tearing.
    Explain {
        #[command(flatten)]
        model: ModelArgs,
        /// Keep alias equations (`a = b`) in the system, to see every equation as written.
        #[arg(long)]
        keep_aliases: bool,
        /// Replay the colouring of the equation/variable graph step by step (each equation or
        /// unknown with one uncoloured edge in turn), after the usual output.
        #[arg(long)]
        steps: bool,
        /// Draw the bipartite equation/variable graph with the matching in red into this SVG
        /// file.
        #[arg(long, value_name = "OUT.svg")]
        svg: Option<PathBuf>,
    },
    /// Draw the model's component diagram: its components as boxes (System Dynamics components
    /// as stocks, clouds, flows and converters) and its connections, laid out automatically.
    Diagram {
        #[command(flatten)]
        model: ModelArgs,
        /// The SVG file to write the diagram to.
        #[arg(long, value_name = "OUT.svg", required = true)]
        svg: PathBuf,
    },
    /// Simulate a model and write the results as CSV (to standard output, or `--out FILE`).
    Run {
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        run: Box<RunArgs>,
    },
    /// Analyse a model before simulating it: its steady state and invariants, the linearisation
    /// there (the matrix A with the states' names), the eigenvalues with their time constants,
    /// damping and participating states, stability and the stiffness ratio.
    Analyze {
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        analyze: analyze::AnalyzeArgs,
    },
    /// An interactive session: load models, simulate, change parameters without recompiling,
    /// compare runs, evaluate expressions over the results. With standard input not a terminal,
    /// or --script, it runs the commands and prints plain results.
    Repl(repl::ReplArgs),
    /// Print the classes of a standard-library package as a Markdown table (kind, connectors,
    /// parameters with defaults and units, description), or without PACKAGE the packages.
    Library {
        /// A package's full name, such as `Modelica.Blocks.Math` or `Mechanics`.
        package: Option<String>,
    },
}

/// Options of `eqm run`; unset ones come from the model's `experiment` annotation, then from
/// built-in defaults.
///
/// The numeric options take values that start with `-` (`allow_hyphen_values`; clap's
/// `allow_negative_numbers` misses `-1e-3`): a start time may be negative, and `--rtol -1` must
/// reach the check of the settings, which says that the value is invalid, instead of being
/// taken for an unknown option.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Start time (default: experiment StartTime, else 0).
    #[arg(long, value_name = "T0", allow_hyphen_values = true)]
    pub(crate) start: Option<f64>,
    /// Stop time (default: experiment StopTime, else 1).
    #[arg(long, value_name = "T1", allow_hyphen_values = true)]
    pub(crate) stop: Option<f64>,
    /// Integration method: euler, heun, midpoint, rk4, ab2, ab4 (explicit, fixed step), rkf45,
    /// dopri5, tsit5, vern6, vern7, vern8, vern9 (explicit, adaptive; the vern pairs of order 6
    /// to 9 for tight tolerances), implicit-euler, trapezoid, bdf, radau5 (stiff: adaptive, or
    /// fixed step with --step), or auto (dopri5, switching to bdf while the model is stiff; -v
    /// reports the switches). Default: the model's `__eqm(solver = ...)` annotation, else auto.
    #[arg(long, value_name = "NAME")]
    pub(crate) solver: Option<String>,
    /// A Butcher tableau file defining an explicit or diagonally implicit Runge-Kutta method to
    /// use instead of --solver (fixed step, or adaptive when it has an embedded weight row); the
    /// format is in docs/language.md and examples/tableaux/.
    #[arg(long, value_name = "FILE", conflicts_with = "solver")]
    pub(crate) tableau: Option<PathBuf>,
    /// Relative tolerance of adaptive methods (default: experiment Tolerance, else 1e-6).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub(crate) rtol: Option<f64>,
    /// Absolute tolerance of adaptive methods (default: the relative tolerance).
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    pub(crate) atol: Option<f64>,
    /// Step size of fixed-step methods (default: the model's `__eqm(step = ...)` annotation, else
    /// the output interval, at most (stop-start)/100).
    /// Given with implicit-euler, trapezoid, bdf (order 5), radau5 or an implicit tableau with
    /// embedded weights, it turns off their step size control: every step has size H. rkf45,
    /// dopri5, tsit5, vern6-vern9, auto and explicit tableaux with embedded weights always
    /// control their step size and ignore it (with a note).
    #[arg(long, value_name = "H", allow_hyphen_values = true)]
    pub(crate) step: Option<f64>,
    /// Output spacing (default: experiment Interval, else the model's `__eqm` step, else
    /// (stop-start)/500).
    #[arg(long, value_name = "DT", allow_hyphen_values = true)]
    pub(crate) interval: Option<f64>,
    /// The most rows the output interval may ask for (default 10000000); a run that would
    /// write more is refused before it starts.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) max_rows: Option<u64>,
    /// Variables to write, comma separated (default: states and all named model variables).
    #[arg(long, value_name = "a,b.c,...", value_delimiter = ',')]
    pub(crate) vars: Option<Vec<String>>,
    /// Result file (`.csv`); default: standard output.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Variables to plot, comma separated (needs --plot-out).
    #[arg(long, value_name = "a,b", value_delimiter = ',', requires = "plot_out")]
    pub(crate) plot: Option<Vec<String>>,
    /// Evaluate the model with the reference interpreter instead of native code (for
    /// comparisons; the results agree).
    #[arg(long)]
    pub(crate) interpreter: bool,
    /// The plot file (`.svg` or `.png`).
    #[arg(long, value_name = "FILE.svg", requires = "plot")]
    pub(crate) plot_out: Option<PathBuf>,
    /// Constraint projection of models with invariants: `K=k` sets the gain of the
    /// correction `d/dt g = -k g`, `off` integrates the plain field (to see the drift); default:
    /// the model's `stabilize(K = k)` annotation, else the fastest rate of the model at the start
    /// (at least 10/(stop - start)).
    #[arg(long, value_name = "K=k|off", value_parser = parse_stabilize)]
    pub(crate) stabilize: Option<Stabilize>,
    /// Form of a high-index model: `embedding` (all differentiated variables are states, the
    /// constraints kept by projection), `dummy` (dummy derivatives: a static state choice), or
    /// `auto` (the default: dummy derivatives only when the constraints are linear with constant
    /// coefficients, so the static choice stays valid).
    #[arg(long = "index-reduction", value_name = "auto|embedding|dummy", value_parser = parse_index_form, default_value = "auto")]
    pub(crate) index_reduction: IndexForm,
    /// Run every combination of parameter values (repeatable): `NAME=A:STEP:B` (from A to B in
    /// steps of STEP) or `NAME=v1,v2,...`. The model is compiled once (again for each value of
    /// a structural parameter, with a note), the runs share the cores, and one CSV holds them
    /// all with a column per swept parameter in front of `time`; --plot draws each variable
    /// once per run.
    #[arg(long, value_name = "NAME=A:STEP:B|v1,v2,...", value_parser = sweep::parse_axis, allow_hyphen_values = true)]
    pub(crate) sweep: Vec<eqm::SweepAxis>,
}

fn parse_stabilize(s: &str) -> Result<Stabilize, String> {
    if s == "off" {
        return Ok(Stabilize::Off);
    }
    let value = s.strip_prefix("K=").unwrap_or(s);
    match value.parse::<f64>() {
        Ok(k) if k.is_finite() && k > 0.0 => Ok(Stabilize::Gain(k)),
        _ => Err(format!("`{s}` is not K=<positive number> or off")),
    }
}

fn parse_index_form(s: &str) -> Result<IndexForm, String> {
    match s {
        "auto" => Ok(IndexForm::Auto),
        "embedding" => Ok(IndexForm::Embedding),
        "dummy" => Ok(IndexForm::Dummy),
        _ => Err(format!("`{s}` is not auto, embedding or dummy")),
    }
}

#[derive(clap::Args)]
struct ModelArgs {
    /// The `.eqm` files to read (none when --model names a standard-library model).
    #[arg(required_unless_present = "model", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The model, as a dotted name (`Examples.SpringMass`, or a standard-library model such as
    /// `Mechanics.Translational.Mass`); default: the only model in the files.
    #[arg(long, value_name = "M")]
    model: Option<String>,
    /// Override a parameter: `--param mass.m=2` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    params: Vec<(String, f64)>,
}

pub(crate) fn parse_param(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    // A Boolean parameter takes `true` or `false`.
    let value: f64 = match value.trim() {
        "true" => 1.0,
        "false" => 0.0,
        v => v
            .parse()
            .map_err(|_| format!("`{value}` is not a number, `true` or `false`"))?,
    };
    if !value.is_finite() {
        return Err(format!("`{value}` is not a finite number"));
    }
    Ok((name.trim().to_string(), value))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    eqm::with_compiler_stack(move || run(cli))
}

/// `eqm library [PACKAGE]`: the table of the classes below PACKAGE, or the packages.
fn library(package: Option<&str>) -> ExitCode {
    let (classes, diagnostics) = eqm::library_doc::library_classes();
    if !diagnostics.is_empty() {
        eprintln!(
            "the standard library has {} diagnostics; `eqm check` on a model that uses it shows them",
            diagnostics.len()
        );
    }
    let Some(package) = package else {
        for package in eqm::library_doc::packages(&classes) {
            println!("{package}");
        }
        return ExitCode::SUCCESS;
    };
    match eqm::library_doc::package_table(&classes, package) {
        Some(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("error: `{package}` is no package of the standard library; `eqm library` lists them");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    if let Command::Repl(args) = &cli.command {
        return repl::main(args, cli.timings);
    }
    if let Command::Library { package } = &cli.command {
        return library(package.as_deref());
    }
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let args = match &cli.command {
        Command::Check(a)
        | Command::Flatten(a)
        | Command::Explain { model: a, .. }
        | Command::Diagram { model: a, .. }
        | Command::Run { model: a, .. }
        | Command::Analyze { model: a, .. } => a,
        // Handled above: a session loads its files itself, the library needs no files.
        Command::Repl(_) | Command::Library { .. } => return ExitCode::SUCCESS,
    };
    let mut session = match load(&args.files, args.model.as_deref(), &[]) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let model = args.model.as_deref();
    let mut options = ModelOptions {
        parameters: args.params.clone(),
        ..ModelOptions::default()
    };
    if let Command::Run { run: run_args, .. } = &cli.command {
        options.index_form = run_args.index_reduction;
        return simulate(&mut session, model, run_args, &options, color, cli.timings);
    }
    if let Command::Analyze {
        analyze: analyze_args, ..
    } = &cli.command
    {
        return analyze::run(&mut session, model, analyze_args, options, color, cli.timings);
    }
    if let Command::Diagram { svg, .. } = &cli.command {
        return draw(&mut session, model, &options, svg, color, cli.timings);
    }
    // The drawing for `explain --svg` with its node counts; written after the text is printed.
    let mut drawing: Option<(Result<String, TooLarge>, usize, usize)> = None;
    let output = if session.has_errors() {
        None
    } else {
        match &cli.command {
            Command::Explain {
                keep_aliases,
                steps,
                svg,
                ..
            } => {
                options.keep_aliases = *keep_aliases;
                session.analyze_explained(model, &options).map(|(a, mut text)| {
                    if *steps || svg.is_some() {
                        let view = GraphView::new(&a);
                        if *steps {
                            text.push('\n');
                            text.push_str(&view.steps());
                        }
                        if svg.is_some() {
                            drawing = Some((view.svg(), view.equations.len(), view.variables.len()));
                        }
                    }
                    text
                })
            }
            Command::Flatten(_) => session.flatten(model, &options).map(|f| f.print()),
            Command::Run { .. }
            | Command::Diagram { .. }
            | Command::Analyze { .. }
            | Command::Repl(_)
            | Command::Library { .. } => None,
            Command::Check(_) => {
                // One line per class, as the library words it.
                let lines = eqm::check_lines(&session.check_classes(model, &options));
                (!lines.is_empty()).then(|| lines.join("\n"))
            }
        }
    };
    let code = finish(&mut session, color);
    if cli.timings {
        print_timings(&session);
    }
    match (output, &cli.command) {
        (Some(summary), Command::Check(_)) => eprintln!("{summary}"),
        (Some(text), _) => print!("{text}"),
        (None, _) => {}
    }
    if let (Command::Explain { svg: Some(path), .. }, Some((result, equations, variables))) = (&cli.command, drawing) {
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

/// `eqm diagram`: the component diagram of the model, written as SVG to `path`.
fn draw(
    session: &mut Session,
    model: Option<&str>,
    options: &ModelOptions,
    path: &std::path::Path,
    color: bool,
    timings: bool,
) -> ExitCode {
    let diagram = if session.has_errors() {
        None
    } else {
        session.diagram(model, options)
    };
    let drawn = diagram.map(|diagram| {
        let started = std::time::Instant::now();
        let svg = eqm::diagram::svg(&diagram);
        session.record_time("draw", started.elapsed());
        (diagram, svg)
    });
    let code = finish(session, color);
    if timings {
        print_timings(session);
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

/// `eqm run`: compile, check the settings, open the output, and stream the rows to it with a
/// progress bar on a terminal.
/// The method `--tableau FILE` or `--solver NAME` names, if either is given; the message of a
/// usage error otherwise.
pub(crate) fn chosen_method(solver: Option<&str>, tableau: Option<&std::path::Path>) -> Result<Option<Method>, String> {
    if let Some(path) = tableau {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        return Tableau::parse(&text)
            .map(|t| Some(Method::Tableau(Box::new(t))))
            .map_err(|e| format!("{}: {e}", path.display()));
    }
    match solver {
        Some(name) => Method::parse(name).map(Some).ok_or_else(|| {
            let known: Vec<&str> = Method::NAMED.iter().map(|m| m.name()).collect();
            format!("unknown solver `{name}`; known: {}", known.join(", "))
        }),
        None => Ok(None),
    }
}

/// The settings of a run with options `run` (without its variables); the message of a usage
/// error for an unknown solver or an unreadable tableau.
pub(crate) fn run_settings(run: &RunArgs) -> Result<RunSettings, String> {
    // Without --solver or --tableau the model's annotation, else `auto`, chooses the method.
    let method = chosen_method(run.solver.as_deref(), run.tableau.as_deref())?;
    Ok(RunSettings {
        start: run.start,
        stop: run.stop,
        interval: run.interval,
        rtol: run.rtol,
        atol: run.atol,
        step: run.step,
        method,
        interpreter: run.interpreter,
        stabilize: run.stabilize,
        variables: None,
        max_rows: run.max_rows,
    })
}

fn simulate(
    session: &mut Session,
    model: Option<&str>,
    run: &RunArgs,
    options: &ModelOptions,
    color: bool,
    timings: bool,
) -> ExitCode {
    let settings = match run_settings(run) {
        Ok(settings) => settings,
        Err(message) => return usage(message),
    };
    if !run.sweep.is_empty() {
        let settings = RunSettings {
            variables: run.vars.clone(),
            ..settings
        };
        return sweep::run(session, model, run, options, settings, color, timings);
    }
    let compiled = if session.has_errors() {
        None
    } else {
        session.compile(model, options)
    };
    let Some(mut model) = compiled else {
        return finish(session, color);
    };
    let settings = default_stop(&mut model, settings);
    match model.check_settings(&settings) {
        Ok(notes) => notes.iter().for_each(|note| eprintln!("note: {note}")),
        // A value of the model's experiment annotation is the model's error, at its location.
        Err(RunError::Model(d)) => {
            session.push_diagnostic(*d);
            return finish(session, color);
        }
        Err(e) => return usage(e.to_string()),
    }
    if let Some(path) = &run.plot_out
        && path.extension().is_none_or(|e| e != "svg" && e != "png")
    {
        return usage(format!("{}: a plot file must end in .svg or .png", path.display()));
    }
    // The plotted variables are columns too, so the rows carry their values.
    let mut wanted: Option<Vec<String>> = run.vars.clone();
    if let (Some(list), Some(plot)) = (&mut wanted, &run.plot) {
        for name in plot {
            if !list.contains(name) {
                list.push(name.clone());
            }
        }
    }
    let columns = match model.columns(wanted.as_deref()) {
        Ok(c) => c,
        Err(d) => {
            session.push_diagnostic(d);
            return finish(session, color);
        }
    };
    let sink: Box<dyn std::io::Write> = match &run.out {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => return usage(format!("cannot write {}: {e}", path.display())),
        },
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let mut writer = match eqm::CsvWriter::new(sink, &names) {
        Ok(w) => w,
        Err(e) => return usage(format!("cannot write the results: {e}")),
    };
    // The plotted columns, checked before the run so that a typo does not cost a simulation.
    let plot_names = run.plot.clone().unwrap_or_default();
    let mut plotted: Vec<(usize, plot::Series)> = match model.find_columns(&columns, &plot_names) {
        Ok(indices) => indices
            .into_iter()
            .map(|k| {
                let series = plot::Series {
                    name: columns[k].name.clone(),
                    unit: columns[k].unit.as_deref().map(str::to_string),
                    points: Vec::new(),
                };
                (k, series)
            })
            .collect(),
        Err(d) => {
            session.push_diagnostic(d);
            return finish(session, color);
        }
    };
    let (start, stop) = model.time_span(&settings);
    let started = std::time::Instant::now();
    // A progress bar on a terminal, shown only once a run has taken about a second, so short
    // runs print nothing extra; its position is the simulated time.
    let show_progress = std::io::stderr().is_terminal();
    let mut progress: Option<indicatif::ProgressBar> = None;
    let result = model.simulate_into(&settings, &columns, &mut |t: f64, values: &[f64]| {
        for (k, series) in &mut plotted {
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
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    // Rows computed before a failure are kept: flush whatever happens.
    let flushed = writer.flush();
    let code = match result {
        Ok(report) => {
            session.record_time("jacobian", report.jacobian_time);
            session.record_time("simulate", report.simulate_time);
            session.record_time("jit compile", report.compile_time);
            if timings {
                print_report(&model, &report);
            }
            if let Some((time, message)) = &report.summary.terminated {
                eprintln!("note: the model called terminate at time {time}: {message}");
            }
            for warning in &report.summary.warnings {
                session.push_diagnostic(warning.clone());
            }
            finish(session, color)
        }
        Err(RunError::Model(d)) => {
            session.push_diagnostic(*d);
            finish(session, color)
        }
        Err(failed @ RunError::Failed { .. }) => failure(session, color, failed, "simulation"),
        Err(e @ (RunError::Io(_) | RunError::Settings(_))) => usage(e.to_string()),
    };
    if let Err(e) = flushed {
        return usage(format!("cannot write the results: {e}"));
    }
    // The plot shows what was computed, also when the run failed part way.
    if let Some(path) = &run.plot_out {
        let series: Vec<plot::Series> = plotted.into_iter().map(|(_, s)| s).collect();
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

/// `settings` with a stop time when neither `--stop` nor the model's experiment gives one:
/// five times the model's slowest time scale after the start (`eqm::stability::time_scales_for`),
/// with a note; unchanged (stop one time unit after the start) when the model's time scales
/// cannot be found.
pub(crate) fn default_stop(model: &mut eqm::Model, settings: RunSettings) -> RunSettings {
    if settings.stop.is_some() || model.experiment().stop_time.is_some() {
        return settings;
    }
    // The time scales come from a dense eigenvalue decomposition, whose cost grows with the
    // cube of the number of states: a large model keeps the fixed stop time instead of paying
    // more for choosing it than for the run.
    let states = model.program().states().len();
    if states > eqm::stability::MAX_STATES_FOR_TIME_SCALES {
        eprintln!(
            "note: no stop time given: the run ends at the default stop time; the model has {states} states, too many to find its time scales quickly (give --stop)"
        );
        return settings;
    }
    let Some(scales) = eqm::stability::time_scales_for(model) else {
        return settings;
    };
    let start = settings.start.or(model.experiment().start_time).unwrap_or(0.0);
    let stop = start + 5.0 * scales.t_max;
    eprintln!(
        "note: no stop time given: the run ends at {}, five times the model's slowest time scale T_max = {} after the start",
        eqm::format_number(stop),
        eqm::format_number(scales.t_max)
    );
    RunSettings {
        stop: Some(stop),
        ..settings
    }
}

/// What `-v` prints about a finished run.
pub(crate) fn print_report(model: &eqm::Model, report: &eqm::RunReport) {
    let summary = &report.summary;
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
}

/// Reads every file and the library directories of `EQMPATH`, and parses them with the texts
/// `typed` (each `(name, text)`, user files that do not come from the file system: classes
/// typed into the REPL). An unreadable file is a usage error (exit 2).
pub(crate) fn load(files: &[PathBuf], model: Option<&str>, typed: &[(String, String)]) -> Result<Session, ExitCode> {
    let mut library: Vec<(String, String)> = Vec::new();
    if let Some(paths) = std::env::var_os("EQMPATH") {
        for dir in std::env::split_paths(&paths) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                eprintln!("warning: EQMPATH directory {} cannot be read", dir.display());
                continue;
            };
            // Sorted, so that the library is the same whatever order the file system lists.
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "eqm"))
                .collect();
            paths.sort();
            for file in paths {
                if let Ok(text) = std::fs::read_to_string(&file) {
                    library.push((file.display().to_string(), text));
                }
            }
        }
    }
    // Bytes, not text: a file that is not UTF-8 is the model's error (E0109, at its line and
    // column), reported with the others by the library.
    let mut user: Vec<(String, Vec<u8>)> = Vec::new();
    for path in files {
        match std::fs::read(path) {
            Ok(bytes) => user.push((path.display().to_string(), bytes)),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return Err(ExitCode::from(EXIT_USAGE));
            }
        }
    }
    user.extend(
        typed
            .iter()
            .map(|(name, text)| (name.clone(), text.clone().into_bytes())),
    );
    let mut session = Session::with_source_bytes(user, &library, model);
    // The data files a model names (`readMatrix`) are read from the file system too.
    session.set_file_reader(|path: &std::path::Path| std::fs::read_to_string(path));
    Ok(session)
}

/// Prints diagnostics and maps them to the exit code.
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
    eprintln!("error: the {what} failed at time {time}: {message}");
    ExitCode::from(EXIT_SIMULATION)
}

pub(crate) fn finish(session: &mut Session, color: bool) -> ExitCode {
    let rendered = session.render_diagnostics(color);
    eprint!("{rendered}");
    if session.has_errors() {
        ExitCode::from(EXIT_MODEL_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

pub(crate) fn print_timings(session: &Session) {
    for t in session.timings().stages() {
        eprintln!("{:>12}: {:>10.3} ms", t.stage, t.time.as_secs_f64() * 1e3);
    }
}
