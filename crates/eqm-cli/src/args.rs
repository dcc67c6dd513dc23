//! The command line's vocabulary: the clap types of every command and option, and the value
//! parsers of option values. Input: the words of the command line (or of a REPL command, which
//! takes the options of `eqm run` and `eqm analyze`). Output: typed arguments. Nothing here
//! reads files or calls the library beyond parsing a value (a sweep axis).

use clap::{Parser, Subcommand};
use eqm::{IndexForm, Stabilize, SweepAxis};
use std::path::PathBuf;

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
pub(crate) struct Cli {
    /// Print the wall time of each pipeline stage on stderr.
    #[arg(short = 'v', long = "timings", global = true)]
    pub(crate) timings: bool,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Simulate a model and write the results as CSV (to standard output, or `--out FILE`;
    /// Parquet, Arrow or MAT v4 by the extension of FILE).
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
        analyze: AnalyzeArgs,
    },
    /// An interactive session: load models, simulate, change parameters without recompiling,
    /// compare runs, evaluate expressions over the results. With standard input not a terminal,
    /// or --script, it runs the commands and prints plain results.
    Repl(ReplArgs),
    /// Print the classes of a standard-library package as a Markdown table (kind, connectors,
    /// parameters with defaults and units, description), or without PACKAGE the packages.
    Library {
        /// A package's full name, such as `Modelica.Blocks.Math` or `Mechanics`.
        package: Option<String>,
    },
    /// Serve the web workbench for the model files of a folder: edit, check, run, plot and
    /// explain models in a browser. Prints the page's address with its access token; Ctrl-C
    /// stops it.
    Serve {
        /// The folder whose model files are served (default: the current directory).
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The port (default 8742, or the next free one of the 20 after it; 0 picks any free
        /// port).
        #[arg(long, value_name = "N")]
        port: Option<u16>,
        /// The address to listen on (default 127.0.0.1). Anyone who can reach another address
        /// and knows the token can read and write the folder's model files.
        #[arg(long, value_name = "ADDR")]
        host: Option<std::net::IpAddr>,
        /// Open the page in the system's browser.
        #[arg(long)]
        open: bool,
    },
    /// Compare a result with a reference result by the tube method of the Modelica Standard
    /// Library's reference results: each signal must stay inside a tube around the reference
    /// (half-width the tolerance times the signal's range in value, and the tolerance times the
    /// time span in time). Exit 0 when every signal passes, 1 when one fails, 2 for usage
    /// errors.
    Compare(CompareArgs),
    /// Import a system-dynamics model (XMILE `.xmile`, Stella `.stmx`, Vensim `.mdl`) and write it as an `.eqm`
    /// model on the SystemDynamics library (to standard output, or `--out FILE`).
    Import {
        /// The file to import.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The `.eqm` file to write (default: standard output).
        #[arg(long, value_name = "OUT.eqm")]
        out: Option<PathBuf>,
        /// The file's format, whatever its extension.
        #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
        format: Option<eqm::SdFormat>,
    },
    /// Export the model as a Functional Mock-up Unit (FMI 2.0 or 3.0): its description, EQM's
    /// FMU runtime library (`libeqm_fmu.so`: EQM_FMU_RUNTIME, else next to `eqm`) and the
    /// model's sources, which the runtime compiles when the FMU is instantiated.
    Fmu {
        #[command(flatten)]
        model: ModelArgs,
        /// The FMI version.
        #[arg(long = "fmi", value_name = "2|3", default_value = "2", value_parser = ["2", "3"])]
        fmi: String,
        /// The interfaces: Model Exchange, Co-Simulation or both.
        #[arg(long, value_name = "me|cs|both", default_value = "both", value_parser = ["me", "cs", "both"])]
        kind: String,
        /// The FMU file to write (default: the model's name with `.fmu`, in the current directory).
        #[arg(long, value_name = "M.fmu")]
        out: Option<PathBuf>,
    },
}

/// Arguments of `eqm compare`.
#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// The result to judge: a CSV file (as `eqm run` writes it), plain or gzip-compressed.
    #[arg(value_name = "RESULT.csv")]
    pub(crate) result: PathBuf,
    /// The reference result: a CSV file, plain or gzip-compressed (`.csv.gz`).
    #[arg(value_name = "REFERENCE.csv")]
    pub(crate) reference: PathBuf,
    /// The signals to compare: a file with the line `time`, then one name per line
    /// (`comparisonSignals.txt`); default: every signal of the reference.
    #[arg(long, value_name = "FILE")]
    pub(crate) signals: Option<PathBuf>,
    /// The tube's half-width relative to each signal's range and to the time span.
    #[arg(long, value_name = "R", default_value_t = eqm::compare::DEFAULT_TOLERANCE, allow_hyphen_values = true)]
    pub(crate) tolerance: f64,
    /// Write one SVG per signal into this directory: the reference, its tube and the result.
    #[arg(long, value_name = "DIR")]
    pub(crate) svg: Option<PathBuf>,
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
    /// Stop time (default: experiment StopTime, else five times the model's slowest time scale, or 1 when it has none).
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
    /// Result file: `.csv`, `.parquet`, `.arrow` (Arrow IPC) or `.mat` (MAT v4), by the
    /// extension; default: CSV to standard output.
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
    #[arg(long, value_name = "NAME=A:STEP:B|v1,v2,...", value_parser = SweepAxis::parse, allow_hyphen_values = true)]
    pub(crate) sweep: Vec<SweepAxis>,
}

