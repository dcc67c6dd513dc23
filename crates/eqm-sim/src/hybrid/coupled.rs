//! When-equations solved together with the continuous equations at an event.
//!
//! Input: the hybrid model at an event instant and the when-branches that fire in this round,
//! at least one of them coupled (an assignment reads a continuous variable computed from a
//! variable some when-clause assigns). Output: the assigned variables set to the solution of
//! the whole system (`x + y = 5; y = 7 - 2*x` gives `x = 2, y = 3`, not the value `y` takes from
//! the `x` before the event), with the continuous variables consistent with it; or a
//! diagnostic-bearing [`HybridError`] when the system is singular or Newton's method does not
//! converge.
//!
//! The unknowns are the Real variables the fired branches assign. With the continuous equations
//! solved for given values `y` of them (the right-hand side and the outputs program), each
//! assignment `v = e` gives one residual `v - e(y)`; `pre(v)` reads its own slot, held during
//! the event, so it stays fixed while `y` changes. Newton's method with a difference-quotient
//! Jacobian solves the residuals; these systems are small (a few when-equations). Integer and
//! Boolean variables have no derivative to take: for each `y` they are computed from their
//! assignments by substitution, repeated until they settle, before the residuals. Deliberately
//! not here: which branches fire (the event iteration decides) and the actions other than
//! assignments (they run afterwards, on the solution).

use super::*;

/// Newton iterations before the system counts as not converging.
const MAX_ITERATIONS: usize = 30;

/// One assignment of a fired branch: the work slot it sets, its value and where it is written,
/// and whether the variable is Integer or Boolean (`discrete`).
pub(super) struct Assignment {
    pub(super) slot: u32,
    pub(super) value: eqm_ir::expr::ExprId,
    pub(super) span: Span,
    pub(super) discrete: bool,
}

/// The assignments of the fired branches `fired` (clause, branch), in the order the program
/// sorted them.
pub(super) fn assignments(program: &ExecProgram, fired: &[(usize, usize)]) -> Vec<Assignment> {
    let events = program.events();
    let mut out = Vec::new();
    for &(w, b) in fired {
        for action in &events.whens[w].branches[b].1 {
            if let WhenAction::Assign { var, value, span } = action
                && let Some(Slot::Work(slot)) = action_slot(program, action)
            {
                out.push(Assignment {
                    slot,
                    value: *value,
                    span: *span,
                    discrete: program.symbols().get(*var).ty != eqm_ir::flat::ScalarType::Real,
                });
            }
        }
    }
    out
}

