//! The sparse LU of an iteration matrix: the layout of a Jacobian's pattern with the symbolic
//! factorisation made once ([`SparsePattern`]), and the numeric factors that reuse it
//! ([`SparseLu`]).
//!
//! Input: the rows of a fixed pattern, then the Jacobian's values on it with the shift and the
//! factor of `σ·I − c·J`. Output: faer's LU factors, which solve in place. It deliberately
//! evaluates nothing: difference quotients on the pattern are built in `jacobian`.

use super::LuScalar;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{LuRef, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};
use std::sync::Arc;

/// The pattern of a sparse Jacobian (rows) and of its iteration matrix (compressed columns,
/// diagonal included), with where each Jacobian entry and each diagonal entry goes.
#[derive(Debug)]
pub struct SparsePattern {
    pub(super) n: usize,
    /// Rows of the Jacobian: row `i`'s entries are `row_start[i]..row_start[i + 1]`, in the
    /// order of the system's pattern.
    pub(super) row_start: Vec<usize>,
    /// The iteration matrix in compressed columns.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For each Jacobian entry, its position among the iteration matrix's values.
    entry_at: Vec<usize>,
    /// For each `i`, the position of `M_ii`.
    diagonal_at: Vec<usize>,
    /// faer's symbolic factorisation of `M`: the column ordering and the factors' structure.
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
        let symbolic = factorize_symbolic_lu(structure, Default::default()).ok()?;
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

    /// The Jacobian's rows as given (row `i` lists the columns of its entries).
    pub(crate) fn rows(&self) -> &[Vec<u32>] {
        &self.rows
    }

    /// The colour of each column: columns of one colour share no row, so one evaluation of `f`
    /// gives the difference quotients of all of them.
    pub(crate) fn colors(&self) -> &[u32] {
        &self.colors
    }

    /// The number of colours in [`SparsePattern::colors`].
    pub(crate) fn n_colors(&self) -> usize {
        self.n_colors
    }

    /// The number of Jacobian entries.
    pub fn nonzeros(&self) -> usize {
        self.entry_at.len()
    }

    /// The number of states.
    pub fn dim(&self) -> usize {
        self.n
    }
}

/// The sparse LU factors of an iteration matrix `M = σ·I − c·J` on a [`SparsePattern`], real
/// (`T = f64`) or complex (`T = Complex<f64>`), with everything a refactorisation reuses: `M`'s
/// values, faer's numeric factors and the scratch space of the factorisation and of the
/// solves, all sized once, so that refactoring and solving allocate nothing once the factors'
/// storage has grown to its size. The symbolic factorisation is the pattern's, shared by every
/// `SparseLu` of that pattern whatever its scalar.
pub struct SparseLu<T = f64> {
    pattern: Arc<SparsePattern>,
    /// `M`'s values in the pattern's compressed columns.
    values: Vec<T>,
    numeric: NumericLu<usize, T>,
    /// Whether `numeric` holds the factors of `values` (a failed factorisation leaves it
    /// unusable).
    factored: bool,
    factor_scratch: MemBuffer,
    solve_scratch: MemBuffer,
}

impl<T> std::fmt::Debug for SparseLu<T> {
    // faer's scratch buffers do not print themselves; the factors' size and state say enough.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLu")
            .field("n", &self.pattern.n)
            .field("entries", &self.values.len())
            .field("factored", &self.factored)
            .finish_non_exhaustive()
    }
}

impl<T: LuScalar> SparseLu<T> {
    /// Storage for the factors of matrices on `pattern`; nothing is factored yet.
    pub fn new(pattern: Arc<SparsePattern>) -> SparseLu<T> {
        let factor_scratch = MemBuffer::new(
            pattern
                .symbolic
                .factorize_numeric_lu_scratch::<T>(Par::Seq, Default::default()),
        );
        let solve_scratch = MemBuffer::new(pattern.symbolic.solve_in_place_scratch::<T>(1, Par::Seq));
        SparseLu {
            values: vec![T::ZERO; pattern.row_idx.len()],
            pattern,
            numeric: NumericLu::new(),
            factored: false,
            factor_scratch,
            solve_scratch,
        }
    }

    /// The pattern the factors belong to.
    pub fn pattern(&self) -> &Arc<SparsePattern> {
        &self.pattern
    }

    /// Factors the matrix whose entries in the pattern's compressed columns are set by `fill`
    /// (given the values, zeroed, and the pattern); `false` when it is singular (a zero or
    /// non-finite pivot).
    pub fn factor(&mut self, fill: impl FnOnce(&mut [T], &SparsePattern)) -> bool {
        self.values.fill(T::ZERO);
        fill(&mut self.values, &self.pattern);
        self.factored = false;
        if !self.values.iter().all(|v| v.is_finite()) {
            return false;
        }
        let p = &*self.pattern;
        let structure = SymbolicSparseColMatRef::new_checked(p.n, p.n, &p.col_ptr, None, &p.row_idx);
        let matrix = SparseColMatRef::new(structure, &self.values);
        let factored = p.symbolic.factorize_numeric_lu(
            &mut self.numeric,
            matrix,
            Par::Seq,
            MemStack::new(&mut self.factor_scratch),
            Default::default(),
        );
        self.factored = factored.is_ok();
        self.factored
    }

    /// Factors `σ·I − c·J` (`shift` is `σ`) for the values of a sparse Jacobian on this
    /// pattern; `false` when singular.
    pub fn factor_shifted(&mut self, shift: T, values: &[f64], c: f64) -> bool {
        self.factor(|m, pattern| {
            for &d in &pattern.diagonal_at {
                m[d] = shift;
            }
            for (&at, &v) in pattern.entry_at.iter().zip(values) {
                m[at] -= T::from_real(c * v);
            }
        })
    }

    /// Solves `M y = b` in place (`b` becomes `y`); `false` when nothing is factored or the
    /// solution is not finite (a singular `M` whose zero pivot the factorisation let pass).
    pub fn solve(&mut self, b: &mut [T]) -> bool {
        let n = self.pattern.n;
        if !self.factored || b.len() != n {
            return false;
        }
        let lu = LuRef::new_unchecked(&self.pattern.symbolic, &self.numeric);
        lu.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(b, n, 1),
            Par::Seq,
            MemStack::new(&mut self.solve_scratch),
        );
        b.iter().all(|v| v.is_finite())
    }
}

impl SparseLu<f64> {
    /// Factors `I − c·J` for the values of a sparse Jacobian on this pattern; `false` when
    /// singular.
    pub fn factor_iteration_matrix(&mut self, values: &[f64], c: f64) -> bool {
        self.factor_shifted(1.0, values, c)
    }
}
