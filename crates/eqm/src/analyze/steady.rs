//! The steady state `f(x) = 0` of a model's states, with its linear invariants.
//!
//! Input: the model's field at a fixed time ([`Field`]) and a start point. Output: the linear
//! invariants of the field (combinations `w·x` whose rate `w·f(x)` is zero everywhere), or the
//! combination whose rate is a nonzero constant, which proves that no steady state exists; and
//! the steady state on the manifold the invariants fix through the start point, with how it was
//! found and the condition number of the system solved.
//!
//! Method: the invariants are the left null space of `∂f/∂x` taken at the start point and at
//! two points near it together (a direction that is null at three points apart is taken for a
//! linear invariant; a Jacobian that is only singular at the start point is not). The steady
//! state solves `Uᵀf(x) = 0, Wᵀ(x − x₀) = 0`, where the columns of `W` span the invariants and
//! those of `U` the rest: a square system whose Jacobian `[Uᵀ∂f/∂x; Wᵀ]` is regular at an
//! isolated steady state on the manifold. Newton's method with a backtracking line search
//! solves it from the start point; when that fails, pseudo-transient continuation (implicit
//! Euler steps whose step grows as the residual falls) follows the dynamics towards a stable
//! steady state and Newton finishes from there. A system whose Jacobian is singular at the
//! solution is reported as singular, never solved to an arbitrary point.
//!
//! Deliberately not done: nonlinear invariants are not detected (they leave the Jacobian
//! singular, which is reported); only one steady state is sought, from the start point given.

use super::field::{Field, norm_inf};
use eqm_ir::failure::EvalFailure;
use nalgebra::{DMatrix, DVector};

/// A linear invariant `Σ coefficients[i]·x[i] = value`, fixed by the start point.
#[derive(Debug, Clone, PartialEq)]
pub struct Invariant {
    /// One coefficient per state (zero for the states it does not contain).
    pub coefficients: Vec<f64>,
    pub value: f64,
}

/// What the left null space of the Jacobian says about steady states.
#[derive(Debug, Clone)]
pub(crate) struct NullSpace {
    /// An orthonormal basis of the invariants (columns).
    pub invariants: DMatrix<f64>,
    /// An orthonormal basis of the rest of the state space (columns).
    pub rest: DMatrix<f64>,
    /// A combination of the states whose rate is a nonzero constant, and that rate: there is no
    /// steady state.
    pub drift: Option<(Vec<f64>, f64)>,
}

/// How the steady state was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SolveMethod {
    /// Newton's method with a line search from the start point.
    Newton { iterations: usize },
    /// Pseudo-transient continuation, then Newton.
    Continuation { steps: usize, iterations: usize },
}

/// A steady state found.
#[derive(Debug, Clone)]
pub(crate) struct Solution {
    pub x: Vec<f64>,
    pub method: SolveMethod,
    /// `max |f(x)|` there.
    pub residual: f64,
    /// The 2-norm condition number of the system solved there (the Jacobian, bordered by the
    /// invariants).
    pub condition: f64,
}

/// Why no steady state was found.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// The Jacobian of the system is singular at the point reached.
    Singular { x: Vec<f64> },
    /// Neither Newton nor the continuation converged.
    NoConvergence { reason: String },
    /// The model could not be evaluated.
    Evaluation(EvalFailure),
}

impl From<EvalFailure> for Failure {
    fn from(f: EvalFailure) -> Failure {
        Failure::Evaluation(f)
    }
}

/// Relative size below which a singular value counts as zero.
const NULL_TOLERANCE: f64 = 1e-10;

