//! Powell's hybrid method (a trust region with dogleg steps) for a torn loop that plain Newton
//! did not solve, and the record of which method solved a block when Newton alone did not.
//!
//! Input: a [`LoopProblem`] through the buffers of its [`LoopSolver`], from the guesses the
//! solve started from. Output: the number of iterations taken, with the solution in the slots,
//! or a [`SolveError`]. Each iteration evaluates a fresh Jacobian (symbolic where the loop has
//! one, difference quotients otherwise) rather than updating one by rank-one corrections: both
//! back ends then take the very same steps. Steps and the trust region are measured in units of
//! each unknown's `nominal`. This module deliberately does not decide when the method runs
//! ([`LoopSolver::run`] does) and keeps no history beyond the counts of [`Recoveries`].

use super::*;

/// The iterations of the trust-region method before it gives up.
const TRUST_MAX_ITERATIONS: u32 = 200;
/// The first trust radius, as a multiple of the scaled norm of the start (or as itself when the
/// start is zero), as in MINPACK's hybrj.
const TRUST_FIRST_FACTOR: f64 = 100.0;
/// A trial point is accepted when the actual reduction of `‖F‖²` is at least this fraction of
/// the reduction the linear model predicted.
const TRUST_ACCEPT: f64 = 1e-4;

/// The method that solved a block after plain Newton from the guess failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryMethod {
    /// Powell's hybrid method: a trust region with dogleg steps between the Newton step and the
    /// steepest descent of `‖F‖²`, both in units of the unknowns' nominal values.
    TrustRegion,
    /// The Newton homotopy `F(z) - (1 - λ)·F(start)`, λ from 0 to 1.
    Homotopy,
    /// The continuation on the start values: the path of the fixed-point homotopy
    /// `λ F(z) + (1 - λ)(z - start)` followed from the start values (the initialization only).
    Continuation,
    /// A search for a change of sign of the residual, then bisection (scalar equations at the
    /// initialization only).
    Bracketing,
    /// The loop's equations as written, every unknown an iteration variable, where the form
    /// solved for the inner unknowns left its domain.
    Untorn,
    /// The solve again from the block's last solution or from the values its first solve
    /// started from, after it failed from the values its unknowns held.
    Restart,
    /// Newton from points ever farther along the Newton step of the values a loop's unknowns
    /// held, past a local minimum of the residuals that is no root.
    NewtonRay,
    /// Newton from the held values moved off a point where a nonlinear loop's Jacobian is
    /// singular (a degenerate root the solution leaves as time goes on).
    Perturbed,
}

impl std::fmt::Display for RecoveryMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecoveryMethod::TrustRegion => "trust-region dogleg",
            RecoveryMethod::Homotopy => "Newton homotopy",
            RecoveryMethod::Continuation => "continuation on the start values (fixed-point homotopy)",
            RecoveryMethod::Bracketing => "bracketing",
            RecoveryMethod::Untorn => "the untorn loop (every unknown iterated)",
            RecoveryMethod::Restart => "a restart from the last solution or the start values",
            RecoveryMethod::NewtonRay => "Newton from points farther along the Newton step",
            RecoveryMethod::Perturbed => "Newton from points beside a singular one",
        })
    }
}

/// Why plain Newton did not solve a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewtonFailure {
    /// The Jacobian (or derivative) was singular or not finite at an iterate.
    Singular,
    /// The line search could not reduce the residual, or the iterations ran out.
    NoConvergence,
    /// A value was not finite at the start (outside the domain of a solved form).
    NotFinite,
}

impl std::fmt::Display for NewtonFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NewtonFailure::Singular => "singular Jacobian",
            NewtonFailure::NoConvergence => "no convergence",
            NewtonFailure::NotFinite => "a value not finite at the start",
        })
    }
}

impl NewtonFailure {
    pub(super) fn of(e: &SolveError) -> NewtonFailure {
        match e {
            SolveError::Kind(FailureKind::Singular) => NewtonFailure::Singular,
            SolveError::Kind(FailureKind::NotFinite { .. }) => NewtonFailure::NotFinite,
            _ => NewtonFailure::NoConvergence,
        }
    }
}

/// One solve of a block that plain Newton did not finish: why Newton failed, which method
/// solved it and in how many iterations (of the trust region, stages of the homotopy, or
/// residual evaluations of the bracketing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    pub newton: NewtonFailure,
    pub method: RecoveryMethod,
    pub iterations: u32,
}

