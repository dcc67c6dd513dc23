//! External C functions compiled with the system C compiler (`eqm_cc::SystemCompiler`):
//! inline `Include` C, an array argument, Integer and Boolean arguments, a library built by the
//! test and found through `modelica://` directories, checked against closed forms on the
//! interpreter and on native code, which agree bit for bit; and the diagnostics of a C syntax
//! error, a symbol no object defines and a missing compiler, given at `check`.
//!
//! The string functions of the Modelica external C library (`ModelicaStrings_*`), which EQM
//! evaluates itself when the model is compiled, are checked against values worked out by hand.
//!
//! Each test that compiles C skips with a message when the machine has no `cc` (CI installs one).

use crate::check;
use eqm::{ModelOptions, RunSettings, Session, SimulationResult};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `cc` runs here; prints why a test is skipped when it does not.
pub(crate) fn have_cc() -> bool {
    let ok = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no C compiler `cc` on this machine");
    }
    ok
}

/// A directory of its own for one test, under the system's temporary directory.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-external-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// A session of the file `name` with `text`, linking through `cc` with its cache in `cache`.
fn session(name: &str, text: &str, cache: &Path) -> Session {
    let mut session = Session::with_sources(&[(name.to_string(), text.to_string())], &[], None);
    session.set_external_linker(eqm_cc::SystemCompiler::new("cc", cache.join("cache")));
    session
}

