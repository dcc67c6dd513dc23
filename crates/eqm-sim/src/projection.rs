//! Constraint projection: the corrected vector field that keeps invariants.
//!
//! Input: at a point `x`, the field `f(x)`, the invariants `g(x)` and their Jacobian
//! `G = ∂g/∂x` (from the program's symbolic Jacobian), and a gain `K = k·I`. Output: the
//! corrected field `f(x) − Q1ᵀ (L⁻¹ K g(x) + Q1 f(x))` (plus `∂g/∂t` inside the parentheses for
//! invariants that contain `time`) where `G = (L, 0) Q` is an LQ
//! decomposition, which is `f − G⁺ (K g + G f)` with `G⁺` the pseudo-inverse: along the
//! corrected field `d/dt g = −K g`, so the solution is driven back to the invariant manifold
//! at rate `k` while the motion along it (the tangential part of `f`) is untouched. For the
//! implicit methods, the Jacobian of the corrected field, `∂f/∂x − G⁺ (K G + G ∂f/∂x + H)` with
//! `H = ∂(G f̄)/∂x` the second derivatives of `g` along `f` (exact on the manifold, where the
//! term with the derivative of `G⁺` vanishes because `K g + G f = 0` there).
//!
//! The LQ decomposition of `G` is the QR decomposition of `Gᵀ`, computed here with Householder
//! reflections and column pivoting (rank revealing): redundant constraints (rows of `G` that
//! depend on others) give a smaller rank, and only the
//! independent rows are used. This module only does linear algebra on small dense matrices; it
//! does not evaluate the model and keeps no state between points beyond its buffers.

use nalgebra::DMatrix;

/// A column of `R` counts as zero below this fraction of the largest one: the numerical rank.
const RANK_TOLERANCE: f64 = 1e-10;

/// The projection's buffers and its last factorisation; see the module documentation.
#[derive(Debug, Clone)]
pub struct Projection {
    /// The gain `k` of `K = k·I`.
    pub gain: f64,
    n: usize,
    m: usize,
    /// `Gᵀ` (n × m, column-major) overwritten by the Householder vectors below the diagonal and
    /// `R` above it.
    a: Vec<f64>,
    /// The diagonal of `R` and the scale `2/(vᵀv)` of each reflection.
    r_diag: Vec<f64>,
    beta: Vec<f64>,
    /// Row `perm[k]` of `G` is column `k` of the pivoted `Gᵀ`.
    perm: Vec<usize>,
    rank: usize,
    work: Vec<f64>,
    y: Vec<f64>,
    correction: Vec<f64>,
}

impl Projection {
    /// A projection for `n` states and `m` invariants with gain `gain`.
    pub fn new(n: usize, m: usize, gain: f64) -> Projection {
        Projection {
            gain,
            n,
            m,
            a: vec![0.0; n * m],
            r_diag: vec![0.0; m],
            beta: vec![0.0; m],
            perm: (0..m).collect(),
            rank: 0,
            work: vec![0.0; n.max(m)],
            y: vec![0.0; m],
            correction: vec![0.0; n],
        }
    }

    /// The numerical rank of the last `G` factorised.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Factorises `G` (m × n): `Gᵀ P = Q R` with column pivoting, stopping at the numerical rank.
    pub fn factor(&mut self, g_x: &DMatrix<f64>) {
        let (n, m) = (self.n, self.m);
        for i in 0..m {
            for j in 0..n {
                self.a[i * n + j] = g_x[(i, j)];
            }
            self.perm[i] = i;
        }
        let mut largest = 0.0f64;
        self.rank = 0;
        for k in 0..m.min(n) {
            // The remaining column of largest norm becomes the pivot.
            let norm_of = |a: &[f64], c: usize| a[c * n + k..(c + 1) * n].iter().map(|v| v * v).sum::<f64>();
            let pivot = (k..m)
                .max_by(|&p, &q| norm_of(&self.a, p).total_cmp(&norm_of(&self.a, q)))
                .unwrap_or(k);
            if pivot != k {
                for j in 0..n {
                    self.a.swap(k * n + j, pivot * n + j);
                }
                self.perm.swap(k, pivot);
            }
            let norm = norm_of(&self.a, k).sqrt();
            largest = largest.max(norm);
            if norm <= RANK_TOLERANCE * largest || norm == 0.0 {
                break;
            }
            let head = self.a[k * n + k];
            let alpha = if head > 0.0 { -norm } else { norm };
            self.a[k * n + k] -= alpha;
            let v_norm2: f64 = self.a[k * n + k..(k + 1) * n].iter().map(|v| v * v).sum();
            self.r_diag[k] = alpha;
            self.beta[k] = if v_norm2 > 0.0 { 2.0 / v_norm2 } else { 0.0 };
            for c in k + 1..m {
                let s: f64 = (k..n).map(|j| self.a[k * n + j] * self.a[c * n + j]).sum();
                let f = self.beta[k] * s;
                for j in k..n {
                    self.a[c * n + j] -= f * self.a[k * n + j];
                }
            }
            self.rank = k + 1;
        }
    }

