//! Modal analysis of a linearised system `Δx' = A Δx`.
//!
//! Input: the matrix `A` and, optionally, the deviation `Δx₀` of the start point from the point
//! of linearisation. Output: the eigenvalues with their eigenvectors, each mode's time constant
//! `T = min(1/|Re λ|, 2π/|Im λ|)`, damping ratio and frequencies, the participation of each state,
//! the stability of the point, the stiffness ratio `γ = T_max/T_min` over the modes that move, and
//! the coefficients `c = V⁻¹Δx₀` of the solution `Δx(t) = Σ cᵢ e^{λᵢt} vᵢ`.
//!
//! Eigenvalues come from nalgebra's real Schur form; each eigenvector from two steps of inverse
//! iteration with the eigenvalue as a slightly moved shift. Participation factors are
//! `|lᵢₖ vₖᵢ|` (left eigenvectors the rows of `V⁻¹`) normalised to sum 1 per mode, which does not
//! depend on how the states are scaled; when `A` has no basis of eigenvectors (a repeated
//! eigenvalue with too few eigenvectors) the squared entries of the eigenvector stand in and the
//! sum of modes is not formed.
//!
//! Deliberately not done: generalised eigenvectors of defective matrices (the `t·e^{λt}` terms).

use nalgebra::{Complex, DMatrix, DVector};

/// One eigenvalue with its mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    pub eigenvalue: Complex<f64>,
    /// The eigenvector, scaled so that its largest entry is 1.
    pub vector: Vec<Complex<f64>>,
    /// How much each state takes part in the mode (summing to 1).
    pub participation: Vec<f64>,
    /// `min(1/|Re λ|, 2π/|Im λ|)`; infinite for a zero eigenvalue.
    pub time_constant: f64,
    /// For a complex eigenvalue: `ζ = −Re λ/|λ|`.
    pub damping: Option<f64>,
    /// For a complex eigenvalue: the natural frequency `|λ|` in rad per time unit.
    pub natural_frequency: Option<f64>,
    /// For a complex eigenvalue: the damped frequency `|Im λ|` in rad per time unit.
    pub frequency: Option<f64>,
    /// Whether the eigenvalue is zero within rounding (a conserved combination or an integrator).
    pub zero: bool,
    /// The coefficient `cᵢ` of the mode in the solution from the start point, when formed.
    pub coefficient: Option<Complex<f64>>,
}

/// The stability of the point of linearisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stability {
    /// Every eigenvalue has a negative real part (the zero eigenvalues of linear invariants
    /// aside: then the point is stable on the manifold the invariants fix).
    Stable,
    /// An eigenvalue has a positive real part.
    Unstable,
    /// The largest real part is zero: the linearisation does not decide (a centre, an
    /// integrator).
    Marginal,
}

/// The modes of `A` and the quantities computed from them.
#[derive(Debug, Clone)]
pub struct Modal {
    /// Every eigenvalue, slowest first (largest time constant), a complex pair next to each
    /// other with the positive imaginary part first.
    pub modes: Vec<Mode>,
    pub stability: Stability,
    /// The smallest and largest time constant over the modes that move (nonzero eigenvalues).
    pub t_min: Option<f64>,
    pub t_max: Option<f64>,
    /// `T_max/T_min`.
    pub stiffness: Option<f64>,
    /// Whether `A` has a basis of eigenvectors (then the coefficients of the sum of modes are
    /// given).
    pub diagonalisable: bool,
}

/// `min(1/|Re λ|, 2π/|Im λ|)`: the time in which the mode decays or grows by a factor e, or its
/// period if that is shorter.
pub fn time_constant(lambda: Complex<f64>) -> f64 {
    let decay = if lambda.re != 0.0 {
        1.0 / lambda.re.abs()
    } else {
        f64::INFINITY
    };
    let period = if lambda.im != 0.0 {
        2.0 * std::f64::consts::PI / lambda.im.abs()
    } else {
        f64::INFINITY
    };
    decay.min(period)
}

