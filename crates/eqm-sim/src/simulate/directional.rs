//! Directional derivatives of a model's values at a point: how the derivatives, outputs and
//! other variables change along a direction in the states and the inputs (an FMU's
//! `GetDirectionalDerivative`).
//!
//! Input: an instance to evaluate on (not the integrator's), the discrete values and relations
//! of the point, the time and states, the unknowns (slots), the knowns (states and parameters or
//! inputs) and the seed. Output: the derivative of each unknown along the seed. Derivatives of
//! the states' derivatives with respect to states come from the program's symbolic Jacobian
//! when it has one; every other combination (outputs, inputs, a program without one) is a
//! central difference along the seed, whose step is chosen from the size of the knowns, so one
//! pair of evaluations serves every unknown. The relations keep their values at the point, so
//! the derivative is that of the branch the model is in. It deliberately changes nothing for
//! good: the parameters perturbed are restored.

use super::point::slot_value;
use crate::instance::Instance;
use crate::interp::{JacobianOut, OdeRhs};
use crate::run::SimError;
use eqm_ir::failure::EvalFailure;
use eqm_ir::slot::Slot;
use nalgebra::DMatrix;

/// A variable a directional derivative is taken with respect to.
#[derive(Debug, Clone, PartialEq)]
pub enum Known {
    /// The state with this index.
    State(u32),
    /// An independent parameter or top-level input, by name.
    Parameter(String),
    /// The time (with the states seeded by their derivatives: the derivative along the
    /// solution, of an output with respect to time).
    Time,
}

/// The point a directional derivative is taken at.
pub(super) struct Point<'a> {
    pub t: f64,
    pub x: &'a [f64],
    /// The discrete values and relations of the point, by work slot.
    pub discrete: &'a [(u32, f64)],
}

/// `out[i]` = the derivative of `unknowns[i]` along `seed` over `knowns`, at `point`; a
/// failed evaluation is the run's failure there.
pub(super) fn directional(
    rows: &mut Instance<'_>,
    point: &Point<'_>,
    unknowns: &[Slot],
    knowns: &[Known],
    seed: &[f64],
    out: &mut [f64],
) -> Result<(), SimError> {
    let program = rows.program();
    let failed = |f: Derivative| match f {
        Derivative::Evaluation(f) => SimError::Failed {
            warnings: Vec::new(),
            time: point.t,
            message: "a directional derivative could not be computed".to_string(),
            diagnostic: Some(Box::new(program.failure_diagnostic(&f))),
        },
        Derivative::Refused(message) => SimError::Settings(message),
    };
    derivative(rows, point, unknowns, knowns, seed, out).map_err(failed)
}

/// Why a directional derivative could not be taken.
enum Derivative {
    Evaluation(EvalFailure),
    /// A parameter refused the value it was moved to.
    Refused(String),
}

impl From<EvalFailure> for Derivative {
    fn from(f: EvalFailure) -> Self {
        Derivative::Evaluation(f)
    }
}

/// [`directional`] with the failure as it happened.
fn derivative(
    rows: &mut Instance<'_>,
    point: &Point<'_>,
    unknowns: &[Slot],
    knowns: &[Known],
    seed: &[f64],
    out: &mut [f64],
) -> Result<(), Derivative> {
    let symbolic = knowns.iter().all(|k| matches!(k, Known::State(_)))
        && unknowns.iter().all(|u| matches!(u, Slot::Der(_)))
        && rows.has_jacobian();
    if symbolic {
        return from_jacobian(rows, point, unknowns, knowns, seed, out);
    }
    central_difference(rows, point, unknowns, knowns, seed, out)
}

