//! Tests of the dense and sparse LU factors and of the singularity check against nalgebra.

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
