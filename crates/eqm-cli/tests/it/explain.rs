//! `eqm explain --steps --svg` as a user runs it: the drawing is written, an unwritable path is
//! a usage error, and a model too large to draw still succeeds.

use crate::models::chain_model;
use std::process::Command;

/// A fresh directory for one test's files.
fn temp_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-graphview-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs the built `eqm` in the crate directory: (exit code, stdout, stderr).
fn eqm(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_eqm"))
        .args(args)
        .current_dir(crate::REPO)
        .env_remove("EQMPATH")
        .output()
        .expect("the eqm binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn cli_writes_the_svg_and_appends_the_steps() {
    let dir = temp_dir("cli");
    let out = dir.join("graph.svg");
    let (code, stdout, stderr) = eqm(&[
        "explain".as_ref(),
        "examples/spring_mass.eqm".as_ref(),
        "--keep-aliases".as_ref(),
        "--steps".as_ref(),
        "--svg".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let svg = std::fs::read_to_string(&out).expect("the SVG file exists");
    assert!(svg.starts_with("<?xml") || svg.starts_with("<svg"));
    assert!(
        stderr.contains(&format!("wrote {} (11 equations, 11 variables)", out.display())),
        "{stderr}"
    );
    assert!(stdout.contains("sorted assignments:"), "explain's own text comes first");
    assert!(stdout.contains("colouring steps"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The spring-mass example lists its equations as they are lettered (a)-(k) in its header
/// comment, so the replay numbers them in the order of the hand calculation there: (a), (b),
/// (f), (g), (h), (j), (e), (k), (d), (i), (c), that is e1, e2, e6, e7, e8, e10, e5, e11, e4,
/// e9, e3.
#[test]
fn cli_steps_number_the_spring_mass_equations_as_by_hand() {
    let (code, stdout, stderr) = eqm(&[
        "explain".as_ref(),
        "--steps".as_ref(),
        "--keep-aliases".as_ref(),
        "examples/spring_mass.eqm".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let lettered = [
        ("e1", "mass.flange_a.s = mass.flange_b.s"),
        ("e2", "mass.v = der(mass.flange_b.s)"),
        ("e3", "mass.m*der(mass.v) = mass.flange_a.f + mass.flange_b.f"),
        ("e4", "spring.flange_a.f + spring.flange_b.f = 0"),
        (
            "e5",
            "spring.flange_b.f = spring.c*(spring.flange_b.s - spring.flange_a.s)",
        ),
        ("e6", "fixed.flange.s = 0"),
        ("e7", "mass.flange_a.f = 0"),
        ("e8", "mass.flange_b.s = spring.flange_a.s"),
        ("e9", "mass.flange_b.f + spring.flange_a.f = 0"),
        ("e10", "spring.flange_b.s = fixed.flange.s"),
        ("e11", "spring.flange_b.f + fixed.flange.f = 0"),
    ];
    for (label, text) in lettered {
        assert!(
            stdout.contains(&format!("  {label}: {text}  //")),
            "{label}: {text}\n{stdout}"
        );
    }
    assert!(
        stdout.contains("order by number: e1, e2, e6, e7, e8, e10, e5, e11, e4, e9, e3\n"),
        "{stdout}"
    );
}

#[test]
fn cli_reports_an_unwritable_svg_path_as_a_usage_error() {
    let dir = temp_dir("unwritable");
    let out = dir.join("no-such-directory").join("graph.svg");
    let (code, _, stderr) = eqm(&[
        "explain".as_ref(),
        "examples/spring_mass.eqm".as_ref(),
        "--svg".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
#[test]
fn cli_does_not_draw_a_large_model_and_succeeds() {
    let dir = temp_dir("large");
    let model = dir.join("big.eqm");
    std::fs::write(&model, chain_model(500)).expect("model written");
    let out = dir.join("big.svg");
    let (code, stdout, stderr) = eqm(&[
        "explain".as_ref(),
        model.as_os_str(),
        "--steps".as_ref(),
        "--svg".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("too large to draw"), "{stderr}");
    assert!(!out.exists(), "no file for a model too large to draw");
    assert!(
        stdout.contains("too large to replay step by step (500 equations)"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