    /// `out = G⁺ w` for the last factorised `G`: the vector in the row space of `G` that
    /// satisfies the independent rows of `G out = w` (redundant rows are consistent with them
    /// for the right-hand sides the projection forms).
    pub fn solve(&mut self, w: &[f64], out: &mut [f64]) {
        let (n, r) = (self.n, self.rank);
        // Rᵀ y = (Pᵀ w) restricted to the independent rows: forward substitution.
        for i in 0..r {
            let mut s = w[self.perm[i]];
            for j in 0..i {
                s -= self.a[i * n + j] * self.y[j];
            }
            self.y[i] = s / self.r_diag[i];
        }
        out.fill(0.0);
        out[..r].copy_from_slice(&self.y[..r]);
        // out = Q (y, 0) = H_0 H_1 … H_{r−1} (y, 0).
        for k in (0..r).rev() {
            let v = &self.a[k * n + k..(k + 1) * n];
            let s: f64 = v.iter().zip(&out[k..]).map(|(a, b)| a * b).sum();
            let f = self.beta[k] * s;
            for (o, vi) in out[k..].iter_mut().zip(v) {
                *o -= f * vi;
            }
        }
    }

    /// Corrects the field `dx = f(x)` in place, given `g` and `G` at `x`:
    /// `dx −= G⁺ (K g + G f)`.
    /// With `g_t`, the explicit time derivative `∂g/∂t` of invariants that contain `time` (a
    /// moving suspension point): the corrected field is `f − G⁺ (K g + G f + ∂g/∂t)`, along
    /// which `d/dt g = G f + ∂g/∂t = −K g` still holds.
    pub fn correct(&mut self, g: &[f64], g_t: Option<&[f64]>, g_x: &DMatrix<f64>, dx: &mut [f64]) {
        if self.m == 0 {
            return;
        }
        self.factor(g_x);
        let mut w = std::mem::take(&mut self.work);
        w.resize(self.m.max(self.n), 0.0);
        for i in 0..self.m {
            let gf: f64 = (0..self.n).map(|j| g_x[(i, j)] * dx[j]).sum();
            w[i] = self.gain * g[i] + gf + g_t.map_or(0.0, |g_t| g_t[i]);
        }
        let mut c = std::mem::take(&mut self.correction);
        self.solve(&w[..self.m], &mut c);
        for (d, ci) in dx.iter_mut().zip(&c) {
            *d -= ci;
        }
        self.work = w;
        self.correction = c;
    }

    /// Turns `j = ∂f/∂x` into the Jacobian of the corrected field, given `G` at the point and
    /// `h = ∂(G f̄)/∂x` (f̄ held fixed): `j −= G⁺ (K G + G j + h)`, column by column.
    pub fn correct_jacobian(&mut self, g_x: &DMatrix<f64>, h: &DMatrix<f64>, j: &mut DMatrix<f64>) {
        if self.m == 0 {
            return;
        }
        self.factor(g_x);
        let a = g_x * self.gain + g_x * &*j + h;
        let mut c = vec![0.0; self.n];
        let mut column = vec![0.0; self.m];
        for col in 0..self.n {
            for i in 0..self.m {
                column[i] = a[(i, col)];
            }
            self.solve(&column, &mut c);
            for row in 0..self.n {
                j[(row, col)] -= c[row];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Projection;
    use nalgebra::{DMatrix, DVector};

    #[test]
    fn the_solution_is_the_pseudo_inverse_also_for_redundant_rows() {
        // Three constraints on four states, the third the sum of the first two (rank 2).
        let g = DMatrix::from_row_slice(3, 4, &[1.0, 2.0, 0.0, -1.0, 0.5, 0.0, 3.0, 1.0, 1.5, 2.0, 3.0, 0.0]);
        let w = DVector::from_row_slice(&[0.3, -1.2, -0.9]);
        let mut p = Projection::new(4, 3, 1.0);
        p.factor(&g);
        assert_eq!(p.rank(), 2);
        let mut c = vec![0.0; 4];
        p.solve(w.as_slice(), &mut c);
        let expected = g.clone().pseudo_inverse(1e-12).expect("pinv") * &w;
        for (a, b) in c.iter().zip(expected.iter()) {
            assert!((a - b).abs() < 1e-12, "{c:?} vs {expected}");
        }
        // Full rank: G c = w exactly.
        let g2 = DMatrix::from_row_slice(2, 3, &[1.0, 0.0, 2.0, 0.0, -1.0, 1.0]);
        let mut p2 = Projection::new(3, 2, 1.0);
        p2.factor(&g2);
        assert_eq!(p2.rank(), 2);
        let mut c2 = vec![0.0; 3];
        p2.solve(&[1.0, 2.0], &mut c2);
        let back = &g2 * DVector::from_column_slice(&c2);
        assert!((back[0] - 1.0).abs() < 1e-14 && (back[1] - 2.0).abs() < 1e-14, "{back}");
    }

    #[test]
    fn the_corrected_field_decays_the_invariant_at_the_gain() {
        // g(x) = x0^2 + x1^2 - 1 at a point off the circle, with a field that has a normal part.
        let x = [1.1, 0.2];
        let g = [x[0] * x[0] + x[1] * x[1] - 1.0];
        let g_x = DMatrix::from_row_slice(1, 2, &[2.0 * x[0], 2.0 * x[1]]);
        let mut dx = [0.3 - x[1], x[0] + 0.1];
        let mut p = Projection::new(2, 1, 5.0);
        p.correct(&g, None, &g_x, &mut dx);
        // d/dt g = G dx must be −K g.
        let rate = g_x[(0, 0)] * dx[0] + g_x[(0, 1)] * dx[1];
        assert!((rate + 5.0 * g[0]).abs() < 1e-14, "{rate} vs {}", -5.0 * g[0]);
    }
}
