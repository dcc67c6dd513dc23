//! The Jacobian and the iteration matrix `M = I − c·J` of the implicit methods, dense or sparse.
//!
//! Input: a Jacobian, dense (`n × n`) or sparse (the rows of a fixed pattern and their values,
//! from a system that provides them, [`super::OdeSystem::jacobian_pattern`]), and the factor
//! `c`. Output: the LU factors of `M`, which solve `M y = b` in place. Small systems use
//! nalgebra's dense LU; a system with a pattern and more than [`SPARSE_STATES`] states uses
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
        let (colors, n_colors) = crate::jacobian::color_columns(n, rows.iter());
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
        sys: &mut dyn super::OdeSystem,
        t: f64,
        point: &[f64],
        f_point: &[f64],
        floor: &dyn Fn(usize) -> f64,
        work: &mut [f64],
        values: &mut [f64],
        stats: &mut super::Stats,
    ) -> Result<(), super::IntegrationError> {
        let n = self.n;
        let mut column = vec![0.0; n];
        let mut step = vec![0.0; n];
        for color in 0..self.n_colors as u32 {
            work.copy_from_slice(point);
            for j in (0..n).filter(|&j| self.colors[j] == color) {
                let delta = super::difference_step(point[j], floor(j));
                work[j] = point[j] + delta;
                step[j] = work[j] - point[j];
            }
            super::eval_rhs(sys, t, work, &mut column, stats)?;
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

/// The LU factors of an iteration matrix `I − c·J`.
#[derive(Debug)]
pub enum Factors {
    Dense(nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>),
    /// Boxed: faer's factors are several times larger than nalgebra's handle.
    Sparse(Box<Lu<usize, f64>>),
}

impl Factors {
    /// Factors `I − c·J`; `None` when it is singular.
    pub fn new(jacobian: &Jacobian, c: f64) -> Option<Factors> {
        match jacobian {
            Jacobian::Dense(j) => {
                let n = j.nrows();
                let lu = (DMatrix::identity(n, n) - j * c).lu();
                lu.is_invertible().then_some(Factors::Dense(lu))
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
            Factors::Dense(lu) => {
                let mut v = nalgebra::DVectorViewMut::from_slice(b, b.len());
                if !lu.solve_mut(&mut v) {
                    return false;
                }
            }
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
    use super::{Factors, Jacobian, SparsePattern};
    use nalgebra::DMatrix;
    use std::sync::Arc;

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
            assert!(Factors::new(&sparse, c).expect("regular").solve(&mut x));
            assert!(Factors::new(&dense, c).expect("regular").solve(&mut y));
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
