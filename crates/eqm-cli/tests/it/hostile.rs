//! The command line on hostile files and arguments: deep nesting of every kind, classes that
//! contain themselves, long inheritance chains, huge arrays, files that are not UTF-8 and huge
//! lines are reported with a code and exit status 1, never a crash, an abort or a hang; and
//! awkward but valid arguments (negative numbers, repeated parameters, a library model without a
//! file) work.

use crate::cli::eqm;
use crate::models::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file in the system's temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("eqm-robustness-{}-{name}", std::process::id()));
        std::fs::write(&path, text).expect("the temporary directory is writable");
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Cleanup is best effort: a leftover file in the temporary directory harms nothing.
        let _ = std::fs::remove_file(&self.0);
    }
}

fn run_check(path: &Path) -> (Option<i32>, String) {
    run_check_with(path, &[])
}

/// `eqm check FILE ARGS...`: the exit status and standard error.
fn run_check_with(path: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_eqm"))
        .arg("check")
        .arg(path)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the eqm binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_cli_reports_hostile_nesting_and_exits_1() {
    let broken_bottom = |text: String| text.replacen("x = 1;", "x = ;", 1);
    let cases = [
        (
            "parens.eqm",
            model_with_equation(&format!("{}a{}", "(".repeat(DEEP), ")".repeat(DEEP))),
            "E0106",
        ),
        (
            "ifexpr.eqm",
            model_with_equation(&format!("{}0{}", "if c then ".repeat(DEEP), " else 1".repeat(DEEP))),
            "E0106",
        ),
        ("ifeq.eqm", broken_bottom(nested_if_equations(DEEP)), "E0110"),
        ("for.eqm", broken_bottom(nested_for_loops(DEEP)), "E0110"),
        (
            "classes.eqm",
            nested_classes(DEEP).replacen("Real x = 1;", "Real x = ;", 1),
            "E0110",
        ),
        ("unclosed.eqm", "package P\n".repeat(DEEP), "E0111"),
        // Beyond the bound on the nesting of blocks (50 000 levels), at once, with no stage
        // walking the tree.
        ("ifeq_deep.eqm", nested_if_equations(10 * DEEP), "E0113"),
    ];
    for (name, text, code) in cases {
        expect_error(name, &text, &[], code);
    }
}

/// The end of a possibly huge output (a 10 000-character line renders wide).
fn tail(s: &str) -> &str {
    let mut start = s.len().saturating_sub(2000);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Checks `text` as a file named `name` with `args`, expecting exit status 1 and `code`; returns
/// standard error.
fn expect_error(name: &str, text: &str, args: &[&str], code: &str) -> String {
    let file = TempFile::new(name, text);
    let (status, stderr) = run_check_with(&file.0, args);
    assert_eq!(
        status,
        Some(1),
        "{name}: eqm check must exit 1; stderr:\n{}",
        tail(&stderr)
    );
    assert!(
        stderr.contains(&format!("[{code}]")),
        "{name}: no {code} in:\n{}",
        tail(&stderr)
    );
    stderr
}

/// Checks `text`, expecting it to be accepted; returns standard error.
fn expect_ok(name: &str, text: &str, args: &[&str]) -> String {
    let file = TempFile::new(name, text);
    let (status, stderr) = run_check_with(&file.0, args);
    assert_eq!(
        status,
        Some(0),
        "{name}: eqm check must accept it; stderr:\n{}",
        tail(&stderr)
    );
    stderr
}

#[test]
fn a_class_that_contains_itself_is_e0315() {
    let cases = [
        ("self.eqm", "model P\n  P p;\nend P;\n", "P", "2:3"),
        (
            "mutual.eqm",
            "model A\n  B b;\nend A;\nmodel B\n  A a;\nend B;\n",
            "A",
            "5:3",
        ),
        (
            "extends.eqm",
            "model Base\n  Real x = 1;\n  M m;\nend Base;\nmodel M\n  extends Base;\nend M;\n",
            "M",
            "3:3",
        ),
        (
            "modifier.eqm",
            "model P\n  parameter Real k = 1;\n  P p(k = 2);\nend P;\n",
            "P",
            "3:3",
        ),
        ("array.eqm", "model P\n  Real x = 1;\n  P p[2];\nend P;\n", "P", "3:3"),
    ];
    for (name, text, model, at) in cases {
        let stderr = expect_error(name, text, &["--model", model], "E0315");
        assert!(
            stderr.contains(&format!("{name}:{at}")),
            "{name}: not located at {at}:\n{stderr}"
        );
        assert!(stderr.contains("contains itself"), "{name}:\n{stderr}");
    }
    // An empty array of the class itself contains nothing, and a class may use another class
    // twice (not a cycle).
    expect_ok("empty.eqm", "model P\n  Real x = 1;\n  P p[0];\nend P;\n", &[]);
    expect_ok(
        "twice.eqm",
        "model Q\n  Real y = 2;\nend Q;\nmodel R\n  Q a;\n  Q b;\nend R;\n",
        &["--model", "R"],
    );
}

/// `model C1 extends C2; end C1; ... model Cn Real x = 1; end Cn;`
fn inheritance_chain(n: usize) -> String {
    let mut text = String::new();
    for i in 1..n {
        text.push_str(&format!("model C{i} extends C{}; end C{i};\n", i + 1));
    }
    text.push_str(&format!("model C{n} Real x = 1; end C{n};\n"));
    text
}

#[test]
fn long_inheritance_chains_are_no_cycle_but_cycles_are_e0212() {
    for n in [33, 34, 200] {
        let stderr = expect_ok(&format!("chain{n}.eqm"), &inheritance_chain(n), &["--model", "C1"]);
        assert!(
            stderr.contains("C1: 1 variables, 1 equations: no errors"),
            "chain of {n}: {stderr}"
        );
    }
    let cycle = format!("{}model C201 extends C1; end C201;\n", inheritance_chain(200)).replacen(
        "model C200 Real x = 1; end C200;",
        "model C200 extends C201; Real x = 1; end C200;",
        1,
    );
    expect_error("cycle.eqm", &cycle, &["--model", "C1"], "E0212");
    expect_error("self_extends.eqm", "model A\n  extends A;\nend A;\n", &[], "E0212");
}

#[test]
fn huge_arrays_are_e0316_without_allocating_them() {
    let cases = [
        ("component.eqm", "model M\n  Real x[1000000000];\nend M;\n"),
        ("overflow.eqm", "model M\n  Real x[4294967296, 4294967296];\nend M;\n"),
        ("range.eqm", "model M\n  Real y = sum(1:10^9);\nend M;\n"),
        ("fill.eqm", "model M\n  Real y = sum(fill(0, 10^9));\nend M;\n"),
        ("matrix.eqm", "model M\n  Real y = sum(identity(100000));\nend M;\n"),
        // Below the limit of one array, above the limit of the whole model.
        ("model.eqm", "model M\n  Real x[60000000];\nend M;\n"),
    ];
    for (name, text) in cases {
        let started = std::time::Instant::now();
        let stderr = expect_error(name, text, &[], "E0316");
        assert!(
            stderr.contains("limit"),
            "{name}: the message states no limit:\n{stderr}"
        );
        assert!(
            stderr.contains("100000000") || stderr.contains("10000000"),
            "{name}: the message does not name the limit:\n{stderr}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn a_long_flat_sum_is_accepted_end_to_end() {
    // 10 000 terms, mixing `+` and `-`, and `sum` of as many elements: x = 1 + 1 - 1 + 1 - ...
    let n = 10_000;
    let mut terms = String::from("a[1]");
    for i in 1..n {
        terms.push_str(if i % 2 == 1 { " + " } else { " - " });
        terms.push_str(&format!("a[{}]", i + 1));
    }
    let text = format!(
        "model S\n  parameter Real a[{n}] = fill(1, {n});\n  Real x;\n  Real y;\nequation\n  x = {terms};\n  y = sum(a);\nend S;\n"
    );
    let file = TempFile::new("sum.eqm", &text);
    let path = file.0.to_str().expect("the temporary path is UTF-8");
    let (status, stdout, stderr) = eqm(&["run", path, "--stop", "0", "--vars", "x,y"]);
    assert_eq!(status, 0, "{}", tail(&stderr));
    let last = stdout.lines().last().expect("a row");
    assert_eq!(last, "0,2,10000", "x = 1 + (1 - 1) + (1 - 1) + ... + 1 and y = 10000");
}

#[test]
fn a_file_that_is_not_utf8_is_e0109_at_its_line_and_column() {
    let file = TempFile::new("latin1.eqm", "");
    std::fs::write(&file.0, b"model M\n  Real x = 1;\n  Real \xe9y = 2;\nend M;\n").expect("writable");
    let (status, stderr) = run_check(&file.0);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("[E0109]"), "{stderr}");
    assert!(stderr.contains("latin1.eqm:3:8"), "not located at 3:8:\n{stderr}");
    assert!(
        !stderr.contains("[E0101]"),
        "the invalid bytes are reported once:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_huge_line_is_not_echoed_whole() {
    let literal = "a".repeat(1_000_000);
    let text = format!("model M\n  String s = \"{literal}\"; Real x = ;\nend M;\n");
    let stderr = expect_error("longline.eqm", &text, &[], "E0110");
    assert!(
        stderr.len() < 2_000,
        "{} bytes of diagnostics for a 1 MB line",
        stderr.len()
    );
    assert!(stderr.contains("..."), "the cut is not marked:\n{stderr}");
    // The location is the one in the file, not in the shortened excerpt.
    assert!(stderr.contains("longline.eqm:2:1000027"), "{stderr}");
    assert!(stderr.contains("Real x = ;"), "the labelled part is shown:\n{stderr}");
}

#[test]
fn numeric_options_take_negative_values() {
    let model = "model D\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend D;\n";
    let file = TempFile::new("decay.eqm", model);
    let path = file.0.to_str().expect("the temporary path is UTF-8");
    for option in ["--rtol", "--atol", "--interval", "--step"] {
        for value in ["-1", "-1e-3"] {
            let (status, _, stderr) = eqm(&["run", path, option, value]);
            assert_eq!(status, 2, "{option} {value}: {stderr}");
            assert!(
                stderr.contains(&format!("{option} must be a positive number, not -")),
                "{option} {value}: {stderr}"
            );
            assert!(!stderr.contains("unexpected argument"), "{option} {value}: {stderr}");
        }
    }
    let (status, stdout, stderr) = eqm(&["run", path, "--start", "-1", "--stop", "-0.5", "--interval", "0.25"]);
    assert_eq!(status, 0, "{stderr}");
    let times: Vec<&str> = stdout
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap_or(""))
        .collect();
    assert_eq!(times, ["-1", "-0.75", "-0.5"]);
}

#[test]
fn a_repeated_parameter_takes_its_last_value() {
    let model = "model K\n  parameter Real k = 0;\n  Real y;\nequation\n  y = k;\nend K;\n";
    let file = TempFile::new("param.eqm", model);
    let path = file.0.to_str().expect("the temporary path is UTF-8");
    let (status, stdout, stderr) = eqm(&[
        "run", path, "--param", "k=1", "--param", "k=2", "--stop", "0", "--vars", "y",
    ]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout.lines().last(), Some("0,2"), "{stdout}");
}

#[test]
fn a_library_model_needs_no_file() {
    let (status, stdout, stderr) = eqm(&["flatten", "--model", "Electrical.Analog.Basic.Resistor"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("R"), "{stdout}");
    // Without a file and without a model there is nothing to do: a usage error.
    let (status, _, _) = eqm(&["check"]);
    assert_eq!(status, 2);
}

#[test]
fn an_unknown_model_gets_a_suggestion() {
    let (status, _, stderr) = eqm(&["check", "examples/bouncing_ball.eqm", "--model", "Bouncingball"]);
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("[E0201]") && stderr.contains("did you mean `BouncingBall`?"),
        "{stderr}"
    );
    // A library class named by its last name only points to where it is.
    let (status, _, stderr) = eqm(&["check", "--model", "Mechanics.Translational.Mass"]);
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("did you mean `Mechanics.Translational.Components.Mass`?"),
        "{stderr}"
    );
}

/// Runs `eqm ARGS FILE` (FILE holding `model`), reads the first 16 bytes of its output and closes
/// the pipe with far more output still to come; returns the exit status and standard error.
fn run_with_closed_pipe(args: &[&str], name: &str, model: &str) -> (Option<i32>, String) {
    use std::io::Read;
    let file = TempFile::new(name, model);
    let mut child = Command::new(env!("CARGO_BIN_EXE_eqm"))
        .args(args)
        .arg(&file.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the eqm binary runs");
    let mut first = [0u8; 16];
    // The pipe's read end is closed at the end of this statement.
    child
        .stdout
        .take()
        .expect("a piped stdout")
        .read_exact(&mut first)
        .expect("the output starts");
    let output = child.wait_with_output().expect("eqm ends");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A reader that stops reading (`eqm flatten big.eqm | head -c 16`, most of the flat model's text
/// still to come) ends the command quietly with the status of a closed pipe, without a panic
/// message.
#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    let (status, stderr) = run_with_closed_pipe(
        &["flatten"],
        "closed_pipe.eqm",
        "model ClosedPipe\n  Real x[20000](each start = 1, each fixed = true);\nequation\n  der(x) = -x;\nend ClosedPipe;\n",
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status, Some(141), "{stderr}");
}

/// `eqm run m.eqm | head -c 16` (a million rows to come): the run stops when its reader goes
/// away, with the status of a closed pipe and no message (the rows it could not write were asked
/// for by nobody).
#[test]
fn a_closed_output_pipe_ends_the_run_quietly() {
    let (status, stderr) = run_with_closed_pipe(
        &["run", "--stop", "1000", "--interval", "0.001"],
        "closed_pipe_run.eqm",
        "model ClosedPipeRun\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend ClosedPipeRun;\n",
    );
    assert!(
        !stderr.contains("cannot write") && !stderr.contains("panicked"),
        "{stderr}"
    );
    assert_eq!(status, Some(141), "{stderr}");
}
