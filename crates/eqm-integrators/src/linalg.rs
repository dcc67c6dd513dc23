//! The Jacobian and the iteration matrix `M = I − c·J` of the implicit methods, dense or sparse.
//!
//! Input: a Jacobian, dense (`n × n`) or sparse (the rows of a fixed pattern and their values,
//! from a system that provides them, [`crate::OdeSystem::jacobian_pattern`]), and the factor
//! `c`. Output: the LU factors of `M`, which solve `M y = b` in place. Small systems use
//! [`DenseLu`], a plain column-major LU with partial pivoting (also for the complex matrix of
//! Radau IIA); a system with a pattern and more than [`SPARSE_STATES`] states uses
//! faer's sparse LU: `M`'s pattern (the Jacobian's and the diagonal) is laid out in compressed
//! columns once, the fill-reducing ordering and symbolic factorisation are computed once and
//! reused for every numeric factorisation, since the pattern never changes.
//!
//! faer is the sparse LU chosen because it is pure Rust (no C toolchain or system library on
//! the machines CI runs on), actively maintained, has partial pivoting with a COLAMD ordering,
//! and separates the symbolic from the numeric factorisation. It is built without its thread
//! pool, so results do not depend on the number of cores. This module does not evaluate
//! anything and does not decide when a Jacobian is stale (the methods do).

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Lu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use nalgebra::DMatrix;
use std::sync::Arc;

/// Above this many states, a system that provides its Jacobian's pattern gets the sparse LU.
pub const SPARSE_STATES: usize = 200;

/// A Jacobian `∂f/∂x`.
#[derive(Debug, Clone)]
pub enum Jacobian {
    Dense(DMatrix<f64>),
    /// The values of the pattern's entries, row by row.
    Sparse {
        pattern: Arc<SparsePattern>,
        values: Vec<f64>,
    },
}

impl Jacobian {
    /// `max_i Σ_j |J_ij|`, the infinity norm (a bound of the spectral radius).
    pub fn norm_inf(&self) -> f64 {
        match self {
            Jacobian::Dense(j) => j
                .row_iter()
                .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
                .fold(0.0, f64::max),
            Jacobian::Sparse { pattern, values } => (0..pattern.n)
                .map(|i| {
                    values[pattern.row_start[i]..pattern.row_start[i + 1]]
                        .iter()
                        .map(|v| v.abs())
                        .sum::<f64>()
                })
                .fold(0.0, f64::max),
        }
    }
}

/// The pattern of a sparse Jacobian (rows) and of its iteration matrix (compressed columns,
/// diagonal included), with where each Jacobian entry and each diagonal entry goes.
#[derive(Debug)]
pub struct SparsePattern {
    n: usize,
    /// Rows of the Jacobian: row `i`'s entries are `row_start[i]..row_start[i + 1]`, in the
    /// order of the system's pattern.
    row_start: Vec<usize>,
    /// The iteration matrix in compressed columns.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For each Jacobian entry, its position among the iteration matrix's values.
    entry_at: Vec<usize>,
    /// For each `i`, the position of `M_ii`.
    diagonal_at: Vec<usize>,
    symbolic: SymbolicLu<usize>,
    /// The Jacobian's rows as given, and a column colouring of them (columns of one colour
    /// share no row), for difference quotients by colour where the system gives no values.
    rows: Vec<Vec<u32>>,
    colors: Vec<u32>,
    n_colors: usize,
}

