//! The embedded pairs of higher order and their interpolants: Tsitouras' 5(4) pair and Verner's
//! "most efficient" 6(5), 7(6), 8(7) and 9(8) pairs.
//!
//! Input: nothing; the module is data. Output: each pair as a [`Tableau`] (with embedded
//! weights `b̂`, so [`crate::adaptive::Adaptive`] controls its step size with it) and its
//! continuous extension as an [`Interpolant`]: the extra stages it needs beyond the step's own
//! (rows of `a` over all earlier stages, evaluated from the step's start like ordinary stages)
//! and the weight polynomials `b_j(θ)` with `x(t + θh) ≈ x + h Σ_j b_j(θ) k_j`.
//!
//! The coefficients are the published ones (Tsitouras, "Runge–Kutta pairs of order 5(4)
//! satisfying only the first column simplifying assumption", 2011; Verner's tables of his
//! "most efficient" pairs, whose exact rationals and 40-digit decimals are rounded here to the
//! nearest double). The orders stated with each are checked against the order conditions in
//! the tests (the weights of the solution, the embedded weights, and the interpolant at several
//! θ, over the stages including its extra ones). The tables of numbers are in `coefficients`;
//! this module names the pairs and their interpolants. It deliberately steps nothing.

use crate::tableau::{Tableau, constant};
// Every table of `coefficients` belongs to one of the pairs below, by its name.
use coefficients::*;

mod coefficients;

/// The continuous extension of an embedded pair: extra stages and weight polynomials.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interpolant {
    /// All stages the interpolant uses: the tableau's, then the extra ones.
    stages: usize,
    /// The rows of `a` of the extra stages, each over all `stages` (zero from the diagonal on).
    extra_a: &'static [f64],
    /// The nodes of the extra stages.
    extra_c: &'static [f64],
    /// The degree of the weight polynomials.
    degree: usize,
    /// Row `j` (of `stages`) holds the coefficients of θ¹..θ^degree in `b_j(θ)`.
    weights: &'static [f64],
    /// The order of the interpolant, checked by the tests.
    order: u32,
}

impl Interpolant {
    /// The number of stages including the extra ones.
    pub fn stages(&self) -> usize {
        self.stages
    }

    /// The order of the interpolated values.
    pub fn order(&self) -> u32 {
        self.order
    }

    /// The number of extra stages.
    pub fn extra_stages(&self) -> usize {
        self.extra_c.len()
    }

    /// Row `i` of `a` (over all stages) for extra stage `i` (counted from 0).
    pub fn extra_row(&self, i: usize) -> &[f64] {
        &self.extra_a[i * self.stages..(i + 1) * self.stages]
    }

    /// The node of extra stage `i`.
    pub fn extra_c(&self, i: usize) -> f64 {
        self.extra_c[i]
    }

    /// The degree of the weight polynomials.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Writes `b_j(θ)` of every stage into `out` (`stages` values).
    pub fn weights_at(&self, theta: f64, out: &mut [f64]) {
        // `1·θ` is θ exactly, so these are the step's weights for a step of 1.
        self.step_weights_at(1.0, theta, out);
    }

    /// Writes `h·b_j(θ)` of every stage into `out` (`stages` values): the coefficients of the
    /// stage derivatives in the interpolated value of a step of size `h`.
    pub(crate) fn step_weights_at(&self, h: f64, theta: f64, out: &mut [f64]) {
        for (j, w) in out.iter_mut().enumerate().take(self.stages) {
            let row = &self.weights[j * self.degree..(j + 1) * self.degree];
            // Horner's scheme for θ (r_1 + θ (r_2 + ...)).
            *w = h * theta * row.iter().rev().fold(0.0, |acc, r| r + theta * acc);
        }
    }

    /// The nodes and the row-major `a` (`stages × stages`) of the tableau extended by the extra
    /// stages, for checking the interpolant's order conditions.
    pub fn extended(&self, tableau: &Tableau) -> (Vec<f64>, Vec<f64>) {
        let (s, n) = (tableau.stages(), self.stages);
        let mut a = vec![0.0; n * n];
        for i in 0..s {
            let row = tableau.a_row(i);
            a[i * n..i * n + row.len()].copy_from_slice(row);
        }
        for i in s..n {
            a[i * n..(i + 1) * n].copy_from_slice(self.extra_row(i - s));
        }
        let c = tableau.c().iter().chain(self.extra_c).copied().collect();
        (c, a)
    }
}

/// Tsitouras' 5(4) pair (2011): seven stages, "first same as last", advanced with the fifth-order
/// weights; its coefficients satisfy only the first column simplifying assumption, which buys
/// a smaller error constant than DOPRI5's.
pub const TSIT5: Tableau = constant(
    "tsit5",
    7,
    &TSIT5_A,
    &TSIT5_B,
    &TSIT5_C,
    Some(&TSIT5_B_HAT),
    (5, Some(4)),
);