/// The left null space of `∂f/∂x` at `x0` and two nearby points; see the module documentation.
pub(crate) fn null_space(field: &mut Field<'_, '_>, x0: &[f64], j0: &DMatrix<f64>) -> Result<NullSpace, EvalFailure> {
    let n = x0.len();
    let f0 = field.f(x0)?;
    // Two points apart from the start point in every state, in different directions, so that a
    // singularity of the start point alone (a state at rest, a zero concentration) is not taken
    // for an invariant. Where the model cannot be evaluated there, the start point decides alone.
    let finite = |j: &DMatrix<f64>| j.iter().all(|v| v.is_finite());
    if !finite(j0) {
        // Nothing can be said about invariants where the Jacobian is not defined.
        return Ok(NullSpace {
            invariants: DMatrix::zeros(n, 0),
            rest: DMatrix::identity(n, n),
            drift: None,
        });
    }
    let mut blocks = vec![j0.clone()];
    for (k, scale) in [(0usize, 0.01), (1, -0.013)] {
        let x: Vec<f64> = x0
            .iter()
            .enumerate()
            .map(|(i, v)| v + scale * v.abs().max(1.0) * (1.0 + ((i * (3 + 4 * k)) % 5) as f64) / 5.0)
            .collect();
        if let Ok((j, _)) = field.jacobian(&x)
            && finite(&j)
        {
            blocks.push(j);
        }
    }
    // The field's values at the start point are left in the instance for the callers.
    field.f(x0)?;
    let mut stacked = DMatrix::zeros(n, n * blocks.len());
    for (k, b) in blocks.iter().enumerate() {
        stacked.view_mut((0, k * n), (n, n)).copy_from(b);
    }
    let (u, sigma) = left_singular(&stacked);
    let largest = sigma.iter().copied().fold(0.0, f64::max);
    let null: Vec<usize> = (0..n)
        .filter(|&i| sigma[i] <= NULL_TOLERANCE * largest || largest == 0.0)
        .collect();
    let range: Vec<usize> = (0..n).filter(|i| !null.contains(i)).collect();
    let w = u.select_columns(&null);
    let rest = u.select_columns(&range);
    // On the null space the rate `wᵀf` is constant; where it is not zero, the combination moves
    // at that rate forever.
    let g = w.transpose() * DVector::from_column_slice(&f0);
    let scale = 1.0 + norm_inf(&f0);
    if g.norm() > 1e-9 * scale {
        let direction = &w * &g / g.norm();
        let mut drift: Vec<f64> = direction.iter().copied().collect();
        // `direction·f = |g|`, so the combination scaled by `1/k` moves at `|g|/k`.
        let rate = g.norm() / normalise(&mut drift);
        // Invariants are the part of the null space orthogonal to the drifting combination.
        let others = orthogonal_complement(&w, &direction);
        let columns = rest.ncols();
        let mut rest = rest.insert_column(columns, 0.0);
        rest.set_column(columns, &direction);
        return Ok(NullSpace {
            invariants: others,
            rest,
            drift: Some((drift, rate)),
        });
    }
    Ok(NullSpace {
        invariants: w,
        rest,
        drift: None,
    })
}

/// The left singular vectors of `m` (n rows, at least n columns) with their singular values,
/// all n of them (those beyond the rank included, with value zero).
fn left_singular(m: &DMatrix<f64>) -> (DMatrix<f64>, Vec<f64>) {
    let n = m.nrows();
    if n == 0 {
        return (DMatrix::zeros(0, 0), Vec::new());
    }
    // The SVD of `mᵀ` (at least as many rows as columns) has all n right singular vectors,
    // which are the left singular vectors of `m`. (The eigenvectors of `m mᵀ` would give them
    // too, but squaring halves the digits that tell a zero singular value from a small one.)
    let svd = m.transpose().svd(false, true);
    let v = svd.v_t.expect("asked for").transpose();
    (v, svd.singular_values.iter().copied().collect())
}

/// An orthonormal basis of the columns of `w` orthogonal to `d` (a unit vector in their span).
fn orthogonal_complement(w: &DMatrix<f64>, d: &DVector<f64>) -> DMatrix<f64> {
    let projected = w - d * (d.transpose() * w);
    let (u, sigma) = left_singular(&projected);
    let largest = sigma.iter().copied().fold(0.0, f64::max);
    let keep: Vec<usize> = (0..u.ncols())
        .filter(|&i| sigma[i] > 1e-8 * largest.max(1e-300))
        .collect();
    u.select_columns(&keep)
}

/// Scales `v` so that its largest entry in magnitude is +1 and returns the factor divided by.
fn normalise(v: &mut [f64]) -> f64 {
    let k = v
        .iter()
        .copied()
        .fold(0.0, |m: f64, a| if a.abs() > m.abs() { a } else { m });
    if k != 0.0 {
        v.iter_mut().for_each(|a| *a /= k);
    }
    k
}

