//! The model's field `f(x)` at a fixed time and its Jacobian `∂f/∂x`, as the analysis reads
//! them: the right-hand side of the compiled program (which computes the algebraic variables
//! on the way) and its symbolic Jacobian, with central differences only when the program has
//! no symbolic Jacobian or it is not defined at a point.

use eqm_ir::failure::EvalFailure;
use eqm_sim::instance::Instance;
use eqm_sim::interp::{JacobianOut, OdeRhs};
use nalgebra::DMatrix;

/// How a Jacobian was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JacobianSource {
    Symbolic,
    /// Central differences: the program has no symbolic Jacobian, or it is not defined here.
    Differences,
}

/// A program instance evaluated at a fixed time.
pub(crate) struct Field<'a, 'p> {
    pub instance: &'a mut Instance<'p>,
    pub t: f64,
}

impl Field<'_, '_> {
    /// `f(t, x)`, with every value finite.
    pub fn f(&mut self, x: &[f64]) -> Result<Vec<f64>, EvalFailure> {
        let mut dx = vec![0.0; x.len()];
        self.instance.rhs(self.t, x, &mut dx)?;
        Ok(dx)
    }

    /// `∂f/∂x` at `x`: symbolic where the program has it, else central differences.
    pub fn jacobian(&mut self, x: &[f64]) -> Result<(DMatrix<f64>, JacobianSource), EvalFailure> {
        let n = x.len();
        let mut a = DMatrix::zeros(n, n);
        let mut dx = vec![0.0; n];
        let out = JacobianOut {
            f_x: Some(&mut a),
            ..Default::default()
        };
        if self.instance.jacobian(self.t, x, &mut dx, out)? {
            return Ok((a, JacobianSource::Symbolic));
        }
        Ok((self.differences(x)?, JacobianSource::Differences))
    }

    /// `∂f/∂x` at `x` by central differences, each step scaled by the state's size (the cube
    /// root of the machine precision balances truncation against rounding).
    pub fn differences(&mut self, x: &[f64]) -> Result<DMatrix<f64>, EvalFailure> {
        let n = x.len();
        let mut a = DMatrix::zeros(n, n);
        let mut xp = x.to_vec();
        for j in 0..n {
            let h = 6e-6 * x[j].abs().max(1.0);
            xp[j] = x[j] + h;
            let fp = self.f(&xp)?;
            xp[j] = x[j] - h;
            let fm = self.f(&xp)?;
            xp[j] = x[j];
            for i in 0..n {
                a[(i, j)] = (fp[i] - fm[i]) / (2.0 * h);
            }
        }
        // The instance's work array holds the last evaluation's values: leave it at `x`.
        self.f(x)?;
        Ok(a)
    }
}

/// The infinity norm of a vector.
pub(crate) fn norm_inf(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, a| m.max(a.abs()))
}
