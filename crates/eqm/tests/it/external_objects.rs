//! External objects (classes extending `ExternalObject`): a counter object written in inline C
//! whose constructor and destructor log each call with the object's address to a file, read
//! after the run: each object is created once per run before it starts and destroyed once at
//! its end (also an object made from another, destroyed first; also a run that stops with the
//! constructor's `ModelicaError`), and both back ends give the same values, those of the closed
//! forms. Misuse of an object as a number is E0329 at `check`.
//!
//! The tables of the installed Modelica Standard Library (`CombiTimeTable`, `CombiTable1Ds`,
//! `CombiTable1Dv`, `CombiTable2Ds`), which are external objects of the library's own C code
//! linked from its prebuilt static libraries, are checked against hand interpolation at chosen
//! times; those tests skip without `/work/shared/msl`. Every test skips without `cc`.

use crate::check;
use crate::external::{have_cc, scratch};
use eqm::{DirEntry, LibraryPath, LibraryStore, ModelOptions, RunSettings, Session, SimulationResult};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Two external object classes: `Counter` (a base value) and `Scaled` (made from a `Counter`
/// and a factor), each logging `new NAME ADDRESS` and `free NAME ADDRESS` to `LOG`, and the
/// functions that read them. `y = s + 2 time`, `z = k s + time`.
const COUNTER: &str = r##"
model Objects
  class Counter
    extends ExternalObject;
    function constructor
      input Real start;
      output Counter c;
    external "C" c = counter_new(start) annotation(Include = "
#include <stdio.h>
#include <stdlib.h>
typedef struct { double base; } Counter;
static void* counter_new(double start) {
  Counter* c = malloc(sizeof *c);
  c->base = start;
  FILE* f = fopen(\"LOG\", \"a\"); fprintf(f, \"new Counter %p\\n\", (void*)c); fclose(f);
  return c;
}");
    end constructor;
    function destructor
      input Counter c;
    external "C" counter_free(c) annotation(Include = "
#include <stdio.h>
#include <stdlib.h>
static void counter_free(void* c) { FILE* f = fopen(\"LOG\", \"a\"); fprintf(f, \"free Counter %p\\n\", c); fclose(f); free(c); }");
    end destructor;
  end Counter;

  class Scaled
    extends ExternalObject;
    function constructor
      input Counter base;
      input Real factor;
      output Scaled s;
    external "C" s = scaled_new(base, factor) annotation(Include = "
#include <stdio.h>
#include <stdlib.h>
typedef struct { double base; } Counter;
typedef struct { double value; } Scaled;
static void* scaled_new(void* base, double factor) {
  Scaled* s = malloc(sizeof *s);
  s->value = factor * ((Counter*)base)->base;
  FILE* f = fopen(\"LOG\", \"a\"); fprintf(f, \"new Scaled %p\\n\", (void*)s); fclose(f);
  return s;
}");
    end constructor;
    function destructor
      input Scaled s;
    external "C" scaled_free(s) annotation(Include = "
#include <stdio.h>
#include <stdlib.h>
static void scaled_free(void* s) { FILE* f = fopen(\"LOG\", \"a\"); fprintf(f, \"free Scaled %p\\n\", s); fclose(f); free(s); }");
    end destructor;
  end Scaled;

  function counted
    input Counter c;
    input Real x;
    output Real y;
  external "C" y = counted(c, x) annotation(Include = "typedef struct { double base; } Counter;
static double counted(void* c, double x) { return ((Counter*)c)->base + 2.0 * x; }");
  end counted;

  function scaled
    input Scaled s;
    input Real x;
    output Real y;
  external "C" y = scaled(s, x) annotation(Include = "typedef struct { double value; } Scaled;
static double scaled(void* s, double x) { return ((Scaled*)s)->value + x; }");
  end scaled;

  parameter Real s = 3;
  parameter Real k = 5;
  Counter counter = Counter(s);
  Scaled product = Scaled(counter, k);
  Real y;
  Real z;
equation
  y = counted(counter, time);
  z = scaled(product, time);
end Objects;
"##;

/// The counter model logging to `log`, linked through `cc` with its cache under `dir`.
fn counter_session(text: &str, dir: &Path) -> Session {
    let log = dir.join("log.txt");
    let text = text.replace("LOG", &log.display().to_string());
    let mut session = Session::with_sources(&[("objects.mo".to_string(), text)], &[], None);
    session.set_external_linker(eqm_cc::SystemCompiler::new("cc", dir.join("cache")));
    session
}

/// The lines of the log, each `new NAME ADDRESS` or `free NAME ADDRESS`.
fn log_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("log.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Checks that every object of `lines` was freed exactly once after it was created, and
/// returns how many of each class were created, `(counters, scaled)`.
fn balanced(lines: &[String]) -> (usize, usize) {
    let mut live: Vec<&str> = Vec::new();
    let mut made = (0, 0);
    for line in lines {
        if let Some(object) = line.strip_prefix("new ") {
            assert!(!live.contains(&object), "{object} created twice while alive: {lines:?}");
            live.push(object);
            if object.starts_with("Counter") {
                made.0 += 1;
            } else {
                made.1 += 1;
            }
        } else if let Some(object) = line.strip_prefix("free ") {
            let at = live.iter().position(|o| *o == object);
            let at = at.unwrap_or_else(|| panic!("{object} freed but not alive: {lines:?}"));
            live.remove(at);
        }
    }
    assert!(live.is_empty(), "objects never freed: {live:?} in {lines:?}");
    made
}

#[test]
fn an_external_object_is_created_once_per_run_and_destroyed_once_at_its_end_on_both_back_ends() {
    if !have_cc() {
        return;
    }
    let dir = scratch("objects-life");
    let mut results = Vec::new();
    for interpreter in [false, true] {
        let mut session = counter_session(COUNTER, &dir);
        let mut model = session
            .compile(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        let before = log_lines(&dir);
        balanced(&before);
        let settings = RunSettings {
            stop: Some(1.0),
            interval: Some(0.125),
            interpreter,
            ..RunSettings::default()
        };
        let result = model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
        // The run made one object of each class, and destroyed the one made from the other
        // first, when it ended.
        let run = log_lines(&dir)[before.len()..].to_vec();
        assert_eq!(balanced(&run), (1, 1), "{run:?}");
        let kinds: Vec<&str> = run.iter().map(|l| l.split(' ').take(2).last().unwrap_or("")).collect();
        assert_eq!(kinds, ["Counter", "Scaled", "Scaled", "Counter"], "{run:?}");
        for t in [0.0, 0.375, 1.0] {
            check(&result, "y", t, 3.0 + 2.0 * t, 0.0);
            check(&result, "z", t, 15.0 + t, 0.0);
        }
        // The handle is a parameter, never a result.
        assert!(
            result
                .columns()
                .iter()
                .all(|c| c.name != "counter" && c.name != "product")
        );
        results.push(result);
    }
    assert_eq!(results[0].time(), results[1].time());
    for name in ["y", "z"] {
        assert_eq!(results[0].column(name), results[1].column(name), "{name}");
    }
}

#[test]
fn each_run_of_a_compiled_model_makes_its_own_objects_from_its_parameters() {
    if !have_cc() {
        return;
    }
    let dir = scratch("objects-runs");
    let mut session = counter_session(COUNTER, &dir);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let settings = RunSettings {
        stop: Some(1.0),
        interval: Some(0.5),
        ..RunSettings::default()
    };
    let first = model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
    model
        .set_parameter("s", 10.0)
        .unwrap_or_else(|d| panic!("{}", d.message));
    let second = model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
    check(&first, "z", 1.0, 16.0, 0.0);
    check(&second, "y", 1.0, 12.0, 0.0);
    check(&second, "z", 1.0, 51.0, 0.0);
    let (counters, scaled) = balanced(&log_lines(&dir));
    assert!(
        counters >= 2 && counters == scaled,
        "{counters} counters, {scaled} scaled"
    );
}

#[test]
fn the_initialization_works_on_the_objects_of_the_run_it_starts() {
    if !have_cc() {
        return;
    }
    // An initial equation gives the model an initialization problem of its own, which reads the
    // objects; what a function makes an object remember then is there for the run too.
    let text = COUNTER.replace(
        "  Real z;\nequation\n",
        "  Real z;\n  Real w;\ninitial equation\n  w = y + 1;\nequation\n  der(w) = z;\n",
    );
    assert_ne!(text, COUNTER);
    let dir = scratch("objects-initialization");
    for interpreter in [false, true] {
        let mut session = counter_session(&text, &dir);
        let mut model = session
            .compile(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        let before = log_lines(&dir);
        let settings = RunSettings {
            stop: Some(1.0),
            interval: Some(0.125),
            interpreter,
            ..RunSettings::default()
        };
        let result = model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
        // One object of each class for the run and its initialization together.
        let run = log_lines(&dir)[before.len()..].to_vec();
        assert_eq!(balanced(&run), (1, 1), "{run:?}");
        // w(0) = y(0) + 1 = 4 and w' = z = 15 + t: w(t) = 4 + 15 t + t^2/2.
        for t in [0.0, 0.5, 1.0] {
            check(&result, "w", t, 4.0 + 15.0 * t + t * t / 2.0, 1e-6);
        }
    }
}

#[test]
fn a_constructor_that_calls_modelica_error_stops_with_its_message_and_leaks_nothing() {
    if !have_cc() {
        return;
    }
    let dir = scratch("objects-error");
    let failing = COUNTER.replace(
        "  c->base = start;",
        "  if (start < 0) { free(c); ModelicaFormatError(\\\"a counter cannot start at %g\\\", start); }\n  c->base = start;",
    );
    let failing = failing.replace(
        "typedef struct { double base; } Counter;\nstatic void* counter_new",
        "typedef struct { double base; } Counter;\nvoid ModelicaFormatError(const char* format, ...);\nstatic void* counter_new",
    );
    let mut session = counter_session(&failing, &dir);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let error = model.set_parameter("s", -1.0).err();
    let message = match error {
        Some(d) => format!("[{}] {}", d.code, d.message),
        None => {
            let settings = RunSettings {
                stop: Some(1.0),
                ..RunSettings::default()
            };
            match model.simulate(&settings) {
                Ok(_) => panic!("the run should stop"),
                Err(e) => e.to_string(),
            }
        }
    };
    assert!(message.contains("E0705"), "{message}");
    assert!(message.contains("a counter cannot start at -1"), "{message}");
    balanced(&log_lines(&dir));
}

/// The diagnostics of `check` on `text` (a model with the counter classes).
fn check_diagnostics(text: &str, dir: &Path) -> String {
    let mut session = counter_session(text, dir);
    assert!(session.compile(None, &ModelOptions::default()).is_none(), "{text}");
    session.render_diagnostics(false)
}

#[test]
fn an_external_object_used_as_a_number_or_without_a_constructor_call_is_e0329() {
    if !have_cc() {
        return;
    }
    let dir = scratch("objects-misuse");
    for (misuse, shown) in [
        (
            "y = counted(counter, time) + counter;",
            "`counter` is an external object, not a number",
        ),
        (
            "y = if counter == counter then 1 else 2;",
            "`counter` is an external object, not a number",
        ),
        (
            "y = counted(Counter(2 * s), time);",
            "an external object's constructor is called here, outside the binding of an external object",
        ),
    ] {
        let text = COUNTER.replace("y = counted(counter, time);", misuse);
        let rendered = check_diagnostics(&text, &dir);
        assert!(
            rendered.contains("E0329") && rendered.contains(shown),
            "{misuse}: {rendered}"
        );
    }
    let unbound = COUNTER.replace("Counter counter = Counter(s);", "Counter counter;");
    let rendered = check_diagnostics(&unbound, &dir);
    assert!(
        rendered.contains("E0329") && rendered.contains("has no binding"),
        "{rendered}"
    );
    let no_destructor = COUNTER.replacen("function destructor", "function destroy", 1);
    let no_destructor = no_destructor.replacen("end destructor;", "end destroy;", 1);
    let rendered = check_diagnostics(&no_destructor, &dir);
    assert!(
        rendered.contains("E0329") && rendered.contains("no function `destructor`"),
        "{rendered}"
    );
}

/// The file system, for the installed Modelica Standard Library.
pub(crate) struct FileSystem;

impl LibraryStore for FileSystem {
    fn list_dir(&self, dir: &Path) -> Result<Vec<DirEntry>, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
        Ok(entries
            .filter_map(|e| e.ok())
            .map(|e| DirEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                is_dir: e.path().is_dir(),
            })
            .collect())
    }

    fn read_file(&self, path: &Path) -> Result<String, String> {
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }
}

/// The installed Modelica Standard Library, when this machine has it.
pub(crate) fn installed_msl() -> Option<PathBuf> {
    let dir = PathBuf::from("/work/shared/msl");
    if dir.join("Modelica/package.mo").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: the Modelica Standard Library is not installed at {}",
            dir.display()
        );
        None
    }
}

/// The run of `text` (a model using the installed library) to `stop` with rows every 0.125,
/// on both back ends, checked to agree bit for bit: the native run. `None` when the library
/// or `cc` is missing.
fn run_with_msl(name: &str, text: &str, stop: f64) -> Option<SimulationResult> {
    let msl = installed_msl()?;
    if !have_cc() {
        return None;
    }
    let dir = scratch(name);
    let mut runs = Vec::new();
    for interpreter in [false, true] {
        let path = LibraryPath {
            store: Arc::new(FileSystem),
            directories: vec![msl.clone()],
            eqm_file_directories: Vec::new(),
            tree_cache: None,
        };
        let files = vec![("m.mo".to_string(), text.as_bytes().to_vec())];
        let mut session = Session::with_libraries(Vec::new(), files, &[], Some(path), None);
        session.set_external_linker(eqm_cc::SystemCompiler::new("cc", dir.join("cache")));
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
    assert_eq!(runs[0].time(), runs[1].time());
    for column in runs[0].columns() {
        assert_eq!(
            runs[0].column(&column.name),
            runs[1].column(&column.name),
            "{}",
            column.name
        );
    }
    Some(runs.swap_remove(0))
}

#[test]
fn combi_time_table_of_the_library_interpolates_and_extrapolates_as_documented() {
    let text = "model M
  import Modelica.Blocks.Types.Smoothness;
  import Modelica.Blocks.Types.Extrapolation;
  Modelica.Blocks.Sources.CombiTimeTable linear(table = [0, 0; 1, 1; 2, 4; 3, 9]);
  Modelica.Blocks.Sources.CombiTimeTable steps(table = [0, 0; 1, 1; 2, 4; 3, 9], smoothness = Smoothness.ConstantSegments);
  Modelica.Blocks.Sources.CombiTimeTable periodic(table = [0, 0, 10; 1, 1, 20; 2, 4, 30], columns = {2, 3}, extrapolation = Extrapolation.Periodic);
  Modelica.Blocks.Sources.CombiTimeTable hold(table = [0, 0; 1, 1; 2, 4], extrapolation = Extrapolation.HoldLastPoint, offset = {0.5});
  Modelica.Blocks.Sources.CombiTimeTable shifted(table = [0, 0; 1, 1; 2, 4], startTime = 1, timeScale = 2);
end M;
";
    let Some(r) = run_with_msl("objects-time-table", text, 4.0) else {
        return;
    };
    // Straight lines between the points, the last two points' line beyond them.
    for (t, y) in [
        (0.0, 0.0),
        (0.5, 0.5),
        (1.25, 1.75),
        (2.5, 6.5),
        (3.0, 9.0),
        (3.5, 11.5),
    ] {
        check(&r, "linear.y[1]", t, y, 1e-12);
    }
    // Each point's value held until the next; after the end, the line through the last two
    // points (the default extrapolation, whatever the smoothness).
    for (t, y) in [(0.5, 0.0), (1.5, 1.0), (2.25, 4.0), (3.5, 11.5)] {
        check(&r, "steps.y[1]", t, y, 1e-12);
    }
    // The table repeated with period 2, for each column.
    for (t, y1, y2) in [(0.5, 0.5, 15.0), (2.5, 0.5, 15.0), (3.25, 1.75, 22.5)] {
        check(&r, "periodic.y[1]", t, y1, 1e-12);
        check(&r, "periodic.y[2]", t, y2, 1e-12);
    }
    // The last point held after the end, plus the offset.
    for (t, y) in [(1.5, 3.0), (2.5, 4.5), (4.0, 4.5)] {
        check(&r, "hold.y[1]", t, y, 1e-12);
    }
    // Zero before startTime; the table's time axis scaled by 2 and shifted by startTime.
    for (t, y) in [(0.5, 0.0), (2.0, 0.5), (3.0, 1.0), (4.0, 2.5)] {
        check(&r, "shifted.y[1]", t, y, 1e-12);
    }
}

#[test]
fn combi_tables_of_the_library_interpolate_in_one_and_two_dimensions() {
    let text = "model M
  Modelica.Blocks.Tables.CombiTable1Ds ds(table = [0, 0, 10; 1, 1, 20; 2, 4, 40], columns = {2, 3});
  Modelica.Blocks.Tables.CombiTable1Dv dv(table = [0, 0; 1, 1; 2, 4]);
  Modelica.Blocks.Tables.CombiTable2Ds grid(table = [0, 0, 1; 0, 0, 1; 1, 2, 3]);
  Modelica.Blocks.Tables.CombiTable1Ds spline(table = [0, 0; 1, 1; 2, 4; 3, 9], smoothness = Modelica.Blocks.Types.Smoothness.ContinuousDerivative);
equation
  ds.u = time;
  dv.u[1] = 2 * time;
  grid.u1 = time / 2;
  grid.u2 = time / 3;
  spline.u = time;
end M;
";
    let Some(r) = run_with_msl("objects-tables", text, 3.0) else {
        return;
    };
    for (t, y1, y2) in [(0.5, 0.5, 15.0), (1.5, 2.5, 30.0), (2.5, 5.5, 50.0)] {
        check(&r, "ds.y[1]", t, y1, 1e-12);
        check(&r, "ds.y[2]", t, y2, 1e-12);
    }
    // u = 2t: 1 at t = 0.5, 2.5 at 1.25 (beyond the end: the last two points' line).
    for (t, y) in [(0.25, 0.5), (0.75, 2.5), (1.25, 5.5)] {
        check(&r, "dv.y[1]", t, y, 1e-12);
    }
    // Bilinear on the grid u1 in {0, 1}, u2 in {0, 1} with values 2 u1 + u2, extended linearly.
    for t in [0.5, 1.5, 3.0] {
        check(&r, "grid.y", t, 2.0 * t / 2.0 + t / 3.0, 1e-12);
    }
    // A cubic through the points, which are met exactly.
    for (t, y) in [(1.0, 1.0), (2.0, 4.0)] {
        check(&r, "spline.y[1]", t, y, 1e-12);
    }
}

/// A library time table with a time event (a `BooleanTable`) in a model with an initial
/// equation: the analysis (also the one a run without a stop time makes to choose it) once
/// evaluated the table's C code at later times with the discrete variables held at their start,
/// a call the C code does not expect (it crashed). It now takes such a model at its start
/// time only, and refuses another time with E0804.
#[test]
fn a_model_with_library_tables_is_analysed_at_its_start_time_only() {
    let Some(msl) = installed_msl() else {
        return;
    };
    if !have_cc() {
        return;
    }
    let text = "model M
  Modelica.Blocks.Sources.BooleanTable b(table = {1, 3});
  Real x;
initial equation
  x = 1;
equation
  der(x) = if b.y then -x else 0;
end M;
";
    let dir = scratch("objects-analysis");
    let path = LibraryPath {
        store: Arc::new(FileSystem),
        directories: vec![msl],
        eqm_file_directories: Vec::new(),
        tree_cache: None,
    };
    let files = vec![("m.mo".to_string(), text.as_bytes().to_vec())];
    let mut session = Session::with_libraries(Vec::new(), files, &[], Some(path), None);
    session.set_external_linker(eqm_cc::SystemCompiler::new("cc", dir.join("cache")));
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let analysis = model
        .analyze(&eqm::AnalyzeOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    // At the start b.y is false: der(x) = 0, one eigenvalue 0 (x is conserved).
    assert_eq!(analysis.time, 0.0);
    assert!(
        analysis.notes.iter().any(|n| n.contains("external objects")),
        "{:?}",
        analysis.notes
    );
    let at_two = eqm::AnalyzeOptions {
        at: Some(2.0),
        ..eqm::AnalyzeOptions::default()
    };
    match model.analyze(&at_two) {
        Err(eqm::RunError::Model(d)) => assert_eq!(d.code, "E0804", "{d:?}"),
        other => panic!("expected E0804, got {:?}", other.map(|a| a.time)),
    }
    // The run itself: x = 1 until the event at 1, then x' = -x until 3: x(4) = e^-2.
    let settings = RunSettings {
        stop: Some(4.0),
        interval: Some(0.125),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
    check(&result, "x", 0.5, 1.0, 1e-9);
    check(&result, "x", 2.0, (-1.0f64).exp(), 1e-5);
    check(&result, "x", 4.0, (-2.0f64).exp(), 1e-5);
}

/// A run whose external objects keep state in C code has no state a caller could keep (the
/// objects' memory is not EQM's to copy): `state()` is an error with the reason, and the FMU
/// of the model declares no FMU state.
#[test]
fn a_run_with_external_objects_has_no_state_to_keep() {
    if !have_cc() {
        return;
    }
    let dir = scratch("objects-state");
    let mut session = counter_session(COUNTER, &dir);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let capabilities = eqm::fmi::capabilities_of(&model);
    assert!(!capabilities.can_get_and_set_fmu_state && !capabilities.can_serialize_fmu_state);
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    let plan = model.plan_stepped(&settings).unwrap_or_else(|e| panic!("{e}"));
    let mut run = model.start_stepped(&plan).unwrap_or_else(|e| panic!("{e}"));
    run.advance_to(0.5).unwrap();
    match run.state() {
        Err(e) => assert!(e.to_string().contains("external objects"), "{e}"),
        Ok(_) => panic!("a run with external objects gave a state"),
    }
}
