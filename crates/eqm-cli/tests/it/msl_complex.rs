//! The `Complex` operator record and the `Modelica.ComplexMath` functions of the Modelica
//! Standard Library, read unmodified from an installation beside the repository (skipped,
//! saying so, where it is not installed): a model of the user's computes with the overloaded
//! operators (`z^3`, `z^w`, `2*v + u` on arrays, `==`) and the library's complex functions,
//! whose own bodies use the operators and the library's functions named like built-in ones;
//! each result against its closed form computed here from real arithmetic.

const MODEL: &str = "model ComplexUse
  import Modelica.ComplexMath;
  Complex z = Complex(1, 0.5*time + 0.25);
  Complex s = ComplexMath.sin(z);
  Complex c = ComplexMath.cos(z);
  Complex e = ComplexMath.exp(z);
  Complex l = ComplexMath.log(z);
  Complex q = ComplexMath.sqrt(z);
  Real a = ComplexMath.abs(z);
  Real p = ComplexMath.arg(z);
  Complex cj = ComplexMath.conj(z);
  Complex cube = z^3;
  Complex power = z^Complex(0.5, 0.1);
  Complex total = ComplexMath.sum({z, s, c});
  Complex v[2] = {z, s}*2 + {c, e};
  Boolean same = z == Complex(1, 0.75);
end ComplexUse;
";

/// The last row of a CSV result, by column name.
fn last_row(csv: &str) -> std::collections::HashMap<String, f64> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let last = lines.last().expect("a row");
    header
        .iter()
        .zip(last.split(','))
        .map(|(name, value)| (name.to_string(), value.parse().expect("a number")))
        .collect()
}

#[test]
fn complex_numbers_of_the_library_compute_their_closed_forms() {
    let Some(library) = crate::installed_msl() else {
        return;
    };
    let work = std::env::temp_dir().join(format!("eqm-msl-complex-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let (model, result) = (work.join("ComplexUse.mo"), work.join("complex.csv"));
    std::fs::write(&model, MODEL).expect("the model is written");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_eqm"))
        .args(["run", model.to_str().expect("a UTF-8 path"), "--library"])
        .arg(&library)
        .args(["--stop", "1", "--out", result.to_str().expect("a UTF-8 path")])
        .output()
        .expect("the eqm binary runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let row = last_row(&std::fs::read_to_string(&result).expect("the result"));
    let _ = std::fs::remove_dir_all(&work);
    // At t = 1: z = x + iy with x = 1, y = 0.75; |z| = 1.25.
    let (x, y) = (1.0_f64, 0.75_f64);
    let (r, phi) = (x.hypot(y), y.atan2(x));
    let sin = (x.sin() * y.cosh(), x.cos() * y.sinh());
    let cos = (x.cos() * y.cosh(), -x.sin() * y.sinh());
    let exp = (x.exp() * y.cos(), x.exp() * y.sin());
    let log = (r.ln(), phi);
    let sqrt = (r.sqrt() * (phi / 2.0).cos(), r.sqrt() * (phi / 2.0).sin());
    // z^3 = x^3 - 3xy^2 + (3x^2 y - y^3) i; z^w = exp(w log z) with w = 0.5 + 0.1i.
    let cube = (x.powi(3) - 3.0 * x * y * y, 3.0 * x * x * y - y.powi(3));
    let w_log = (0.5 * log.0 - 0.1 * log.1, 0.5 * log.1 + 0.1 * log.0);
    let power = (w_log.0.exp() * w_log.1.cos(), w_log.0.exp() * w_log.1.sin());
    let expected = [
        ("s", sin),
        ("c", cos),
        ("e", exp),
        ("l", log),
        ("q", sqrt),
        ("cj", (x, -y)),
        ("cube", cube),
        ("power", power),
        ("total", (x + sin.0 + cos.0, y + sin.1 + cos.1)),
        ("v[1]", (2.0 * x + cos.0, 2.0 * y + cos.1)),
        ("v[2]", (2.0 * sin.0 + exp.0, 2.0 * sin.1 + exp.1)),
    ];
    for (name, (re, im)) in expected {
        for (part, value) in [("re", re), ("im", im)] {
            let got = row[&format!("{name}.{part}")];
            assert!(
                (got - value).abs() <= 1e-13 * value.abs().max(1.0),
                "{name}.{part} = {got}, expected {value}"
            );
        }
    }
    assert!((row["a"] - r).abs() <= 1e-15, "abs = {}", row["a"]);
    assert!((row["p"] - phi).abs() <= 1e-15, "arg = {}", row["p"]);
    assert_eq!(row["same"], 1.0, "z == Complex(1, 0.75) at t = 1");
}