/// How often a block needed more than plain Newton: the first such solve and the count, so
/// that a long run keeps a bounded record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recoveries {
    pub first: Recovery,
    pub count: u64,
}

impl Recoveries {
    /// Adds one recovered solve to `record`.
    pub(super) fn note(record: &mut Option<Recoveries>, recovery: Recovery) {
        match record {
            Some(r) => r.count += 1,
            None => {
                *record = Some(Recoveries {
                    first: recovery,
                    count: 1,
                })
            }
        }
    }
}

impl LoopSolver {
    /// Powell's hybrid method from the guesses in `start`: each iteration takes the Newton step
    /// when it lies inside the trust region, else the dogleg path between the Cauchy point of
    /// `‖F‖²` and the Newton step cut at the region's boundary (the Cauchy step alone when the
    /// Jacobian is singular), and resizes the region by how well the linear model predicted
    /// the reduction. Converged when a full Newton step is accepted and small in every
    /// component (the test of Newton), or when `F` vanishes at a regular Jacobian. On success
    /// the slots hold the solution; returns the iterations taken.
    // Long function: one iteration of the method, whose steps share the buffers and the trust
    // radius; split, each part would need all of them.
    pub(super) fn dogleg(&mut self, problem: &mut dyn LoopProblem) -> Result<u32, SolveError> {
        let n = self.n;
        self.trial.copy_from_slice(&self.start);
        if !self.evaluate(problem)? {
            return Err(SolveError::Kind(FailureKind::NoConvergence {
                iterations: 0,
                residual: f64::INFINITY,
            }));
        }
        self.accept();
        let mut norm = squared(&self.f);
        let start_norm = self.scaled_norm(&self.t);
        let mut radius = if start_norm > 0.0 {
            TRUST_FIRST_FACTOR * start_norm
        } else {
            TRUST_FIRST_FACTOR
        };
        // Whether the slots hold the values of the current point (not of a rejected trial or a
        // difference quotient's perturbation).
        let mut at_current = true;
        for iteration in 0..TRUST_MAX_ITERATIONS {
            if !at_current {
                self.trial.copy_from_slice(&self.t);
                self.evaluate(problem)?;
            }
            if !self.jacobian(problem)? {
                return Err(SolveError::Kind(FailureKind::Singular));
            }
            at_current = self.pattern.is_some();
            self.jac.copy_from(&self.jm);
            let newton = self.factor() && self.solve();
            if norm == 0.0 {
                if !newton {
                    return Err(SolveError::Kind(FailureKind::Singular));
                }
                self.regular = true;
                self.restore(problem, at_current)?;
                return Ok(iteration);
            }
            let full = self.dogleg_step(newton, radius);
            let Some(length) = full else {
                // The gradient of ‖F‖² vanishes where F does not: a local minimum.
                return Err(SolveError::Kind(FailureKind::NoConvergence {
                    iterations: iteration + 1,
                    residual: norm.sqrt(),
                }));
            };
            let is_newton_step = newton && length.1;
            let length = length.0;
            // The reduction the linear model predicts: ‖F‖² - ‖F + J p‖².
            let mut model = 0.0;
            for i in 0..n {
                let mut r = self.f[i];
                for j in 0..n {
                    r += self.jac[(i, j)] * self.step[j];
                }
                model += r * r;
            }
            let predicted = norm - model;
            for j in 0..n {
                self.trial[j] = self.t[j] + self.step[j];
            }
            let finite = self.evaluate(problem)?;
            let actual = if finite {
                norm - squared(&self.f_trial)
            } else {
                f64::NEG_INFINITY
            };
            let ratio = if predicted > 0.0 { actual / predicted } else { -1.0 };
            if ratio < 0.1 {
                radius = 0.5 * length;
            } else if ratio >= 0.5 {
                radius = radius.max(2.0 * length);
            }
            if ratio >= TRUST_ACCEPT {
                let converged = is_newton_step
                    && (0..n)
                        .all(|j| self.step[j].abs() <= STEP_RTOL * self.trial[j].abs() + STEP_ATOL * self.nominal[j]);
                self.accept();
                at_current = true;
                norm = squared(&self.f);
                if newton {
                    self.regular = true;
                }
                if converged || (norm == 0.0 && self.regular) {
                    return Ok(iteration + 1);
                }
            } else {
                at_current = false;
                // A full Newton step that is tiny and still cannot reduce the residual: it is at
                // the level of rounding errors, and the current point is the solution.
                let stalled = is_newton_step
                    && (0..n)
                        .all(|j| self.step[j].abs() <= STALL_RTOL * self.t[j].abs() + STALL_ATOL * self.nominal[j]);
                if stalled {
                    self.restore(problem, false)?;
                    return Ok(iteration + 1);
                }
            }
            let scale = self.scaled_norm(&self.t).max(1.0);
            if radius <= f64::EPSILON * scale {
                return Err(SolveError::Kind(FailureKind::NoConvergence {
                    iterations: iteration + 1,
                    residual: norm.sqrt(),
                }));
            }
        }
        Err(SolveError::Kind(FailureKind::NoConvergence {
            iterations: TRUST_MAX_ITERATIONS,
            residual: norm.sqrt(),
        }))
    }