/// The eigenvalues of `a`, a complex pair as conjugates next to each other.
pub fn eigenvalues(a: &DMatrix<f64>) -> Vec<Complex<f64>> {
    // The Schur iteration runs until it converges, which it never does on a NaN: a matrix
    // with entries that are not finite has no eigenvalues here (the caller says so).
    if a.nrows() == 0 || !a.iter().all(|v| v.is_finite()) {
        return Vec::new();
    }
    let mut values: Vec<Complex<f64>> = a.clone().complex_eigenvalues().iter().copied().collect();
    // The Schur form gives a pair's parts to rounding; make conjugates exact and real
    // eigenvalues real, so that pairs are recognised.
    let scale = a.norm().max(f64::MIN_POSITIVE);
    for v in &mut values {
        if v.im.abs() <= 1e-13 * scale {
            v.im = 0.0;
        }
    }
    values
}

/// The modal analysis of `a`; `dx0` is the start point's deviation from the point of
/// linearisation, for the coefficients of the sum of modes; `conserved` is the number of linear
/// invariants, whose zero eigenvalues do not count against stability (the point is stable on
/// the manifold they fix); `point_condition` is the condition number of the system whose
/// solution the point is (1 for a point given exactly).
pub fn analyse(a: &DMatrix<f64>, dx0: Option<&[f64]>, conserved: usize, point_condition: f64) -> Modal {
    let n = a.nrows();
    let scale = a.norm();
    let mut values = eigenvalues(a);
    values.sort_by(|p, q| {
        time_constant(*q)
            .partial_cmp(&time_constant(*p))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(q.re.partial_cmp(&p.re).unwrap_or(std::cmp::Ordering::Equal))
            .then(q.im.partial_cmp(&p.im).unwrap_or(std::cmp::Ordering::Equal))
    });
    let vectors: Vec<DVector<Complex<f64>>> = values.iter().enumerate().map(|(k, l)| eigenvector(a, *l, k)).collect();
    let mut v = DMatrix::<Complex<f64>>::zeros(n, n);
    for (k, vec) in vectors.iter().enumerate() {
        v.set_column(k, vec);
    }
    // A basis of eigenvectors: the eigenvector matrix is well conditioned enough to invert.
    let inverse = v.clone().try_inverse().filter(|inv| {
        let cond = norm1(&v) * norm1(inv);
        cond.is_finite() && cond < 1e10
    });
    let coefficients: Option<Vec<Complex<f64>>> = match (&inverse, dx0) {
        (Some(inv), Some(dx0)) => {
            let d = DVector::from_iterator(n, dx0.iter().map(|x| Complex::new(*x, 0.0)));
            Some((inv * d).iter().copied().collect())
        }
        _ => None,
    };
    let zero_tolerance = zero_tolerance(point_condition) * scale.max(f64::MIN_POSITIVE);
    let modes: Vec<Mode> = values
        .iter()
        .enumerate()
        .map(|(k, &lambda)| {
            let vector = &vectors[k];
            let participation: Vec<f64> = match &inverse {
                Some(inv) => {
                    let p: Vec<f64> = (0..n).map(|i| (inv[(k, i)] * vector[i]).norm()).collect();
                    let sum: f64 = p.iter().sum();
                    p.iter().map(|x| if sum > 0.0 { x / sum } else { 0.0 }).collect()
                }
                None => {
                    let sum: f64 = vector.iter().map(|c| c.norm_sqr()).sum();
                    vector
                        .iter()
                        .map(|c| c.norm_sqr() / sum.max(f64::MIN_POSITIVE))
                        .collect()
                }
            };
            let complex = lambda.im != 0.0;
            let zero = lambda.norm() <= zero_tolerance;
            Mode {
                eigenvalue: lambda,
                vector: vector.iter().copied().collect(),
                participation,
                time_constant: if zero { f64::INFINITY } else { time_constant(lambda) },
                damping: complex.then(|| -lambda.re / lambda.norm()),
                natural_frequency: complex.then(|| lambda.norm()),
                frequency: complex.then(|| lambda.im.abs()),
                zero,
                coefficient: coefficients.as_ref().map(|c| c[k]),
            }
        })
        .collect();
    let moving: Vec<f64> = modes.iter().filter(|m| !m.zero).map(|m| m.time_constant).collect();
    let t_min = moving.iter().copied().reduce(f64::min);
    let t_max = moving.iter().copied().reduce(f64::max);
    let real_tolerance = 1e-9 * scale.max(f64::MIN_POSITIVE);
    let stability = if modes.iter().any(|m| m.eigenvalue.re > real_tolerance) {
        Stability::Unstable
    } else if modes.iter().filter(|m| m.zero).count() <= conserved
        && modes.iter().all(|m| m.zero || m.eigenvalue.re < -real_tolerance)
    {
        Stability::Stable
    } else {
        Stability::Marginal
    };
    Modal {
        modes,
        stability,
        t_min,
        t_max,
        stiffness: t_min.zip(t_max).map(|(lo, hi)| hi / lo),
        diagonalisable: inverse.is_some(),
    }
}