impl SparsePattern {
    /// The layout of `rows` (row `i` lists the columns of its nonzero entries, sorted, each
    /// below `n`); `None` when the pattern is not valid or faer cannot analyse it.
    pub fn new(n: usize, rows: &[Vec<u32>]) -> Option<SparsePattern> {
        if rows.len() != n || rows.iter().flatten().any(|&j| j as usize >= n) {
            return None;
        }
        let mut row_start = Vec::with_capacity(n + 1);
        row_start.push(0);
        for row in rows {
            row_start.push(row_start.last().copied().unwrap_or(0) + row.len());
        }
        // Columns of M: the Jacobian's entries by column, and the diagonal.
        let mut columns: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, row) in rows.iter().enumerate() {
            for &j in row {
                columns[j as usize].push(i);
            }
        }
        for (j, column) in columns.iter_mut().enumerate() {
            column.push(j);
            column.sort_unstable();
            column.dedup();
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        col_ptr.push(0);
        let mut row_idx = Vec::new();
        for column in &columns {
            row_idx.extend_from_slice(column);
            col_ptr.push(row_idx.len());
        }
        let position = |i: usize, j: usize| -> usize {
            let column = &row_idx[col_ptr[j]..col_ptr[j + 1]];
            col_ptr[j] + column.binary_search(&i).expect("every entry has a place")
        };
        let entry_at = rows
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row.iter().map(move |&j| (i, j as usize)))
            .map(|(i, j)| position(i, j))
            .collect();
        let diagonal_at = (0..n).map(|i| position(i, i)).collect();
        let structure = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = SymbolicLu::try_new(structure).ok()?;
        let (colors, n_colors) = eqm_structural::coloring::color_columns(n, rows.iter());
        Some(SparsePattern {
            n,
            row_start,
            col_ptr,
            row_idx,
            entry_at,
            diagonal_at,
            symbolic,
            rows: rows.to_vec(),
            colors,
            n_colors,
        })
    }

    /// The Jacobian's values by forward differences, one evaluation of `f` per colour: all
    /// columns of a colour move at once, and each row reads the one of them it depends on.
    /// `work` (n elements) is scratch space.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn difference_values(
        &self,
        sys: &mut dyn crate::OdeSystem,
        t: f64,
        point: &[f64],
        f_point: &[f64],
        floor: &dyn Fn(usize) -> f64,
        work: &mut [f64],
        values: &mut [f64],
        stats: &mut crate::Stats,
    ) -> Result<(), crate::IntegrationError> {
        let n = self.n;
        let mut column = vec![0.0; n];
        let mut step = vec![0.0; n];
        for color in 0..self.n_colors as u32 {
            work.copy_from_slice(point);
            for j in (0..n).filter(|&j| self.colors[j] == color) {
                let delta = crate::jacobian::difference_step(point[j], floor(j));
                work[j] = point[j] + delta;
                step[j] = work[j] - point[j];
            }
            crate::system::eval_rhs(sys, t, work, &mut column, stats)?;
            let mut k = 0;
            for (i, row) in self.rows.iter().enumerate() {
                for &j in row {
                    if self.colors[j as usize] == color {
                        values[k] = (column[i] - f_point[i]) / step[j as usize];
                    }
                    k += 1;
                }
            }
        }
        Ok(())
    }

    /// The number of Jacobian entries.
    pub fn nonzeros(&self) -> usize {
        self.entry_at.len()
    }
}

/// The numbers a [`DenseLu`] works with: real for most methods, complex for the complex-conjugate
/// stage pair of Radau IIA.
pub trait LuScalar:
    Copy
    + std::fmt::Debug
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    /// The size used to choose pivots (for complex numbers |re| + |im|, as LAPACK's `cabs1`:
    /// as good a choice as the modulus, without its square root).
    fn magnitude(self) -> f64;
    fn is_finite(self) -> bool;
}

impl LuScalar for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn magnitude(self) -> f64 {
        self.abs()
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
}

impl LuScalar for nalgebra::Complex<f64> {
    const ZERO: nalgebra::Complex<f64> = nalgebra::Complex::new(0.0, 0.0);
    const ONE: nalgebra::Complex<f64> = nalgebra::Complex::new(1.0, 0.0);
    fn magnitude(self) -> f64 {
        self.re.abs() + self.im.abs()
    }
    fn is_finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
}