/// The invariants in reduced row echelon form (each with a leading coefficient 1 in a state the
/// others do not contain, numbers within rounding of an integer rounded), with their values at
/// `x0`: the readable form of the basis.
pub(crate) fn readable_invariants(w: &DMatrix<f64>, x0: &[f64]) -> Vec<Invariant> {
    let m = w.ncols();
    let n = w.nrows();
    let mut rows = w.transpose();
    let mut pivot_row = 0;
    for col in 0..n {
        if pivot_row == m {
            break;
        }
        let (best, value) = (pivot_row..m)
            .map(|r| (r, rows[(r, col)].abs()))
            .fold((pivot_row, 0.0), |b, c| if c.1 > b.1 { c } else { b });
        if value < 1e-9 {
            continue;
        }
        rows.swap_rows(pivot_row, best);
        let p = rows[(pivot_row, col)];
        for j in 0..n {
            rows[(pivot_row, j)] /= p;
        }
        for r in 0..m {
            if r != pivot_row {
                let factor = rows[(r, col)];
                for j in 0..n {
                    let sub = factor * rows[(pivot_row, j)];
                    rows[(r, j)] -= sub;
                }
            }
        }
        pivot_row += 1;
    }
    (0..m)
        .map(|r| {
            let coefficients: Vec<f64> = (0..n).map(|j| clean(rows[(r, j)])).collect();
            let value = clean(coefficients.iter().zip(x0).map(|(c, x)| c * x).sum());
            Invariant { coefficients, value }
        })
        .collect()
}

/// `v` with rounding noise removed: zero below 1e-12, and an integer within 1e-9 of one.
pub(crate) fn clean(v: f64) -> f64 {
    if v.abs() < 1e-12 {
        0.0
    } else if (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) {
        v.round()
    } else {
        v
    }
}

/// The system solved for the steady state: `Uᵀf(x)` and `Wᵀ(x − x₀)`.
struct System<'s> {
    rest: &'s DMatrix<f64>,
    invariants: &'s DMatrix<f64>,
    x0: DVector<f64>,
}

impl System<'_> {
    fn residual(&self, field: &mut Field<'_, '_>, x: &[f64]) -> Result<DVector<f64>, EvalFailure> {
        let f = DVector::from_vec(field.f(x)?);
        let dx = DVector::from_column_slice(x) - &self.x0;
        let top = self.rest.transpose() * f;
        let bottom = self.invariants.transpose() * dx;
        Ok(stack_vectors(&top, &bottom))
    }

    fn jacobian(&self, field: &mut Field<'_, '_>, x: &[f64]) -> Result<DMatrix<f64>, EvalFailure> {
        let (j, _) = field.jacobian(x)?;
        let top = self.rest.transpose() * j;
        let bottom = self.invariants.transpose();
        let n = x.len();
        let mut m = DMatrix::zeros(n, n);
        m.view_mut((0, 0), (top.nrows(), n)).copy_from(&top);
        m.view_mut((top.nrows(), 0), (bottom.nrows(), n)).copy_from(&bottom);
        Ok(m)
    }
}

fn stack_vectors(a: &DVector<f64>, b: &DVector<f64>) -> DVector<f64> {
    DVector::from_iterator(a.len() + b.len(), a.iter().chain(b.iter()).copied())
}

/// The 2-norm condition number of a square matrix (infinite when it is singular).
pub(crate) fn condition_number(m: &DMatrix<f64>) -> f64 {
    if m.nrows() == 0 {
        return 1.0;
    }
    // The SVD iterates until it converges, which a matrix with a NaN never does.
    if !m.iter().all(|v| v.is_finite()) {
        return f64::INFINITY;
    }
    let s = m.clone().svd(false, false).singular_values;
    let max = s.iter().copied().fold(0.0, f64::max);
    let min = s.iter().copied().fold(f64::INFINITY, f64::min);
    if min == 0.0 { f64::INFINITY } else { max / min }
}

/// A condition number beyond which the system counts as singular: fewer than two of the
/// sixteen significant digits of double precision would be left.
const SINGULAR_CONDITION: f64 = 1e14;

/// The steady state on the manifold of `space`'s invariants through `x0`; see the module
/// documentation.
pub(crate) fn solve(field: &mut Field<'_, '_>, x0: &[f64], space: &NullSpace) -> Result<Solution, Failure> {
    let system = System {
        rest: &space.rest,
        invariants: &space.invariants,
        x0: DVector::from_column_slice(x0),
    };
    let newton_result = newton(field, &system, x0);
    let (x, method) = match newton_result {
        Ok((x, iterations)) => (x, SolveMethod::Newton { iterations }),
        Err(first) => match continuation(field, &system, x0) {
            Ok((x, steps)) => match newton(field, &system, &x) {
                Ok((x, iterations)) => (x, SolveMethod::Continuation { steps, iterations }),
                Err(e) => return Err(e),
            },
            Err(Failure::NoConvergence { reason }) => {
                return Err(match first {
                    Failure::Singular { x } => Failure::Singular { x },
                    Failure::NoConvergence { reason: newton } => Failure::NoConvergence {
                        reason: format!("{newton}; {reason}"),
                    },
                    other => other,
                });
            }
            Err(e) => return Err(e),
        },
    };
    let j = system.jacobian(field, &x)?;
    let condition = condition_number(&j);
    if condition > SINGULAR_CONDITION {
        return Err(Failure::Singular { x });
    }
    let residual = norm_inf(&field.f(&x)?);
    Ok(Solution {
        x,
        method,
        residual,
        condition,
    })
}

