//! How far a square sparse matrix is from singular ([`SparseSingularity`]): the sign of its
//! determinant and an estimate of the norm of its inverse, for the simulator's check of a
//! dummy-derivative form's state choice.
//!
//! Input: the positions of the matrix's entries once, then their values at every check.
//! Output: a [`Conditioning`], or `None` for a singular matrix. It deliberately solves no
//! system for a caller and decides nothing about states: the simulator does.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

/// A square sparse matrix on a fixed pattern, factored again for new values to tell how far it
/// is from singular: the sign of its determinant and an estimate of `‖M⁻¹‖₁`. The simulator
/// checks a dummy-derivative form's state choice with it at every output row.
///
/// The ordering and symbolic analysis are made once ([`SparseSingularity::new`]); each
/// [`SparseSingularity::examine`] costs a numeric factorisation (faer's simplicial LU with
/// partial pivoting, whose `U` diagonal gives the determinant's sign) and a few solves for
/// Hager's estimate of `‖M⁻¹‖₁` (the 1-norm estimator of LAPACK's `xLACON`): linear in the
/// factors' size, where a singular value decomposition of the dense matrix costs `O(n³)`.
/// The estimate is a lower bound, usually within a small factor of the norm, and
/// `1/‖M⁻¹‖₁` lies within a factor `√n` of the smallest singular value.
pub struct SparseSingularity {
    n: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For each entry in the caller's order, its position in the compressed columns.
    entry_at: Vec<usize>,
    values: Vec<f64>,
    symbolic: SymbolicLu<usize>,
    lu: faer::sparse::linalg::lu::simplicial::SimplicialLu<usize, f64>,
    row_perm: Vec<usize>,
    row_perm_inv: Vec<usize>,
    factor_scratch: MemBuffer,
    solve_scratch: MemBuffer,
    /// Vectors of the estimator, and the marks of the permutations' cycles.
    x: Vec<f64>,
    z: Vec<f64>,
    seen: Vec<bool>,
}

impl std::fmt::Debug for SparseSingularity {
    // faer's scratch buffers do not print themselves; the size says enough.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseSingularity")
            .field("n", &self.n)
            .field("entries", &self.entry_at.len())
            .finish_non_exhaustive()
    }
}

/// What [`SparseSingularity::examine`] found: `None` from it means singular (a zero pivot).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditioning {
    /// The sign of the determinant (±1).
    pub sign: f64,
    /// A lower bound of `‖M⁻¹‖₁`, usually within a small factor of it.
    pub inverse_norm: f64,
}

impl SparseSingularity {
    /// The check of `n × n` matrices whose nonzero entries are at `entries` (row, column), each
    /// at most once and inside the matrix; `None` otherwise.
    pub fn new(n: usize, entries: &[(usize, usize)]) -> Option<SparseSingularity> {
        if entries.iter().any(|&(i, j)| i >= n || j >= n) {
            return None;
        }
        let mut columns: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(i, j) in entries {
            columns[j].push(i);
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        col_ptr.push(0);
        let mut row_idx = Vec::with_capacity(entries.len());
        for column in &mut columns {
            column.sort_unstable();
            if column.windows(2).any(|w| w[0] == w[1]) {
                return None;
            }
            row_idx.extend_from_slice(column);
            col_ptr.push(row_idx.len());
        }
        let entry_at = entries
            .iter()
            .map(|&(i, j)| col_ptr[j] + row_idx[col_ptr[j]..col_ptr[j + 1]].binary_search(&i).unwrap_or(0))
            .collect();
        let structure = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let params = faer::sparse::linalg::lu::LuSymbolicParams {
            supernodal_flop_ratio_threshold: faer::sparse::linalg::SupernodalThreshold::FORCE_SIMPLICIAL,
            ..Default::default()
        };
        let symbolic = factorize_symbolic_lu(structure, params).ok()?;
        use faer::sparse::linalg::lu::simplicial;
        Some(SparseSingularity {
            n,
            values: vec![0.0; row_idx.len()],
            col_ptr,
            row_idx,
            entry_at,
            symbolic,
            lu: simplicial::SimplicialLu::new(),
            row_perm: vec![0; n],
            row_perm_inv: vec![0; n],
            factor_scratch: MemBuffer::new(simplicial::factorize_simplicial_numeric_lu_scratch::<usize, f64>(n, n)),
            solve_scratch: MemBuffer::new(simplicial::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq)),
            x: vec![0.0; n],
            z: vec![0.0; n],
            seen: vec![false; n],
        })
    }