/// The eigenvector of `a` for `lambda` by inverse iteration, scaled so its largest entry is 1;
/// `k` (the eigenvalue's position) varies the start vector, so that a repeated eigenvalue with
/// several eigenvectors gets independent ones.
fn eigenvector(a: &DMatrix<f64>, lambda: Complex<f64>, k: usize) -> DVector<Complex<f64>> {
    let n = a.nrows();
    // The shift is moved off the eigenvalue a little, so that the matrix can be factored; the
    // solution is then dominated by the eigenvector.
    let shift = lambda + Complex::new(1e-10 * (1.0 + lambda.norm()), 0.0);
    let mut m = a.map(|x| Complex::new(x, 0.0));
    for i in 0..n {
        m[(i, i)] -= shift;
    }
    let lu = m.lu();
    // A start vector with no special direction, different for each eigenvalue.
    let mut x = DVector::from_iterator(
        n,
        (0..n).map(|i| Complex::new(0.1 + (1.3 * (i + 1) as f64 * (k + 1) as f64).cos(), 0.05 * i as f64)),
    );
    for _ in 0..3 {
        match lu.solve(&x) {
            Some(y) if y.iter().all(|c| c.re.is_finite() && c.im.is_finite()) => {
                let norm = y.norm();
                if norm == 0.0 {
                    break;
                }
                x = y / Complex::new(norm, 0.0);
            }
            _ => break,
        }
    }
    // The largest entry 1 (its phase removed), so that real modes have real vectors.
    let largest = (0..n)
        .max_by(|&i, &j| {
            x[i].norm()
                .partial_cmp(&x[j].norm())
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .unwrap_or(0);
    if n > 0 && x[largest].norm() > 0.0 {
        let pivot = x[largest];
        x /= pivot;
    }
    if lambda.im == 0.0 {
        x.iter_mut().for_each(|c| c.im = 0.0);
    }
    x
}

fn norm1(m: &DMatrix<Complex<f64>>) -> f64 {
    m.column_iter()
        .map(|c| c.iter().map(|v| v.norm()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// The eigenvalues below this share of the norm of `A` are zero. At a point solved with
/// condition number `point_condition`, the point, and with it `A`, is known only to about
/// `point_condition` times the rounding error: a zero eigenvalue of the exact point (a steady
/// state of second-order kinetics, where two concentrations vanish together) comes out as a
/// tiny number of that size, whose "time scale" is no time scale. The share stays between
/// 1e-10 and the square root of the rounding error (1.5e-8), below which no eigenvalue of a
/// matrix known to rounding can be told from zero.
fn zero_tolerance(point_condition: f64) -> f64 {
    let from_point = 10.0 * point_condition.max(1.0) * f64::EPSILON;
    from_point.clamp(1e-10, f64::EPSILON.sqrt())
}
