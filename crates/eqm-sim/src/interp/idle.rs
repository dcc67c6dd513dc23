//! The singular Jacobian of a loop whose unknowns partly drop out of every equation at the
//! point (an enthalpy times a mass flow that is zero): the Newton step of the unknowns that do
//! enter, the others kept.
//!
//! Input: the Jacobian a [`LoopSolver`] kept unfactored, with the inner unknowns' derivatives
//! and the residuals. Output: whether only such unknowns make it singular, and then the step.
//! It does not iterate or decide acceptance ([`LoopSolver::newton`] does).

use super::*;

/// How far below its value at the start the largest residual must fall before a solution
/// reached by steps that kept idle unknowns is accepted: those steps pivot on some equations
/// only, and the others must be seen to hold.
pub(super) const IDLE_RESIDUAL: f64 = 1e-10;

impl LoopSolver {
    /// Whether the Jacobian kept in `jac` is singular only because some unknowns do not enter
    /// the equations at this point: their columns are exactly zero and no inner unknown
    /// depends on them (an enthalpy times a mass flow that is zero), and the other columns are
    /// independent. Every value of such an
    /// unknown solves the equations as well as any other here, so it keeps the value it holds
    /// (the last solution, or its start value), and `step` holds the Newton step of the
    /// unknowns that do enter, from the equations the elimination pivots on. Any other singular
    /// Jacobian (dependent columns that are not zero, as in `x + y = 1` with `2x + 2y = 2`)
    /// leaves infinitely many solutions that differ in unknowns that matter, and stays an error.
    pub(super) fn singular_only_by_idle_unknowns(&mut self) -> bool {
        let n = self.n;
        // A torn residual whose column is zero may still read the unknown through an inner
        // unknown (`x := 1 - y` in `2x + 2y = 2`: the residual is zero for every y, yet y
        // enters both equations). Only the symbolic Jacobian gives the inner unknowns'
        // derivatives that tell the two apart.
        if self.pattern.is_none() {
            return false;
        }
        let inner = self.dz.len() / n.max(1);
        let enters =
            |c: usize| (0..n).any(|r| self.jac[(r, c)] != 0.0) || (0..inner).any(|k| self.dz[k * n + c] != 0.0);
        let active: Vec<usize> = (0..n).filter(|&c| enters(c)).collect();
        if active.len() == n {
            return false;
        }
        let scale = self.jac.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let mut rhs: Vec<f64> = self.f.iter().map(|v| -v).collect();
        // Gaussian elimination with row pivoting over the active columns: each must find a
        // pivot row of its own.
        let mut rows: Vec<usize> = (0..n).collect();
        for (k, &c) in active.iter().enumerate() {
            let mut p = k;
            for q in k + 1..n {
                if self.jac[(rows[q], c)].abs() > self.jac[(rows[p], c)].abs() {
                    p = q;
                }
            }
            if self.jac[(rows[p], c)].abs() <= scale * 1e-14 {
                return false;
            }
            rows.swap(k, p);
            let pivot_row = rows[k];
            let pivot = self.jac[(pivot_row, c)];
            for &r in &rows[k + 1..] {
                let l = self.jac[(r, c)] / pivot;
                if l != 0.0 {
                    for &c2 in &active[k..] {
                        let u = self.jac[(pivot_row, c2)];
                        self.jac[(r, c2)] -= l * u;
                    }
                    rhs[r] -= l * rhs[pivot_row];
                }
            }
        }
        self.step.fill(0.0);
        for (k, &c) in active.iter().enumerate().rev() {
            let row = rows[k];
            let mut value = rhs[row];
            for &c2 in &active[k + 1..] {
                value -= self.jac[(row, c2)] * self.step[c2];
            }
            self.step[c] = value / self.jac[(row, c)];
        }
        self.step.iter().all(|v| v.is_finite())
    }
}
