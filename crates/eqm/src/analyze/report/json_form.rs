//! The JSON of an analysis, of an analysis sweep and of the advice, for scripts.
//!
//! Input: a [`ModelAnalysis`] (or a sweep's runs) and its [`Advice`]. Output: JSON written with
//! [`eqm_diag::json`], every number in its shortest round-trip form and `null` where it is
//! infinite or undefined; the fields in the order documented on [`json`]. It rounds nothing.

use super::super::{JacobianSource, Linearization, Mode, Point, SolveMethod, SweptAnalysis};
use super::{ModelAnalysis, Steady, stability_word, stiffness_verdict};
use eqm_diag::json::{Object, array, number, optional_number, string};
use eqm_integrators::stability::Advice;

fn numbers(values: &[f64]) -> String {
    array(values, |v| number(*v))
}

fn strings(values: &[String]) -> String {
    array(values, |s| string(s))
}

fn matrix(m: &nalgebra::DMatrix<f64>) -> String {
    array(0..m.nrows(), |i| array(0..m.ncols(), |j| number(m[(i, j)])))
}

/// Every number of the analysis (and of `advice`, under `"advice"`) as one JSON document: the
/// model, the time, the states, the start, the steady state, the invariants, the point of
/// linearisation, the algebraic variables, the linearisation, the modes, the stability, the
/// time scales and stiffness, the notes, the warnings and the advice.
pub fn json(a: &ModelAnalysis, advice: Option<&Advice>) -> String {
    let states = array(&a.states, |s| {
        Object::new()
            .field("name", string(&s.name))
            .field("unit", s.unit.as_deref().map_or("null".into(), string))
            .inline()
    });
    let point = match a.point {
        Point::SteadyState => "steady_state",
        Point::Time(_) => "time",
        Point::Start => "start",
    };
    let mut variables = Object::new();
    for (name, value) in &a.variables {
        variables.push(name, number(*value));
    }
    let invariants = array(&a.invariants, |i| {
        Object::new()
            .field("coefficients", numbers(&i.coefficients))
            .field("value", number(i.value))
            .inline()
    });
    Object::new()
        .field("model", string(&a.model))
        .field("time", number(a.time))
        .field("states", states)
        .field("start", numbers(&a.start))
        .field("steady_state", steady_json(&a.steady))
        .field("invariants", invariants)
        .field("point", string(point))
        .field("variables", variables.inline())
        .field("linearization", linearization_json(&a.linearization))
        .field("modes", array(&a.modal.modes, mode_json))
        .field("stability", string(stability_word(a.modal.stability)))
        .field("t_min", optional_number(a.modal.t_min))
        .field("t_max", optional_number(a.modal.t_max))
        .field("stiffness_ratio", optional_number(a.modal.stiffness))
        .field(
            "stiffness",
            a.modal
                .stiffness
                .map_or("null".into(), |r| string(stiffness_verdict(r))),
        )
        .field("diagonalisable", a.modal.diagonalisable.to_string())
        .field("notes", strings(&a.notes))
        .field("warnings", strings(&a.warnings))
        .field("advice", advice.map_or("null".into(), advice_json))
        .block()
}

/// The steady state with its `"status"`: found (with how), none (with the combination that
/// changes at a constant rate), singular, not found (with the reason) or not sought.
fn steady_json(steady: &Steady) -> String {
    let status = |s: &str| Object::new().field("status", string(s));
    match steady {
        Steady::Found(s) => {
            let (method, iterations, steps) = match s.method {
                SolveMethod::Newton { iterations } => ("newton", iterations, 0),
                SolveMethod::Continuation { steps, iterations } => ("continuation", iterations, steps),
            };
            status("found")
                .field("x", numbers(&s.x))
                .field("method", string(method))
                .field("iterations", iterations.to_string())
                .field("continuation_steps", steps.to_string())
                .field("residual", number(s.residual))
                .field("condition", number(s.condition))
                .field("digits_lost", number(s.digits_lost()))
                .inline()
        }
        Steady::Impossible {
            combination,
            rate,
            relations,
        } => status("none")
            .field("combination", numbers(combination))
            .field("rate", number(*rate))
            .field("relations_frozen", relations.to_string())
            .inline(),
        Steady::Singular { x } => status("singular").field("x", numbers(x)).inline(),
        Steady::NotFound { reason } => status("not_found").field("reason", string(reason)).inline(),
        Steady::NotSought => status("not_sought").inline(),
    }
}

