//! The executable program and its reference interpreter: right-hand sides against derivatives
//! computed by hand, implicit equations and algebraic loops, functions and algorithm sections,
//! parameters changed without rebuilding, parameter conditions, the outputs of removed aliases,
//! failures with their diagnostics, and an explicit Euler integration of the spring-mass system.

use crate::pipeline::Pipeline;
use eqm_compile::exec::{ExecProgram, Instr};
use eqm_flatten::Sources;
use eqm_ir::failure::FailureKind;
use eqm_sim::instance::Instance;
use eqm_sim::interp::{Interpreter, OdeRhs};

mod aliases;
mod derivatives;
mod failures;
mod functions;
mod loops;
mod parameters;

/// The one place these tests call the pipeline: flatten `text` with the stdlib, analyse it and
/// build its executable program (or panic with the rendered diagnostics). The session holds the
/// sources that the program's spans refer to.
fn compile(name: &str, text: &str) -> (Sources, ExecProgram) {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file(name, text);
    let Some(analysis) = session.analyze(None, &eqm_flatten::Options::default(), false) else {
        panic!("{}", session.render_diagnostics(false));
    };
    match ExecProgram::build(analysis.dae.clone(), &analysis.plan) {
        Ok(program) => (session, program),
        Err(diagnostics) => {
            session.diagnostics = diagnostics;
            panic!("{}", session.render_diagnostics(false));
        }
    }
}

fn check(name: &str, text: &str) -> ExecProgram {
    compile(name, text).1
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", crate::REPO)).expect("example exists")
}

fn instance(program: &ExecProgram) -> Instance<'_> {
    Instance::new(program).unwrap_or_else(|d| panic!("{d:?}"))
}

/// The index of state `name` in `x`.
fn state(program: &ExecProgram, name: &str) -> usize {
    let v = program.lookup(name).unwrap_or_else(|| panic!("no variable `{name}`"));
    match program.slot_of(v) {
        Some(eqm_ir::slot::Slot::State(i)) => i as usize,
        other => panic!("`{name}` is not a state but {other:?}"),
    }
}

/// `x` with the named states set and the others at 0.
fn states(program: &ExecProgram, values: &[(&str, f64)]) -> Vec<f64> {
    let mut x = vec![0.0; program.layout().states];
    for (name, v) in values {
        x[state(program, name)] = *v;
    }
    x
}

/// The derivatives at `(t, x)`.
fn rhs(inst: &mut Instance, t: f64, x: &[f64]) -> Vec<f64> {
    let mut dx = vec![f64::NAN; inst.dim()];
    inst.rhs(t, x, &mut dx).unwrap_or_else(|f| panic!("{}", f));
    dx
}

/// The first algebraic loop of the right-hand side.
fn first_loop(program: &ExecProgram) -> &eqm_compile::exec::LoopBlock {
    program
        .rhs()
        .iter()
        .find_map(|i| match i {
            Instr::Loop(b) => Some(&**b),
            _ => None,
        })
        .expect("a loop")
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[track_caller]
fn assert_close(a: f64, b: f64, tol: f64) {
    assert!(close(a, b, tol), "{a} is not {b} (tolerance {tol})");
}

const CUBIC_SPRING: &str = "model CubicSpring \"The deflection d of a hardening spring follows from its force\"
  parameter Real k = 1;
  parameter Real k3 = 1;
  Real x(start = 2, fixed = true);
  Real d(start = 0.5);
equation
  k*d + k3*d^3 = x;
  der(x) = -d;
end CubicSpring;";

/// The start values of the states with the default parameters.
fn default_x0(program: &ExecProgram) -> Vec<f64> {
    eqm_sim::instance::default_start_values(program).expect("the program has start values")
}