    /// Factors the matrix with the entries' `values` (in the order given to
    /// [`SparseSingularity::new`]): `None` when it is singular (a zero or non-finite pivot),
    /// else the sign of its determinant and the estimate of `‖M⁻¹‖₁` (infinite when a solve
    /// overflows).
    pub fn examine(&mut self, values: &[f64]) -> Option<Conditioning> {
        use faer::sparse::linalg::lu::simplicial;
        let n = self.n;
        if n == 0 {
            return Some(Conditioning {
                sign: 1.0,
                inverse_norm: 0.0,
            });
        }
        for (&at, &v) in self.entry_at.iter().zip(values) {
            self.values[at] = v;
        }
        if !self.values.iter().all(|v| v.is_finite()) {
            return None;
        }
        let structure = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let matrix = SparseColMatRef::new(structure, &self.values);
        simplicial::factorize_simplicial_numeric_lu(
            &mut self.row_perm,
            &mut self.row_perm_inv,
            &mut self.lu,
            matrix,
            self.symbolic.col_perm(),
            MemStack::new(&mut self.factor_scratch),
        )
        .ok()?;
        // U's diagonal entry is the last of each of its columns (faer stores the pivot last).
        let mut sign = 1.0;
        let u = self.lu.u_factor_unsorted();
        for j in 0..n {
            let pivot = u.val_of_col(j).last().copied().unwrap_or(0.0);
            if pivot == 0.0 || !pivot.is_finite() {
                return None;
            }
            sign *= pivot.signum();
        }
        sign *= parity(&self.row_perm, &mut self.seen) * parity(self.symbolic.col_perm().arrays().0, &mut self.seen);
        let inverse_norm = self.inverse_norm_estimate();
        Some(Conditioning { sign, inverse_norm })
    }

    /// Hager's estimate of `‖M⁻¹‖₁` from the factors: at most five pairs of solves with `M`
    /// and `Mᵀ`, moving to the unit vector where the gradient of `‖M⁻¹x‖₁` is largest.
    fn inverse_norm_estimate(&mut self) -> f64 {
        let n = self.n;
        let row_perm = faer::perm::PermRef::new_checked(&self.row_perm, &self.row_perm_inv, n);
        let col_perm = self.symbolic.col_perm();
        self.x.fill(1.0 / n as f64);
        let mut estimate = 0.0;
        let mut last_j = usize::MAX;
        for _ in 0..5 {
            self.lu.solve_in_place_with_conj(
                row_perm,
                col_perm,
                Conj::No,
                MatMut::from_column_major_slice_mut(&mut self.x, n, 1),
                Par::Seq,
                MemStack::new(&mut self.solve_scratch),
            );
            let norm: f64 = self.x.iter().map(|v| v.abs()).sum();
            if !norm.is_finite() {
                return f64::INFINITY;
            }
            estimate = norm;
            for (z, x) in self.z.iter_mut().zip(&self.x) {
                *z = if *x >= 0.0 { 1.0 } else { -1.0 };
            }
            self.lu.solve_transpose_in_place_with_conj(
                row_perm,
                col_perm,
                Conj::No,
                MatMut::from_column_major_slice_mut(&mut self.z, n, 1),
                Par::Seq,
                MemStack::new(&mut self.solve_scratch),
            );
            let (j, largest) =
                self.z
                    .iter()
                    .map(|v| v.abs())
                    .enumerate()
                    .fold(
                        (0, f64::NEG_INFINITY),
                        |best, (j, v)| if v > best.1 { (j, v) } else { best },
                    );
            if !largest.is_finite() {
                return f64::INFINITY;
            }
            // x was the previous iterate, in the solve's input: zᵀx for a unit vector e_j is z_j.
            let previous = if last_j == usize::MAX {
                self.z.iter().sum::<f64>() / n as f64
            } else {
                self.z[last_j]
            };
            if largest <= previous || j == last_j {
                break;
            }
            last_j = j;
            self.x.fill(0.0);
            self.x[j] = 1.0;
        }
        estimate
    }
}

/// The parity (±1) of the permutation `p`; `seen` (at least `p.len()` marks) is scratch.
fn parity(p: &[usize], seen: &mut [bool]) -> f64 {
    seen[..p.len()].fill(false);
    let mut sign = 1.0;
    for start in 0..p.len() {
        if seen[start] {
            continue;
        }
        let mut length = 0;
        let mut i = start;
        while !seen[i] {
            seen[i] = true;
            i = p[i];
            length += 1;
        }
        if length % 2 == 0 {
            sign = -sign;
        }
    }
    sign
}
