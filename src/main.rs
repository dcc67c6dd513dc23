//! The `eqm` command line (shared/spec/cli.md). This is an edge of the system: it reads files,
//! calls the driver, prints results and maps outcomes to exit codes. It computes nothing itself.

use clap::{Parser, Subcommand};
use eqm::driver::{self, Session};
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
    /// Check models: report every syntax error with its location. Exit 0 when there are none.
    Check {
        /// The `.eqm` files to read.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The model to check, as a dotted name (`Examples.SpringMass`).
        #[arg(long, value_name = "M")]
        model: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    driver::with_compiler_stack(move || run(cli))
}

fn run(cli: Cli) -> ExitCode {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    match cli.command {
        Command::Check { files, model } => {
            let mut session = match load(&files) {
                Ok(s) => s,
                Err(code) => return code,
            };
            if let Some(model) = &model {
                session.check_model_exists(model);
            }
            let code = finish(&mut session, color);
            if cli.timings {
                print_timings(&session);
            }
            if code == ExitCode::SUCCESS {
                eprintln!("checked {} file(s): no errors", files.len());
            }
            code
        }
    }
}

/// Reads and parses every file. An unreadable file is a usage error (exit 2).
fn load(files: &[PathBuf]) -> Result<Session, ExitCode> {
    let mut session = Session::new();
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
