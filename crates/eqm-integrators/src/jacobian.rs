//! Jacobians of the right-hand side for the implicit methods: the system's own when it has
//! one, else forward difference quotients; dense, or sparse for a large system with a pattern.
//!
//! Input: an [`OdeSystem`] and a point `(t, x)`, with `f` there when the caller has it. Output:
//! the Jacobian `∂f/∂x`, its construction counted in the stepper's [`Stats`]; and
//! [`KeptJacobian`], which holds a method's dense Jacobian with the factors of its iteration
//! matrix. It deliberately factors nothing and does not decide when a Jacobian is stale (the
//! methods and `linalg` do).

use crate::error::IntegrationError;
use crate::linalg;
use crate::stats::Stats;
use crate::system::{OdeSystem, RhsError, eval_rhs};
use nalgebra::DMatrix;

/// `f` at the point of `at`: its `f_point` when the caller has it, else evaluated (see
/// [`eval_rhs`]). Difference quotients need it; an exact Jacobian does not, so callers may leave
/// it to this.
fn f_given_or_evaluated<'f>(
    sys: &mut dyn OdeSystem,
    at: JacobianPoint<'f>,
    stats: &mut Stats,
) -> Result<std::borrow::Cow<'f, [f64]>, IntegrationError> {
    if let Some(f) = at.f_point {
        return Ok(std::borrow::Cow::Borrowed(f));
    }
    let mut f = vec![0.0; at.point.len()];
    eval_rhs(sys, at.t, at.point, &mut f, stats)?;
    Ok(std::borrow::Cow::Owned(f))
}

/// Whether the `values` the system computed itself (`computed`, the answer of
/// [`OdeSystem::jacobian`] or [`OdeSystem::sparse_jacobian`]) are the Jacobian, counting them when
/// they are. A failure is an error at `t`. No answer, or values that are not all finite, leave
/// the Jacobian to difference quotients, which report the non-finite derivative if there is one.
fn own_values(
    computed: Option<Result<(), RhsError>>,
    values: &[f64],
    t: f64,
    stats: &mut Stats,
) -> Result<bool, IntegrationError> {
    match computed {
        Some(Ok(())) if values.iter().all(|v| v.is_finite()) => {
            stats.symbolic_jacobians += 1;
            Ok(true)
        }
        Some(Err(e)) => Err(IntegrationError::Rhs {
            time: t,
            message: e.message,
        }),
        Some(Ok(())) | None => Ok(false),
    }
}

/// Where a Jacobian is taken: at `(t, point)`, where `f` is `f_point` when the caller has it
/// (difference quotients need it, and evaluate it when it is not given; an exact Jacobian does
/// not), with `floor(j)` the scale below which the value of component `j` does not matter (its
/// error weight), for the increments of difference quotients.
#[derive(Clone, Copy)]
pub(crate) struct JacobianPoint<'p> {
    pub t: f64,
    pub point: &'p [f64],
    pub f_point: Option<&'p [f64]>,
    pub floor: &'p dyn Fn(usize) -> f64,
}

/// The Jacobian of `f` at `at` into `jacobian` (n × n): the system's own
/// ([`OdeSystem::jacobian`], a model's symbolic Jacobian) when it has one at this point,
/// otherwise forward differences, one evaluation per state. For differences component `j` moves
/// by `√ε·max(|x_j|, floor(j))`, so that a component far smaller than 1 is not moved by far more
/// than its size. `work` (n elements) is scratch space.
pub(crate) fn jacobian_at(
    sys: &mut dyn OdeSystem,
    at: JacobianPoint<'_>,
    work: &mut [f64],
    jacobian: &mut DMatrix<f64>,
    stats: &mut Stats,
) -> Result<(), IntegrationError> {
    let (t, point) = (at.t, at.point);
    let n = point.len();
    stats.jacobians += 1;
    let computed = sys.jacobian(t, point, jacobian);
    if own_values(computed, jacobian.as_slice(), t, stats)? {
        return Ok(());
    }
    let f_point = f_given_or_evaluated(sys, at, stats)?;
    let mut column = vec![0.0; n];
    work.copy_from_slice(point);
    for j in 0..n {
        let xj = point[j];
        let delta = difference_step(xj, (at.floor)(j));
        work[j] = xj + delta;
        // The column's actual increment, which rounding makes differ from `delta`.
        let h = work[j] - xj;
        eval_rhs(sys, t, work, &mut column, stats)?;
        for i in 0..n {
            jacobian[(i, j)] = (column[i] - f_point[i]) / h;
        }
        work[j] = xj;
    }
    Ok(())
}

/// The Jacobian of `sys` at `(t, x)` into `jacobian` (n × n) by [`jacobian_at`] (the system's
/// own, else forward differences with floor 1): for a look at a model outside a run, such as
/// its fastest rate before one.
pub fn jacobian_of(
    sys: &mut dyn OdeSystem,
    t: f64,
    x: &[f64],
    jacobian: &mut DMatrix<f64>,
) -> Result<(), IntegrationError> {
    let mut work = x.to_vec();
    let at = JacobianPoint {
        t,
        point: x,
        f_point: None,
        floor: &|_| 1.0,
    };
    jacobian_at(sys, at, &mut work, jacobian, &mut Stats::default())
}

