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
//! do not depend on the number of cores. The dense LU is in `dense`, the sparse pattern and
//! LU in `sparse`, the singularity check of the simulator in `singularity`; this module holds
//! what they share (the Jacobian, the scalars, the factors of either kind). It does not
//! evaluate anything (difference quotients are built in `jacobian`) and does not decide when a
//! Jacobian or its factors are stale (the methods do).

mod dense;
mod singularity;
mod sparse;
#[cfg(test)]
mod tests;

pub use dense::DenseLu;
pub use singularity::{Conditioning, SparseSingularity};
pub use sparse::{SparseLu, SparsePattern};

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
