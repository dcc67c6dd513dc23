//! BDF's fixed-step mode: the Radau IIA starter that takes the first `k` steps of a grid (see
//! the module documentation of `bdf`), and the differences built from the grid's points once
//! there are `k + 1` of them.
//!
//! Input: the BDF stepper in its fixed-step mode, a step of its clock. Output: the step taken by
//! the starter (split into substeps when Newton's iteration does not converge), the grid kept up
//! to date, and once it is complete the stepper's differences, order and step size set so that
//! BDF takes the next steps. It deliberately takes no BDF step itself.

use super::{Bdf, DIFFERENCES, MAX_STARTER_SUBSTEPS};
use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::{FixedClock, FixedStep};
use crate::options::Options;
use crate::radau::{Dense, Radau};
use crate::stats::Stats;
use crate::stats::check_budget;
use crate::stepper::{StepInfo, Stepper};
use crate::system::OdeSystem;
use nalgebra::DMatrix;

/// The state of the fixed-step mode.
#[derive(Debug)]
pub(super) struct Fixed {
    pub clock: FixedClock,
    /// While the starter runs: the points `y_n, y_{n−1}, ...` of the current equidistant grid,
    /// newest first. Empty once the differences hold them.
    pub grid: Vec<Vec<f64>>,
    /// Whether the differences hold `order + 1` points of the current grid, so that BDF steps
    /// can be taken.
    pub ready: bool,
    /// The starting method (Radau IIA with a fixed step `h/substeps`) once it was needed.
    pub starter: Option<Radau>,
    pub substeps: usize,
    /// The counters of starters replaced by ones with more substeps.
    pub retired: Stats,
    /// When the starter took the last step: the collocation polynomials of its substeps.
    pub dense: Vec<Dense>,
}

impl Fixed {
    /// The fixed-step mode with `clock`, before its first step.
    pub fn new(clock: FixedClock) -> Self {
        Fixed {
            clock,
            grid: Vec::new(),
            ready: false,
            starter: None,
            substeps: 1,
            retired: Stats::default(),
            dense: Vec::new(),
        }
    }

    /// Takes `step` from `(t, x)` with the Radau starter and returns the new point; the
    /// collocation polynomials of the substeps are left in `dense`. When the starter fails in a
    /// way a smaller step may avoid (Newton's iteration did not converge), the step is taken
    /// again from `(t, x)` with twice as many substeps, up to [`MAX_STARTER_SUBSTEPS`].
    fn start_step(
        &mut self,
        sys: &mut dyn OdeSystem,
        options: &Options,
        t: f64,
        x: &[f64],
        step: &FixedStep,
    ) -> Result<Vec<f64>, IntegrationError> {
        loop {
            // The starter continues without a restart (keeping its Jacobian and factors) when
            // its last step ended where this one begins.
            let radau = match self.starter.take() {
                Some(mut radau) => {
                    let restarted = if radau.time() == t && radau.state() == x {
                        Ok(())
                    } else {
                        radau.restart(t, x)
                    };
                    let radau = self.starter.insert(radau);
                    restarted?;
                    radau
                }
                None => {
                    // The budget of steps is the BDF stepper's; substeps do not count against it.
                    let mut radau = Radau::new(Options {
                        step: Some(self.clock.h / self.substeps as f64),
                        max_steps: usize::MAX,
                        ..options.clone()
                    });
                    radau.initialize(sys, t, x)?;
                    self.starter.insert(radau)
                }
            };
            self.dense.clear();
            let mut failure = None;
            while radau.time() < step.t_new {
                if let Err(e) = radau.step(sys, step.t_new) {
                    failure = Some(e);
                    break;
                }
                if let Some(dense) = radau.dense() {
                    self.dense.push(dense.clone());
                }
            }
            match failure {
                None => return Ok(radau.state().to_vec()),
                Some(e) if e.is_recoverable() && self.substeps < MAX_STARTER_SUBSTEPS => {
                    if let Some(old) = self.starter.take() {
                        add_work(&mut self.retired, old.stats());
                    }
                    self.substeps *= 2;
                }
                Some(IntegrationError::Rhs { time, message }) => {
                    self.dense.clear();
                    // Radau's message alone would leave a bdf user wondering where it came from.
                    return Err(IntegrationError::Rhs {
                        time,
                        message: format!(
                            "in bdf's starting steps (radau5, {} substeps): {message}",
                            self.substeps
                        ),
                    });
                }
                Some(e) => {
                    self.dense.clear();
                    return Err(e);
                }
            }
        }
    }
}

/// Adds the work counters (not the steps) of `other` to `total`.
pub(super) fn add_work(total: &mut Stats, other: Stats) {
    total.rhs_evals += other.rhs_evals;
    total.jacobians += other.jacobians;
    total.symbolic_jacobians += other.symbolic_jacobians;
    total.sparse_jacobians += other.sparse_jacobians;
    total.factorizations += other.factorizations;
}

impl Bdf {
    /// A step of the fixed-step mode taken by the starter: at the start, until the grid holds
    /// `order + 1` points, and for a step shortened to meet a time limit. Once the grid is
    /// complete the differences are built from it, and BDF takes the following steps.
    pub(super) fn starter_step(
        &mut self,
        sys: &mut dyn OdeSystem,
        step: &FixedStep,
    ) -> Result<StepInfo, IntegrationError> {
        check_budget(self.t, &self.stats, self.options.max_steps)?;
        let Some(fixed) = &mut self.fixed else {
            return Err(IntegrationError::invalid("bdf has no fixed step to start"));
        };
        if self.needs_start {
            fixed.grid = vec![self.x.clone()];
            fixed.ready = false;
            self.needs_start = false;
        }
        let y = fixed.start_step(sys, &self.options, self.t, &self.x, step)?;
        check_finite(step.t_new, &y, Quantity::State)?;
        if step.full {
            fixed.grid.insert(0, y.clone());
            fixed.grid.truncate(self.max_order + 1);
        } else {
            // A shortened step leaves the grid: a new one begins at its end.
            fixed.grid = vec![y.clone()];
            fixed.ready = false;
        }
        fixed.clock.advance(step);
        self.stats.steps += 1;
        self.t_prev = self.t;
        self.t = step.t_new;
        self.x = y;
        // The Jacobian belongs to the last BDF step, which may be far back; the next BDF step
        // builds a fresh one.
        self.jacobian = None;
        self.lu = None;
        if !fixed.ready && fixed.grid.len() == self.max_order + 1 {
            // The differences ∇^j y_n (j = 0..=order) of the grid points, newest first.
            let n = self.x.len();
            self.d = DMatrix::zeros(DIFFERENCES, n);
            let mut level = std::mem::take(&mut fixed.grid);
            for j in 0..=self.max_order {
                for (i, v) in level[0].iter().enumerate() {
                    self.d[(j, i)] = *v;
                }
                for m in 0..level.len() - 1 {
                    let (newer, older) = level.split_at_mut(m + 1);
                    for (a, b) in newer[m].iter_mut().zip(&older[0]) {
                        *a -= b;
                    }
                }
                level.pop();
            }
            self.order = self.max_order;
            self.h = fixed.clock.h;
            self.equal_steps = 0;
            fixed.ready = true;
        }
        Ok(StepInfo {
            t_prev: self.t_prev,
            t: self.t,
        })
    }
}
