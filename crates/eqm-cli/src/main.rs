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
    eqm::with_compiler_stack(move || dispatch(cli))
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
        Command::Compare(args) => commands::compare::main(&commands::compare::CompareArgs {
            result: &args.result,
            reference: &args.reference,
            signals: args.signals.as_deref(),
            tolerance: args.tolerance,
            svg: args.svg.as_deref(),
        }),
    }
}
