//! `auto`: DOPRI5 while the problem is not stiff, BDF while it is.
//!
//! Input: [`Options`] (tolerances as for the adaptive methods). Output: the steps of whichever
//! method runs, with its dense output. After each DOPRI5 step the product `h·ρ` of the step and
//! an estimate of the dominant eigenvalue (from the derivatives at the step's ends) is compared
//! with DOPRI5's stability boundary; when the steps stay at that boundary for
//! `STIFF_STEPS` steps in a row, the step size is set by stability and not by accuracy, and the
//! run switches to BDF. BDF switches back when `h·|J|∞` stays below 1 for `NONSTIFF_STEPS`
//! steps. A switch happens at the start of the next step (so the last step's dense output stays
//! valid) and is recorded for `-v`.
//!
//! Deliberately not here: the methods themselves.

use crate::adaptive::Adaptive;
use crate::bdf::Bdf;
use crate::error::IntegrationError;
use crate::options::Options;
use crate::stats::Stats;
use crate::stepper::{StepInfo, Stepper};
use crate::system::OdeSystem;

/// DOPRI5 steps at its stability boundary before switching to BDF.
const STIFF_STEPS: usize = 15;
/// Consecutive steps against the evidence that clear it.
const CLEARING_STEPS: usize = 6;
/// BDF steps in a row at which an explicit method would be stable before switching back.
const NONSTIFF_STEPS: usize = 50;
/// `h·ρ` above this counts as at DOPRI5's stability boundary (about 3.3 on the negative real
/// axis). Hairer's DOPRI5 tests 3.25, but under a tight tolerance the step size controller
/// keeps stability-limited steps a little inside the boundary: on Robertson's problem at
/// rtol 1e-8 most steps had `h·ρ` between 2.5 and 3.25, so the switch came only after 4000
/// explicit steps (0.9 ms instead of 0.11). An accuracy-limited step of a non-stiff problem
/// has `h·ρ` far below 2.5, since its error would otherwise be of the order of the solution.
const STABILITY_BOUNDARY: f64 = 2.5;
/// Above this many states BDF's dense Jacobian and LU (n difference quotients, n³/3 operations
/// per factorisation) cost more than stability-limited explicit steps save; a system without a
/// Jacobian pattern (so without a sparse LU) stays explicit and says so.
pub const MAX_DENSE_STATES: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Explicit,
    Implicit,
}

/// The switching stepper.
pub struct Auto {
    explicit: Adaptive,
    implicit: Bdf,
    current: Which,
    /// Steps that point to the other method, since the last run of [`CLEARING_STEPS`] that
    /// did not.
    evidence: usize,
    /// Consecutive steps that did not point to the other method.
    against: usize,
    switch_pending: bool,
    /// Statistics of the method runs that ended with a switch.
    retired: Stats,
    switches: Vec<String>,
    /// Whether the note that the problem is too large to switch was given.
    too_large_noted: bool,
}

impl Auto {
    pub fn new(options: Options) -> Self {
        Auto {
            explicit: Adaptive::dopri5(options.clone()),
            // BDF is the stiff half of a step size controlled method: a fixed step given for
            // other methods must not switch it to its fixed-step mode.
            implicit: Bdf::new(Options { step: None, ..options }),
            current: Which::Explicit,
            evidence: 0,
            against: 0,
            switch_pending: false,
            retired: Stats::default(),
            switches: Vec::new(),
            too_large_noted: false,
        }
    }

    fn active(&self) -> &dyn Stepper {
        match self.current {
            Which::Explicit => &self.explicit,
            Which::Implicit => &self.implicit,
        }
    }

    fn active_mut(&mut self) -> &mut dyn Stepper {
        match self.current {
            Which::Explicit => &mut self.explicit,
            Which::Implicit => &mut self.implicit,
        }
    }
}

fn add(a: Stats, b: Stats) -> Stats {
    Stats {
        steps: a.steps + b.steps,
        rejected: a.rejected + b.rejected,
        rhs_evals: a.rhs_evals + b.rhs_evals,
        jacobians: a.jacobians + b.jacobians,
        symbolic_jacobians: a.symbolic_jacobians + b.symbolic_jacobians,
        sparse_jacobians: a.sparse_jacobians + b.sparse_jacobians,
        factorizations: a.factorizations + b.factorizations,
    }
}

impl Stepper for Auto {
    fn name(&self) -> &str {
        "auto"
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        self.current = Which::Explicit;
        self.evidence = 0;
        self.against = 0;
        self.switch_pending = false;
        self.retired = Stats::default();
        self.switches.clear();
        self.too_large_noted = false;
        self.explicit.initialize(sys, t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        if self.switch_pending {
            self.switch_pending = false;
            let (t, x) = (self.time(), self.state().to_vec());
            self.retired = add(self.retired, self.active().stats());
            self.current = match self.current {
                Which::Explicit => Which::Implicit,
                Which::Implicit => Which::Explicit,
            };
            let to = match self.current {
                Which::Explicit => "non-stiff: dopri5",
                Which::Implicit => "stiff: bdf",
            };
            self.switches.push(format!("t = {t}: the problem became {to}"));
            self.active_mut().initialize(sys, t, &x)?;
        }
        let info = self.active_mut().step(sys, t_limit)?;
        let points_elsewhere = match self.current {
            Which::Explicit => self.explicit.stiffness() > STABILITY_BOUNDARY,
            Which::Implicit => self.implicit.stiffness() < 1.0,
        };
        // As in DOPRI5: evidence accumulates, and only a run of steps against it clears it (the
        // estimate hovers around the boundary when the steps are stability-limited).
        if points_elsewhere {
            self.evidence += 1;
            self.against = 0;
        } else {
            self.against += 1;
            if self.against >= CLEARING_STEPS {
                self.evidence = 0;
            }
        }
        let needed = match self.current {
            Which::Explicit => STIFF_STEPS,
            Which::Implicit => NONSTIFF_STEPS,
        };
        if self.evidence >= needed {
            self.evidence = 0;
            self.against = 0;
            // A large system with a known pattern gets sparse Jacobians and a sparse LU in BDF.
            let sparse = sys.jacobian_pattern().is_some();
            if self.current == Which::Explicit && self.state().len() > MAX_DENSE_STATES && !sparse {
                if !self.too_large_noted {
                    self.too_large_noted = true;
                    self.switches.push(format!(
                        "t = {}: the problem looks stiff, but with {} states and no Jacobian pattern a dense stiff solver costs more than it saves; staying with dopri5 (try --solver bdf)",
                        info.t,
                        self.state().len()
                    ));
                }
            } else {
                self.switch_pending = true;
            }
        }
        Ok(info)
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        self.active().interpolate(t, out);
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.active_mut().restart(t, x)
    }

    fn state(&self) -> &[f64] {
        self.active().state()
    }

    fn time(&self) -> f64 {
        self.active().time()
    }

    fn stats(&self) -> Stats {
        add(self.retired, self.active().stats())
    }

    fn notes(&self) -> Vec<String> {
        self.switches.clone()
    }
}
