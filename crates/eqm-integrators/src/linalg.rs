//! The Jacobian and the iteration matrices of the implicit methods, dense or sparse: `M = I − c·J`
//! (BDF, and the other methods with one linear system per Newton iteration) and the shifted
//! `M = σ·I − c·J` with a real or complex `σ` (Radau IIA's real system `μ/h − J` and complex one
//! `μ_c/h − J`).
//!
//! Input: a Jacobian, dense (`n × n`) or sparse (the rows of a fixed pattern and their values,
//! from a system that provides them, [`crate::OdeSystem::jacobian_pattern`]), the shift `σ` and
//! the factor `c`. Output: the LU factors of `M` ([`Factors`]), real or complex, which solve
//! `M y = b` in place. Small systems use [`DenseLu`], a plain column-major LU with partial
//! pivoting; a system with a pattern that [`prefers_sparse`] uses faer's sparse LU
//! ([`SparseLu`]): `M`'s pattern (the Jacobian's and the diagonal) is laid out in compressed
//! columns once, the fill-reducing ordering and symbolic factorisation are computed once (in the
//! [`SparsePattern`], shared by the real and the complex factors of one pattern, since the
//! ordering depends only on where the entries are), and every numeric factorisation reuses them
//! and the storage of the previous one (its values, its factors and faer's scratch space), since
//! the pattern never changes. Both LUs are generic over the scalar ([`LuScalar`]: `f64` and
//! `Complex<f64>`, which is faer's `c64`), so that the complex systems run through the same code.
//!
//! faer is the sparse LU chosen because it is pure Rust (no C toolchain or system library on
//! the machines CI runs on), actively maintained, has partial pivoting with a COLAMD ordering,
//! and separates the symbolic from the numeric factorisation. It runs sequentially, so results
//! do not depend on the number of cores. This module does not evaluate anything and does not
//! decide when a Jacobian or its factors are stale (the methods do).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{LuRef, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};
use nalgebra::DMatrix;
use std::sync::Arc;

/// Below this many states the dense LU is used whatever the pattern: the written-out dense
/// elimination and substitutions of a few dozen states cost about as much as the sparse LU's
/// bookkeeping (permutations, index lists). Measured with BDF on the chain of masses
/// (`cargo bench --bench stiff -- chain bdf`): at 32 states both run equally fast, at 200
/// states the sparse LU makes the run two to three times faster.
pub const MIN_SPARSE_STATES: usize = 32;

/// At most this share of the iteration matrix's entries may be nonzero for the sparse LU. The
/// dense LU costs `n³/3` multiply-adds whatever the values; a sparse LU costs about the sum over
/// its columns of (entries of `L`'s column) × (entries of `U`'s row), which for a matrix whose
/// entries are a quarter or less of `n²` and whose ordering keeps the fill near its pattern is
/// well below that, while for a denser one fill makes it approach the dense cost with a larger
/// constant (indirect addressing).
pub const MAX_SPARSE_DENSITY: f64 = 0.25;

/// Whether a system of `n` states whose Jacobian has `nonzeros` entries (`pattern_nonzeros`,
/// the diagonal not counted) gets the sparse LU: from [`MIN_SPARSE_STATES`] states on, when
/// the iteration matrix `I − c·J` (the pattern and the diagonal: at most `nonzeros + n`
/// entries) fills at most [`MAX_SPARSE_DENSITY`] of the `n²` entries. This is an estimate of
/// which factorisation costs less, made once from the pattern: the choice must not depend on
/// timings, so that a run gives the same numbers every time.
pub fn prefers_sparse(n: usize, pattern_nonzeros: usize) -> bool {
    n >= MIN_SPARSE_STATES && ((pattern_nonzeros + n) as f64) <= MAX_SPARSE_DENSITY * (n as f64) * (n as f64)
}

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

