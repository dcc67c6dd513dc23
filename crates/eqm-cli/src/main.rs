//! The `eqm` command line. This is an edge of the system: it parses arguments (`args`), reads
//! files and the environment (`load`), calls the library API (`eqm`) in one module per command
//! (`commands`), prints what it returns and maps outcomes to exit codes (`output`). It decides
//! nothing about a model or a run itself: every such decision is the library's.

mod args;
mod commands;
mod load;
mod output;
mod plot;
mod termplot;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    quiet_about_closed_output();
    match std::panic::catch_unwind(move || eqm::with_compiler_stack(move || dispatch(cli))) {
        Ok(code) => code,
        // The reader of the output went away (`eqm run m.eqm | head`): there is nobody left to
        // tell, so the command ends as a shell expects of a command whose pipe closed.
        Err(payload) if is_closed_output(payload.as_ref()) => ExitCode::from(output::EXIT_CLOSED_OUTPUT),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// Printing to a closed standard output panics in Rust's `print!`; that panic is not a fault of
/// EQM, so its message and backtrace are not printed (every other panic still is).
fn quiet_about_closed_output() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_closed_output(info.payload()) {
            default_hook(info);
        }
    }));
}

/// Whether a panic's payload is `print!`'s report of a closed standard output.
fn is_closed_output(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}

/// Runs the command `cli` names.
fn dispatch(cli: Cli) -> ExitCode {
    let timings = cli.timings;
    match cli.command {
        Command::Check(model) => commands::check::main(&model, timings),
        Command::Flatten(model) => commands::flatten::main(&model, timings),
        Command::Explain {
            model,
            keep_aliases,
            steps,
            svg,
        } => commands::explain::main(&model, keep_aliases, steps, svg.as_deref(), timings),
        Command::Diagram { model, svg } => commands::diagram::main(&model, &svg, timings),
        Command::Run { model, run } => commands::run::main(&model, &run, timings),
        Command::Analyze { model, analyze } => commands::analyze::main(&model, &analyze, timings),
        Command::Repl(args) => commands::repl::main(&args, timings),
        Command::Library { package } => commands::library::main(package.as_deref()),
        Command::Fmu { model, fmi, kind, out } => {
            let version = if fmi == "3" {
                eqm::fmi::FmiVersion::Fmi3
            } else {
                eqm::fmi::FmiVersion::Fmi2
            };
            let kinds = eqm::fmi::Kinds {
                me: kind != "cs",
                cs: kind != "me",
            };
            commands::fmu::main(&model, version, kinds, out.as_deref(), timings)
        }
        Command::Serve { dir, port, host, open } => commands::serve::main(dir, port, host, open),
        Command::Import { file, out, format } => commands::import::main(&file, out.as_deref(), format),
        Command::Compare(args) => commands::compare::main(&commands::compare::CompareArgs {
            result: &args.result,
            reference: &args.reference,
            signals: args.signals.as_deref(),
            tolerance: args.tolerance,
            svg: args.svg.as_deref(),
        }),
    }
}