/// The LU factorisation `P M = L U` of a small dense matrix, with partial pivoting.
///
/// Written out rather than taken from nalgebra because the implicit methods factor and solve
/// small systems (a few to a few hundred states) thousands of times, where nalgebra's generic
/// triangular solves were a fifth of the time of a stiff integration. The factors are stored
/// column by column and every loop is an update of a contiguous column by a multiple of another
/// (not a dot product, whose sum is one chain of dependent additions), so that the compiler
/// vectorises it; the buffers are reused from one factorisation to the next.
#[derive(Debug, Clone, Default)]
pub struct DenseLu<T> {
    n: usize,
    /// `L` (unit diagonal, not stored) below the diagonal and `U` on and above it, column-major.
    factors: Vec<T>,
    /// Row `k` was exchanged with row `pivots[k]` at elimination step `k`.
    pivots: Vec<usize>,
    /// `1 / U_kk`: the back substitution multiplies, since a division's latency is several
    /// multiplications' and each step of the substitution waits for the one before.
    inverse_diagonal: Vec<T>,
}

impl<T: LuScalar> DenseLu<T> {
    /// Factors the `n × n` matrix with entries `entry(i, j)`, reusing this factorisation's
    /// storage; `false` when the matrix is singular (a zero or non-finite pivot).
    pub fn factor(&mut self, n: usize, entry: impl Fn(usize, usize) -> T) -> bool {
        self.n = n;
        self.factors.clear();
        for j in 0..n {
            self.factors.extend((0..n).map(|i| entry(i, j)));
        }
        self.pivots.clear();
        self.inverse_diagonal.clear();
        let a = &mut self.factors;
        for k in 0..n {
            let column = &a[k * n..(k + 1) * n];
            let pivot = (k..n)
                .max_by(|&p, &q| column[p].magnitude().total_cmp(&column[q].magnitude()))
                .unwrap_or(k);
            let size = column[pivot].magnitude();
            if size == 0.0 || !size.is_finite() {
                return false;
            }
            self.pivots.push(pivot);
            if pivot != k {
                for j in 0..n {
                    a.swap(j * n + k, j * n + pivot);
                }
            }
            // The multipliers (column k of L), then the trailing columns minus multiples of them.
            let (left, right) = a.split_at_mut((k + 1) * n);
            let column = &mut left[k * n..];
            let inverse = T::ONE / column[k];
            self.inverse_diagonal.push(inverse);
            for l in &mut column[k + 1..] {
                *l = *l * inverse;
            }
            let multipliers = &column[k + 1..];
            for target in right.chunks_exact_mut(n) {
                let u = target[k];
                for (x, &l) in target[k + 1..].iter_mut().zip(multipliers) {
                    *x = *x - l * u;
                }
            }
        }
        true
    }

    /// Solves `M y = b` in place (`b` becomes `y`); `false` when the solution is not finite.
    pub fn solve(&self, b: &mut [T]) -> bool {
        let n = self.n;
        debug_assert_eq!(b.len(), n);
        // Small systems, the common case of the stiff methods, get substitutions written for
        // their size: fully unrolled, without the loop bookkeeping, which for a few states cost
        // as much as the arithmetic.
        match n {
            // A model without states (only events and algebraic variables) has nothing to solve.
            0 => {}
            1 => self.substitute::<1>(b),
            2 => self.substitute::<2>(b),
            3 => self.substitute::<3>(b),
            4 => self.substitute::<4>(b),
            5 => self.substitute::<5>(b),
            6 => self.substitute::<6>(b),
            7 => self.substitute::<7>(b),
            8 => self.substitute::<8>(b),
            _ => self.substitute_any(b),
        }
        b.iter().all(|v| v.is_finite())
    }

