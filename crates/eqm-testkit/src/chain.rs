//! The benchmark problem of the non-stiff integrators: a linear chain of `n` masses, mass 1 tied
//! to a wall by a spring `c` with a parallel damper `d`, each following mass tied to the previous
//! one by the same spring and damper. State order `[s_1..s_n, v_1..v_n]`; initially everything
//! is at rest and 0 except the last mass, displaced by 1.
//!
//! Input: the chain's size and coefficients. Output: its right-hand side (O(n)), its initial
//! state, its exact solution at any time (a sum over the decoupled modes, O(n²) per call) and
//! the same model as EQM text. It deliberately contains no integrator: benchmarks and tests
//! drive one themselves and compare with [`Chain::exact`].
//!
//! Why the closed form exists: the damping matrix is `d/c` times the stiffness matrix `c·T`,
//! with `T` tridiagonal (2 on the diagonal except 1 in the last row, -1 beside it), so the
//! eigenvectors of `T` decouple the system into damped oscillators.

use std::f64::consts::PI;

/// A chain of `n` equal masses `m`, springs `c` and dampers `d`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chain {
    pub n: usize,
    pub c: f64,
    pub d: f64,
    pub m: f64,
}

impl Chain {
    /// The benchmark's chain: `c = 100`, `d = 0.1`, `m = 1`.
    pub fn standard(n: usize) -> Chain {
        Chain {
            n,
            c: 100.0,
            d: 0.1,
            m: 1.0,
        }
    }

    /// `s_n = 1`, everything else 0.
    pub fn initial_state(&self) -> Vec<f64> {
        let mut x = vec![0.0; 2 * self.n];
        if self.n > 0 {
            x[self.n - 1] = 1.0;
        }
        x
    }

    /// `dx = f(x)`: `s_i' = v_i`, `m v_i' = f_{i+1} − f_i` with the force of spring and damper
    /// `i`, `f_i = c (s_i − s_{i−1}) + d (v_i − v_{i−1})` (`s_0 = v_0 = 0` is the wall, and no
    /// spring follows the last mass).
    pub fn rhs(&self, x: &[f64], dx: &mut [f64]) {
        let n = self.n;
        let (s, v) = x.split_at(n);
        let (ds, dv) = dx.split_at_mut(n);
        ds.copy_from_slice(v);
        let force = |i: usize| {
            let (s_before, v_before) = if i == 0 { (0.0, 0.0) } else { (s[i - 1], v[i - 1]) };
            self.c * (s[i] - s_before) + self.d * (v[i] - v_before)
        };
        let mut f_this = if n > 0 { force(0) } else { 0.0 };
        for (i, dv) in dv.iter_mut().enumerate() {
            let f_next = if i + 1 < n { force(i + 1) } else { 0.0 };
            *dv = (f_next - f_this) / self.m;
            f_this = f_next;
        }
    }

    /// The sparsity pattern of `f`'s Jacobian, row by row (the columns each derivative reads):
    /// `s_i'` reads `v_i`; `v_i'` reads the positions and speeds of masses `i − 1`, `i`, `i + 1`.
    pub fn jacobian_pattern(&self) -> Vec<Vec<u32>> {
        let m = self.n as u32;
        (0..m)
            .map(|i| vec![m + i])
            .chain((0..m).map(|i| {
                let near: Vec<u32> = (i.saturating_sub(1)..=(i + 1).min(m.saturating_sub(1))).collect();
                near.iter().copied().chain(near.iter().map(|j| m + j)).collect()
            }))
            .collect()
    }

    /// The exact state at time `t`, summed over the `n` modes. Mode `k` has the eigenvalue
    /// `λ_k = 4 sin²(θ_k / 2)`, `θ_k = (2k−1)π/(2n+1)`, of `T`, the eigenvector
    /// `φ_k(j) = sin(j θ_k)` with `|φ_k|² = (2n+1)/4`, and is a damped oscillator with
    /// `ω_k² = c λ_k / m` and damping ratio `ζ_k = d ω_k / (2c)`, started at
    /// `q_k(0) = φ_k(n) / |φ_k|²` at rest.
    pub fn exact(&self, t: f64) -> Vec<f64> {
        let n = self.n;
        let mut x = vec![0.0; 2 * n];
        let norm2 = (2 * n + 1) as f64 / 4.0;
        for k in 1..=n {
            let theta = (2 * k - 1) as f64 * PI / (2 * n + 1) as f64;
            let lambda = 4.0 * (theta / 2.0).sin().powi(2);
            let omega = (self.c * lambda / self.m).sqrt();
            let zeta = self.d * omega / (2.0 * self.c);
            let q0 = (n as f64 * theta).sin() / norm2;
            let (q, dq) = damped_oscillator(q0, omega, zeta, t);
            for j in 1..=n {
                let phi = (j as f64 * theta).sin();
                x[j - 1] += q * phi;
                x[n + j - 1] += dq * phi;
            }
        }
        x
    }

    /// The same model as EQM text: arrays `s[N]` and `v[N]` (the states, in that order), the
    /// spring-and-damper forces `f[N]` as for-equations, the initial state as fixed start values.
    pub fn eqm_source(&self) -> String {
        format!(
            "// A chain of N masses; mass 1 is tied to a wall, each further mass to the one before it,
// by a spring c with a parallel damper d. The last mass starts displaced by 1.
model Chain
  parameter Integer N = {n};
  parameter Real c = {c:?};
  parameter Real d = {d:?};
  parameter Real m = {m:?};
  Real s[N](start = {{if i == N then 1.0 else 0.0 for i in 1:N}}, each fixed = true);
  Real v[N](each start = 0, each fixed = true);
  Real f[N] \"Force of spring and damper i, pulling mass i towards mass i - 1\";
equation
  f[1] = c*s[1] + d*v[1];
  for i in 2:N loop
    f[i] = c*(s[i] - s[i - 1]) + d*(v[i] - v[i - 1]);
  end for;
  for i in 1:N loop
    der(s[i]) = v[i];
  end for;
  for i in 1:N - 1 loop
    m*der(v[i]) = f[i + 1] - f[i];
  end for;
  m*der(v[N]) = -f[N];
end Chain;
",
            n = self.n,
            c = self.c,
            d = self.d,
            m = self.m,
        )
    }
}

/// Position and velocity at `t` of `q'' + 2ζω q' + ω² q = 0` started at `q(0) = q0`, `q'(0) = 0`.
pub fn damped_oscillator(q0: f64, omega: f64, zeta: f64, t: f64) -> (f64, f64) {
    if omega == 0.0 {
        return (q0, 0.0);
    }
    if zeta < 1.0 {
        let omega_d = omega * (1.0 - zeta * zeta).sqrt();
        let decay = (-zeta * omega * t).exp();
        let (sin, cos) = (omega_d * t).sin_cos();
        let q = q0 * decay * (cos + zeta * omega / omega_d * sin);
        let dq = -q0 * decay * omega * omega / omega_d * sin;
        (q, dq)
    } else if zeta == 1.0 {
        let decay = (-omega * t).exp();
        (q0 * (1.0 + omega * t) * decay, -q0 * omega * omega * t * decay)
    } else {
        let root = omega * (zeta * zeta - 1.0).sqrt();
        let (r1, r2) = (-zeta * omega + root, -zeta * omega - root);
        let (a, b) = (-r2 * q0 / (r1 - r2), r1 * q0 / (r1 - r2));
        let (e1, e2) = ((r1 * t).exp(), (r2 * t).exp());
        (a * e1 + b * e2, a * r1 * e1 + b * r2 * e2)
    }
}