/// The numbers [`DenseLu`] and [`SparseLu`] work with: real for most methods, complex for the
/// complex-conjugate stage pair of Radau IIA. faer's `ComplexField` is required for the sparse
/// LU; both `f64` and `Complex<f64>` (faer's `c64`) have it.
pub trait LuScalar:
    Copy
    + Default
    + std::fmt::Debug
    + faer::traits::ComplexField
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
    /// The real number `x` as this scalar.
    fn from_real(x: f64) -> Self;
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
    fn from_real(x: f64) -> f64 {
        x
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
    fn from_real(x: f64) -> nalgebra::Complex<f64> {
        nalgebra::Complex::new(x, 0.0)
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
                *l *= inverse;
            }
            let multipliers = &column[k + 1..];
            for target in right.chunks_exact_mut(n) {
                let u = target[k];
                for (x, &l) in target[k + 1..].iter_mut().zip(multipliers) {
                    *x -= l * u;
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
                b[i] -= f[k * N + i] * y;
            }
        }
        for k in (0..N).rev() {
            b[k] *= self.inverse_diagonal[k];
            let y = b[k];
            for i in 0..k {
                b[i] -= f[k * N + i] * y;
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
                *x -= l * y;
            }
        }
        for (k, column) in self.factors.chunks_exact(n).enumerate().rev() {
            let (rest, done) = b.split_at_mut(k);
            done[0] *= self.inverse_diagonal[k];
            let y = done[0];
            for (x, &u) in rest.iter_mut().zip(&column[..k]) {
                *x -= u * y;
            }
        }
    }
}

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

/// The LU factors of an iteration matrix `σ·I − c·J`, real or complex: dense for a dense
/// Jacobian, sparse for a sparse one.
#[derive(Debug)]
pub enum Factors<T = f64> {
    Dense(DenseLu<T>),
    /// Boxed: the sparse factors and their scratch space are several times larger.
    Sparse(Box<SparseLu<T>>),
}

impl Factors<f64> {
    /// Factors `I − c·J`, into the storage of `previous` factors where it fits (dense ones, or
    /// sparse ones of the same pattern); `None` when the matrix is singular.
    pub fn new(previous: Option<Factors>, jacobian: &Jacobian, c: f64) -> Option<Factors> {
        Factors::shifted(previous, jacobian, 1.0, c)
    }
}

impl<T: LuScalar> Factors<T> {
    /// Factors `σ·I − c·J` (`shift` is `σ`), into the storage of `previous` factors where it
    /// fits (dense ones, or sparse ones of the same pattern); `None` when the matrix is singular.
    pub fn shifted(previous: Option<Factors<T>>, jacobian: &Jacobian, shift: T, c: f64) -> Option<Factors<T>> {
        match jacobian {
            Jacobian::Dense(j) => {
                let mut lu = match previous {
                    Some(Factors::Dense(lu)) => lu,
                    _ => DenseLu::default(),
                };
                let regular = lu.factor(j.nrows(), |i, k| {
                    (if i == k { shift } else { T::ZERO }) - T::from_real(c * j[(i, k)])
                });
                regular.then_some(Factors::Dense(lu))
            }
            Jacobian::Sparse { pattern, values } => {
                let mut lu = match previous {
                    Some(Factors::Sparse(lu)) if Arc::ptr_eq(lu.pattern(), pattern) => lu,
                    _ => Box::new(SparseLu::new(pattern.clone())),
                };
                lu.factor_shifted(shift, values, c).then_some(Factors::Sparse(lu))
            }
        }
    }

    /// Whether these are sparse factors.
    pub fn is_sparse(&self) -> bool {
        matches!(self, Factors::Sparse(_))
    }