    /// The substitutions for exactly `N` states (`b` has `N` elements).
    fn substitute<const N: usize>(&self, b: &mut [T]) {
        if b.len() != N {
            return self.substitute_any(b);
        }
        let Ok(b) = <&mut [T; N]>::try_from(b) else {
            return;
        };
        let f = &self.factors[..N * N];
        for (k, &p) in self.pivots.iter().enumerate().take(N) {
            b.swap(k, p);
        }
        for k in 0..N {
            let y = b[k];
            for i in k + 1..N {
                b[i] = b[i] - f[k * N + i] * y;
            }
        }
        for k in (0..N).rev() {
            b[k] = b[k] * self.inverse_diagonal[k];
            let y = b[k];
            for i in 0..k {
                b[i] = b[i] - f[k * N + i] * y;
            }
        }
    }

    /// The substitutions for any size.
    fn substitute_any(&self, b: &mut [T]) {
        let n = self.n;
        for (k, &p) in self.pivots.iter().enumerate() {
            b.swap(k, p);
        }
        for (k, column) in self.factors.chunks_exact(n).enumerate() {
            let (done, rest) = b.split_at_mut(k + 1);
            let y = done[k];
            for (x, &l) in rest.iter_mut().zip(&column[k + 1..]) {
                *x = *x - l * y;
            }
        }
        for (k, column) in self.factors.chunks_exact(n).enumerate().rev() {
            let (rest, done) = b.split_at_mut(k);
            done[0] = done[0] * self.inverse_diagonal[k];
            let y = done[0];
            for (x, &u) in rest.iter_mut().zip(&column[..k]) {
                *x = *x - u * y;
            }
        }
    }
}

/// The LU factors of an iteration matrix `I − c·J`.
#[derive(Debug)]
pub enum Factors {
    Dense(DenseLu<f64>),
    /// Boxed: faer's factors are several times larger than nalgebra's handle.
    Sparse(Box<Lu<usize, f64>>),
}

impl Factors {
    /// Factors `I − c·J`, into the storage of `previous` factors where it fits (dense ones);
    /// `None` when the matrix is singular.
    pub fn new(previous: Option<Factors>, jacobian: &Jacobian, c: f64) -> Option<Factors> {
        match jacobian {
            Jacobian::Dense(j) => {
                let mut lu = match previous {
                    Some(Factors::Dense(lu)) => lu,
                    _ => DenseLu::default(),
                };
                let regular = lu.factor(j.nrows(), |i, k| (if i == k { 1.0 } else { 0.0 }) - c * j[(i, k)]);
                regular.then_some(Factors::Dense(lu))
            }
            Jacobian::Sparse { pattern, values } => {
                let mut m = vec![0.0; pattern.row_idx.len()];
                for &d in &pattern.diagonal_at {
                    m[d] = 1.0;
                }
                for (&at, v) in pattern.entry_at.iter().zip(values) {
                    m[at] -= c * v;
                }
                let structure = SymbolicSparseColMatRef::new_checked(
                    pattern.n,
                    pattern.n,
                    &pattern.col_ptr,
                    None,
                    &pattern.row_idx,
                );
                let matrix = SparseColMatRef::new(structure, &m);
                let lu = Lu::try_new_with_symbolic(pattern.symbolic.clone(), matrix).ok()?;
                Some(Factors::Sparse(Box::new(lu)))
            }
        }
    }

