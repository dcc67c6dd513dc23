//! `eqm analyze`: compiles the model in its state-space form, asks the library for its analysis
//! (`eqm::analyze`) and the advice on stop time, step and method (`eqm::stability`), and prints
//! the report or its JSON, draws the eigenvalues over a method's stability region (`--svg`), or
//! tabulates the analysis across parameter values (`--sweep`). Exit codes: 0 when the analysis
//! ran, whatever it found (no steady state, an unstable one, a singular system are results,
//! stated in the report); 1 for a model that is wrong or that the analysis cannot handle
//! (`E08xx`); 2 for usage errors; 3 when the simulation that `--at` needs fails.

use crate::{EXIT_USAGE, chosen_method, failure, finish, parse_param, print_timings, usage};
use eqm::analyze::AnalyzeOptions;
use eqm::{IndexForm, ModelOptions, RunError, Session, SweepAxis};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `eqm analyze`.
#[derive(clap::Args)]
pub(crate) struct AnalyzeArgs {
    /// Linearise at time T of a simulation from the start instead of at the steady state.
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    at: Option<f64>,
    /// Start the search for the steady state (or the simulation of --at) from this start value
    /// of a variable (repeatable), to find another steady state.
    #[arg(long = "from", value_name = "NAME=VALUE", value_parser = parse_param)]
    from: Vec<(String, f64)>,
    /// Print every number as JSON instead of the report.
    #[arg(long)]
    json: bool,
    /// The method whose stability --svg draws (default: the recommended one); every named
    /// method is judged in the advice either way.
    #[arg(long, value_name = "NAME")]
    solver: Option<String>,
    /// A Butcher tableau file: its method is judged in the advice too, and drawn by --svg.
    #[arg(long, value_name = "FILE", conflicts_with = "solver")]
    tableau: Option<PathBuf>,
    /// Draw the eigenvalues times the advised step over the method's stability region.
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    /// Analyse for every value of a parameter (repeatable; every combination): a table of
    /// steady states and eigenvalues.
    #[arg(long, value_name = "NAME=A:STEP:B|v1,v2,...", value_parser = crate::sweep::parse_axis, allow_hyphen_values = true)]
    sweep: Vec<SweepAxis>,
}

/// Runs `eqm analyze`; see the module documentation.
pub(crate) fn run(
    session: &mut Session,
    model: Option<&str>,
    args: &AnalyzeArgs,
    mut options: ModelOptions,
    color: bool,
    timings: bool,
) -> ExitCode {
    let method = match chosen_method(args.solver.as_deref(), args.tableau.as_deref()) {
        Ok(method) => method,
        Err(message) => return usage(message),
    };
    let user_tableau = method.as_ref().filter(|m| matches!(m, eqm::Method::Tableau(_)));
    // An index-reduced model is linearised in its state-space form: the dummy-derivative
    // form's states (the embedding form's projection would add eigenvalues of its own).
    options.index_form = IndexForm::Dummy;
    if session.has_errors() {
        return finish(session, color);
    }
    let (inputs, outputs) = session
        .flatten(model, &options)
        .map(|flat| eqm::analyze::interface(&flat))
        .unwrap_or_default();
    let request = AnalyzeOptions {
        at: args.at,
        from: args.from.clone(),
        inputs,
        outputs,
    };
    if !args.sweep.is_empty() {
        if let Err(message) = crate::sweep::check_axes(&args.sweep, &options) {
            return usage(message);
        }
        let started = std::time::Instant::now();
        let swept = eqm::analyze::sweep(session, model, &options, &args.sweep, &request);
        session.record_time("analyze", started.elapsed());
        let code = finish(session, color);
        let Some((runs, notes)) = swept else { return code };
        if args.json {
            print!("{}", eqm::analyze::sweep_json(&args.sweep, &runs, &notes));
        } else {
            print!("{}", eqm::analyze::sweep_text(&args.sweep, &runs, &notes));
        }
        return code;
    }
    let Some(mut compiled) = session.compile(model, &options) else {
        return finish(session, color);
    };
    let started = std::time::Instant::now();
    let result = compiled.analyze(&request);
    session.record_time("analyze", started.elapsed());
    match result {
        Ok(analysis) => {
            let advice = analysis.advice(user_tableau);
            let code = finish(session, color);
            if timings {
                print_timings(session);
            }
            if args.json {
                print!("{}", eqm::analyze::json(&analysis, advice.as_ref()));
            } else {
                print!("{}", eqm::analyze::text(&analysis, advice.as_ref()));
            }
            if let Some(path) = &args.svg {
                // The method drawn: the one asked for, else the recommended one.
                let drawn = method.or_else(|| eqm::Method::parse(&advice.as_ref()?.recommended.as_ref()?.method));
                let (Some(drawn), Some(advice)) = (drawn, advice.as_ref()) else {
                    eprintln!("error: no stability picture: the model has no mode with a time scale");
                    return ExitCode::from(EXIT_USAGE);
                };
                let picture = eqm::stability::svg(&drawn, &analysis.timed_eigenvalues(), advice.step);
                let Some(picture) = picture else {
                    return usage(format!("no stability region is known for `{}`", drawn.name()));
                };
                if let Err(e) = std::fs::write(path, picture) {
                    return usage(format!("cannot write {}: {e}", path.display()));
                }
                eprintln!("wrote {}", path.display());
            }
            code
        }
        Err(RunError::Model(d)) => {
            session.push_diagnostic(*d);
            finish(session, color)
        }
        Err(failed @ RunError::Failed { .. }) => failure(session, color, failed, "analysis"),
        Err(e @ (RunError::Io(_) | RunError::Settings(_))) => usage(e.to_string()),
    }
}
