//! Functions called for their effect: a function declared without outputs whose external C
//! function stores a value in its library's `static` variable, called as a statement from
//! another function (the way a random number generator's state is initialised), must run, so
//! that a second external function of the same library reads what it stored. Checked on both
//! back ends against the value stored; skipped with a message when the machine has no `cc`. In
//! a model's algorithm section such a call is checked but not run, which a warning says. A
//! call of such a function comes after its arguments are known, in the initialization too.

use crate::check;
use crate::external::{have_cc, scratch};
use eqm::{ModelOptions, RunSettings, Session, SimulationResult};
use std::path::Path;

const STORE_PACKAGE: &str = r##"
package Store
  impure function put "stores v in the library's static variable"
    input Real v;
    external "C" store_put(v) annotation(Include = "void store_put(double v);",
      IncludeDirectory = "modelica://Store/Resources/C-Sources", Library = "Store");
  end put;

  impure function stored "the library's static variable (after the call that gives `after`)"
    input Integer after;
    output Real v;
    external "C" v = store_get(after) annotation(Include = "double store_get(int after);",
      IncludeDirectory = "modelica://Store/Resources/C-Sources", Library = "Store");
  end stored;

  function putTwice "stores 2 v, then returns 1 to order the calls that read it"
    input Real v;
    output Integer id;
  algorithm
    put(2*v);
    id := 1;
  end putTwice;

  model UseIt
    parameter Integer id = putTwice(1.5);
    parameter Real seen = stored(id);
    Real seenNow = seen;
  end UseIt;

  model InitializedFirst "the seed is found by an initial equation before putTwice hands it on"
    parameter Real given = 2.5;
    parameter Real seed(fixed = false);
    parameter Integer id(fixed = false);
    discrete Real seenAtStart;
  initial equation
    seed = given;
    id = putTwice(seed);
  equation
    when {initial(), sample(0.5, 0.5)} then
      seenAtStart = stored(id);
    end when;
  end InitializedFirst;

  model InAlgorithm
    Real x;
  algorithm
    put(4.0);
    x := 1;
  end InAlgorithm;
end Store;
"##;

/// The package `Store` in `dir`, with the C source of its library `Store`.
fn store_installation(dir: &Path) -> String {
    let sources = dir.join("Resources/C-Sources");
    std::fs::create_dir_all(&sources).expect("sources");
    std::fs::create_dir_all(dir.join("Resources/Library")).expect("library directory");
    std::fs::write(sources.join("readme.txt"), "- Store (.a, .so) containing:\n  store.c\n").expect("readme");
    std::fs::write(
        sources.join("store.c"),
        "static double kept = 0.0;\nvoid store_put(double v) { kept = v; }\ndouble store_get(int after) { (void)after; return kept; }\n",
    )
    .expect("store.c");
    dir.join("Store.eqm").display().to_string()
}

fn run(name: &str, dir: &Path, interpreter: bool) -> SimulationResult {
    run_model(name, dir, "Store.UseIt", interpreter)
}

fn run_model(name: &str, dir: &Path, model: &str, interpreter: bool) -> SimulationResult {
    let mut session = Session::with_sources(&[(name.to_string(), STORE_PACKAGE.to_string())], &[], None);
    session.set_external_linker(eqm_cc::SystemCompiler::new("cc", dir.join("cache")));
    let mut model = session
        .compile(Some(model), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let settings = RunSettings {
        stop: Some(1.0),
        interval: Some(0.5),
        interpreter,
        ..RunSettings::default()
    };
    model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_function_without_outputs_called_as_a_statement_runs_its_external_function() {
    if !have_cc() {
        return;
    }
    let dir = scratch("effects");
    let name = store_installation(&dir);
    for interpreter in [false, true] {
        let r = run(&name, &dir, interpreter);
        // putTwice(1.5) stores 3; a call left out would leave the 0 the library starts with.
        check(&r, "seenNow", 0.0, 3.0, 0.0);
        check(&r, "seenNow", 1.0, 3.0, 0.0);
    }
}

/// A function that acts through a call for its effect depends on every argument, even one no
/// output reads: `id = putTwice(seed)` comes after the initial equation that finds `seed`, so
/// the value read at the start (a when-clause on `initial()`, solved in the initialization) is
/// 2 · 2.5 = 5, not what the start value 0 of `seed` would store.
#[test]
fn a_call_for_its_effect_waits_for_its_arguments_in_the_initialization() {
    if !have_cc() {
        return;
    }
    let dir = scratch("effects-order");
    let name = store_installation(&dir);
    for interpreter in [false, true] {
        let r = run_model(&name, &dir, "Store.InitializedFirst", interpreter);
        check(&r, "seenAtStart", 0.0, 5.0, 0.0);
    }
}

#[test]
fn a_function_without_outputs_called_in_a_model_algorithm_is_reported_as_not_run() {
    if !have_cc() {
        return;
    }
    let dir = scratch("effects-warning");
    let name = store_installation(&dir);
    let mut session = Session::with_sources(&[(name, STORE_PACKAGE.to_string())], &[], None);
    session.set_external_linker(eqm_cc::SystemCompiler::new("cc", dir.join("cache")));
    let model = session.compile(Some("Store.InAlgorithm"), &ModelOptions::default());
    assert!(model.is_some(), "{}", session.render_diagnostics(false));
    let rendered = session.render_diagnostics(false);
    let warning = session
        .diagnostics()
        .iter()
        .find(|d| d.code == "W0301")
        .unwrap_or_else(|| panic!("no W0301: {rendered}"));
    assert!(warning.message.contains("the call of `put`"), "{}", warning.message);
}