/// Solves the assignments together with the continuous equations at `(t, x)` and leaves the
/// solution in their slots (and every continuous variable computed from it). Returns whether
/// any assigned variable changed.
pub(super) fn solve(
    model: &mut HybridModel<'_>,
    assignments: &[Assignment],
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<bool, HybridError> {
    let everything_before: Vec<f64> = assignments
        .iter()
        .map(|a| model.ode.instance.work()[a.slot as usize])
        .collect();
    let changed = |model: &HybridModel<'_>| {
        assignments
            .iter()
            .zip(&everything_before)
            .any(|(a, b)| model.ode.instance.work()[a.slot as usize] != *b)
    };
    let (discrete, assignments): (Vec<&Assignment>, Vec<&Assignment>) = assignments.iter().partition(|a| a.discrete);
    if assignments.is_empty() {
        settle(model, &discrete, t, x, dx)?;
        return Ok(changed(model));
    }
    let n = assignments.len();
    let before: Vec<f64> = assignments
        .iter()
        .map(|a| model.ode.instance.work()[a.slot as usize])
        .collect();
    let mut y = before.clone();
    let mut residual = vec![0.0; n];
    let mut probe = vec![0.0; n];
    let mut jacobian = nalgebra::DMatrix::zeros(n, n);
    let span = assignments[0].span;
    let mut checked = false;
    for _ in 0..MAX_ITERATIONS {
        residuals(model, &assignments, &discrete, &y, t, x, dx, &mut residual)?;
        let scale = |k: usize| 1.0 + y[k].abs();
        // A solution counts once the Jacobian was seen to be regular: a system that holds for
        // every value (`y = 5 - x` with `x = 5 - y`) has no solution to choose.
        if checked && (0..n).all(|k| residual[k].abs() <= 1e-12 * scale(k)) {
            return Ok(changed(model));
        }
        checked = true;
        // The Jacobian of the residuals by forward difference quotients, one column per unknown.
        for j in 0..n {
            let h = f64::EPSILON.sqrt() * scale(j);
            let mut shifted = y.clone();
            shifted[j] += h;
            residuals(model, &assignments, &discrete, &shifted, t, x, dx, &mut probe)?;
            for i in 0..n {
                jacobian[(i, j)] = (probe[i] - residual[i]) / h;
            }
        }
        // Difference quotients carry relative errors near 1e-8, so a pivot that small
        // against the largest one is a singular matrix, not a badly scaled one.
        let lu = jacobian.clone().lu();
        let pivots = lu.u().diagonal().map(f64::abs);
        let regular = pivots.min() > 1e-6 * pivots.max();
        let step = lu
            .solve(&nalgebra::DVector::from_column_slice(&residual))
            .filter(|s| regular && s.iter().all(|v| v.is_finite()));
        let Some(step) = step else {
            return Err(failure(
                "E0703",
                t,
                span,
                "the when-equations that fire here and the continuous equations they are coupled with form a singular system",
                "the assigned variables do not determine themselves through the continuous equations; check that the when-equations and the equations they read are independent",
            ));
        };
        for (v, s) in y.iter_mut().zip(step.iter()) {
            *v -= s;
        }
    }
    Err(failure(
        "E0702",
        t,
        span,
        &format!(
            "the when-equations that fire here and the continuous equations they are coupled with did not converge in {MAX_ITERATIONS} Newton iterations"
        ),
        "give the assigned variables start values closer to the solution, or make the coupling explicit with pre(...)",
    ))
}

/// `v - e(y)` for each Real assignment, with the Integer and Boolean ones (`discrete`) settled
/// and the continuous equations solved for the values `y`.
#[allow(clippy::too_many_arguments)]
fn residuals(
    model: &mut HybridModel<'_>,
    assignments: &[&Assignment],
    discrete: &[&Assignment],
    y: &[f64],
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    out: &mut [f64],
) -> Result<(), HybridError> {
    for (a, &v) in assignments.iter().zip(y) {
        model.ode.instance.set_work(a.slot, v);
    }
    settle(model, discrete, t, x, dx)?;
    model.surfaces_at(t, x, dx)?;
    for ((a, &v), r) in assignments.iter().zip(y).zip(out.iter_mut()) {
        *r = v - model.ode.instance.event_value(a.value, a.span, t, x, dx)?;
    }
    Ok(())
}

/// Computes the Integer and Boolean assignments by substitution, with the continuous equations
/// solved after each, until a sweep changes nothing; a chain of n of them settles in n + 1
/// sweeps, so one that is still changing then is a cycle without a solution, reported.
fn settle(
    model: &mut HybridModel<'_>,
    discrete: &[&Assignment],
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<(), HybridError> {
    let Some(first) = discrete.first() else {
        return Ok(());
    };
    for _ in 0..=discrete.len() {
        let mut changed = false;
        for a in discrete {
            model.surfaces_at(t, x, dx)?;
            let v = model.ode.instance.event_value(a.value, a.span, t, x, dx)?;
            if model.ode.instance.work()[a.slot as usize] != v {
                changed = true;
                model.ode.instance.set_work(a.slot, v);
            }
        }
        if !changed {
            return Ok(());
        }
    }
    Err(failure(
        "E0712",
        t,
        first.span,
        "the Integer and Boolean when-equations that fire here assign each other's values in a cycle that does not settle",
        "break the cycle with `pre(...)` on one of the values read",
    ))
}

fn failure(code: &'static str, time: f64, span: Span, message: &str, help: &str) -> HybridError {
    HybridError::Event {
        code,
        time,
        message: message.to_string(),
        span,
        help: help.to_string(),
    }
}
