//! Libraries an external function names that are not prebuilt but whose C sources the
//! installation ships (`Resources/C-Sources` beside `Resources/Library`, with a `readme.txt`
//! saying which files make which library): compiled at first use, kept in the cache so a second
//! run compiles nothing (the compiler's invocations are counted), their `ModelicaUtilities.h`
//! calls served by EQM's own functions, their `static` state one per process (two external
//! functions share it), checked against closed forms on both back ends; the
//! diagnostic when a library is neither prebuilt nor installed as sources; and the xorshift64*
//! generator of the installed Modelica Standard Library's `ModelicaExternalC` against the
//! algorithm written out here.
//!
//! A String input left to its literal default is passed to C as that text.
//!
//! Each test skips with a message when the machine has no `cc`; the one reading the Modelica
//! Standard Library skips without it.

use crate::check;
use crate::external::{check_fails, have_cc, scratch};
use crate::external_objects::installed_msl;
use eqm::{ModelOptions, RunSettings, Session, SimulationResult};
use std::path::Path;

/// A compiler that counts its invocations: a script that appends a line to `count` and runs
/// `cc` with its arguments.
fn counting_compiler(dir: &Path) -> (String, std::path::PathBuf) {
    let count = dir.join("invocations");
    let script = dir.join("counting-cc");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec cc \"$@\"\n", count.display()),
    )
    .expect("script");
    let status = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .expect("chmod runs");
    assert!(status.success());
    (script.display().to_string(), count)
}

/// How many times the counting compiler ran, and how many of those compiled an object (`-c`).
fn invocations(count: &Path) -> (usize, usize) {
    let text = std::fs::read_to_string(count).unwrap_or_default();
    let objects = text.lines().filter(|l| l.split(' ').any(|a| a == "-c")).count();
    (text.lines().count(), objects)
}

