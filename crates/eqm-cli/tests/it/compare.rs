//! `eqm compare` as a user runs it: a run of `eqm run` against its closed-form solution written
//! as a gzip-compressed reference, a shifted step, a missing signal, a signal list, the SVG
//! pictures, and the exit codes (0 all pass, 1 one fails, 2 usage errors).

use crate::cli::eqm;
use std::io::Write;
use std::path::{Path, PathBuf};

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-compare-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.display().to_string()
}

fn write_gz(path: &Path, text: &str) -> String {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(text.as_bytes()).unwrap();
    std::fs::write(path, encoder.finish().unwrap()).unwrap();
    path.display().to_string()
}

/// CSV text of the signals `names` (each `f(t)`) at `times`, with the header quoted as the
/// reference results quote it.
fn csv(names: &[&str], times: &[f64], f: impl Fn(usize, f64) -> f64) -> String {
    let mut text = String::from("\"time\"");
    for name in names {
        text.push_str(&format!(",\"{name}\""));
    }
    text.push('\n');
    for &t in times {
        text.push_str(&format!("{t}"));
        for i in 0..names.len() {
            text.push_str(&format!(",{}", f(i, t)));
        }
        text.push('\n');
    }
    text
}

#[test]
fn a_run_matches_its_closed_form_reference_read_from_gzip() {
    let dir = temp_dir("decay");
    let model = write(
        &dir.join("decay.eqm"),
        "model Decay\n  Real x(start = 1, fixed = true);\n  Real y;\nequation\n  der(x) = -x;\n  y = 2*x;\nend Decay;\n",
    );
    let result = dir.join("result.csv").display().to_string();
    let (code, _, err) = eqm(&["run", &model, "--stop", "2", "--out", &result]);
    assert_eq!(code, 0, "{err}");
    // The exact solution at a different sampling than the run's.
    let times: Vec<f64> = (0..=300).map(|i| i as f64 * 2.0 / 300.0).collect();
    let exact = |i: usize, t: f64| (i as f64 + 1.0) * (-t).exp();
    let reference = write_gz(&dir.join("Decay.csv.gz"), &csv(&["x", "y"], &times, exact));
    let (code, out, err) = eqm(&["compare", &result, &reference]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("pass  x\npass  y\n2 of 2 signals inside their tubes (tolerance 0.002)"),
        "{out}"
    );
    // The same reference 1 % off in y fails on y only, and names where.
    let off = write_gz(
        &dir.join("Off.csv.gz"),
        &csv(&["x", "y"], &times, |i, t| {
            exact(i, t) * if i == 1 { 1.01 } else { 1.0 }
        }),
    );
    let (code, out, _) = eqm(&["compare", &result, &off]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("pass  x\n"), "{out}");
    // At time 0 the reference is 2.02, falling, with a tube 0.0035 wide: 2 is below it.
    assert!(
        out.contains("FAIL  y  leaves the tube at time 0: 2 is below [2.008"),
        "{out}"
    );
    // A signal list picks the signals; the tolerance widens the tube.
    let signals = write(&dir.join("comparisonSignals.txt"), "time\nx\n");
    let (code, out, _) = eqm(&["compare", &result, &off, "--signals", &signals]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 of 1 signals"), "{out}");
    let (code, out, _) = eqm(&["compare", &result, &off, "--tolerance", "0.02"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_shifted_step_passes_or_fails_by_the_time_tolerance_and_is_drawn() {
    let dir = temp_dir("step");
    // Over 10 s the tube is 0.02 s wide on each side in time: a step 0.015 s late passes, one
    // 0.05 s late fails where the reference's window has passed its step.
    let times: Vec<f64> = (0..=1000).map(|i| i as f64 / 100.0).collect();
    let step_at = |at: f64| {
        let mut text = String::from("time,s\n");
        for &t in &times {
            text.push_str(&format!("{t},{}\n", if t >= at { 1 } else { 0 }));
        }
        text
    };
    let reference = write(&dir.join("reference.csv"), &step_at(5.0));
    let near = write(&dir.join("near.csv"), &step_at(5.015));
    let far = write(&dir.join("far.csv"), &step_at(5.05));
    let pictures = dir.join("svg");
    let (code, out, err) = eqm(&["compare", &near, &reference, "--svg", &pictures.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    let svg = std::fs::read_to_string(pictures.join("s.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("tube (upper)") && svg.contains("result"),
        "{svg}"
    );
    let (code, out, _) = eqm(&["compare", &far, &reference]);
    assert_eq!(code, 1, "{out}");
    // From 5.02 on the window [t - 0.02, t + 0.02] holds only the reference's 1 (at its left
    // end, 5.0, the reference reaches 1), while the result is 0 until 5.05: 3 rows outside.
    assert!(
        out.contains("FAIL  s  leaves the tube at time 5.02: 0 is below [0.99"),
        "{out}"
    );
    assert!(out.contains("(3 of 1001 rows outside)"), "{out}");
}

#[test]
fn a_missing_signal_fails_and_usage_errors_exit_2() {
    let dir = temp_dir("errors");
    let reference = write(&dir.join("reference.csv"), "time,a,b\n0,1,2\n1,1,2\n");
    let result = write(&dir.join("result.csv"), "time,a\n0,1\n1,1\n");
    let (code, out, _) = eqm(&["compare", &result, &reference]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL  b  missing in the result"), "{out}");

    let broken = write(&dir.join("broken.csv"), "time,a\n0,1\n1,oops\n");
    let (code, _, err) = eqm(&["compare", &broken, &reference]);
    assert_eq!(code, 2);
    assert!(err.contains("broken.csv:3: `oops` is not a number"), "{err}");
    let (code, _, err) = eqm(&["compare", &result, &dir.join("absent.csv").display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
    let (code, _, err) = eqm(&["compare", &result, &reference, "--tolerance", "-1"]);
    assert_eq!(code, 2);
    assert!(err.contains("the tolerance -1 is not a number in (0, 1]"), "{err}");
    let signals = write(&dir.join("signals.txt"), "time\nc\n");
    let (code, _, err) = eqm(&["compare", &result, &reference, "--signals", &signals]);
    assert_eq!(code, 2);
    assert!(err.contains("the signal `c` is not in the reference"), "{err}");
    let signals = write(&dir.join("nolist.txt"), "a\n");
    let (code, _, err) = eqm(&["compare", &result, &reference, "--signals", &signals]);
    assert_eq!(code, 2);
    assert!(
        err.contains("nolist.txt:1: a signal list starts with the line `time`"),
        "{err}"
    );
    let (code, _, _) = eqm(&["compare", &result]);
    assert_eq!(code, 2);
}