    /// Solves `M y = b` in place (`b` becomes `y`); `false` when the solution is not finite.
    pub fn solve(&self, b: &mut [f64]) -> bool {
        match self {
            Factors::Dense(lu) => return lu.solve(b),
            Factors::Sparse(lu) => {
                let n = b.len();
                lu.solve_in_place(faer::MatMut::from_column_major_slice_mut(b, n, 1));
            }
        }
        b.iter().all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::{DenseLu, Factors, Jacobian, SparsePattern};
    use nalgebra::{Complex, DMatrix, DVector};
    use std::sync::Arc;

    /// The written-out LU solves what nalgebra's solves, for real and complex matrices that
    /// need row exchanges (zero leading entries), and refuses singular ones.
    #[test]
    fn the_dense_lu_solves_like_nalgebra_and_detects_singular_matrices() {
        for n in [1usize, 2, 3, 5, 8, 9, 12] {
            let entry = |i: usize, k: usize| {
                if i == 0 && n > 1 {
                    (k as f64 - 0.5).max(0.0)
                } else {
                    ((i * 7 + k * 3) % 5) as f64 - 1.7 + if i == k { 4.0 } else { 0.0 }
                }
            };
            let matrix = DMatrix::from_fn(n, n, entry);
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.9).cos()).collect();
            let expected = matrix
                .clone()
                .lu()
                .solve(&DVector::from_column_slice(&b))
                .expect("regular");
            let mut lu = DenseLu::default();
            assert!(lu.factor(n, entry));
            let mut x = b.clone();
            assert!(lu.solve(&mut x));
            for (a, e) in x.iter().zip(expected.iter()) {
                assert!(
                    (a - e).abs() < 1e-12 * (1.0 + e.abs()),
                    "n = {n}: {x:?} vs {expected:?}"
                );
            }
            // The complex matrix M + i·I against nalgebra's complex LU.
            let complex = |i: usize, k: usize| Complex::new(entry(i, k), if i == k { 1.0 } else { 0.0 });
            let cm = DMatrix::from_fn(n, n, complex);
            let cb: Vec<Complex<f64>> = b.iter().map(|&v| Complex::new(v, -v)).collect();
            let expected = cm.lu().solve(&DVector::from_column_slice(&cb)).expect("regular");
            let mut clu = DenseLu::default();
            assert!(clu.factor(n, complex));
            let mut cx = cb.clone();
            assert!(clu.solve(&mut cx));
            for (a, e) in cx.iter().zip(expected.iter()) {
                assert!((a - e).norm() < 1e-12 * (1.0 + e.norm()));
            }
        }
        let mut lu = DenseLu::default();
        assert!(!lu.factor(3, |i, k| (i + k) as f64), "rank 2");
        assert!(!lu.factor(2, |_, _| f64::NAN));
    }

    #[test]
    fn the_sparse_factors_solve_what_the_dense_ones_solve() {
        // A tridiagonal Jacobian with one far entry, and a row that needs pivoting in M.
        let n = 7;
        let mut rows: Vec<Vec<u32>> = (0..n as u32)
            .map(|i| (i.saturating_sub(1)..=(i + 1).min(n as u32 - 1)).collect())
            .collect();
        rows[0].push(6);
        let values: Vec<f64> = rows
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row.iter().map(move |&j| (i as f64 + 1.0) * 0.7 - j as f64 * 1.3 + 0.1))
            .collect();
        let mut dense = DMatrix::zeros(n, n);
        let mut k = 0;
        for (i, row) in rows.iter().enumerate() {
            for &j in row {
                dense[(i, j as usize)] = values[k];
                k += 1;
            }
        }
        let pattern = Arc::new(SparsePattern::new(n, &rows).expect("pattern"));
        assert_eq!(pattern.nonzeros(), values.len());
        let sparse = Jacobian::Sparse { pattern, values };
        let dense = Jacobian::Dense(dense);
        assert!((sparse.norm_inf() - dense.norm_inf()).abs() < 1e-14);
        for c in [0.1, 1.0, 3.0] {
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let (mut x, mut y) = (b.clone(), b.clone());
            assert!(Factors::new(None, &sparse, c).expect("regular").solve(&mut x));
            assert!(Factors::new(None, &dense, c).expect("regular").solve(&mut y));
            for (a, b) in x.iter().zip(&y) {
                assert!((a - b).abs() < 1e-12 * (1.0 + b.abs()), "{x:?} vs {y:?}");
            }
        }
        assert!(
            SparsePattern::new(2, &[vec![0], vec![2]]).is_none(),
            "a column out of range"
        );
    }
}