    /// Solves `M y = b` in place (`b` becomes `y`); `false` when the solution is not finite.
    pub fn solve(&mut self, b: &mut [T]) -> bool {
        match self {
            Factors::Dense(lu) => lu.solve(b),
            Factors::Sparse(lu) => lu.solve(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DenseLu, Factors, Jacobian, SparseLu, SparsePattern, SparseSingularity};
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

    /// A random sparse `n × n` pattern as Jacobian rows: about `density·n²` entries plus one
    /// strong entry per row in a random column (a permutation), so that a matrix with large
    /// values there ([`values_on`]) is regular but needs row exchanges. Also whether each entry,
    /// in the order of the rows, is the strong one.
    fn random_pattern(n: usize, seed: u64, density: f64) -> (Vec<Vec<u32>>, Vec<bool>) {
        let mut state = seed | 1;
        let mut next = move || {
            // xorshift64: a reproducible stream without a dependency.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut permutation: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (next() * (i + 1) as f64) as usize;
            permutation.swap(i, j.min(i));
        }
        let mut rows = Vec::new();
        let mut strong = Vec::new();
        for &p in &permutation {
            let mut row: Vec<u32> = (0..n)
                .filter(|&j| j == p || next() < density)
                .map(|j| j as u32)
                .collect();
            row.sort_unstable();
            strong.extend(row.iter().map(|&j| j as usize == p));
            rows.push(row);
        }
        (rows, strong)
    }

    /// Values for the entries of a [`random_pattern`]: `wave` of the entry's number times
    /// `frequency` (shifted a little by the seed) in [-1, 1], the strong entries moved to
    /// ±(3 + …). Another frequency gives new values on the same pattern.
    fn values_on(strong: &[bool], seed: u64, frequency: f64, wave: fn(f64) -> f64) -> Vec<f64> {
        strong
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let v = wave((k as f64 + 1.0) * frequency + seed as f64 * 1e-19);
                if s { v.signum() * (3.0 + v.abs()) } else { v }
            })
            .collect()
    }