/// One run (a fresh session and linker, as a new process has) of `class` in the file `name`
/// with `text`, through `compiler` with its cache under `dir`, on the interpreter or on native
/// code.
fn run(name: &str, text: &str, class: &str, compiler: &str, dir: &Path, interpreter: bool) -> SimulationResult {
    let mut session = Session::with_sources(&[(name.to_string(), text.to_string())], &[], None);
    session.set_external_linker(eqm_cc::SystemCompiler::new(compiler, dir.join("cache")));
    let mut model = session
        .compile(Some(class), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let settings = RunSettings {
        stop: Some(2.0),
        interval: Some(0.25),
        interpreter,
        ..RunSettings::default()
    };
    model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"))
}

const POLY_PACKAGE: &str = r##"
package Poly
  function cubicPlus "x^3 + offset, from the library built from sources"
    input Real x;
    input String mode = "cubic";
    output Real y;
    external "C" y = poly_eval(mode, x) annotation(Include = "#include \"poly.h\"",
      IncludeDirectory = "modelica://Poly/Resources/C-Sources", Library = "Polynomials");
  end cubicPlus;

  function square "x^2, from the same library"
    input Real x;
    output Real y;
    external "C" y = poly_eval("square", x) annotation(Include = "#include \"poly.h\"",
      IncludeDirectory = "modelica://Poly/Resources/C-Sources", Library = "Polynomials");
  end square;

  model UseIt
    Real c = cubicPlus(time);
    Real s = square(time);
  end UseIt;

  function add "adds to the library's running total and returns it"
    input Real v;
    output Real total;
    external "C" total = poly_add(v) annotation(Include = "double poly_add(double v);",
      IncludeDirectory = "modelica://Poly/Resources/C-Sources", Library = "Polynomials");
  end add;

  function total "the library's running total (after the call that gives `after`)"
    input Real after;
    output Real total;
    external "C" total = poly_total(after) annotation(Include = "double poly_total(double after);",
      IncludeDirectory = "modelica://Poly/Resources/C-Sources", Library = "Polynomials");
  end total;

  model Shared
    parameter Real added = add(2.5);
    parameter Real seen = total(added);
    Real addedNow = added;
    Real seenNow = seen;
  end Shared;

  model Failing
    parameter Real p = cubicPlus(2.0, "quartic");
    Real c = p * time;
  end Failing;
end Poly;
"##;

/// The package `Poly` in `dir` with the C sources of its library `Polynomials`: `poly.c`
/// evaluates by the mode's name and reports an unknown one with `ModelicaFormatError`,
/// `offset.c` gives the offset it adds; the readme also lists a file for another platform's
/// compiler, which does not exist and must not be compiled.
fn poly_installation(dir: &Path) -> String {
    let sources = dir.join("Resources/C-Sources");
    std::fs::create_dir_all(&sources).expect("sources");
    std::fs::create_dir_all(dir.join("Resources/Library")).expect("library directory");
    std::fs::write(
        sources.join("readme.txt"),
        "The files of the libraries:\n\n- Polynomials (.a, .so) containing:\n  poly.c\n  offset.c\n  windows_only.c (for another compiler)\n\n- Other containing:\n  other.c\n",
    )
    .expect("readme");
    std::fs::write(
        sources.join("poly.h"),
        "double poly_eval(const char* mode, double x);\n",
    )
    .expect("header");
    std::fs::write(
        sources.join("poly.c"),
        r#"#include <string.h>
#include "poly.h"
#include "ModelicaUtilities.h"
double poly_offset(void);
double poly_eval(const char* mode, double x) {
    if (strcmp(mode, "cubic") == 0) return x * x * x + poly_offset();
    if (strcmp(mode, "square") == 0) return x * x;
    ModelicaFormatError("unknown mode \"%s\"", mode);
    return 0.0;
}
"#,
    )
    .expect("poly.c");
    std::fs::write(
        sources.join("offset.c"),
        "static double running = 0.0;\ndouble poly_offset(void) { return 0.5; }\ndouble poly_add(double v) { running += v; return running; }\ndouble poly_total(double after) { (void)after; return running; }\n",
    )
    .expect("offset.c");
    std::fs::write(
        sources.join("ModelicaUtilities.h"),
        "#include <stdarg.h>\nvoid ModelicaFormatError(const char* format, ...);\n",
    )
    .expect("utilities header");
    dir.join("Poly.eqm").display().to_string()
}

#[test]
fn a_library_built_from_installed_sources_is_compiled_once_and_cached() {
    if !have_cc() {
        return;
    }
    let dir = scratch("sources");
    let name = poly_installation(&dir);
    let (compiler, count) = counting_compiler(&dir);
    let native = run(&name, POLY_PACKAGE, "Poly.UseIt", &compiler, &dir, false);
    // The two sources of the library and its shared library, once for both functions, and one
    // shared object for each of the two functions: five runs of the compiler, two of them
    // objects.
    assert_eq!(invocations(&count), (5, 2));
    for t in [0.0, 0.75, 2.0] {
        check(&native, "c", t, t * t * t + 0.5, 1e-15);
        check(&native, "s", t, t * t, 1e-15);
    }
    // A second run, as a new process makes it: everything comes from the cache.
    let interpreted = run(&name, POLY_PACKAGE, "Poly.UseIt", &compiler, &dir, true);
    assert_eq!(invocations(&count), (5, 2), "the second run compiled again");
    assert_eq!(native.time(), interpreted.time());
    for column in ["c", "s"] {
        assert_eq!(native.column(column), interpreted.column(column), "{column}");
    }
    // The C code's `ModelicaFormatError` is EQM's: the run stops with its message.
    let mut session = Session::with_sources(&[(name.clone(), POLY_PACKAGE.to_string())], &[], None);
    session.set_external_linker(eqm_cc::SystemCompiler::new(compiler.as_str(), dir.join("cache")));
    let mut model = session
        .compile(Some("Poly.Failing"), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let error = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        })
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(error.contains("unknown mode \"quartic\""), "{error}");
    assert_eq!(
        invocations(&count),
        (6, 2),
        "only the new function's object is compiled"
    );
    // The library's `static` total is one per process: the function that reads it sees what
    // the other function, a unit of its own, stored (a copy per unit would read 0).
    let shared = run(&name, POLY_PACKAGE, "Poly.Shared", &compiler, &dir, true);
    let added = shared.value_at("addedNow", 0.0).expect("added");
    assert!(added >= 2.5 && (added / 2.5).fract() == 0.0, "{added}");
    check(&shared, "seenNow", 0.0, added, 0.0);
}

#[test]
fn a_library_neither_prebuilt_nor_installed_as_sources_is_reported_at_check() {
    if !have_cc() {
        return;
    }
    let dir = scratch("no-sources");
    std::fs::create_dir_all(dir.join("Resources/Library")).expect("library directory");
    let text = r#"
package Lib
  function f
    input Real x;
    output Real y;
    external "C" y = absent_function(x) annotation(Library = "AbsentLibrary");
  end f;
  model M
    Real y = f(time);
  end M;
end Lib;
"#;
    let name = dir.join("Lib.eqm").display().to_string();
    let message = check_fails(&name, text, &dir, "cc");
    assert!(
        message.starts_with("the external function `absent_function` of `Lib.f` cannot be provided: the library `AbsentLibrary` is not prebuilt for this platform"),
        "{message}"
    );
    assert!(message.contains("its C sources are not installed"), "{message}");
    assert!(message.contains("Resources/C-Sources"), "{message}");
}