/// The derivatives of state derivatives with respect to states from the symbolic Jacobian.
fn from_jacobian(
    rows: &mut Instance<'_>,
    point: &Point<'_>,
    unknowns: &[Slot],
    knowns: &[Known],
    seed: &[f64],
    out: &mut [f64],
) -> Result<(), Derivative> {
    set_discrete(rows, point);
    let n = point.x.len();
    let mut f_x = DMatrix::zeros(n, n);
    let mut dx = vec![0.0; n];
    let jacobian = JacobianOut {
        f_x: Some(&mut f_x),
        ..JacobianOut::default()
    };
    rows.jacobian(point.t, point.x, &mut dx, jacobian)?;
    for (o, unknown) in out.iter_mut().zip(unknowns) {
        let Slot::Der(row) = *unknown else {
            unreachable!("checked by the caller")
        };
        *o = knowns
            .iter()
            .zip(seed)
            .map(|(k, s)| match k {
                Known::State(col) => f_x[(row as usize, *col as usize)] * s,
                Known::Parameter(_) | Known::Time => unreachable!("checked by the caller"),
            })
            .sum();
    }
    Ok(())
}

/// The central difference along `seed`: `(v(p + h·seed) − v(p − h·seed)) / 2h`.
fn central_difference(
    rows: &mut Instance<'_>,
    point: &Point<'_>,
    unknowns: &[Slot],
    knowns: &[Known],
    seed: &[f64],
    out: &mut [f64],
) -> Result<(), Derivative> {
    let base: Vec<f64> = knowns.iter().map(|k| known_value(rows, point, k)).collect();
    let largest_seed = seed.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    if largest_seed == 0.0 {
        out.fill(0.0);
        return Ok(());
    }
    let size = base.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    // The step balances the truncation error (h²) against rounding (ε/h): ε^(1/3) of the scale.
    let h = f64::EPSILON.cbrt() * size / largest_seed;
    let plus = values_at(rows, point, unknowns, knowns, &base, seed, h);
    let minus = values_at(rows, point, unknowns, knowns, &base, seed, -h);
    restore(rows, knowns, &base);
    let (plus, minus) = (plus?, minus?);
    for (o, (p, m)) in out.iter_mut().zip(plus.iter().zip(&minus)) {
        *o = (p - m) / (2.0 * h);
    }
    Ok(())
}

/// The unknowns' values with the knowns at `base + step·seed`.
fn values_at(
    rows: &mut Instance<'_>,
    point: &Point<'_>,
    unknowns: &[Slot],
    knowns: &[Known],
    base: &[f64],
    seed: &[f64],
    step: f64,
) -> Result<Vec<f64>, Derivative> {
    let mut x = point.x.to_vec();
    let mut t = point.t;
    for ((k, b), s) in knowns.iter().zip(base).zip(seed) {
        match k {
            Known::State(i) => x[*i as usize] = b + step * s,
            Known::Time => t = b + step * s,
            Known::Parameter(name) => {
                // A value the parameter's own checks refuse makes no derivative either.
                if rows.set_param(name, b + step * s).is_err() {
                    return Err(Derivative::Refused(format!(
                        "`{name}` cannot be moved by {step:e} to take a derivative"
                    )));
                }
            }
        }
    }
    set_discrete(rows, point);
    let mut dx = vec![0.0; x.len()];
    OdeRhs::rhs(rows, t, &x, &mut dx)?;
    rows.outputs(t, &x, &mut dx)?;
    Ok(unknowns
        .iter()
        .map(|&slot| slot_value(rows, slot, t, &x, &dx))
        .collect())
}

/// The value of a known at the point.
fn known_value(rows: &Instance<'_>, point: &Point<'_>, known: &Known) -> f64 {
    match known {
        Known::State(i) => point.x[*i as usize],
        Known::Parameter(name) => rows.param(name).unwrap_or(0.0),
        Known::Time => point.t,
    }
}

/// The parameters among the knowns back at their values.
fn restore(rows: &mut Instance<'_>, knowns: &[Known], base: &[f64]) {
    for (k, b) in knowns.iter().zip(base) {
        if let Known::Parameter(name) = k {
            // The value was accepted before, so it is accepted again.
            let _ = rows.set_param(name, *b);
        }
    }
}

/// The point's discrete values and relations on `rows`.
fn set_discrete(rows: &mut Instance<'_>, point: &Point<'_>) {
    for &(k, value) in point.discrete {
        rows.set_work(k, value);
    }
}