    fn dense_of(n: usize, rows: &[Vec<u32>], values: &[f64]) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(n, n);
        let mut k = 0;
        for (i, row) in rows.iter().enumerate() {
            for &j in row {
                m[(i, j as usize)] = values[k];
                k += 1;
            }
        }
        m
    }

    proptest::proptest! {
        /// The sparse LU solves `(I − cJ) y = b` as nalgebra's dense LU does, to 1e-10
        /// relative, for random sparse Jacobians that need pivoting, also when refactored with
        /// new values on the same pattern (the symbolic analysis reused), and refuses a matrix
        /// with a zero column.
        #[test]
        fn the_sparse_lu_solves_like_the_dense_one(n in 1usize..40, seed in 1u64..u64::MAX, density in 0.0f64..0.3) {
            let (rows, strong) = random_pattern(n, seed, density);
            let pattern = Arc::new(SparsePattern::new(n, &rows).expect("pattern"));
            let mut lu = SparseLu::new(pattern.clone());
            let c = -1.0;
            for round in 0..3 {
                // Regular, with row exchanges, and different in every round.
                let values = values_on(&strong, seed, 0.37 + round as f64 * 0.11, f64::sin);
                let m = DMatrix::identity(n, n) - dense_of(n, &rows, &values) * c;
                let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7 + round as f64).cos()).collect();
                // Two solutions of a system agree to about its condition number times the
                // rounding: the rare random matrix far from well conditioned is not compared.
                let singular_values = m.clone().singular_values();
                let condition = singular_values.max() / singular_values.min();
                if condition.is_nan() || condition >= 1e4 {
                    continue;
                }
                let expected = m.clone().lu().solve(&DVector::from_column_slice(&b)).expect("regular");
                proptest::prop_assert!(lu.factor_iteration_matrix(&values, c));
                let mut x = b.clone();
                proptest::prop_assert!(lu.solve(&mut x));
                let scale = expected.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                for (a, e) in x.iter().zip(expected.iter()) {
                    proptest::prop_assert!((a - e).abs() <= 1e-10 * scale.max(1e-300), "{x:?} vs {expected:?}");
                }
            }
            // A singular M: column 0 of J holds only J_00 = 1, so that with c = 1 column 0 of
            // M = I − J is exactly zero. The dense LU refuses it, the sparse one refuses it or
            // its solve does (a zero pivot gives no finite solution).
            let without_column_0: Vec<Vec<u32>> = rows
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    let mut row: Vec<u32> = row.iter().copied().filter(|&j| j != 0).collect();
                    if i == 0 {
                        row.insert(0, 0);
                    }
                    row
                })
                .collect();
            let values: Vec<f64> = without_column_0
                .iter()
                .enumerate()
                .flat_map(|(i, row)| row.iter().map(move |&j| if j == 0 { 1.0 } else { ((i * 7 + j as usize) % 5) as f64 - 2.0 }))
                .collect();
            let pattern = Arc::new(SparsePattern::new(n, &without_column_0).expect("pattern"));
            let mut singular = SparseLu::new(pattern);
            let factored = singular.factor_iteration_matrix(&values, 1.0);
            let mut x = vec![1.0; n];
            proptest::prop_assert!(!factored || !singular.solve(&mut x), "a singular matrix was solved: {x:?}");
            let m = DMatrix::identity(n, n) - dense_of(n, &without_column_0, &values);
            proptest::prop_assert!(!DenseLu::default().factor(n, |i, j| m[(i, j)]));
        }

        /// Real and complex sparse factors on one pattern (one symbolic analysis, shared) solve
        /// `(σ·I − c·J) y = b` as nalgebra's dense LU does, to 1e-10 relative, for a real and a
        /// complex shift `σ` (Radau IIA's two systems) and random sparse Jacobians that need
        /// pivoting, factored alternately and again with new values; and through [`Factors`],
        /// the dense and the sparse factors of one Jacobian solve alike.
        #[test]
        fn real_and_complex_sparse_factors_share_a_pattern(n in 1usize..30, seed in 1u64..u64::MAX, density in 0.0f64..0.3) {
            let (rows, strong) = random_pattern(n, seed, density);
            let pattern = Arc::new(SparsePattern::new(n, &rows).expect("pattern"));
            let mut real = SparseLu::<f64>::new(pattern.clone());
            let mut complex = SparseLu::<Complex<f64>>::new(pattern.clone());
            let (mut real_factors, mut complex_factors) = (None, None);
            for round in 0..2 {
                let values = values_on(&strong, seed, 0.41 + round as f64 * 0.13, f64::cos);
                let (c, sigma, sigma_c) = (0.7, 2.5 + round as f64, Complex::new(1.5, -2.0 - round as f64));
                let j = dense_of(n, &rows, &values);
                let m_real = DMatrix::identity(n, n) * sigma - &j * c;
                let m_complex = DMatrix::identity(n, n) * sigma_c - j.map(|v| Complex::new(c * v, 0.0));
                let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3 + round as f64).sin()).collect();
                let cb: Vec<Complex<f64>> = b.iter().enumerate().map(|(i, &v)| Complex::new(v, (i as f64).cos())).collect();
                // As in the real test: only well-conditioned systems are compared.
                let condition = |s: DVector<f64>| s.max() / s.min();
                if !(condition(m_real.clone().singular_values()) < 1e4 && condition(m_complex.clone().singular_values()) < 1e4) {
                    continue;
                }
                let expected = m_real.lu().solve(&DVector::from_column_slice(&b)).expect("regular");
                let expected_c = m_complex.lu().solve(&DVector::from_column_slice(&cb)).expect("regular");
                proptest::prop_assert!(real.factor_shifted(sigma, &values, c));
                proptest::prop_assert!(complex.factor_shifted(sigma_c, &values, c));
                let (mut x, mut cx) = (b.clone(), cb.clone());
                proptest::prop_assert!(real.solve(&mut x));
                proptest::prop_assert!(complex.solve(&mut cx));
                let scale = expected.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                for (a, e) in x.iter().zip(expected.iter()) {
                    proptest::prop_assert!((a - e).abs() <= 1e-10 * scale.max(1e-300), "{x:?} vs {expected:?}");
                }
                let scale_c = expected_c.iter().fold(0.0f64, |a, v| a.max(v.norm()));
                for (a, e) in cx.iter().zip(expected_c.iter()) {
                    proptest::prop_assert!((a - e).norm() <= 1e-10 * scale_c.max(1e-300), "{cx:?} vs {expected_c:?}");
                }
                // The same through `Factors`, sparse (reusing the previous round's storage) and
                // dense.
                let sparse = Jacobian::Sparse { pattern: pattern.clone(), values: values.clone() };
                let dense = Jacobian::Dense(j.clone());
                let sparse_real = Factors::shifted(real_factors.take(), &sparse, sigma, c);
                let sparse_complex = Factors::shifted(complex_factors.take(), &sparse, sigma_c, c);
                let (Some(mut sparse_real), Some(mut sparse_complex)) = (sparse_real, sparse_complex) else {
                    return Err(proptest::test_runner::TestCaseError::fail("singular"));
                };
                proptest::prop_assert!(sparse_real.is_sparse() && sparse_complex.is_sparse());
                let mut dense_complex = Factors::shifted(None, &dense, sigma_c, c).expect("regular");
                proptest::prop_assert!(!dense_complex.is_sparse());
                let (mut y, mut cy, mut cz) = (b.clone(), cb.clone(), cb.clone());
                proptest::prop_assert!(sparse_real.solve(&mut y) && sparse_complex.solve(&mut cy) && dense_complex.solve(&mut cz));
                for (a, e) in y.iter().zip(expected.iter()) {
                    proptest::prop_assert!((a - e).abs() <= 1e-10 * scale.max(1e-300));
                }
                for ((a, d), e) in cy.iter().zip(&cz).zip(expected_c.iter()) {
                    proptest::prop_assert!((a - e).norm() <= 1e-10 * scale_c.max(1e-300));
                    proptest::prop_assert!((d - e).norm() <= 1e-10 * scale_c.max(1e-300));
                }
                real_factors = Some(sparse_real);
                complex_factors = Some(sparse_complex);
            }
        }

        /// The sparse singularity check gives the sign of the determinant and a lower bound of
        /// `‖M⁻¹‖₁` (at least `‖M⁻¹‖₁/n`) for random sparse matrices, and says singular (or
        /// `‖M⁻¹‖₁` beyond 1e12) for a matrix with two equal rows.
        #[test]
        fn the_singularity_check_agrees_with_the_dense_matrix(n in 1usize..30, seed in 1u64..u64::MAX, density in 0.0f64..0.3) {
            let (rows, strong) = random_pattern(n, seed, density);
            let entries: Vec<(usize, usize)> = rows
                .iter()
                .enumerate()
                .flat_map(|(i, row)| row.iter().map(move |&j| (i, j as usize)))
                .collect();
            let mut check = SparseSingularity::new(n, &entries).expect("check");
            for round in 0..2 {
                let values: Vec<f64> = strong
                    .iter()
                    .enumerate()
                    .map(|(k, &s)| {
                        let v = ((k as f64 + 2.0) * (0.53 + round as f64 * 0.29)).sin();
                        // Weak entries sum to less than 0.5 in a row: the strong one dominates
                        // it, so the matrix is regular.
                        if s { v.signum() * (2.0 + v.abs()) } else { 0.05 * v }
                    })
                    .collect();
                let m = dense_of(n, &rows, &values);
                let found = check.examine(&values).expect("regular");
                let determinant = m.clone().lu().determinant();
                proptest::prop_assert_eq!(found.sign, determinant.signum());
                let inverse = m.try_inverse().expect("regular");
                let norm = (0..n)
                    .map(|j| inverse.column(j).iter().map(|v| v.abs()).sum::<f64>())
                    .fold(0.0, f64::max);
                proptest::prop_assert!(found.inverse_norm <= norm * (1.0 + 1e-10), "{} > {norm}", found.inverse_norm);
                proptest::prop_assert!(found.inverse_norm >= norm / n as f64, "{} ≪ {norm}", found.inverse_norm);
            }
            if n >= 2 {
                // Two equal rows: row 1 gets row 0's pattern, and both the values 1 + j in
                // column j.
                let mut equal = rows.clone();
                equal[1] = equal[0].clone();
                let entries: Vec<(usize, usize)> = equal
                    .iter()
                    .enumerate()
                    .flat_map(|(i, row)| row.iter().map(move |&j| (i, j as usize)))
                    .collect();
                let values: Vec<f64> = equal
                    .iter()
                    .enumerate()
                    .flat_map(|(i, row)| row.iter().map(move |&j| if i <= 1 { 1.0 + j as f64 } else { (i * 7 + j as usize) as f64 }))
                    .collect();
                // Rounding may leave a tiny pivot instead of a zero one: then the estimate of
                // ‖M⁻¹‖₁ is of the order of 1/ε.
                let mut check = SparseSingularity::new(n, &entries).expect("check");
                let found = check.examine(&values);
                proptest::prop_assert!(found.is_none_or(|f| f.inverse_norm > 1e12), "{found:?}");
            }
        }
    }
}