/// Tsitouras' continuous extension of [`TSIT5`]: fourth order from the seven stages alone.
pub const TSIT5_INTERPOLANT: Interpolant = Interpolant {
    stages: 7,
    extra_a: &[],
    extra_c: &[],
    degree: 4,
    weights: &TSIT5_DENSE,
    order: 4,
};

/// Verner's "most efficient" 6(5) pair with nine stages, "first same as last", advanced with
/// the sixth-order weights.
pub const VERN6: Tableau = constant(
    "vern6",
    9,
    &VERN6_A,
    &VERN6_B,
    &VERN6_C,
    Some(&VERN6_B_HAT),
    (6, Some(5)),
);

/// Verner's interpolant of [`VERN6`]: sixth order with three extra stages.
pub const VERN6_INTERPOLANT: Interpolant = Interpolant {
    stages: 12,
    extra_a: &VERN6_EXTRA_A,
    extra_c: &VERN6_EXTRA_C,
    degree: 6,
    weights: &VERN6_DENSE,
    order: 6,
};

/// Verner's "most efficient" 7(6) pair with ten stages, advanced with the seventh-order weights.
pub const VERN7: Tableau = constant(
    "vern7",
    10,
    &VERN7_A,
    &VERN7_B,
    &VERN7_C,
    Some(&VERN7_B_HAT),
    (7, Some(6)),
);

/// Verner's interpolant of [`VERN7`]: six extra stages, the first of them the derivative at
/// the new point (which the step evaluates anyway). Its weights satisfy the order conditions
/// of order 6 exactly and those of order 7 only to about 3e-7, so it counts as sixth order.
pub const VERN7_INTERPOLANT: Interpolant = Interpolant {
    stages: 16,
    extra_a: &VERN7_EXTRA_A,
    extra_c: &VERN7_EXTRA_C,
    degree: 7,
    weights: &VERN7_DENSE,
    order: 6,
};

/// Verner's "most efficient" 8(7) pair with thirteen stages, advanced with the eighth-order weights.
///
/// Its error estimate is weak where a step is limited by stability rather than accuracy: on a
/// stiff component `x' = λx` the step errs by `R(hλ) − e^{hλ}` but estimates `R(hλ) − R̂(hλ)`,
/// which for hλ between about −3 and the end of the stability interval (−5.86) is smaller, and
/// near hλ = −4.5 almost zero (the other Verner pairs overestimate there). On a problem with
/// stiff phases, such as the regularised stick-slip oscillator of the examples, steps are then
/// accepted that err by twice their estimate while it sticks and, around the changes of phase,
/// by up to 15 times the tolerance (estimated a hundred times too small), and the end value is
/// 10 to 100 times less accurate than the other pairs'. That is a property of the published
/// coefficients, not of the step size control; problems without stiff phases are not affected.
pub const VERN8: Tableau = constant(
    "vern8",
    13,
    &VERN8_A,
    &VERN8_B,
    &VERN8_C,
    Some(&VERN8_B_HAT),
    (8, Some(7)),
);

/// Verner's interpolant of [`VERN8`]: eighth order with eight extra stages, the first of them the
/// derivative at the new point (which the step evaluates anyway). Its weight polynomials have
/// coefficients up to 1.4e6, so in double precision its values carry rounding errors of about
/// 1e-10·h·|x'|, far below the error of the steps at the tolerances the pair suits.
pub const VERN8_INTERPOLANT: Interpolant = Interpolant {
    stages: 21,
    extra_a: &VERN8_EXTRA_A,
    extra_c: &VERN8_EXTRA_C,
    degree: 8,
    weights: &VERN8_DENSE,
    order: 8,
};

/// Verner's "most efficient" 9(8) pair with sixteen stages, advanced with the ninth-order
/// weights; two of its nodes involve √6 (given here to full double precision).
pub const VERN9: Tableau = constant(
    "vern9",
    16,
    &VERN9_A,
    &VERN9_B,
    &VERN9_C,
    Some(&VERN9_B_HAT),
    (9, Some(8)),
);

/// Verner's interpolant of [`VERN9`]: ninth order with ten extra stages, the first of them the
/// derivative at the new point (which the step evaluates anyway).
pub const VERN9_INTERPOLANT: Interpolant = Interpolant {
    stages: 26,
    extra_a: &VERN9_EXTRA_A,
    extra_c: &VERN9_EXTRA_C,
    degree: 9,
    weights: &VERN9_DENSE,
    order: 9,
};