/// Newton's method with a backtracking line search on `‖F‖`; the point and the number of
/// iterations when the full step has become negligible.
fn newton(field: &mut Field<'_, '_>, system: &System<'_>, x0: &[f64]) -> Result<(Vec<f64>, usize), Failure> {
    const ITERATIONS: usize = 60;
    let mut x = x0.to_vec();
    let mut r = system.residual(field, &x)?;
    for iteration in 1..=ITERATIONS {
        let j = system.jacobian(field, &x)?;
        let Some(step) = j.clone().lu().solve(&(-&r)) else {
            return Err(Failure::Singular { x });
        };
        if !step.iter().all(|v| v.is_finite()) || condition_number(&j) > SINGULAR_CONDITION {
            return Err(Failure::Singular { x });
        }
        let size = norm_inf(step.as_slice());
        if size <= 1e-13 * (1.0 + norm_inf(&x)) {
            return Ok((x, iteration - 1));
        }
        let mut lambda = 1.0;
        loop {
            let trial: Vec<f64> = x.iter().zip(step.iter()).map(|(a, s)| a + lambda * s).collect();
            if let Ok(rt) = system.residual(field, &trial)
                && rt.iter().all(|v| v.is_finite())
                && rt.norm() <= (1.0 - 1e-4 * lambda) * r.norm()
            {
                x = trial;
                r = rt;
                break;
            }
            lambda /= 2.0;
            if lambda < 1e-10 {
                return Err(Failure::NoConvergence {
                    reason: "Newton's method stalled (no step along its direction reduces the residual)".into(),
                });
            }
        }
        if lambda == 1.0 && size <= 1e-10 * (1.0 + norm_inf(&x)) {
            return Ok((x, iteration));
        }
    }
    Err(Failure::NoConvergence {
        reason: format!("Newton's method did not converge in {ITERATIONS} iterations"),
    })
}

/// Pseudo-transient continuation: implicit Euler steps `(I/h − J)Δx = f(x)` whose step grows
/// as `‖f‖` falls (switched evolution relaxation), until Newton's method can take over. For
/// linear invariants the steps stay on the manifold by themselves (`WᵀJ = 0`, `Wᵀf = 0`).
fn continuation(field: &mut Field<'_, '_>, system: &System<'_>, x0: &[f64]) -> Result<(Vec<f64>, usize), Failure> {
    const STEPS: usize = 5000;
    let n = x0.len();
    let mut x = x0.to_vec();
    let (j, _) = field.jacobian(&x)?;
    let mut h = 0.1 / j.norm().max(1e-3);
    let mut f = field.f(&x)?;
    let mut norm = norm_inf(&f);
    for step in 1..=STEPS {
        let (j, _) = field.jacobian(&x)?;
        let j_norm = j.norm();
        let m = DMatrix::identity(n, n) / h - j;
        let moved = m
            .lu()
            .solve(&DVector::from_column_slice(&f))
            .map(|d| x.iter().zip(d.iter()).map(|(a, b)| a + b).collect::<Vec<f64>>())
            .filter(|t| t.iter().all(|v| v.is_finite()));
        let evaluated = moved.and_then(|t| field.f(&t).ok().map(|ft| (t, ft)));
        match evaluated {
            Some((t, ft)) if ft.iter().all(|v| v.is_finite()) => {
                let new_norm = norm_inf(&ft);
                let ratio = if new_norm > 0.0 { norm / new_norm } else { 10.0 };
                h *= ratio.clamp(0.5, 10.0);
                x = t;
                f = ft;
                norm = new_norm;
            }
            _ => {
                h /= 4.0;
                if h < 1e-300 {
                    break;
                }
                continue;
            }
        }
        if norm_inf(&x) > 1e100 {
            return Err(Failure::NoConvergence {
                reason: "the continuation ran away (the states grow without bound)".into(),
            });
        }
        // Newton takes over once the steps are long compared with every time scale.
        if (norm == 0.0 || h * j_norm > 1e8)
            && let Ok(r) = system.residual(field, &x)
            && r.iter().all(|v| v.is_finite())
        {
            return Ok((x, step));
        }
    }
    Err(Failure::NoConvergence {
        reason: "the pseudo-transient continuation did not settle".into(),
    })
}
