//! The factorisation of a linear loop kept for the next solve with the same Jacobian.
//!
//! Input: a [`LoopSolver`] of a linear loop with symbolic partial derivatives, and its
//! problem. Output: its Jacobian in `jm` factored (and unfactored in `jac`), either newly or,
//! when the partial derivatives are bit for bit those of the last regular factorisation, as a
//! copy of that one. A linear loop whose coefficients are parameters (a resistor network, a
//! dense system with a parameter matrix) has the same Jacobian at every evaluation, and its LU
//! factorisation (cubic in the loop's size) would otherwise be repeated at every one. Because
//! the key is the partial derivatives themselves, nothing has to know which of them are
//! constant or when parameters change: the reused factors are exactly the ones factoring again
//! would give. Nonlinear loops are left alone: their partial derivatives change at every
//! Newton iteration, and keeping copies would only cost. This module does not iterate (see
//! [`LoopSolver::newton`]).

use super::*;

/// A regular factorisation and what it was computed from.
#[derive(Debug, Clone)]
pub(super) struct Factors {
    /// The partial derivatives the Jacobian was assembled from, in the solver's order.
    partials: Vec<f64>,
    /// The Jacobian unfactored, its LU factors in place and the row pivots.
    jac: DMatrix<f64>,
    lu: DMatrix<f64>,
    pivots: Vec<usize>,
}

impl LoopSolver {
    /// The Jacobian at the current point factored into `jm`, and kept unfactored in `jac`:
    /// `None` when an entry is not finite, else whether it is regular (see
    /// [`LoopSolver::factor`]).
    pub(super) fn factored_jacobian(&mut self, problem: &mut dyn LoopProblem) -> Result<Option<bool>, SolveError> {
        let reusable = self.linear && self.pattern.is_some();
        if !reusable {
            if !self.jacobian(problem)? {
                return Ok(None);
            }
            self.jac.copy_from(&self.jm);
            return Ok(Some(self.factor()));
        }
        problem.partials(&mut self.partials)?;
        if let Some(kept) = &self.factors
            && same_bits(&kept.partials, &self.partials)
        {
            self.jac.copy_from(&kept.jac);
            self.jm.copy_from(&kept.lu);
            self.pivots.copy_from_slice(&kept.pivots);
            return Ok(Some(true));
        }
        self.assemble();
        if !self.jm.iter().all(|v| v.is_finite()) {
            return Ok(None);
        }
        self.jac.copy_from(&self.jm);
        let regular = self.factor();
        if regular {
            self.keep_factors();
        }
        Ok(Some(regular))
    }

    /// Keeps the factorisation just made with the partial derivatives it came from, reusing
    /// the buffers of the last one.
    fn keep_factors(&mut self) {
        match &mut self.factors {
            Some(kept) => {
                kept.partials.copy_from_slice(&self.partials);
                kept.jac.copy_from(&self.jac);
                kept.lu.copy_from(&self.jm);
                kept.pivots.copy_from_slice(&self.pivots);
            }
            None => {
                self.factors = Some(Box::new(Factors {
                    partials: self.partials.clone(),
                    jac: self.jac.clone(),
                    lu: self.jm.clone(),
                    pivots: self.pivots.clone(),
                }));
            }
        }
    }
}

/// Whether two lists hold the same numbers bit for bit (so `0.0` and `-0.0` differ, and the
/// factors are only reused where assembling again would give the same matrix).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}
