//! `eqm analyze` (and the REPL's `:analyze`): has the library compile the model as its analysis
//! needs it (`Session::compile_for_analysis`: the state-space form, its own inputs and
//! outputs), asks for its analysis (`eqm::analyze`) and the advice on stop time, step and
//! method (`eqm::stability`), and prints the report or its JSON, draws the eigenvalues over a
//! method's stability region (`--svg`), or tabulates the analysis across parameter values
//! (`--sweep`). Exit codes: 0 when the analysis
//! ran, whatever it found (no steady state, an unstable one, a singular system are results,
//! stated in the report); 1 for a model that is wrong or that the analysis cannot handle
//! (`E08xx`); 2 for usage errors; 3 when the simulation that `--at` needs fails.

use crate::args::{AnalyzeArgs, ModelArgs};
use crate::load::{self, chosen_method};
use crate::output::{EXIT_USAGE, color, failure, finish, print_timings, usage};
use eqm::analyze::AnalyzeOptions;
use eqm::{ModelOptions, RunError, Session, SweepError};
use std::process::ExitCode;

/// Runs `eqm analyze` on the model `args` names; see the module documentation.
pub(crate) fn main(args: &ModelArgs, analyze: &AnalyzeArgs, timings: bool) -> ExitCode {
    let (mut session, options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    run(&mut session, args.model.as_deref(), analyze, options, color(), timings)
}

/// Analyses `model` of `session` with the options `args` (the model's parameter values in
/// `options`) and prints the outcome; see the module documentation.
pub(crate) fn run(
    session: &mut Session,
    model: Option<&str>,
    args: &AnalyzeArgs,
    options: ModelOptions,
    color: bool,
    timings: bool,
) -> ExitCode {
    let method = match chosen_method(args.solver.as_deref(), args.tableau.as_deref()) {
        Ok(method) => method,
        Err(message) => return usage(message),
    };
    let user_tableau = method.as_ref().filter(|m| matches!(m, eqm::Method::Tableau(_)));
    if session.has_errors() {
        return finish(session, color);
    }
    let request = AnalyzeOptions::of_model(args.at, args.from.clone());
    if !args.sweep.is_empty() {
        let started = std::time::Instant::now();
        let swept = match eqm::analyze::sweep(session, model, &options, &args.sweep, &request) {
            Ok(swept) => Some(swept),
            Err(SweepError::Axes(message)) => return usage(message),
            Err(SweepError::Model) => None,
        };
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
    let Some(mut compiled) = session.compile_for_analysis(model, &options) else {
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
