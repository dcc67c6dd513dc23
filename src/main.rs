//! The `eqm` command line (shared/spec/cli.md). This is an edge of the system: it reads files,
//! calls the driver, prints results and maps outcomes to exit codes. It computes nothing itself.

use clap::{Parser, Subcommand};
use eqm::driver::{self, Session};
use eqm::graphview::{GraphView, TooLarge};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code for a model with errors (diagnostics printed).
const EXIT_MODEL_ERROR: u8 = 1;
/// Exit code for a usage error (bad flags, unreadable files).
const EXIT_USAGE: u8 = 2;

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
        /// Replay the colouring of the equation/variable graph step by step (seed 000's
        /// procedure), after the usual output.
        #[arg(long)]
        steps: bool,
        /// Draw the bipartite equation/variable graph with the matching in red into this SVG
        /// file.
        #[arg(long, value_name = "OUT.svg")]
        svg: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct ModelArgs {
    /// The `.eqm` files to read.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The model, as a dotted name (`Examples.SpringMass`, or a stdlib model); default: the only
    /// model in the files.
    #[arg(long, value_name = "M")]
    model: Option<String>,
    /// Override a parameter: `--param mass.m=2` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    params: Vec<(String, f64)>,
}

fn parse_param(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    let value: f64 = value.trim().parse().map_err(|_| format!("`{value}` is not a number"))?;
    if !value.is_finite() {
        return Err(format!("`{value}` is not a finite number"));
    }
    Ok((name.trim().to_string(), value))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    driver::with_compiler_stack(move || run(cli))
}

fn run(cli: Cli) -> ExitCode {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let args = match &cli.command {
        Command::Check(a) | Command::Flatten(a) | Command::Explain { model: a, .. } => a,
    };
    let mut session = match load(&args.files) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = eqm::flatten::Options {
        parameters: args.params.clone(),
    };
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
            } => session
                .analyze(args.model.as_deref(), &options, *keep_aliases)
                .map(|a| {
                    let mut text = eqm::explain::explain(&a);
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
                }),
            Command::Flatten(_) => session.flatten(args.model.as_deref(), &options).map(|f| f.print()),
            Command::Check(_) => session.flatten(args.model.as_deref(), &options).map(|flat| {
                format!(
                    "{}: {} variables, {} equations: no errors",
                    flat.name,
                    flat.variables.len(),
                    flat.equations.len()
                )
            }),
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

/// Reads and parses every file. An unreadable file is a usage error (exit 2).
fn load(files: &[PathBuf]) -> Result<Session, ExitCode> {
    let mut session = Session::new();
    session.add_embedded_stdlib();
    if let Some(paths) = std::env::var_os("EQMPATH") {
        for dir in std::env::split_paths(&paths) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                eprintln!("warning: EQMPATH directory {} cannot be read", dir.display());
                continue;
            };
            // Sorted, so that the library is the same whatever order the file system lists.
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "eqm"))
                .collect();
            files.sort();
            for file in files {
                if let Ok(text) = std::fs::read_to_string(&file) {
                    session.add_library_file(file.display().to_string(), text);
                }
            }
        }
    }
    for path in files {
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = match String::from_utf8(bytes) {
                    Ok(t) => t,
                    Err(e) => {
                        eprintln!(
                            "error: {} is not valid UTF-8 (invalid byte at offset {})",
                            path.display(),
                            e.utf8_error().valid_up_to()
                        );
                        return Err(ExitCode::from(EXIT_USAGE));
                    }
                };
                session.add_file(path.display().to_string(), text);
            }
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return Err(ExitCode::from(EXIT_USAGE));
            }
        }
    }
    Ok(session)
}

/// Prints diagnostics and maps them to the exit code.
fn finish(session: &mut Session, color: bool) -> ExitCode {
    let rendered = session.render_diagnostics(color);
    eprint!("{rendered}");
    if session.has_errors() {
        ExitCode::from(EXIT_MODEL_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_timings(session: &Session) {
    for t in &session.timings {
        eprintln!("{:>12}: {:>10.3} ms", t.stage, t.time.as_secs_f64() * 1e3);
    }
}