/// The run of the model to `stop` on native code and on the interpreter; asserts that every
/// column agrees bit for bit and returns the native run.
pub(crate) fn run_both(name: &str, text: &str, cache: &Path, stop: f64) -> SimulationResult {
    let mut runs = Vec::new();
    for interpreter in [false, true] {
        let mut session = session(name, text, cache);
        let mut model = session
            .compile(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        let settings = RunSettings {
            stop: Some(stop),
            interval: Some(0.125),
            interpreter,
            ..RunSettings::default()
        };
        runs.push(model.simulate(&settings).unwrap_or_else(|e| panic!("{e}")));
    }
    let (native, interpreted) = (&runs[0], &runs[1]);
    assert_eq!(native.time(), interpreted.time());
    for column in native.columns() {
        assert_eq!(
            native.column(&column.name),
            interpreted.column(&column.name),
            "{}",
            column.name
        );
    }
    runs.swap_remove(0)
}

const INLINE: &str = r##"
function squarePlusOne
  input Real x;
  output Real y;
  external "C" y = sq1(x) annotation(Include = "static double sq1(double x) { return x*x + 1.0; }");
end squarePlusOne;

function total
  input Real x[:];
  output Real s;
  external "C" s = sum(x, size(x, 1)) annotation(Include = "#include <stddef.h>
double sum(const double* x, size_t n) { double s = 0.0; for (size_t i = 0; i < n; ++i) s += x[i]; return s; }");
end total;

function ipow
  input Integer b;
  input Integer e;
  input Boolean negate;
  output Integer r;
  external "C" r = ipow(b, e, negate) annotation(Include = "int ipow(int b, int e, int negate) { int r = 1; while (e-- > 0) r *= b; return negate ? -r : r; }");
end ipow;

model Inline
  Real x(start = 1, fixed = true);
  Real y;
  Real z;
  Real v[3] = {time, 2*time, x};
  Integer k = ipow(3, 4, false);
  Integer m = ipow(2, 5, true);
equation
  der(x) = -x;
  y = squarePlusOne(time);
  z = total(v);
end Inline;
"##;

#[test]
fn inline_c_with_scalar_and_array_arguments_matches_closed_forms_on_both_back_ends() {
    if !have_cc() {
        return;
    }
    let dir = scratch("inline");
    let result = run_both("inline.eqm", INLINE, &dir, 2.0);
    for t in [0.0_f64, 0.5, 1.25, 2.0] {
        let x = (-t).exp();
        check(&result, "y", t, t * t + 1.0, 1e-15);
        check(&result, "z", t, 3.0 * t + result.value_at("x", t).expect("x"), 1e-14);
        check(&result, "x", t, x, 1e-4);
    }
    check(&result, "k", 1.0, 81.0, 0.0);
    check(&result, "m", 1.0, -32.0, 0.0);
}

#[test]
fn a_library_in_the_packages_resources_is_linked() {
    if !have_cc() {
        return;
    }
    let dir = scratch("library");
    // The package `Lib` is the file `<dir>/Lib.eqm`: its resources are `<dir>/Resources/...`.
    let (include, library) = (dir.join("Resources/Include"), dir.join("Resources/Library"));
    std::fs::create_dir_all(&include).expect("include directory");
    std::fs::create_dir_all(&library).expect("library directory");
    std::fs::write(include.join("cubic.h"), "double cubic(double x, double a);\n").expect("header");
    let source = dir.join("cubic.c");
    std::fs::write(&source, "double cubic(double x, double a) { return a * x * x * x; }\n").expect("source");
    let object = dir.join("cubic.o");
    let compiled = Command::new("cc")
        .args(["-c", "-fPIC", "-O2", "-o"])
        .arg(&object)
        .arg(&source)
        .status()
        .expect("cc runs");
    assert!(compiled.success());
    let archived = Command::new("ar")
        .arg("rcs")
        .arg(library.join("libcubic.a"))
        .arg(&object)
        .status()
        .expect("ar runs");
    assert!(archived.success());
    let text = r##"
package Lib
  function cubic
    input Real x;
    input Real a;
    output Real y;
    external "C" y = cubic(x, a) annotation(Include = "#include \"cubic.h\"", Library = "cubic",
      IncludeDirectory = "modelica://Lib/Resources/Include", LibraryDirectory = "modelica://Lib/Resources/Library");
  end cubic;

  model UseIt
    parameter Real a = 0.5;
    Real y = cubic(time, a);
    Real w = cubicDefault(time);
  end UseIt;

  function cubicDefault "the default call and the default directories"
    input Real x;
    output Real y;
  algorithm
    y := cubicTwice(x, 2.0);
  end cubicDefault;

  function cubicTwice
    input Real x;
    input Real a;
    output Real y;
    external "C" y = cubic(x, a) annotation(Library = "cubic");
  end cubicTwice;
end Lib;
"##;
    let result = run_use_it(&dir, text, 2.0);
    for t in [0.0, 0.75, 2.0] {
        check(&result, "y", t, 0.5 * t * t * t, 1e-15);
        check(&result, "w", t, 2.0 * t * t * t, 1e-15);
    }
}

#[test]
fn an_include_directory_of_a_nested_package_is_its_subdirectory_and_the_utilities_header_is_there() {
    if !have_cc() {
        return;
    }
    let dir = scratch("nested");
    // `modelica://Lib.Tools/source` stands for `<dir>/Tools/source`: the package `Lib` is the
    // file `<dir>/Lib.eqm`, and each further part of the name is a subdirectory.
    let source = dir.join("Tools/source");
    std::fs::create_dir_all(&source).expect("source directory");
    // The C code includes `ModelicaUtilities.h`, which EQM provides, as a library's C code does.
    let c = "#include \"ModelicaUtilities.h\"\ndouble triple(double x) { if (x < -1.0) ModelicaError(\"below -1\"); return 3.0 * x; }\n";
    std::fs::write(source.join("triple.c"), c).expect("source");
    let text = r##"
package Lib
  package Tools
    function triple
      input Real x;
      output Real y;
      external "C" y = triple(x) annotation(Include = "#include \"triple.c\"",
        IncludeDirectory = "modelica://Lib.Tools/source");
    end triple;
  end Tools;
  model UseIt
    Real y = Tools.triple(time);
  end UseIt;
end Lib;
"##;
    let result = run_use_it(&dir, text, 1.0);
    check(&result, "y", 0.75, 2.25, 0.0);
}

/// The run of `Lib.UseIt` to `stop` from the package `Lib`, the file `<dir>/Lib.eqm` holding
/// `text` (so that its `modelica://Lib/...` directories are in `dir`).
fn run_use_it(dir: &Path, text: &str, stop: f64) -> SimulationResult {
    let name = dir.join("Lib.eqm").display().to_string();
    let mut session = session(&name, text, dir);
    let mut model = session
        .compile(Some("Lib.UseIt"), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    model
        .simulate(&RunSettings {
            stop: Some(stop),
            interval: Some(0.25),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The rendered diagnostics of `check` on `text`, which must fail with `E0325`.
pub(crate) fn check_fails(name: &str, text: &str, cache: &Path, compiler: &str) -> String {
    let mut session = Session::with_sources(&[(name.to_string(), text.to_string())], &[], None);
    session.set_external_linker(eqm_cc::SystemCompiler::new(compiler, cache.join("cache")));
    assert!(session.check(None, &ModelOptions::default()).is_none() || session.has_errors());
    assert!(session.has_errors());
    let codes: Vec<&str> = session.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0325"], "{}", session.render_diagnostics(false));
    session.diagnostics()[0].message.clone()
}

#[test]
fn a_c_syntax_error_is_reported_at_check_with_the_compilers_message() {
    if !have_cc() {
        return;
    }
    let dir = scratch("syntax");
    let text = r#"
function f
  input Real x;
  output Real y;
  external "C" y = broken(x) annotation(Include = "double broken(double x) { return x * ; }");
end f;
model M
  Real y = f(time);
end M;
"#;
    let message = check_fails("m.eqm", text, &dir, "cc");
    assert!(
        message.starts_with("the external function `broken` of `f` cannot be provided: the C compiler failed"),
        "{message}"
    );
    assert!(message.contains("return x * ; }"), "the compiler's message: {message}");
}

#[test]
fn a_symbol_missing_after_linking_is_reported_at_check() {
    if !have_cc() {
        return;
    }
    let dir = scratch("missing");
    let text = r#"
function f
  input Real x;
  output Real y;
  external "C" y = nowhere_defined(x);
end f;
model M
  Real y = f(time);
end M;
"#;
    let message = check_fails("m.eqm", text, &dir, "cc");
    assert!(
        message.starts_with(
            "the external function `nowhere_defined` of `f` cannot be provided: the symbol `nowhere_defined` is missing after linking"
        ),
        "{message}"
    );
}

#[test]
fn no_compiler_is_reported_at_check() {
    let dir = scratch("nocc");
    let text = r#"
function f
  input Real x;
  output Real y;
  external "C" y = g(x) annotation(Include = "double g(double x) { return x; }");
end f;
model M
  Real y = f(time);
end M;
"#;
    let message = check_fails("m.eqm", text, &dir, "/nonexistent/eqm-no-such-cc");
    assert!(
        message.contains("no C compiler: `/nonexistent/eqm-no-such-cc` was not found"),
        "{message}"
    );
}

#[test]
fn a_string_known_only_during_the_run_is_reported_at_check() {
    let dir = scratch("string");
    let text = r#"
function f
  input String s;
  output Real y;
  external "C" y = g(s) annotation(Include = "double g(const char* s) { return 1.0; }");
end f;
model M
  Real y = f(String(time));
end M;
"#;
    let message = check_fails("m.eqm", text, &dir, "cc");
    assert_eq!(
        message,
        "the external function `g` of `f` cannot be provided: argument 1 is a String known only during the run; EQM passes a String to C only when its text is known when the model is compiled (a literal, or a String parameter or constant)"
    );
}

/// Functions whose external clauses call the string functions of the Modelica external C
/// library, as the Modelica Standard Library declares them.
const STRING_FUNCTIONS: &str = r##"function length
  input String string;
  output Integer result;
  external "C" result = ModelicaStrings_length(string);
end length;
function substring
  input String string;
  input Integer startIndex;
  input Integer endIndex;
  output String result;
  external "C" result = ModelicaStrings_substring(string, startIndex, endIndex);
end substring;
function compare
  input String string1;
  input String string2;
  input Boolean caseSensitive;
  output Integer result;
  external "C" result = ModelicaStrings_compare(string1, string2, caseSensitive);
end compare;
function compareAsBoolean
  input String string1;
  input String string2;
  input Boolean caseSensitive;
  output Boolean result;
  external "C" result = ModelicaStrings_compare(string1, string2, caseSensitive);
end compareAsBoolean;
function compareAsReal
  input String string1;
  input String string2;
  input Boolean caseSensitive;
  output Real result;
  external "C" result = ModelicaStrings_compare(string1, string2, caseSensitive);
end compareAsReal;
function skipWhiteSpace
  input String string;
  input Integer startIndex;
  output Integer nextIndex;
  external "C" nextIndex = ModelicaStrings_skipWhiteSpace(string, startIndex);
end skipWhiteSpace;
function scanReal
  input String string;
  input Integer startIndex;
  input Boolean unsigned;
  output Integer nextIndex;
  output Real number;
  external "C" ModelicaStrings_scanReal(string, startIndex, unsigned, nextIndex, number);
end scanReal;
function scanInteger
  input String string;
  input Integer startIndex;
  input Boolean unsigned;
  output Integer nextIndex;
  output Integer number;
  external "C" ModelicaStrings_scanInteger(string, startIndex, unsigned, nextIndex, number);
end scanInteger;
"##;

#[test]
fn the_modelica_string_functions_give_hand_values_on_constant_strings() {
    let text = format!(
        "{STRING_FUNCTIONS}
model S
  parameter String s = \"  -12.5e1 rest\";
  parameter Integer n = length(s);
  Real len = length(\"hello\");
  Integer c1 = compare(\"abc\", \"abd\", true);
  Integer c2 = compare(\"ABC\", \"abc\", false);
  Integer c3 = compare(\"b\", \"a\", true);
  Boolean nonzero = compareAsBoolean(\"ABC\", \"abc\", false);
  Real asReal = compareAsReal(\"b\", \"a\", true);
  Integer w = skipWhiteSpace(s, 1);
  Integer sub = length(substring(\"abcdef\", 2, 4));
  Real x;
  Integer next;
  Integer k;
  Integer nk;
  Integer bad;
  Integer badNext;
  Real y = x * time;
equation
  (next, x) = scanReal(s, 1, false);
  (nk, k) = scanInteger(\"  42 x\", 1, false);
  (badNext, bad) = scanInteger(s, 1, false);
end S;
"
    );
    let mut session = Session::with_sources(&[("s.eqm".to_string(), text)], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    // "  -12.5e1 rest": the number starts after two blanks and ends before the third.
    let expected = [
        ("len", 5.0),
        ("c1", 1.0),
        ("c2", 2.0),
        ("c3", 3.0),
        // 2 (equal) as a Boolean is true, 3 (greater) as a Real is 3.
        ("nonzero", 1.0),
        ("asReal", 3.0),
        ("w", 3.0),
        ("sub", 3.0),
        ("x", -125.0),
        ("next", 10.0),
        ("k", 42.0),
        ("nk", 5.0),
        // "-12.5e1" is no Integer: nothing is read and the index stays where it was.
        ("bad", 0.0),
        ("badNext", 1.0),
    ];
    for (name, value) in expected {
        check(&result, name, 0.5, value, 0.0);
    }
    check(&result, "y", 0.5, -62.5, 0.0);
    let n = model
        .parameters()
        .into_iter()
        .find(|p| p.name == "n")
        .expect("the parameter n");
    assert_eq!(n.value, Some(14.0));
}

#[test]
fn a_string_function_of_a_string_known_only_at_run_time_is_a_diagnostic() {
    let text = format!(
        "{STRING_FUNCTIONS}
model S
  Integer n = length(String(time));
end S;
"
    );
    let mut session = Session::with_sources(&[("s.eqm".to_string(), text)], &[], None);
    assert!(session.check(None, &ModelOptions::default()).is_none());
    let d = &session.diagnostics()[0];
    assert_eq!(d.code, "E0325");
    assert_eq!(
        d.message,
        "`ModelicaStrings_length` is evaluated when the model is compiled, and its input `string` is not known then"
    );
}