/// The point of linearisation, how the Jacobian was found, and the matrices with the names of
/// the inputs and outputs.
fn linearization_json(l: &Linearization) -> String {
    let source = match l.source {
        JacobianSource::Symbolic => "symbolic",
        JacobianSource::Differences => "differences",
    };
    Object::new()
        .field("x", numbers(&l.x))
        .field("f", numbers(&l.f))
        .field("jacobian", string(source))
        .field("A", matrix(&l.a))
        .field("inputs", strings(&l.inputs))
        .field("outputs", strings(&l.outputs))
        .field("B", matrix(&l.b))
        .field("C", matrix(&l.c))
        .field("D", matrix(&l.d))
        .inline()
}

/// One mode: its eigenvalue, time scales, eigenvector, participation and coefficient.
fn mode_json(m: &Mode) -> String {
    Object::new()
        .field("re", number(m.eigenvalue.re))
        .field("im", number(m.eigenvalue.im))
        .field("time_constant", number(m.time_constant))
        .field("damping", optional_number(m.damping))
        .field("natural_frequency", optional_number(m.natural_frequency))
        .field("frequency", optional_number(m.frequency))
        .field("zero", m.zero.to_string())
        .field("vector_re", array(&m.vector, |c| number(c.re)))
        .field("vector_im", array(&m.vector, |c| number(c.im)))
        .field("participation", numbers(&m.participation))
        .field("coefficient_re", optional_number(m.coefficient.map(|c| c.re)))
        .field("coefficient_im", optional_number(m.coefficient.map(|c| c.im)))
        .inline()
}

/// An analysis sweep as JSON: the axes, and for each combination its values and the whole
/// analysis ([`json`]) or its error.
pub fn sweep_json(axes: &[crate::SweepAxis], runs: &[SweptAnalysis], notes: &[String]) -> String {
    let runs = array(runs, |run| {
        let run_object = Object::new().field("values", numbers(&run.values));
        match &run.outcome {
            Ok(a) => run_object.field("analysis", json(a, a.advice(None).as_ref()).trim_end()),
            Err(e) => run_object.field("error", string(&e.to_string())),
        }
        .inline()
    });
    let sweep = Object::new()
        .field("parameters", array(axes, |a| string(&a.name)))
        .field("runs", runs)
        .field("notes", strings(notes));
    format!("{}\n", sweep.inline())
}

/// The advice as one JSON object (for the `--json` output of an analysis): every number of
/// [`Advice`], an infinite largest stable step (every step is stable) as `null`.
pub fn advice_json(advice: &Advice) -> String {
    let verdicts = array(&advice.verdicts, |v| {
        Object::new()
            .field("method", string(&v.method))
            .field("stable", v.stable.to_string())
            .field("largest_step", number(v.largest_step))
            .field("implicit", v.implicit.to_string())
            .inline()
    });
    let recommended = match &advice.recommended {
        Some(r) => Object::new()
            .field("method", string(&r.method))
            .field("step", optional_number(r.step))
            .field("reason", string(&r.reason))
            .inline(),
        None => "null".to_string(),
    };
    let s = &advice.scales;
    Object::new()
        .field("t_min", number(s.t_min))
        .field("t_max", number(s.t_max))
        .field("stiffness", number(s.stiffness))
        .field("stiff", s.is_stiff().to_string())
        .field("t_sim", number(advice.t_sim))
        .field("step", number(advice.step))
        .field("interval", number(advice.interval))
        .field("growing", advice.growing.to_string())
        .field("methods", verdicts)
        .field("recommended", recommended)
        .inline()
}