/// The value parser of `--stabilize`.
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

/// The value parser of `--index-reduction`.
fn parse_index_form(s: &str) -> Result<IndexForm, String> {
    match s {
        "auto" => Ok(IndexForm::Auto),
        "embedding" => Ok(IndexForm::Embedding),
        "dummy" => Ok(IndexForm::Dummy),
        _ => Err(format!("`{s}` is not auto, embedding or dummy")),
    }
}

/// The model a command works on: its files, its name and parameter values.
#[derive(clap::Args)]
pub(crate) struct ModelArgs {
    /// The `.eqm` files to read (none when --model names a standard-library model).
    #[arg(required_unless_present = "model", value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// The model, as a dotted name (`Examples.SpringMass`, or a standard-library model such as
    /// `Mechanics.Translational.Mass`); default: the only model in the files (at the top
    /// level, else inside their packages).
    #[arg(long, value_name = "M")]
    pub(crate) model: Option<String>,
    /// Override a parameter: `--param mass.m=2` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub(crate) params: Vec<(String, f64)>,
    /// A library directory searched before `EQMPATH` and `MODELICAPATH` (repeatable): one that
    /// holds top-level packages (`Name/package.mo`, `Name.mo`), a package directory, or a
    /// single-file package `Name.mo`.
    #[arg(long = "library", value_name = "DIR")]
    pub(crate) libraries: Vec<PathBuf>,
    /// Read the files as system-dynamics models of this format whatever their extension
    /// (`.xmile`, `.stmx` and `.mdl` files are imported by their extension without it).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub(crate) format: Option<eqm::SdFormat>,
}

/// The value parser of `--format`: the name of a system-dynamics format.
pub(crate) fn parse_format(s: &str) -> Result<eqm::SdFormat, String> {
    eqm::SdFormat::from_name(s)
        .ok_or_else(|| format!("unknown format `{s}`; known: {}", eqm::SdFormat::NAMES.join(", ")))
}

/// The value parser of `--param` and `--from`: `NAME=VALUE` with a number, `true` or `false`.
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

/// Options of `eqm analyze`.
#[derive(clap::Args)]
pub(crate) struct AnalyzeArgs {
    /// Linearise at time T of a simulation from the start instead of at the steady state.
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub(crate) at: Option<f64>,
    /// Start the search for the steady state (or the simulation of --at) from this start value
    /// of a variable (repeatable), to find another steady state.
    #[arg(long = "from", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub(crate) from: Vec<(String, f64)>,
    /// Print every number as JSON instead of the report.
    #[arg(long)]
    pub(crate) json: bool,
    /// The method whose stability --svg draws (default: the recommended one); every named
    /// method is judged in the advice either way.
    #[arg(long, value_name = "NAME")]
    pub(crate) solver: Option<String>,
    /// A Butcher tableau file: its method is judged in the advice too, and drawn by --svg.
    #[arg(long, value_name = "FILE", conflicts_with = "solver")]
    pub(crate) tableau: Option<PathBuf>,
    /// Draw the eigenvalues times the advised step over the method's stability region.
    #[arg(long, value_name = "OUT.svg")]
    pub(crate) svg: Option<PathBuf>,
    /// Analyse for every value of a parameter (repeatable; every combination): a table of
    /// steady states and eigenvalues.
    #[arg(long, value_name = "NAME=A:STEP:B|v1,v2,...", value_parser = SweepAxis::parse, allow_hyphen_values = true)]
    pub(crate) sweep: Vec<SweepAxis>,
}

/// Arguments of `eqm repl`.
#[derive(clap::Args)]
pub(crate) struct ReplArgs {
    /// The `.eqm` files to load at the start.
    #[arg(value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Run the commands of this file instead of reading them from standard input.
    #[arg(long, value_name = "FILE")]
    pub(crate) script: Option<PathBuf>,
    /// A library directory searched before `EQMPATH` and `MODELICAPATH` (repeatable), as for
    /// `eqm run`.
    #[arg(long = "library", value_name = "DIR")]
    pub(crate) libraries: Vec<PathBuf>,
}