    /// Evaluates the loop at the current point again unless the slots hold its values.
    fn restore(&mut self, problem: &mut dyn LoopProblem, at_current: bool) -> Result<(), SolveError> {
        if !at_current {
            self.trial.copy_from_slice(&self.t);
            self.evaluate(problem)?;
        }
        Ok(())
    }

    /// The scaled Euclidean norm `‖D v‖` with `D = diag(1/nominal)`.
    fn scaled_norm<'v>(&self, v: impl IntoIterator<Item = &'v f64>) -> f64 {
        v.into_iter()
            .zip(&self.nominal)
            .map(|(x, s)| (x / s) * (x / s))
            .sum::<f64>()
            .sqrt()
    }

    /// The dogleg step for radius `radius` into `step` (which holds the Newton step when
    /// `newton`), with the Jacobian in `jac` and the residuals in `f`. Returns the scaled
    /// length of the step and whether it is the full Newton step; `None` when the gradient of
    /// `‖F‖²` vanishes and there is no Newton step.
    fn dogleg_step(&mut self, newton: bool, radius: f64) -> Option<(f64, bool)> {
        let n = self.n;
        let newton_length = if newton {
            self.scaled_norm(self.step.iter())
        } else {
            f64::INFINITY
        };
        if newton && newton_length <= radius {
            return Some((newton_length, true));
        }
        // The steepest descent of ‖F‖² in scaled variables, `-D⁻² Jᵀ F`, and its length.
        let mut gradient_norm = 0.0;
        for j in 0..n {
            let mut g = 0.0;
            for i in 0..n {
                g += self.jac[(i, j)] * self.f[i];
            }
            self.descent[j] = -g * self.nominal[j] * self.nominal[j];
            gradient_norm += (g * self.nominal[j]) * (g * self.nominal[j]);
        }
        let gradient_norm = gradient_norm.sqrt();
        if !(gradient_norm > 0.0 && gradient_norm.is_finite()) {
            return None;
        }
        // The Cauchy point along the descent: the minimum of the linear model there.
        let mut curvature = 0.0;
        for i in 0..n {
            let mut r = 0.0;
            for j in 0..n {
                r += self.jac[(i, j)] * self.descent[j];
            }
            curvature += r * r;
        }
        let cauchy = if curvature > 0.0 {
            gradient_norm * gradient_norm / curvature
        } else {
            f64::INFINITY
        };
        let cauchy_length = cauchy * gradient_norm;
        if !newton || cauchy_length >= radius {
            // Along the descent, to the Cauchy point or the boundary, whichever comes first.
            let factor = cauchy.min(radius / gradient_norm);
            for j in 0..n {
                self.step[j] = factor * self.descent[j];
            }
            return Some((factor * gradient_norm, false));
        }
        // The dogleg: from the Cauchy point `a` towards the Newton step `b` to the boundary,
        // `‖D (a + τ (b - a))‖ = radius`, in scaled variables.
        let (mut ac, mut cc, mut aa) = (0.0, 0.0, 0.0);
        for j in 0..n {
            let a = cauchy * self.descent[j] / self.nominal[j];
            let c = self.step[j] / self.nominal[j] - a;
            ac += a * c;
            cc += c * c;
            aa += a * a;
        }
        let tau = if cc > 0.0 {
            (-ac + (ac * ac + cc * (radius * radius - aa)).max(0.0).sqrt()) / cc
        } else {
            0.0
        };
        for j in 0..n {
            let a = cauchy * self.descent[j];
            self.step[j] = a + tau * (self.step[j] - a);
        }
        Some((radius, false))
    }
}
