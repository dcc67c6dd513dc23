//! The dense LU of a small iteration matrix ([`DenseLu`]), written out for speed.
//!
//! Input: the entries of an `n × n` matrix, real or complex. Output: its LU factors with partial
//! pivoting, which solve in place. It deliberately knows nothing about Jacobians or shifts: the
//! caller gives the matrix entry by entry.

use super::LuScalar;

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