/// xorshift64* (Vigna, 2014) on the 64-bit state whose low and high 32-bit halves are
/// `state[0]` and `state[1]`: the next state's halves and the number in (0, 1) made from it as
/// the Modelica library documents it (the state as a signed 64-bit integer times 2^-64, plus
/// one half).
fn xorshift64star(state: [i32; 2]) -> ([i32; 2], f64) {
    let mut x = (state[0] as u32 as u64) | ((state[1] as u32 as u64) << 32);
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    x = x.wrapping_mul(2_685_821_657_736_338_717);
    let next = [x as u32 as i32, (x >> 32) as u32 as i32];
    (next, (x as i64) as f64 * 5.421_010_862_427_522e-20 + 0.5)
}

#[test]
fn the_xorshift64star_generator_of_the_installed_library_gives_the_algorithms_numbers() {
    if !have_cc() {
        return;
    }
    let Some(msl) = installed_msl() else { return };
    let resources = msl.join("Modelica/Resources");
    let text = format!(
        r##"
function xorshift64star
  input Integer stateIn[2];
  output Real result;
  output Integer stateOut[2];
  external "C" ModelicaRandom_xorshift64star(stateIn, stateOut, result) annotation(
    IncludeDirectory = "file://{sources}", Include = "#include \"ModelicaRandom.h\"",
    Library = "ModelicaExternalC", LibraryDirectory = "file://{library}");
end xorshift64star;
model Draws
  parameter Integer seed[2] = {{123456789, -362436069}};
  Real r1;
  Real r2;
  Integer s1[2];
  Integer s2[2];
equation
  (r1, s1) = xorshift64star(seed);
  (r2, s2) = xorshift64star(s1);
end Draws;
"##,
        sources = resources.join("C-Sources").display(),
        library = resources.join("Library").display(),
    );
    let dir = scratch("xorshift");
    let (first_state, first) = xorshift64star([123_456_789, -362_436_069]);
    let (second_state, second) = xorshift64star(first_state);
    let mut runs = Vec::new();
    for interpreter in [false, true] {
        let result = run("draws.eqm", &text, "Draws", "cc", &dir, interpreter);
        check(&result, "r1", 1.0, first, 0.0);
        check(&result, "r2", 1.0, second, 0.0);
        check(&result, "s1[1]", 1.0, f64::from(first_state[0]), 0.0);
        check(&result, "s1[2]", 1.0, f64::from(first_state[1]), 0.0);
        check(&result, "s2[1]", 1.0, f64::from(second_state[0]), 0.0);
        check(&result, "s2[2]", 1.0, f64::from(second_state[1]), 0.0);
        runs.push(result);
    }
    assert_eq!(runs[0].column("r2"), runs[1].column("r2"));
}

#[test]
fn a_string_input_left_to_its_literal_default_is_passed_to_c_as_that_text() {
    if !have_cc() {
        return;
    }
    let dir = scratch("string-default");
    // The code of the first character of the separator plus x: ',' is 44, ';' is 59, 'x' 120.
    let text = r#"
function firstCode
  input Real x;
  input String separator = ",";
  output Real y;
  external "C" y = first_code(separator, x) annotation(Include = "static double first_code(const char* s, double x) { return (double)(unsigned char)s[0] + x; }");
end firstCode;
function semicolonCode "the default rebound by the extends clause"
  extends firstCode(separator = ";");
end semicolonCode;
model M
  Real comma = firstCode(time);
  Real semicolon = semicolonCode(time);
  Real given = firstCode(time, "x");
end M;
"#;
    let mut runs = Vec::new();
    for interpreter in [false, true] {
        let result = run("m.eqm", text, "M", "cc", &dir, interpreter);
        for t in [0.0, 1.5] {
            check(&result, "comma", t, 44.0 + t, 1e-15);
            check(&result, "semicolon", t, 59.0 + t, 1e-15);
            check(&result, "given", t, 120.0 + t, 1e-15);
        }
        runs.push(result);
    }
    for column in ["comma", "semicolon", "given"] {
        assert_eq!(runs[0].column(column), runs[1].column(column), "{column}");
    }
}
