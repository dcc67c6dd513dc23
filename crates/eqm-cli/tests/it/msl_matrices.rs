//! `Modelica.Math.Matrices` solving, inverting and factorizing a matrix that needs row
//! interchanges, run twice: with EQM's own `Modelica.Math.Matrices`, and with the Modelica
//! Standard Library read unmodified from an installation beside the repository (skipped,
//! saying so, where it is not installed), whose functions call the LAPACK routines that EQM
//! runs as its `LinearAlgebra` functions. Each result against its closed form computed here by
//! cofactors (Cramer's rule and the adjugate), which shares nothing with the LU factorization.

use std::collections::HashMap;
use std::path::Path;

/// At t = 1 the matrix is [0, 2, 1; 1, 1, 1; 4, -1, 3]: its first pivot is zero, so the
/// factorization must interchange rows. The right-hand sides change with time as well.
const MODEL: &str = "model MatricesUse
  import Modelica.Math.Matrices;
  Real A[3, 3] = [time - 1, 2, 1; 1, 1, 1; 4, -1, 3];
  Real b[3] = {3, 3, 6 + 3*time};
  Real B[3, 2] = [b[1], 1; b[2], 2; b[3], 3*time];
  Real x[3] = Matrices.solve(A, b);
  Real X[3, 2] = Matrices.solve2(A, B);
  Real Ainv[3, 3] = Matrices.inv(A);
  Real d = Matrices.det(A);
  Real LU[3, 3];
  Integer pivots[3];
  Integer info;
  Real xLU[3] = Matrices.LU_solve(LU, pivots, b);
  Real XLU[3, 2] = Matrices.LU_solve2(LU, pivots, B);
equation
  (LU, pivots, info) = Matrices.LU(A);
end MatricesUse;
";

type Matrix = [[f64; 3]; 3];

/// The determinant by cofactor expansion along the first row.
fn det(a: &Matrix) -> f64 {
    a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
}

/// The inverse as the adjugate over the determinant.
fn inverse(a: &Matrix) -> Matrix {
    let d = det(a);
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, entry) in row.iter_mut().enumerate() {
            // The cofactor of a[j][i] (the adjugate is the transposed cofactor matrix).
            let rows: Vec<usize> = (0..3).filter(|&k| k != j).collect();
            let cols: Vec<usize> = (0..3).filter(|&k| k != i).collect();
            let minor = a[rows[0]][cols[0]] * a[rows[1]][cols[1]] - a[rows[0]][cols[1]] * a[rows[1]][cols[0]];
            let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
            *entry = sign * minor / d;
        }
    }
    inv
}

/// x = A^-1 b by Cramer's rule: the determinants with b in place of each column.
fn cramer(a: &Matrix, b: [f64; 3]) -> [f64; 3] {
    let d = det(a);
    [0, 1, 2].map(|col| {
        let mut replaced = *a;
        for (row, value) in replaced.iter_mut().zip(b) {
            row[col] = value;
        }
        det(&replaced) / d
    })
}

/// The last row of the run of the model to t = 1, by column name, with the library directory
/// `library` or with EQM's own library.
fn run(library: Option<&Path>, tag: &str) -> HashMap<String, f64> {
    let work = std::env::temp_dir().join(format!("eqm-msl-matrices-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let model = work.join("MatricesUse.mo");
    std::fs::write(&model, MODEL).expect("the model is written");
    let mut args = vec!["run", model.to_str().expect("a UTF-8 path"), "--stop", "1"];
    if let Some(library) = library {
        args.extend(["--library", library.to_str().expect("a UTF-8 path")]);
    }
    let table = crate::cli::run(&args);
    let _ = std::fs::remove_dir_all(&work);
    let last = table.rows.last().expect("a row");
    table.header.into_iter().zip(last.iter().copied()).collect()
}

/// Checks every result of the model at t = 1 against its closed form.
fn check(row: &HashMap<String, f64>, tag: &str) {
    let a: Matrix = [[0.0, 2.0, 1.0], [1.0, 1.0, 1.0], [4.0, -1.0, 3.0]];
    let b = [3.0, 3.0, 9.0];
    let columns = [b, [1.0, 2.0, 3.0]];
    let inv = inverse(&a);
    let mut expected = vec![("d".to_string(), det(&a)), ("info".to_string(), 0.0)];
    for (i, value) in cramer(&a, b).into_iter().enumerate() {
        expected.push((format!("x[{}]", i + 1), value));
        expected.push((format!("xLU[{}]", i + 1), value));
    }
    for (j, column) in columns.into_iter().enumerate() {
        for (i, value) in cramer(&a, column).into_iter().enumerate() {
            expected.push((format!("X[{},{}]", i + 1, j + 1), value));
            expected.push((format!("XLU[{},{}]", i + 1, j + 1), value));
        }
    }
    for (i, row) in inv.iter().enumerate() {
        for (j, value) in row.iter().enumerate() {
            expected.push((format!("Ainv[{},{}]", i + 1, j + 1), *value));
        }
    }
    // The factors: P*A = L*U, with the pivots LAPACK's dgetrf chooses (the largest magnitude
    // in each column): rows 1 and 3 first, then rows 2 and 3.
    let lu = [[4.0, -1.0, 3.0], [0.0, 2.0, 1.0], [0.25, 0.625, -0.375]];
    for (i, row) in lu.iter().enumerate() {
        for (j, value) in row.iter().enumerate() {
            expected.push((format!("LU[{},{}]", i + 1, j + 1), *value));
        }
    }
    for (i, pivot) in [3.0, 3.0, 3.0].into_iter().enumerate() {
        expected.push((format!("pivots[{}]", i + 1), pivot));
    }
    for (name, value) in expected {
        let got = row.get(&name).unwrap_or_else(|| panic!("{tag}: no column {name}"));
        assert!(
            (got - value).abs() <= 1e-12 * value.abs().max(1.0),
            "{tag}: {name} = {got}, expected {value}"
        );
    }
}

#[test]
fn matrices_of_eqms_library_solve_invert_and_factorize_as_closed_forms_say() {
    check(&run(None, "eqm"), "EQM's library");
}

#[test]
fn matrices_of_the_modelica_library_run_their_lapack_routines_as_closed_forms_say() {
    let Some(library) = crate::installed_msl() else {
        return;
    };
    check(&run(Some(&library), "msl"), "the Modelica Standard Library");
}