/// The increment of a component of value `x` for a forward difference: `√ε·max(|x|, floor)`,
/// `floor` the scale below which its value does not matter (see [`jacobian_at`]).
pub(crate) fn difference_step(x: f64, floor: f64) -> f64 {
    f64::EPSILON.sqrt() * x.abs().max(floor).max(f64::MIN_POSITIVE)
}

/// The dense Jacobian an implicit method (implicit Euler, the trapezoid, DIRK) keeps
/// across steps while Newton's iteration converges with it, and the factors `F` of its iteration
/// matrix with the key they were factored for (by default the LU of `I − γJ` with `γ`, or the
/// step size). Each method factors in its own way; this builds the Jacobian and forgets both.
#[derive(Debug)]
pub(crate) struct KeptJacobian<F = (f64, nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>)> {
    pub jacobian: Option<DMatrix<f64>>,
    pub lu: Option<F>,
}

impl<F> Default for KeptJacobian<F> {
    fn default() -> Self {
        KeptJacobian {
            jacobian: None,
            lu: None,
        }
    }
}

impl<F> KeptJacobian<F> {
    /// Rebuilds the Jacobian at `at` (see [`jacobian_at`]), in the storage of the old one; the
    /// factors of the old one no longer apply. On failure no Jacobian is kept.
    pub fn rebuild(
        &mut self,
        sys: &mut dyn OdeSystem,
        at: JacobianPoint<'_>,
        work: &mut [f64],
        stats: &mut Stats,
    ) -> Result<(), IntegrationError> {
        let n = at.point.len();
        let mut jacobian = self.jacobian.take().unwrap_or_else(|| DMatrix::zeros(n, n));
        jacobian_at(sys, at, work, &mut jacobian, stats)?;
        self.jacobian = Some(jacobian);
        self.lu = None;
        Ok(())
    }

    /// Forgets the Jacobian and its factors: after a (re)start they belong to the old
    /// trajectory (after an event the equations may differ).
    pub fn forget(&mut self) {
        self.jacobian = None;
        self.lu = None;
    }
}

/// The pattern a stepper's Jacobians use: `None` until a system was seen, then the sparse
/// layout when the system has a pattern and [`linalg::prefers_sparse`] says the sparse LU costs
/// less.
pub(crate) type PatternCache = Option<Option<std::sync::Arc<linalg::SparsePattern>>>;

/// The Jacobian of `f` at `at` (see [`jacobian_at`]), sparse for a large system with a pattern:
/// the system's own values, else difference quotients by colour. A dense one is built in the
/// storage of a dense `previous` one when it is given.
pub(crate) fn build_jacobian(
    sys: &mut dyn OdeSystem,
    at: JacobianPoint<'_>,
    work: &mut [f64],
    cache: &mut PatternCache,
    previous: Option<linalg::Jacobian>,
    stats: &mut Stats,
) -> Result<linalg::Jacobian, IntegrationError> {
    let n = at.point.len();
    let pattern = cache
        .get_or_insert_with(|| {
            let rows = sys.jacobian_pattern()?;
            if !linalg::prefers_sparse(n, rows.iter().map(Vec::len).sum()) {
                return None;
            }
            linalg::SparsePattern::new(n, rows).map(std::sync::Arc::new)
        })
        .clone();
    let Some(pattern) = pattern else {
        let mut j = match previous {
            Some(linalg::Jacobian::Dense(j)) if j.shape() == (n, n) => j,
            _ => DMatrix::zeros(n, n),
        };
        jacobian_at(sys, at, work, &mut j, stats)?;
        return Ok(linalg::Jacobian::Dense(j));
    };
    stats.jacobians += 1;
    stats.sparse_jacobians += 1;
    let mut values = vec![0.0; pattern.nonzeros()];
    let computed = sys.sparse_jacobian(at.t, at.point, &mut values);
    if !own_values(computed, &values, at.t, stats)? {
        let f_point = f_given_or_evaluated(sys, at, stats)?;
        sparse_difference_values(&pattern, sys, at, &f_point, work, &mut values, stats)?
    }
    Ok(linalg::Jacobian::Sparse { pattern, values })
}

/// The values of a sparse Jacobian on `pattern` by forward differences at `at`, one evaluation
/// of `f` per colour: all columns of a colour move at once, and each row reads the one of them
/// it depends on. `work` (n elements) is scratch space.
fn sparse_difference_values(
    pattern: &linalg::SparsePattern,
    sys: &mut dyn OdeSystem,
    at: JacobianPoint<'_>,
    f_point: &[f64],
    work: &mut [f64],
    values: &mut [f64],
    stats: &mut Stats,
) -> Result<(), IntegrationError> {
    let (n, colors, point) = (pattern.dim(), pattern.colors(), at.point);
    let mut column = vec![0.0; n];
    let mut step = vec![0.0; n];
    for color in 0..pattern.n_colors() as u32 {
        work.copy_from_slice(point);
        for j in (0..n).filter(|&j| colors[j] == color) {
            let delta = difference_step(point[j], (at.floor)(j));
            work[j] = point[j] + delta;
            step[j] = work[j] - point[j];
        }
        eval_rhs(sys, at.t, work, &mut column, stats)?;
        let mut k = 0;
        for (i, row) in pattern.rows().iter().enumerate() {
            for &j in row {
                if colors[j as usize] == color {
                    values[k] = (column[i] - f_point[i]) / step[j as usize];
                }
                k += 1;
            }
        }
    }
    Ok(())
}
