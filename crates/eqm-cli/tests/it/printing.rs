//! `Modelica.Utilities.Streams.print` from the command line: the lines go to standard error
//! while the results take standard output, and to standard output when the results go to a
//! file; `Streams.error` stops the run with exit code 3 and its message.

use crate::cli::{Table, eqm};

const MODEL: &str = r#"
model Decay
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  when sample(0, 0.25) then
    Modelica.Utilities.Streams.print("t = " + String(time) + ", x = " + String(x, significantDigits = 3));
  end when;
  when time > 0.9 then
    Modelica.Utilities.Streams.error("x = " + String(x, format = "6.4f") + " at the end");
  end when;
end Decay;
"#;

/// A scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-printing-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn printed_lines_take_standard_error_beside_the_results_and_standard_output_beside_a_file() {
    let dir = scratch("lines");
    let model = dir.join("decay.eqm");
    std::fs::write(&model, MODEL.replace("time > 0.9", "time > 5")).expect("written");
    let model = model.display().to_string();
    // exp(-t) at t = 0, 0.25, 0.5, 0.75, 1 rounded to three significant digits by hand.
    let expected = "t = 0, x = 1\nt = 0.25, x = 0.779\nt = 0.5, x = 0.607\nt = 0.75, x = 0.472\nt = 1, x = 0.368\n";
    let (code, out, err) = eqm(&["run", &model, "--stop", "1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, expected);
    let table = Table::parse(&out);
    assert_eq!(table.header, ["time", "x"]);
    let csv = dir.join("decay.csv").display().to_string();
    let (code, out, err) = eqm(&["run", &model, "--stop", "1", "--out", &csv]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn streams_error_stops_the_run_with_exit_code_3_and_its_message() {
    let dir = scratch("error");
    let model = dir.join("decay.eqm");
    std::fs::write(&model, MODEL).expect("written");
    let (code, _, err) = eqm(&["run", &model.display().to_string(), "--stop", "2"]);
    assert_eq!(code, 3, "{err}");
    // The lines printed before the error come first; exp(-0.9) = 0.40656966.
    assert!(
        err.starts_with("t = 0, x = 1\nt = 0.25, x = 0.779\nt = 0.5, x = 0.607\nt = 0.75, x = 0.472\n"),
        "{err}"
    );
    assert!(err.contains("assertion failed: x = 0.4066 at the end"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
